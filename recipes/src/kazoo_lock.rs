//! kazoo's `Lock`, modelled step by step under its retry policy.
//!
//! **Source.** kazoo 2.8's `kazoo/recipe/lock.py`, class `Lock` (`acquire`, `_inner_acquire`,
//! `_get_predecessor`, `_find_node`, `release`), run under `KazooRetry` from `kazoo/retry.py`. Its
//! failure is the one the module's own documentation warns of: it recommends a state listener that
//! watches for SUSPENDED and LOST, since after LOST the lock has certainly been lost. No issue id:
//! it is the documented behaviour.
//!
//! **What it does.** Every Lock object has a prefix made of a fresh uuid and `__lock__`.
//! `acquire()` runs `_inner_acquire` under a `KazooRetry` with no try limit that also retries
//! SessionExpired, so a ConnectionLoss or an expiry re-runs `_inner_acquire` from its top. The
//! first run creates `<prefix>` ephemeral-sequential; every later run first looks for a child
//! starting with the prefix (`_find_node`) and creates only if there is none. Then it loops:
//! `_get_predecessor` lists the children, orders the contenders by the counter's text and raises
//! `ForceRetryError` (a retry from the top) if its own node is missing; with no predecessor it
//! holds the lock, else it calls `get(predecessor, watch)`: NoNode loops at once, otherwise it
//! waits until the watch or a connection-state listener (added only while it waits) wakes it and
//! loops. `release()` deletes its node under the client's command retry (`client.retry`, by default
//! also without a try limit and retrying SessionExpired) and treats NoNode as done.
//! `_best_effort_cleanup` (one delete of the node it knows or finds by prefix, errors ignored) runs
//! only when an acquisition ends without the lock: a timeout, a cancel, a non-blocking try that
//! finds the lock taken, or an error the retry does not retry, which this model has none of.
//!
//! **What it gets wrong.** Nothing in the Lock watches the session once the lock is held; kazoo's
//! documentation leaves it to the application to add a connection listener. A holder whose session
//! expires goes on believing it holds (`belief_exclusion`); fencing still protects. Lost requests,
//! lost replies and disconnects it survives, under both the Java client's and kazoo's handling of
//! watches.
//!
//! **What the model leaves out.** The uuid is the client number here, so runs replay byte for byte.
//! An expiry while acquiring ends the attempt and the model's application acquires again, where
//! kazoo's retry re-runs `_inner_acquire` on the new session, lists the children, finds no node
//! with its prefix and creates one. The lock's parent exists from the start (`_ensure_path` is not
//! modelled), nodes carry no `identifier` data, and there are no timeouts, cancels, non-blocking
//! tries, non-ephemeral nodes, `extra_lock_patterns`, retry sleeps or the thread lock that lets one
//! thread at a time into a Lock object's `acquire()`.

use crate::queue::{find_own, Order, Place, Queue};
use zklab_model::path;
use zklab_model::Rewrite;
use zklab_model::{
    Belief, ClientId, CreateMode, Ctx, Input, Renumber, Request, Response, SessionState, ZkError, ZkResult,
};

/// The part of every contender's name between the uuid and the sequence number.
const NODE_NAME: &str = "__lock__";

/// The line: `<uuid>__lock__<counter>`, sorted by the counter's text (`_contenders_re`
/// extracts `-?\d{10}` and `sorted` compares the strings).
const QUEUE: Queue = Queue::new(NODE_NAME, Order::Text);

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Phase {
    Idle,
    /// `_find_node`: getChildren to look for a node with our prefix.
    Finding,
    Creating,
    /// `_get_predecessor`: getChildren.
    Listing,
    /// get(predecessor, watch) is in flight.
    Getting(String),
    /// Waiting for the watch or a connection-state change to wake the loop.
    Waiting(String),
    Holding,
    Releasing,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct KazooLock {
    path: String,
    phase: Phase,
    create_tried: bool,
    /// Our contender node, as a full path.
    node: Option<String>,
}

impl KazooLock {
    pub fn new(path: &str) -> Self {
        KazooLock { path: path.to_string(), phase: Phase::Idle, create_tried: false, node: None }
    }

    fn prefix(ctx: &Ctx) -> String {
        format!("u{}{NODE_NAME}", ctx.client)
    }

    /// `_inner_acquire` from its top, as each retry runs it.
    fn inner_acquire(&mut self, ctx: &Ctx, out: &mut Vec<Request>) {
        self.node = None;
        if self.create_tried {
            self.phase = Phase::Finding;
            out.push(Request::get_children(&self.path, false));
        } else {
            self.create_tried = true;
            self.create(ctx, out);
        }
    }

    fn create(&mut self, ctx: &Ctx, out: &mut Vec<Request>) {
        self.phase = Phase::Creating;
        out.push(Request::create(&path::join(&self.path, &Self::prefix(ctx)), CreateMode::EphemeralSequential));
    }

    fn list(&mut self, out: &mut Vec<Request>) {
        self.phase = Phase::Listing;
        out.push(Request::get_children(&self.path, false));
    }

    fn on_children(&mut self, ctx: &Ctx, children: &[String], out: &mut Vec<Request>) {
        if self.phase == Phase::Finding {
            let prefix = Self::prefix(ctx);
            return match find_own(children, &prefix) {
                Some(found) => {
                    self.node = Some(path::join(&self.path, found));
                    self.list(out)
                }
                None => self.create(ctx, out),
            };
        }
        let Some(node) = self.node.clone() else { return self.inner_acquire(ctx, out) };
        match QUEUE.place(children, path::name(&node)) {
            // ForceRetryError: our node is gone.
            Place::Gone => self.inner_acquire(ctx, out),
            Place::First => self.phase = Phase::Holding,
            Place::Behind(predecessor) => {
                let predecessor = path::join(&self.path, predecessor);
                out.push(Request::get_data(&predecessor, true));
                self.phase = Phase::Getting(predecessor);
            }
        }
    }

    fn on_reply(&mut self, ctx: &Ctx, request: Request, result: ZkResult, out: &mut Vec<Request>) {
        match (&self.phase, request, result) {
            (Phase::Releasing, Request::Delete { .. }, Ok(_) | Err(ZkError::NoNode | ZkError::SessionExpired)) => {
                self.reset()
            }
            (Phase::Releasing, Request::Delete { path, .. }, Err(ZkError::ConnectionLoss)) => {
                out.push(Request::delete(&path))
            }
            (Phase::Releasing, _, _) => {}
            // The retry waits for the new session; the model's application acquires again.
            (_, _, Err(ZkError::SessionExpired)) => self.reset(),
            (
                Phase::Finding | Phase::Creating | Phase::Listing | Phase::Getting(_),
                _,
                Err(ZkError::ConnectionLoss),
            ) => self.inner_acquire(ctx, out),
            (Phase::Finding | Phase::Listing, Request::GetChildren { .. }, Ok(Response::Children { children, .. })) => {
                self.on_children(ctx, &children, out)
            }
            (Phase::Creating, Request::Create { .. }, Ok(Response::Created { path, .. })) => {
                self.node = Some(path);
                self.list(out)
            }
            (Phase::Getting(p), Request::GetData { .. }, Ok(Response::Data { .. })) => {
                self.phase = Phase::Waiting(p.clone())
            }
            (Phase::Getting(_), Request::GetData { .. }, Err(ZkError::NoNode)) => self.list(out),
            _ => {}
        }
    }

    fn reset(&mut self) {
        self.phase = Phase::Idle;
        self.node = None;
        self.create_tried = false;
    }
}

impl zklab_model::Recipe for KazooLock {
    fn name(&self) -> String {
        "kazoo-lock".to_string()
    }

    fn handle(&mut self, ctx: &Ctx, input: Input, out: &mut Vec<Request>) {
        match input {
            Input::Acquire if self.phase == Phase::Idle => self.inner_acquire(ctx, out),
            Input::Release if self.phase == Phase::Holding => {
                self.phase = Phase::Releasing;
                out.push(Request::delete(self.node.as_deref().expect("a holder has a node")));
            }
            Input::Reply { request, result } => self.on_reply(ctx, request, result, out),
            // `_watch_predecessor` and `_watch_session` both just wake the loop.
            Input::Watch(event) if matches!(&self.phase, Phase::Waiting(p) if *p == event.path) => self.list(out),
            Input::State(SessionState::Expired) if self.phase != Phase::Holding => self.reset(),
            Input::State(SessionState::SyncConnected) if matches!(self.phase, Phase::Waiting(_)) => self.list(out),
            _ => {}
        }
    }

    fn belief(&self) -> Belief {
        let token = || self.node.as_deref().and_then(|n| QUEUE.sequence(path::name(n))).map_or(0, i64::from);
        match self.phase {
            Phase::Idle => Belief::Idle,
            Phase::Holding => Belief::Holding { token: token() },
            Phase::Releasing => Belief::Releasing,
            _ => Belief::Acquiring,
        }
    }

    fn owned_node(&self) -> Option<&str> {
        self.node.as_deref()
    }

    fn waits_on_one_node(&self) -> bool {
        true
    }

    /// Supported: contenders are ordered by sequence number alone.
    fn renumbered(&self, _: ClientId, r: &Renumber) -> Option<Self> {
        let phase = match &self.phase {
            Phase::Getting(watched) => Phase::Getting(r.path(watched)),
            Phase::Waiting(watched) => Phase::Waiting(r.path(watched)),
            other => other.clone(),
        };
        Some(KazooLock { phase, node: self.node.as_deref().map(|n| r.path(n)), ..self.clone() })
    }
}
