//! `--swarm`: seeded random walks for worlds too big to exhaust. They find what they meet,
//! their walks replay as violations, they never say a property holds, and the same seed gives
//! the same report on any number of threads.

use zklab::check::{self, Options, Status, Walks};
use zklab::scenario::{parse_faults, Scenario};
use zklab_model::{Property, WorldConfig};

fn scenario(recipe: &str, clients: usize, faults: &str) -> Scenario {
    let config = WorldConfig { faults: parse_faults(faults).unwrap(), ..WorldConfig::default() };
    Scenario::new(recipe, clients, config).unwrap()
}

fn swarm(walks: u64, seed: u64, threads: usize) -> Options {
    Options { threads, swarm: Some(Walks { first: 0, walks, depth: 100, seed }), ..Options::default() }
}

#[test]
fn a_swarm_meets_the_orphan_and_its_walk_replays_as_the_violation() {
    let report = check::run(&scenario("blind-retry", 2, "loss-after-apply"), &swarm(200, 7, 2));
    assert!(report.outcome.bounded, "a swarm is always bounded");
    assert_eq!(report.status(Property::NoOrphans), Some(Status::Violated));
    for p in &report.properties {
        if let Some(trace) = &p.trace {
            trace.replay().unwrap_or_else(|e| panic!("{}: {e}", p.name));
        }
    }
    assert_eq!(report.exit(), zklab::exit::Exit::Failed);
}

#[test]
fn a_swarm_never_says_a_property_holds() {
    let s = scenario("standard", 2, "loss-after-apply,expire");
    let report = check::run(&s, &swarm(300, 1, 2));
    for p in &report.properties {
        match p.name.starts_with("reached:") {
            true => assert_ne!(p.status, Status::Vacuous, "{}", p.name),
            false => assert_eq!(p.status, Status::Unknown, "{}: a correct lock, never proven by walks", p.name),
        }
    }
    assert!(report.properties.iter().any(|p| p.status == Status::Holds), "a reached item was met");
    assert_eq!(report.exit(), zklab::exit::Exit::Unknown);
    // It covered part of the space the exhaustive search counts (both count settled states).
    let full = check::run(&s, &Options { partial_order: false, stop_at_violation: false, ..Options::default() });
    let coverage = report.outcome.swarm.as_ref().expect("coverage");
    assert!(coverage.distinct_states > 100 && coverage.distinct_states <= full.outcome.unique_states, "{coverage:?}");
    assert!(coverage.chance_next_is_new > 0.0 && coverage.chance_next_is_new < 1.0, "{coverage:?}");
}

#[test]
fn the_same_seed_gives_the_same_report_on_any_thread_count() {
    let s = scenario("naive-blind-delete", 3, "loss-after-apply");
    let one = check::run(&s, &swarm(150, 42, 1));
    let two = check::run(&s, &swarm(150, 42, 2));
    let other = check::run(&s, &swarm(150, 43, 2));
    let traces =
        |r: &check::Report| r.properties.iter().map(|p| p.trace.as_ref().map(|t| t.to_json())).collect::<Vec<_>>();
    assert_eq!(traces(&one), traces(&two));
    let counts = |r: &check::Report| (r.outcome.unique_states, r.outcome.total_states, r.outcome.max_depth);
    assert_eq!(counts(&one), counts(&two));
    assert_ne!(counts(&one), counts(&other), "another seed walks elsewhere");
}

#[test]
fn a_swarm_names_the_budget_that_stopped_it() {
    use zklab::check::search::Spent;
    let s = scenario("standard", 3, "loss-after-apply,expire");
    let finished = check::run(&s, &swarm(20, 1, 2));
    assert_eq!((finished.outcome.spent, finished.outcome.swarm.as_ref().map(|c| c.walks)), (None, Some(20)));
    let by_visits = check::run(&s, &Options { max_states: 50, ..swarm(1_000_000, 1, 2) });
    assert_eq!(by_visits.outcome.spent, Some(Spent::States));
    // The bound is met exactly, not overshot by a round of walks: 10 states, at most 10 visits.
    for max_states in [10, 50, 101, 250] {
        let bounded = check::run(&s, &Options { max_states, ..swarm(50, 1, 2) });
        let visits = bounded.outcome.swarm.as_ref().unwrap().visits;
        assert!(visits <= max_states as u64 && visits + 100 > max_states as u64, "{max_states}: {visits} visits");
        assert_eq!(bounded.outcome.spent, Some(Spent::States), "{max_states}");
    }
    // One MiB is less than the process holds already: not one walk's states are stored.
    let by_memory = check::run(&s, &Options { max_memory_mib: Some(1), ..swarm(1_000_000, 1, 2) });
    assert_eq!(by_memory.outcome.spent, Some(Spent::Memory));
    assert!(by_memory.outcome.swarm.unwrap().walks < 1_000_000);
}
