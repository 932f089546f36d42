//! The shared (read/write) lock from the ZooKeeper recipes page ("Shared Locks").
//!
//! **Source.** ZooKeeper's recipes page, "Shared Locks", and for its error handling the exclusive
//! lock's "Recoverable Errors and the GUID", which the section points to. It reproduces no issue.
//!
//! **What it does.** A reader creates `<lock>/<guid>-read-` and a writer `<lock>/<guid>-write-`,
//! both ephemeral and sequential, so that readers and writers share one sequence. Each then lists
//! the children without a watch (to avoid the herd). A reader holds the lock when no `write-` node
//! has a lower sequence number; otherwise it calls exists() with a watch on the `write-` node with
//! the next lower sequence number. A writer holds the lock when no node at all is lower; otherwise
//! it watches the next lower node, whatever its kind. exists() returning null means list again;
//! otherwise wait for the notification and list again. Release deletes the node. Error handling is
//! the page's advice for the exclusive lock, which the shared lock section inherits: the guid
//! (client and session) in the name lets a client whose create failed with ConnectionLoss list the
//! children and adopt its node instead of leaving an orphan; a release retries its delete until it
//! succeeds or the node is gone; a dropped connection suspends a holder; an expired session ends
//! the attempt or the hold.
//!
//! **What it gets wrong.** Nothing the model can show: the checker finds nothing wrong with it (see
//! docs/shared-locks.md for the figures). What it shows is what no lock can prevent: a reader
//! paused past its session's expiry still believes it reads while a writer holds, and its read,
//! under a stale token, is refused by the resource. Mixing it with Curator's read/write lock on one
//! path does break exclusion: each ignores the other's node names.
//!
//! **What the model leaves out.** The guid is the client and its session, where a real client would
//! use a random one. The page says only "sequence number"; contenders are ordered by the signed
//! counter, which is wrong after the 32-bit wrap. Nodes carry no data, the lock node exists from
//! the start, and there are no timeouts or retry limits. Revocation is in `revocable.rs`.

use crate::rw_queue::{AfterExpiry, OwnNodeMissing, ReaderWatches, Role, RwQueue, Style, WaitWith, WakeOn};

pub const STYLE: Style = Style {
    read_marker: "-read-",
    write_marker: "-write-",
    guid_prefix: "",
    reader_watches: ReaderWatches::LastWriteBefore,
    wake_on: WakeOn::Deletion,
    wait_with: WaitWith::Exists,
    after_expiry: AfterExpiry::GiveUp,
    own_node_missing: OwnNodeMissing::Recreate,
    downgrade_in_place: false,
};

/// A client that takes the read side of the lock at `lock_path`.
pub fn reader(name: &'static str, lock_path: &str) -> RwQueue {
    RwQueue::new(name, lock_path, Role::Reader, STYLE)
}

/// A client that takes the write side of the lock at `lock_path`.
pub fn writer(name: &'static str, lock_path: &str) -> RwQueue {
    RwQueue::new(name, lock_path, Role::Writer, STYLE)
}
