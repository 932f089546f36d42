//! The explorable world: one server, N clients running recipes, the channels between them, the
//! fault budget and the protected resource. `steps()` lists what can happen next and `apply()`
//! makes one of those things happen; the checker enumerates steps, the simulator picks them by
//! time, and both replay the same way.

mod client;
mod clients;
mod config;
pub(crate) mod derived;
mod describe;
mod faults;
pub(crate) mod handed;
mod note;
mod observe;
mod outputs;

mod resource;
mod shell;
mod step;

pub use client::{Client, Link};
pub use clients::Clients;
pub use config::WorldConfig;
use derived::Derived;
pub use describe::{describe_input, describe_request, describe_result};
pub use faults::{ClientFault, Fault, FaultBudget, FaultKind, RequestFault, ServerEvent};
pub use note::Note;
pub use observe::Coverage;
pub use outputs::StepOutputs;
pub use resource::Resource;
pub use shell::Shell;
pub use step::{Sending, Step};

use crate::recipe::{Belief, ClientId, Ctx, Input, Mode, Recipe};
use crate::{ClientBehaviour, CreateMode, Notification, Request, Response, Server, SessionId, SessionState, ZkError};
use std::collections::BTreeMap;
use std::hash::Hash;
use std::sync::Arc;

/// The state of the whole system: the server, every client, the faults spent, the protected
/// resource and what has been reached. Everything else a world carries is in `derived`, which
/// neither hashing nor comparing sees.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
pub struct World<R> {
    pub server: Server,
    pub clients: Clients<R>,
    /// How many of each fault have happened.
    pub faults_used: [u32; FaultKind::COUNT],
    pub resource: Resource,
    /// Grants handed out so far (a grant is a client coming to believe it holds), counted up to
    /// two: only "more than one" (a handoff) is ever read, and an exact count would make a
    /// recipe that acquires forever (`rounds: UNBOUNDED_ROUNDS`) an infinite graph.
    pub grants: u8,
    pub coverage: Coverage,
    /// Not part of the state (see `Derived`).
    pub(crate) derived: Derived,
}

/// A reply longer than the client's `jute.maxbuffer`: the client dropped its connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RefusedReply {
    pub client: ClientId,
    pub frame_bytes: usize,
    /// How many names it listed (0 for a reply that is not a listing).
    pub children: usize,
}

/// How many past states a lagging follower may show when a world allows lagging reads and its
/// server config sets no window: one, a follower one transaction behind. That is enough for a
/// new session to be shown its expired session's nodes, and each state kept multiplies the
/// states the checker explores.
pub const DEFAULT_LAG_WINDOW: u8 = 1;

/// `WorldConfig::rounds` for clients that acquire and release forever: the application asks
/// again every time it is idle, so starvation by overtaking (a client that waits while the
/// others take the lock again and again) is a cycle the checker can find. With a bounded number
/// of rounds every run ends and no client can be overtaken forever.
pub const UNBOUNDED_ROUNDS: u8 = u8::MAX;

/// The steps one client may take in a state, in the order the world lists them (see
/// `World::client_steps`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClientSteps(Vec<Step>);

/// How a state is settled (see `World::settle`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Settle {
    /// Renumbered by rank where that is sound: every state the checker keeps.
    Renumbering,
    /// As `Renumbering`, handing back the state as it was before settling where settling
    /// renumbered it (`Settled::raw`): for the checker's check that renumbering commutes, which
    /// compares the two. A state that settling changes before it renumbers it (few do) is copied
    /// just before that change; otherwise the state renumbering replaces is handed back itself.
    KeepingRaw,
    /// Without renumbering: a run's first state, which the checker keeps with the numbers the
    /// run starts with. Renumbered, the run would explore from a state whose numbers no real run
    /// starts with (its zxids are not consecutive), and a recipe that reads a number's value, in
    /// a run where every later state is kept as it is (a node below one of the lock's children),
    /// would never have its claim checked.
    KeepingNumbers,
}

/// What settling a state did (see `World::settle`).
pub struct Settled<R> {
    /// It changed the state: a checker that knows the state's parts by number knows the settled
    /// state's then.
    pub changed: bool,
    /// It renumbered the state.
    pub renumbered: bool,
    /// Where it renumbered the state and was asked to keep it: the state as it was.
    pub raw: Option<World<R>>,
}

/// A step that is not enabled in the current state (a replayed trace that does not fit).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("step `{0}` is not enabled here")]
pub struct NotEnabled(pub Step);

impl<R: Recipe> World<R> {
    /// A world whose lock parent exists and whose clients each have an open session.
    pub fn new(mut config: WorldConfig, recipes: Vec<R>) -> Self {
        let lags = FaultKind::ALL.into_iter().any(|k| k.lags() && config.faults.get(k) > 0);
        if lags && config.server.lag_window == 0 {
            config.server.lag_window = DEFAULT_LAG_WINDOW;
        }
        let mut server = Server::new(config.server);
        let (admin, _) = server.open_session(config.session_timeout_ms);
        let create = Request::create(&config.lock_path, CreateMode::Persistent);
        let made = server.apply(admin, &create).result;
        assert!(made.is_ok(), "lock path {:?} must be a creatable top-level path: {made:?}", config.lock_path);
        server.set_sequence_counter(&config.lock_path, config.first_sequence).expect("just created");
        server.close_session(admin);
        let clients: Clients<R> = recipes
            .into_iter()
            .map(|recipe| {
                let (session, _) = server.open_session(config.session_timeout_ms);
                Client::new(recipe, session, config.rounds)
            })
            .collect();
        let first_session = clients.first().map_or(SessionId(0), |c| c.session);
        // Renaming changes names' lengths (c9 and c10), which a reply-length limit can tell apart.
        let interchangeable =
            config.jute_maxbuffer.is_none() && World::interchangeable(&clients, &config.lock_path, first_session);
        let by_session = World::index_sessions(&clients);
        let one_recipe = clients.first().is_some_and(|f| clients.iter().all(|c| c.recipe.name() == f.recipe.name()));
        let mut world = World {
            server,
            clients,
            faults_used: [0; FaultKind::COUNT],
            resource: Resource::default(),
            grants: 0,
            coverage: Coverage::default(),
            derived: Derived {
                config: Arc::new(config),
                first_session,
                interchangeable,
                one_recipe,
                by_session,
                outputs: StepOutputs::default(),
                acting: None,
            },
        };
        world.keep_inputs_for_replay();
        world
    }

    pub(crate) fn index_sessions(clients: &Clients<R>) -> Arc<BTreeMap<SessionId, ClientId>> {
        Arc::new(clients.iter().enumerate().map(|(i, c)| (c.session, i as ClientId)).collect())
    }

    /// The clients the last step queued a watch notification for.
    pub fn routed(&self) -> &[ClientId] {
        &self.derived.outputs.routed
    }

    /// What the last step left beside the state (see `StepOutputs`).
    pub fn step_outputs(&self) -> &StepOutputs {
        &self.derived.outputs
    }

    /// The reply the last step's client refused as longer than its `jute.maxbuffer`.
    pub fn refused(&self) -> Option<RefusedReply> {
        self.derived.outputs.refused
    }

    pub fn config(&self) -> &WorldConfig {
        &self.derived.config
    }

    /// At most how many parts a state's hash writes as their own 128-bit digests: each client,
    /// the tree and the past ones a lagging follower keeps, the sessions and the two watch
    /// tables (see `memo::digest`).
    pub fn digested_parts(&self) -> usize {
        self.clients.len() + 1 + usize::from(self.server.config().lag_window) + 3
    }

    /// The same world with renumbering off (`WorldConfig::renumber`): for judging it again
    /// when renumbering was found unsound for its recipe.
    pub fn without_renumbering(mut self) -> World<R> {
        let replayed = self.renumbers_by_replay();
        Arc::make_mut(&mut self.derived.config).renumber = false;
        if replayed {
            // Replay was what kept symmetry off (`keep_inputs_for_replay`): without it the
            // clients are as interchangeable as they were made.
            self.stop_keeping_inputs();
            self.derived.interchangeable = self.derived.config.jute_maxbuffer.is_none()
                && World::interchangeable(&self.clients, &self.derived.config.lock_path, self.derived.first_session);
        }
        self
    }

    /// Every enabled step, in a fixed order (the checker stores paths as indices into it).
    pub fn steps(&self) -> Vec<Step> {
        let mut steps = Vec::new();
        self.steps_into(&mut steps);
        steps
    }

    pub fn steps_into(&self, steps: &mut Vec<Step>) {
        let clients: Vec<ClientSteps> = (0..self.clients.len() as ClientId).map(|i| self.client_steps(i)).collect();
        self.steps_from(&clients.iter().collect::<Vec<_>>(), steps);
    }

    /// The steps client `i` may take now, its own and its faults': they read only that client
    /// and the state without its clients (`enabled`, `fault_steps_from`), so a checker may keep
    /// them for the pair.
    pub fn client_steps(&self, i: ClientId) -> ClientSteps {
        let mut steps: Vec<Step> = Step::of_client(i).into_iter().filter(|step| self.enabled(*step)).collect();
        self.client_fault_steps_into(i, &mut steps);
        ClientSteps(steps)
    }

    /// Every enabled step, in the order `steps` lists them, given each client's (`client_steps`
    /// of client `i` at `clients[i]`): the clients' own steps, then the faults by kind, each over
    /// the clients.
    pub fn steps_from(&self, clients: &[&ClientSteps], steps: &mut Vec<Step>) {
        for client in clients {
            steps.extend(client.0.iter().filter(|step| !step.is_fault()));
        }
        self.fault_steps_from(clients, steps);
    }

    /// Whether `step` can happen now.
    pub fn enabled(&self, step: Step) -> bool {
        if let Step::Server(event) = step {
            return self.server_event_enabled(event);
        }
        let Some(c) = step.client().and_then(|i| self.clients.get(i as usize)) else {
            return false;
        };
        let alive = || self.server.is_alive(c.session);
        match step {
            Step::Acquire(_) => {
                c.runs()
                    && (c.recipe.accepts_reentry()
                        || (c.link == Link::Up && c.rounds_left > 0 && c.belief() == Belief::Idle))
            }
            Step::Write(_) => c.runs() && c.belief().is_holding() && !c.wrote,
            Step::Release(_) => c.runs() && c.belief().is_holding() && c.wrote,
            Step::Receive(_) => c.runs() && !c.inbound.is_empty(),
            Step::Reconnect(_) => c.runs() && c.link == Link::Down,
            Step::Expire(_) => {
                (c.crashed || (c.link == Link::Partitioned && (c.noticed_disconnect || c.paused))) && alive()
            }
            Step::Resume(_) => c.paused && !c.crashed,
            Step::CatchUp(_) => c.lagging && !c.crashed,
            Step::Lossy(fault, sending, i) => self.request_fault_enabled(fault, sending, i),
            Step::Fault(fault, i) => self.client_fault_enabled(fault, i),
            Step::Server(_) => unreachable!("answered above"),
        }
    }

    /// Performs `step`, or says it is not enabled.
    pub fn apply(&mut self, step: Step) -> Result<(), NotEnabled> {
        self.apply_logged(step, &mut None)
    }

    /// Performs `step`, describing what happened in `log` when asked (for timelines).
    pub fn apply_logged(&mut self, step: Step, log: &mut Option<Vec<Note>>) -> Result<(), NotEnabled> {
        if !self.enabled(step) {
            return Err(NotEnabled(step));
        }
        if !matches!(step, Step::Lossy(..)) {
            self.derived.outputs = StepOutputs::default();
            self.derived.acting = step.client();
        }
        if let Step::Server(event) = step {
            self.server_event(event, log);
            return Ok(());
        }
        let i = step.client().expect("every other step is a client's") as usize;
        match step {
            Step::Acquire(_) => {
                // A re-entrant acquire is answered from the recipe's own count: no new round.
                let c = &mut self.clients[i];
                if c.recipe.accepts_reentry() {
                    note(log, || Note::Client("re-entrant acquire: answered from the local count".to_string()));
                } else if c.rounds_left != UNBOUNDED_ROUNDS {
                    c.rounds_left -= 1;
                }
                self.run_recipe(i, Input::Acquire, log);
            }
            Step::Write(_) => {
                let c = &mut self.clients[i];
                c.wrote = true;
                let Belief::Holding { token } = c.belief() else { unreachable!("enabled only when holding") };
                let mode = c.recipe.mode();
                let accepted = match mode {
                    Mode::Read => self.resource.read(token, c.grant),
                    Mode::Take => {
                        self.resource.take(token);
                        true
                    }
                    _ if mode.is_fenced() => self.resource.write(token, c.grant),
                    _ => true,
                };
                if !accepted && self.zk_agrees(i as ClientId) {
                    // Refused although ZooKeeper agrees it holds: its token is not the newest.
                    self.resource.refused_live = true;
                }
                note(log, || Note::Write { token, accepted, mode });
            }
            Step::Release(_) => self.run_recipe(i, Input::Release, log),
            Step::Receive(_) => {
                let input = self.clients[i].inbound.pop_front().expect("enabled only when non-empty");
                self.run_recipe(i, input, log);
            }
            Step::Reconnect(_) => self.reconnect(i, log),
            Step::Expire(_) => {
                let session = self.clients[i].session;
                let notifications = self.server.expire_session(session);
                note(log, || Note::Expired(session));
                self.route(notifications, log);
                self.coverage.expired = true;
                let c = &mut self.clients[i];
                if !c.crashed {
                    c.link = Link::Down;
                }
            }
            Step::CatchUp(_) => {
                self.clients[i].lagging = false;
                note(log, || Note::Client("the lagging follower catches up".to_string()));
            }
            Step::Resume(_) => {
                self.clients[i].paused = false;
                note(log, || Note::Client("process resumes".to_string()));
            }
            Step::Fault(fault, _) => self.strike_client(fault, i, log),
            Step::Lossy(fault, sending, client) => self.strike_request(fault, sending, client, log)?,
            Step::Server(_) => unreachable!("taken above"),
        }
        Ok(())
    }

    /// Settles the state: keeps each disconnected client's zxid only as exact as its reconnect
    /// can observe (see `Server::watch_equivalent_zxid`), and not at all where no reconnect will
    /// re-arm watches, forgets watches no event can fire, then (unless `how` keeps the numbers)
    /// renumbers sequence numbers and zxids by rank where that is sound (see `renumbered`): the
    /// checker settles every state it keeps, so that states differing only in how many
    /// unrelated writes happened before are one. Behaviour is unchanged, so a run need not
    /// settle (the simulator does not: it would cost a walk of the state per step).
    ///
    /// Says what settling did, or why the recipe's claim to renumbering breaks here (see
    /// `renumbered_or_refuted`; a step that could revive a forgotten watch says why itself, see
    /// `World::revived`), the state then left with its numbers. The one way to settle a state:
    /// a caller for whom a refusal changes nothing (it only wants the state as the checker
    /// keeps it) drops it (`.ok()`).
    pub fn settle(&mut self, how: Settle) -> Result<Settled<R>, String> {
        let keep_raw = how == Settle::KeepingRaw;
        let mut copy = None;
        let changed = self.settle_keeping_numbers_copying(keep_raw.then_some(&mut copy));
        if let Some(why) = self.derived.outputs.revived.take() {
            return Err(why);
        }
        if how == Settle::KeepingNumbers {
            return Ok(Settled { changed, renumbered: false, raw: None });
        }
        match self.renumbered_or_refuted()? {
            Some(renumbered) => {
                let settled = std::mem::replace(self, renumbered);
                Ok(Settled { changed: true, renumbered: true, raw: keep_raw.then(|| copy.unwrap_or(settled)) })
            }
            None => Ok(Settled { changed, renumbered: false, raw: None }),
        }
    }

    /// `settle` without renumbering, putting in `before`, if given, a copy of the state as it was
    /// before its first change, if it changes it. Says whether it changed it.
    fn settle_keeping_numbers_copying(&mut self, mut before: Option<&mut Option<World<R>>>) -> bool {
        let mut changed = false;
        let mut about_to_change = |world: &World<R>| {
            changed = true;
            if let Some(slot) = before.as_mut().filter(|slot| slot.is_none()) {
                **slot = Some(world.clone());
            }
        };
        for i in 0..self.clients.len() {
            let c = &self.clients[i];
            // Only a dropped connection of a live session, and only the Java client, re-arms
            // watches on reconnect; a partitioned or crashed client's session can only expire.
            let rearms = c.link == Link::Down
                && !c.crashed
                && self.derived.config.client_behaviour == ClientBehaviour::Java
                && self.server.is_alive(c.session);
            let drop_zxid = match rearms {
                true => self.server.watch_equivalent_zxid(c.drop_zxid),
                false => 0,
            };
            // Written only when it changes, so clients shared with other states stay shared.
            if drop_zxid != c.drop_zxid {
                about_to_change(self);
                self.clients[i].drop_zxid = drop_zxid;
            }
        }
        self.forget_dead_watches(&mut about_to_change);
        changed
    }

    /// Sends client `i`'s queued requests while its connection is up. The server applies a
    /// request the moment it is sent and only the reply travels: since the client may handle
    /// its replies and events arbitrarily late, every order in which the server can apply the
    /// clients' requests is still reached, with one interleaving point less per request. An
    /// armed connection-loss fault strikes the first request.
    fn send(&mut self, i: usize, log: &mut Option<Vec<Note>>) {
        while self.clients[i].link == Link::Up {
            let Some(request) = self.clients[i].outbound.pop_front() else { return };
            let armed = self.clients[i].armed.take();
            if armed == Some(RequestFault::LossBeforeApply) {
                self.lose_before_apply(i, request, log);
                return;
            }
            let session = self.clients[i].session;
            let lagging = self.answered_lagging(i, armed, &request, log);
            let revival = self.revival(&request);
            let outcome = self.server.apply(session, &request);
            if outcome.result.is_ok() && revival.is_some() {
                self.derived.outputs.revived = revival;
            }
            if lagging {
                self.server.catch_up(session);
            }
            note(log, || Note::Request { request: request.clone(), result: Some(outcome.result.clone()) });
            self.observe_reply(&request, &outcome.result);
            // Where each node created stands in lock order: its creation zxid, from the tree (a
            // multi's reply carries no stat).
            let created: Vec<(String, i64)> = outcome
                .result
                .as_ref()
                .map(Response::created)
                .unwrap_or_default()
                .into_iter()
                .filter_map(|path| self.server.tree().get(path).map(|n| (path.to_string(), n.czxid)))
                .collect();
            for (path, czxid) in created {
                if self.under_lock(&path) {
                    // A creation whose node is gone can still place a hold: the recipe may still
                    // name it (a stale belief after its session expired), or learn it from a
                    // message still queued to it (a stale reply or listing). Those are kept, with
                    // the latest and every one whose node exists; the rest are forgotten when the
                    // next is made (a recipe that learns one again from nowhere else is placed by
                    // time). That keeps the state finite for a recipe that creates again and
                    // again, and only the client's own sending steps change the list.
                    let tree = self.server.tree();
                    let c = &mut self.clients[i];
                    let owned = c.recipe.owned_node().map(str::to_string);
                    let inbound = &c.inbound;
                    c.created.retain(|(p, _)| {
                        *p != path
                            && (tree.get(p).is_some()
                                || owned.as_deref() == Some(p.as_str())
                                || inbound.iter().any(|m| crate::reduce::rewrite::mentions(m, p)))
                    });
                    c.created.push((path, czxid));
                }
            }
            // A write's notifications go out before its reply (the server fires watches as it
            // applies the transaction); a lagging follower fires the watch a read set once it
            // applies what it was missing, after it has answered the read.
            let mut notifications = Some(outcome.notifications);
            if !lagging {
                self.route(notifications.take().unwrap_or_default(), log);
            }
            if armed == Some(RequestFault::LossAfterApply) {
                self.lose_after_apply(i, request, log);
                return;
            }
            if let Some(refused) = self.too_long(i, &outcome.result) {
                // Not a fault: the Java client refuses the frame and drops its connection, as
                // after a lost reply, every time the reply is this long.
                let limit = self.derived.config.jute_maxbuffer.unwrap_or_default();
                note(log, || {
                    Note::Client(format!(
                        "!! the reply is {} bytes, over jute.maxbuffer ({limit}): the client drops the connection",
                        refused.frame_bytes
                    ))
                });
                self.derived.outputs.refused = Some(refused);
                self.drop_link(i, Link::Down, Some(request));
                return;
            }
            let c = &mut self.clients[i];
            c.watches.on_reply(&request, &outcome.result);
            c.inbound.push_back(Input::Reply { request, result: outcome.result });
            if let Some(late) = notifications {
                self.route(late, log);
            }
        }
    }

    /// The reply, if client `i`'s library refuses it as longer than its `jute.maxbuffer`.
    fn too_long(&self, i: usize, result: &crate::ZkResult) -> Option<RefusedReply> {
        let response = result.as_ref().ok()?;
        if !self.derived.config.client_behaviour.refuses(self.derived.config.jute_maxbuffer, response) {
            return None;
        }
        let children = match response {
            Response::Children { children, .. } => children.len(),
            _ => 0,
        };
        Some(RefusedReply { client: i as ClientId, frame_bytes: response.frame_bytes(), children })
    }

    /// Queues watch notifications on the connected clients they are for.
    fn route(&mut self, notifications: Vec<Notification>, log: &mut Option<Vec<Note>>) {
        for n in notifications {
            let Some(&to) = self.derived.by_session.get(&n.session) else { continue };
            self.derived.outputs.notified_another |= self.derived.acting != Some(to);
            let c = &mut self.clients[to as usize];
            if c.session == n.session && c.link == Link::Up && !c.crashed {
                self.derived.outputs.routed.push(to);
                note(log, || Note::Notified { session: n.session, event: n.event.clone() });
                c.watches.on_event(&n.event);
                c.inbound.push_back(Input::Watch(n.event));
            }
        }
    }

    /// The connection drops: everything outstanding fails with ConnectionLoss, the server
    /// forgets the connection's watches, and the recipe is told Disconnected.
    fn drop_link(&mut self, i: usize, link: Link, in_flight: Option<Request>) {
        let behaviour = self.derived.config.client_behaviour;
        let c = &mut self.clients[i];
        c.link = link;
        c.noticed_disconnect = false;
        // The next connection may land anywhere: on the leader's state as far as reads go.
        c.lagging = false;
        c.drop_zxid = self.server.zxid();
        c.armed = None;
        behaviour.on_disconnect(&mut self.server, c.session, &mut c.watches);
        for request in in_flight.into_iter().chain(c.outbound.drain(..)) {
            c.inbound.push_back(Input::Reply { request, result: Err(ZkError::ConnectionLoss) });
        }
        c.inbound.push_back(Input::State(SessionState::Disconnected));
    }

    /// Whether `path` is the lock node or lies anywhere beneath it (a semaphore keeps its
    /// leases and its inner lock one level further down).
    pub fn under_lock(&self, path: &str) -> bool {
        let lock = &self.derived.config.lock_path;
        path.strip_prefix(lock.as_str()).is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    }

    fn reconnect(&mut self, i: usize, log: &mut Option<Vec<Note>>) {
        let behaviour = self.derived.config.client_behaviour;
        let c = &mut self.clients[i];
        if self.server.is_alive(c.session) {
            c.link = Link::Up;
            c.inbound.push_back(Input::State(SessionState::SyncConnected));
            let drop_zxid = std::mem::take(&mut c.drop_zxid);
            note(log, || Note::Client(format!("reconnects, {} still alive", c.session)));
            for event in behaviour.on_reconnect(&mut self.server, c.session, drop_zxid, &mut c.watches) {
                note(log, || Note::CatchUp(event.clone()));
                c.inbound.push_back(Input::Watch(event));
            }
            self.send(i, log);
        } else {
            note(log, || Note::Client(format!("reconnects: {} has EXPIRED", c.session)));
            for request in c.outbound.drain(..) {
                c.inbound.push_back(Input::Reply { request, result: Err(ZkError::SessionExpired) });
            }
            c.watches.clear();
            c.inbound.push_back(Input::State(SessionState::Expired));
            // The handle is dead; the application makes a new one once it has seen Expired.
            c.link = Link::Partitioned;
        }
    }

    /// Hands one input to client `i`'s recipe and sends what it asks for.
    fn run_recipe(&mut self, i: usize, input: Input, log: &mut Option<Vec<Note>>) {
        let c = &mut self.clients[i];
        let before = c.belief();
        let mode_before = c.recipe.mode();
        let ctx = Ctx { client: i as ClientId, session: c.session };
        let expired = input == Input::State(SessionState::Expired);
        if input == Input::State(SessionState::Disconnected) {
            // Only the outage's own Disconnected counts, not one left from an earlier outage.
            c.noticed_disconnect = !c.inbound.contains(&Input::State(SessionState::Disconnected));
        }
        if expired {
            // Whatever is still queued on the dead handle dies with it (its replies could only
            // be SessionExpired); what the recipe sends while handling Expired goes out on the
            // new handle.
            c.outbound.clear();
            c.inbound.clear();
            c.watches.clear();
        }
        if !matches!(input, Input::Acquire | Input::Release | Input::Abandon) {
            note(log, || Note::Handled(input.clone()));
        }
        let mut out = Vec::new();
        let kept = c.handed.kept().then(|| input.clone());
        c.recipe.handle(&ctx, input, &mut out);
        if let Some(input) = kept {
            c.handed.push(ctx, input, &c.recipe, &out);
        }
        let after = c.belief();
        let mode = c.recipe.mode();
        c.outbound.extend(out);
        if before != after || (after.is_holding() && mode != mode_before) {
            note(log, || Note::Belief(after, mode));
        }
        let granted = after.is_holding() && !matches!(before, Belief::Holding { .. } | Belief::Suspended { .. });
        // A downgrade is a new hold in a new mode, with its own access to the resource; it keeps
        // its place in lock order (a correct downgrade queues its read where its write was).
        let downgraded = after.is_holding() && before.is_holding() && mode != mode_before;
        if granted || downgraded {
            c.wrote = false;
        }
        if granted {
            self.grants = (self.grants + 1).min(2);
            if self.grants > 1 {
                self.coverage.handoff = true;
            }
        }
        if !matches!(after, Belief::Holding { .. } | Belief::Suspended { .. }) {
            c.grant = 0;
        }
        // One clock, the zxid: a new hold's place in lock order is the creation zxid of its
        // node, whichever of the client's creations that is; a recipe that names no node it
        // created is placed by when it came to believe, the zxid once its step is done.
        let owned = c.recipe.owned_node();
        let czxid = granted.then(|| c.created.iter().find(|(path, _)| Some(path.as_str()) == owned).map(|(_, z)| *z));
        if expired {
            let (session, _) = self.server.open_session(self.derived.config.session_timeout_ms);
            let c = &mut self.clients[i];
            note(log, || Note::Client(format!("opens a new session {session}")));
            let by_session = Arc::make_mut(&mut self.derived.by_session);
            by_session.remove(&c.session);
            by_session.insert(session, i as ClientId);
            c.session = session;
            c.link = Link::Up;
            c.drop_zxid = 0;
            c.lagging = false;
            if self.server.config().lag_window > 0 {
                self.server.forget_seen(session);
            }
        }
        self.send(i, log);
        if let Some(czxid) = czxid {
            self.clients[i].grant = czxid.unwrap_or_else(|| self.server.zxid());
        }
    }
}

fn note(log: &mut Option<Vec<Note>>, line: impl FnOnce() -> Note) {
    if let Some(log) = log {
        log.push(line());
    }
}
