//! What the application does beside the recipe: it enters a re-entrant lock again, it stops
//! waiting, and it writes to the resource under its token. Each story is told once as steps and
//! once as the checker's verdicts, with the fix proven beside the flaw.

use zklab::check::{check, Checked};
use zklab_model::world::Sending;
use zklab_model::{Belief, FaultKind, Property, Recipe, RequestFault, Step, World};
use zklab_recipes::AnyRecipe;

fn catalogue(name: &'static str) -> impl Fn(&str) -> AnyRecipe {
    move |lock| zklab_recipes::build(name, lock).unwrap()
}

/// Receives client `i`'s messages until it has none left.
fn settle(world: &mut World<AnyRecipe>, i: zklab_model::ClientId) {
    while world.enabled(Step::Receive(i)) {
        world.apply(Step::Receive(i)).unwrap();
    }
}

fn verdicts(checked: &Checked<AnyRecipe>, names: &[&str]) -> Vec<String> {
    names.iter().map(|n| format!("{n}: {:?}", checked.status(n.parse().unwrap()).unwrap())).collect()
}

#[test]
fn a_nested_acquire_is_counted_without_a_request_and_the_last_release_deletes_the_node() {
    let mut world = check(catalogue("curator-mutex")).clients(1).world();
    world.apply(Step::Acquire(0)).unwrap();
    settle(&mut world, 0);
    let Belief::Holding { token } = world.clients[0].belief() else { panic!("c0 holds") };
    let node = world.clients[0].recipe.owned_node().unwrap().to_string();
    let zxid = world.server.zxid();

    // Entered again: the same hold, no request, no round spent.
    assert!(world.enabled(Step::Acquire(0)), "a holder may enter again");
    world.apply(Step::Acquire(0)).unwrap();
    assert_eq!(world.clients[0].belief(), Belief::Holding { token });
    assert!(world.clients[0].outbound.is_empty() && world.clients[0].inbound.is_empty());
    assert_eq!(world.server.zxid(), zxid, "nothing reached the server");
    assert!(!world.enabled(Step::Acquire(0)), "one nested acquire per hold");

    // The first release only counts down; the second deletes the node.
    world.apply(Step::Write(0)).unwrap();
    world.apply(Step::Release(0)).unwrap();
    assert_eq!(world.clients[0].belief(), Belief::Holding { token });
    assert!(world.server.tree().get(&node).is_some());
    world.apply(Step::Release(0)).unwrap();
    settle(&mut world, 0);
    assert_eq!(world.clients[0].belief(), Belief::Idle);
    assert!(world.server.tree().get(&node).is_none(), "released at zero");
}

#[test]
fn a_thread_count_that_outlives_its_session_lets_two_hold_and_releasing_on_lost_fixes_it() {
    let flawed = check(catalogue("curator-mutex-reenter-after-lost"))
        .clients(2)
        .faults(&[FaultKind::Expire])
        .explore_everything()
        .run();
    let counterexample = flawed.assert_violates(Property::BeliefExclusion);
    let timeline = flawed.timeline(Property::BeliefExclusion).unwrap();
    assert!(timeline.contains("re-entrant acquire") && timeline.contains("Expired"), "{timeline}");
    assert!(counterexample.steps.contains(&Step::Expire(0)) || counterexample.steps.contains(&Step::Expire(1)));
    flawed.assert_violates(Property::StaleHolder);
    assert_eq!(
        verdicts(&flawed, &["zk_exclusion", "fenced_exclusion"]),
        ["zk_exclusion: Holds", "fenced_exclusion: Holds"],
        "ZooKeeper never agrees with the re-entered holder, and its token is the older"
    );

    // Curator's mutex whose listener releases on LOST: the same world, proven.
    check(catalogue("curator-mutex")).clients(2).faults(&[FaultKind::Expire]).run().assert_proven();
}

#[test]
fn a_waiter_that_gives_up_takes_its_node_out_of_the_line() {
    for recipe in ["standard", "curator-mutex", "timeout-lock"] {
        let checked = check(catalogue(recipe)).clients(2).faults(&[FaultKind::GiveUp, FaultKind::LossAfterApply]).run();
        checked.assert_proven();
        assert_eq!(verdicts(&checked, &["reached:give-up"]), ["reached:give-up: Holds"], "{recipe}");
    }
}

#[test]
fn zookeepers_write_lock_unlocking_while_waiting_orphans_its_node_when_the_delete_is_lost() {
    // unlock() deletes once: a waiter that gives up and loses that delete forgets its node,
    // which blocks the line until its session ends. The only lost request is the give-up's.
    let mut world =
        check(catalogue("zk-write-lock")).clients(2).faults(&[FaultKind::GiveUp, FaultKind::LossBeforeApply]).world();
    for i in [0, 1] {
        world.apply(Step::Acquire(i)).unwrap();
        settle(&mut world, i);
    }
    assert!(world.clients[0].belief().is_holding() && world.clients[1].belief() == Belief::Acquiring);
    let node = world.clients[1].recipe.owned_node().unwrap().to_string();
    world.apply(Step::Lossy(RequestFault::LossBeforeApply, Sending::GiveUp, 1)).unwrap();
    settle(&mut world, 1);
    world.apply(Step::Reconnect(1)).unwrap();
    settle(&mut world, 1);
    assert_eq!(world.clients[1].belief(), Belief::Idle, "the application has given up");
    assert!(world.server.tree().get(&node).is_some(), "but its node is still in line");
    // Once the holder is done, nothing but a fault can happen and the node is an orphan.
    world.apply(Step::Write(0)).unwrap();
    world.apply(Step::Release(0)).unwrap();
    settle(&mut world, 0);
    settle(&mut world, 1);
    assert!(world.steps().iter().all(|s| s.is_fault()), "{:?}", world.steps());
    assert!(!Property::NoOrphans.holds(&world), "{node} is owned by no client that knows it");
}

#[test]
fn a_holder_that_never_hears_of_its_expiry_is_a_stale_holder() {
    let kazoo = check(catalogue("kazoo-lock")).clients(2).faults(&[FaultKind::Expire]).run();
    kazoo.assert_violates(Property::StaleHolder);
    // The standard lock suspends on Disconnected, before the server can expire the session.
    check(catalogue("standard")).clients(2).faults(&[FaultKind::Expire]).run().assert_proven();
}

#[test]
fn tokens_that_restart_lock_the_rightful_holder_out_while_every_other_property_holds() {
    let others = ["belief_exclusion", "fenced_exclusion", "zk_exclusion", "no_orphans", "stale_holder"];
    let holds = others.map(|n| format!("{n}: Holds"));

    // A reaped container parent is created again and its sequence counter restarts.
    let reaped =
        check(catalogue("container-lock")).clients(3).faults(&[FaultKind::ReapParent]).explore_everything().run();
    reaped.assert_violates(Property::FencingAvailable);
    assert_eq!(verdicts(&reaped, &others), holds);
    let timeline = reaped.timeline(Property::FencingAvailable).unwrap();
    assert!(timeline.contains("reaps the empty container"), "{timeline}");

    // The counter wraps from 2147483647 to -2147483648.
    let wrapped = check(catalogue("standard")).clients(2).first_sequence(i32::MAX).explore_everything().run();
    wrapped.assert_violates(Property::FencingAvailable);
    assert_eq!(verdicts(&wrapped, &others), holds);

    // Neither happens without a reap or a wrap.
    check(catalogue("container-lock")).clients(3).run().assert_proven();
}
