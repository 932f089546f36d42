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
//! SessionExpired, so a ConnectionLoss or an expiry re-runs `_inner_acquire` from its top (an
//! expiry once the client has its new session). Each run first calls `_ensure_path` until it has
//! succeeded once for the Lock object (`client.ensure_path`: exists on the lock node, and if it is
//! missing exists on its parent and a create of it). The
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
//! When a create fails NoNode (the lock node reaped after `_ensure_path` succeeded) the acquire
//! raises, as kazoo's does, without the cleanup's getChildren. Nodes carry no `identifier` data,
//! and there are no timeouts, cancels, non-blocking
//! tries, non-ephemeral nodes, `extra_lock_patterns`, retry sleeps or the thread lock that lets one
//! thread at a time into a Lock object's `acquire()`.

use crate::queue::{find_own, Order, Place, Queue};
use zklab_model::path;
use zklab_model::Listing;
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
    /// `_ensure_path`: exists(lock path), once per Lock object (`assured_path`).
    Ensuring,
    /// `ensure_path` found no lock node: exists(its parent, the root).
    EnsuringRoot,
    /// `ensure_path`: create(lock path); NodeExists counts as done.
    CreatingPath,
    /// The retry caught SessionExpired: it runs `_inner_acquire` again once the client has its
    /// new session.
    Retrying,
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
    /// `_ensure_path` has made sure the lock node exists (kept for the Lock object's life).
    assured_path: bool,
    create_tried: bool,
    /// Our contender node, as a full path.
    node: Option<String>,
}

impl KazooLock {
    /// Its name in the catalogue and in traces.
    pub const NAME: &'static str = "kazoo-lock";

    pub fn new(path: &str) -> Self {
        KazooLock { path: path.to_string(), phase: Phase::Idle, assured_path: false, create_tried: false, node: None }
    }

    fn prefix(ctx: &Ctx) -> String {
        format!("u{}{NODE_NAME}", ctx.client)
    }

    /// `_inner_acquire` from its top, as each retry runs it: `_ensure_path` until it has
    /// succeeded once, then find or create the node.
    fn inner_acquire(&mut self, ctx: &Ctx, out: &mut Vec<Request>) {
        self.node = None;
        if !self.assured_path {
            self.phase = Phase::Ensuring;
            return out.push(Request::exists(&self.path, false));
        }
        self.find_or_create(ctx, out);
    }

    /// The rest of `_inner_acquire`: `_find_node` on a retry, else the first create.
    fn find_or_create(&mut self, ctx: &Ctx, out: &mut Vec<Request>) {
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

    fn on_children(&mut self, ctx: &Ctx, children: &Listing, out: &mut Vec<Request>) {
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
            // KazooRetry retries SessionExpired too: `_inner_acquire` runs again on the new
            // session (see `Input::State(Expired)`).
            (Phase::Idle | Phase::Holding, _, _) => {}
            (_, _, Err(ZkError::SessionExpired)) => self.phase = Phase::Retrying,
            (_, _, Err(ZkError::ConnectionLoss)) => self.inner_acquire(ctx, out),
            (Phase::Ensuring, Request::Exists { .. }, Ok(Response::Exists(Some(_)))) => {
                self.assured_path = true;
                self.find_or_create(ctx, out)
            }
            (Phase::Ensuring, Request::Exists { .. }, Ok(Response::Exists(None))) => {
                self.phase = Phase::EnsuringRoot;
                out.push(Request::exists("/", false))
            }
            (Phase::EnsuringRoot, Request::Exists { .. }, Ok(_)) => {
                self.phase = Phase::CreatingPath;
                out.push(Request::create(&self.path, CreateMode::Persistent))
            }
            (Phase::CreatingPath, Request::Create { .. }, Ok(_) | Err(ZkError::NodeExists)) => {
                self.assured_path = true;
                self.find_or_create(ctx, out)
            }
            // NoNodeError is not retried: the acquire raises (its cleanup finds nothing to delete).
            (Phase::Creating, Request::Create { .. }, Err(ZkError::NoNode)) => self.reset(),
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

    /// The acquire or release is over; the Lock object keeps `assured_path`.
    fn reset(&mut self) {
        self.phase = Phase::Idle;
        self.node = None;
        self.create_tried = false;
    }
}

impl zklab_model::Recipe for KazooLock {
    fn name(&self) -> String {
        KazooLock::NAME.to_string()
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
            // A holder never learns; a release's delete is done (the node went with the
            // session); an acquire's retry runs `_inner_acquire` again on the new session
            // (a waiter's session listener wakes its loop, whose next call fails and retries).
            Input::State(SessionState::Expired) => match self.phase {
                Phase::Idle | Phase::Holding => {}
                Phase::Releasing => self.reset(),
                _ => self.inner_acquire(ctx, out),
            },
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

#[cfg(test)]
mod tests {
    use super::*;
    use zklab_model::{Recipe, SessionId, Stat};

    const CTX: Ctx = Ctx { client: 0, session: SessionId(2) };

    fn handle(lock: &mut KazooLock, input: Input) -> Vec<Request> {
        let mut out = Vec::new();
        lock.handle(&CTX, input, &mut out);
        out
    }

    fn reply(lock: &mut KazooLock, request: Request, result: ZkResult) -> Vec<Request> {
        handle(lock, Input::Reply { request, result })
    }

    #[test]
    fn the_first_acquire_makes_sure_of_the_lock_path_once() {
        let mut lock = KazooLock::new("/lock");
        let ensure = handle(&mut lock, Input::Acquire);
        assert_eq!(ensure, vec![Request::exists("/lock", false)], "_ensure_path asks first");
        let create = reply(&mut lock, ensure[0].clone(), Ok(Response::Exists(Some(Stat::default()))));
        assert_eq!(create, vec![Request::create("/lock/u0__lock__", CreateMode::EphemeralSequential)]);
        // A lost create: the retry runs `_inner_acquire` again, the path already assured.
        let find = reply(&mut lock, create[0].clone(), Err(ZkError::ConnectionLoss));
        assert_eq!(find, vec![Request::get_children("/lock", false)], "_find_node, no second exists");
    }

    #[test]
    fn a_missing_lock_path_is_created_as_ensure_path_does() {
        let mut lock = KazooLock::new("/lock");
        let ensure = handle(&mut lock, Input::Acquire);
        let root = reply(&mut lock, ensure[0].clone(), Ok(Response::Exists(None)));
        assert_eq!(root, vec![Request::exists("/", false)]);
        let create = reply(&mut lock, root[0].clone(), Ok(Response::Exists(Some(Stat::default()))));
        assert_eq!(create, vec![Request::create("/lock", CreateMode::Persistent)]);
        let node = reply(&mut lock, create[0].clone(), Err(ZkError::NodeExists));
        assert_eq!(node, vec![Request::create("/lock/u0__lock__", CreateMode::EphemeralSequential)]);
    }

    #[test]
    fn an_expiry_while_waiting_retries_on_the_new_session_and_a_holder_never_learns() {
        let mut lock = KazooLock::new("/lock");
        lock.assured_path = true;
        lock.create_tried = true;
        lock.node = Some("/lock/u0__lock__0000000001".to_string());
        lock.phase = Phase::Waiting("/lock/u1__lock__0000000000".to_string());
        let retry = handle(&mut lock, Input::State(SessionState::Expired));
        assert_eq!(retry, vec![Request::get_children("/lock", false)], "_find_node on the new session");
        assert_eq!(lock.belief(), Belief::Acquiring, "still acquiring, not given up");
        lock.phase = Phase::Holding;
        assert!(handle(&mut lock, Input::State(SessionState::Expired)).is_empty());
        assert!(lock.belief().is_holding(), "the holder goes on believing");
    }
}
