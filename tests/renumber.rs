//! Renumbering is sound only if it commutes with every step: the renumbered state must offer the
//! same steps, reach successors that renumber to the same states, and look the same to every
//! property. These tests check that on real states (shallow ones breadth-first, deep ones from
//! long random runs whose numbers have moved far on), then check that runs with renumbering give
//! the verdicts and counterexamples of runs without it, and where it must stay off.

use crate::common;
use common::reachable;
use zklab::check::{self, Options};
use zklab::scenario::Scenario;
use zklab_model::{ClientBehaviour, FaultBudget, FaultKind, Settle, World, WorldConfig};
use zklab_recipes::AnyRecipe;

fn config(faults: &[FaultKind], rounds: u8) -> WorldConfig {
    WorldConfig { faults: FaultBudget::once(faults), rounds, ..WorldConfig::default() }
}

fn world(recipe: &str, clients: usize, config: WorldConfig) -> World<AnyRecipe> {
    Scenario::new(recipe, clients, config).unwrap().world()
}

/// The states along `runs` seeded random runs of up to `length` steps each.
fn random_runs(init: &World<AnyRecipe>, runs: u64, length: usize) -> Vec<World<AnyRecipe>> {
    let mut states = Vec::new();
    for seed in 1..=runs {
        let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let mut world = init.clone();
        for _ in 0..length {
            let steps = world.steps();
            if steps.is_empty() {
                break;
            }
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            world.apply(steps[(x % steps.len() as u64) as usize]).unwrap();
            states.push(world.clone());
        }
    }
    states
}

fn renumber(world: &World<AnyRecipe>) -> World<AnyRecipe> {
    world.renumbered().unwrap_or_else(|| world.clone())
}

/// What the properties and the liveness judgement see of a state.
fn observed(w: &World<AnyRecipe>) -> impl PartialEq + std::fmt::Debug {
    (
        (w.belief_exclusion(), w.fenced_exclusion(), w.zk_exclusion(), w.no_orphans(), w.shared_hold()),
        (w.waiting_mask(), w.quiescent(), w.believers(), w.zk_holders(), w.orphans().len()),
        (w.coverage, w.resource.refused_stale, w.resource.interleaved, w.faults_used, w.grants),
    )
}

/// How many of `states` renumbering changed; panics where it does not commute with a step.
fn assert_commutes(label: &str, states: &[World<AnyRecipe>]) -> usize {
    let mut changed = 0;
    for state in states {
        let renumbered = renumber(state);
        changed += usize::from(renumbered != *state);
        assert_eq!(renumber(&renumbered), renumbered, "{label}: renumbering twice changes more");
        assert_eq!(observed(&renumbered), observed(state), "{label}: the properties see a difference");
        assert_eq!(renumbered.steps(), state.steps(), "{label}: the same steps are enabled");
        for step in state.steps() {
            let mut next = state.clone();
            next.apply(step).unwrap();
            let mut renumbered_next = renumbered.clone();
            renumbered_next.apply(step).unwrap();
            assert_eq!(renumber(&renumbered_next), renumber(&next), "{label}: step {step} from\n{state:#?}");
        }
    }
    changed
}

#[test]
fn renumbering_commutes_with_every_step() {
    use FaultKind::*;
    let cases: &[(&str, usize, &[FaultKind], ClientBehaviour)] = &[
        ("standard", 3, &[LossBeforeApply, LossAfterApply, Expire, Pause], ClientBehaviour::Java),
        ("standard", 2, &[Disconnect, LaggingRead, Expire], ClientBehaviour::Java),
        ("parent-watch", 2, &[Disconnect, LossAfterApply], ClientBehaviour::Kazoo),
        ("blind-retry", 2, &[LossAfterApply, Crash], ClientBehaviour::Java),
        ("naive-blind-delete", 3, &[LossAfterApply, Expire], ClientBehaviour::Java),
        ("curator-mutex", 2, &[LossBeforeApply, LossAfterApply, Expire, Pause], ClientBehaviour::Java),
        ("curator-mutex-498", 2, &[LossAfterApply, LaggingRead, Expire], ClientBehaviour::Java),
        ("leader-election", 3, &[LossAfterApply, Expire], ClientBehaviour::Java),
        ("leader-latch", 2, &[LossAfterApply, Disconnect, Expire], ClientBehaviour::Java),
        ("leader-latch-644", 2, &[Disconnect, LossBeforeApply], ClientBehaviour::Java),
        ("timeout-lock", 2, &[LossAfterApply, Disconnect, Expire], ClientBehaviour::Java),
        ("timeout-lock-forget-node", 2, &[LossAfterApply], ClientBehaviour::Java),
        ("client-id-lock", 3, &[LossAfterApply, Expire], ClientBehaviour::Java),
        ("client-id-lock-nonode-fatal", 2, &[LossBeforeApply, LossAfterApply], ClientBehaviour::Java),
        ("kazoo-lock", 2, &[LossAfterApply, Disconnect, Expire], ClientBehaviour::Java),
    ];
    let mut total = 0;
    for &(recipe, clients, faults, client_behaviour) in cases {
        let label = format!("{recipe} x{clients} {faults:?}");
        let mut config = config(faults, 3);
        config.client_behaviour = client_behaviour;
        let init = world(recipe, clients, config);
        let mut states = reachable(init.clone(), 400);
        states.extend(random_runs(&init, 40, 80));
        let changed = assert_commutes(&label, &states);
        assert!(changed * 3 > states.len(), "{label}: most states have numbers to close up ({changed})");
        total += states.len();
    }
    assert!(total > 25_000, "{total} states checked");
}

/// Settling hands the checker back the state as the step left it beside a state it renumbered
/// (the check that renumbering commutes compares the two), copying it only where settling
/// changes it before renumbering: both ways must hand back the state before settling.
#[test]
fn settling_hands_back_the_state_before_it_where_it_renumbers() {
    use FaultKind::*;
    // States renumbered; of them, those settling first changed a dropped client's zxid, and
    // those it first forgot a dead watch in.
    let (mut renumbered, mut coarser_zxid, mut forgot_a_watch) = (0, 0, 0);
    let cases: &[(&[FaultKind], ClientBehaviour)] = &[
        (&[LossAfterApply, Expire], ClientBehaviour::Java),
        (&[Disconnect, Expire], ClientBehaviour::Java),
        (&[LossBeforeApply, Disconnect], ClientBehaviour::Java),
        (&[Disconnect, LossAfterApply], ClientBehaviour::Kazoo),
    ];
    for &(faults, client_behaviour) in cases {
        let mut config = config(faults, 3);
        config.client_behaviour = client_behaviour;
        let init = world("standard", 3, config);
        let mut states = reachable(init.clone(), 3_000);
        states.extend(random_runs(&init, 60, 80));
        for before in states {
            let mut settled = before.clone();
            let Ok(Some(raw)) = settled.settle(Settle::KeepingRaw).map(|s| s.raw) else { continue };
            assert!(raw == before, "the state as it was, not as settled:\n{before:#?}");
            renumbered += 1;
            let mut kept_numbers = before.clone();
            kept_numbers.settle(Settle::KeepingNumbers).ok();
            let zxids = |w: &World<AnyRecipe>| w.clients.iter().map(|c| c.drop_zxid).collect::<Vec<_>>();
            let watches = |w: &World<AnyRecipe>| {
                (w.server.clone(), w.clients.iter().map(|c| c.watches.clone()).collect::<Vec<_>>())
            };
            coarser_zxid += usize::from(zxids(&kept_numbers) != zxids(&before));
            forgot_a_watch += usize::from(watches(&kept_numbers) != watches(&before));
            let mut again = before.clone();
            assert_eq!(
                again.settle(Settle::Renumbering).map(|s| s.renumbered),
                Ok(true),
                "settling unasked renumbers it too"
            );
            assert!(again == settled, "the same state settled either way");
        }
    }
    assert!(renumbered > 1_000, "states renumbered: {renumbered}");
    assert!(coarser_zxid > 1_000, "states whose dropped zxid settling changes first: {coarser_zxid}");
    assert!(forgot_a_watch > 1_000, "states whose dead watch settling forgets first: {forgot_a_watch}");
}

#[test]
fn renumbering_ranks_sequence_numbers_zxids_and_protected_uuids() {
    // The latches before CURATOR-644 reset each other forever: go round their cycle many times.
    let init = world("leader-latch-644", 2, config(&[FaultKind::Disconnect], 1));
    let found = check::explore(init.clone(), &Options { threads: 1, ..Options::default() });
    let cx = found.verdicts.iter().find(|v| v.name() == "eventual_acquire").unwrap().counterexample.clone().unwrap();
    let start = cx.cycle_start.expect("a cycle");
    let mut far = init;
    for step in cx.steps.iter().chain(std::iter::repeat_n(&cx.steps[start..], 20).flatten()) {
        far.apply(*step).unwrap();
    }
    assert!(far.server.zxid() > 80, "every lap moves the zxid on ({})", far.server.zxid());
    let renumbered = far.renumbered().expect("a state far along is renumbered");
    assert!(renumbered.server.zxid() <= 10, "{}", renumbered.server.zxid());
    let counter = |w: &World<AnyRecipe>| w.server.tree().get("/lock").unwrap().next_seq;
    // Ranked, the counter counts the sequence numbers the state still holds: the live nodes,
    // the old ones queued replies and listings still name, and their creation records.
    assert!(counter(&far) > 40 && counter(&renumbered) <= 5, "{} to {}", counter(&far), counter(&renumbered));
    let uuids = |w: &World<AnyRecipe>| -> Vec<String> {
        w.server.tree().children("/lock").iter().map(|n| n.split('-').nth(1).unwrap().to_string()).collect()
    };
    assert!(uuids(&far).iter().all(|u| u.parse::<u32>().unwrap() > 10), "{:?}", uuids(&far));
    assert!(
        uuids(&renumbered).iter().all(|u| u == "0" || u == "1"),
        "a node's uuid and the next: {:?}",
        uuids(&renumbered)
    );
}

#[test]
fn renumbering_stays_off_where_absolute_values_matter() {
    let standard = |config| world("standard", 2, config);
    let moved_on = |w: World<AnyRecipe>| {
        // Acquire, release and acquire again: the counter and the zxid move past what the state holds.
        random_runs(&w, 20, 60).into_iter().filter(|s| s.server.zxid() > 6).collect::<Vec<_>>()
    };
    let on = moved_on(standard(config(&[], 3)));
    assert!(on.iter().any(|s| s.renumbered().is_some()), "renumbered by default");
    // A recipe that writes no renumbering is renumbered by replay (tests/replay.rs).
    let replayed = moved_on(world("zk-write-lock", 2, config(&[], 3)));
    assert!(replayed.iter().any(|s| s.renumbered().is_some()), "renumbered by replay");
    let at_the_wrap = WorldConfig { first_sequence: i32::MAX, ..config(&[], 3) };
    let reaped = config(&[FaultKind::ReapParent], 3);
    let switched_off = WorldConfig { renumber: false, ..config(&[], 3) };
    for (label, states) in [
        ("at the wrap", moved_on(standard(at_the_wrap))),
        ("with a reaped parent", moved_on(world("container-lock", 2, reaped))),
        ("switched off", moved_on(standard(switched_off))),
        ("mixed recipes", moved_on(world("standard,parent-watch", 2, config(&[], 3)))),
    ] {
        assert!(!states.is_empty(), "{label}");
        assert!(states.iter().all(|s| s.renumbered().is_none()), "{label}: renumbered");
    }
}

fn explore(recipe: &str, clients: usize, faults: &[FaultKind], renumber: bool) -> check::Outcome {
    let config = WorldConfig { renumber, ..config(faults, 1) };
    check::explore(world(recipe, clients, config), &Options { threads: 1, ..Options::default() })
}

#[test]
fn renumbered_runs_give_the_verdicts_and_counterexamples_of_full_runs() {
    use FaultKind::*;
    let cases: &[(&str, usize, &[FaultKind])] = &[
        ("standard", 2, &[LossAfterApply, Expire]),
        ("standard", 2, &[Expire, Pause]),
        ("standard", 2, &[LaggingRead, Expire]),
        ("blind-retry", 2, &[LossAfterApply]),
        ("wait-on-null", 2, &[]),
        ("naive-blind-delete", 3, &[LossAfterApply]),
        ("curator-mutex-498", 2, &[LossAfterApply, LaggingRead, Expire]),
        ("leader-latch", 2, &[Disconnect]),
        ("leader-election", 2, &[LossBeforeApply, Expire]),
        ("timeout-lock-forget-node", 2, &[LossAfterApply]),
        ("client-id-lock-nonode-fatal", 2, &[LossAfterApply]),
        ("kazoo-lock", 2, &[Expire]),
    ];
    let mut fewer = 0;
    for &(recipe, clients, faults) in cases {
        let full = explore(recipe, clients, faults, false);
        let renumbered = explore(recipe, clients, faults, true);
        assert!(!full.bounded && !renumbered.bounded, "{recipe}");
        for v in &full.verdicts {
            assert_eq!(renumbered.status(v.property), Some(v.status), "{recipe} {faults:?}: {}", v.name());
            let cx = renumbered.verdicts.iter().find(|r| r.name() == v.name()).unwrap().counterexample.as_ref();
            assert_eq!(cx, v.counterexample.as_ref(), "{recipe} {faults:?}: the same shortest counterexample");
        }
        assert!(renumbered.unique_states <= full.unique_states, "{recipe}");
        fewer += usize::from(renumbered.unique_states < full.unique_states);
    }
    assert!(fewer >= 6, "renumbering merged states in {fewer} of the runs");
}

#[test]
fn renumbering_stays_off_where_data_or_deep_nodes_hold_numbers() {
    // A state that renumbering changes (a sequence number and zxids moved on) ...
    let states = reachable(world("standard", 2, config(&[], 2)), 3000);
    let moved = states.iter().find(|w| w.renumbered().is_some()).expect("some state renumbers").clone();
    // ... is left as it is once a number sits where renumbering cannot reach it: in a node's
    // data (a holder announcing its sequence number) or in a node below one of the lock's
    // children (whose name holds the child's number).
    let admin = |w: &mut World<AnyRecipe>| w.server.open_session(4000).0;
    let mut in_data = moved.clone();
    let a = admin(&mut in_data);
    let set = zklab_model::Request::SetData { path: "/lock".into(), data: "1".into(), version: -1 };
    assert!(in_data.server.apply(a, &set).result.is_ok());
    assert_eq!(in_data.renumbered(), None, "data may hold a number");
    let mut below = moved.clone();
    let a = admin(&mut below);
    for path in ["/lock/p-0000000009", "/lock/p-0000000009/owner"] {
        let create = zklab_model::Request::create(path, zklab_model::CreateMode::Persistent);
        assert!(below.server.apply(a, &create).result.is_ok(), "{path}");
    }
    assert_eq!(below.renumbered(), None, "a node below a lock child");
    // Data a recipe knows holds no number (client-id-lock's client id) is renumbered around.
    let ids = reachable(world("client-id-lock", 2, config(&[], 2)), 3000);
    assert!(ids.iter().any(|w| w.server.tree().iter().any(|(_, n)| !n.data.is_empty()) && w.renumbered().is_some()));
}
