//! LeaderLatch before CURATOR-644/645 reset itself (deleted its node and created a new one)
//! when its predecessor was gone at the getData and on every reconnect. After one disconnect
//! two latches can reset each other forever. Every turn creates nodes, so the sequence counter
//! and the zxid never repeat: taken literally no state recurs and the exploration never closes.
//! The checker keeps states up to the renumbering of those numbers, under which the turns are a
//! cycle: `eventual_acquire` is violated by a lasso. The fixed latch is proven.

use zklab::check::{self, check, Options, Status};
use zklab::scenario::Scenario;
use zklab_model::{FaultBudget, FaultKind, Property, Settle, WorldConfig};
use zklab_recipes::contender::Contender;
use zklab_recipes::leader_latch::LEADER_LATCH;

fn scenario(recipe: &str, faults: &[FaultKind], renumber: bool) -> Scenario {
    let config = WorldConfig { faults: FaultBudget::once(faults), renumber, ..WorldConfig::default() };
    Scenario::new(recipe, 2, config).unwrap()
}

#[test]
fn the_latch_before_644_resets_forever_after_a_disconnect() {
    let report = check::run(&scenario("leader-latch-644", &[FaultKind::Disconnect], true), &Options::default());
    assert!(!report.outcome.bounded, "renumbered, the state space closes");
    for p in &report.properties {
        let expected = if p.name == "eventual_acquire" { Status::Violated } else { Status::Holds };
        assert_eq!(p.status, expected, "{}", p.name);
    }
    let trace = report.properties.iter().find_map(|p| p.trace.clone()).unwrap();
    trace.replay().unwrap();
    let start = trace.verdict.cycle_start.expect("a lasso, not a deadlock");

    // Going round the cycle again and again is a real run: every lap creates new nodes, and its
    // end differs from its start only in the numbers.
    let mut world = trace.scenario.world();
    for step in &trace.steps[..start] {
        world.apply(*step).unwrap();
    }
    let mut settled = world.clone();
    settled.settle(Settle::Renumbering).ok();
    for _ in 0..5 {
        let before = world.clone();
        for step in &trace.steps[start..] {
            world.apply(*step).unwrap();
        }
        assert_ne!(world, before, "the lap moved the counter and the zxid on");
        assert!(world.server.zxid() > before.server.zxid());
        let mut again = world.clone();
        again.settle(Settle::Renumbering).ok();
        assert_eq!(again, settled, "and is the same state up to renumbering");
        assert_eq!(world.waiting().len(), 2, "both latches still wait");
    }
}

#[test]
fn without_renumbering_the_resets_never_close() {
    const BUDGET: usize = 300_000;
    let options = Options { max_states: BUDGET, ..Options::default() };
    let report = check::run(&scenario("leader-latch-644", &[FaultKind::Disconnect], false), &options);
    assert!(report.outcome.bounded, "the resets go on creating nodes past {BUDGET} states");
    assert_eq!(report.status(Property::EventualAcquire), Some(Status::Unknown));
}

#[test]
fn without_a_disconnect_the_latch_before_644_settles() {
    // The reset on a vanished predecessor alone does not loop: a reconnect has to start it.
    let report = check::run(&scenario("leader-latch-644", &[FaultKind::LossAfterApply], true), &Options::default());
    assert!(report.properties.iter().all(|p| p.status == Status::Holds), "{:?}", report.properties);
}

#[test]
fn the_fixed_latch_settles_and_is_proven_under_the_same_disconnect() {
    check(|lock: &str| Contender::new("leader-latch", lock, LEADER_LATCH))
        .clients(2)
        .faults(&[FaultKind::Disconnect])
        .run()
        .assert_proven();
}
