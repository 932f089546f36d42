//! ZooKeeper's own `WriteLock`, from zookeeper-recipes-lock, modelled step by step.
//!
//! **Source.** ZooKeeper's zookeeper-recipes-lock:
//! `org/apache/zookeeper/recipes/lock/WriteLock.java`, with `ProtocolSupport.retryOperation` and
//! `ZNodeName`. The recipes page's "Locks" section points to it as the lock implementation shipped
//! with ZooKeeper. No issue id: the failures below are read off the source as written.
//!
//! **What it does.** `lock()` runs one operation under `retryOperation`, which re-runs it from the
//! top after a ConnectionLoss and gives up on SessionExpired. The operation: if it has no id yet,
//! `findPrefixInChildren` lists the lock directory and adopts a child starting with
//! `x-<sessionId>-` (a create that happened before a ConnectionLoss), else creates `x-<sessionId>-`
//! ephemeral-sequential. Then it lists again, orders the children as `ZNodeName`s (by the signed
//! sequence number, then by the name before it), and takes the ones below its own: if there are
//! some, it calls exists() on the last of them with a `LockWatcher` and returns false when the node
//! exists; if there are none and its id is the first child, it owns the lock. An empty listing
//! makes it forget its id and create again. The `LockWatcher` re-runs `lock()` on any event it
//! gets, including the connection-state events the Java client hands to every registered watcher. A
//! SessionExpired ends `lock()`, and the `LockWatcher` or the caller only logs it; the `ZooKeeper`
//! handle the lock is bound to is dead after an expiry, so the client stops there without the lock.
//! `unlock()` deletes once, without retrying, and forgets its id whatever the outcome (`id = null`
//! in a `finally`); an application may call it while it waits, to leave the line (the `give-up`
//! fault, once `lock()` has returned false with its watch set).
//!
//! **What it gets wrong.** Each a decision modelled as the source makes it:
//! - exists() returning null ends the operation: the `do … while (id == null)` loop exits because
//!   the id is set, so `lock()` returns false with an exist watch on a sequential node that will
//!   never be created again, and nothing wakes the client (delete-before-watch).
//! - `findPrefixInChildren` adopts the bare child name, while the ordering and the owner check use
//!   full paths: after a ConnectionLoss on create the client sorts its own node below itself,
//!   watches its own node, and can never own the lock.
//! - a lost unlock (ConnectionLoss on delete) forgets the node, which stays until the session ends
//!   and blocks everyone behind it.
//! - nothing watches the session: a holder whose session expires goes on believing it holds.
//!
//! **What the model leaves out.** `retryOperation` gives up after ten tries, sleeping longer before
//! each; the model retries without limit and without sleeping. `lock()` first makes sure the lock
//! directory exists (`ensurePathExists`); here it exists from the start. The session id in the
//! prefix is the model's session number. Not modelled: the node's data, ACLs, the `LockListener`
//! callbacks and `close()`.

use crate::queue::{find_own, znode_name_sequence};
use zklab_model::path;
use zklab_model::Listing;
use zklab_model::{Belief, CreateMode, Ctx, Input, Request, Response, SessionState, ZkError, ZkResult};

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Phase {
    Idle,
    /// `findPrefixInChildren`: getChildren to look for a node of this session.
    Finding,
    /// The create is in flight.
    Creating,
    /// getChildren to learn the order.
    Listing,
    /// exists(node, LockWatcher) is in flight.
    Checking(String),
    /// `lock()` returned false; the LockWatcher armed on this node re-runs it on any event.
    Waiting(String),
    /// `lock()` returned false and no watch will ever call it again.
    Stalled,
    Holding,
    /// unlock()'s single delete is in flight.
    Releasing,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct WriteLock {
    dir: String,
    phase: Phase,
    /// `id`: the full path after a create, the bare child name after `findPrefixInChildren`.
    id: Option<String>,
}

impl WriteLock {
    /// Its name in the catalogue and in traces.
    pub const NAME: &'static str = "zk-write-lock";

    pub fn new(dir: &str) -> Self {
        WriteLock { dir: dir.to_string(), phase: Phase::Idle, id: None }
    }

    fn prefix(ctx: &Ctx) -> String {
        format!("x-{}-", ctx.session)
    }

    /// One run of the retried operation, from its top.
    fn execute(&mut self, out: &mut Vec<Request>) {
        self.phase = if self.id.is_none() { Phase::Finding } else { Phase::Listing };
        out.push(Request::get_children(&self.dir, false));
    }

    fn on_found(&mut self, ctx: &Ctx, names: &Listing, out: &mut Vec<Request>) {
        let prefix = Self::prefix(ctx);
        match find_own(names, &prefix) {
            Some(name) => {
                self.id = Some(name.to_string());
                self.phase = Phase::Listing;
                out.push(Request::get_children(&self.dir, false));
            }
            None => {
                self.phase = Phase::Creating;
                out.push(Request::create(&path::join(&self.dir, &prefix), CreateMode::EphemeralSequential));
            }
        }
    }

    fn on_listed(&mut self, names: &Listing, out: &mut Vec<Request>) {
        let Some(id) = self.id.clone() else { return self.execute(out) };
        if names.is_empty() {
            self.id = None;
            return self.execute(out);
        }
        let mut sorted: Vec<(i32, String)> =
            names.iter().map(|n| path::join(&self.dir, n)).map(|p| (znode_name_sequence(&p), p)).collect();
        sorted.sort();
        let me = (znode_name_sequence(&id), id.clone());
        match sorted.iter().rfind(|n| **n < me) {
            Some((_, last)) => {
                let last = last.clone();
                out.push(Request::exists(&last, true));
                self.phase = Phase::Checking(last);
            }
            None if sorted[0].1 == id => self.phase = Phase::Holding,
            None => self.phase = Phase::Stalled,
        }
    }

    /// `unlock()`: one delete of the node, if it has one.
    fn unlock(&mut self, out: &mut Vec<Request>) {
        match self.id.clone() {
            Some(id) => {
                self.phase = Phase::Releasing;
                out.push(Request::delete(&id));
            }
            None => self.phase = Phase::Idle,
        }
    }

    fn on_reply(&mut self, request: Request, result: ZkResult, ctx: &Ctx, out: &mut Vec<Request>) {
        match (&self.phase, request, result) {
            (Phase::Releasing, Request::Delete { .. }, _) => {
                self.phase = Phase::Idle;
                self.id = None;
            }
            // retryOperation gives up; the LockWatcher or the caller only logs it.
            (_, _, Err(ZkError::SessionExpired)) => self.phase = Phase::Stalled,
            (
                Phase::Finding | Phase::Creating | Phase::Listing | Phase::Checking(_),
                _,
                Err(ZkError::ConnectionLoss),
            ) => self.execute(out),
            (Phase::Finding, Request::GetChildren { .. }, Ok(Response::Children { children, .. })) => {
                self.on_found(ctx, &children, out)
            }
            (Phase::Creating, Request::Create { .. }, Ok(Response::Created { path, .. })) => {
                self.id = Some(path);
                self.phase = Phase::Listing;
                out.push(Request::get_children(&self.dir, false));
            }
            (Phase::Listing, Request::GetChildren { .. }, Ok(Response::Children { children, .. })) => {
                self.on_listed(&children, out)
            }
            (Phase::Checking(last), Request::Exists { .. }, Ok(Response::Exists(stat))) => {
                self.phase = if stat.is_some() { Phase::Waiting(last.clone()) } else { Phase::Stalled };
            }
            _ => {}
        }
    }
}

impl zklab_model::Recipe for WriteLock {
    fn name(&self) -> String {
        WriteLock::NAME.to_string()
    }

    fn handle(&mut self, ctx: &Ctx, input: Input, out: &mut Vec<Request>) {
        match input {
            Input::Acquire if self.phase == Phase::Idle => self.execute(out),
            // unlock() also takes a waiter out of the line, with the same single delete.
            Input::Release if self.phase == Phase::Holding => self.unlock(out),
            Input::Abandon if self.can_abandon() => self.unlock(out),
            Input::Reply { request, result } => self.on_reply(request, result, ctx, out),
            // The LockWatcher re-runs lock() on whatever it is told, a node event or the
            // reconnect the Java client hands to every watcher it holds.
            Input::Watch(event) => {
                if matches!(&self.phase, Phase::Waiting(w) | Phase::Checking(w) if *w == event.path) {
                    self.execute(out)
                }
            }
            Input::State(SessionState::SyncConnected) if matches!(self.phase, Phase::Waiting(_)) => self.execute(out),
            Input::State(SessionState::Expired) if matches!(self.phase, Phase::Waiting(_)) => {
                self.phase = Phase::Stalled
            }
            _ => {}
        }
    }

    fn belief(&self) -> Belief {
        match self.phase {
            Phase::Idle => Belief::Idle,
            Phase::Holding => {
                Belief::Holding { token: self.id.as_deref().map_or(0, |id| i64::from(znode_name_sequence(id))) }
            }
            Phase::Releasing => Belief::Releasing,
            _ => Belief::Acquiring,
        }
    }

    fn owned_node(&self) -> Option<&str> {
        // A bare adopted name is not a path the orphan check can match; the node it names is
        // still ours, so report it by its full path only when we have one.
        self.id.as_deref().filter(|id| id.starts_with('/'))
    }

    fn waits_on_one_node(&self) -> bool {
        true
    }

    /// While `lock()` has returned false and its watch is set: the application may call
    /// `unlock()` (which deletes the node and forgets the id) instead of waiting on.
    fn can_abandon(&self) -> bool {
        matches!(self.phase, Phase::Waiting(_))
    }
}
