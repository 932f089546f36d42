//! The lagging-read fault: a read answered by a follower behind the leader shows an older state
//! (a deleted node still listed), a watch it sets fires only after its reply, and the standard
//! lock still acquires. The checker proves the standard lock under it.

use zklab::check::{self, Options, Status};
use zklab::scenario::{parse_faults, Scenario};
use zklab_model::world::Sending;
use zklab_model::{FaultKind, Input, Request, Response, Step, World, WorldConfig};
use zklab_recipes::AnyRecipe;

fn world(faults: &str, clients: usize) -> (Scenario, World<AnyRecipe>) {
    let config = WorldConfig { faults: parse_faults(faults).unwrap(), ..WorldConfig::default() };
    let scenario = Scenario::new("standard", clients, config).unwrap();
    let world = scenario.world();
    (scenario, world)
}

fn apply(world: &mut World<AnyRecipe>, step: Step) {
    world.apply(step).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn a_lagging_follower_lists_a_deleted_node_and_the_lock_still_goes_through() {
    let (_, mut w) = world("lagging-read", 2);
    apply(&mut w, Step::Acquire(0));
    apply(&mut w, Step::Receive(0)); // create -> getChildren
    apply(&mut w, Step::Receive(0)); // holding
    apply(&mut w, Step::Acquire(1)); // c1 creates behind c0
    apply(&mut w, Step::Write(0));
    apply(&mut w, Step::Release(0)); // c0's node is deleted on the leader
    apply(&mut w, Step::Receive(0));
    let lagging = Step::Lossy(FaultKind::LaggingRead, Sending::Receive, 1);
    assert!(w.enabled(lagging), "c1's getChildren can go to a lagging follower");
    apply(&mut w, lagging);
    match w.clients[1].inbound.front() {
        Some(Input::Reply {
            request: Request::GetChildren { .. },
            result: Ok(Response::Children { children, .. }),
        }) => {
            assert_eq!(children.len(), 2, "the follower still lists c0's node: {children:?}")
        }
        other => panic!("expected the lagging listing first, got {other:?}"),
    }
    assert!(w.coverage.lagged_read);
    for _ in 0..6 {
        if w.enabled(Step::Receive(1)) {
            apply(&mut w, Step::Receive(1));
        }
    }
    assert!(w.clients[1].belief().is_holding(), "the watch on the stale node fires after its reply: c1 acquires");
}

#[test]
fn a_session_never_reads_older_than_it_has_seen() {
    let (_, mut w) = world("lagging-read", 1);
    apply(&mut w, Step::Acquire(0));
    // The create's reply carries its zxid: the session has seen its own node, and nothing in
    // the lag window is newer, so no follower may answer its next read.
    assert!(!w.enabled(Step::Lossy(FaultKind::LaggingRead, Sending::Receive, 0)));
}

#[test]
fn the_standard_lock_is_proven_under_lagging_reads() {
    for (clients, faults) in [(2, "lagging-read"), (3, "lagging-read"), (2, "lagging-read,expire")] {
        let (scenario, _) = world(faults, clients);
        let report = check::run(&scenario, &Options { threads: 1, ..Options::default() });
        for p in &report.properties {
            assert_eq!(p.status, Status::Holds, "N={clients} {faults}: {} is {:?}", p.name, p.status);
        }
        assert_eq!(report.status("reached:lagging-read"), Some(Status::Holds));
    }
}

#[test]
fn traces_written_before_lagging_reads_existed_still_load() {
    let old: zklab_model::FaultBudget = serde_json::from_str("[0, 1, 0, 0, 0, 0]").unwrap();
    assert_eq!(old.get(FaultKind::LossAfterApply), 1);
    assert_eq!(old.get(FaultKind::LaggingRead), 0);
    assert!(serde_json::from_str::<zklab_model::FaultBudget>("[0, 0, 0, 0, 0, 0, 0, 0, 0]").is_err());
}

#[test]
fn a_fault_can_be_allowed_more_than_once() {
    let budget = parse_faults("lagging-read=2,expire").unwrap();
    assert_eq!(budget.get(FaultKind::LaggingRead), 2);
    assert_eq!(budget.get(FaultKind::Expire), 1);
    assert_eq!(budget.get(FaultKind::Crash), 0);
    for bad in ["expire=0", "expire=x", "expire=99", "nope=2"] {
        assert!(parse_faults(bad).is_err(), "{bad} is refused");
    }
}
