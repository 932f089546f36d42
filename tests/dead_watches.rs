//! Dead watches (the model's `reduce::world::dead_watches`): when the checker settles a state,
//! an exist watch on a sequential name that the parent's counter has passed is forgotten, since
//! no sequential create names it again; and a step that makes such a name by hand makes settling
//! refuse, so that the checker explores again without the reduction.

use zklab::check::check;
use zklab_model::{
    Belief, CreateMode, Ctx, EventType, Input, Recipe, Request, Response, Settle, Step, World, WorldConfig,
};

/// A sequential name below the counter when the lock's counter starts at 5.
const PASSED: &str = "/lock/lock-0000000002";

/// Looks at a sequential name the counter has passed, watching it, then takes it by hand: the
/// one thing that brings a dead watch back to life.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
struct Squatter {
    phase: u8,
}

impl Recipe for Squatter {
    fn name(&self) -> String {
        "squatter".to_string()
    }

    fn handle(&mut self, _: &Ctx, input: Input, out: &mut Vec<Request>) {
        match (self.phase, input) {
            (0, Input::Acquire) => {
                self.phase = 1;
                out.push(Request::exists(PASSED, true));
            }
            (1, Input::Reply { result: Ok(Response::Exists(None)), .. }) => {
                self.phase = 2;
                out.push(Request::create(PASSED, CreateMode::Ephemeral));
            }
            (2, Input::Reply { result: Ok(Response::Created { .. }), .. }) => self.phase = 3,
            _ => {}
        }
    }

    fn belief(&self) -> Belief {
        match self.phase {
            0 => Belief::Idle,
            3 => Belief::Holding { token: 0 },
            _ => Belief::Acquiring,
        }
    }

    fn owned_node(&self) -> Option<&str> {
        None
    }
}

fn squatter_world() -> World<Squatter> {
    let config = WorldConfig { first_sequence: 5, ..WorldConfig::default() };
    World::new(config, vec![Squatter::default()])
}

#[test]
fn an_exist_watch_on_a_passed_name_is_forgotten_on_both_sides() {
    let mut raw = squatter_world();
    raw.apply(Step::Acquire(0)).unwrap();
    let session = raw.clients[0].session;
    assert_eq!(raw.server.watches_of(session).0, vec![PASSED.to_string()], "exists armed an exist watch");
    assert!(!raw.clients[0].watches.is_empty());

    let mut settled = raw.clone();
    settled.settle(Settle::KeepingNumbers).ok();
    assert!(settled.server.watches_of(session).0.is_empty(), "the server forgot the dead watch");
    assert!(settled.clients[0].watches.is_empty(), "the client library forgot it too");
    assert_ne!(settled, raw, "the two states were different states");

    // Without renumbering (what the checker falls back to) nothing is forgotten.
    let mut kept = World::new(
        WorldConfig { first_sequence: 5, renumber: false, ..WorldConfig::default() },
        vec![Squatter::default()],
    );
    kept.apply(Step::Acquire(0)).unwrap();
    kept.settle(Settle::KeepingNumbers).ok();
    assert_eq!(kept.server.watches_of(session).0, vec![PASSED.to_string()]);
}

#[test]
fn a_create_by_hand_of_a_passed_name_makes_settling_refuse() {
    let mut raw = squatter_world();
    raw.apply(Step::Acquire(0)).unwrap();
    let mut settled = raw.clone();
    settled.settle(Settle::KeepingNumbers).ok();

    // Made by hand, the name wakes the watch in the world as it is...
    raw.apply(Step::Receive(0)).unwrap();
    let woken = |w: &World<Squatter>| {
        w.clients[0].inbound.iter().any(|m| matches!(m, Input::Watch(e) if e.kind == EventType::NodeCreated))
    };
    assert!(woken(&raw), "the exist watch fires on the create by hand");
    // ...and not in the world that forgot it: the reduction alone would be wrong here.
    let mut next = settled.clone();
    next.apply(Step::Receive(0)).unwrap();
    assert!(!woken(&next));
    let why =
        next.settle(Settle::Renumbering).map(|s| s.renumbered).expect_err("settling refuses after the create by hand");
    assert!(why.contains("by hand") && why.contains(PASSED), "{why}");
}

#[test]
fn the_checker_explores_a_world_that_makes_names_by_hand_without_the_reduction() {
    let checked = check(|_| Squatter::default()).clients(1).first_sequence(5).run();
    let refused = checked.outcome.renumbering_refused.as_deref().unwrap_or_default();
    assert!(refused.contains("by hand"), "refused: {refused:?}");
}

/// Sends its requests, in order, when asked for the lock: the steps the guard watches for,
/// written out.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct OnAcquire(Vec<Request>);

impl Recipe for OnAcquire {
    fn name(&self) -> String {
        "on-acquire".to_string()
    }

    fn handle(&mut self, _: &Ctx, input: Input, out: &mut Vec<Request>) {
        if input == Input::Acquire {
            out.extend(self.0.iter().cloned());
        }
    }

    fn belief(&self) -> Belief {
        Belief::Idle
    }

    fn owned_node(&self) -> Option<&str> {
        None
    }
}

/// `requests` sent in one step, from a world whose lock node counts from `first_sequence`,
/// and what settling says after them.
fn settled_after(first_sequence: i32, requests: Vec<Request>) -> (World<OnAcquire>, Result<bool, String>) {
    let config = WorldConfig { first_sequence, ..WorldConfig::default() };
    let mut world = World::new(config, vec![OnAcquire(requests)]);
    world.apply(Step::Acquire(0)).unwrap();
    let settled = world.clone().settle(Settle::Renumbering).map(|s| s.renumbered);
    (world, settled)
}

#[test]
fn deleting_a_parent_whose_counter_has_moved_makes_settling_refuse() {
    let deleted_from = |first_sequence| {
        let (world, settled) = settled_after(first_sequence, vec![Request::delete("/lock")]);
        assert!(world.server.tree().get("/lock").is_none(), "the lock's parent is gone");
        settled
    };
    // A new parent would count from 0 again, through names the old one had passed.
    let why = deleted_from(5).expect_err("the counter had passed 0");
    assert!(why.contains("delete of /lock"), "{why}");
    // A parent whose counter never moved gives no name back.
    assert!(deleted_from(0).is_ok());
}

/// A node made below the lock node, a node below it, both deleted: the second delete removes a
/// node that had counted, but no watch below it is ever forgotten (only the lock node's
/// children are), so nothing is refused.
#[test]
fn deleting_any_other_node_that_had_counted_refuses_nothing() {
    let nested = vec![
        Request::create("/lock/mine", CreateMode::Persistent),
        Request::create("/lock/mine/sub", CreateMode::Persistent),
        Request::delete("/lock/mine/sub"),
        Request::delete("/lock/mine"),
    ];
    let (world, settled) = settled_after(0, nested);
    assert!(world.server.tree().get("/lock/mine").is_none(), "made and deleted");
    assert!(settled.is_ok());
}
