//! What outlives one run: the ports, the client processes and their connections. A campaign
//! runs schedule after schedule on one rig, so a schedule costs its choices and not a Python
//! interpreter's or a JVM's start.
//!
//! Between two runs the rig is **reset**: every client is told `reset` on stdin (the line after
//! `done`, docs/your-lock.md), closes its session and opens a new one, and the run after it
//! serves a fresh model. The connections of the run before are *stale*: the fresh model never
//! sees them. A stale connection's ping is answered (so nothing times out while it closes),
//! its closeSession is acknowledged and the connection closed, and anything else closes it.
//! One whose handshake the run before left unanswered is closed at the reset.
//! A client that ends instead of opening a new session (a program that reads any line after
//! `done` as "exit", as the protocol's first version said) makes the campaign start fresh
//! processes for every run after it.
//!
//! Only a run whose clients all finished (`End::Done`) leaves a rig to reuse: after any other
//! end a client may be anywhere in its lock code, not waiting for a line.

use super::clients::{ClientProgram, Clients, Task};
use super::wiring::{self, Heard, Ports};
use crate::serve::codec::{self, FromClient, ToClient};
use crate::serve::Conn;
use std::collections::{BTreeMap, BTreeSet};
use std::net::TcpStream;
use std::sync::mpsc::{self, Receiver};

pub struct Rig {
    /// Kept open while the rig lives: each client's port.
    _ports: Ports,
    pub clients: Clients,
    pub heard: Receiver<Heard>,
    pub pids: Vec<u32>,
    pub streams: BTreeMap<Conn, TcpStream>,
    /// Each client's connection, as the wiring knows it.
    pub conn_of: Vec<Option<Conn>>,
    /// Connections of an earlier run, let close (see the module's doc).
    stale: BTreeSet<Conn>,
    /// Whether the clients are in a life after a reset (their first lines may be the last words
    /// of the one before).
    pub reset: bool,
    /// Connections whose handshake the run that just ended left unanswered (see `reset`).
    pub handshaking: Vec<Conn>,
}

impl Rig {
    /// Opens a port per client and starts the clients, each told its port.
    pub fn start(program: &ClientProgram, clients: usize, task: &Task, dir: &std::path::Path) -> Result<Rig, String> {
        let (tx, rx) = mpsc::channel();
        let ports = Ports::open(clients, &tx).map_err(|e| format!("machine: {e}"))?;
        let addrs: Vec<_> = (0..clients).map(|c| ports.addr(c)).collect();
        let started = Clients::start(program, &addrs, task, dir, &tx)?;
        let pids = started.pids();
        Ok(Rig {
            _ports: ports,
            clients: started,
            heard: rx,
            pids,
            streams: BTreeMap::new(),
            conn_of: vec![None; clients],
            stale: BTreeSet::new(),
            reset: false,
            handshaking: Vec::new(),
        })
    }

    /// Makes every connection stale and tells every client to start over in a new session.
    /// A connection whose handshake the run before left unanswered (a client reconnecting
    /// after the run's last choice, a done client's session expired, say) is closed: nothing
    /// would ever answer it, and its client's close would wait for it until its own connect
    /// timeout (kazoo's `stop()` waits 10 s so).
    pub fn reset(&mut self) {
        self.stale.extend(self.conn_of.iter_mut().filter_map(Option::take));
        self.clients.say("reset");
        for conn in std::mem::take(&mut self.handshaking) {
            self.drop_stale(conn);
        }
        self.reset = true;
    }

    pub fn is_stale(&self, conn: Conn) -> bool {
        self.stale.contains(&conn)
    }

    /// A frame on a stale connection: a ping is answered, a closeSession acknowledged and the
    /// connection closed, anything else closes it.
    pub fn answer_stale(&mut self, conn: Conn, payload: &[u8]) {
        let Some(stream) = self.streams.get_mut(&conn) else { return };
        match codec::decode_request(payload) {
            Ok(FromClient::Ping) => {
                wiring::write(stream, &codec::encode(&ToClient::Pong { zxid: 0 }));
            }
            Ok(FromClient::Close { xid }) => {
                wiring::write(stream, &codec::encode(&ToClient::Bare { xid, zxid: 0, err: 0 }));
                self.drop_stale(conn);
            }
            _ => self.drop_stale(conn),
        }
    }

    /// A stale connection closed, by its client or by us.
    pub fn drop_stale(&mut self, conn: Conn) {
        if let Some(stream) = self.streams.remove(&conn) {
            wiring::close(&stream);
        }
        self.stale.remove(&conn);
    }
}
