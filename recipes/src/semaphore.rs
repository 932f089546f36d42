//! A counting semaphore in the style of Curator's `InterProcessSemaphoreV2`.
//!
//! **Source.** Curator's `InterProcessSemaphoreV2` (`acquire`, `internalAcquire1Lease`,
//! `makeLease`). The flaw of `semaphore-forget-lease` is the one behind CURATOR-335, CURATOR-315,
//! CURATOR-462 and kazoo #429.
//!
//! **What it does.** Curator keeps two children under the semaphore's path: `locks/`, an
//! inter-process mutex that serialises lease creation, and `leases/`, one ephemeral-sequential
//! protected node per lease (`_c_<guid>-lease-<seq>`). To take a lease (`internalAcquire1Lease`) a
//! client acquires the mutex, creates its lease node, then loops: list `leases/` with a watch; if
//! its own node is missing, give up this try and retry from the start; if there are at most
//! `maxLeases` children, it has its lease; otherwise wait for the watch and list again. It releases
//! the mutex when it leaves the loop (holding it while it waits keeps later clients from piling up
//! lease nodes), and on any failure inside the loop returns the lease it created (a `finally`).
//! Returning a lease deletes its node with `guaranteed()`: retried until it succeeds. The model
//! does the same with a mutex on `<lock>/locks`, and its protected create adopts its node after a
//! ConnectionLoss by listing `leases/` for its guid, as Curator's protection mode does. A dropped
//! connection suspends a holder; after a reconnect a waiter lists again; an expired session ends
//! the attempt or the lease.
//!
//! **What it gets wrong.** `semaphore` (two leases) and `semaphore-max1` (one): nothing the model
//! can show. `semaphore-forget-lease` has the flaw: the lease node is created but the reply is
//! lost, and the client treats the failure as "no lease" (releases the mutex and fails the acquire)
//! without looking for the node it may have made. The node lives as long as the session and counts
//! against `max` for everyone. Clients that pass different `max` values to one semaphore also break
//! the count, which is why Curator asks all of them to pass the same one.
//!
//! **What the model leaves out.** Each acquire first creates the two parents, persistent (an
//! existing one is fine); Curator creates them as containers on NoNode, and the model has no
//! container mode. The mutex is the recipes-page lock (`SequentialLock`, standard variant), not
//! Curator's `InterProcessMutex`. The guid is the client and its session, not a random uuid. A
//! missing own lease (only after expiry here, which ends the attempt anyway) makes a new lease
//! under the mutex still held, where Curator returns the lease, releases the mutex and starts over.
//! Lease holders write to the resource without fencing: one token order cannot fence k holders at
//! once; `belief_exclusion` checks that at most `max` hold. Not modelled: several leases in one
//! acquire, timeouts, a shared count that changes `maxLeases`, lease node data, and the retry
//! policy's limit on starting over.

use crate::queue::{find_own, Order, Queue};
use crate::sequential::{SequentialLock, Style};
use zklab_model::path;
use zklab_model::{Belief, CreateMode, Ctx, EventType, Input, Mode, Recipe, Request, Response, SessionState, ZkError};

const LEASE: &str = "-lease-";

/// The inner lock that guards lease creation: the standard lock.
const MUTEX: Style = Style::STANDARD;

/// What a client does when the create of its lease fails with ConnectionLoss.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OnLeaseLoss {
    /// Protected mode: list the leases and adopt the node with our guid, if it was made.
    FindOwnLease,
    /// Fail the acquire without looking: a lease that was made is never returned.
    GiveUp,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Phase {
    Idle,
    /// Creating the `locks/` and `leases/` parents: which are still to be confirmed.
    Parents {
        locks: bool,
        leases: bool,
    },
    /// Acquiring the mutex.
    Locking,
    Creating,
    /// The lease create failed with ConnectionLoss: listing the leases for our guid.
    Recovering,
    /// getChildren(leases, watch) is in flight.
    Counting,
    /// Too many leases: waiting for the leases to change.
    Waiting,
    Holding,
    Suspended,
    Releasing,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Semaphore {
    name: &'static str,
    max: u8,
    on_lease_loss: OnLeaseLoss,
    locks: String,
    leases: String,
    phase: Phase,
    /// The mutex while it is being acquired.
    mutex: SequentialLock,
    /// The mutex's node once acquired, until its delete is confirmed.
    mutex_node: Option<String>,
    lease: Option<String>,
}

impl Semaphore {
    /// A semaphore with `max` leases at `lock_path`.
    pub fn new(name: &'static str, lock_path: &str, max: u8, on_lease_loss: OnLeaseLoss) -> Self {
        let locks = path::join(lock_path, "locks");
        Semaphore {
            name,
            max,
            on_lease_loss,
            leases: path::join(lock_path, "leases"),
            mutex: SequentialLock::new("mutex", &locks, MUTEX),
            locks,
            phase: Phase::Idle,
            mutex_node: None,
            lease: None,
        }
    }

    fn guid(ctx: &Ctx) -> String {
        format!("_c_c{}-{}{LEASE}", ctx.client, ctx.session)
    }

    /// Whether a reply, event or path belongs to the mutex rather than to the semaphore.
    fn for_mutex(&self, request_path: &str, listing: bool) -> bool {
        path::parent(request_path) == self.locks || (listing && request_path == self.locks)
    }

    fn create_lease(&mut self, ctx: &Ctx, out: &mut Vec<Request>) {
        self.phase = Phase::Creating;
        out.push(Request::create(&path::join(&self.leases, &Self::guid(ctx)), CreateMode::EphemeralSequential));
    }

    fn count(&mut self, out: &mut Vec<Request>) {
        self.phase = Phase::Counting;
        out.push(Request::get_children(&self.leases, true));
    }

    /// Lets go of the mutex: a guaranteed delete of its node, whatever the mutex believes.
    fn unlock(&mut self, out: &mut Vec<Request>) {
        if let Some(node) = self.mutex.owned_node() {
            out.push(Request::delete(node));
            self.mutex_node = Some(node.to_string());
        }
        self.mutex = SequentialLock::new("mutex", &self.locks, MUTEX);
    }

    /// Hands an input to the mutex and starts on the lease once it holds.
    fn drive_mutex(&mut self, ctx: &Ctx, input: Input, out: &mut Vec<Request>) {
        self.mutex.handle(ctx, input, out);
        if self.phase == Phase::Locking && self.mutex.belief().is_holding() {
            self.create_lease(ctx, out);
        }
    }

    fn on_reply(&mut self, ctx: &Ctx, request: Request, result: zklab_model::ZkResult, out: &mut Vec<Request>) {
        if matches!(&request, Request::Delete { path, .. } if Some(path) == self.mutex_node.as_ref()) {
            match result {
                Err(ZkError::ConnectionLoss) => out.push(request),
                _ => self.mutex_node = None,
            }
            return;
        }
        if self.for_mutex(request.path(), matches!(request, Request::GetChildren { .. })) {
            return self.drive_mutex(ctx, Input::Reply { request, result }, out);
        }
        match (&self.phase, request, result) {
            // The Expired event that follows ends the attempt.
            (_, _, Err(ZkError::SessionExpired)) => {}
            (Phase::Parents { locks, leases }, Request::Create { path, .. }, result) => {
                let (mut locks, mut leases) = (*locks, *leases);
                match result {
                    Err(ZkError::ConnectionLoss) => out.push(Request::create(&path, CreateMode::Persistent)),
                    _ if path == self.locks => locks = false,
                    _ => leases = false,
                }
                self.phase = Phase::Parents { locks, leases };
                if !locks && !leases {
                    self.phase = Phase::Locking;
                    self.drive_mutex(ctx, Input::Acquire, out);
                }
            }
            (Phase::Creating, Request::Create { .. }, Ok(Response::Created { path, .. })) => {
                self.lease = Some(path);
                self.count(out);
            }
            (Phase::Creating, Request::Create { .. }, Err(ZkError::ConnectionLoss)) => match self.on_lease_loss {
                OnLeaseLoss::FindOwnLease => {
                    self.phase = Phase::Recovering;
                    out.push(Request::get_children(&self.leases, false));
                }
                OnLeaseLoss::GiveUp => {
                    self.unlock(out);
                    self.phase = Phase::Idle;
                }
            },
            (Phase::Recovering, Request::GetChildren { .. }, Ok(Response::Children { children, .. })) => {
                match find_own(&children, &Self::guid(ctx)) {
                    Some(found) => {
                        self.lease = Some(path::join(&self.leases, found));
                        self.count(out);
                    }
                    None => self.create_lease(ctx, out),
                }
            }
            (Phase::Recovering, Request::GetChildren { .. }, Err(_)) => {
                out.push(Request::get_children(&self.leases, false))
            }
            (Phase::Counting, Request::GetChildren { .. }, Ok(Response::Children { children, .. })) => {
                let mine = self.lease.as_deref().map(path::name);
                if !children.iter().any(|c| Some(c.as_str()) == mine) {
                    self.lease = None;
                    self.create_lease(ctx, out);
                } else if children.len() <= usize::from(self.max) {
                    self.phase = Phase::Holding;
                    self.unlock(out);
                } else {
                    self.phase = Phase::Waiting;
                }
            }
            (Phase::Counting, Request::GetChildren { .. }, Err(_)) => self.count(out),
            (Phase::Releasing, Request::Delete { .. }, Ok(_) | Err(ZkError::NoNode)) => {
                self.phase = Phase::Idle;
                self.lease = None;
            }
            (Phase::Releasing, Request::Delete { path, .. }, Err(ZkError::ConnectionLoss)) => {
                out.push(Request::delete(&path))
            }
            _ => {}
        }
    }

    fn reset(&mut self) {
        self.phase = Phase::Idle;
        self.lease = None;
        self.mutex_node = None;
        self.mutex = SequentialLock::new("mutex", &self.locks, MUTEX);
    }
}

impl Recipe for Semaphore {
    fn name(&self) -> String {
        self.name.to_string()
    }

    fn handle(&mut self, ctx: &Ctx, input: Input, out: &mut Vec<Request>) {
        match input {
            Input::Acquire if self.phase == Phase::Idle => {
                self.phase = Phase::Parents { locks: true, leases: true };
                out.push(Request::create(&self.locks, CreateMode::Persistent));
                out.push(Request::create(&self.leases, CreateMode::Persistent));
            }
            Input::Release if self.phase == Phase::Holding => {
                self.phase = Phase::Releasing;
                out.push(Request::delete(self.lease.as_deref().expect("holding implies a lease")));
            }
            Input::Reply { request, result } => self.on_reply(ctx, request, result, out),
            Input::Watch(event) if self.for_mutex(&event.path, event.kind == EventType::NodeChildrenChanged) => {
                self.drive_mutex(ctx, Input::Watch(event), out)
            }
            Input::Watch(event) if self.phase == Phase::Waiting && event.path == self.leases => self.count(out),
            Input::State(SessionState::Expired) => self.reset(),
            Input::State(state) => {
                self.drive_mutex(ctx, Input::State(state), out);
                match (state, &self.phase) {
                    (SessionState::Disconnected, Phase::Holding) => self.phase = Phase::Suspended,
                    (SessionState::SyncConnected, Phase::Suspended) => self.phase = Phase::Holding,
                    // A client library that dropped its watches will never wake us: look again.
                    (SessionState::SyncConnected, Phase::Waiting) => self.count(out),
                    _ => {}
                }
            }
            _ => {}
        }
    }

    fn belief(&self) -> Belief {
        let token = || {
            let name = self.lease.as_deref().map(path::name).unwrap_or_default();
            Queue::new(LEASE, Order::Signed).sequence(name).map_or(0, i64::from)
        };
        match self.phase {
            Phase::Idle => Belief::Idle,
            Phase::Holding => Belief::Holding { token: token() },
            Phase::Suspended => Belief::Suspended { token: token() },
            Phase::Releasing => Belief::Releasing,
            _ => Belief::Acquiring,
        }
    }

    fn mode(&self) -> Mode {
        Mode::Lease { max: self.max }
    }

    fn owned_node(&self) -> Option<&str> {
        self.lease.as_deref()
    }

    fn owned_nodes(&self) -> Vec<&str> {
        self.lease.iter().map(String::as_str).chain(self.mutex.owned_node()).chain(self.mutex_node.as_deref()).collect()
    }
}
