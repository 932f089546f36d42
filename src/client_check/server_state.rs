//! The served server's state in a canonical form, so that a campaign can count the distinct
//! server-side states its schedules covered (beside the checker's state count for a model of
//! the same lock).
//!
//! Two runs of one schedule leave the model in states that differ only in what the clients
//! choose at random or the order their first handshakes happen to arrive in: kazoo's and
//! Curator's lock nodes carry a uuid, WriteLock's the session id, and session ids are handed out
//! in handshake order. Counted raw, those would be counted as coverage. The canonical form
//! keeps what a lock can observe and drops what is noise:
//!
//! - a session is named by the client whose handshake opened it and which of that client's
//!   sessions it is (`c1`, then `c1'1` after an expiry), with its status;
//! - a sequential node's name keeps its prefix, with every run of hex digits and dashes in it
//!   that holds eight or more hex digits (a uuid, a session id) replaced by `*`, and its
//!   10-digit suffix replaced by its rank among the sequence numbers the state mentions under
//!   that parent (its children and the paths watched there), as the checker's renumbering
//!   ranks them; its owner by its session's name;
//! - zxids, the parent's sequence counter and a cversion beyond "none or some" are dropped, as
//!   the checker's renumbering drops or ranks them; data versions and data (hex runs replaced)
//!   are kept;
//! - each session's data and child watches, by path in the same form.
//!
//! The in-flight requests and frames are the scheduler's, not the server's, and are not part of
//! it. `tests/client_check.rs` shows two runs of one schedule give the same states.

use super::switchboard::Switchboard;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::hash::Hasher;
use zklab_model::path;
use zklab_model::server::SessionStatus;

/// A 64-bit fingerprint of the canonical form of the switchboard's served server.
pub fn fingerprint(board: &Switchboard) -> u64 {
    let mut hasher = rustc_hash::FxHasher::default();
    hasher.write(canonical(board).as_bytes());
    hasher.finish()
}

/// The canonical form, as text (see the module's doc).
pub fn canonical(board: &Switchboard) -> String {
    let server = board.served().server();
    let session_name = |s| match board.owner_of(s) {
        Some((client, 0)) => format!("c{client}"),
        Some((client, k)) => format!("c{client}'{k}"),
        None => "?".to_string(),
    };
    // Each session by its name, with its status and its data and child watches.
    let mut sessions: Vec<_> = server
        .sessions()
        .map(|(id, info)| {
            let (data, child) = server.watches_of(*id);
            (session_name(*id), info.status, data, child)
        })
        .collect();
    sessions.sort_by(|a, b| a.0.cmp(&b.0));
    // The sequence numbers each parent's names mention, for their ranks.
    let mut numbers: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    let all_paths: Vec<&str> = server
        .tree()
        .iter()
        .map(|(p, _)| p.as_str())
        .chain(sessions.iter().flat_map(|(_, _, d, c)| d.iter().chain(c).map(String::as_str)))
        .collect();
    for p in &all_paths {
        if let Some(suffix) = suffix(path::name(p)) {
            numbers.entry(path::parent(p)).or_default().insert(suffix);
        }
    }
    let name = |p: &str| if p == "/" { "/".to_string() } else { name_of(p, &numbers) };
    let mut text = String::new();
    let mut nodes: Vec<(String, String)> = server
        .tree()
        .iter()
        .map(|(p, n)| {
            let owner = n.owner.map_or("-".to_string(), session_name);
            let cversion = if n.cversion > 0 { "some" } else { "none" };
            (name(p), format!("owner {owner} v{} children {cversion} data {}", n.version, scrub(&n.data)))
        })
        .collect();
    nodes.sort();
    for (p, n) in nodes {
        let _ = writeln!(text, "node {p} {n}");
    }
    for (s, status, _, _) in &sessions {
        let status = match status {
            SessionStatus::Open => "open",
            SessionStatus::Closed => "closed",
            SessionStatus::Expired => "expired",
        };
        let _ = writeln!(text, "session {s} {status}");
    }
    for (s, _, data, child) in &sessions {
        let mut data: Vec<String> = data.iter().map(|p| name(p)).collect();
        let mut child: Vec<String> = child.iter().map(|p| name(p)).collect();
        data.sort();
        child.sort();
        let _ = writeln!(text, "watches {s} data {data:?} child {child:?}");
    }
    text
}

/// A path's canonical form, its parents' names canonical too.
fn name_of(p: &str, numbers: &BTreeMap<&str, BTreeSet<&str>>) -> String {
    if p == "/" {
        return String::new();
    }
    let parent = path::parent(p);
    let mut out = name_of(parent, numbers);
    out.push('/');
    out.push_str(&component(path::name(p), numbers.get(parent)));
    out
}

/// One name: a sequential one as its scrubbed prefix and the rank of its suffix among `ranks`.
fn component(name: &str, ranks: Option<&BTreeSet<&str>>) -> String {
    match suffix(name) {
        Some(s) => {
            let rank = ranks.map_or(0, |r| r.range(..s).count());
            format!("{}#{rank}", scrub(&name[..name.len() - s.len()]))
        }
        None => scrub(name),
    }
}

/// A sequential name's 10-digit suffix (ZooKeeper's `%010d`), if it has one.
pub fn suffix(name: &str) -> Option<&str> {
    let tail = name.len().checked_sub(10).and_then(|at| name.get(at..))?;
    tail.bytes().all(|b| b.is_ascii_digit()).then_some(tail)
}

/// `text` with every run of hex digits and dashes that holds eight or more hex digits (a uuid,
/// with its dashes or without, a session id) replaced by `*`.
fn scrub(text: &str) -> String {
    let mut out = String::new();
    let mut run = String::new();
    let flush = |out: &mut String, run: &mut String| {
        match run.bytes().filter(u8::is_ascii_hexdigit).count() >= 8 {
            true => out.push('*'),
            false => out.push_str(run),
        }
        run.clear();
    };
    for ch in text.chars() {
        if ch.is_ascii_hexdigit() || ch == '-' {
            run.push(ch);
            continue;
        }
        flush(&mut out, &mut run);
        out.push(ch);
    }
    flush(&mut out, &mut run);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sequential_name_keeps_its_prefix_without_its_uuid_and_ranks_its_suffix() {
        let ranks: BTreeSet<&str> = ["0000000004", "0000000009"].into_iter().collect();
        let kazoo = "7d1e4b36f0a94e0c9a5b2f1c3d4e5f60__lock__0000000009";
        assert_eq!(component(kazoo, Some(&ranks)), "*__lock__#1");
        assert_eq!(component("x-72057594037927936-0000000004", Some(&ranks)), "x*#0");
        let curator = "_c_3f2b1a9c-1d2e-4f5a-8b6c-0a1b2c3d4e5f-lock-0000000004";
        assert_eq!(component(curator, Some(&ranks)), "_c_*lock-#0");
        assert_eq!(component("lock", Some(&ranks)), "lock");
        // A name too short to be sequential, and a hex run too short to be random, stay.
        assert_eq!(component("0001", None), "0001");
        assert_eq!(scrub("127.0.0.1"), "127.0.0.1");
    }
}
