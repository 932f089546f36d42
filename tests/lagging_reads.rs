//! The lagging-read fault: a read answered by a follower behind the leader shows an older state
//! (a deleted node still listed), a watch it sets fires only after its reply, and the standard
//! lock still acquires. The checker proves the standard lock under it.

use zklab::check::{self, Options, Status};
use zklab::scenario::{parse_faults, Scenario};
use zklab_model::world::Sending;
use zklab_model::{
    ClientFault, FaultKind, Input, Property, Reach, Request, RequestFault, Response, Step, World, WorldConfig,
};
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
    let lagging = Step::Lossy(RequestFault::LaggingRead, Sending::Receive, 1);
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
    assert!(!w.enabled(Step::Lossy(RequestFault::LaggingRead, Sending::Receive, 0)));
}

#[test]
fn the_standard_lock_is_proven_under_lagging_reads() {
    for (clients, faults) in [(2, "lagging-read"), (3, "lagging-read"), (2, "lagging-read,expire")] {
        let (scenario, _) = world(faults, clients);
        let report = check::run(&scenario, &Options { threads: 1, ..Options::default() });
        for p in &report.properties {
            assert_eq!(p.status, Status::Holds, "N={clients} {faults}: {} is {:?}", p.name, p.status);
        }
        assert_eq!(report.status(Property::Reached(Reach::Fault(FaultKind::LaggingRead))), Some(Status::Holds));
    }
}

#[test]
fn traces_written_before_lagging_reads_existed_still_load() {
    let old: zklab_model::FaultBudget = serde_json::from_str("[0, 1, 0, 0, 0, 0]").unwrap();
    assert_eq!(old.get(FaultKind::LossAfterApply), 1);
    assert_eq!(old.get(FaultKind::LaggingRead), 0);
    let one_too_many = serde_json::to_string(&[0; FaultKind::COUNT + 1]).unwrap();
    assert!(serde_json::from_str::<zklab_model::FaultBudget>(&one_too_many).is_err());
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

/// The Curator entries that need a new session shown its old nodes: one `lagging-session` on
/// the new handle answers every read it sends until the follower catches up, which is what the
/// mutex before CURATOR-498 needs (its search and its lock loop both list) and one lagging read
/// is not.
#[test]
fn one_lagging_session_catches_curator_498_and_696_and_the_fixes_hold() {
    let options = Options { threads: 2, stop_at_violation: false, ..Options::default() };
    let run = |recipe: &str, faults: &str| {
        let config = WorldConfig { faults: parse_faults(faults).unwrap(), ..WorldConfig::default() };
        check::run(&Scenario::new(recipe, 2, config).unwrap(), &options)
    };
    for (flawed, fixed, faults) in [
        ("curator-mutex-498", "curator-mutex", "loss-after-apply,lagging-session,expire"),
        ("leader-latch-696", "leader-latch", "lagging-session,expire"),
    ] {
        let report = run(flawed, faults);
        assert_eq!(report.status(Property::BeliefExclusion), Some(Status::Violated), "{flawed} under {faults}");
        let fixed = run(fixed, faults);
        assert!(fixed.properties.iter().all(|p| p.status == Status::Holds), "{fixed:?}");
        assert_eq!(fixed.status(Property::Reached(Reach::Fault(FaultKind::LaggingSession))), Some(Status::Holds));
    }
    let one_read = run("curator-mutex-498", "loss-after-apply,lagging-read,expire");
    assert_eq!(one_read.status(Property::BeliefExclusion), Some(Status::Holds), "a single lagging read is not enough");
}

#[test]
fn a_lagging_session_lasts_until_its_follower_catches_up() {
    let file =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("traces/curator-mutex-498-n2-belief_exclusion.json");
    let trace = zklab::trace::Trace::load(&file).unwrap();
    let struck = trace.steps.iter().position(|s| matches!(s, Step::Lossy(RequestFault::LaggingSession, ..))).unwrap();
    let worlds = trace.worlds().unwrap();
    // Every world from the fault on has c0 on the lagging follower, and its reads show the
    // node its expired session left behind.
    for w in &worlds[struck + 1..] {
        assert!(w.clients[0].lagging);
        assert!(w.steps().contains(&Step::CatchUp(0)), "catching up is always possible");
    }
    let mut w = worlds.last().unwrap().clone();
    apply(&mut w, Step::CatchUp(0));
    assert!(!w.clients[0].lagging && !w.enabled(Step::CatchUp(0)));
    // A connection that drops takes the lag with it: the same steps, with a disconnect allowed.
    let mut scenario = trace.scenario.clone();
    scenario.config.faults.0[FaultKind::Disconnect.index()] = 1;
    let mut dropped = scenario.world();
    for step in &trace.steps {
        apply(&mut dropped, *step);
    }
    assert!(dropped.clients[0].lagging);
    apply(&mut dropped, Step::Fault(ClientFault::Disconnect, 0));
    assert!(!dropped.clients[0].lagging && !dropped.enabled(Step::CatchUp(0)));
}
