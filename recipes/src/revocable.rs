//! Revocable shared locks, from the ZooKeeper recipes page.
//!
//! **Source.** ZooKeeper's recipes page, "Revocable Shared Locks": the "Shared Locks" recipe
//! (`shared_lock.rs`) with one change to both the read and the write protocol. Curator's mutexes
//! have the same scheme with `__REVOKE__` as the word (`makeRevocable`, `Revoker.attemptRevoke`),
//! not modelled here. The failure it shows, revocation-consumes-watch, was found by the checker; it
//! has no issue id.
//!
//! **What it does.** Right after its create, a client calls getData() with a watch on its own node;
//! when that watch fires it reads the node again (watch set) and, if the data is "unlock", it gives
//! the lock up. Anyone may ask for the lock by writing "unlock" to the holder's node with
//! setData(); the holder must consent, by reading and releasing. The page does not say who asks.
//! Here a waiter asks the node it is about to wait on, once per node, so a writer asks its
//! predecessor and a reader the last writer before it; it asks before it watches, so that its own
//! request does not fire its own watch. A client asked to unlock while still waiting gives up its
//! attempt (deletes its node). After a reconnect a client reads its own node again, since the
//! reconnect may have dropped the watch. The waiters here look again on any event on the node they
//! watch.
//!
//! **What it gets wrong.** `revocable-reader` and `revocable-writer`: nothing the model can show.
//! One consequence the page leaves implicit: the revocation request changes the data of a node
//! other waiters may be watching with exists(), which fires and consumes their watches; a waiter
//! that then waits for the node's deletion only waits forever. `revocable-reader-deletion-only`
//! keeps the shared lock's wait for the deletion only and is caught with three clients: two readers
//! wait on one writer and one asks it to unlock.
//!
//! **What the model leaves out.** Who asks, and when, is this model's choice; the page leaves it to
//! the application. A holder consents at once, without first doing work of its own. The page's
//! "Revocable Shared Locks with Freaking Laser Beams" (the revoker deletes the holder's node if it
//! is not released after some time) is not modelled, nor is any timeout. The shared lock's own
//! omissions apply (`shared_lock.rs`).

use crate::rw_queue::{RwQueue, WakeOn};
use zklab_model::{Belief, Ctx, EventType, Input, Mode, Recipe, Request, Response, SessionState};

/// What a revocation request writes to the holder's node.
pub const UNLOCK: &str = "unlock";

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Revocable {
    name: &'static str,
    inner: RwQueue,
    /// The node this attempt has asked to unlock (once per node).
    asked: Option<String>,
}

impl Revocable {
    /// The shared lock `inner` made revocable; its waiters look again on any event.
    pub fn new(name: &'static str, inner: RwQueue) -> Self {
        Revocable { name, inner: inner.waking_on(WakeOn::AnyEvent), asked: None }
    }

    /// The flawed variant: waiters keep the shared lock's exists() wait for the deletion only,
    /// so a revocation request by another waiter consumes their watch for good.
    pub fn waking_on_deletion_only(name: &'static str, inner: RwQueue) -> Self {
        Revocable { name, inner: inner.waking_on(WakeOn::Deletion), asked: None }
    }

    fn read_own_node(&self, out: &mut Vec<Request>) {
        if let Some(node) = self.inner.node() {
            out.push(Request::get_data(node, true));
        }
    }

    /// Handles what belongs to the revocation protocol; false if the input is the lock's.
    fn revocation(&mut self, input: &Input, out: &mut Vec<Request>) -> bool {
        let own = self.inner.node();
        match input {
            Input::Reply { request: Request::SetData { .. }, .. } => true,
            Input::Reply { request: Request::GetData { path, .. }, result } => {
                match result {
                    Ok(Response::Data { data, .. }) if data == UNLOCK && own == Some(path.as_str()) => {
                        self.inner.give_up(out)
                    }
                    Err(zklab_model::ZkError::ConnectionLoss) if own == Some(path.as_str()) => self.read_own_node(out),
                    _ => {}
                }
                true
            }
            Input::Watch(event) if event.kind == EventType::NodeDataChanged && own == Some(event.path.as_str()) => {
                self.read_own_node(out);
                true
            }
            _ => false,
        }
    }
}

impl Recipe for Revocable {
    fn name(&self) -> String {
        self.name.to_string()
    }

    fn handle(&mut self, ctx: &Ctx, input: Input, out: &mut Vec<Request>) {
        if self.revocation(&input, out) {
            return;
        }
        let had_node = self.inner.node().is_some();
        let reconnected = input == Input::State(SessionState::SyncConnected);
        let first = out.len();
        self.inner.handle(ctx, input, out);
        if self.inner.belief() == Belief::Idle {
            self.asked = None;
        }
        if (!had_node || reconnected) && self.inner.node().is_some() {
            // Watch our own node for revocation requests (again, after a reconnect that may
            // have dropped the watch).
            self.read_own_node(out);
        }
        if let Some(blocker) = self.inner.checking().map(str::to_string) {
            if self.asked.as_ref() != Some(&blocker) {
                // Ask before watching, so that our own request does not fire our own watch.
                let at = out[first..].iter().position(|r| r.path() == blocker).map_or(out.len(), |i| first + i);
                out.insert(at, Request::SetData { path: blocker.clone(), data: UNLOCK.to_string(), version: -1 });
                self.asked = Some(blocker);
            }
        }
    }

    fn belief(&self) -> Belief {
        self.inner.belief()
    }

    fn mode(&self) -> Mode {
        self.inner.mode()
    }

    fn owned_node(&self) -> Option<&str> {
        self.inner.owned_node()
    }

    fn owned_nodes(&self) -> Vec<&str> {
        self.inner.owned_nodes()
    }

    fn waits_on_one_node(&self) -> bool {
        true
    }
}
