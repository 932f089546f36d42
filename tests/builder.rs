//! Proving your own recipe from `cargo test` (`zklab::check::check`): fault counts, a recipe
//! per client, the budgets, and a report that prints as the command line's does.

use zklab::check::{check, Options, Status};
use zklab::scenario::Scenario;
use zklab_model::{FaultBudget, FaultKind, Property, Reach, WorldConfig};

fn catalogue(name: &'static str) -> impl Fn(&str) -> zklab_recipes::AnyRecipe {
    move |lock| zklab_recipes::build(name, lock).unwrap()
}

#[test]
fn a_fault_allowed_twice_reaches_more_than_a_fault_allowed_once() {
    let once = check(catalogue("standard")).clients(2).fault(FaultKind::Disconnect, 1).run();
    let twice = check(catalogue("standard")).clients(2).fault(FaultKind::Disconnect, 2).run();
    once.assert_proven();
    twice.assert_proven();
    assert!(twice.outcome.unique_states > once.outcome.unique_states, "a second disconnect reaches new states");
    let none =
        check(catalogue("standard")).clients(2).faults(&[FaultKind::Disconnect]).fault(FaultKind::Disconnect, 0).run();
    assert_eq!(
        none.status(Property::Reached(Reach::Fault(FaultKind::Disconnect))),
        None,
        "a fault allowed 0 times is not asked for"
    );
}

#[test]
fn each_client_can_run_its_own_recipe() {
    // A reader and a writer of the recipes page's shared lock, under a pause and an expiry: the
    // same world the command line builds from `--recipe rw-reader,rw-writer`, with the same
    // verdicts (the kept trace traces/rw-reader+rw-writer-n2-belief_exclusion.json breaks
    // belief_exclusion).
    let names = ["rw-reader", "rw-writer"];
    let faults = [FaultKind::Expire, FaultKind::Pause];
    let checked = check(catalogue("standard"))
        .clients(2)
        .faults(&faults)
        .recipes(move |i, lock| zklab_recipes::build(names[i], lock).unwrap())
        .explore_everything()
        .run();
    checked.assert_violates(Property::BeliefExclusion);
    let config = WorldConfig { faults: FaultBudget::once(&faults), ..WorldConfig::default() };
    let scenario = Scenario::new("rw-reader,rw-writer", 2, config).unwrap();
    let cli = zklab::check::run(&scenario, &Options { stop_at_violation: false, ..Options::default() });
    for p in &cli.properties {
        assert_eq!(checked.status(p.property), Some(p.status), "{}", p.name);
    }
    assert_eq!(checked.outcome.unique_states, cli.outcome.unique_states);
}

#[test]
fn a_spent_memory_budget_leaves_the_answer_unknown() {
    let checked = check(catalogue("standard")).clients(3).faults(&[FaultKind::Expire]).max_memory(1).threads(1).run();
    assert!(checked.outcome.bounded, "1 MiB is spent before the first level");
    assert!(checked.outcome.verdicts.iter().all(|v| v.status != Status::Holds), "nothing is called proven");
}

#[test]
fn the_outcome_prints_as_a_report_with_its_counterexample() {
    let checked = check(catalogue("wait-on-null")).clients(2).run();
    let report = checked.to_string();
    assert!(report.starts_with("wait-on-null x2: "), "one name for clients that run one recipe: {report}");
    assert!(report.contains("eventual_acquire             VIOLATED"), "{report}");
    assert!(report.contains("eventual_acquire counterexample:"), "{report}");
    assert!(report.contains("c1 (wait-on-null, s3)"), "the timeline's header: {report}");
    let proven = check(catalogue("standard")).clients(2).run().to_string();
    assert!(proven.contains("belief_exclusion             holds") && !proven.contains("counterexample"), "{proven}");
}

#[test]
fn a_variant_of_the_lock_family_is_a_few_lines() {
    use zklab_recipes::queue::{Order, Queue};
    use zklab_recipes::sequential::{SequentialLock, Style};
    // The standard lock with its own name format, sorting its line as text as Curator does.
    let mine = Style { queue: Queue::new("-mutex-", Order::Text), ..Style::STANDARD };
    let checked = check(move |lock| SequentialLock::new("my-lock", lock, mine)).clients(2).faults(&[FaultKind::Expire]);
    checked.run().assert_proven();
    // Across the counter's wrap, text order puts the newcomer first: two hold at once.
    let wrapped =
        check(move |lock| SequentialLock::new("my-lock", lock, mine)).clients(2).first_sequence(i32::MAX).run();
    wrapped.assert_violates(Property::BeliefExclusion);
    assert!(wrapped.timeline(Property::BeliefExclusion).unwrap().contains("-mutex-"), "its nodes carry its marker");
}
