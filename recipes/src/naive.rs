//! The single-node lock: whoever creates `<lock>/holder` (ephemeral) holds the lock.
//!
//! **Source.** It is what most people write first: the "simple lock" of Hunt et al., "ZooKeeper:
//! wait-free coordination for Internet-scale systems" (USENIX ATC 2010), which the paper gives as
//! working but subject to the herd effect; the ZooKeeper recipes page's "Locks" avoids that herd at
//! its step 2. The herd's catalogue entry (herd-effect) also names kazoo #26. The blind delete is
//! the blind-delete-retry trap of docs/pitfalls.md; no issue id.
//!
//! **What it does.** A client creates `<lock>/holder` (ephemeral); if that succeeds it holds the
//! lock, with the node's czxid as its fencing token, a number that only grows. Everyone else calls
//! exists() with a watch on it and tries again when it goes away (or when exists() finds it gone).
//! ConnectionLoss on the create is resolved by reading the node: if it exists and its ephemeral
//! owner is our session, the create happened and we hold the lock; if it is gone we create again;
//! if it is someone else's we watch it. Release deletes the node. ConnectionLoss on the release is
//! resolved the same way: read the node and delete it only if it is still ours.
//!
//! **What it gets wrong.** It is safe, but every release wakes every waiter, all of whom race to
//! create the node and all but one fail and watch again: the herd effect the recipes page warns of
//! (step 2), and no fairness at all (`naive`: `no_herd`, caught with three clients). The variant
//! `naive-blind-delete` retries its delete blindly after a ConnectionLoss on release: because every
//! holder uses the same name, the delete may already have happened and the next holder may have
//! created the node again, so the retry deletes the next holder's node and lets a third client in
//! beside it (the checker refutes `belief_exclusion`); it also herds like the single-node lock.
//!
//! **What the model leaves out.** There is no one real implementation to follow. The node carries
//! no data, the lock's parent exists from the start, and there are no timeouts or retry limits; a
//! client whose session expires stops, and its application may acquire again.

use zklab_model::path;
use zklab_model::{Belief, CreateMode, Ctx, EventType, Input, Request, Response, SessionState, ZkError, ZkResult};

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Phase {
    Idle,
    Creating,
    /// A create failed with ConnectionLoss: reading the node to see whose it is.
    Recovering,
    /// exists(holder, watch) is in flight.
    Checking,
    Waiting,
    Holding {
        token: i64,
    },
    Suspended {
        token: i64,
    },
    Releasing,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct NaiveLock {
    node: String,
    phase: Phase,
    /// After a ConnectionLoss on release: read the node and delete it only if it is still ours
    /// (`true`), or retry the delete blindly (`false`, the flawed variant).
    check_owner_on_retry: bool,
}

impl NaiveLock {
    /// Its name in the catalogue and in traces.
    pub const NAME: &'static str = "naive";
    /// The name of the variant that retries its release blindly (`blind_delete`).
    pub const BLIND_DELETE_NAME: &'static str = "naive-blind-delete";

    pub fn new(lock_path: &str) -> Self {
        NaiveLock { node: path::join(lock_path, "holder"), phase: Phase::Idle, check_owner_on_retry: true }
    }

    /// The variant that retries its release blindly: after a lost reply, the delete may already
    /// have happened and the next holder may have created the same name, which the retry then
    /// deletes, letting a third client in beside the second.
    pub fn blind_delete(lock_path: &str) -> Self {
        NaiveLock { check_owner_on_retry: false, ..NaiveLock::new(lock_path) }
    }

    fn create(&mut self, out: &mut Vec<Request>) {
        self.phase = Phase::Creating;
        out.push(Request::create(&self.node, CreateMode::Ephemeral));
    }

    fn check(&mut self, out: &mut Vec<Request>) {
        self.phase = Phase::Checking;
        out.push(Request::exists(&self.node, true));
    }

    fn on_reply(&mut self, ctx: &Ctx, request: Request, result: ZkResult, out: &mut Vec<Request>) {
        match (&self.phase, request, result) {
            (_, _, Err(ZkError::SessionExpired)) => self.phase = Phase::Idle,
            // The node's czxid orders holders: a fencing token that only grows.
            (Phase::Creating, Request::Create { .. }, Ok(Response::Created { stat, .. })) => {
                self.phase = Phase::Holding { token: stat.czxid }
            }
            (Phase::Creating, Request::Create { .. }, Err(ZkError::NodeExists)) => self.check(out),
            (Phase::Creating, Request::Create { .. }, Err(ZkError::ConnectionLoss)) => {
                self.phase = Phase::Recovering;
                out.push(Request::get_data(&self.node, false));
            }
            (Phase::Recovering, Request::GetData { .. }, Ok(Response::Data { stat, .. })) => {
                if stat.ephemeral_owner == Some(ctx.session) {
                    self.phase = Phase::Holding { token: stat.czxid };
                } else {
                    self.check(out);
                }
            }
            (Phase::Recovering, Request::GetData { .. }, Err(ZkError::NoNode)) => self.create(out),
            (Phase::Recovering, Request::GetData { .. }, Err(_)) => out.push(Request::get_data(&self.node, false)),
            (Phase::Checking, Request::Exists { .. }, Ok(Response::Exists(Some(_)))) => self.phase = Phase::Waiting,
            (Phase::Checking, Request::Exists { .. }, Ok(Response::Exists(None))) => self.create(out),
            (Phase::Checking, Request::Exists { .. }, Err(_)) => self.check(out),
            (Phase::Releasing, Request::Delete { .. }, Ok(_) | Err(ZkError::NoNode)) => self.phase = Phase::Idle,
            // The delete may have happened, and the next holder reuses the name: a blind retry
            // could delete its node. Read the node and delete it only if it is still ours.
            (Phase::Releasing, Request::Delete { .. }, Err(ZkError::ConnectionLoss)) if !self.check_owner_on_retry => {
                out.push(Request::delete(&self.node))
            }
            (Phase::Releasing, Request::Delete { .. } | Request::GetData { .. }, Err(ZkError::ConnectionLoss)) => {
                out.push(Request::get_data(&self.node, false))
            }
            (Phase::Releasing, Request::GetData { .. }, Ok(Response::Data { stat, .. }))
                if stat.ephemeral_owner == Some(ctx.session) =>
            {
                out.push(Request::delete(&self.node))
            }
            (Phase::Releasing, Request::GetData { .. }, Ok(_) | Err(ZkError::NoNode)) => self.phase = Phase::Idle,
            _ => {}
        }
    }
}

impl zklab_model::Recipe for NaiveLock {
    fn name(&self) -> String {
        if self.check_owner_on_retry { NaiveLock::NAME } else { NaiveLock::BLIND_DELETE_NAME }.to_string()
    }

    fn handle(&mut self, ctx: &Ctx, input: Input, out: &mut Vec<Request>) {
        match input {
            Input::Acquire if self.phase == Phase::Idle => self.create(out),
            Input::Release if matches!(self.phase, Phase::Holding { .. }) => {
                self.phase = Phase::Releasing;
                out.push(Request::delete(&self.node));
            }
            Input::Reply { request, result } => self.on_reply(ctx, request, result, out),
            Input::Watch(event)
                if self.phase == Phase::Waiting && event.path == self.node && event.kind == EventType::NodeDeleted =>
            {
                self.create(out)
            }
            Input::State(SessionState::Disconnected) => {
                if let Phase::Holding { token } = self.phase {
                    self.phase = Phase::Suspended { token };
                }
            }
            Input::State(SessionState::SyncConnected) => match self.phase {
                Phase::Suspended { token } => self.phase = Phase::Holding { token },
                Phase::Waiting => self.check(out),
                _ => {}
            },
            Input::State(SessionState::Expired) => self.phase = Phase::Idle,
            _ => {}
        }
    }

    fn belief(&self) -> Belief {
        match self.phase {
            Phase::Idle => Belief::Idle,
            Phase::Holding { token } => Belief::Holding { token },
            Phase::Suspended { token } => Belief::Suspended { token },
            Phase::Releasing => Belief::Releasing,
            _ => Belief::Acquiring,
        }
    }

    fn owned_node(&self) -> Option<&str> {
        match self.phase {
            Phase::Holding { .. } | Phase::Suspended { .. } | Phase::Releasing => Some(&self.node),
            _ => None,
        }
    }

    /// Supported: one node name for everyone, and ownership is read from the node's stat.
    fn renamed(&self, _: &zklab_model::Renamer) -> Option<Self> {
        Some(self.clone())
    }

    fn waits_on_one_node(&self) -> bool {
        true
    }

    /// Supported: the node's name has no number in it, and the token is its czxid.
    fn renumbered(&self, _: zklab_model::ClientId, r: &zklab_model::Renumber) -> Option<Self> {
        let phase = match self.phase {
            Phase::Holding { token } => Phase::Holding { token: r.zxid(token) },
            Phase::Suspended { token } => Phase::Suspended { token: r.zxid(token) },
            ref other => other.clone(),
        };
        Some(NaiveLock { phase, ..self.clone() })
    }

    fn renumber_token(&self, token: i64, n: &zklab_model::Numbers) -> i64 {
        n.zxid(token)
    }
}
