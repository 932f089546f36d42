//! The scheduler's view of the served model: every request a client sent waits here until the
//! schedule has the server apply it, and every frame the server sends waits until the schedule
//! hands it to its client. Nothing reaches a client, and nothing reaches the model, unless a
//! `Choice` says so. Without I/O: `wiring` moves the bytes.
//!
//! Clients are known by their index (each has a port of its own, so a reconnection is known to
//! be the same client's), which keeps a schedule meaningful when it is run again. What is not a
//! choice: a connection's handshake (a new or resumed session is answered at once) and pings
//! (answered at once, so no client times out by itself: session time is the schedule's).

use crate::serve::codec::{self, ToClient};
use crate::serve::{Conn, Effect, Served};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use zklab_model::server::ServerConfig;
use zklab_model::SessionId;

/// One thing the schedule can make happen next.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "do", content = "client")]
pub enum Choice {
    /// The server applies client's oldest request.
    Apply(usize),
    /// Client is handed the oldest frame the server sent it.
    Deliver(usize),
    /// Client's oldest request is lost with its connection, before the server applies it.
    LossBeforeApply(usize),
    /// The server applies client's oldest request, and the connection goes before the reply.
    LossAfterApply(usize),
    /// The server expires client's session.
    Expire(usize),
    /// Client's connection drops, its session living on: what it had sent and not had applied,
    /// and what it had not been handed, is lost with it. Enabled whenever its connection is
    /// established, with something in flight or not (a waiter on its watch, a holder between
    /// two requests); it reconnects in the same session and re-arms its watches.
    Disconnect(usize),
    /// The server answers client's connection handshake (a new session, a resumed one, or the
    /// news that it is gone). A client reconnects after a back-off of its own; the handshake
    /// waits here, so that what the others do meanwhile is the schedule's choice.
    Connect(usize),
}

impl Choice {
    pub fn client(self) -> usize {
        match self {
            Choice::Apply(c)
            | Choice::Deliver(c)
            | Choice::LossBeforeApply(c)
            | Choice::LossAfterApply(c)
            | Choice::Expire(c)
            | Choice::Disconnect(c)
            | Choice::Connect(c) => c,
        }
    }

    pub fn is_fault(self) -> bool {
        !matches!(self, Choice::Apply(_) | Choice::Deliver(_) | Choice::Connect(_))
    }

    /// Whether a schedule that may use `faults` may take this choice.
    pub fn allowed_by(self, faults: Faults) -> bool {
        match self {
            Choice::Apply(_) | Choice::Deliver(_) | Choice::Connect(_) => true,
            Choice::LossBeforeApply(_) => faults.loss_before_apply,
            Choice::LossAfterApply(_) => faults.loss_after_apply,
            Choice::Expire(_) => faults.expire,
            Choice::Disconnect(_) => faults.disconnect,
        }
    }
}

/// The fault kinds a schedule may use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Faults {
    pub loss_before_apply: bool,
    pub loss_after_apply: bool,
    pub expire: bool,
    /// Written only when allowed, so a schedule saved before the kind existed reads and writes
    /// as it did.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub disconnect: bool,
}

/// What the wiring must do to a client's connection now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Wire {
    /// Write this frame to the client's current connection.
    Write(usize, Vec<u8>),
    /// Close the client's connection `conn`.
    Close(usize, Conn),
}

/// The held frames, both ways, of every client.
pub struct Switchboard {
    served: Served,
    clients: usize,
    /// Each client's current connection.
    current: Vec<Option<Conn>>,
    /// Requests each client sent that the server has not applied, oldest first.
    inbound: Vec<VecDeque<Vec<u8>>>,
    /// Frames the server sent each client that it has not been handed, oldest first.
    outbound: Vec<VecDeque<ToClient>>,
    /// The session each client's connection carries, once its handshake is done.
    sessions: Vec<Option<SessionId>>,
    /// Each client's handshake waiting for an answer.
    handshakes: Vec<Option<Vec<u8>>>,
    /// Every session a handshake opened: the client's, and which of its sessions it is.
    owners: std::collections::BTreeMap<SessionId, (usize, u32)>,
}

impl Switchboard {
    pub fn new(clients: usize, config: ServerConfig) -> Self {
        Switchboard {
            served: Served::new(config),
            clients,
            current: vec![None; clients],
            inbound: vec![VecDeque::new(); clients],
            outbound: vec![VecDeque::new(); clients],
            sessions: vec![None; clients],
            handshakes: vec![None; clients],
            owners: Default::default(),
        }
    }

    pub fn served(&self) -> &Served {
        &self.served
    }

    /// Makes persistent node `path` before any client connects (see `Served::make_node`).
    pub fn make_node(&mut self, path: &str) -> Result<(), zklab_model::ZkError> {
        self.served.make_node(path)
    }

    /// Client opened connection `conn` (on its own port): its earlier one, if any, is over.
    pub fn accepted(&mut self, client: usize, conn: Conn) -> Vec<Wire> {
        let mut wires = Vec::new();
        if let Some(old) = self.current[client] {
            wires.extend(self.cut(client, old));
        }
        self.current[client] = Some(conn);
        self.served.accepted(conn);
        wires
    }

    /// A frame from client's connection `conn`: a ping is answered at once; a handshake and
    /// anything else waits for the schedule.
    pub fn received(&mut self, client: usize, conn: Conn, payload: Vec<u8>) -> Vec<Wire> {
        if self.current[client] != Some(conn) {
            return Vec::new();
        }
        if self.served.session_of(conn).is_none() {
            self.handshakes[client] = Some(payload);
            return Vec::new();
        }
        if is_ping(&payload) {
            let effects = self.served.receive(conn, &payload);
            return self.route(effects, true);
        }
        self.inbound[client].push_back(payload);
        Vec::new()
    }

    /// Client's connection `conn` went (the client closed it, or its process died).
    pub fn gone(&mut self, client: usize, conn: Conn) {
        if self.current[client] == Some(conn) {
            self.current[client] = None;
            self.handshakes[client] = None;
            self.inbound[client].clear();
            self.outbound[client].clear();
        }
        self.served.disconnected(conn);
    }

    /// The choices enabled now, faults among them as `faults` allows, in a fixed order.
    pub fn enabled(&self, faults: Faults) -> Vec<Choice> {
        let mut out = Vec::new();
        for c in 0..self.clients {
            if self.handshakes[c].is_some() {
                out.push(Choice::Connect(c));
            }
            if !self.inbound[c].is_empty() {
                out.push(Choice::Apply(c));
                if faults.loss_before_apply {
                    out.push(Choice::LossBeforeApply(c));
                }
                if faults.loss_after_apply {
                    out.push(Choice::LossAfterApply(c));
                }
            }
            if !self.outbound[c].is_empty() {
                out.push(Choice::Deliver(c));
            }
            if faults.expire && self.sessions[c].is_some_and(|s| self.served.server().is_alive(s)) {
                out.push(Choice::Expire(c));
            }
            if faults.disconnect && self.established(c) {
                out.push(Choice::Disconnect(c));
            }
        }
        out
    }

    /// Whether client has a connection whose handshake is done, or waits to be answered: it is
    /// not away, reconnecting on a timer of its own.
    pub fn reached(&self, client: usize) -> bool {
        self.handshakes[client].is_some()
            || self.current[client].is_some_and(|conn| self.served.session_of(conn).is_some())
    }

    /// Whether client's handshake waits for an answer.
    pub fn handshaking(&self, client: usize) -> bool {
        self.handshakes[client].is_some()
    }

    /// Whether client's current connection carries a live session (its handshake answered).
    fn established(&self, client: usize) -> bool {
        self.current[client]
            .and_then(|conn| self.served.session_of(conn))
            .is_some_and(|s| self.served.server().is_alive(s))
    }

    /// The client whose handshake opened `session`, and which of its sessions it is (0 for
    /// its first).
    pub fn owner_of(&self, session: SessionId) -> Option<(usize, u32)> {
        self.owners.get(&session).copied()
    }

    /// Client's oldest request, not yet applied.
    pub fn held_request(&self, client: usize) -> Option<&[u8]> {
        self.inbound.get(client)?.front().map(Vec::as_slice)
    }

    /// The oldest frame the server sent client, not yet handed over.
    pub fn held_frame(&self, client: usize) -> Option<&ToClient> {
        self.outbound.get(client)?.front()
    }

    /// Every frame the server sent client that it has not been handed, oldest first.
    pub fn held_frames(&self, client: usize) -> impl Iterator<Item = &ToClient> {
        self.outbound.get(client).into_iter().flatten()
    }

    /// Whether anything is held: a request not applied or a frame not handed over.
    pub fn in_flight(&self) -> bool {
        self.inbound.iter().any(|q| !q.is_empty()) || self.outbound.iter().any(|q| !q.is_empty())
    }

    /// Makes `choice` happen; `None` if it is not enabled now.
    pub fn take(&mut self, choice: Choice) -> Option<Vec<Wire>> {
        let c = choice.client();
        if c >= self.clients {
            return None;
        }
        match choice {
            Choice::Apply(_) => {
                let payload = self.inbound[c].pop_front()?;
                let conn = self.current[c]?;
                let effects = self.served.receive(conn, &payload);
                Some(self.route(effects, false))
            }
            Choice::Deliver(_) => {
                let message = self.outbound[c].pop_front()?;
                Some(vec![Wire::Write(c, codec::encode(&message))])
            }
            Choice::LossBeforeApply(_) => {
                self.inbound[c].pop_front()?;
                let conn = self.current[c]?;
                Some(self.cut(c, conn))
            }
            Choice::LossAfterApply(_) => {
                let payload = self.inbound[c].pop_front()?;
                let conn = self.current[c]?;
                let effects = self.served.receive(conn, &payload);
                let mut wires = self.route(effects, false);
                wires.extend(self.cut(c, conn));
                Some(wires)
            }
            Choice::Expire(_) => {
                let session = self.sessions[c].filter(|s| self.served.server().is_alive(*s))?;
                let effects = self.served.expire(session);
                Some(self.route(effects, false))
            }
            Choice::Disconnect(_) => {
                if !self.established(c) {
                    return None;
                }
                let conn = self.current[c]?;
                Some(self.cut(c, conn))
            }
            Choice::Connect(_) => {
                let payload = self.handshakes[c].take()?;
                let conn = self.current[c]?;
                let effects = self.served.receive(conn, &payload);
                if let Some(session) = self.served.session_of(conn) {
                    if !self.owners.contains_key(&session) {
                        let k = self.owners.values().filter(|(client, _)| *client == c).count() as u32;
                        self.owners.insert(session, (c, k));
                    }
                    self.sessions[c] = Some(session);
                }
                Some(self.route(effects, true))
            }
        }
    }

    /// Client's connection `conn` is cut: what it had sent and not had applied, and what it
    /// had not been handed, is lost with it.
    fn cut(&mut self, client: usize, conn: Conn) -> Vec<Wire> {
        self.gone(client, conn);
        vec![Wire::Close(client, conn)]
    }

    /// The model's effects: frames queued for their client (or written at once, for a
    /// handshake or a ping), connections closed.
    fn route(&mut self, effects: Vec<Effect>, at_once: bool) -> Vec<Wire> {
        let mut wires = Vec::new();
        for effect in effects {
            match effect {
                Effect::Send(conn, message) => {
                    let Some(c) = self.client_of(conn) else { continue };
                    if at_once {
                        wires.push(Wire::Write(c, codec::encode(&message)));
                    } else {
                        self.outbound[c].push_back(message);
                    }
                }
                Effect::Close(conn) => {
                    if let Some(c) = self.client_of(conn) {
                        // What the server sent before the close still reaches the client first.
                        for message in std::mem::take(&mut self.outbound[c]) {
                            wires.push(Wire::Write(c, codec::encode(&message)));
                        }
                        wires.extend(self.cut(c, conn));
                    }
                }
            }
        }
        wires
    }

    fn client_of(&self, conn: Conn) -> Option<usize> {
        self.current.iter().position(|c| *c == Some(conn))
    }
}

/// A ping: header xid -2, op 11.
pub fn is_ping(payload: &[u8]) -> bool {
    payload.len() >= 8 && payload[0..4] == (-2i32).to_be_bytes() && payload[4..8] == 11i32.to_be_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::jute;
    use zklab_model::{CreateMode, Request};

    /// A board with `n` clients, each connected (conn = client + 1) with a session.
    fn board(n: usize) -> Switchboard {
        let mut b = Switchboard::new(n, ServerConfig::default());
        for c in 0..n {
            let conn = c as Conn + 1;
            assert!(b.accepted(c, conn).is_empty());
            let connect = jute::connect_request(0, 4000, 0, &[]).frame();
            assert!(b.received(c, conn, connect[4..].to_vec()).is_empty(), "the handshake waits");
            assert_eq!(b.enabled(Faults::default()), vec![Choice::Connect(c)]);
            let wires = b.take(Choice::Connect(c)).unwrap();
            assert!(matches!(wires.as_slice(), [Wire::Write(w, _)] if *w == c), "then it is answered");
        }
        b
    }

    fn send(b: &mut Switchboard, c: usize, xid: i32, request: &Request) {
        let frame = jute::encode_request(xid, request, "").frame();
        assert!(b.received(c, c as Conn + 1, frame[4..].to_vec()).is_empty(), "a request waits for the schedule");
    }

    #[test]
    fn a_request_waits_for_apply_and_its_reply_for_deliver() {
        let mut b = board(2);
        assert!(b.enabled(Faults::default()).is_empty() && !b.in_flight());
        send(&mut b, 1, 1, &Request::create("/a", CreateMode::Persistent));
        assert_eq!(b.enabled(Faults::default()), vec![Choice::Apply(1)]);
        assert!(b.take(Choice::Deliver(1)).is_none(), "nothing to deliver yet");
        assert!(b.take(Choice::Apply(1)).unwrap().is_empty(), "the reply is held");
        assert!(b.served().server().tree().get("/a").is_some(), "the server applied it");
        assert_eq!(b.enabled(Faults::default()), vec![Choice::Deliver(1)]);
        assert!(matches!(b.take(Choice::Deliver(1)).unwrap().as_slice(), [Wire::Write(1, _)]));
        assert!(!b.in_flight());
    }

    #[test]
    fn a_loss_before_apply_changes_nothing_and_one_after_apply_loses_only_the_reply() {
        let all = Faults { loss_before_apply: true, loss_after_apply: true, expire: true, disconnect: false };
        let mut b = board(1);
        send(&mut b, 0, 1, &Request::create("/a", CreateMode::Persistent));
        assert_eq!(
            b.enabled(all),
            vec![Choice::Apply(0), Choice::LossBeforeApply(0), Choice::LossAfterApply(0), Choice::Expire(0)]
        );
        assert_eq!(b.take(Choice::LossBeforeApply(0)).unwrap(), vec![Wire::Close(0, 1)]);
        assert!(b.served().server().tree().get("/a").is_none() && !b.in_flight());

        let mut b = board(1);
        send(&mut b, 0, 1, &Request::create("/a", CreateMode::Persistent));
        assert_eq!(b.take(Choice::LossAfterApply(0)).unwrap(), vec![Wire::Close(0, 1)], "no reply reaches the client");
        assert!(b.served().server().tree().get("/a").is_some(), "but the server applied it");
        assert!(!b.in_flight() && !b.reached(0));
    }

    #[test]
    fn an_expiry_closes_the_holders_connection_and_wakes_the_watcher() {
        let mut b = board(2);
        send(&mut b, 0, 1, &Request::create("/e", CreateMode::Ephemeral));
        b.take(Choice::Apply(0)).unwrap();
        b.take(Choice::Deliver(0)).unwrap();
        send(&mut b, 1, 1, &Request::exists("/e", true));
        b.take(Choice::Apply(1)).unwrap();
        b.take(Choice::Deliver(1)).unwrap();
        let wires = b.take(Choice::Expire(0)).unwrap();
        assert_eq!(wires, vec![Wire::Close(0, 1)]);
        assert_eq!(
            b.enabled(Faults::default()),
            vec![Choice::Deliver(1)],
            "client 1's NodeDeleted waits to be handed over"
        );
        assert!(b.take(Choice::Expire(0)).is_none(), "an expired session cannot expire again");
    }

    #[test]
    fn a_disconnect_drops_the_connection_and_what_it_held_but_not_the_session() {
        let disconnect = Faults { disconnect: true, ..Faults::default() };
        let mut b = board(2);
        assert_eq!(b.enabled(disconnect), vec![Choice::Disconnect(0), Choice::Disconnect(1)], "nothing in flight");
        assert!(b.enabled(Faults::default()).is_empty(), "not unless allowed");
        send(&mut b, 0, 1, &Request::create("/e", CreateMode::Ephemeral));
        b.take(Choice::Apply(0)).unwrap();
        send(&mut b, 0, 2, &Request::create("/f", CreateMode::Persistent));
        let session = b.served().session_of(1).unwrap();
        assert_eq!(b.take(Choice::Disconnect(0)).unwrap(), vec![Wire::Close(0, 1)]);
        assert!(!b.in_flight(), "the held reply and the held request are lost with it");
        assert!(b.served().server().tree().get("/f").is_none(), "the held request was never applied");
        assert!(b.served().server().is_alive(session), "the session lives on");
        assert!(b.served().server().tree().get("/e").is_some(), "and so does its ephemeral node");
        assert!(!b.reached(0) && b.take(Choice::Disconnect(0)).is_none(), "no connection left to drop");
        assert_eq!(b.enabled(disconnect), vec![Choice::Disconnect(1)]);
    }

    #[test]
    fn a_ping_is_answered_at_once_and_is_no_choice() {
        let mut b = board(1);
        let ping = jute::bare_request(jute::PING_XID, jute::op::PING).frame();
        assert!(is_ping(&ping[4..]));
        assert!(matches!(b.received(0, 1, ping[4..].to_vec()).as_slice(), [Wire::Write(0, _)]));
        assert!(!b.in_flight());
    }
}
