//! A proxy in front of the server for one real client library's process, reading ZooKeeper's
//! client frames, so faults strike a library exactly where they strike zklab's own driver:
//! - `cut`: every connection through it closes, and new ones are closed at once until `heal`
//!   (a partition: the library sees its connection drop and cannot get back);
//! - `arm(LossBeforeApply)`: the library's next create never reaches the server, and its
//!   connection drops there;
//! - `arm(LossAfterApply)`: its next create reaches the server, the reply is swallowed, and the
//!   connection drops right after it: the node exists, the library saw ConnectionLoss.
//!
//! A frame is a 4-byte length and its payload; after the handshake (one frame each way) a
//! request's payload starts with its xid and op code, a reply's with the xid it answers.

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::{Arc, Mutex, MutexGuard};
use zklab_model::FaultKind;

/// ZooKeeper's op codes for a create (create, create2, createContainer, createTTL).
const CREATES: [i32; 4] = [1, 15, 19, 21];

#[derive(Default)]
struct Gate {
    cut: bool,
    armed: Option<FaultKind>,
    /// Creates whose reply is swallowed, by xid.
    swallow: BTreeSet<i32>,
    /// The open connections' sockets (client side, server side), to close on a cut.
    open: Vec<(TcpStream, TcpStream)>,
    /// Faults that struck, by kind, for the report.
    struck: Vec<FaultKind>,
}

pub struct FrameProxy {
    /// HOST:PORT for the library to connect to.
    pub address: String,
    gate: Arc<Mutex<Gate>>,
}

fn lock(gate: &Mutex<Gate>) -> MutexGuard<'_, Gate> {
    gate.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl FrameProxy {
    /// Listens on a free loopback port and forwards each connection to `server`.
    pub fn start(server: &str) -> Result<FrameProxy, String> {
        let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("no free port: {e}"))?;
        let address = listener.local_addr().map_err(|e| e.to_string())?.to_string();
        let gate = Arc::new(Mutex::new(Gate::default()));
        let shared = gate.clone();
        let server = server.to_string();
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                if lock(&shared).cut {
                    let _ = client.shutdown(Shutdown::Both);
                    continue;
                }
                let Ok(upstream) = TcpStream::connect(&server) else {
                    let _ = client.shutdown(Shutdown::Both);
                    continue;
                };
                let _ = (client.set_nodelay(true), upstream.set_nodelay(true));
                let sockets = (client.try_clone(), upstream.try_clone(), client.try_clone(), upstream.try_clone());
                let (Ok(c1), Ok(u1), Ok(c2), Ok(u2)) = sockets else { continue };
                lock(&shared).open.push((client, upstream));
                let (g1, g2) = (shared.clone(), shared.clone());
                std::thread::spawn(move || requests(c1, u1, &g1));
                std::thread::spawn(move || replies(u2, c2, &g2));
            }
        });
        Ok(FrameProxy { address, gate })
    }

    /// Closes every connection and refuses new ones until `heal`.
    pub fn cut(&self) {
        let mut gate = lock(&self.gate);
        gate.cut = true;
        close_all(&mut gate);
    }

    pub fn heal(&self) {
        lock(&self.gate).cut = false;
    }

    /// The library's next create is lost (`LossBeforeApply` or `LossAfterApply`).
    pub fn arm(&self, kind: FaultKind) {
        lock(&self.gate).armed = Some(kind);
    }

    /// Whether a loss is armed and has not struck yet.
    pub fn armed(&self) -> bool {
        lock(&self.gate).armed.is_some()
    }

    /// The losses that struck so far.
    pub fn struck(&self) -> Vec<FaultKind> {
        lock(&self.gate).struck.clone()
    }
}

fn close_all(gate: &mut Gate) {
    for (client, upstream) in gate.open.drain(..) {
        let _ = client.shutdown(Shutdown::Both);
        let _ = upstream.shutdown(Shutdown::Both);
    }
    gate.swallow.clear();
}

fn read_frame(from: &mut TcpStream) -> std::io::Result<Vec<u8>> {
    let mut length = [0u8; 4];
    from.read_exact(&mut length)?;
    let length = i32::from_be_bytes(length);
    if !(0..=64 << 20).contains(&length) {
        return Err(std::io::Error::other("not a ZooKeeper frame"));
    }
    let mut frame = length.to_be_bytes().to_vec();
    frame.resize(4 + length as usize, 0);
    from.read_exact(&mut frame[4..])?;
    Ok(frame)
}

fn int_at(frame: &[u8], at: usize) -> Option<i32> {
    frame.get(at..at + 4).map(|b| i32::from_be_bytes(b.try_into().expect("4 bytes")))
}

/// The library's frames to the server: the handshake, then requests, one of which an armed
/// loss strikes.
fn requests(mut client: TcpStream, mut server: TcpStream, gate: &Mutex<Gate>) {
    let mut first = true;
    while let Ok(frame) = read_frame(&mut client) {
        if !first {
            let (xid, op) = (int_at(&frame, 4).unwrap_or(0), int_at(&frame, 8).unwrap_or(0));
            let mut g = lock(gate);
            if CREATES.contains(&op) {
                match g.armed {
                    Some(FaultKind::LossBeforeApply) => {
                        g.armed = None;
                        g.struck.push(FaultKind::LossBeforeApply);
                        close_all(&mut g);
                        return;
                    }
                    Some(FaultKind::LossAfterApply) => {
                        g.armed = None;
                        g.struck.push(FaultKind::LossAfterApply);
                        g.swallow.insert(xid);
                    }
                    _ => {}
                }
            }
        }
        first = false;
        if server.write_all(&frame).is_err() {
            break;
        }
    }
    let _ = server.shutdown(Shutdown::Both);
}

/// The server's frames to the library: a swallowed create's reply is dropped, and the
/// connection with it.
fn replies(mut server: TcpStream, mut client: TcpStream, gate: &Mutex<Gate>) {
    let mut first = true;
    while let Ok(frame) = read_frame(&mut server) {
        if !first {
            let xid = int_at(&frame, 4).unwrap_or(0);
            let mut g = lock(gate);
            if g.swallow.remove(&xid) {
                close_all(&mut g);
                return;
            }
        }
        first = false;
        if client.write_all(&frame).is_err() {
            break;
        }
    }
    let _ = client.shutdown(Shutdown::Both);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn frame(words: &[i32]) -> Vec<u8> {
        let body: Vec<u8> = words.iter().flat_map(|w| w.to_be_bytes()).collect();
        let mut f = (body.len() as i32).to_be_bytes().to_vec();
        f.extend(body);
        f
    }

    /// A server that answers the handshake, then every request with a reply of its xid; what it
    /// received goes to the channel.
    fn echo_server() -> (String, std::sync::mpsc::Receiver<Vec<u8>>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap().to_string();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for mut conn in listener.incoming().flatten() {
                let tx = tx.clone();
                std::thread::spawn(move || {
                    let mut first = true;
                    while let Ok(f) = read_frame(&mut conn) {
                        let reply = if first { frame(&[0]) } else { frame(&[int_at(&f, 4).unwrap(), 0, 0, 0, 0]) };
                        first = false;
                        let _ = tx.send(f);
                        if conn.write_all(&reply).is_err() {
                            return;
                        }
                    }
                });
            }
        });
        (address, rx)
    }

    fn connect(proxy: &FrameProxy) -> TcpStream {
        let mut c = TcpStream::connect(&proxy.address).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        c.write_all(&frame(&[0])).unwrap();
        read_frame(&mut c).unwrap();
        c
    }

    #[test]
    fn a_lost_reply_reaches_the_server_and_never_the_client() {
        let (server, received) = echo_server();
        let proxy = FrameProxy::start(&server).unwrap();
        let mut client = connect(&proxy);
        received.recv_timeout(Duration::from_secs(2)).unwrap();
        // A read passes untouched.
        client.write_all(&frame(&[7, 4])).unwrap();
        assert_eq!(int_at(&read_frame(&mut client).unwrap(), 4), Some(7));
        received.recv_timeout(Duration::from_secs(2)).unwrap();
        proxy.arm(FaultKind::LossAfterApply);
        client.write_all(&frame(&[8, 1])).unwrap();
        let applied = received.recv_timeout(Duration::from_secs(2)).unwrap();
        assert_eq!((int_at(&applied, 4), int_at(&applied, 8)), (Some(8), Some(1)), "the create reached the server");
        assert!(read_frame(&mut client).is_err(), "its reply never came: the connection closed");
        assert_eq!(proxy.struck(), vec![FaultKind::LossAfterApply]);
    }

    #[test]
    fn a_lost_request_never_reaches_the_server_and_a_cut_refuses_until_healed() {
        let (server, received) = echo_server();
        let proxy = FrameProxy::start(&server).unwrap();
        let mut client = connect(&proxy);
        received.recv_timeout(Duration::from_secs(2)).unwrap();
        proxy.arm(FaultKind::LossBeforeApply);
        client.write_all(&frame(&[9, 15])).unwrap();
        assert!(read_frame(&mut client).is_err(), "the connection closed");
        assert!(received.recv_timeout(Duration::from_millis(200)).is_err(), "the create never reached the server");
        proxy.cut();
        let mut refused = TcpStream::connect(&proxy.address).unwrap();
        refused.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        let _ = refused.write_all(&frame(&[0]));
        assert!(read_frame(&mut refused).is_err(), "cut: no handshake gets through");
        proxy.heal();
        let _ = connect(&proxy);
    }
}
