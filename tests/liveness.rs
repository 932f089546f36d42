//! Liveness is judged on the whole state graph: a waiting client with no way forward is a
//! deadlock, and a weakly fair cycle in which a client waits throughout is a livelock that
//! stateright's own `eventually` cannot see. An unfair cycle (one that only goes on because a
//! step that is always possible is never taken) is not a violation.

use stateright::{Checker, Model, Property};
use zklab::check::{self, Options, Status};
use zklab_model::{Belief, CreateMode, Ctx, Input, Recipe, Request, Response, Settle, World, WorldConfig};

/// Options that judge every property: these tests are about the whole graph.
fn everything() -> Options {
    Options { stop_at_violation: false, ..Options::default() }
}

/// Acquires by polling exists() (no watch) until `/lock/busy` is absent. A `holder` creates
/// `/lock/busy` on acquire and deletes it on release.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Poller {
    Holder { holding: bool, releasing: bool },
    Waiter { waiting: bool, holding: bool, releasing: bool },
}

const BUSY: &str = "/lock/busy";

impl Recipe for Poller {
    fn name(&self) -> String {
        "poller".to_string()
    }

    fn handle(&mut self, _: &Ctx, input: Input, out: &mut Vec<Request>) {
        match (self, input) {
            (Poller::Holder { holding, .. }, Input::Acquire) => {
                *holding = true;
                out.push(Request::create(BUSY, CreateMode::Ephemeral));
            }
            (Poller::Holder { holding, releasing }, Input::Release) => {
                *holding = false;
                *releasing = true;
                out.push(Request::delete(BUSY));
            }
            (Poller::Holder { releasing, .. }, Input::Reply { request: Request::Delete { .. }, .. }) => {
                *releasing = false
            }
            (Poller::Waiter { waiting, .. }, Input::Acquire) => {
                *waiting = true;
                out.push(Request::exists(BUSY, false));
            }
            (Poller::Waiter { waiting, holding, .. }, Input::Reply { request: Request::Exists { .. }, result }) => {
                if result == Ok(Response::Exists(None)) {
                    *waiting = false;
                    *holding = true;
                } else {
                    out.push(Request::exists(BUSY, false));
                }
            }
            (Poller::Waiter { holding, releasing, .. }, Input::Release) => {
                *holding = false;
                *releasing = false;
            }
            _ => {}
        }
    }

    fn belief(&self) -> Belief {
        match *self {
            Poller::Holder { holding: true, .. } | Poller::Waiter { holding: true, .. } => Belief::Holding { token: 0 },
            Poller::Holder { releasing: true, .. } | Poller::Waiter { releasing: true, .. } => Belief::Releasing,
            Poller::Waiter { waiting: true, .. } => Belief::Acquiring,
            _ => Belief::Idle,
        }
    }

    fn owned_node(&self) -> Option<&str> {
        match self {
            Poller::Holder { holding: true, .. } => Some(BUSY),
            _ => None,
        }
    }

    /// Its node has no client in its name, so renaming changes nothing of its own state.
    fn renamed(&self, _: &zklab_model::Renamer) -> Option<Self> {
        Some(self.clone())
    }

    /// It keeps no sequence number or zxid, so renumbering changes nothing of its own state.
    fn renumbered(&self, _: zklab_model::ClientId, _: &zklab_model::Renumber) -> Option<Self> {
        Some(self.clone())
    }

    /// Its token is a constant.
    fn renumber_token(&self, token: i64, _: &zklab_model::Numbers) -> i64 {
        token
    }
}

/// Acquires by checking that `/lock/busy` is absent; when it is there, backs off (lists the
/// lock's children, believing it is giving up) and then checks again: it never waits
/// throughout, yet may never get in.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Shy {
    belief: Belief,
}

impl Recipe for Shy {
    fn name(&self) -> String {
        "shy".to_string()
    }

    fn handle(&mut self, _: &Ctx, input: Input, out: &mut Vec<Request>) {
        match input {
            Input::Acquire => {
                self.belief = Belief::Acquiring;
                out.push(Request::exists(BUSY, false));
            }
            Input::Reply { request: Request::Exists { .. }, result: Ok(Response::Exists(None)) } => {
                self.belief = Belief::Holding { token: 0 };
            }
            Input::Reply { request: Request::Exists { .. }, .. } => {
                self.belief = Belief::Releasing;
                out.push(Request::get_children("/lock", false));
            }
            Input::Reply { request: Request::GetChildren { .. }, .. } => {
                self.belief = Belief::Acquiring;
                out.push(Request::exists(BUSY, false));
            }
            Input::Release => self.belief = Belief::Idle,
            _ => {}
        }
    }

    fn belief(&self) -> Belief {
        self.belief
    }

    fn owned_node(&self) -> Option<&str> {
        None
    }
}

fn holder() -> Poller {
    Poller::Holder { holding: false, releasing: false }
}
fn waiter() -> Poller {
    Poller::Waiter { waiting: false, holding: false, releasing: false }
}

/// A node nobody will ever delete: the waiter polls forever.
fn stuck_world() -> World<Poller> {
    let mut world = World::new(WorldConfig::default(), vec![waiter()]);
    let admin = world.server.open_session(4000).0;
    world.server.apply(admin, &Request::create(BUSY, CreateMode::Persistent));
    world
}

#[test]
fn a_fair_cycle_in_which_a_client_waits_forever_is_a_violation() {
    let outcome = check::explore(stuck_world(), &everything());
    assert_eq!(outcome.status(zklab_model::Property::EventualAcquire), Some(Status::Violated));
    let verdict = outcome.verdicts.iter().find(|v| v.name() == "eventual_acquire").unwrap();
    let cx = verdict.counterexample.as_ref().unwrap();
    let start = cx.cycle_start.expect("a cycle, not a deadlock");
    assert!(cx.steps.len() > start, "the cycle has steps");
    // Replaying the cycle returns to the state where it started.
    let mut world = stuck_world();
    let mut at_start = None;
    for (i, step) in cx.steps.iter().enumerate() {
        if i == start {
            at_start = Some(world.clone());
        }
        world.apply(*step).unwrap();
    }
    assert_eq!(Some(world), at_start);
}

/// What stateright's own `eventually` says about the same world: nothing, because the path
/// never ends. This is why zklab judges liveness on the graph itself.
struct Plain(World<Poller>);
impl Model for Plain {
    type State = World<Poller>;
    type Action = zklab_model::Step;
    fn init_states(&self) -> Vec<Self::State> {
        vec![self.0.clone()]
    }
    fn actions(&self, state: &Self::State, actions: &mut Vec<Self::Action>) {
        state.steps_into(actions)
    }
    fn next_state(&self, state: &Self::State, step: Self::Action) -> Option<Self::State> {
        let mut next = state.clone();
        next.apply(step).ok().map(|_| next)
    }
    fn properties(&self) -> Vec<Property<Self>> {
        vec![Property::eventually("acquires", |_, w: &World<Poller>| w.believers().contains(&0))]
    }
}

#[test]
fn stateright_eventually_alone_misses_the_cycle() {
    let checker = Plain(stuck_world()).checker().spawn_bfs().join();
    assert!(checker.is_done());
    assert!(checker.discovery("acquires").is_none(), "stateright reports no liveness violation for a cycle");
}

#[test]
fn an_unfair_cycle_is_not_a_violation() {
    // The waiter polls while the holder holds; the cycle goes on only if the holder never
    // releases, which weak fairness rules out. Then the waiter acquires.
    let world = World::new(WorldConfig::default(), vec![holder(), waiter()]);
    let outcome = check::explore(world, &everything());
    assert_eq!(outcome.status(zklab_model::Property::EventualAcquire), Some(Status::Holds));
    assert!(!outcome.bounded);
}

#[test]
fn a_waiting_client_with_no_way_forward_is_a_deadlock() {
    let report =
        check::run(&zklab::scenario::Scenario::new("wait-on-null", 2, WorldConfig::default()).unwrap(), &everything());
    let p = report.properties.iter().find(|p| p.name == "eventual_acquire").unwrap();
    assert_eq!(p.status, Status::Violated);
    let trace = p.trace.as_ref().unwrap();
    assert_eq!(trace.verdict.cycle_start, None, "a deadlock, not a cycle");
    trace.replay().unwrap();
}

#[test]
fn an_unreached_fault_makes_the_run_vacuous_not_a_pass() {
    // A client that never acquires sends nothing, so a loss of a request can never happen:
    // the claim that the run covers it is vacuous. With one acquire it is reached.
    let config = WorldConfig {
        rounds: 1,
        faults: zklab_model::FaultBudget::once(&[zklab_model::FaultKind::LossBeforeApply]),
        ..WorldConfig::default()
    };
    let world = World::new(config, vec![Poller::Holder { holding: false, releasing: false }]);
    let mut never_acquires = world.clone();
    never_acquires.clients[0].rounds_left = 0;
    let outcome = check::explore(never_acquires, &everything());
    assert_eq!(
        outcome
            .status(zklab_model::Property::Reached(zklab_model::Reach::Fault(zklab_model::FaultKind::LossBeforeApply))),
        Some(Status::Vacuous)
    );
    let outcome = check::explore(world, &everything());
    assert_eq!(
        outcome
            .status(zklab_model::Property::Reached(zklab_model::Reach::Fault(zklab_model::FaultKind::LossBeforeApply))),
        Some(Status::Holds)
    );
}

#[test]
fn under_symmetry_a_cycle_is_judged_on_the_full_graph() {
    // Reduced states cannot say whether the same client waits all along a cycle, so the
    // checker explores again without symmetry: the starving cycle is still found, and the
    // unfair one still is not a violation.
    let symmetric = Options { symmetry: true, ..everything() };
    let stuck = check::explore(stuck_world(), &symmetric);
    assert_eq!(stuck.status(zklab_model::Property::EventualAcquire), Some(Status::Violated));
    assert!(!stuck.symmetric, "judged without symmetry");
    let world = World::new(WorldConfig::default(), vec![holder(), waiter()]);
    let fair = check::explore(world, &symmetric);
    assert_eq!(fair.status(zklab_model::Property::EventualAcquire), Some(Status::Holds));
    assert!(!fair.symmetric);
}

#[test]
fn a_client_that_backs_off_and_retries_forever_is_a_livelock() {
    // Each lap passes through a belief that is not waiting (backing off), so no state of the
    // cycle has the client waiting throughout; it still waits again and again and never holds.
    let mut world = World::new(WorldConfig::default(), vec![Shy { belief: Belief::Idle }]);
    let admin = world.server.open_session(4000).0;
    world.server.apply(admin, &Request::create(BUSY, CreateMode::Persistent));
    let outcome = check::explore(world.clone(), &everything());
    assert_eq!(outcome.status(zklab_model::Property::EventualAcquire), Some(Status::Violated));
    let cx = outcome.verdicts.iter().find(|v| v.name() == "eventual_acquire").unwrap().counterexample.clone().unwrap();
    let start = cx.cycle_start.expect("a cycle, not a deadlock");
    let mut beliefs = Vec::new();
    for (i, step) in cx.steps.iter().enumerate() {
        world.apply(*step).unwrap();
        if i >= start {
            beliefs.push(world.clients[0].belief());
        }
    }
    assert!(beliefs.contains(&Belief::Acquiring) && beliefs.contains(&Belief::Releasing), "{beliefs:?}");
}

#[test]
fn a_fair_starving_cycle_inside_a_larger_component_is_found() {
    // Both clients ask forever. The waiter polls without a watch; it can get in (so the
    // component of the whole graph holds states where it holds), but on a fair run in which it
    // always polls while the holder holds, it waits forever: starvation by overtaking.
    let config = WorldConfig { rounds: zklab_model::UNBOUNDED_ROUNDS, ..WorldConfig::default() };
    let world = World::new(config, vec![holder(), waiter()]);
    let outcome = check::explore(world.clone(), &everything());
    assert!(!outcome.bounded);
    assert_eq!(outcome.status(zklab_model::Property::EventualAcquire), Some(Status::Violated));
    let cx = outcome.verdicts.iter().find(|v| v.name() == "eventual_acquire").unwrap().counterexample.clone().unwrap();
    let start = cx.cycle_start.expect("a cycle, not a deadlock");
    let (mut at, mut at_start, mut waited) = (world, None, false);
    for (i, step) in cx.steps.iter().enumerate() {
        if i == start {
            at_start = Some(at.clone());
        }
        at.apply(*step).unwrap();
        if i >= start {
            assert!(!at.clients[1].belief().is_holding(), "the waiter never holds on the cycle");
            waited |= at.clients[1].belief() == Belief::Acquiring;
        }
    }
    assert!(waited);
    let settled = |mut w: World<Poller>| {
        w.settle(Settle::Renumbering).ok();
        w
    };
    assert_eq!(settled(at), settled(at_start.unwrap()), "the cycle returns to its start (up to renumbering)");
    // With bounded rounds every run ends: no overtaking forever.
    let bounded = World::new(WorldConfig::default(), vec![holder(), waiter()]);
    assert_eq!(
        check::explore(bounded, &everything()).status(zklab_model::Property::EventualAcquire),
        Some(Status::Holds)
    );
}

/// The Java client refuses a reply longer than its jute.maxbuffer and drops its connection. The
/// standard lock lists the whole queue on every try: once the queue's listing is too long,
/// every waiter is refused, reconnects, lists again and is refused again, forever.
#[test]
fn a_listing_longer_than_jute_maxbuffer_starves_every_waiter_of_the_standard_lock() {
    let world = |limit| {
        let config = WorldConfig { jute_maxbuffer: Some(limit), ..WorldConfig::default() };
        zklab::scenario::Scenario::new("standard", 3, config).unwrap().world()
    };
    // Three names like `c0-s2-lock-0000000000` make a 95-byte reply; two make 70.
    let fits = check::explore(world(95), &everything());
    assert_eq!(fits.status(zklab_model::Property::EventualAcquire), Some(Status::Holds));
    assert_eq!(fits.status(zklab_model::Property::ZkExclusion), Some(Status::Holds));
    let starved = check::explore(world(94), &everything());
    assert_eq!(starved.status(zklab_model::Property::EventualAcquire), Some(Status::Violated));
    let verdict = starved.verdicts.iter().find(|v| v.name() == "eventual_acquire").unwrap();
    let cx = verdict.counterexample.as_ref().unwrap();
    let start = cx.cycle_start.expect("a cycle: the waiters keep trying");
    let mut world = world(94);
    let mut refused_in_cycle = 0;
    for (i, step) in cx.steps.iter().enumerate() {
        world.apply(*step).unwrap();
        if i >= start && world.refused().is_some() {
            refused_in_cycle += 1;
        }
    }
    assert!(refused_in_cycle > 0, "the cycle goes through a refused listing");
}
