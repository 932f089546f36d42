//! The client library half of the real driver: what a ZooKeeper client library does between
//! the wire and the recipe, done by the driver itself so that it knows exactly where each frame
//! falls. It keeps each session's requests in order, hands the recipe every reply and
//! notification in the order they arrived, tells it Disconnected, SyncConnected and Expired as
//! the Java client does, re-arms watches with SetWatches on reconnect (the Java client's
//! behaviour; kazoo's drops them), and drops a connection only where a fault says, behind a
//! barrier: a ping whose reply comes after every frame the server sent before it, or the
//! struck request's own reply.

use super::client::{Cut, CutKind, Flight};
use super::connection::{Arrival, Connection, Frame};
use super::driver::{Driver, Event};
use super::fault_ledger::{Phase, Strike};
use super::jute::{self, Reader, WireResponse};
use super::shadow::{Landing, Place, Sent, ShadowStep, Standing};
use std::collections::VecDeque;
use std::sync::mpsc::channel;
use std::time::{Duration, Instant};
use zklab_model::world::{Link, Sending};
use zklab_model::{
    ClientBehaviour, ClientId, Ctx, Input, Recipe, Request, RequestFault, SessionState, Step, WatchedEvent, ZkError,
    ZkResult,
};
use zklab_sim::{between, draw_loss};

impl<R: Recipe> Driver<'_, R> {
    /// Hands client `i`'s recipe `input` as step `sending`, striking the request it sends when
    /// a loss is armed or drawn, and sends what it asks for.
    pub(super) fn take(&mut self, i: usize, sending: Sending, input: Input) {
        let mut loss = self.clients[i].armed;
        if loss.is_none() && self.now_us() < self.config.chaos_us {
            loss = draw_loss(self.config, &mut self.fault_streams);
        }
        let can_lag = [self.can_lag(i, false), self.can_lag(i, true)];
        let c = &mut self.clients[i];
        let ctx = Ctx { client: i as ClientId, session: c.session };
        let expired = input == Input::State(SessionState::Expired);
        if input == Input::State(SessionState::Disconnected) {
            c.noticed_disconnect = true;
        }
        if expired {
            // As the model: what was queued on the dead handle dies with it.
            c.outbound.clear();
            c.inbound.clear();
            c.watches.clear();
        }
        let was = c.recipe.belief();
        let mode_was = c.recipe.mode();
        let mut out = Vec::new();
        let handed = matches!(sending, Sending::Receive).then(|| input.clone());
        c.recipe.handle(&ctx, input, &mut out);
        let belief = c.recipe.belief();
        // As the model: a step whose requests go out on a new session (after Expired) has no
        // request of the old one to lose.
        let sends_now = !out.is_empty() && c.link == Link::Up && c.cut.is_none() && !expired;
        let new_handle = expired && !out.is_empty();
        let loss = match loss {
            // A lagging follower answers a step that reads first, when it is behind a write the
            // session has not seen (a new handle has seen nothing).
            Some(kind) if kind.lags() => {
                let reads = out.first().is_some_and(|r| !r.via_leader());
                (reads && (sends_now || new_handle) && can_lag[usize::from(new_handle)]).then_some(kind)
            }
            other => other.filter(|_| sends_now),
        };
        if loss.is_some() {
            c.armed = None;
            self.metrics.faults += 1;
        }
        let done = c.rounds_left == 0;
        if let Some(kind) = loss {
            // Where its client was as it struck: the belief the step left it in.
            let strike = Strike::at(kind.kind(), i, self.now_us(), Phase::of_belief(belief, done));
            self.strikes.push(strike);
        }
        let step = match loss {
            Some(kind) => Step::Lossy(kind, sending, i as ClientId),
            None => sending.step(i as ClientId),
        };
        let mut entry = ShadowStep::new(self.now_us(), step, belief);
        entry.input = handed;
        let number = self.shadow.push(i, entry);
        if expired {
            self.new_session(i);
        }
        self.after_belief(i, was, mode_was);
        self.send(i, out, number, loss);
    }

    /// The recipe handled Expired: the application makes a new handle, a new session.
    pub(super) fn new_session(&mut self, i: usize) {
        self.left_follower(i, true);
        let c = &mut self.clients[i];
        if let Some(conn) = c.conn.take() {
            conn.drop_link();
        }
        c.generation += 1;
        let (server, generation) = (c.server, c.generation);
        match self.connect(i, server, (0, &[]), 0, generation) {
            Ok(conn) => {
                let session = self.session_of(conn.session);
                let c = &mut self.clients[i];
                c.session = session;
                c.closed = false;
                c.real_session = conn.session;
                c.password = conn.password.clone();
                c.conn = Some(conn);
                c.link = Link::Up;
                c.last_zxid = 0;
                c.last_sent = Instant::now();
            }
            Err(_) => self.clients[i].link = Link::Down,
        }
    }

    /// Sends the requests one step asked for (held while the connection is down), striking the
    /// first with `loss`.
    pub(super) fn send(&mut self, i: usize, out: Vec<Request>, entry: u64, loss: Option<RequestFault>) {
        if out.is_empty() {
            return;
        }
        let c = &mut self.clients[i];
        if c.link != Link::Up || c.conn.is_none() || c.cut.is_some() {
            c.outbound.extend(out);
            return;
        }
        if let Some(kind) = loss.filter(|k| k.lags()) {
            return self.move_to_follower(i, kind, entry, out);
        }
        self.metrics.requests += out.len() as u64;
        let mut out = VecDeque::from(out);
        // A step's requests sent in two goes (around a move) are numbered on from the first.
        let mut index = self.shadow.entry_mut(i, entry).map_or(0, |e| e.sent.len());
        while let Some(request) = out.pop_front() {
            let struck = if index == 0 { loss } else { None };
            if struck == Some(RequestFault::LossBeforeApply) {
                if let Some(e) = self.shadow.entry_mut(i, entry) {
                    e.sent.push(Sent { request: request.clone(), landing: Landing::Nowhere, result: None });
                }
                let lost = std::iter::once(request).chain(out).collect();
                self.begin_cut(i, CutKind::Drop, Some(entry), lost);
                return;
            }
            let floor = match request.is_write() {
                true => Place::read(self.seen_zxid),
                false => Place::read(self.clients[i].last_zxid),
            };
            let c = &mut self.clients[i];
            let chroot = self.target.chroot.clone();
            let sent = c.conn.as_mut().expect("up").send(|xid| jute::encode_request(xid, &request, &chroot));
            let Ok(xid) = sent else {
                // The socket failed under us: the reader reports it closed.
                c.outbound.push_back(request);
                c.outbound.extend(out);
                return;
            };
            c.last_sent = Instant::now();
            let what = format!("{} (xid {xid})", zklab_model::world::describe_request(&request));
            let now = self.now_us();
            self.wire.push(now, i, "sent", what);
            let c = &mut self.clients[i];
            let swallow = struck == Some(RequestFault::LossAfterApply);
            c.in_flight.push_back(Flight { xid, request: request.clone(), entry, index, swallow });
            if let Some(e) = self.shadow.entry_mut(i, entry) {
                e.sent.push(Sent { request, landing: Landing::InFlight { floor }, result: None });
            }
            if swallow {
                // The rest of the step's requests die with the connection.
                let c = &mut self.clients[i];
                c.cut = Some(Cut { why: CutKind::Drop, entry: None, lost: out.into_iter().collect() });
                return;
            }
            index += 1;
        }
    }

    /// Starts dropping client `i`'s connection: a ping bars it, and it drops when the ping's
    /// reply arrives (every frame the server sent before is read by then).
    pub(super) fn begin_cut(&mut self, i: usize, why: CutKind, entry: Option<u64>, lost: Vec<Request>) {
        let floor = Place::read(self.clients[i].last_zxid);
        if let Some(e) = entry.and_then(|n| self.shadow.entry_mut(i, n)) {
            e.barrier = Some(Landing::InFlight { floor });
        }
        let now = self.now_us();
        self.wire.push(now, i, "sent", format!("ping: the barrier before a cut ({why:?})"));
        let c = &mut self.clients[i];
        c.cut = Some(Cut { why, entry, lost });
        let pinged = c
            .conn
            .as_mut()
            .is_some_and(|conn| conn.send_bare(jute::bare_request(jute::PING_XID, jute::op::PING)).is_ok());
        if pinged {
            c.pings += 1;
        } else {
            self.finish_cut(i, None);
        }
    }

    /// The connection drops, after the frame at `place` (its barrier).
    pub(super) fn finish_cut(&mut self, i: usize, place: Option<Place>) {
        let Some(cut) = self.clients[i].cut.take() else { return };
        let now = self.now_us();
        self.wire.push(now, i, "connection", format!("dropped by the driver ({:?})", cut.why));
        if let (Some(n), Some(place)) = (cut.entry, place) {
            if let Some(e) = self.shadow.entry_mut(i, n) {
                // A move is no step of the model's: the requests it carries place the step.
                e.barrier = Some(match cut.why {
                    CutKind::Move { .. } => Landing::Nowhere,
                    _ => Landing::At(place),
                });
            }
        }
        let behaviour = self.behaviour;
        let c = &mut self.clients[i];
        if let Some(conn) = c.conn.take() {
            conn.drop_link();
        }
        c.generation += 1;
        // A barrier's ping says nothing of what the session has seen (the Java client keeps
        // its last zxid from replies only): a session may move to a follower behind it.
        c.pings = 0;
        c.catching_up = false;
        if let CutKind::Move { to } = cut.why {
            return self.finish_move(i, to, cut.entry, cut.lost);
        }
        self.left_follower(i, true);
        if matches!(cut.why, CutKind::Partition | CutKind::Crash) {
            self.hold_session(i);
        }
        let c = &mut self.clients[i];
        if cut.why == CutKind::Crash {
            c.crashed = true;
            c.in_flight.clear();
            c.outbound.clear();
            c.inbound.clear();
            c.watches.clear();
            return;
        }
        if behaviour == ClientBehaviour::Kazoo {
            c.watches.clear();
        }
        let lost: Vec<Request> =
            c.in_flight.drain(..).map(|f| f.request).chain(cut.lost).chain(c.outbound.drain(..)).collect();
        for request in lost {
            c.inbound.push_back(Input::Reply { request, result: Err(ZkError::ConnectionLoss) });
        }
        c.inbound.push_back(Input::State(SessionState::Disconnected));
        c.noticed_disconnect = false;
        c.link = match cut.why {
            CutKind::Partition => Link::Partitioned,
            _ => Link::Down,
        };
        if c.link == Link::Down && !c.reconnecting {
            c.reconnecting = true;
            let back = between(&mut self.streams.network, self.config.link(i).max_us, self.timing.ping_interval());
            self.push(self.now_us() + back.min(200_000), Event::Reconnect(i as ClientId));
        }
        self.deliver(i);
    }

    /// Hands client `i`'s recipe what has arrived, in order, unless its connection is being
    /// barred (what arrives meanwhile came before the drop, and is handed after it).
    pub(super) fn deliver(&mut self, i: usize) {
        // Steered, what arrived is handed when a step says so.
        while self.target.script.is_none()
            && self.clients[i].cut.is_none()
            && !self.clients[i].crashed
            && !self.clients[i].paused
        {
            let Some(input) = self.clients[i].inbound.pop_front() else { return };
            if matches!(input, Input::Watch(_)) {
                self.metrics.notifications += 1;
            }
            self.take(i, Sending::Receive, input);
        }
    }

    pub(super) fn arrived(&mut self, arrival: Arrival) {
        let i = arrival.client;
        if i >= self.clients.len() || self.clients[i].generation != arrival.generation {
            return;
        }
        let heard = match &arrival.frame {
            // A keep-alive's answer says nothing; a barrier's is logged as it finishes the cut.
            Frame::Reply { xid: jute::PING_XID, zxid, .. } if self.clients[i].cut.is_some() => {
                Some(format!("ping reply zxid {zxid:#x}"))
            }
            Frame::Reply { xid: jute::PING_XID, .. } => None,
            Frame::Reply { xid, zxid, err, .. } => Some(format!("reply xid {xid} zxid {zxid:#x} err {err}")),
            Frame::Notification { .. } => Some("notification".to_string()),
            Frame::Closed => Some("closed".to_string()),
        };
        if let Some(what) = heard {
            let now = self.now_us();
            self.wire.push(now, i, "received", what);
        }
        match arrival.frame {
            Frame::Reply { xid: jute::PING_XID, zxid, .. } => {
                let c = &mut self.clients[i];
                c.pings = c.pings.saturating_sub(1);
                if c.pings == 0 && c.cut.is_some() {
                    self.finish_cut(i, Some(Place::read(zxid)));
                }
            }
            Frame::Reply { xid: jute::SET_WATCHES_XID, zxid, .. } => {
                let c = &mut self.clients[i];
                c.catching_up = false;
                if let Some(n) = c.reconnected_entry.take() {
                    if let Some(e) = self.shadow.entry_mut(i, n) {
                        e.barrier = Some(Landing::At(Place::read(zxid)));
                    }
                }
                self.deliver(i);
            }
            Frame::Reply { xid, zxid, err, body } => self.replied(i, xid, zxid, err, &body),
            Frame::Notification { body } => {
                let chroot = self.target.chroot.clone();
                let Ok(Some((kind, path))) = jute::decode_notification(&mut Reader::new(&body), &chroot) else {
                    return;
                };
                let event = WatchedEvent { kind, path };
                let c = &mut self.clients[i];
                let found = c.watches.on_event(&event);
                // A reconnect's catch-up events go only to watches the library still holds.
                if found || !c.catching_up {
                    c.inbound.push_back(Input::Watch(event));
                }
                self.deliver(i);
            }
            Frame::Closed => {
                let c = &self.clients[i];
                if c.conn.is_some() && !c.crashed {
                    self.shadow_diverges(
                        i,
                        Step::Receive(i as ClientId),
                        "the server closed the connection, which no planned fault did".to_string(),
                    );
                }
            }
        }
    }

    pub(super) fn shadow_diverges(&mut self, i: usize, step: Step, why: String) {
        if self.shadow.standing == Standing::Agrees {
            self.shadow.standing = Standing::Diverged { client: i as ClientId, step, at_us: self.now_us(), why };
        }
    }

    pub(super) fn replied(&mut self, i: usize, xid: i32, zxid: i64, err: i32, body: &[u8]) {
        self.seen_zxid = self.seen_zxid.max(zxid);
        let c = &mut self.clients[i];
        c.last_zxid = c.last_zxid.max(zxid);
        let Some(flight) = c.in_flight.pop_front() else {
            return self.shadow_diverges(i, Step::Receive(i as ClientId), format!("a reply (xid {xid}) to no request"));
        };
        if flight.xid != xid {
            return self.shadow_diverges(
                i,
                Step::Receive(i as ClientId),
                format!("the reply to xid {xid} came before the one to {}", flight.xid),
            );
        }
        let chroot = self.target.chroot.clone();
        let wire = match jute::decode_result(&flight.request, err, &mut Reader::new(body), &chroot) {
            Ok(wire) => wire,
            Err(e) => return self.shadow_diverges(i, Step::Receive(i as ClientId), e.to_string()),
        };
        let result = self.as_recipe_sees(&wire);
        let place = match (flight.request.is_write(), self.lagging.filter(|_| self.clients[i].on_follower)) {
            (true, _) => Place::write(zxid),
            // A sync is answered once the follower has caught up: it reads the newest state.
            (false, _) if matches!(flight.request, Request::Sync { .. }) => Place::read(zxid),
            // The follower answers from the state before the newest write: in the leader's
            // order, the read comes after that write (as the model's lagging read does).
            (false, Some(lagging)) => Place::read(lagging.read_place(zxid)),
            (false, None) => Place::read(zxid),
        };
        if let Some(e) = self.shadow.entry_mut(i, flight.entry) {
            if let Some(sent) = e.sent.get_mut(flight.index) {
                sent.landing = Landing::At(place);
                sent.result = Some(result.clone());
            }
        }
        let c = &mut self.clients[i];
        if flight.swallow {
            let lost = c.cut.as_mut().map(|cut| std::mem::take(&mut cut.lost)).unwrap_or_default();
            c.cut = Some(Cut {
                why: CutKind::Drop,
                entry: None,
                lost: std::iter::once(flight.request).chain(lost).collect(),
            });
            return self.finish_cut(i, Some(place));
        }
        c.watches.on_reply(&flight.request, &result);
        c.inbound.push_back(Input::Reply { request: flight.request, result });
        if c.lag == Some(RequestFault::LaggingRead) && c.in_flight.is_empty() {
            // One read only: the session goes back before anything else.
            self.back_from_follower(i);
        }
        self.deliver(i);
    }

    /// A real result as the recipe sees it: real zxids, sessions by the driver's numbers.
    pub(super) fn as_recipe_sees(&mut self, wire: &Result<WireResponse, ZkError>) -> ZkResult {
        let mut owners: Vec<i64> = Vec::new();
        if let Ok(w) = wire {
            owners.extend(w.stats().into_iter().map(|s| s.ephemeral_owner).filter(|o| *o != 0));
        }
        for o in owners {
            self.session_of(o);
        }
        let sessions = &self.sessions;
        wire.clone().map(|w| w.to_model(&mut |z| z, &mut |s| sessions[&s]))
    }

    /// Holds client `i`'s session open from a second connection while the client is cut off
    /// (see `RealClient::keeper`).
    pub(super) fn hold_session(&mut self, i: usize) {
        let c = &mut self.clients[i];
        if c.keeper.is_some() || c.closed {
            return;
        }
        let (tx, rx) = channel();
        let server = &self.target.servers[c.server];
        let timeout = self.config.world.session_timeout_ms;
        if let Ok(keeper) = Connection::open(server, (c.real_session, &c.password), 0, timeout, (tx, usize::MAX, 0)) {
            c.keeper = Some((keeper, rx));
        }
    }

    /// The library reconnects client `i` to its session: SyncConnected, its watches re-armed
    /// (catch-up events for what it missed), its held requests sent; or Expired.
    pub(super) fn reconnect(&mut self, i: usize) {
        let c = &mut self.clients[i];
        c.reconnecting = false;
        if c.link != Link::Down || c.crashed {
            return;
        }
        if c.paused && self.target.script.is_none() {
            // The library tries again once the process runs.
            c.reconnecting = true;
            self.push(self.now_us() + self.timing.tick, Event::Reconnect(i as ClientId));
            return;
        }
        c.generation += 1;
        let (server, session, password, last, generation) =
            (c.server, c.real_session, c.password.clone(), c.last_zxid, c.generation);
        let conn = match self.connect(i, server, (session, &password), last, generation) {
            Ok(conn) => conn,
            Err(_) => {
                self.clients[i].reconnecting = true;
                self.push(self.now_us() + 100_000, Event::Reconnect(i as ClientId));
                return;
            }
        };
        let now = self.now_us();
        let c = &mut self.clients[i];
        if conn.timeout_ms == 0 {
            self.shadow.push(i, ShadowStep::new(now, Step::Reconnect(i as ClientId), c.recipe.belief()));
            for request in c.outbound.drain(..) {
                c.inbound.push_back(Input::Reply { request, result: Err(ZkError::SessionExpired) });
            }
            c.watches.clear();
            c.inbound.push_back(Input::State(SessionState::Expired));
            c.link = Link::Partitioned;
            return self.deliver(i);
        }
        c.conn = Some(conn);
        c.link = Link::Up;
        c.last_sent = Instant::now();
        c.inbound.push_back(Input::State(SessionState::SyncConnected));
        let mut loss = c.armed.filter(|_| !c.outbound.is_empty());
        if loss.is_none() && !c.outbound.is_empty() && now < self.config.chaos_us {
            loss = draw_loss(self.config, &mut self.fault_streams);
        }
        // As in `take`: a lagging follower answers only a first request that reads, and only a
        // session that has not seen the write it is held behind.
        let reads = self.clients[i].outbound.front().is_some_and(|r| !r.via_leader());
        let loss = loss.filter(|k| !k.lags() || (reads && self.can_lag(i, false)));
        let c = &mut self.clients[i];
        if loss.is_some() {
            c.armed = None;
            self.metrics.faults += 1;
        }
        if let Some(kind) = loss {
            let phase = Phase::of_belief(c.recipe.belief(), c.rounds_left == 0);
            self.strikes.push(Strike::at(kind.kind(), i, now, phase));
        }
        let c = &mut self.clients[i];
        let step = match loss {
            Some(kind) => Step::Lossy(kind, Sending::Reconnect, i as ClientId),
            None => Step::Reconnect(i as ClientId),
        };
        let number = self.shadow.push(i, ShadowStep::new(now, step, c.recipe.belief()));
        let c = &mut self.clients[i];
        if self.behaviour == ClientBehaviour::Java {
            let (data, exist, child) = c.watched();
            let payload = jute::set_watches(last, &data, &exist, &child, &self.target.chroot);
            if c.conn.as_mut().expect("just connected").send_bare(payload).is_ok() {
                c.catching_up = true;
                c.reconnected_entry = Some(number);
                if let Some(e) = self.shadow.entry_mut(i, number) {
                    e.barrier = Some(Landing::InFlight { floor: Place::read(last) });
                }
            }
        }
        let c = &mut self.clients[i];
        let out: Vec<Request> = c.outbound.drain(..).collect();
        self.send(i, out, number, loss);
        self.deliver(i);
    }

    /// Pings client `i`'s live connection now; whether it could.
    pub(super) fn ping(&mut self, i: usize) -> bool {
        let c = &mut self.clients[i];
        let Some(conn) = c.conn.as_mut().filter(|_| c.cut.is_none()) else { return false };
        let sent = conn.send_bare(jute::bare_request(jute::PING_XID, jute::op::PING)).is_ok();
        if sent {
            c.pings += 1;
            c.last_sent = Instant::now();
        }
        sent
    }

    /// Pings every connection that has been quiet for a third of its session timeout.
    pub(super) fn keep_alive(&mut self) {
        let quiet = Duration::from_micros(self.timing.ping_interval());
        for c in &mut self.clients {
            if let Some((keeper, rx)) = c.keeper.as_mut() {
                while rx.try_recv().is_ok() {}
                if keeper.idle_for() >= quiet {
                    let _ = keeper.send_bare(jute::bare_request(jute::PING_XID, jute::op::PING));
                }
            }
            let Some(conn) = c.conn.as_mut().filter(|_| !c.paused) else { continue };
            if c.cut.is_none()
                && c.last_sent.elapsed() >= quiet
                && conn.send_bare(jute::bare_request(jute::PING_XID, jute::op::PING)).is_ok()
            {
                c.pings += 1;
                c.last_sent = Instant::now();
            }
        }
    }
}
