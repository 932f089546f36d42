//! A read/write lock in the style of Curator's `InterProcessReadWriteLock`.
//!
//! **Source.** Curator's `InterProcessReadWriteLock`: its `WriteLock` and `ReadLock` are
//! `InterProcessMutex`es (`LockInternals`) with a sorting `StandardLockInternalsDriver`; the read
//! side's predicate (`readLockPredicate` in 2015, now its driver's `getsTheLock`) decides. It
//! reproduces CURATOR-211 (the read predicate's own index, fixed in 2015) and CURATOR-621 (the
//! downgrade, reported as CURATOR-276 in 2015, fixed in 2023).
//!
//! **What it does.** Both sides are Curator mutexes over one lock node, distinguished by the lock
//! name in their protected node names: `_c_<guid>-__READ__<seq>` and `_c_<guid>-__WRIT__<seq>`
//! (ephemeral, sequential; children are sorted by the sequence after either name). The write side
//! uses the standard driver: it holds the lock when its node is first, else it watches the node
//! just before it. The read side's `readLockPredicate` gets the lock at once when the same client
//! holds the write lock (which is what makes a write-to-read downgrade possible: acquire write,
//! acquire read, release write); otherwise it walks the sorted children up to its own node,
//! remembering the first write node, and holds the lock when no write node comes before its own,
//! else watches that first write node. Like every Curator lock it waits with getData and a watcher
//! that wakes on any event (NoNode means the node is gone: look again), adopts its protected node
//! after a ConnectionLoss on create, deletes with `guaranteed()` on release, and keeps looping when
//! woken by session expiry: on the new session it lists again. A listing without its own node
//! throws NoNode from `validateOurIndex`, and the retry policy makes the acquire start over with a
//! new node. The downgrade (`curator-rw-downgrade`) is the fixed one of CURATOR-621: the read lock
//! of a client that holds the write lock is created as a plain ephemeral node carrying the write
//! node's sequence number, so it queues where the write node was.
//!
//! **What it gets wrong.** `curator-rw-reader`, `curator-rw-writer` and `curator-rw-downgrade`:
//! nothing the model can show. The two variants from before the fixes:
//! - `curator-rw-reader-211`: before CURATOR-211 the predicate's own index started at
//!   `Integer.MAX_VALUE`, so the missing-node check could never fire: a waiting reader whose
//!   session had expired (and whose node was gone with it) kept waiting on the first write node in
//!   the queue, and with no write node left, `children.get(Integer.MAX_VALUE)` threw
//!   IndexOutOfBoundsException out of `acquire()`. The checker catches it as an acquire that never
//!   completes (rw-vanished-own-node in docs/shared-locks.md).
//! - `curator-rw-downgrade-621`: before CURATOR-621 the downgrade's read node was a new sequential
//!   node, behind any writer already waiting; releasing the write lock then let that writer in
//!   beside the downgraded reader (downgrade-lets-writer-in in docs/shared-locks.md).
//!
//! **What the model leaves out.** Reentrancy counts (each client acquires once per round) and the
//! thread identity behind "owned by the current thread", which here is the client itself. The guid
//! in a protected name is the client and its session, not a fresh random uuid per create, so a node
//! made by an earlier session is never found again (what CURATOR-498's session check ensures in
//! Curator). Children are ordered by the signed counter, where Curator compares the text after the
//! lock name; the two differ only after the counter wraps. Also not modelled: lock node data,
//! acquire timeouts, the retry policy's limits and revocation.

use crate::rw_queue::{AfterExpiry, OwnNodeMissing, ReaderWatches, Role, RwQueue, Style, WaitWith, WakeOn};

pub const STYLE: Style = Style {
    read_marker: "-__READ__",
    write_marker: "-__WRIT__",
    guid_prefix: "_c_",
    reader_watches: ReaderWatches::FirstWrite,
    wake_on: WakeOn::AnyEvent,
    wait_with: WaitWith::GetData,
    after_expiry: AfterExpiry::KeepWaiting,
    own_node_missing: OwnNodeMissing::Recreate,
    downgrade_in_place: true,
};

pub fn reader(name: &'static str, lock_path: &str) -> RwQueue {
    RwQueue::new(name, lock_path, Role::Reader, STYLE)
}

pub fn writer(name: &'static str, lock_path: &str) -> RwQueue {
    RwQueue::new(name, lock_path, Role::Writer, STYLE)
}

/// A writer that downgrades to the read lock instead of releasing the write lock outright.
pub fn downgrading_writer(name: &'static str, lock_path: &str) -> RwQueue {
    RwQueue::new(name, lock_path, Role::DowngradingWriter, STYLE)
}

/// The downgrading writer as it was before CURATOR-621: its read node queues behind a writer
/// already waiting, which takes the write lock when the downgrade lets go of it.
pub fn downgrading_writer_before_621(name: &'static str, lock_path: &str) -> RwQueue {
    let style = Style { downgrade_in_place: false, ..STYLE };
    RwQueue::new(name, lock_path, Role::DowngradingWriter, style)
}

/// The reader as it was before CURATOR-211.
pub fn reader_before_211(name: &'static str, lock_path: &str) -> RwQueue {
    let style = Style { own_node_missing: OwnNodeMissing::WatchFirstWrite, ..STYLE };
    RwQueue::new(name, lock_path, Role::Reader, style)
}
