//! One TCP connection of a session to a ZooKeeper server: the handshake, then a reader thread
//! that hands every frame, in the order it arrived, to the driver's one channel. The driver
//! writes requests itself and matches replies to them (a reply's record can only be read
//! knowing its request). Nothing here decides anything: when to ping, reconnect or drop a
//! connection is the driver's.

use super::jute::{self, Malformed, Reader, Writer};
use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream, ToSocketAddrs};
use std::sync::mpsc::Sender;
use std::time::Duration;

/// What arrived on a connection.
#[derive(Debug)]
pub enum Frame {
    /// A reply (to a request, a ping or SetWatches): its header, and its record unread.
    Reply { xid: i32, zxid: i64, err: i32, body: Vec<u8> },
    /// A watch notification's record, unread.
    Notification { body: Vec<u8> },
    /// The connection closed (by the server, the network, or the driver itself).
    Closed,
}

/// A frame, with whose connection it came on: `generation` tells a late frame of a connection
/// the driver has already dropped from one of the next.
#[derive(Debug)]
pub struct Arrival {
    pub client: usize,
    pub generation: u64,
    pub frame: Frame,
}

/// The longest the handshake may take before the server is called unreachable.
const HANDSHAKE: Duration = Duration::from_secs(10);

/// The largest frame accepted: ZooKeeper's own default `jute.maxbuffer` (just under 1 MiB)
/// with room to spare; a longer length is a broken stream, not a frame.
const MAX_FRAME: usize = 16 << 20;

pub struct Connection {
    stream: TcpStream,
    pub session: i64,
    pub password: Vec<u8>,
    /// The negotiated session timeout; 0 when the server said the session has expired.
    pub timeout_ms: u32,
    next_xid: i32,
    last_sent: std::time::Instant,
}

/// Why a connection could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error("cannot reach {0}: {1}")]
    Unreachable(String, std::io::Error),
    #[error("{0}")]
    Malformed(#[from] Malformed),
}

impl Connection {
    /// Connects to `server` for `session` (0: a new one) and starts handing its frames to `to`
    /// as `client`'s connection number `generation`. A session the server no longer knows comes
    /// back with `timeout_ms` 0 and no reader.
    pub fn open(
        server: &str,
        session: (i64, &[u8]),
        last_zxid: i64,
        timeout_ms: u32,
        to: (Sender<Arrival>, usize, u64),
    ) -> Result<Connection, ConnectError> {
        let unreachable = |e| ConnectError::Unreachable(server.to_string(), e);
        let address = server
            .to_socket_addrs()
            .map_err(unreachable)?
            .next()
            .ok_or_else(|| unreachable(std::io::Error::other("no address")))?;
        let mut stream = TcpStream::connect_timeout(&address, HANDSHAKE).map_err(unreachable)?;
        stream.set_nodelay(true).map_err(unreachable)?;
        stream.set_read_timeout(Some(HANDSHAKE)).map_err(unreachable)?;
        stream
            .write_all(&jute::connect_request(last_zxid, timeout_ms, session.0, session.1).frame())
            .map_err(unreachable)?;
        let payload = read_frame(&mut stream).map_err(unreachable)?;
        let connected = jute::decode_connected(&payload)?;
        stream.set_read_timeout(None).map_err(unreachable)?;
        let connection = Connection {
            stream: stream.try_clone().map_err(unreachable)?,
            session: connected.session,
            password: connected.password,
            timeout_ms: connected.timeout_ms,
            next_xid: 1,
            last_sent: std::time::Instant::now(),
        };
        if connected.timeout_ms > 0 {
            let (sender, client, generation) = to;
            std::thread::spawn(move || read_frames(stream, sender, client, generation));
        }
        Ok(connection)
    }

    /// Sends a request payload with the next xid; returns the xid.
    pub fn send(&mut self, payload: impl FnOnce(i32) -> Writer) -> std::io::Result<i32> {
        let xid = self.next_xid;
        self.next_xid += 1;
        self.stream.write_all(&payload(xid).frame())?;
        self.last_sent = std::time::Instant::now();
        Ok(xid)
    }

    /// How long since this connection last sent anything.
    pub fn idle_for(&self) -> Duration {
        self.last_sent.elapsed()
    }

    /// Sends a payload that carries its own xid (a ping, SetWatches).
    pub fn send_bare(&mut self, payload: Writer) -> std::io::Result<()> {
        self.stream.write_all(&payload.frame())?;
        self.last_sent = std::time::Instant::now();
        Ok(())
    }

    /// Drops the connection at once, without closing the session: the reader sees it closed.
    pub fn drop_link(&self) {
        let _ = self.stream.shutdown(Shutdown::Both);
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.drop_link();
    }
}

fn read_frame(stream: &mut TcpStream) -> std::io::Result<Vec<u8>> {
    let mut length = [0u8; 4];
    stream.read_exact(&mut length)?;
    let length = i32::from_be_bytes(length);
    if length < 0 || length as usize > MAX_FRAME {
        return Err(std::io::Error::other(format!("a frame of {length} bytes")));
    }
    let mut payload = vec![0u8; length as usize];
    stream.read_exact(&mut payload)?;
    Ok(payload)
}

/// The reader thread: every frame in arrival order, then `Closed`.
fn read_frames(mut stream: TcpStream, to: Sender<Arrival>, client: usize, generation: u64) {
    loop {
        let frame = match read_frame(&mut stream) {
            Ok(payload) => parse(&payload).unwrap_or(Frame::Closed),
            Err(_) => Frame::Closed,
        };
        let closed = matches!(frame, Frame::Closed);
        if to.send(Arrival { client, generation, frame }).is_err() || closed {
            return;
        }
    }
}

fn parse(payload: &[u8]) -> Result<Frame, Malformed> {
    let mut r = Reader::new(payload);
    let (xid, zxid, err) = (r.int()?, r.long()?, r.int()?);
    let body = payload[16..].to_vec();
    Ok(match xid {
        jute::NOTIFICATION_XID => Frame::Notification { body },
        _ => Frame::Reply { xid, zxid, err, body },
    })
}
