//! The state machine under every read/write lock in the catalogue.
//!
//! **Source.** ZooKeeper's recipes page ("Shared Locks") and Curator's `InterProcessReadWriteLock`.
//! They differ in how they name nodes, which writer a reader watches, how they watch, what they do
//! after their session expired and what a missing own node means; `Style` carries exactly those
//! decisions (and Curator's downgrade), and the recipe files (`shared_lock.rs`, `curator_rw.rs`)
//! say which choices come from which source. The revocable lock (`revocable.rs`) wraps it.
//!
//! **What it does.** Readers and writers queue as ephemeral-sequential children of one lock node; a
//! writer waits for everyone before it, a reader only for writers before it: the one just before it
//! (the recipes page) or the first in the queue (Curator). A waiter watches the node that blocks it
//! with exists() or getData() and looks again when it is gone, on the events its style wakes on,
//! and after a reconnect. After a ConnectionLoss on create a client lists the children and adopts
//! the node carrying its guid. Release is a guaranteed delete: retried after ConnectionLoss until
//! the node or the session is gone. A dropped connection suspends a holder. A downgrading writer
//! acquires the read lock while it still holds the write lock, then releases the write lock, and
//! later the read lock.
//!
//! **What it gets wrong.** Nothing of its own; each flaw is one choice of `Style`, named in the
//! recipe files:
//! - `OwnNodeMissing::WatchFirstWrite`: CURATOR-211 (`curator-rw-reader-211`).
//! - `downgrade_in_place: false` with Curator's names: CURATOR-621 (`curator-rw-downgrade-621`).
//! - `WakeOn::Deletion` under revocation: revocation-consumes-watch
//!   (`revocable-reader-deletion-only`).
//!
//! **What the model leaves out.** The guid is the client and its session. Whatever the style,
//! contenders are ordered by the signed counter, which is wrong after the 32-bit wrap; Curator
//! compares the text after the lock name instead. Not modelled: reentrancy, thread ownership, lock
//! node data, timeouts and retry limits.

use crate::queue::{find_own, Order, Queue};
use zklab_model::path;
use zklab_model::Listing;
use zklab_model::{
    Belief, CreateMode, Ctx, EventType, Input, Mode, Request, Response, SessionState, ZkError, ZkResult,
};

/// What a client asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    Reader,
    Writer,
    /// A writer that, asked to release, downgrades: it acquires the read lock while it still
    /// holds the write lock, then releases the write lock, and later the read lock.
    DowngradingWriter,
}

/// Which earlier writer a blocked reader watches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReaderWatches {
    /// The write node with the next lower sequence number (the recipes page).
    LastWriteBefore,
    /// The first write node in the queue (Curator's `readLockPredicate`).
    FirstWrite,
}

/// How a waiter watches the node before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WaitWith {
    /// exists(watch): null means gone, list again.
    Exists,
    /// getData(watch): NoNode means gone (and arms nothing).
    GetData,
}

/// Which events on the watched node wake a waiter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WakeOn {
    /// Only its deletion (an exists watch waiting for the node to go).
    Deletion,
    /// Any event: the watch is one-shot, so whatever consumed it, look again.
    AnyEvent,
}

/// What a client still acquiring does once its session has expired.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AfterExpiry {
    /// Gives up: the application is told the attempt failed.
    GiveUp,
    /// Keeps going on the new session from where it was (Curator's lock loop, woken by the
    /// Expired event, lists the children again).
    KeepWaiting,
}

/// What a listing without the client's own node means.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OwnNodeMissing {
    /// The node is gone with an old session: create a new one.
    Recreate,
    /// CURATOR-211: the reader's index stays at its initial value, so it never gets the lock
    /// and watches the first write node, whoever owns it; with no write node left, reading the
    /// child at that index throws and the acquire fails with nothing the caller can act on.
    WatchFirstWrite,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Style {
    /// What follows the guid in a read node's name, before the sequence number.
    pub read_marker: &'static str,
    pub write_marker: &'static str,
    /// Put in front of the guid (Curator's protected-name prefix `_c_`).
    pub guid_prefix: &'static str,
    pub reader_watches: ReaderWatches,
    pub wait_with: WaitWith,
    pub wake_on: WakeOn,
    pub after_expiry: AfterExpiry,
    pub own_node_missing: OwnNodeMissing,
    /// A downgrading writer creates its read node as a plain ephemeral carrying its write
    /// node's sequence number, so that the read queues where the write was (CURATOR-621's
    /// fix); otherwise the read node is sequential and queues behind every waiting writer.
    pub downgrade_in_place: bool,
}

/// Which side of the lock a node queues for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Side {
    Read,
    Write,
}

/// Where a downgrading writer is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Downgrade {
    No,
    /// Holds the write lock and is acquiring the read lock.
    Reading,
    /// Holds the read lock (the write node may still be being deleted).
    Done,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Phase {
    Idle,
    Creating,
    /// A create failed with ConnectionLoss: listing to find our tagged node.
    Recovering,
    Listing,
    /// The watch on the node before us is being set.
    Checking(String),
    Waiting(String),
    Holding,
    Suspended,
    Releasing,
    /// The acquire failed with an exception the caller cannot act on (CURATOR-211): the
    /// application never got the lock it asked for, and nothing will give it to it.
    Failed,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RwQueue {
    name: &'static str,
    style: Style,
    role: Role,
    lock_path: String,
    phase: Phase,
    /// The node of the current attempt (the read node once a downgrade has begun).
    node: Option<String>,
    /// A downgrading writer's write node, held while it acquires the read lock.
    write_node: Option<String>,
    downgrade: Downgrade,
    /// The connection dropped while a downgrade was under way: the write lock may be lost.
    cut_off: bool,
}

impl RwQueue {
    pub fn new(name: &'static str, lock_path: &str, role: Role, style: Style) -> Self {
        RwQueue {
            name,
            style,
            role,
            lock_path: lock_path.to_string(),
            phase: Phase::Idle,
            node: None,
            write_node: None,
            downgrade: Downgrade::No,
            cut_off: false,
        }
    }

    /// The kind of node the current attempt creates.
    fn kind(&self) -> Side {
        match (self.role, self.downgrade) {
            (Role::Reader, _) | (Role::DowngradingWriter, Downgrade::Reading | Downgrade::Done) => Side::Read,
            _ => Side::Write,
        }
    }

    fn marker(&self, kind: Side) -> &'static str {
        match kind {
            Side::Read => self.style.read_marker,
            Side::Write => self.style.write_marker,
        }
    }

    /// The name our node starts with: guid and marker; the server appends the sequence.
    fn own_prefix(&self, ctx: &Ctx) -> String {
        format!("{}c{}-{}{}", self.style.guid_prefix, ctx.client, ctx.session, self.marker(self.kind()))
    }

    /// The sequence number and kind of a child, or `None` for names that are not contenders:
    /// one line of two kinds, each named with its marker, by sequence number.
    fn contender(&self, name: &str) -> Option<(i32, Side)> {
        [Side::Read, Side::Write]
            .into_iter()
            .find_map(|kind| Some((Queue::new(self.marker(kind), Order::Signed).sequence(name)?, kind)))
    }

    fn create(&mut self, ctx: &Ctx, out: &mut Vec<Request>) {
        self.phase = Phase::Creating;
        self.node = None;
        let prefix = path::join(&self.lock_path, &self.own_prefix(ctx));
        let write_sequence = self.write_node.as_deref().and_then(|w| self.contender(path::name(w)));
        match write_sequence {
            Some((seq, _)) if self.style.downgrade_in_place && self.downgrade == Downgrade::Reading => {
                out.push(Request::create(&format!("{prefix}{}", path::sequence_suffix(seq)), CreateMode::Ephemeral))
            }
            _ => out.push(Request::create(&prefix, CreateMode::EphemeralSequential)),
        }
    }

    fn list(&mut self, phase: Phase, out: &mut Vec<Request>) {
        self.phase = phase;
        out.push(Request::get_children(&self.lock_path, false));
    }

    fn watch(&mut self, node: String, out: &mut Vec<Request>) {
        out.push(match self.style.wait_with {
            WaitWith::Exists => Request::exists(&node, true),
            WaitWith::GetData => Request::get_data(&node, true),
        });
        self.phase = Phase::Checking(node);
    }

    /// The lock is ours: a downgrading writer that now also holds the read lock lets go of
    /// the write lock.
    fn granted(&mut self, out: &mut Vec<Request>) {
        self.phase = Phase::Holding;
        if self.downgrade == Downgrade::Reading {
            self.downgrade = Downgrade::Done;
            if let Some(write) = &self.write_node {
                out.push(Request::delete(write));
            }
        }
    }

    fn on_children(&mut self, ctx: &Ctx, children: &Listing, out: &mut Vec<Request>) {
        if self.phase == Phase::Recovering {
            let mine = self.own_prefix(ctx);
            match find_own(children, &mine) {
                Some(found) => self.node = Some(path::join(&self.lock_path, found)),
                None => return self.create(ctx, out),
            }
        }
        let Some(node) = self.node.clone() else { return self.create(ctx, out) };
        let mut queue: Vec<(i32, Side, String)> =
            children.iter().filter_map(|c| self.contender(c).map(|(seq, kind)| (seq, kind, c.clone()))).collect();
        queue.sort();
        let first_write = queue.iter().position(|(_, kind, _)| *kind == Side::Write);
        let Some(position) = queue.iter().position(|(_, _, c)| c == path::name(&node)) else {
            return match (self.style.own_node_missing, self.kind(), first_write) {
                (OwnNodeMissing::WatchFirstWrite, Side::Read, Some(w)) => {
                    self.watch(path::join(&self.lock_path, &queue[w].2), out)
                }
                (OwnNodeMissing::WatchFirstWrite, Side::Read, None) => self.phase = Phase::Failed,
                _ => self.create(ctx, out),
            };
        };
        let blocker = match self.kind() {
            // Curator: a reader whose own thread holds the write lock gets the read lock.
            Side::Read if self.downgrade == Downgrade::Reading => None,
            Side::Read => match self.style.reader_watches {
                ReaderWatches::LastWriteBefore => queue[..position].iter().rposition(|(_, k, _)| *k == Side::Write),
                ReaderWatches::FirstWrite => first_write.filter(|w| *w < position),
            },
            Side::Write => position.checked_sub(1),
        };
        match blocker {
            None => self.granted(out),
            Some(b) => self.watch(path::join(&self.lock_path, &queue[b].2), out),
        }
    }

    fn on_reply(&mut self, ctx: &Ctx, request: Request, result: ZkResult, out: &mut Vec<Request>) {
        // A downgrading writer's write node: deleted, or gone anyway.
        if matches!(&request, Request::Delete { path, .. } if Some(path) == self.write_node.as_ref()) {
            match result {
                Err(ZkError::ConnectionLoss) => out.push(request),
                _ => self.write_node = None,
            }
            return;
        }
        match (&self.phase, request, result) {
            (_, _, Err(ZkError::SessionExpired)) if self.style.after_expiry == AfterExpiry::GiveUp => self.reset(),
            // The Expired event that follows decides.
            (_, _, Err(ZkError::SessionExpired)) => {}
            (Phase::Creating, Request::Create { .. }, Ok(Response::Created { path, .. })) => {
                self.node = Some(path);
                self.list(Phase::Listing, out);
            }
            (Phase::Creating, Request::Create { .. }, Err(ZkError::ConnectionLoss)) => {
                self.list(Phase::Recovering, out)
            }
            (
                Phase::Listing | Phase::Recovering,
                Request::GetChildren { .. },
                Ok(Response::Children { children, .. }),
            ) => self.on_children(ctx, &children, out),
            (Phase::Listing | Phase::Recovering, Request::GetChildren { .. }, Err(_)) => {
                let phase = self.phase.clone();
                self.list(phase, out)
            }
            (Phase::Checking(watched), Request::Exists { .. } | Request::GetData { .. }, Ok(found)) => {
                if matches!(found, Response::Exists(None)) {
                    self.list(Phase::Listing, out)
                } else {
                    self.phase = Phase::Waiting(watched.clone())
                }
            }
            (Phase::Checking(_), Request::Exists { .. } | Request::GetData { .. }, Err(_)) => {
                self.list(Phase::Listing, out)
            }
            (Phase::Releasing, Request::Delete { .. }, Ok(_) | Err(ZkError::NoNode)) => self.reset(),
            // Guaranteed delete: keep trying until the node or the session is gone.
            (Phase::Releasing, Request::Delete { path, .. }, Err(ZkError::ConnectionLoss)) => {
                out.push(Request::delete(&path))
            }
            _ => {}
        }
    }

    fn on_event(&mut self, kind: EventType, event_path: &str, out: &mut Vec<Request>) {
        if let Phase::Waiting(watched) = &self.phase {
            let wakes = self.style.wake_on == WakeOn::AnyEvent || kind == EventType::NodeDeleted;
            if wakes && watched == event_path {
                self.list(Phase::Listing, out);
            }
        }
    }

    fn on_expired(&mut self, ctx: &Ctx, out: &mut Vec<Request>) {
        let acquiring = matches!(
            self.phase,
            Phase::Creating | Phase::Recovering | Phase::Listing | Phase::Checking(_) | Phase::Waiting(_)
        );
        if !acquiring || self.style.after_expiry == AfterExpiry::GiveUp || self.downgrade != Downgrade::No {
            return self.reset();
        }
        match self.node {
            Some(_) => self.list(Phase::Listing, out),
            None => self.create(ctx, out),
        }
    }

    fn release(&mut self, out: &mut Vec<Request>) {
        if self.role == Role::DowngradingWriter && self.downgrade == Downgrade::No {
            // Downgrade: acquire the read lock while still holding the write lock.
            self.downgrade = Downgrade::Reading;
            self.write_node = self.node.take();
            return;
        }
        self.phase = Phase::Releasing;
        out.push(Request::delete(self.node.as_deref().expect("holding implies a node")));
    }

    fn reset(&mut self) {
        self.phase = Phase::Idle;
        self.node = None;
        self.write_node = None;
        self.downgrade = Downgrade::No;
        self.cut_off = false;
    }

    fn token(&self) -> i64 {
        let node = if self.downgrade == Downgrade::Reading { self.write_node.as_deref() } else { self.node.as_deref() };
        node.and_then(|n| self.contender(path::name(n))).map_or(0, |(seq, _)| i64::from(seq))
    }

    /// The same lock, woken by `wake_on`.
    pub fn waking_on(mut self, wake_on: WakeOn) -> Self {
        self.style.wake_on = wake_on;
        self
    }

    /// The node the current attempt created or adopted, if any.
    pub fn node(&self) -> Option<&str> {
        self.node.as_deref()
    }

    /// The node being watched right now, while the watch is being set.
    pub fn checking(&self) -> Option<&str> {
        match &self.phase {
            Phase::Checking(node) => Some(node),
            _ => None,
        }
    }

    /// Gives up the lock or the attempt (a revocation): delete our node if we have one.
    pub fn give_up(&mut self, out: &mut Vec<Request>) {
        match self.node.clone() {
            Some(node) if !matches!(self.phase, Phase::Idle | Phase::Releasing) => {
                self.phase = Phase::Releasing;
                out.push(Request::delete(&node));
            }
            _ => {}
        }
    }
}

impl zklab_model::Recipe for RwQueue {
    fn name(&self) -> String {
        self.name.to_string()
    }

    fn handle(&mut self, ctx: &Ctx, input: Input, out: &mut Vec<Request>) {
        match input {
            Input::Acquire if self.phase == Phase::Idle => self.create(ctx, out),
            Input::Release if self.phase == Phase::Holding && self.downgrade != Downgrade::Reading => {
                self.release(out);
                if self.downgrade == Downgrade::Reading {
                    self.create(ctx, out);
                }
            }
            Input::Reply { request, result } => self.on_reply(ctx, request, result, out),
            Input::Watch(event) => self.on_event(event.kind, &event.path, out),
            Input::State(SessionState::Disconnected) if self.downgrade == Downgrade::Reading => self.cut_off = true,
            Input::State(SessionState::Disconnected) if self.phase == Phase::Holding => self.phase = Phase::Suspended,
            Input::State(SessionState::SyncConnected) if self.cut_off => {
                self.cut_off = false;
                if let Phase::Waiting(_) = self.phase {
                    self.list(Phase::Listing, out)
                }
            }
            Input::State(SessionState::SyncConnected) => match self.phase {
                Phase::Suspended => self.phase = Phase::Holding,
                // A client library that dropped its watches will never wake us: look again.
                Phase::Waiting(_) => self.list(Phase::Listing, out),
                _ => {}
            },
            Input::State(SessionState::Expired) => self.on_expired(ctx, out),
            _ => {}
        }
    }

    fn belief(&self) -> Belief {
        if self.downgrade == Downgrade::Reading {
            // Still holds the write lock while it acquires the read lock.
            return match self.cut_off {
                true => Belief::Suspended { token: self.token() },
                false => Belief::Holding { token: self.token() },
            };
        }
        match self.phase {
            Phase::Idle => Belief::Idle,
            Phase::Holding => Belief::Holding { token: self.token() },
            Phase::Suspended => Belief::Suspended { token: self.token() },
            Phase::Releasing => Belief::Releasing,
            _ => Belief::Acquiring,
        }
    }

    fn mode(&self) -> Mode {
        match (self.role, self.downgrade) {
            (Role::Reader, _) => Mode::Read,
            // Once it has let go of the write lock (the delete is on its way) it holds to read.
            (Role::DowngradingWriter, Downgrade::Done) => Mode::Read,
            _ => Mode::Write,
        }
    }

    fn owned_node(&self) -> Option<&str> {
        // While a downgrading writer acquires the read lock, it holds by its write node.
        match self.downgrade {
            Downgrade::Reading => self.write_node.as_deref(),
            _ => self.node.as_deref(),
        }
    }

    fn owned_nodes(&self) -> Vec<&str> {
        self.write_node.iter().chain(self.node.iter()).map(String::as_str).collect()
    }

    fn waits_on_one_node(&self) -> bool {
        true
    }
}
