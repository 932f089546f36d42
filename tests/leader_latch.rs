//! LeaderLatch before CURATOR-644/645 reset itself (deleted its node and created a new one)
//! when its predecessor was gone at the getData and on every reconnect. After one disconnect
//! two latches can reset each other forever: every turn creates nodes, so the sequence counter
//! and the zxid never repeat, no state recurs, and the exploration never closes. That is the
//! livelock as this checker sees it (no lasso to report); the fixed latch closes and is proven.

use zklab::check::check;
use zklab_model::FaultKind;
use zklab_recipes::contender::{Contender, LEADER_LATCH, LEADER_LATCH_BEFORE_644};

const BUDGET: usize = 300_000;

#[test]
fn the_latch_before_644_never_settles_after_a_disconnect() {
    let checked = check(|lock: &str| Contender::new("leader-latch-livelock", lock, LEADER_LATCH_BEFORE_644))
        .clients(2)
        .faults(&[FaultKind::Disconnect])
        .max_states(BUDGET)
        .run();
    assert!(checked.outcome.bounded, "the resets go on creating nodes past {BUDGET} states");
}

#[test]
fn without_a_disconnect_the_latch_before_644_settles() {
    // The reset on a vanished predecessor alone does not loop: a reconnect has to start it.
    check(|lock: &str| Contender::new("leader-latch-livelock", lock, LEADER_LATCH_BEFORE_644))
        .clients(2)
        .faults(&[FaultKind::LossAfterApply])
        .run()
        .assert_proven();
}

#[test]
fn the_fixed_latch_settles_and_is_proven_under_the_same_disconnect() {
    let checked = check(|lock: &str| Contender::new("leader-latch", lock, LEADER_LATCH))
        .clients(2)
        .faults(&[FaultKind::Disconnect])
        .max_states(BUDGET)
        .run();
    assert!(!checked.outcome.bounded);
    checked.assert_proven();
}
