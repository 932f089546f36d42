//! The model as a ZooKeeper server, without I/O: frames in, frames out. Every answer comes from
//! the model's `Server` (model/): this file only keeps which connection carries which session,
//! as a ZooKeeper server's connection layer does, and turns the model's results into wire
//! messages. Whoever moves the bytes (`listener`, or a scheduler that holds them) decides when
//! each effect happens; nothing here reads a clock.

use super::codec::{self, code, wire_session, Connect, FromClient, Rearm, ToClient, Watched};
use std::collections::BTreeMap;
use zklab_model::server::{Notification, Server, ServerConfig, SessionStatus, WatchKind};
use zklab_model::{Request, SessionId};

/// A client connection, numbered by whoever accepted it.
pub type Conn = u64;

/// What the connection layer must do next, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Effect {
    Send(Conn, ToClient),
    /// Close the connection (after what was sent before it).
    Close(Conn),
}

/// How many of each thing the server has done, for the summary `serve` prints at its end.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub connections: u64,
    pub sessions: u64,
    pub requests: BTreeMap<&'static str, u64>,
    /// Requests answered Unimplemented, by wire op code.
    pub unserved: BTreeMap<i32, u64>,
    pub notifications: u64,
    pub expired: u64,
}

/// The served model: ZooKeeper's server (the model's) and its connections.
pub struct Served {
    server: Server,
    /// Each open connection and the session it carries once its handshake is done.
    conns: BTreeMap<Conn, Option<SessionId>>,
    /// The connection each session is attached to, if any.
    attached: BTreeMap<SessionId, Conn>,
    tally: Tally,
}

impl Served {
    pub fn new(config: ServerConfig) -> Self {
        Served {
            server: Server::new(config),
            conns: BTreeMap::new(),
            attached: BTreeMap::new(),
            tally: Tally::default(),
        }
    }

    pub fn server(&self) -> &Server {
        &self.server
    }

    /// Makes persistent node `path` (its parent must exist) before any client connects, as an
    /// administrator would, in a session of its own that is closed at once: the checker's
    /// worlds start with the lock's parent made so.
    pub fn make_node(&mut self, path: &str) -> Result<(), zklab_model::ZkError> {
        let (admin, _) = self.server.open_session(4000);
        let made = self.server.apply(admin, &zklab_model::Request::create(path, zklab_model::CreateMode::Persistent));
        self.server.close_session(admin);
        made.result.map(|_| ())
    }

    pub fn tally(&self) -> &Tally {
        &self.tally
    }

    /// A client opened connection `conn`; its first frame will be a ConnectRequest.
    pub fn accepted(&mut self, conn: Conn) {
        self.conns.insert(conn, None);
        self.tally.connections += 1;
    }

    /// The session `conn` carries, if its handshake is done.
    pub fn session_of(&self, conn: Conn) -> Option<SessionId> {
        self.conns.get(&conn).copied().flatten()
    }

    /// The connection `session` is attached to.
    pub fn conn_of(&self, session: SessionId) -> Option<Conn> {
        self.attached.get(&session).copied()
    }

    /// One frame's payload from `conn`.
    pub fn receive(&mut self, conn: Conn, payload: &[u8]) -> Vec<Effect> {
        let Some(session) = self.conns.get(&conn).copied() else { return Vec::new() };
        let Some(session) = session else {
            return match codec::decode_connect(payload) {
                Ok(connect) => self.connect(conn, connect),
                Err(_) => self.drop_conn(conn),
            };
        };
        match codec::decode_request(payload) {
            Ok(message) => self.request(conn, session, message),
            // A frame the server cannot read ends the connection, as ZooKeeper's does.
            Err(_) => self.drop_conn(conn),
        }
    }

    /// The client's end of `conn` went away (or the connection layer gave up on it). Its
    /// session lives on until it reconnects, closes or expires; its watches go with the
    /// connection, as ZooKeeper's do, and a reconnecting client re-arms them with SetWatches.
    pub fn disconnected(&mut self, conn: Conn) {
        if let Some(Some(session)) = self.conns.remove(&conn) {
            if self.attached.get(&session) == Some(&conn) {
                self.attached.remove(&session);
                self.server.drop_watches(session);
            }
        }
    }

    /// The server expires `session` (the schedule's decision, or its timeout passing): its
    /// ephemerals go, their watchers hear of it, and its connection is closed, so the client
    /// learns on reconnecting that the session expired.
    pub fn expire(&mut self, session: SessionId) -> Vec<Effect> {
        if !self.server.is_alive(session) {
            return Vec::new();
        }
        self.tally.expired += 1;
        let mut effects = Vec::new();
        // Its connection goes first (with its watches), then its ephemerals.
        if let Some(conn) = self.attached.remove(&session) {
            self.conns.remove(&conn);
            effects.push(Effect::Close(conn));
        }
        let notifications = self.server.expire_session(session);
        self.notify(notifications, &mut effects);
        effects
    }

    fn drop_conn(&mut self, conn: Conn) -> Vec<Effect> {
        self.disconnected(conn);
        vec![Effect::Close(conn)]
    }

    /// The handshake: a new session, a session taken over from another connection, or the news
    /// that the session is gone (a timeout of 0, and the connection closed).
    fn connect(&mut self, conn: Conn, connect: Connect) -> Vec<Effect> {
        // A client that has seen more than this server has would read the past: ZooKeeper
        // refuses it by closing the connection, and the client tries another server.
        if connect.last_zxid > self.server.zxid() {
            return self.drop_conn(conn);
        }
        let mut effects = Vec::new();
        let (session, timeout_ms) = if connect.session == 0 {
            let (session, timeout_ms) = self.server.open_session(connect.timeout_ms.max(0) as u32);
            self.tally.sessions += 1;
            (session, timeout_ms)
        } else {
            let known = codec::model_session(connect.session)
                .filter(|s| self.server.is_alive(*s) && connect.password == password(*s));
            let Some(session) = known else {
                effects.push(Effect::Send(
                    conn,
                    ToClient::Connected {
                        timeout_ms: 0,
                        session: 0,
                        password: vec![0; 16],
                        read_only: connect.read_only,
                    },
                ));
                effects.push(Effect::Close(conn));
                self.conns.remove(&conn);
                return effects;
            };
            // The session moves here: its old connection is closed, and its watches with it.
            if let Some(old) = self.attached.remove(&session) {
                self.conns.remove(&old);
                self.server.drop_watches(session);
                effects.push(Effect::Close(old));
            }
            // A reconnecting client's timeout is negotiated again, as ZooKeeper does.
            (session, self.server.renegotiate(session, connect.timeout_ms.max(0) as u32))
        };
        self.conns.insert(conn, Some(session));
        self.attached.insert(session, conn);
        effects.push(Effect::Send(
            conn,
            ToClient::Connected {
                timeout_ms: timeout_ms as i32,
                session: wire_session(session),
                password: password(session),
                read_only: connect.read_only,
            },
        ));
        effects
    }

    fn request(&mut self, conn: Conn, session: SessionId, message: FromClient) -> Vec<Effect> {
        let zxid = self.server.zxid();
        let mut effects = Vec::new();
        let mut send = |message| effects.push(Effect::Send(conn, message));
        match message {
            FromClient::Connect(_) => return self.drop_conn(conn),
            FromClient::Ping => send(ToClient::Pong { zxid }),
            FromClient::Auth => send(ToClient::Bare { xid: crate::wire::jute::AUTH_XID, zxid: 0, err: code::OK }),
            // ZooKeeper answers an op it does not know Unimplemented, with no zxid, and closes
            // the connection; so does the served model for an op it does not serve.
            FromClient::Unserved { xid, code: op } => {
                *self.tally.unserved.entry(op).or_default() += 1;
                send(ToClient::Bare { xid, zxid: -1, err: code::UNIMPLEMENTED });
                effects.extend(self.drop_conn(conn));
            }
            FromClient::CheckWatches { xid, path, kind } => {
                let (data, child) = self.server.watches_of(session);
                let watched = |paths: &[String]| paths.contains(&path);
                let has = match kind {
                    Watched::Data => watched(&data),
                    Watched::Children => watched(&child),
                    Watched::Any => watched(&data) || watched(&child),
                };
                send(ToClient::Bare { xid, zxid, err: if has { code::OK } else { code::NO_WATCHER } });
            }
            FromClient::Undecodable { xid, .. } => send(ToClient::Bare { xid, zxid, err: code::BAD_ARGUMENTS }),
            FromClient::SetWatches { xid, rearm } => return self.set_watches(conn, session, xid, rearm),
            FromClient::Close { xid } => {
                *self.tally.requests.entry("closeSession").or_default() += 1;
                let notifications = self.server.close_session(session);
                self.notify(notifications, &mut effects);
                effects.push(Effect::Send(conn, ToClient::Bare { xid, zxid: self.server.zxid(), err: code::OK }));
                effects.push(Effect::Close(conn));
                self.attached.remove(&session);
                self.conns.remove(&conn);
            }
            FromClient::Request { xid, code: op, request } => {
                *self.tally.requests.entry(request.op_name()).or_default() += 1;
                let failing = match &request {
                    Request::Multi { ops } => self.server.failing_op(session, ops).map(|f| (ops.len(), f)),
                    _ => None,
                };
                let applied = self.server.apply(session, &request);
                self.notify(applied.notifications, &mut effects);
                let reply = match failing {
                    Some((ops, (failed, error))) => {
                        ToClient::MultiFailed { xid, zxid: applied.zxid, ops, failed, error }
                    }
                    None => ToClient::Reply { xid, zxid: applied.zxid, code: op, result: applied.result },
                };
                effects.push(Effect::Send(conn, reply));
            }
        }
        effects
    }

    /// SetWatches: each watch re-armed, or its catch-up event sent at once, then the reply.
    fn set_watches(&mut self, conn: Conn, session: SessionId, xid: i32, rearm: Rearm) -> Vec<Effect> {
        let watches: Vec<(String, WatchKind)> = [(rearm.data, WatchKind::Data), (rearm.exist, WatchKind::Exist)]
            .into_iter()
            .chain([(rearm.child, WatchKind::Child)])
            .flat_map(|(paths, kind)| paths.into_iter().map(move |p| (p, kind)))
            .collect();
        let events = self.server.set_watches(session, rearm.relative_zxid, &watches);
        self.tally.notifications += events.len() as u64;
        let mut effects: Vec<Effect> =
            events.into_iter().map(|event| Effect::Send(conn, ToClient::Notification(event))).collect();
        effects.push(Effect::Send(conn, ToClient::Bare { xid, zxid: self.server.zxid(), err: code::OK }));
        effects
    }

    /// Each notification to the connection its session is attached to; one whose session has
    /// no connection has no watch left to fire (they went with the connection).
    fn notify(&mut self, notifications: Vec<Notification>, effects: &mut Vec<Effect>) {
        for Notification { session, event } in notifications {
            if let Some(conn) = self.attached.get(&session) {
                self.tally.notifications += 1;
                effects.push(Effect::Send(*conn, ToClient::Notification(event)));
            }
        }
    }

    /// Sessions that are open, with their negotiated timeouts.
    pub fn open_sessions(&self) -> Vec<(SessionId, u32)> {
        self.server
            .sessions()
            .filter(|(_, info)| info.status == SessionStatus::Open)
            .map(|(id, info)| (*id, info.timeout_ms))
            .collect()
    }
}

/// A session's password: ZooKeeper's is random; this one is a fixed function of the session, so
/// that a run is the same every time. A client must only send back what it was given.
pub fn password(session: SessionId) -> Vec<u8> {
    let mut x = u64::from(session.0).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x7a6b_6c61_6273_6572;
    let mut bytes = Vec::with_capacity(16);
    for _ in 0..2 {
        x ^= x >> 31;
        x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
        bytes.extend_from_slice(&x.to_be_bytes());
    }
    bytes
}
