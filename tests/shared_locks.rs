//! Locks with more than one holder: the read/write locks of the ZooKeeper recipes page and of
//! Curator (with the write-to-read downgrade), the SemaphoreV2-style semaphore and the revocable
//! lock. Each correct recipe is proven under connection loss of both kinds, disconnects and
//! expiry at two clients and, where the state space allows, three; each flawed one is caught by
//! the property it breaks; and the shared exclusion properties are shown to catch two holders
//! that must not hold together, so that their proofs are not vacuous.

use zklab::check::{self, Options, Report, Status};
use zklab::scenario::{parse_faults, Scenario};
use zklab_model::{Belief, ClientBehaviour, Mode, Property, Reach, Recipe, Step, World, WorldConfig};
use zklab_recipes::AnyRecipe;

const FAULTS: [&str; 4] = ["loss-before-apply", "loss-after-apply", "disconnect", "expire"];

fn options() -> Options {
    Options { threads: 2, max_memory_mib: Some(4096), stop_at_violation: false, ..Options::default() }
}

fn scenario(recipes: &str, faults: &str, behaviour: ClientBehaviour) -> Scenario {
    let config =
        WorldConfig { faults: parse_faults(faults).unwrap(), client_behaviour: behaviour, ..WorldConfig::default() };
    Scenario::new(recipes, recipes.split(',').count(), config).unwrap()
}

fn run(recipes: &str, faults: &str) -> Report {
    check::run(&scenario(recipes, faults, ClientBehaviour::Java), &options())
}

fn assert_proven(report: &Report) {
    assert!(!report.outcome.bounded, "{} {:?}: a budget ran out", report.recipe, report.faults);
    for p in &report.properties {
        assert_eq!(p.status, Status::Holds, "{} x{} {:?}: {}", report.recipe, report.clients, report.faults, p.name);
    }
}

/// `property` is violated with a trace that replays; returns the trace's timeline.
fn assert_caught(report: &Report, property: &str) -> String {
    let p = report.properties.iter().find(|p| p.name == property).expect("the property is checked");
    assert_eq!(p.status, Status::Violated, "{} {:?}: {property}", report.recipe, report.faults);
    let trace = p.trace.as_ref().expect("a violation comes with a trace");
    trace.replay().unwrap();
    zklab::timeline::render(trace).unwrap()
}

#[test]
fn holder_modes_are_compatible_only_when_shared() {
    let (r, w, x) = (Mode::Read, Mode::Write, Mode::Exclusive);
    assert!(Mode::compatible(&[]) && Mode::compatible(&[w]) && Mode::compatible(&[x]));
    assert!(Mode::compatible(&[r, r, r]));
    assert!(!Mode::compatible(&[r, w]) && !Mode::compatible(&[w, w]) && !Mode::compatible(&[x, x]));
    assert!(!Mode::compatible(&[r, x]));
    let lease = |max| Mode::Lease { max };
    assert!(Mode::compatible(&[lease(2), lease(2)]));
    assert!(!Mode::compatible(&[lease(2), lease(2), lease(2)]));
    assert!(!Mode::compatible(&[lease(2), lease(1)]), "the strictest holder's limit counts");
    assert!(!Mode::compatible(&[lease(3), r]));
}

#[test]
fn recipes_page_read_write_lock_is_proven_for_two_clients_under_each_fault_and_all_together() {
    for faults in FAULTS.iter().copied().chain(["loss-before-apply,loss-after-apply,disconnect,expire"]) {
        let report = run("rw-reader,rw-writer", faults);
        assert_proven(&report);
        assert_eq!(report.status(Property::Reached(Reach::PredecessorGone)), Some(Status::Holds));
    }
    assert_proven(&check::run(&scenario("rw-reader,rw-writer", "disconnect", ClientBehaviour::Kazoo), &options()));
}

#[test]
fn recipes_page_read_write_lock_is_proven_for_a_writer_and_two_readers() {
    for faults in FAULTS {
        let report = run("rw-writer,rw-reader,rw-reader", faults);
        assert_proven(&report);
        assert_eq!(
            report.status(Property::Reached(Reach::SharedHold)),
            Some(Status::Holds),
            "two readers held together"
        );
    }
}

#[test]
fn curator_read_write_lock_is_proven_with_and_without_a_downgrade() {
    for faults in FAULTS {
        assert_proven(&run("curator-rw-reader,curator-rw-writer", faults));
        assert_proven(&run("curator-rw-downgrade,curator-rw-reader", faults));
    }
    for faults in ["loss-after-apply", "disconnect"] {
        let report = run("curator-rw-writer,curator-rw-reader,curator-rw-reader", faults);
        assert_proven(&report);
        assert_eq!(report.status(Property::Reached(Reach::SharedHold)), Some(Status::Holds));
    }
}

#[test]
fn downgrade_lets_writer_in_is_caught_and_the_fixed_downgrade_is_proven() {
    let report = run("curator-rw-downgrade-621,curator-rw-writer", "none");
    let text = assert_caught(&report, "zk_exclusion");
    assert!(text.contains("HOLDING read") && text.contains("HOLDING write"), "{text}");
    assert_caught(&report, "belief_exclusion");
    assert_caught(&report, "fenced_exclusion");
    for faults in ["none"].into_iter().chain(FAULTS) {
        assert_proven(&run("curator-rw-downgrade,curator-rw-writer", faults));
    }
    assert_proven(&run("curator-rw-downgrade,curator-rw-reader,curator-rw-writer", "none"));
}

#[test]
fn a_downgrading_writer_holds_write_then_read_and_the_timeline_says_so() {
    let report = run("curator-rw-downgrade,curator-rw-writer", "expire,pause");
    let text = assert_caught(&report, "belief_exclusion");
    assert_eq!(report.status(Property::FencedExclusion), Some(Status::Holds), "fencing still protects the resource");
    assert!(text.contains("now HOLDING write (token"), "{text}");
    // A downgrade seen step by step: write, then read on the read node, then the write node goes.
    let mut world = scenario("curator-rw-downgrade", "none", ClientBehaviour::Java).world();
    let mut modes = Vec::new();
    for step in [Step::Acquire(0), Step::Receive(0), Step::Receive(0), Step::Write(0), Step::Release(0)]
        .into_iter()
        .chain([Step::Receive(0); 3])
    {
        world.apply(step).unwrap();
        if world.clients[0].belief().is_holding() {
            modes.push(world.clients[0].recipe.mode());
        }
    }
    assert_eq!(modes.first(), Some(&Mode::Write));
    assert_eq!(modes.last(), Some(&Mode::Read));
    assert!(world.enabled(Step::Write(0)), "the read hold gets its own access to the resource");
}

#[test]
fn readers_and_writers_that_name_nodes_differently_do_not_exclude_each_other() {
    // The recipes page and Curator share a lock path but not a naming scheme: each side sees
    // none of the other's nodes, so a writer holds beside a reader. This is what the read/write
    // exclusion property is for; it must be able to fail.
    let report = run("rw-reader,curator-rw-writer", "none");
    let text = assert_caught(&report, "belief_exclusion");
    assert!(text.contains("HOLDING read") && text.contains("HOLDING write"), "{text}");
    assert_caught(&report, "zk_exclusion");
    let two_writers = run("rw-writer,curator-rw-writer", "none");
    assert_caught(&two_writers, "belief_exclusion");
}

#[test]
fn a_paused_reader_outlives_its_session_and_fencing_refuses_its_read() {
    let report = run("rw-reader,rw-writer", "expire,pause");
    assert_caught(&report, "belief_exclusion");
    assert_eq!(report.status(Property::FencedExclusion), Some(Status::Holds));
    assert_eq!(report.status(Property::ZkExclusion), Some(Status::Holds));
    assert_eq!(report.status(Property::Reached(Reach::StaleWriteRefused)), Some(Status::Holds));
}

#[test]
fn semaphore_is_proven_under_each_fault() {
    for faults in FAULTS {
        assert_proven(&run("semaphore-max1,semaphore-max1", faults));
        let report = run("semaphore,semaphore", faults);
        assert_proven(&report);
        assert_eq!(
            report.status(Property::Reached(Reach::SharedHold)),
            Some(Status::Holds),
            "both leases in use at once"
        );
    }
}

#[test]
fn semaphore_gives_two_leases_to_three_clients() {
    let report = run("semaphore,semaphore,semaphore", "none");
    assert_proven(&report);
    assert_eq!(report.status(Property::Reached(Reach::SharedHold)), Some(Status::Holds));
}

#[test]
fn semaphore_clients_that_disagree_on_max_leases_break_k_holder_exclusion() {
    // Curator asks every client of one semaphore to pass the same maxLeases. A client that
    // allows two leases lets a second holder in beside a client that allows one.
    let report = run("semaphore,semaphore-max1", "none");
    let text = assert_caught(&report, "belief_exclusion");
    assert!(text.contains("lease of 1") && text.contains("lease of 2"), "{text}");
}

#[test]
fn rw_vanished_own_node_is_caught_and_the_fixed_reader_is_proven() {
    for pair in ["curator-rw-reader-211,curator-rw-reader-211", "curator-rw-writer,curator-rw-reader-211"] {
        assert_caught(&run(pair, "expire"), "eventual_acquire");
    }
    assert_proven(&run("curator-rw-writer,curator-rw-reader", "expire"));
    // Without a session expiry the own node never vanishes and the old reader is fine.
    assert_proven(&run("curator-rw-writer,curator-rw-reader-211", "loss-after-apply"));
}

#[test]
fn semaphore_lease_orphan_is_caught_and_the_fixed_semaphore_is_proven() {
    let report = run("semaphore-forget-lease,semaphore-forget-lease", "loss-after-apply");
    let text = assert_caught(&report, "no_orphans");
    assert!(text.contains("/lock/leases/_c_c0-"), "{text}");
    assert_caught(&report, "eventual_acquire");
    assert_proven(&run("semaphore-max1,semaphore-max1", "loss-after-apply"));
}

#[test]
fn revocable_lock_is_proven_under_each_fault() {
    for faults in FAULTS {
        assert_proven(&run("revocable-writer,revocable-reader", faults));
    }
    assert_proven(&run("revocable-writer,revocable-reader,revocable-reader", "none"));
}

#[test]
fn revocation_consumes_the_watches_of_waiters_that_wake_only_on_deletion() {
    let text = assert_caught(
        &run("revocable-writer,revocable-reader-deletion-only,revocable-reader-deletion-only", "none"),
        "eventual_acquire",
    );
    assert!(text.contains("event NodeDataChanged"), "{text}");
}

/// Breadth-first from `world`: whether some step leads from a state to one where `happened`
/// holds of the pair (bounded, so the test stays small).
fn reachable(world: World<AnyRecipe>, happened: impl Fn(&World<AnyRecipe>, Step, &World<AnyRecipe>) -> bool) -> bool {
    let mut seen = std::collections::HashSet::new();
    let mut queue = std::collections::VecDeque::from([world]);
    while let Some(w) = queue.pop_front() {
        for step in w.steps() {
            let mut next = w.clone();
            next.apply(step).unwrap();
            if happened(&w, step, &next) {
                return true;
            }
            if seen.len() < 200_000 && seen.insert(format!("{:?}", next.clients)) {
                queue.push_back(next);
            }
        }
    }
    false
}

#[test]
fn a_revoked_holder_gives_the_lock_up_without_being_asked_by_its_application() {
    let world = scenario("revocable-writer,revocable-writer", "none", ClientBehaviour::Java).world();
    let revoked = |before: &World<AnyRecipe>, step: Step, after: &World<AnyRecipe>| {
        let Step::Receive(c) = step else { return false };
        let c = c as usize;
        before.clients[c].belief().is_holding() && after.clients[c].belief() == Belief::Releasing
    };
    assert!(reachable(world, revoked), "a holder reads \"unlock\" on its node and releases");
}
