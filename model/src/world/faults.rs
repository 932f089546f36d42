//! Every fault in one place: the vocabulary a user names and budgets (`FaultKind`,
//! `FaultBudget`), the three things a fault can be (`RequestFault`, `ClientFault`,
//! `ServerEvent`: each its own kind of `Step`, so that one cannot be taken for another), where
//! each may strike (its guard) and what it does (its effect).
//!
//! A request fault is armed by its step and strikes the first request the client's step sends
//! (`send` calls `lose_before_apply`, `answered_lagging` and `lose_after_apply` at the moments
//! they strike). A client fault strikes the client's connection, process or application; a
//! server event is the server's own, on no client's behalf.
//!
//! When each strikes in a simulated run is the simulator's: the rates and counts a user asks
//! for are `zklab_sim::SimConfig::rated` (sim/src/config.rs), their timing sim/src/plan.rs and
//! sim/src/faults.rs.

use super::{note, Link, NotEnabled, Note, Sending, Step, World};
use crate::recipe::{ClientId, Ctx, Input, Recipe};
use crate::{Request, SessionState};
use serde::{Deserialize, Serialize};
use std::fmt;

/// The fault vocabulary. Each is bounded per run by its own budget and can be switched off.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FaultKind {
    /// The connection drops with a request sent but not yet applied.
    LossBeforeApply,
    /// The server applies a request, then the connection drops before the reply arrives.
    LossAfterApply,
    /// The connection drops; the client reconnects within the session timeout.
    Disconnect,
    /// The client is cut off past its session timeout: the server expires the session, and the
    /// client learns of it when it reconnects.
    Expire,
    /// The client process dies; its session lingers until the server expires it.
    Crash,
    /// The client process stops (a GC pause) and later resumes, acting on what it believed.
    Pause,
    /// A read is answered by a follower that lags behind the leader: it sees an older state,
    /// though never older than what its session has already seen (a new session, after an
    /// expiry, has seen nothing).
    LaggingRead,
    /// The follower the client is connected to falls behind the leader and stays behind until
    /// it catches up (`Step::CatchUp`, a fair step) or the connection drops: the read the step
    /// sends and every read after it on this connection see the state just before the latest
    /// write, though never older than what the session has seen (its own writes included). Struck
    /// at a step that reads first; the new handle after an expiry is one, and its first listing is
    /// what CURATOR-498 and CURATOR-696 see stale.
    LaggingSession,
    /// The lock's parent is a container (as Curator creates it) and the server's container
    /// manager deletes it once it has had children and has none left.
    ReapParent,
    /// The application stops waiting for the lock (a timeout, a cancelled task, an unlock
    /// while waiting): the recipe is handed `Input::Abandon`. Not a failure of ZooKeeper, but an
    /// event from outside the recipe, bounded like one; only recipes that can give up take it.
    GiveUp,
    /// An operator deletes a node behind the recipe's back (`zkCli delete`, as a runbook clears
    /// a lock it thinks is stuck): the oldest child of the lock node, whoever owns it. Its
    /// owner's session lives on and is told only through the watches it set.
    OperatorDelete,
}

impl FaultKind {
    /// How many kinds there are.
    pub const COUNT: usize = 11;

    pub const ALL: [FaultKind; FaultKind::COUNT] = [
        FaultKind::LossBeforeApply,
        FaultKind::LossAfterApply,
        FaultKind::Disconnect,
        FaultKind::Expire,
        FaultKind::Crash,
        FaultKind::Pause,
        FaultKind::LaggingRead,
        FaultKind::ReapParent,
        FaultKind::GiveUp,
        FaultKind::LaggingSession,
        FaultKind::OperatorDelete,
    ];

    /// Whether `--faults all` names this kind: every failure of ZooKeeper, the network, the
    /// client and its application, but not an operator's delete. Against that no lock keeps
    /// every holder's belief true (the holder learns of it only through a watch), so `all` with
    /// it would say "broken" of every recipe; it is asked for by name.
    pub fn in_all(self) -> bool {
        self != FaultKind::OperatorDelete
    }

    pub fn name(self) -> &'static str {
        match self {
            FaultKind::LossBeforeApply => "loss-before-apply",
            FaultKind::LossAfterApply => "loss-after-apply",
            FaultKind::Disconnect => "disconnect",
            FaultKind::Expire => "expire",
            FaultKind::Crash => "crash",
            FaultKind::Pause => "pause",
            FaultKind::LaggingRead => "lagging-read",
            FaultKind::ReapParent => "reap-parent",
            FaultKind::GiveUp => "give-up",
            FaultKind::LaggingSession => "lagging-session",
            FaultKind::OperatorDelete => "operator-delete",
        }
    }

    /// Connection loss and lagging reads strike the request a step sends (taken as
    /// `Step::Lossy`).
    pub fn strikes_a_request(self) -> bool {
        matches!(self.typed(), Fault::Request(_))
    }

    /// A lagging follower answers reads (a single read, or a whole connection's).
    pub fn lags(self) -> bool {
        matches!(self, FaultKind::LaggingRead | FaultKind::LaggingSession)
    }

    pub fn index(self) -> usize {
        FaultKind::ALL.iter().position(|k| *k == self).expect("listed")
    }

    pub fn parse(name: &str) -> Option<FaultKind> {
        FaultKind::ALL.into_iter().find(|k| k.name() == name)
    }
}

impl fmt::Display for FaultKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How many times each fault may happen in one run (0: never), in `FaultKind::ALL` order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct FaultBudget(pub [u32; FaultKind::COUNT]);

/// How many kinds the first traces listed; every budget lists at least these.
const FIRST_KINDS: usize = 8;

/// Written up to its last allowed kind, and at least the first kinds: a kind added later is
/// listed last, so a budget that does not allow it is written as before, and a trace stays
/// byte for byte what it was.
impl Serialize for FaultBudget {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let used = self.0.iter().rposition(|n| *n > 0).map_or(0, |last| last + 1);
        self.0[..used.max(FIRST_KINDS)].serialize(serializer)
    }
}

/// A budget written before a fault kind existed lists fewer kinds: the missing ones are 0, so
/// older traces still load.
impl<'de> Deserialize<'de> for FaultBudget {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let counts = Vec::<u32>::deserialize(deserializer)?;
        if counts.len() > FaultKind::COUNT {
            return Err(serde::de::Error::invalid_length(counts.len(), &"at most one count per fault kind"));
        }
        let mut budget = [0; FaultKind::COUNT];
        budget[..counts.len()].copy_from_slice(&counts);
        Ok(FaultBudget(budget))
    }
}

impl FaultBudget {
    pub fn none() -> Self {
        FaultBudget([0; FaultKind::COUNT])
    }
    /// Each of `kinds` once.
    pub fn once(kinds: &[FaultKind]) -> Self {
        let mut budget = FaultBudget::none();
        for kind in kinds {
            budget.0[kind.index()] = 1;
        }
        budget
    }
    pub fn get(&self, kind: FaultKind) -> u32 {
        self.0[kind.index()]
    }
    pub fn enabled(&self) -> Vec<FaultKind> {
        FaultKind::ALL.into_iter().filter(|k| self.get(*k) > 0).collect()
    }
}

/// A fault that strikes the request a client's step sends (`Step::Lossy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RequestFault {
    LossBeforeApply,
    LossAfterApply,
    LaggingRead,
    LaggingSession,
}

/// A fault that strikes a client: its connection, its process or its application
/// (`Step::Fault`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClientFault {
    Disconnect,
    Expire,
    Crash,
    Pause,
    GiveUp,
}

/// An event of the server's own, on no client's behalf (`Step::Server`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ServerEvent {
    ReapParent,
    OperatorDelete,
}

/// Which of the three a `FaultKind` is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    Request(RequestFault),
    Client(ClientFault),
    Server(ServerEvent),
}

impl FaultKind {
    /// What this kind of fault is, typed.
    pub fn typed(self) -> Fault {
        match self {
            FaultKind::LossBeforeApply => Fault::Request(RequestFault::LossBeforeApply),
            FaultKind::LossAfterApply => Fault::Request(RequestFault::LossAfterApply),
            FaultKind::LaggingRead => Fault::Request(RequestFault::LaggingRead),
            FaultKind::LaggingSession => Fault::Request(RequestFault::LaggingSession),
            FaultKind::Disconnect => Fault::Client(ClientFault::Disconnect),
            FaultKind::Expire => Fault::Client(ClientFault::Expire),
            FaultKind::Crash => Fault::Client(ClientFault::Crash),
            FaultKind::Pause => Fault::Client(ClientFault::Pause),
            FaultKind::GiveUp => Fault::Client(ClientFault::GiveUp),
            FaultKind::ReapParent => Fault::Server(ServerEvent::ReapParent),
            FaultKind::OperatorDelete => Fault::Server(ServerEvent::OperatorDelete),
        }
    }
}

impl RequestFault {
    pub const ALL: [RequestFault; 4] = [
        RequestFault::LossBeforeApply,
        RequestFault::LossAfterApply,
        RequestFault::LaggingRead,
        RequestFault::LaggingSession,
    ];

    pub fn kind(self) -> FaultKind {
        match self {
            RequestFault::LossBeforeApply => FaultKind::LossBeforeApply,
            RequestFault::LossAfterApply => FaultKind::LossAfterApply,
            RequestFault::LaggingRead => FaultKind::LaggingRead,
            RequestFault::LaggingSession => FaultKind::LaggingSession,
        }
    }
}

impl RequestFault {
    /// A lagging follower answers reads (a single read, or a whole connection's).
    pub fn lags(self) -> bool {
        matches!(self, RequestFault::LaggingRead | RequestFault::LaggingSession)
    }
}

impl ClientFault {
    pub const ALL: [ClientFault; 5] =
        [ClientFault::Disconnect, ClientFault::Expire, ClientFault::Crash, ClientFault::Pause, ClientFault::GiveUp];

    pub fn kind(self) -> FaultKind {
        match self {
            ClientFault::Disconnect => FaultKind::Disconnect,
            ClientFault::Expire => FaultKind::Expire,
            ClientFault::Crash => FaultKind::Crash,
            ClientFault::Pause => FaultKind::Pause,
            ClientFault::GiveUp => FaultKind::GiveUp,
        }
    }
}

impl ServerEvent {
    pub const ALL: [ServerEvent; 2] = [ServerEvent::ReapParent, ServerEvent::OperatorDelete];

    pub fn kind(self) -> FaultKind {
        match self {
            ServerEvent::ReapParent => FaultKind::ReapParent,
            ServerEvent::OperatorDelete => FaultKind::OperatorDelete,
        }
    }
}

impl fmt::Display for RequestFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.kind().name())
    }
}

impl fmt::Display for ClientFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.kind().name())
    }
}

impl fmt::Display for ServerEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.kind().name())
    }
}

impl<R: Recipe> World<R> {
    /// Every fault step enabled now, in the world's fixed order after the clients' own steps:
    /// by kind in `FaultKind::ALL` order, each over the clients (a server event once), given each
    /// client's steps (`World::client_steps`).
    pub(super) fn fault_steps_from(&self, clients: &[&super::ClientSteps], steps: &mut Vec<Step>) {
        for kind in FaultKind::ALL {
            // A fault whose budget is spent is enabled nowhere.
            if self.fault_spent(kind) {
                continue;
            }
            match kind.typed() {
                Fault::Server(event) => steps.extend(Some(Step::Server(event)).filter(|step| self.enabled(*step))),
                _ => {
                    for client in clients {
                        steps.extend(client.0.iter().filter(|step| step.fault_kind() == Some(kind)));
                    }
                }
            }
        }
    }

    /// Client `i`'s fault steps enabled now, by kind in `FaultKind::ALL` order.
    pub(super) fn client_fault_steps_into(&self, i: ClientId, steps: &mut Vec<Step>) {
        for kind in FaultKind::ALL {
            if self.fault_spent(kind) {
                continue;
            }
            let enabled = |step: &Step| self.enabled(*step);
            match kind.typed() {
                Fault::Request(fault) => {
                    steps.extend(Sending::ALL.map(|s| Step::Lossy(fault, s, i)).into_iter().filter(enabled))
                }
                Fault::Client(fault) => steps.extend(Some(Step::Fault(fault, i)).filter(enabled)),
                Fault::Server(_) => {}
            }
        }
    }

    /// Whether every `kind` fault the run's budget allows has happened.
    pub(crate) fn fault_spent(&self, kind: FaultKind) -> bool {
        self.faults_used[kind.index()] >= self.derived.config.faults.get(kind)
    }

    /// Whether `fault` may strike the request client `i`'s `sending` step sends now.
    pub(super) fn request_fault_enabled(&self, fault: RequestFault, sending: Sending, i: ClientId) -> bool {
        let Some(c) = self.clients.get(i as usize) else { return false };
        !self.fault_spent(fault.kind())
            && self.enabled(sending.step(i))
            && match fault {
                // A connection already on a lagging follower reads from it anyway.
                RequestFault::LaggingRead | RequestFault::LaggingSession => {
                    !c.lagging && self.would_read_lagging(i as usize, sending)
                }
                RequestFault::LossBeforeApply | RequestFault::LossAfterApply => self.would_send(i as usize, sending),
            }
    }

    /// Whether `fault` may strike client `i` now.
    pub(super) fn client_fault_enabled(&self, fault: ClientFault, i: ClientId) -> bool {
        let Some(c) = self.clients.get(i as usize) else { return false };
        !self.fault_spent(fault.kind())
            && !c.crashed
            && match fault {
                ClientFault::Disconnect => c.link == Link::Up,
                ClientFault::Expire => c.link != Link::Partitioned && self.server.is_alive(c.session),
                ClientFault::Crash => true,
                ClientFault::Pause => !c.paused,
                ClientFault::GiveUp => c.runs() && c.is_waiting() && c.recipe.can_abandon(),
            }
    }

    /// Whether the server may take `event` now.
    pub(super) fn server_event_enabled(&self, event: ServerEvent) -> bool {
        !self.fault_spent(event.kind())
            && match event {
                ServerEvent::ReapParent => self.server.reapable(&self.derived.config.lock_path),
                ServerEvent::OperatorDelete => self.server.oldest_child(&self.derived.config.lock_path).is_some(),
            }
    }

    /// Whether client `i`'s `sending` step would send a request on a live connection now.
    fn would_send(&self, i: usize, sending: Sending) -> bool {
        let c = &self.clients[i];
        if sending == Sending::Receive && c.inbound.front() == Some(&Input::State(SessionState::Expired)) {
            // Its requests go out on a new session: no request of the old one to lose.
            return false;
        }
        self.first_request(i, sending).is_some()
    }

    /// Whether client `i`'s `sending` step would send a read first, and a lagging follower has
    /// an older state to show its session.
    fn would_read_lagging(&self, i: usize, sending: Sending) -> bool {
        let c = &self.clients[i];
        if self.first_request(i, sending).is_none_or(|r| r.via_leader()) {
            return false;
        }
        let new_handle = sending == Sending::Receive && c.inbound.front() == Some(&Input::State(SessionState::Expired));
        match new_handle {
            // The new session has seen nothing: any state in the window will do.
            true => self.server.history_len() > 0,
            false => self.server.lag_view(c.session).is_some(),
        }
    }

    /// The first request client `i`'s `sending` step would send on a live connection now.
    fn first_request(&self, i: usize, sending: Sending) -> Option<Request> {
        let c = &self.clients[i];
        // Handling Expired opens a new session whose link is up: its requests go out at once.
        let new_handle = sending == Sending::Receive && c.inbound.front() == Some(&Input::State(SessionState::Expired));
        let input = match sending {
            Sending::Reconnect if self.server.is_alive(c.session) => return c.outbound.front().cloned(),
            Sending::Reconnect => return None,
            _ if c.link != Link::Up && !new_handle => return None,
            Sending::Acquire => Input::Acquire,
            Sending::Release => Input::Release,
            Sending::GiveUp => Input::Abandon,
            Sending::Receive => c.inbound.front()?.clone(),
        };
        let mut recipe = c.recipe.clone();
        let mut out = Vec::new();
        recipe.handle(&Ctx { client: i as ClientId, session: c.session }, input, &mut out);
        out.into_iter().next()
    }

    /// Arms `fault` on client `i` and takes its `sending` step, whose first request it strikes.
    pub(super) fn strike_request(
        &mut self,
        fault: RequestFault,
        sending: Sending,
        i: ClientId,
        log: &mut Option<Vec<Note>>,
    ) -> Result<(), NotEnabled> {
        self.faults_used[fault.kind().index()] += 1;
        self.clients[i as usize].armed = Some(fault);
        self.apply_logged(sending.step(i), log)?;
        debug_assert!(self.clients[i as usize].armed.is_none(), "the lossy step sent a request");
        Ok(())
    }

    /// A loss before apply, armed on client `i`, strikes `request` as it is sent: the
    /// connection drops and the request is never applied.
    pub(super) fn lose_before_apply(&mut self, i: usize, request: Request, log: &mut Option<Vec<Note>>) {
        note(log, || Note::Request { request: request.clone(), result: None });
        note(log, || Note::Client("!! connection drops before it is applied".to_string()));
        self.coverage.lost_before_apply = true;
        self.drop_link(i, Link::Down, Some(request));
    }

    /// Whether a lagging follower answers `request` from client `i`, `armed` being the fault
    /// armed on it: a lagging session's puts the connection behind from this request on, a
    /// lagging read's this request alone. If so, the session is attached to the follower's
    /// view, and the caller catches it up once the request is applied.
    pub(super) fn answered_lagging(
        &mut self,
        i: usize,
        armed: Option<RequestFault>,
        request: &Request,
        log: &mut Option<Vec<Note>>,
    ) -> bool {
        if armed == Some(RequestFault::LaggingSession) {
            note(log, || Note::Client("!! the follower this connection is on falls behind".to_string()));
            self.clients[i].lagging = true;
        }
        let lags = armed == Some(RequestFault::LaggingRead) || self.clients[i].lagging;
        // Each read attaches again: the follower stays one transaction behind the leader,
        // and a session that has seen a state (its own write's) is never shown an older one.
        let session = self.clients[i].session;
        let lagging = lags && !request.via_leader() && self.server.attach_lagging(session).is_some();
        if lagging {
            note(log, || Note::Client("!! a lagging follower answers the read".to_string()));
            // What `reached:lagging-read` asks for: the single lagging read, not a read of a
            // lagging session (whose own item is that its fault happened).
            self.coverage.lagged_read |= armed == Some(RequestFault::LaggingRead);
        }
        lagging
    }

    /// A loss after apply, armed on client `i`, strikes `request` once the server applied it:
    /// the connection drops and the reply is lost.
    pub(super) fn lose_after_apply(&mut self, i: usize, request: Request, log: &mut Option<Vec<Note>>) {
        note(log, || Note::Client("!! connection drops: the reply is lost".to_string()));
        self.coverage.lost_after_apply = true;
        self.drop_link(i, Link::Down, Some(request));
    }

    /// `fault` strikes client `i`.
    pub(super) fn strike_client(&mut self, fault: ClientFault, i: usize, log: &mut Option<Vec<Note>>) {
        self.faults_used[fault.kind().index()] += 1;
        match fault {
            ClientFault::Disconnect => {
                self.drop_link(i, Link::Down, None);
                note(log, || Note::Client("connection drops".to_string()));
            }
            ClientFault::Expire => {
                if self.clients[i].link == Link::Up {
                    self.drop_link(i, Link::Partitioned, None);
                } else {
                    self.clients[i].link = Link::Partitioned;
                }
                note(log, || Note::Client("partitioned past the session timeout".to_string()));
            }
            ClientFault::Crash => {
                let c = &mut self.clients[i];
                c.crashed = true;
                c.lagging = false;
                c.outbound.clear();
                c.inbound.clear();
                c.watches.clear();
                self.server.drop_watches(c.session);
                note(log, || Note::Client("process crashes".to_string()));
            }
            ClientFault::Pause => {
                self.clients[i].paused = true;
                note(log, || Note::Client("process pauses".to_string()));
            }
            ClientFault::GiveUp => {
                note(log, || Note::Client("the application stops waiting".to_string()));
                self.run_recipe(i, Input::Abandon, log);
            }
        }
    }

    /// The server takes `event`.
    pub(super) fn server_event(&mut self, event: ServerEvent, log: &mut Option<Vec<Note>>) {
        self.faults_used[event.kind().index()] += 1;
        match event {
            ServerEvent::ReapParent => {
                let lock = self.derived.config.lock_path.clone();
                note(log, || Note::Client(format!("the server reaps the empty container {lock}")));
                let notifications = self.server.reap_container(&lock);
                self.route(notifications, log);
            }
            ServerEvent::OperatorDelete => {
                let Some(node) = self.server.oldest_child(&self.derived.config.lock_path) else { return };
                note(log, || Note::Client(format!("an operator deletes {node}")));
                let notifications = self.server.operator_delete(&node);
                self.route(notifications, log);
            }
        }
    }
}
