//! Partial-order reduction is sound only if the step it takes alone commutes with every other
//! enabled step, stays enabled whatever else happens first, and changes nothing a property
//! reads. These tests check exactly that on real reachable states of every kind of setup, then
//! check that the checker's verdicts and counterexamples are the same with and without it.

mod common;
use common::reachable;
use zklab::check::{self, properties::herd, Options, Status};
use zklab::scenario::Scenario;
use zklab_model::{ClientBehaviour, FaultBudget, FaultKind, World, WorldConfig};
use zklab_recipes::AnyRecipe;

fn world(recipe: &str, clients: usize, faults: &[FaultKind], client: ClientBehaviour) -> World<AnyRecipe> {
    let config = WorldConfig { faults: FaultBudget::once(faults), client_behaviour: client, ..WorldConfig::default() };
    Scenario::new(recipe, clients, config).unwrap().world()
}

/// What the properties read of a state, except whether it is quiescent: a state with a local
/// step is not, and the states that are get reached exactly (see `World::local_step`).
fn seen_by_properties(w: &World<AnyRecipe>) -> impl PartialEq + std::fmt::Debug {
    (
        (w.belief_exclusion(), w.fenced_exclusion(), w.zk_exclusion(), w.shared_hold()),
        (w.waiting_mask(), w.believers(), w.zk_holders(), w.orphans()),
        (w.coverage, w.resource.clone(), w.faults_used, w.grants),
    )
}

/// Checks every local step among `states`; returns how many there were.
fn assert_local_steps_commute(label: &str, states: &[World<AnyRecipe>]) -> usize {
    let mut found = 0;
    for state in states {
        let Some((local, after_local)) = state.local_step() else { continue };
        found += 1;
        assert_eq!(seen_by_properties(state), seen_by_properties(&after_local), "{label}: {local:?} is visible");
        for other in state.steps().into_iter().filter(|s| *s != local) {
            let mut other_first = state.clone();
            other_first.apply(other).unwrap();
            let herd_before = herd(state, other, &other_first);
            assert!(other_first.enabled(local), "{label}: {other:?} disables {local:?}");
            let mut then_other = after_local.clone();
            then_other.apply(other).unwrap_or_else(|e| panic!("{label}: {local:?} disables {other:?}: {e}"));
            assert_eq!(
                herd(&after_local, other, &then_other),
                herd_before,
                "{label}: {local:?} changes {other:?}'s herd"
            );
            other_first.apply(local).unwrap();
            assert_eq!(other_first, then_other, "{label}: {local:?} and {other:?} do not commute");
        }
    }
    found
}

#[test]
fn local_steps_commute_with_every_other_step_and_are_invisible() {
    use ClientBehaviour::{Java, Kazoo};
    use FaultKind::*;
    let setups: [(&str, usize, &[FaultKind], ClientBehaviour); 10] = [
        ("standard", 3, &[LossAfterApply, Expire], Java),
        ("standard", 2, &[Disconnect, LossBeforeApply], Java),
        ("standard", 2, &[Disconnect, Expire], Kazoo),
        ("standard", 2, &[Crash, Pause, Expire], Java),
        ("standard", 2, &[LaggingRead, Expire], Java),
        ("parent-watch", 3, &[LossAfterApply], Java),
        ("naive", 3, &[Expire], Java),
        ("kazoo-lock", 2, &[Disconnect, LossAfterApply], Kazoo),
        ("leader-latch-644", 2, &[Disconnect], Java),
        ("rw-writer,rw-reader,rw-reader", 3, &[Expire], Java),
    ];
    for (recipe, clients, faults, client) in setups {
        let label = format!("{recipe} x{clients} {faults:?} {client:?}");
        let states = reachable(world(recipe, clients, faults, client), 4000);
        let found = assert_local_steps_commute(&label, &states);
        assert!(found > 0, "{label}: no local step among {} states: the check is vacuous", states.len());
    }
}

fn explore(recipe: &str, clients: usize, faults: &[FaultKind], partial_order: bool) -> check::Outcome {
    let options = Options { partial_order, symmetry: true, ..Options::default() };
    check::explore(world(recipe, clients, faults, ClientBehaviour::Java), &options)
}

#[test]
fn verdicts_and_counterexamples_are_those_of_the_full_graph() {
    use FaultKind::*;
    let cases: [(&str, usize, &[FaultKind]); 7] = [
        ("standard", 3, &[LossAfterApply, Expire]),
        ("standard", 2, &[Disconnect, Expire, Pause]),
        ("blind-retry", 2, &[LossAfterApply]),
        ("wait-on-null", 2, &[]),
        ("naive", 3, &[]),
        ("parent-watch", 3, &[Expire]),
        ("leader-latch-644", 2, &[Disconnect]),
    ];
    let mut reduced_somewhere = false;
    for (recipe, clients, faults) in cases {
        let reduced = explore(recipe, clients, faults, true);
        let full = explore(recipe, clients, faults, false);
        let label = format!("{recipe} x{clients} {faults:?}");
        assert!(!full.partial_order);
        for (r, f) in reduced.verdicts.iter().zip(&full.verdicts) {
            assert_eq!((r.name(), r.status), (f.name(), f.status), "{label}");
            assert_eq!(r.counterexample, f.counterexample, "{label}: {}", r.name());
        }
        let all_hold = full.verdicts.iter().all(|v| v.status == Status::Holds);
        // A violation or a cycle is judged again on the full graph: the answer comes from it.
        assert_eq!(reduced.partial_order, all_hold, "{label}");
        if reduced.partial_order {
            assert!(
                reduced.unique_states <= full.unique_states && reduced.total_states <= full.total_states,
                "{label}"
            );
            reduced_somewhere |= reduced.unique_states < full.unique_states;
        } else {
            assert_eq!(reduced.unique_states, full.unique_states, "{label}");
        }
    }
    assert!(reduced_somewhere, "the reduction never applied");
}

#[test]
fn a_receive_is_not_taken_alone_while_a_reconnect_could_let_the_client_acquire() {
    // An idle client with a round left loses its connection: its Disconnected waits in the queue
    // and its reconnect is enabled. The reconnect commutes with handling the Disconnected, but
    // it enables the client's acquire, which does not: an ample set of the receive alone would
    // hold the acquire back on every path (condition C1), so the receive is never taken alone.
    let mut state = world("standard", 2, &[FaultKind::Disconnect], ClientBehaviour::Java);
    state.apply(zklab_model::Step::Fault(FaultKind::Disconnect, 0)).unwrap();
    assert!(state.enabled(zklab_model::Step::Receive(0)) && state.enabled(zklab_model::Step::Reconnect(0)));
    assert!(state.local_step().is_none_or(|(step, _)| step.client() != 0), "c0's receive taken alone");
    let mut reconnected = state.clone();
    reconnected.apply(zklab_model::Step::Reconnect(0)).unwrap();
    assert!(reconnected.enabled(zklab_model::Step::Acquire(0)), "the reconnect enables the acquire");
}
