//! The served model on a loopback TCP port, free-running: every frame is handed to `Served` as
//! it arrives and every answer written at once, and a session expires when its client has not
//! been heard from for its timeout, as on a real server. One thread owns `Served`; a thread per
//! connection only cuts its bytes into frames.
//!
//! This is the schedule "deliver everything now", the one a plain ZooKeeper server follows. The
//! explorer holds the same frames and effects back and chooses their order and faults instead.

use super::codec;
use super::four_letter;
use super::served::{Conn, Effect, Served, Tally};
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};
use zklab_model::server::ServerConfig;
use zklab_model::SessionId;

/// What the connection threads tell the thread that owns the model.
enum Event {
    Accepted(Conn, TcpStream),
    Frame(Conn, Vec<u8>),
    Word(Conn, &'static str),
    Gone(Conn),
    Stop,
}

/// A served model running on its own threads.
pub struct Running {
    addr: SocketAddr,
    events: Sender<Event>,
    owner: Option<JoinHandle<Tally>>,
}

impl Running {
    /// Where clients connect: `127.0.0.1:PORT`.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops serving: every connection is closed. Returns what was served.
    pub fn stop(mut self) -> Tally {
        self.shut()
    }

    fn shut(&mut self) -> Tally {
        let _ = self.events.send(Event::Stop);
        // Wakes the accepting thread, which then finds the owner gone and ends.
        let _ = TcpStream::connect(self.addr);
        self.owner.take().and_then(|owner| owner.join().ok()).unwrap_or_default()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if self.owner.is_some() {
            self.shut();
        }
    }
}

/// Binds 127.0.0.1:`port` (0: a free port) and serves the model there until stopped.
pub fn start(port: u16, config: ServerConfig) -> Result<Running, String> {
    let listener = TcpListener::bind(("127.0.0.1", port)).map_err(|e| match e.kind() {
        std::io::ErrorKind::AddrInUse => format!("port {port} is in use: pick another with --port, or 0 for any"),
        _ => format!("cannot listen on 127.0.0.1:{port}: {e}"),
    })?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let (events, inbox) = mpsc::channel();
    let accepting = events.clone();
    thread::spawn(move || accept(listener, accepting));
    let owner = thread::spawn(move || own(inbox, config));
    Ok(Running { addr, events, owner: Some(owner) })
}

fn accept(listener: TcpListener, events: Sender<Event>) {
    for (conn, stream) in (1..).zip(listener.incoming()) {
        let Ok(stream) = stream else { continue };
        let Ok(writer) = stream.try_clone() else { continue };
        if events.send(Event::Accepted(conn, writer)).is_err() {
            return;
        }
        let events = events.clone();
        thread::spawn(move || read(conn, stream, events));
    }
}

/// Cuts one connection's bytes into frames; a first frame that is a four-letter word is one.
fn read(conn: Conn, mut stream: TcpStream, events: Sender<Event>) {
    let _ = stream.set_nodelay(true);
    let mut first = true;
    loop {
        let mut head = [0u8; 4];
        if stream.read_exact(&mut head).is_err() {
            break;
        }
        if std::mem::take(&mut first) {
            if let Some(word) = four_letter::word(head) {
                let _ = events.send(Event::Word(conn, word));
                return;
            }
        }
        let Some(payload) = codec::read_payload(&mut stream, head) else { break };
        if events.send(Event::Frame(conn, payload)).is_err() {
            break;
        }
    }
    let _ = events.send(Event::Gone(conn));
}

/// The thread that owns the model: applies each event, writes each effect, expires sessions
/// whose clients have gone quiet.
fn own(inbox: Receiver<Event>, config: ServerConfig) -> Tally {
    let mut served = Served::new(config);
    let mut writers: BTreeMap<Conn, TcpStream> = BTreeMap::new();
    let mut heard: BTreeMap<SessionId, Instant> = BTreeMap::new();
    loop {
        let effects = match inbox.recv_timeout(Duration::from_millis(20)) {
            Ok(Event::Stop) | Err(RecvTimeoutError::Disconnected) => break,
            Ok(Event::Accepted(conn, stream)) => {
                served.accepted(conn);
                writers.insert(conn, stream);
                Vec::new()
            }
            Ok(Event::Frame(conn, payload)) => {
                let effects = served.receive(conn, &payload);
                if let Some(session) = served.session_of(conn) {
                    heard.insert(session, Instant::now());
                }
                effects
            }
            Ok(Event::Word(conn, word)) => {
                let answer = four_letter::answer(&served, word);
                if let Some(mut stream) = writers.remove(&conn) {
                    let _ = stream.write_all(answer.as_bytes());
                    let _ = stream.shutdown(Shutdown::Both);
                }
                served.disconnected(conn);
                Vec::new()
            }
            Ok(Event::Gone(conn)) => {
                served.disconnected(conn);
                if let Some(stream) = writers.remove(&conn) {
                    let _ = stream.shutdown(Shutdown::Both);
                }
                Vec::new()
            }
            Err(RecvTimeoutError::Timeout) => Vec::new(),
        };
        apply(&effects, &mut writers, &mut served);
        // A session not heard from for its timeout expires, as ZooKeeper's session tracker does.
        let now = Instant::now();
        for (session, timeout_ms) in served.open_sessions() {
            let last = *heard.entry(session).or_insert(now);
            if now.duration_since(last) > Duration::from_millis(u64::from(timeout_ms)) {
                let effects = served.expire(session);
                apply(&effects, &mut writers, &mut served);
            }
        }
    }
    for stream in writers.values() {
        let _ = stream.shutdown(Shutdown::Both);
    }
    served.tally().clone()
}

fn apply(effects: &[Effect], writers: &mut BTreeMap<Conn, TcpStream>, served: &mut Served) {
    for effect in effects {
        match effect {
            Effect::Send(conn, message) => {
                let failed = writers.get_mut(conn).is_some_and(|w| w.write_all(&codec::encode(message)).is_err());
                if failed {
                    served.disconnected(*conn);
                    writers.remove(conn);
                }
            }
            Effect::Close(conn) => {
                if let Some(stream) = writers.remove(conn) {
                    let _ = stream.shutdown(Shutdown::Both);
                }
            }
        }
    }
}
