//! The recipes page's ephemeral-sequential lock ("Locks") and the classic ways to get it wrong.
//!
//! **Source.** ZooKeeper's recipes page: "Locks" (steps 1 to 5 and the unlock), its "Recoverable
//! Errors and the GUID", and the "Important Note About Error Handling" it points to. Each broken
//! variant reproduces a failure reported against real recipes; their ids are listed with the
//! variants below.
//!
//! **What it does.** The correct recipe and its broken variants are knobs (`Style`) on one state
//! machine, so each broken variant differs from the correct one in exactly the decision that breaks
//! it. The recipe: create `<lock>/<guid>-lock-` (ephemeral, sequential); list the children; if ours
//! has the lowest sequence number we hold the lock; otherwise call exists() with a watch on the
//! next lower node; if it returns null go back to listing, else wait for its deletion and list
//! again. Release by deleting our node. The guid (here the client and session) is what lets a
//! client find its node after a ConnectionLoss left it unsure whether the create happened. The
//! correct recipe (`standard`) also retries its delete until the node or the session is gone, lists
//! again when its connection comes back while it waits, suspends a holder whose connection dropped,
//! creates a new node when its own is gone, and orders contenders by serial-number arithmetic (as
//! in RFC 1982), which stays right across the 32-bit wrap of the counter.
//!
//! **What it gets wrong.** `standard`: nothing the model can show, beyond what no recipe can
//! prevent: a holder paused past its session's expiry still believes it holds
//! (holder-outlives-session), and fencing with the node's sequence number is what saves the
//! resource, except across the counter's wrap. The variants:
//! - `parent-watch` (`WaitOn::Parent`): every waiter watches the parent's children, so every create
//!   and delete wakes them all (herd-effect: the recipes page, step 2; Hunt et al. 2010; kazoo
//!   #26).
//! - `blind-retry` (`OnCreateLoss::CreateAgain`): creates again after a ConnectionLoss; if the
//!   first create happened, its node is orphaned and, being lowest, blocks everyone until the
//!   session ends (orphan-after-connloss: the recipes page's error-handling note; go-zookeeper
//!   #229; CURATOR-45).
//! - `wait-on-null` (`OnMissingPredecessor::Wait`): waits even when exists() on its predecessor
//!   returned null; a watch on a deleted sequential node never fires (delete-before-watch: the
//!   recipes page, step 5; kazoo PR #490).
//! - `release-under-connloss` (`OnDeleteLoss::Forget`): a release whose delete fails with
//!   ConnectionLoss counts as done; if the delete was never applied the node stays, and every
//!   waiter waits until the session ends (CURATOR-678, CURATOR-307).
//! - `watches-not-rearmed` (`OnReconnect::KeepWaiting`): ignores the reconnect and trusts its
//!   watch; under a client library that drops its watches on disconnect (kazoo), a predecessor
//!   deleted during the outage never wakes it (kazoo PR #170).
//! - `container-lock-no-recreate` (the standard recipe on a parent the server reaps, as a container
//!   is): assumes the parent exists, as the page does; once it is reaped the create fails NoNode
//!   and the client waits for a lock it never asked for (parent-reaped: CURATOR-308).
//!   `container-lock` (`OnMissingParent::Recreate`) is the fix: it creates the parent again and
//!   retries.
//! - `sequence-wrap` (`Order::Text`, as Curator and kazoo sort) and `sequence-wrap-signed`
//!   (`Order::Signed`, as ZooKeeper's `WriteLock` parses): after the counter wraps, the newest node
//!   sorts before the holder's and two clients hold (ZOOKEEPER-4372).
//!
//! **What the model leaves out.** The guid is the client and its session, where a real client would
//! use a random one. Nodes carry no data. The lock's parent exists from the start except for the
//! container variants. There are no timeouts (see `timeout_lock.rs`), threads or retry limits:
//! every retry goes on for as long as it takes. An application that stops waiting (the
//! `give-up` fault) is let go only while its watch is set, and deletes its node as a release
//! does.

use crate::queue::{find_own, Order, Place, Queue};
use zklab_model::path;
use zklab_model::ClientId;
use zklab_model::Listing;
use zklab_model::Rewrite;
use zklab_model::{
    Belief, CreateMode, Ctx, EventType, Input, Renamer, Renaming, Renumber, Request, Response, SessionId, SessionState,
    ZkError,
};

/// Which node a waiter watches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WaitOn {
    /// Only the next lower node: one wakeup per release.
    Predecessor,
    /// The parent's children: every waiter wakes on every create and delete (the herd).
    Parent,
}

/// What the client does when its create fails with ConnectionLoss.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OnCreateLoss {
    /// List the children and adopt the node carrying our guid, if the create happened.
    FindOwnNode,
    /// Create again: if the first create happened, its node is orphaned and (being lowest)
    /// blocks everyone until the session ends.
    CreateAgain,
}

/// What a waiter does when exists() on its predecessor returns null.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OnMissingPredecessor {
    /// List again: the predecessor is gone, we may be lowest now.
    ListAgain,
    /// Wait for a notification anyway; a watch on a deleted sequential node never fires.
    Wait,
}

/// What the holder does when its release's delete fails with ConnectionLoss.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OnDeleteLoss {
    /// Delete again until the node or the session is gone (Curator's guaranteed delete).
    Retry,
    /// Consider the lock released: if the delete was never applied the node stays, and every
    /// waiter waits until the session ends.
    Forget,
}

/// What a waiter does when its connection comes back with the session intact.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OnReconnect {
    /// List again: a client library that dropped its watches will never wake us.
    Recheck,
    /// Go on waiting for the watch, trusting the library to have re-armed it.
    KeepWaiting,
}

/// What the client does when the lock's parent is gone (a container the server reaped).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OnMissingParent {
    /// Create the parent again and retry (Curator's `creatingParentContainersIfNeeded`).
    Recreate,
    /// Nothing: the recipes page assumes the parent exists; with a container parent the create
    /// fails NoNode and the client waits for a lock it never asked for.
    Stall,
}

/// The decisions that make a lock of this family: a user's variant is the standard one with the
/// decisions it changes, `Style { queue: Queue::new("-mutex-", Order::Text), ..Style::STANDARD }`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Style {
    /// The line: the marker between a node's guid and its counter (the name format, always
    /// `<guid><marker><counter>`, so the contender filter must accept names that end in the
    /// marker and a counter) and the order of contenders.
    pub queue: Queue,
    pub wait_on: WaitOn,
    pub on_create_loss: OnCreateLoss,
    pub on_missing_predecessor: OnMissingPredecessor,
    pub on_delete_loss: OnDeleteLoss,
    pub on_reconnect: OnReconnect,
    pub on_missing_parent: OnMissingParent,
}

impl Style {
    /// The recipes page's lock, every decision made the right way (its parent is assumed to
    /// exist, as the page does).
    pub const STANDARD: Style = Style {
        queue: Queue::new(MARKER, Order::Serial),
        wait_on: WaitOn::Predecessor,
        on_create_loss: OnCreateLoss::FindOwnNode,
        on_missing_predecessor: OnMissingPredecessor::ListAgain,
        on_delete_loss: OnDeleteLoss::Retry,
        on_reconnect: OnReconnect::Recheck,
        on_missing_parent: OnMissingParent::Stall,
    };
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Phase {
    Idle,
    /// The create is in flight.
    Creating,
    /// A create failed with ConnectionLoss: listing to find out whether it happened.
    Recovering,
    /// Listing to learn our position.
    Listing,
    /// exists(predecessor, watch) is in flight.
    Checking(String),
    /// Waiting for the watched node (or the parent's children) to change.
    Waiting(String),
    Holding,
    /// Creating the lock's parent again after it was reaped.
    CreatingParent,
    /// Held the lock when the connection dropped.
    Suspended,
    Releasing,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SequentialLock {
    name: &'static str,
    variant: Style,
    lock_path: String,
    phase: Phase,
    /// Our lock node, once we know it (set with `set_node`).
    node: Option<String>,
    /// Its counter, read once from its name when it is set: the fencing token every state the
    /// checker judges asks a holder for. 0 without a node.
    counter: i32,
}

/// The marker between the guid and the sequence number in the standard lock's node names.
pub const MARKER: &str = "-lock-";

impl SequentialLock {
    pub fn new(name: &'static str, lock_path: &str, variant: Style) -> Self {
        SequentialLock { name, variant, lock_path: lock_path.to_string(), phase: Phase::Idle, node: None, counter: 0 }
    }

    pub fn lock_path(&self) -> &str {
        &self.lock_path
    }

    pub fn variant(&self) -> &Style {
        &self.variant
    }

    /// The guid part of our node names: unique per client and session.
    fn guid(ctx: &Ctx) -> String {
        guid_of(ctx.client, ctx.session)
    }

    fn create(&mut self, ctx: &Ctx, out: &mut Vec<Request>) {
        self.phase = Phase::Creating;
        let prefix = path::join(&self.lock_path, &self.own_prefix(ctx));
        out.push(Request::create(&prefix, CreateMode::EphemeralSequential));
    }

    fn list(&mut self, phase: Phase, out: &mut Vec<Request>) {
        self.phase = phase;
        out.push(Request::get_children(&self.lock_path, self.variant.wait_on == WaitOn::Parent));
    }

    /// The line: `<guid><marker><counter>`, in the variant's order (never by name: the guid
    /// comes first in the name).
    fn queue(&self) -> Queue {
        self.variant.queue
    }

    /// Sets our lock node, and with it its counter.
    fn set_node(&mut self, node: Option<String>) {
        self.counter = node.as_deref().and_then(|n| self.queue().sequence(path::name(n))).unwrap_or(0);
        self.node = node;
    }

    /// The name of our node up to its counter: the guid and the marker.
    pub(crate) fn own_prefix(&self, ctx: &Ctx) -> String {
        format!("{}{}", Self::guid(ctx), self.variant.queue.marker)
    }

    /// Our place in line: hold, watch the one before us, or start over if our node is gone.
    fn on_children(&mut self, ctx: &Ctx, children: &Listing, out: &mut Vec<Request>) {
        if self.phase == Phase::Recovering {
            match find_own(children, &self.own_prefix(ctx)) {
                Some(found) => self.set_node(Some(path::join(&self.lock_path, found))),
                None => return self.create(ctx, out),
            }
        }
        let Some(node) = self.node.as_deref() else {
            return self.create(ctx, out);
        };
        let predecessor = match self.queue().place(children, path::name(node)) {
            Place::Behind(predecessor) => predecessor,
            Place::First => {
                self.phase = Phase::Holding;
                return;
            }
            Place::Gone => {
                // Our node is gone (our session ended under us): start over.
                self.set_node(None);
                return self.create(ctx, out);
            }
        };
        match self.variant.wait_on {
            WaitOn::Predecessor => {
                let predecessor = path::join(&self.lock_path, predecessor);
                out.push(Request::exists(&predecessor, true));
                self.phase = Phase::Checking(predecessor);
            }
            WaitOn::Parent => self.phase = Phase::Waiting(self.lock_path.clone()),
        }
    }

    fn on_reply(&mut self, ctx: &Ctx, request: Request, result: zklab_model::ZkResult, out: &mut Vec<Request>) {
        match (&self.phase, request, result) {
            (_, _, Err(ZkError::SessionExpired)) => self.reset(),
            (Phase::Creating, Request::Create { .. }, Ok(Response::Created { path, .. })) => {
                self.set_node(Some(path));
                self.list(Phase::Listing, out);
            }
            (Phase::Creating, Request::Create { .. }, Err(ZkError::NoNode))
                if self.variant.on_missing_parent == OnMissingParent::Recreate =>
            {
                self.phase = Phase::CreatingParent;
                out.push(Request::create(&self.lock_path, CreateMode::Persistent));
            }
            // No parent, so no node of ours either: start over from the parent.
            (Phase::Listing | Phase::Recovering, Request::GetChildren { .. }, Err(ZkError::NoNode))
                if self.variant.on_missing_parent == OnMissingParent::Recreate =>
            {
                self.set_node(None);
                self.phase = Phase::CreatingParent;
                out.push(Request::create(&self.lock_path, CreateMode::Persistent));
            }
            // Made by us or by a rival: either way the parent is back.
            (Phase::CreatingParent, Request::Create { .. }, Ok(_) | Err(ZkError::NodeExists)) => self.create(ctx, out),
            (Phase::CreatingParent, Request::Create { .. }, Err(_)) => {
                out.push(Request::create(&self.lock_path, CreateMode::Persistent))
            }
            (Phase::Creating, Request::Create { .. }, Err(ZkError::ConnectionLoss)) => {
                match self.variant.on_create_loss {
                    OnCreateLoss::FindOwnNode => self.list(Phase::Recovering, out),
                    OnCreateLoss::CreateAgain => self.create(ctx, out),
                }
            }
            (
                Phase::Listing | Phase::Recovering,
                Request::GetChildren { .. },
                Ok(Response::Children { children, .. }),
            ) => self.on_children(ctx, &children, out),
            (Phase::Listing | Phase::Recovering, Request::GetChildren { .. }, Err(ZkError::ConnectionLoss)) => {
                let phase = self.phase.clone();
                self.list(phase, out)
            }
            (Phase::Checking(predecessor), Request::Exists { .. }, Ok(Response::Exists(found))) => {
                let predecessor = predecessor.clone();
                match (found, self.variant.on_missing_predecessor) {
                    (Some(_), _) | (None, OnMissingPredecessor::Wait) => self.phase = Phase::Waiting(predecessor),
                    (None, OnMissingPredecessor::ListAgain) => self.list(Phase::Listing, out),
                }
            }
            (Phase::Checking(_), Request::Exists { .. }, Err(_)) => self.list(Phase::Listing, out),
            (Phase::Releasing, Request::Delete { .. }, Ok(_) | Err(ZkError::NoNode)) => self.reset(),
            // Guaranteed delete: keep trying until the node is gone or the session is.
            (Phase::Releasing, Request::Delete { path, .. }, Err(ZkError::ConnectionLoss)) => {
                match self.variant.on_delete_loss {
                    OnDeleteLoss::Retry => out.push(Request::delete(&path)),
                    OnDeleteLoss::Forget => self.reset(),
                }
            }
            _ => {}
        }
    }

    fn delete_own(&mut self, out: &mut Vec<Request>) {
        self.phase = Phase::Releasing;
        out.push(Request::delete(self.node.as_deref().expect("holding or waiting implies a node")));
    }

    /// This lock with the paths it holds rewritten (renamed or renumbered), its counter read
    /// again from its new node. The old node and watched path are not copied first: renaming
    /// and renumbering rewrite every client of every state they change.
    fn rewritten(&self, r: &impl Rewrite) -> SequentialLock {
        let phase = match &self.phase {
            Phase::Checking(watched) => Phase::Checking(r.path(watched)),
            Phase::Waiting(watched) => Phase::Waiting(r.path(watched)),
            other => other.clone(),
        };
        let mut rewritten = SequentialLock {
            name: self.name,
            variant: self.variant,
            lock_path: self.lock_path.clone(),
            phase,
            node: None,
            counter: 0,
        };
        rewritten.set_node(self.node.as_deref().map(|n| r.path(n)));
        rewritten
    }

    fn reset(&mut self) {
        self.phase = Phase::Idle;
        self.set_node(None);
    }
}

impl zklab_model::Recipe for SequentialLock {
    fn name(&self) -> String {
        self.name.to_string()
    }

    fn handle(&mut self, ctx: &Ctx, input: Input, out: &mut Vec<Request>) {
        match input {
            Input::Acquire if self.phase == Phase::Idle => self.create(ctx, out),
            // Giving up while waiting takes the node out of the line as a release does.
            Input::Release if self.phase == Phase::Holding => self.delete_own(out),
            Input::Abandon if self.can_abandon() => self.delete_own(out),
            Input::Reply { request, result } => self.on_reply(ctx, request, result, out),
            Input::Watch(event) => {
                if let Phase::Waiting(watched) = &self.phase {
                    let relevant = match self.variant.wait_on {
                        WaitOn::Predecessor => event.kind == EventType::NodeDeleted && &event.path == watched,
                        WaitOn::Parent => event.kind == EventType::NodeChildrenChanged && &event.path == watched,
                    };
                    if relevant {
                        self.list(Phase::Listing, out);
                    }
                }
            }
            Input::State(SessionState::Disconnected) if self.phase == Phase::Holding => self.phase = Phase::Suspended,
            Input::State(SessionState::SyncConnected) => match self.phase {
                Phase::Suspended => self.phase = Phase::Holding,
                // A client library that dropped its watches will never wake us: look again.
                Phase::Waiting(_) if self.variant.on_reconnect == OnReconnect::Recheck => {
                    self.list(Phase::Listing, out)
                }
                _ => {}
            },
            Input::State(SessionState::Expired) => self.reset(),
            _ => {}
        }
    }

    fn belief(&self) -> Belief {
        let token = || i64::from(self.counter);
        match self.phase {
            Phase::Idle => Belief::Idle,
            Phase::Holding => Belief::Holding { token: token() },
            Phase::Suspended => Belief::Suspended { token: token() },
            Phase::Releasing => Belief::Releasing,
            _ => Belief::Acquiring,
        }
    }

    fn owned_node(&self) -> Option<&str> {
        self.node.as_deref()
    }

    fn waits_on_one_node(&self) -> bool {
        self.variant.wait_on == WaitOn::Predecessor
    }

    /// While it waits for its watch, with nothing in flight. Not during the create, whose reply
    /// names the node (the timeout lock gives up there too, and finds the node by its guid).
    fn can_abandon(&self) -> bool {
        matches!(self.phase, Phase::Waiting(_))
    }

    /// Supported: a client's identity is only in its guid, and contenders are ordered by
    /// sequence number alone.
    fn renamed(&self, r: &Renamer) -> Option<Self> {
        Some(self.rewritten(r))
    }

    fn rename_name(&self, name: &str, r: &Renaming) -> String {
        match parse_guid(name) {
            Some((client, session, rest)) => {
                let mut renamed = String::with_capacity(name.len() + 2);
                push_guid(&mut renamed, r.client(client), r.session(SessionId(session)));
                renamed.push_str(rest);
                renamed
            }
            None => name.to_string(),
        }
    }

    /// Supported: sequence numbers are only compared with one another (serially, by sign or as
    /// text, all alike away from the wrap), and the token is one.
    fn renumbered(&self, _: ClientId, r: &Renumber) -> Option<Self> {
        Some(self.rewritten(r))
    }
}

/// `c<client>-<session>`, the guid of our node names.
pub(crate) fn guid_of(client: ClientId, session: SessionId) -> String {
    let mut guid = String::with_capacity(16);
    push_guid(&mut guid, client, session);
    guid
}

/// Appends `guid_of(client, session)`, written by hand: renaming writes one into every name of
/// every state it renames.
fn push_guid(out: &mut String, client: ClientId, session: SessionId) {
    out.push('c');
    path::push_decimal(out, client.into(), 1);
    out.push_str("-s");
    path::push_decimal(out, session.0.into(), 1);
}

/// The client and session in a name that starts with a guid, and what follows the guid.
fn parse_guid(name: &str) -> Option<(ClientId, u32, &str)> {
    let rest = name.strip_prefix('c')?;
    let (client, rest) = rest.split_once("-s")?;
    let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
    let (session, rest) = rest.split_at(digits);
    Some((client.parse().ok()?, session.parse().ok()?, rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_guid_is_written_and_read_back() {
        for (client, session) in [(0, 1), (3, 12), (17, 4_000_000_000)] {
            let guid = guid_of(client, SessionId(session));
            assert_eq!(guid, format!("c{client}-s{session}"));
            let name = format!("{guid}{MARKER}0000000007");
            assert_eq!(parse_guid(&name), Some((client, session, "-lock-0000000007")));
        }
    }
}
