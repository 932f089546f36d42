//! The herd effect as a property: `no_herd` is judged on every step, from who waited before it
//! and whom it queued a watch notification for. The herd recipes break it with a shortest trace,
//! the predecessor watch keeps it, and wakeups a lock means (readers let in together) do not
//! count.

use std::collections::{HashSet, VecDeque};
use zklab_model::property::{herd, herd_after};
use zklab_model::{FaultBudget, FaultKind, Property, Settle, Step, World, WorldConfig};

const NO_HERD: Property = Property::NoHerd;
use zklab::check::{self, Options, Status};
use zklab::scenario::Scenario;
use zklab::trace::{Trace, TraceError};
use zklab_recipes::AnyRecipe;

/// Options that judge every property: these tests are about the whole graph.
fn everything() -> Options {
    Options { stop_at_violation: false, ..Options::default() }
}

fn scenario(recipe: &str, clients: usize) -> Scenario {
    Scenario::new(recipe, clients, WorldConfig::default()).unwrap()
}

fn herd_trace(recipe: &str, clients: usize) -> Trace {
    let report = check::run(&scenario(recipe, clients), &everything());
    assert_eq!(report.status(NO_HERD), Some(Status::Violated), "{recipe} x{clients}");
    report.properties.iter().find(|p| p.property == NO_HERD).unwrap().trace.clone().expect("a counterexample")
}

#[test]
fn the_herd_recipes_wake_two_waiters_with_one_step() {
    // The single-node lock: two waiters watch the holder's node, its release wakes both. The
    // children watch: two contenders watch the children, a third one's create wakes both.
    for (recipe, length, last) in [("naive", 8, Step::Release(0)), ("parent-watch", 5, Step::Acquire(2))] {
        let trace = herd_trace(recipe, 3);
        assert_eq!(trace.steps.len(), length, "{recipe}: the shortest herd");
        assert_eq!(trace.steps.last(), Some(&last), "{recipe}");
        assert!(trace.steps.iter().all(|s| !s.is_fault()), "{recipe}: no fault needed");
        trace.replay().unwrap();
        let worlds = trace.worlds().unwrap();
        for (i, pair) in worlds.windows(2).enumerate() {
            let woken = herd(&pair[0], trace.steps[i], &pair[1]).len();
            let expected = if i + 1 == trace.steps.len() { 2 } else { 0 };
            assert_eq!(woken, expected, "{recipe}: waiters woken by step {i}");
        }
        assert!(trace.summary.contains("both waiting"), "{}", trace.summary);
    }
}

#[test]
fn one_waiter_is_no_herd_and_the_predecessor_watch_never_herds() {
    let pair = check::run(&scenario("naive", 2), &everything());
    assert_eq!(pair.status(NO_HERD), Some(Status::Holds), "two clients: one waiter at most");
    for recipe in ["standard", "curator-mutex", "leader-election"] {
        let report = check::run(&scenario(recipe, 3), &everything());
        assert_eq!(report.status(NO_HERD), Some(Status::Holds), "{recipe}");
    }
}

#[test]
fn the_property_applies_where_two_clients_ask_to_hold_alone() {
    let applies = |recipe: &str, clients: usize| {
        Property::applicable(&scenario(recipe, clients).world()).contains(&Property::NoHerd)
    };
    assert!(applies("standard", 2));
    assert!(applies("rw-writer,rw-writer,rw-reader", 3));
    assert!(!applies("standard", 1));
    assert!(!applies("rw-writer,rw-reader,rw-reader", 3), "one writer cannot be a herd");
    assert!(!applies("semaphore-max1", 3), "lease holders are not counted");
}

/// Every transition of the whole state graph of `recipe` x`clients`, each as (before, raw
/// successor): the herd function must see what the step did before the state is settled.
fn each_transition(recipe: &str, clients: usize, visit: impl FnMut(&World<AnyRecipe>, Step, &World<AnyRecipe>)) {
    each_transition_of(scenario(recipe, clients), usize::MAX, visit)
}

/// As `each_transition`, of the first `most` states found breadth first.
fn each_transition_of(
    scenario: Scenario,
    most: usize,
    mut visit: impl FnMut(&World<AnyRecipe>, Step, &World<AnyRecipe>),
) {
    let init = scenario.world();
    let mut seen = HashSet::from([init.clone()]);
    let mut queue = VecDeque::from([init]);
    while let Some(world) = queue.pop_front().filter(|_| seen.len() <= most) {
        for step in world.steps() {
            let mut next = world.clone();
            next.apply(step).unwrap();
            visit(&world, step, &next);
            next.settle(Settle::Renumbering).ok();
            if seen.insert(next.clone()) {
                queue.push_back(next);
            }
        }
    }
}

/// The simulator and the real backend judge `no_herd` from the world after each step alone
/// (`herd_after`): on every step of the first 30,000 states of each graph, faults that crash,
/// expire and cut clients included, it names the same herd as `herd`, and the herds it must
/// name are there.
#[test]
fn the_herd_read_after_a_step_is_the_herd_read_across_it() {
    let faults = FaultBudget::once(&[FaultKind::Crash, FaultKind::Expire, FaultKind::Disconnect]);
    let mut herds = 0;
    for recipe in ["naive", "parent-watch", "standard", "rw-writer,rw-writer,rw-reader"] {
        let config = WorldConfig { faults, ..WorldConfig::default() };
        let clients = recipe.split(',').count().max(3);
        each_transition_of(Scenario::new(recipe, clients, config).unwrap(), 30_000, |before, step, after| {
            let across = herd(before, step, after);
            assert_eq!(herd_after(step, after), across, "{recipe}: {step}");
            herds += usize::from(across.len() >= 2);
        });
    }
    assert!(herds > 0, "some step is a herd: the comparison is not vacuous");
}

#[test]
fn readers_woken_together_are_no_herd() {
    // A writer's release wakes the readers behind it together: they all get in, as designed.
    let mut wakes_two = 0;
    each_transition("rw-writer,rw-reader,rw-reader", 3, |before, step, after| {
        let waiting: HashSet<_> = after.routed().iter().filter(|c| before.waiting().contains(c)).collect();
        if waiting.len() >= 2 {
            wakes_two += 1;
            assert!(herd(before, step, after).is_empty(), "readers counted as a herd");
        }
    });
    assert!(wakes_two > 0, "some step wakes both readers: the test shows the exemption");
}

#[test]
fn a_waiter_giving_up_is_not_woken_by_its_own_delete() {
    // Revocable lock: c1 asks c0, a waiting writer, to unlock; c0 gives up and deletes its node,
    // which fires c0's own watch on it and c1's: one waiter woken, the other is the one acting.
    let mut world = scenario("revocable-writer,revocable-writer,revocable-reader", 3).world();
    let (acquire, receive) = (Step::Acquire, Step::Receive);
    for step in [acquire(2), acquire(0), acquire(1), receive(1), receive(1), receive(0), receive(0)] {
        world.apply(step).unwrap();
    }
    let before = world.clone();
    world.apply(receive(0)).unwrap();
    let mut routed = world.routed().to_vec();
    routed.sort();
    assert_eq!(routed, [0, 1], "the delete notifies both writers");
    assert_eq!(before.waiting(), [0, 1, 2], "both were waiting before it");
    assert_eq!(herd(&before, Step::Receive(0), &world), [1]);
}

#[test]
fn replay_judges_the_last_step() {
    let trace = herd_trace("naive", 3);
    let mut short = trace.clone();
    short.steps.pop();
    assert!(matches!(short.replay(), Err(TraceError::Diverged(m)) if m.contains("last step")));
    let mut long = trace.clone();
    long.steps.push(Step::Receive(1));
    assert!(matches!(long.replay(), Err(TraceError::Diverged(m)) if m.contains("already fails at step 7")));
}

#[test]
fn the_cross_check_leaves_the_transition_property_to_the_graph_pass() {
    let outcome = check::explore(scenario("naive", 3).world(), &Options { cross_check: true, ..everything() });
    assert_eq!(outcome.status(NO_HERD), Some(Status::Violated));
    let cross = outcome.cross_check.expect("a complete run is cross-checked");
    assert!(cross.agrees(), "{:?}", cross.disagreements);
}
