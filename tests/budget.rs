//! A budget is for the whole run: a run repeated without a reduction (for a shortest
//! counterexample or a cycle's fairness) shares it with the run before, and what the run before
//! found is kept when the budget runs out during the repeat, with its counts when the repeat met
//! fewer states.

use zklab::check::{self, Options, Status};
use zklab::scenario::{parse_faults, Scenario};
use zklab_model::{Property, WorldConfig};

fn blind_retry() -> Scenario {
    let config = WorldConfig { faults: parse_faults("loss-after-apply").unwrap(), ..WorldConfig::default() };
    Scenario::new("blind-retry", 2, config).unwrap()
}

#[test]
fn a_violation_found_before_the_budget_ran_out_is_kept() {
    let scenario = blind_retry();
    let options = Options { threads: 1, ..Options::default() };
    let full = check::explore(scenario.world(), &options);
    assert!(!full.partial_order && !full.bounded, "the violation sent the run to the full graph");
    assert_eq!(full.status(Property::NoOrphans), Some(Status::Violated));
    // One state fewer than the full graph: the reduced pass completes and finds the violation,
    // and the repeat without the reduction runs out of what is left.
    let tight = Options { max_states: full.unique_states - 1, ..options };
    let report = check::run(&scenario, &tight);
    assert!(report.outcome.bounded, "the repeat ran out of the shared budget");
    let orphans = report.properties.iter().find(|p| p.name == "no_orphans").unwrap();
    assert_eq!(orphans.status, Status::Violated, "the reduced pass's violation is kept");
    orphans.trace.as_ref().expect("with its counterexample").replay().unwrap();
    // What neither pass could decide stays unknown, never "holds".
    assert!(report.properties.iter().all(|p| p.status != Status::Holds || p.name.starts_with("reached:")));
}

#[test]
fn the_repeat_shares_the_state_budget() {
    let scenario = blind_retry();
    let options = Options { threads: 1, ..Options::default() };
    let full = check::explore(scenario.world(), &options).unique_states;
    // One state more than the full graph would let the repeat finish on a budget of its own;
    // shared with the reduced pass before it, what is left is not enough.
    let shared = check::explore(scenario.world(), &Options { max_states: full + 1, ..options.clone() });
    assert!(shared.bounded, "the repeat had a budget of its own");
    // Enough for both passes: the run completes.
    let enough = check::explore(scenario.world(), &Options { max_states: 2 * full + 1, ..options });
    assert!(!enough.bounded);
}

#[test]
fn a_repeat_left_next_to_nothing_reports_what_the_first_run_explored() {
    let scenario = blind_retry();
    let options = Options { threads: 1, ..Options::default() };
    let full = check::explore(scenario.world(), &options).unique_states;
    // A budget of the full graph's size: the reduced pass completes and finds the violation,
    // and the repeat without the reduction meets fewer states than it before running out. The
    // counts are then the reduced pass's, and say so.
    let cut = check::explore(scenario.world(), &Options { max_states: full, ..options.clone() });
    assert!(cut.bounded && cut.partial_order, "the counts are of the reduced graph");
    assert!(cut.unique_states < full && cut.unique_states > full - cut.unique_states);
    // Left one state, the repeat reports the same: not a run of one state.
    let starved = check::explore(scenario.world(), &Options { max_states: cut.unique_states + 1, ..options });
    assert!(starved.bounded && starved.partial_order);
    assert_eq!((starved.unique_states, starved.total_states), (cut.unique_states, cut.total_states));
    assert_eq!(starved.status(Property::NoOrphans), Some(Status::Violated), "with what the reduced pass found");
}

/// A timeout past what the clock can count (from a program, where the command line's week
/// does not apply) is no deadline: the run ends with its verdict, not a panic.
#[test]
fn a_timeout_the_clock_cannot_count_is_no_deadline() {
    let scenario = blind_retry();
    let options = Options { threads: 1, timeout: Some(std::time::Duration::MAX), ..Options::default() };
    let report = check::run(&scenario, &options);
    assert!(!report.outcome.bounded, "nothing ran out");
    assert_eq!(report.status(Property::NoOrphans), Some(Status::Violated));
}
