//! The bytes of a controlled run: one loopback port per client (so a reconnection is known to be
//! that client's), a thread per connection that cuts frames, a thread per client process that
//! reads its history lines, all heard on one channel by the thread that owns the schedule.

use crate::serve::Conn;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::thread;

/// What the owner of the schedule hears.
pub enum Heard {
    Accepted(usize, Conn, TcpStream),
    Frame(usize, Conn, Vec<u8>),
    Gone(usize, Conn),
    /// A line a client process printed.
    Line(usize, String),
    /// A client process closed its stdout (it ended).
    Ended(usize),
}

/// The ports of one run, one per client.
pub struct Ports {
    addrs: Vec<SocketAddr>,
    stopping: Arc<AtomicBool>,
}

impl Ports {
    /// Binds a free loopback port for each of `clients` and starts accepting on each.
    pub fn open(clients: usize, heard: &Sender<Heard>) -> Result<Ports, String> {
        let stopping = Arc::new(AtomicBool::new(false));
        let next = Arc::new(AtomicU64::new(1));
        let mut addrs = Vec::with_capacity(clients);
        for client in 0..clients {
            let listener =
                TcpListener::bind("127.0.0.1:0").map_err(|e| format!("cannot listen on a loopback port: {e}"))?;
            addrs.push(listener.local_addr().map_err(|e| e.to_string())?);
            let (heard, stopping, next) = (heard.clone(), stopping.clone(), next.clone());
            thread::spawn(move || accept(client, listener, heard, stopping, next));
        }
        Ok(Ports { addrs, stopping })
    }

    /// Where client `i` connects.
    pub fn addr(&self, client: usize) -> SocketAddr {
        self.addrs[client]
    }
}

impl Drop for Ports {
    fn drop(&mut self) {
        self.stopping.store(true, Ordering::SeqCst);
        for addr in &self.addrs {
            let _ = TcpStream::connect(addr);
        }
    }
}

fn accept(client: usize, listener: TcpListener, heard: Sender<Heard>, stopping: Arc<AtomicBool>, next: Arc<AtomicU64>) {
    for stream in listener.incoming() {
        if stopping.load(Ordering::SeqCst) {
            return;
        }
        let Ok(stream) = stream else { continue };
        let _ = stream.set_nodelay(true);
        let Ok(writer) = stream.try_clone() else { continue };
        let conn = next.fetch_add(1, Ordering::SeqCst);
        if heard.send(Heard::Accepted(client, conn, writer)).is_err() {
            return;
        }
        let heard = heard.clone();
        thread::spawn(move || frames(client, conn, stream, heard));
    }
}

fn frames(client: usize, conn: Conn, mut stream: TcpStream, heard: Sender<Heard>) {
    loop {
        let mut head = [0u8; 4];
        if stream.read_exact(&mut head).is_err() {
            break;
        }
        let Some(payload) = crate::serve::codec::read_payload(&mut stream, head) else { break };
        if heard.send(Heard::Frame(client, conn, payload)).is_err() {
            break;
        }
    }
    let _ = heard.send(Heard::Gone(client, conn));
}

/// Reads a client process's stdout, line by line.
pub fn lines(client: usize, out: impl Read + Send + 'static, heard: Sender<Heard>) {
    thread::spawn(move || {
        for line in BufReader::new(out).lines() {
            let Ok(line) = line else { break };
            if heard.send(Heard::Line(client, line)).is_err() {
                return;
            }
        }
        let _ = heard.send(Heard::Ended(client));
    });
}

/// Writes `bytes` to a connection; false if it is gone.
pub fn write(stream: &mut TcpStream, bytes: &[u8]) -> bool {
    stream.write_all(bytes).is_ok()
}

pub fn close(stream: &TcpStream) {
    let _ = stream.shutdown(Shutdown::Both);
}
