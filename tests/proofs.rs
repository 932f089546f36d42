//! The first proofs: the standard lock holds under every connection fault and expiry, a paused
//! holder breaks belief but not fencing, and each broken variant is caught by the property it
//! breaks. Every proof must also be non-vacuous: each fault and race it claims happened.

use zklab::check::{self, Options, Report, Status};
use zklab::scenario::{parse_faults, Scenario};
use zklab::suite::CASES;
use zklab_model::{ClientBehaviour, Property, Reach, WorldConfig};

fn options() -> Options {
    Options { threads: 2, stop_at_violation: false, ..Options::default() }
}

fn scenario(recipe: &str, clients: usize, faults: &str, behaviour: ClientBehaviour) -> Scenario {
    let config =
        WorldConfig { faults: parse_faults(faults).unwrap(), client_behaviour: behaviour, ..WorldConfig::default() };
    Scenario::new(recipe, clients, config).unwrap()
}

/// Every property holds and every reachability claim was reached.
fn assert_proven(report: &Report) {
    assert_proven_but(report, &[]);
}

/// Every property but those in `violated` holds, each of those is violated with a trace that
/// replays, and every reachability claim was reached. A property the recipe says nothing about
/// (a barrier and mutual exclusion) is reported not applicable, never as a pass; at least one
/// property that is not a reachability claim must still hold, so a proof is never empty.
fn assert_proven_but(report: &Report, violated: &[&str]) {
    assert!(!report.outcome.bounded, "{}: a budget ran out", report.recipe);
    let judged = |p: &&zklab::check::PropertyReport| p.status != Status::NotApplicable;
    let proven = report.properties.iter().filter(judged).filter(|p| !p.name.starts_with("reached:"));
    assert!(proven.count() > 0, "{}: no property was judged", report.recipe);
    for p in report.properties.iter().filter(judged) {
        let expected = if violated.contains(&p.name) { Status::Violated } else { Status::Holds };
        assert_eq!(p.status, expected, "{} x{} {:?}: {}", report.recipe, report.clients, report.faults, p.name);
        if let Some(trace) = &p.trace {
            trace.replay().unwrap();
        }
    }
    for fault in &report.faults {
        let reached = format!("reached:{fault}");
        assert!(report.properties.iter().any(|p| p.name == reached), "{reached} is checked");
    }
}

#[test]
fn standard_lock_is_proven_for_two_clients_under_loss_disconnect_and_expiry() {
    let faults = "loss-before-apply,loss-after-apply,disconnect,expire";
    for behaviour in [ClientBehaviour::Java, ClientBehaviour::Kazoo] {
        let report = check::run(&scenario("standard", 2, faults, behaviour), &options());
        assert_proven(&report);
        assert_eq!(report.status(Property::Reached(Reach::PredecessorGone)), Some(Status::Holds));
        assert_eq!(report.status(Property::Reached(Reach::Handoff)), Some(Status::Holds));
    }
}

#[test]
fn standard_lock_is_proven_for_three_clients_under_each_fault() {
    for faults in ["loss-before-apply", "loss-after-apply", "disconnect", "expire"] {
        let report = check::run(&scenario("standard", 3, faults, ClientBehaviour::Java), &options());
        assert_proven(&report);
    }
}

#[test]
fn standard_lock_is_proven_for_three_clients_under_both_kinds_of_connection_loss() {
    let report =
        check::run(&scenario("standard", 3, "loss-before-apply,loss-after-apply", ClientBehaviour::Java), &options());
    assert_proven(&report);
}

#[test]
fn a_paused_holder_outlives_its_session_but_fencing_holds() {
    let report = check::run(&scenario("standard", 2, "expire,pause", ClientBehaviour::Java), &options());
    assert_eq!(report.status(Property::BeliefExclusion), Some(Status::Violated));
    assert_eq!(report.status(Property::FencedExclusion), Some(Status::Holds));
    assert_eq!(report.status(Property::ZkExclusion), Some(Status::Holds));
    assert_eq!(
        report.status(Property::Reached(Reach::StaleWriteRefused)),
        Some(Status::Holds),
        "fencing was exercised"
    );
    let trace = report.properties.iter().find(|p| p.name == "belief_exclusion").unwrap().trace.clone().unwrap();
    trace.replay().unwrap();
    let text = zklab::timeline::render(&trace).unwrap();
    assert!(text.contains("FAULT pause") && text.contains("server expires"), "{text}");
}

#[test]
fn without_a_pause_expiry_never_leaves_two_believers() {
    let report = check::run(&scenario("standard", 2, "expire", ClientBehaviour::Java), &options());
    assert_proven(&report);
}

#[test]
fn every_broken_recipe_is_caught_by_the_properties_it_breaks() {
    for entry in zklab_recipes::CATALOGUE.iter().filter(|e| e.flaw.is_some()) {
        let flaw = entry.flaw.as_ref().unwrap();
        let case = CASES
            .iter()
            .find(|c| c.recipe.split(',').any(|r| r == entry.name))
            .expect("the suite has a case for each broken recipe");
        let report = check::run(&case.scenario(), &options());
        let violated: Vec<&str> =
            report.properties.iter().filter(|p| p.status == Status::Violated).map(|p| p.name).collect();
        let mut expected: Vec<&str> = flaw.breaks.iter().map(|p| p.name()).collect();
        expected.sort();
        let mut found = violated.clone();
        found.sort();
        assert_eq!(found, expected, "{} ({})", entry.name, flaw.bug);
        for p in report.properties.iter().filter(|p| p.status == Status::Violated) {
            p.trace.as_ref().expect("a violation comes with a trace").replay().unwrap();
        }
        assert!(report.properties.iter().all(|p| p.status != Status::Vacuous), "{}", entry.name);
    }
}

#[test]
fn every_correct_recipe_is_proven_in_the_suite() {
    for entry in zklab_recipes::CATALOGUE.iter().filter(|e| e.flaw.is_none()) {
        let case = CASES
            .iter()
            .find(|c| c.recipe.split(',').any(|r| r == entry.name) && c.violated.is_empty())
            .expect("a proof case");
        assert_proven(&check::run(&case.scenario(), &options()));
    }
}

#[test]
fn the_naive_lock_needs_its_ownership_check_on_release_retry() {
    // Three clients, a lost reply on the release: a blind retry of the delete would remove the
    // next holder's node. The shipped recipe reads the node first and is safe; its one flaw is
    // the herd it wakes on every release.
    let report = check::run(&scenario("naive", 3, "loss-after-apply", ClientBehaviour::Java), &options());
    assert_proven_but(&report, &["no_herd"]);
}

#[test]
fn same_config_gives_byte_identical_traces_on_any_thread_count() {
    let s = scenario("blind-retry", 2, "loss-after-apply", ClientBehaviour::Java);
    let traces = |threads| {
        let report = check::run(&s, &Options { threads, stop_at_violation: false, ..Options::default() });
        report.properties.iter().filter_map(|p| p.trace.as_ref().map(|t| t.to_json())).collect::<Vec<_>>()
    };
    let one = traces(1);
    assert_eq!(one.len(), 2);
    assert_eq!(one, traces(2));
    assert_eq!(one, traces(2));
}

#[test]
fn clients_of_different_recipes_can_share_a_lock() {
    // The predecessor-watch and children-watch locks name and order their nodes alike: mixed
    // on one lock path they still exclude each other. The children watcher still wakes on
    // every deletion, beside the standard waiter the deletion is meant for: a herd of two.
    let mixed = scenario("standard,parent-watch,standard", 3, "loss-after-apply", ClientBehaviour::Java);
    assert_eq!(mixed.recipes, ["standard", "parent-watch", "standard"]);
    assert_proven_but(&check::run(&mixed, &options()), &["no_herd"]);
    // The single-node lock does not see sequential nodes, nor they it: two holders.
    let clash = scenario("standard,naive", 2, "none", ClientBehaviour::Java);
    let report = check::run(&clash, &options());
    assert_eq!(report.status(Property::BeliefExclusion), Some(Status::Violated));
    assert_eq!(report.status(Property::ZkExclusion), Some(Status::Violated));
}

#[test]
fn tokens_that_wrap_past_i32_max_break_fencing() {
    // The counter wraps to -2147483648: the next holder's token is lower than the paused
    // holder's, so the resource takes the stale write after the new holder's (sequence-wrap).
    let mut s = scenario("standard", 2, "expire,pause", ClientBehaviour::Java);
    s.config.first_sequence = i32::MAX;
    let report = check::run(&s, &options());
    assert_eq!(report.status(Property::FencedExclusion), Some(Status::Violated));
    let trace = report.properties.iter().find(|p| p.name == "fenced_exclusion").unwrap().trace.clone().unwrap();
    trace.replay().unwrap();
    let text = zklab::timeline::render(&trace).unwrap();
    assert!(text.contains("-2147483648"), "{text}");
    // Away from the wrap the same scenario keeps fencing intact.
    let away = check::run(&scenario("standard", 2, "expire,pause", ClientBehaviour::Java), &options());
    assert_eq!(away.status(Property::FencedExclusion), Some(Status::Holds));
}

#[test]
fn naive_with_three_clients_starves_when_clients_acquire_forever() {
    // naive has no fairness at all: a client can be overtaken forever. With bounded rounds
    // every run ends, so that cannot show; with clients that ask forever it is a fair cycle.
    let config = WorldConfig { rounds: zklab_model::UNBOUNDED_ROUNDS, ..WorldConfig::default() };
    let scenario = Scenario::new("naive", 3, config).unwrap();
    let report = check::run(&scenario, &options());
    assert!(!report.outcome.bounded);
    let p = report.properties.iter().find(|p| p.name == "eventual_acquire").unwrap();
    assert_eq!(p.status, Status::Violated);
    let trace = p.trace.as_ref().unwrap();
    assert!(trace.verdict.cycle_start.is_some(), "a cycle, not a deadlock");
    trace.replay().unwrap();
    let bounded = check::run(&Scenario::new("naive", 3, WorldConfig::default()).unwrap(), &options());
    assert_eq!(bounded.status(Property::EventualAcquire), Some(Status::Holds));
}

/// A holder whose process crashes holds nothing: its session lives on until the server expires
/// it, its node blocks the others until then, and the next client's hold is no second holder.
/// The standard lock, Curator's mutex and the leader election are proven under `crash`.
#[test]
fn a_crashed_holder_holds_nothing_and_the_locks_are_proven_under_crash() {
    for recipe in ["standard", "curator-mutex", "leader-election"] {
        let crashed = scenario(recipe, 2, "crash", ClientBehaviour::Java);
        let report = check::run(&crashed, &options());
        assert_proven(&report);
        assert_eq!(report.status(Property::Reached(Reach::Handoff)), Some(Status::Holds), "{recipe}");

        // Not vacuous: a state is reachable where a crashed process's recipe still says it
        // holds, while the other client holds after the crashed one's session expired. Before
        // a crash ended a hold, exactly this state broke `belief_exclusion` and `stale_holder`.
        let init = crashed.world();
        let mut seen = std::collections::HashSet::new();
        let mut frontier = vec![init];
        let mut found = None;
        while let Some(world) = frontier.pop() {
            let dead_believer =
                world.clients.iter().any(|c| c.crashed && c.belief().is_holding() && !world.server.is_alive(c.session));
            if dead_believer && world.believers().len() == 1 {
                found = Some(world);
                break;
            }
            for (_, next) in world.successors(false) {
                if seen.insert(next.clone()) {
                    frontier.push(next);
                }
            }
        }
        let world = found.unwrap_or_else(|| panic!("{recipe}: no handoff after a crashed holder"));
        for property in [Property::BeliefExclusion, Property::ZkExclusion, Property::StaleHolder] {
            assert!(property.holds(&world), "{recipe}: {property} counts the crashed process's belief");
        }
    }
}
