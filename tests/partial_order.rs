//! Partial-order reduction is sound only if the step it takes alone commutes with every other
//! enabled step, stays enabled whatever else happens first, and changes nothing a property
//! reads. These tests check exactly that along the runs that defer each local step, from
//! sampled reachable states of every kind of setup and of random recipes, then check that the
//! checker's verdicts and counterexamples are the same with and without it.

use crate::{common, random};
use common::reachable;
use random::{Program, RandomRecipe};
use std::collections::HashSet;
use std::fmt::Debug;
use std::sync::Arc;
use zklab::check::{self, properties::herd, Options, Status};
use zklab::scenario::Scenario;
use zklab_model::world::Link;
use zklab_model::{ClientBehaviour, ClientFault, FaultBudget, FaultKind, Recipe, Step, World, WorldConfig};
use zklab_recipes::AnyRecipe;

fn world(recipe: &str, clients: usize, faults: &[FaultKind], client: ClientBehaviour) -> World<AnyRecipe> {
    let config = WorldConfig { faults: FaultBudget::once(faults), client_behaviour: client, ..WorldConfig::default() };
    Scenario::new(recipe, clients, config).unwrap().world()
}

/// What the properties read of a state, except `no_orphans`, which reads the nodes nobody
/// owns only in quiescent states: a state with a local step is not quiescent, and the states
/// that are get reached exactly (see `World::local_step`).
fn seen_by_properties<R: Recipe>(w: &World<R>) -> impl PartialEq + Debug {
    (
        (w.belief_exclusion(), w.fenced_exclusion(), w.zk_exclusion(), w.shared_hold()),
        (w.waiting_mask(), w.holding_mask(), w.believers(), w.zk_holders()),
        (w.coverage, w.resource.clone(), w.faults_used, w.grants),
    )
}

/// How far `assert_local_steps_commute` follows the runs from a state that do not take its
/// local step: enough to cover a client's outage (drop, notice, expiry, reconnect, Expired).
const RUN_STATES: usize = 200;

/// Checks every local step among `states` along the runs from its state that do not take it
/// (up to `RUN_STATES` states each), as the reduction's argument claims (see
/// `model/src/reduce/world/partial_order.rs`): in every state on them, the step is still enabled, still
/// changes nothing a property reads, and commutes with every other enabled step without
/// changing that step's herd (condition C1: no step that depends on it comes first).
///
/// A step that queues requests on a dropped link is the exception: its client's reconnect may
/// come first, and then the step sends at once. The argument moves the reconnect instead, so
/// the runs checked leave out the reconnect too, and in every state on them the reconnect is
/// enabled, changes nothing a property reads, leaves every other step enabled as it was,
/// commutes with each without changing its herd, and followed by the step reaches what the
/// step followed by it reaches, with the same herd.
///
/// Counts what it checked: how many local steps there were, how many of those queued requests
/// on a link that was dropped, and how many were the reconnect of a dead session.
fn assert_local_steps_commute<R: Recipe>(label: &str, states: &[World<R>]) -> Checked {
    let mut checked = Checked::default();
    for state in states {
        let Some((local, after_local)) = state.local_step() else { continue };
        checked.found += 1;
        checked.dead_reconnects += usize::from(matches!(local, Step::Reconnect(_)));
        let client = local.client().expect("a local step is a client's");
        let c = client as usize;
        let on_dropped_link = state.clients[c].link == Link::Down
            && after_local.clients[c].outbound.len() > state.clients[c].outbound.len();
        checked.queued += usize::from(on_dropped_link);
        let reconnect = Step::Reconnect(client);
        let deferred = |step: Step| step == local || (on_dropped_link && step == reconnect);
        let mut run = vec![state.clone()];
        let mut met: HashSet<World<R>> = run.iter().cloned().collect();
        let mut at = 0;
        while at < run.len() {
            let here = run[at].clone();
            at += 1;
            let after_local = applied(&here, local, &format!("{label}: a run from {state:?} disables {local:?}"));
            assert_eq!(seen_by_properties(&here), seen_by_properties(&after_local), "{label}: {local:?} is visible");
            if on_dropped_link {
                assert_reconnect_moves(label, &here, local, &after_local);
            }
            for other in here.steps().into_iter().filter(|s| !deferred(*s)) {
                assert_commute(label, &here, local, other);
                let next = applied(&here, other, label);
                if run.len() < RUN_STATES && met.insert(next.clone()) {
                    run.push(next);
                }
            }
        }
    }
    checked
}

/// What `assert_local_steps_commute` checked.
#[derive(Default)]
struct Checked {
    found: usize,
    queued: usize,
    dead_reconnects: usize,
}

impl std::ops::AddAssign for Checked {
    fn add_assign(&mut self, other: Checked) {
        self.found += other.found;
        self.queued += other.queued;
        self.dead_reconnects += other.dead_reconnects;
    }
}

/// `step` applied to a copy of `world`.
fn applied<R: Recipe>(world: &World<R>, step: Step, context: &str) -> World<R> {
    let mut next = world.clone();
    next.apply(step).unwrap_or_else(|e| panic!("{context}: {e}"));
    next
}

/// `first` and `other` taken in either order from `here` reach the same state, and `first`
/// does not change `other`'s herd.
fn assert_commute<R: Recipe>(label: &str, here: &World<R>, first: Step, other: Step) {
    let other_first = applied(here, other, label);
    let first_first = applied(here, first, label);
    let then_other = applied(&first_first, other, &format!("{label}: {first:?} disables {other:?}"));
    assert_eq!(
        herd(&first_first, other, &then_other),
        herd(here, other, &other_first),
        "{label}: {first:?} changes {other:?}'s herd"
    );
    let then_first = applied(&other_first, first, &format!("{label}: {other:?} disables {first:?}"));
    assert_eq!(then_first, then_other, "{label}: {first:?} and {other:?} do not commute");
}

/// What the argument claims of the reconnect of a client whose local step queues requests on
/// its dropped link (see `assert_local_steps_commute`).
fn assert_reconnect_moves<R: Recipe>(label: &str, here: &World<R>, local: Step, after_local: &World<R>) {
    let reconnect = Step::Reconnect(local.client().expect("a local step is a client's"));
    let reconnected = applied(here, reconnect, &format!("{label}: the reconnect is not enabled before {local:?}"));
    assert_eq!(seen_by_properties(here), seen_by_properties(&reconnected), "{label}: the reconnect is visible");
    let others = |w: &World<R>| w.steps().into_iter().filter(|s| ![local, reconnect].contains(s)).collect::<Vec<_>>();
    assert_eq!(others(&reconnected), others(here), "{label}: the reconnect changes what else is enabled");
    let sent_by_local = applied(&reconnected, local, label);
    let sent_by_reconnect = applied(after_local, reconnect, label);
    assert_eq!(
        sent_by_local, sent_by_reconnect,
        "{label}: the reconnect after {local:?} sends other than {local:?} after it"
    );
    assert_eq!(
        herd(after_local, reconnect, &sent_by_reconnect),
        herd(&reconnected, local, &sent_by_local),
        "{label}: what {local:?} queued wakes another herd when the reconnect sends it"
    );
    for other in others(here) {
        assert_commute(label, here, reconnect, other);
    }
}

/// The first `limit` states in breadth-first order, and the states met by `walks` seeded
/// random runs: outages and their recoveries lie deeper than the first few thousand states.
fn sample<R: Recipe>(init: World<R>, limit: usize, walks: usize) -> Vec<World<R>> {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let mut states = reachable(init.clone(), limit);
    for _ in 0..walks {
        let mut w = init.clone();
        for _ in 0..80 {
            let steps = w.steps();
            if steps.is_empty() {
                break;
            }
            w = applied(&w, steps[rng.random_range(0..steps.len())], "listed");
            states.push(w.clone());
        }
    }
    states
}

#[test]
fn local_steps_stay_enabled_invisible_and_commuting_on_every_run_that_defers_them() {
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
    let mut all = Checked::default();
    for (recipe, clients, faults, client) in setups {
        let label = format!("{recipe} x{clients} {faults:?} {client:?}");
        let states = sample(world(recipe, clients, faults, client), 1500, 200);
        let checked = assert_local_steps_commute(&label, &states);
        assert!(checked.found > 0, "{label}: no local step among {} states: the check is vacuous", states.len());
        all += checked;
    }
    assert!(all.queued > 0, "no local step queued a request on a dropped link: that case went unchecked");
    assert!(all.dead_reconnects > 0, "no reconnect of a dead session was taken alone: that case went unchecked");
}

#[test]
fn local_steps_of_random_recipes_stay_enabled_invisible_and_commuting_on_every_run_that_defers_them() {
    // Random recipes queue requests on every kind of input, keep watches across outages and
    // note outages silently: what the catalogue's recipes rarely do. Each fault set leaves no
    // budget to strike a dropped link once it is spent, which is when a receive on a dropped
    // link may queue requests and be taken alone.
    use FaultKind::*;
    let fault_sets: [&[FaultKind]; 5] =
        [&[LossAfterApply], &[Disconnect], &[LossAfterApply, Expire], &[Disconnect, Expire], &[Pause, Expire]];
    let mut all = Checked::default();
    for seed in 0..60u64 {
        let program = Arc::new(match seed % 3 {
            0 => Program::from_seed(seed),
            1 => Program::with_application_steps(seed),
            _ => Program::noting_outages(seed),
        });
        let faults = fault_sets[(seed % 5) as usize];
        let client = if seed % 7 == 3 { ClientBehaviour::Kazoo } else { ClientBehaviour::Java };
        let config =
            WorldConfig { faults: FaultBudget::once(faults), client_behaviour: client, ..WorldConfig::default() };
        let world = World::new(config, (0..2).map(|_| RandomRecipe::new(program.clone())).collect());
        let label = format!("random recipe {seed} x2 {faults:?} {client:?}");
        all += assert_local_steps_commute(&label, &sample(world, 300, 30));
    }
    let Checked { found, queued, dead_reconnects } = all;
    assert!(
        found > 0 && queued > 0 && dead_reconnects > 0,
        "{found} local steps, {queued} of them queuing on a dropped link, {dead_reconnects} reconnects of a dead \
            session: vacuous"
    );
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
    state.apply(zklab_model::Step::Fault(ClientFault::Disconnect, 0)).unwrap();
    assert!(state.enabled(zklab_model::Step::Receive(0)) && state.enabled(zklab_model::Step::Reconnect(0)));
    assert!(state.local_step().is_none_or(|(step, _)| step.client() != Some(0)), "c0's receive taken alone");
    let mut reconnected = state.clone();
    reconnected.apply(zklab_model::Step::Reconnect(0)).unwrap();
    assert!(reconnected.enabled(zklab_model::Step::Acquire(0)), "the reconnect enables the acquire");
}

#[test]
fn a_client_learns_alone_that_its_session_expired_once_it_can_do_nothing_else() {
    // c0 is cut off past its session timeout, notices, and the server expires its session. Its
    // reconnect now only learns that: it is the one step taken from the state, although c1 may
    // ask for the lock. Before c0 has handled its Disconnected, it had a receive to take, and
    // its reconnect (not yet enabled) was not a local step.
    let mut state = world("standard", 2, &[FaultKind::Expire], ClientBehaviour::Java);
    state.apply(Step::Fault(ClientFault::Expire, 0)).unwrap();
    assert!(state.local_step().is_none_or(|(step, _)| step != Step::Reconnect(0)));
    state.apply(Step::Receive(0)).unwrap();
    state.apply(Step::Expire(0)).unwrap();
    assert!(state.enabled(Step::Acquire(1)), "c1 could ask for the lock too");
    let (step, next) = state.local_step().expect("the reconnect of a dead session is local");
    assert_eq!(step, Step::Reconnect(0));
    assert_eq!(state.successors(true), vec![(step, next.clone())]);
    assert_eq!(next.clients[0].inbound.back(), Some(&zklab_model::Input::State(zklab_model::SessionState::Expired)));
    assert_eq!(seen_by_properties(&state), seen_by_properties(&next));
}
