//! The lagging follower: one follower of the ensemble started here whose link to the leader
//! runs through this proxy, so that what it applies can be held back, exactly where the model
//! puts a lagging follower: one write behind the leader.
//!
//! The follower's own `zoo.cfg` names the proxy's ports as the other servers' quorum ports
//! (a follower dials the leader at the address in its own config, so the whole
//! leader-to-follower stream passes here; the other servers and every election port are left
//! alone). The proxy reads that stream as ZooKeeper's quorum packets (`QuorumPacket`: type,
//! zxid, data, auth) and, once the follower is in sync (`UPTODATE`), holds the leader's
//! `COMMIT` of the newest write, and every commit and `SYNC` after it, until the next write's
//! commit arrives: the follower then applies the write it was missing and is held behind the
//! new one. Everything else passes at once: proposals (the follower logs and acknowledges
//! them, so the ensemble's quorum never waits on the proxy), pings (so the follower never times
//! out), session revalidations (so a session can move to it). Bytes are held, never dropped or
//! reordered among commits, so the follower's state is always one the leader had.
//!
//! "A write" is what the model counts as one, a transaction that takes a zxid in the model:
//! create, delete, setData, setACL, multi, and a session's close. A session's creation and a
//! failed write's error transaction take a zxid on a real server but change nothing a read
//! shows, so they are held behind a write but never held on their own. A write by a session on
//! the lagging follower itself releases everything up to it: its session has seen it (the
//! model's lagging view is never older than what the session has seen, its own writes
//! included).
//!
//! Measured on ZooKeeper 3.8 (docs/real.md): the follower answers every read from its held
//! state and is fresh within milliseconds of a release; held for longer than
//! `syncLimit x tickTime` without a ping it would drop out, which the proxy never lets happen.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::io::{BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::{Arc, Mutex, MutexGuard};

/// Quorum packet types (ZooKeeper's `Leader` constants) the proxy tells apart.
mod packet {
    pub const PROPOSAL: i32 = 2;
    pub const COMMIT: i32 = 4;
    pub const SYNC: i32 = 7;
    pub const COMMIT_AND_ACTIVATE: i32 = 9;
    pub const UPTODATE: i32 = 12;
    pub const SNAP: i32 = 15;
}

/// Transaction types that are writes in the model's sense (ZooKeeper's `OpCode`s).
const MODEL_WRITES: [i32; 10] = [
    1,   // create
    2,   // delete
    5,   // setData
    7,   // setACL
    14,  // multi
    15,  // create2
    19,  // createContainer
    20,  // deleteContainer
    21,  // createTTL
    -11, // closeSession
];

/// What follows a `SNAP` packet's snapshot: `writeString("BenWasHere", "signature")`.
const SNAP_SIGNATURE: &[u8] = b"\0\0\0\x0aBenWasHere";

/// The proxy's state, shared by its threads and the driver.
#[derive(Default)]
struct Lag {
    /// Holding back (the run uses lagging faults); otherwise every byte passes.
    holding: bool,
    /// Sessions connected to the lagging follower: their own writes are never held.
    local: BTreeSet<i64>,
    /// Each proposal not yet committed: its transaction type and session.
    proposals: HashMap<i64, (i32, i64)>,
    /// Packets held back on the current link, oldest first.
    held: VecDeque<Vec<u8>>,
    /// The write the follower is held behind (its commit is the first held packet).
    held_write: Option<i64>,
    /// The zxids of the writes the leader committed (the newest few thousand).
    writes: BTreeSet<i64>,
    /// The current link's stream to the follower, and whether the follower is in sync on it.
    to_follower: Option<TcpStream>,
    synced: bool,
    /// Which link `to_follower` is (a new one replaces an old one).
    link: u64,
}

impl Lag {
    fn release(&mut self) {
        self.held_write = None;
        let held: Vec<Vec<u8>> = self.held.drain(..).collect();
        for bytes in held {
            self.forward(&bytes);
        }
    }

    fn forward(&mut self, bytes: &[u8]) {
        if let Some(stream) = self.to_follower.as_mut() {
            if stream.write_all(bytes).is_err() {
                self.to_follower = None;
            }
        }
    }

    /// One packet from the leader: forwarded, or held behind the newest write.
    fn on_packet(&mut self, kind: i32, zxid: i64, data: Option<&[u8]>, bytes: Vec<u8>) {
        if kind == packet::UPTODATE {
            self.synced = true;
        }
        if kind == packet::PROPOSAL {
            if let Some(header) = data.filter(|d| d.len() >= 32) {
                let session = i64::from_be_bytes(header[0..8].try_into().expect("8 bytes"));
                let txn = i32::from_be_bytes(header[28..32].try_into().expect("4 bytes"));
                self.proposals.insert(zxid, (txn, session));
            }
        }
        let commit = kind == packet::COMMIT || kind == packet::COMMIT_AND_ACTIVATE;
        let (txn, session) = if commit { self.proposals.remove(&zxid).unwrap_or((0, 0)) } else { (0, 0) };
        let write = commit && MODEL_WRITES.contains(&txn);
        if write {
            self.writes.insert(zxid);
            while self.writes.len() > 4096 {
                self.writes.pop_first();
            }
        }
        if !self.holding || !self.synced {
            self.release();
            return self.forward(&bytes);
        }
        match (write, self.local.contains(&session)) {
            // The follower's own session wrote: it catches up through that write.
            (true, true) => {
                self.held.push_back(bytes);
                self.release();
            }
            // A new newest write: what was held behind the last one goes; this one is held.
            (true, false) => {
                self.release();
                self.held_write = Some(zxid);
                self.held.push_back(bytes);
            }
            // Nothing may overtake a held commit; the rest passes.
            _ if (commit || kind == packet::SYNC) && !self.held.is_empty() => self.held.push_back(bytes),
            _ => self.forward(&bytes),
        }
    }
}

/// The proxy in front of the lagging follower's quorum link.
pub struct LaggingFollower {
    /// The lagging server's index in the ensemble.
    pub server: usize,
    lag: Arc<Mutex<Lag>>,
    /// The proxy's listening ports, in the order of the upstream ports given.
    pub ports: Vec<u16>,
}

impl LaggingFollower {
    /// Listens on a free loopback port for each of `upstreams` (the other servers' quorum
    /// ports) and forwards each link the follower opens to the matching one.
    pub fn listen(server: usize, upstreams: &[u16]) -> Result<LaggingFollower, String> {
        let lag = Arc::new(Mutex::new(Lag::default()));
        let mut ports = Vec::new();
        for &upstream in upstreams {
            let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("no free port: {e}"))?;
            ports.push(listener.local_addr().map_err(|e| e.to_string())?.port());
            let lag = lag.clone();
            std::thread::spawn(move || {
                for follower in listener.incoming().flatten() {
                    let lag = lag.clone();
                    std::thread::spawn(move || link(follower, upstream, &lag));
                }
            });
        }
        Ok(LaggingFollower { server, lag, ports })
    }

    fn lag(&self) -> MutexGuard<'_, Lag> {
        self.lag.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Starts (or stops, releasing everything) holding the follower one write behind.
    pub fn hold(&self, on: bool) {
        let mut lag = self.lag();
        lag.holding = on;
        if !on {
            lag.release();
        }
    }

    /// `session` is now connected to the lagging follower (`true`) or no longer (`false`).
    pub fn connected(&self, session: i64, on: bool) {
        let mut lag = self.lag();
        match on {
            true => lag.local.insert(session),
            false => lag.local.remove(&session),
        };
    }

    /// The write the follower has not applied, if it is held behind one.
    pub fn behind(&self) -> Option<i64> {
        self.lag().held_write
    }

    /// The newest write the leader committed.
    pub fn newest_write(&self) -> i64 {
        self.lag().writes.last().copied().unwrap_or(0)
    }

    /// Where a read the follower answered with header zxid `applied` (what it had applied)
    /// stands in the leader's order: at the first write it had not applied, the one it was
    /// held behind (the model's lagging read sees the state just before the newest write).
    pub fn read_place(&self, applied: i64) -> i64 {
        self.lag().writes.range(applied + 1..).next().copied().unwrap_or(applied)
    }
}

/// One link of the follower to a server's quorum port: its bytes to the server copied as
/// they are, the server's bytes read packet by packet.
fn link(follower: TcpStream, upstream: u16, lag: &Mutex<Lag>) {
    let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)) else {
        let _ = follower.shutdown(Shutdown::Both);
        return;
    };
    let _ = (follower.set_nodelay(true), server.set_nodelay(true));
    let (Ok(mut follower_in), Ok(mut server_out)) = (follower.try_clone(), server.try_clone()) else { return };
    let lock = || lag.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let id = {
        let mut l = lock();
        l.link += 1;
        l.held.clear();
        l.held_write = None;
        l.synced = false;
        l.proposals.clear();
        l.to_follower = follower.try_clone().ok();
        l.link
    };
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut follower_in, &mut server_out);
        let _ = server_out.shutdown(Shutdown::Both);
    });
    let mut from_server = BufReader::new(server);
    let mut snapshot = false;
    loop {
        let mut bytes = Vec::new();
        let read = match snapshot {
            true => skip_snapshot(&mut from_server, &mut bytes).map(|_| None),
            false => read_packet(&mut from_server, &mut bytes).map(Some),
        };
        let mut l = lock();
        if l.link != id {
            return;
        }
        match read {
            Ok(None) => {
                snapshot = false;
                l.forward(&bytes);
            }
            Ok(Some((kind, zxid, data))) => {
                snapshot = kind == packet::SNAP;
                l.on_packet(kind, zxid, data.as_deref(), bytes);
            }
            Err(_) => {
                l.to_follower = None;
                let _ = follower.shutdown(Shutdown::Both);
                return;
            }
        }
    }
}

/// Reads one `QuorumPacket` (type, zxid, data, auth), keeping its bytes.
fn read_packet(r: &mut impl Read, bytes: &mut Vec<u8>) -> std::io::Result<(i32, i64, Option<Vec<u8>>)> {
    let kind = int(r, bytes)?;
    let zxid = long(r, bytes)?;
    let data = buffer(r, bytes)?;
    let auth = int(r, bytes)?;
    for _ in 0..auth.max(0) {
        buffer(r, bytes)?; // scheme
        buffer(r, bytes)?; // id
    }
    Ok((kind, zxid, data))
}

/// Reads a `SNAP` packet's snapshot through its signature, keeping its bytes.
fn skip_snapshot(r: &mut impl Read, bytes: &mut Vec<u8>) -> std::io::Result<()> {
    while !bytes.ends_with(SNAP_SIGNATURE) {
        let mut b = [0u8; 1];
        r.read_exact(&mut b)?;
        bytes.push(b[0]);
    }
    Ok(())
}

fn exact<const N: usize>(r: &mut impl Read, bytes: &mut Vec<u8>) -> std::io::Result<[u8; N]> {
    let mut b = [0u8; N];
    r.read_exact(&mut b)?;
    bytes.extend_from_slice(&b);
    Ok(b)
}

fn int(r: &mut impl Read, bytes: &mut Vec<u8>) -> std::io::Result<i32> {
    Ok(i32::from_be_bytes(exact::<4>(r, bytes)?))
}

fn long(r: &mut impl Read, bytes: &mut Vec<u8>) -> std::io::Result<i64> {
    Ok(i64::from_be_bytes(exact::<8>(r, bytes)?))
}

/// A length-prefixed buffer (or string); `None` for length -1.
fn buffer(r: &mut impl Read, bytes: &mut Vec<u8>) -> std::io::Result<Option<Vec<u8>>> {
    let length = int(r, bytes)?;
    if length < 0 {
        return Ok(None);
    }
    if length > 64 << 20 {
        return Err(std::io::Error::other(format!("a quorum buffer of {length} bytes")));
    }
    let mut data = vec![0u8; length as usize];
    r.read_exact(&mut data)?;
    bytes.extend_from_slice(&data);
    Ok(Some(data))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commit(zxid: i64) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&packet::COMMIT.to_be_bytes());
        b.extend_from_slice(&zxid.to_be_bytes());
        b.extend_from_slice(&(-1i32).to_be_bytes());
        b.extend_from_slice(&(-1i32).to_be_bytes());
        b
    }

    fn header(session: i64, zxid: i64, txn: i32) -> Vec<u8> {
        let mut h = Vec::new();
        h.extend_from_slice(&session.to_be_bytes());
        h.extend_from_slice(&7i32.to_be_bytes());
        h.extend_from_slice(&zxid.to_be_bytes());
        h.extend_from_slice(&0i64.to_be_bytes());
        h.extend_from_slice(&txn.to_be_bytes());
        h
    }

    /// A follower held one write behind, fed through a socket pair so what it received is read.
    fn held() -> (Lag, TcpStream) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let out = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (inbound, _) = listener.accept().unwrap();
        inbound.set_read_timeout(Some(std::time::Duration::from_millis(200))).unwrap();
        let lag = Lag { holding: true, synced: true, to_follower: Some(out), ..Lag::default() };
        (lag, inbound)
    }

    fn received(from: &mut TcpStream) -> Vec<i64> {
        let mut zxids = Vec::new();
        let mut bytes = Vec::new();
        while let Ok((_, zxid, _)) = read_packet(from, &mut bytes) {
            zxids.push(zxid);
        }
        zxids
    }

    fn propose_and_commit(lag: &mut Lag, session: i64, zxid: i64, txn: i32) {
        let h = header(session, zxid, txn);
        lag.on_packet(packet::PROPOSAL, zxid, Some(&h), Vec::new());
        lag.on_packet(packet::COMMIT, zxid, None, commit(zxid));
    }

    #[test]
    fn the_follower_applies_every_write_but_the_newest_and_what_came_after_it() {
        let (mut lag, mut follower) = held();
        propose_and_commit(&mut lag, 5, 10, 1); // a create
        propose_and_commit(&mut lag, 6, 11, -10); // a session opens: held behind the create
        assert_eq!(lag.behind(), Some(10));
        propose_and_commit(&mut lag, 5, 12, 2); // a delete: the create and the session go through
        assert_eq!(lag.behind(), Some(12));
        assert_eq!(lag.writes.iter().copied().collect::<Vec<_>>(), vec![10, 12]);
        drop(lag);
        assert_eq!(received(&mut follower), vec![10, 11]);
    }

    #[test]
    fn a_write_of_a_session_on_the_follower_releases_everything_up_to_it() {
        let (mut lag, mut follower) = held();
        lag.local.insert(9);
        propose_and_commit(&mut lag, 5, 10, 1);
        propose_and_commit(&mut lag, 9, 11, 5); // its own setData
        assert_eq!(lag.behind(), None);
        drop(lag);
        assert_eq!(received(&mut follower), vec![10, 11]);
    }

    #[test]
    fn nothing_is_held_before_the_follower_is_in_sync_or_when_not_holding() {
        let (mut lag, mut follower) = held();
        lag.synced = false;
        propose_and_commit(&mut lag, 5, 10, 1);
        lag.synced = true;
        lag.holding = false;
        propose_and_commit(&mut lag, 5, 11, 1);
        assert_eq!(lag.behind(), None);
        drop(lag);
        assert_eq!(received(&mut follower), vec![10, 11]);
    }

    impl Lag {
        fn behind(&self) -> Option<i64> {
            self.held_write
        }
    }
}
