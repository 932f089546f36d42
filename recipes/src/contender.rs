//! One state machine for the recipes that queue on an ephemeral-sequential node and watch the
//! node just before their own, in the shapes Curator and ZooKeeper's recipes page give it.
//!
//! **Source.** Three, each with its own file holding its styles, what it does beyond what is
//! shared here and the bugs it reproduces: `curator_mutex` (Curator's `InterProcessMutex`),
//! `leader_latch` (Curator's `LeaderLatch`) and `leader_election` (the "Leader Election" of
//! ZooKeeper's recipes page). A `Style` is one source's shape at one version.
//!
//! **What it does.** A leader is a holder: it leads while it believes it holds, and closing the
//! latch is the release. What every style does, as its source does:
//! - Protected create (`Naming::Protected`, Curator's `withProtection()`): the name starts
//!   `_c_<uuid>-`, a fresh uuid per create call. After a ConnectionLoss the retry lists the parent
//!   and adopts the child with that prefix, or creates again; with `session_check` (since
//!   CURATOR-498) it first compares the session with the one of the first attempt, and deletes a
//!   node found on another session (guaranteed, in the background) instead of adopting it. The
//!   uuid belongs to one create call (ProtectedMode in CreateBuilderImpl), and the call's retry loop
//!   retries SessionExpired too: after an expiry the next attempt looks for the node on the new
//!   session, with the same uuid, before it creates again. `Naming::Guid` is the recipes page's
//!   `<guid><marker>`.
//! - Order: Curator sorts the children by the text after the lock name (`lock-`, `latch-`),
//!   compared as strings, never parsed (StandardLockInternalsDriver.fixForSorting); the recipes
//!   page's election by serial-number arithmetic, right across the 32-bit wrap.
//! - The predecessor is read with a watch (`Watch`): getData in Curator (no watch is left behind if
//!   it is gone; NoNode means "list again"), exists() on the recipes page (null: list again).
//! - Release is a guaranteed delete: retried after ConnectionLoss until it is done.
//!
//! **What it gets wrong.** Nothing by itself: each style's file says what its styles get wrong.
//!
//! **What the model leaves out.** The protected uuid is the client and a count of its creates, not
//! a random uuid. Curator's retries (the create call's, and attemptLock's on NoNode) go on while
//! the retry policy allows; here they go on for as long as it takes. Not modelled: a timeout that
//! runs out during the create or the listing (only while waiting), threads other than the one
//! that holds, revocation, listeners beyond the one each source's file names, and parents created
//! as containers (the lock node exists from the start).

use crate::queue::{find_own, Order, Place, Queue};
use zklab_model::path;
use zklab_model::Listing;
use zklab_model::Rewrite;
use zklab_model::{
    Belief, ClientId, CreateMode, Ctx, EventType, Input, Numbers, Renumber, Request, Response, SessionId, SessionState,
    ZkError,
};

/// How nodes are named and found again after a ConnectionLoss.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Naming {
    /// `<guid><marker>`, the guid being the client and its session (the recipes page).
    Guid,
    /// `_c_<uuid>-<marker>`, Curator's protected mode: a fresh uuid per create.
    Protected,
}

/// How the predecessor is watched.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Watch {
    /// exists(): null means it is gone, list again (the recipes page).
    Exists,
    /// getData(): NoNode means it is gone (Curator); any event wakes the waiter.
    GetDataAnyEvent,
    /// getData(), and only a NodeDeleted wakes the waiter (LeaderLatch's watcher).
    GetDataDeleted,
}

/// What to do when the predecessor is gone at the watch, or the connection comes back.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Recheck {
    /// List the children again.
    List,
    /// Delete our node and create a new one (LeaderLatch before CURATOR-644/645).
    Reset,
}

/// Whether the application may ask again while it holds, and what a lost session does to the
/// count (Curator's `InterProcessMutex` keeps a `LockData` with a `lockCount` per thread).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reentry {
    /// Not re-entrant (LeaderLatch, the recipes page's election).
    None,
    /// A re-entrant acquire while holding counts up without a request, a release counts down
    /// and deletes at zero; the application's LOST listener releases the thread's hold to zero,
    /// so nothing of it survives the session.
    ReleasedOnLost,
    /// The same count, but LOST only tells the application the lock is gone: the thread's
    /// `LockData` stays, and an acquire from that thread afterwards is answered from it,
    /// `lockCount` up and no request, although the node went with the session.
    KeptOnLost,
}

/// What a contender does once its session has expired under it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AfterExpiry {
    /// A waiter queues again on the new session; a holder has lost the lock and stops.
    RequeueWaiter,
    /// Stays in the election until closed: a new node on the new session, leader or not.
    Rejoin,
    /// Keeps its node's path and treats the new session like a reconnect (LeaderLatch: LOST
    /// only drops leadership, RECONNECTED rechecks).
    Reconnect,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Style {
    pub naming: Naming,
    /// Ends the prefix, before the counter: `-n_`, `lock-`, `latch-`.
    pub marker: &'static str,
    pub watch: Watch,
    pub order: Order,
    pub on_predecessor_gone: Recheck,
    pub on_reconnect: Recheck,
    pub after_expiry: AfterExpiry,
    /// A holder that reconnects holds again without looking (the mutex's listener); else it
    /// lists the children first and leads again only if still first (LeaderLatch).
    pub holder_resumes: bool,
    /// A protected node found after the session changed is deleted, not adopted (CURATOR-498).
    pub session_check: bool,
    /// First in line, it reads its own node and leads only if the node's ephemeral owner is its
    /// session, else resets (CURATOR-696).
    pub owner_check: bool,
    pub reentry: Reentry,
    /// Every listing goes after a `sync` of the lock path, sent just before it: the follower
    /// catches up with the leader first, so a listing never shows what the leader has already
    /// deleted (an expired session's node to the new session of the same client).
    pub sync_before_listing: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Phase {
    Idle,
    Creating,
    /// The create failed with ConnectionLoss: listing to find the node it may have made.
    Recovering,
    Listing,
    /// The read that sets the watch on this predecessor is in flight.
    Checking(String),
    Waiting(String),
    /// First in line: reading its own node to see whose it is (CURATOR-696).
    Confirming,
    Holding,
    Suspended,
    Releasing,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Contender {
    name: &'static str,
    style: Style,
    lock_path: String,
    phase: Phase,
    node: Option<String>,
    /// Creates so far: the protected uuid is fresh per create.
    creates: u16,
    /// The session of the create in progress, known from its first reply (protected mode).
    create_session: Option<SessionId>,
    /// Old nodes whose guaranteed delete is still going on.
    deleting: Vec<String>,
    /// The thread's re-entrant count (`LockData.lockCount`): 0 when it has no hold.
    count: u8,
    /// The hold has been entered again once. One nested acquire per hold reaches every case
    /// (a nested acquire while the node lives, or after it went with the session); more would
    /// only let a holder re-enter and leave forever, a cycle that starves the waiters without
    /// telling anything about the lock.
    nested: bool,
}

impl Contender {
    pub fn new(name: &'static str, lock_path: &str, style: Style) -> Self {
        Contender {
            name,
            style,
            lock_path: lock_path.to_string(),
            phase: Phase::Idle,
            node: None,
            creates: 0,
            create_session: None,
            deleting: Vec::new(),
            count: 0,
            nested: false,
        }
    }

    /// First in line: the hold begins, counted once.
    fn hold(&mut self) {
        self.phase = Phase::Holding;
        // Only a re-entrant lock counts: a latch that kept a count would tell states apart
        // by nothing it ever reads.
        self.count = u8::from(self.style.reentry != Reentry::None);
        self.nested = false;
    }

    /// Gives the lock back, or the waiter's place in line: the node goes with a guaranteed
    /// delete, and the contender is idle once it is done.
    fn release(&mut self, out: &mut Vec<Request>) {
        self.count = 0;
        self.nested = false;
        self.forget_node(out);
        self.phase = Phase::Releasing;
        if self.deleting.is_empty() {
            self.phase = Phase::Idle;
        }
    }

    /// The prefix of the node the current create makes (its name up to the counter).
    fn prefix(&self, ctx: &Ctx) -> String {
        match self.style.naming {
            Naming::Guid => format!("{}{}", crate::sequential::guid_of(ctx.client, ctx.session), self.style.marker),
            Naming::Protected => format!("_c_c{}-{}-{}", ctx.client, self.creates, self.style.marker),
        }
    }

    fn create(&mut self, ctx: &Ctx, out: &mut Vec<Request>) {
        self.phase = Phase::Creating;
        out.push(Request::create(&path::join(&self.lock_path, &self.prefix(ctx)), CreateMode::EphemeralSequential));
    }

    /// A new create call: a fresh uuid, a new first attempt.
    fn create_new(&mut self, ctx: &Ctx, out: &mut Vec<Request>) {
        self.creates = self.creates.wrapping_add(1);
        self.create_session = None;
        self.create(ctx, out);
    }

    fn list(&mut self, phase: Phase, out: &mut Vec<Request>) {
        self.phase = phase;
        if self.style.sync_before_listing {
            // Its reply says nothing: the listing's, which ZooKeeper answers after it, does.
            out.push(Request::sync(&self.lock_path));
        }
        out.push(Request::get_children(&self.lock_path, false));
    }

    /// Gives a node up with a guaranteed delete.
    fn forget_node(&mut self, out: &mut Vec<Request>) {
        if let Some(node) = self.node.take() {
            out.push(Request::delete(&node));
            self.deleting.push(node);
        }
    }

    /// LeaderLatch's reset: not leader, old node deleted, a new one created.
    fn reset(&mut self, ctx: &Ctx, out: &mut Vec<Request>) {
        self.forget_node(out);
        self.create_new(ctx, out);
    }

    fn recheck(&mut self, how: Recheck, ctx: &Ctx, out: &mut Vec<Request>) {
        match how {
            Recheck::List => self.list(Phase::Listing, out),
            Recheck::Reset => self.reset(ctx, out),
        }
    }

    /// The line: anything, the marker, the counter; in the style's order.
    fn queue(&self) -> Queue {
        Queue::new(self.style.marker, self.style.order)
    }

    fn on_children(&mut self, ctx: &Ctx, children: &Listing, out: &mut Vec<Request>) {
        if self.phase == Phase::Recovering {
            let found = find_own(children, &self.prefix(ctx)).map(|c| path::join(&self.lock_path, c));
            // Protected mode's session check: a node made by an earlier session is not ours.
            if self.style.session_check && self.create_session.is_some_and(|s| s != ctx.session) {
                if let Some(found) = found {
                    out.push(Request::delete(&found));
                    self.deleting.push(found);
                }
                self.create_session = Some(ctx.session);
                return self.create(ctx, out);
            }
            match found {
                // Curator's create returns the found path; the lock loop then lists afresh.
                Some(found) if self.style.naming == Naming::Protected => {
                    self.node = Some(found);
                    return self.list(Phase::Listing, out);
                }
                Some(found) => self.node = Some(found),
                None => return self.create(ctx, out),
            }
        }
        let Some(node) = self.node.clone() else { return self.create_new(ctx, out) };
        let predecessor = match self.queue().place(children, path::name(&node)) {
            Place::Behind(predecessor) => predecessor,
            Place::First if self.style.owner_check => {
                self.phase = Phase::Confirming;
                return out.push(Request::get_data(&node, false));
            }
            Place::First => return self.hold(),
            Place::Gone => {
                // Our node is gone (our session ended under us): a new one, as Curator does.
                self.node = None;
                return self.create_new(ctx, out);
            }
        };
        let predecessor = path::join(&self.lock_path, predecessor);
        out.push(match self.style.watch {
            Watch::Exists => Request::exists(&predecessor, true),
            Watch::GetDataAnyEvent | Watch::GetDataDeleted => Request::get_data(&predecessor, true),
        });
        self.phase = Phase::Checking(predecessor);
    }

    fn on_reply(&mut self, ctx: &Ctx, request: Request, result: zklab_model::ZkResult, out: &mut Vec<Request>) {
        if let Request::Delete { path, .. } = &request {
            if let Some(at) = self.deleting.iter().position(|d| d == path) {
                return match result {
                    Err(ZkError::ConnectionLoss) => out.push(Request::delete(path)),
                    _ => {
                        self.deleting.remove(at);
                        if self.phase == Phase::Releasing && self.deleting.is_empty() {
                            self.phase = Phase::Idle;
                        }
                    }
                };
            }
            return;
        }
        match (self.phase.clone(), request, result) {
            // The Expired state event that follows says what to do.
            (_, _, Err(ZkError::SessionExpired)) => {}
            (Phase::Creating, Request::Create { .. }, result) => {
                self.create_session.get_or_insert(ctx.session);
                match result {
                    Ok(Response::Created { path, .. }) => {
                        self.node = Some(path);
                        self.list(Phase::Listing, out);
                    }
                    Err(ZkError::ConnectionLoss) => self.list(Phase::Recovering, out),
                    _ => {}
                }
            }
            (
                Phase::Listing | Phase::Recovering,
                Request::GetChildren { .. },
                Ok(Response::Children { children, .. }),
            ) => self.on_children(ctx, &children, out),
            (phase @ (Phase::Listing | Phase::Recovering), Request::GetChildren { .. }, Err(_)) => {
                self.list(phase, out)
            }
            (Phase::Checking(predecessor), Request::Exists { .. }, Ok(Response::Exists(found))) => match found {
                Some(_) => self.phase = Phase::Waiting(predecessor),
                None => self.recheck(self.style.on_predecessor_gone, ctx, out),
            },
            (Phase::Checking(predecessor), Request::GetData { .. }, Ok(Response::Data { .. })) => {
                self.phase = Phase::Waiting(predecessor)
            }
            (Phase::Checking(_), Request::GetData { .. }, Err(ZkError::NoNode)) => {
                self.recheck(self.style.on_predecessor_gone, ctx, out)
            }
            (Phase::Checking(_), _, Err(_)) => self.list(Phase::Listing, out),
            // Curator reads the owner from the reply's stat; no stat (any error) means reset.
            (Phase::Confirming, Request::GetData { .. }, result) => match result {
                Ok(Response::Data { stat, .. }) if stat.ephemeral_owner == Some(ctx.session) => self.hold(),
                _ => self.reset(ctx, out),
            },
            _ => {}
        }
    }

    fn on_expired(&mut self, ctx: &Ctx, out: &mut Vec<Request>) {
        // The session's nodes, and with them any delete still owed, are gone.
        self.deleting.clear();
        if self.style.naming == Naming::Protected && matches!(self.phase, Phase::Creating | Phase::Recovering) {
            // The create call retries: it looks for its node on the new session. `ctx` is still
            // the old session, the one the call's first attempt recorded.
            self.create_session.get_or_insert(ctx.session);
            return self.list(Phase::Recovering, out);
        }
        if self.style.after_expiry == AfterExpiry::Reconnect {
            return match self.phase {
                Phase::Idle | Phase::Releasing => self.phase = Phase::Idle,
                _ if self.node.is_none() => self.create_new(ctx, out),
                _ => self.recheck(self.style.on_reconnect, ctx, out),
            };
        }
        if self.style.reentry == Reentry::KeptOnLost && self.count > 0 {
            // LOST: the application stops, but the thread's LockData (its node, its count) stays.
            self.phase = Phase::Idle;
            return;
        }
        self.node = None;
        self.count = 0;
        self.nested = false;
        let waiting = !matches!(self.phase, Phase::Idle | Phase::Holding | Phase::Suspended | Phase::Releasing);
        match self.style.after_expiry {
            AfterExpiry::RequeueWaiter if waiting => self.create_new(ctx, out),
            AfterExpiry::Rejoin if !matches!(self.phase, Phase::Idle | Phase::Releasing) => self.create_new(ctx, out),
            _ => self.phase = Phase::Idle,
        }
    }
}

impl zklab_model::Recipe for Contender {
    fn name(&self) -> String {
        self.name.to_string()
    }

    fn handle(&mut self, ctx: &Ctx, input: Input, out: &mut Vec<Request>) {
        match input {
            // Re-entry: answered from the thread's count, whatever became of the node.
            Input::Acquire if self.accepts_reentry() => {
                self.count += 1;
                self.nested = true;
                self.phase = Phase::Holding;
            }
            Input::Acquire if self.phase == Phase::Idle => self.create_new(ctx, out),
            Input::Release if self.phase == Phase::Holding && self.count > 1 => self.count -= 1,
            Input::Release if self.phase == Phase::Holding => self.release(out),
            // acquire(time, unit) runs out while waiting: the node goes (deleteOurPath).
            Input::Abandon if matches!(self.phase, Phase::Waiting(_)) => self.release(out),
            Input::Reply { request, result } => self.on_reply(ctx, request, result, out),
            Input::Watch(event) => {
                if let Phase::Waiting(watched) = &self.phase {
                    let wakes = match self.style.watch {
                        Watch::Exists | Watch::GetDataDeleted => event.kind == EventType::NodeDeleted,
                        Watch::GetDataAnyEvent => true,
                    };
                    if wakes && &event.path == watched {
                        self.list(Phase::Listing, out);
                    }
                }
            }
            Input::State(SessionState::Disconnected) if self.phase == Phase::Holding => self.phase = Phase::Suspended,
            Input::State(SessionState::SyncConnected) => match self.phase {
                Phase::Suspended if self.style.holder_resumes => self.phase = Phase::Holding,
                Phase::Suspended | Phase::Waiting(_) => self.recheck(self.style.on_reconnect, ctx, out),
                _ => {}
            },
            Input::State(SessionState::Expired) => self.on_expired(ctx, out),
            _ => {}
        }
    }

    fn belief(&self) -> Belief {
        let token = || self.node.as_deref().and_then(|n| self.queue().sequence(path::name(n))).map_or(0, i64::from);
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

    fn owned_nodes(&self) -> Vec<&str> {
        self.node.iter().chain(&self.deleting).map(String::as_str).collect()
    }

    /// Holding and not yet nested, or (`KeptOnLost`) idle with a count its session outlived.
    fn accepts_reentry(&self) -> bool {
        self.style.reentry != Reentry::None
            && self.count == 1
            && !self.nested
            && matches!(self.phase, Phase::Holding | Phase::Idle)
    }

    /// While it waits on its predecessor, with nothing in flight.
    fn can_abandon(&self) -> bool {
        matches!(self.phase, Phase::Waiting(_))
    }

    fn waits_on_one_node(&self) -> bool {
        true
    }

    /// Supported: sequence numbers are only compared with one another, the token is one, and a
    /// protected uuid is only compared with the current one (`creates` only grows).
    fn renumbered(&self, client: ClientId, r: &Renumber) -> Option<Self> {
        let phase = match &self.phase {
            Phase::Checking(watched) => Phase::Checking(r.path(watched)),
            Phase::Waiting(watched) => Phase::Waiting(r.path(watched)),
            other => other.clone(),
        };
        Some(Contender {
            phase,
            node: self.node.as_deref().map(|n| r.path(n)),
            creates: r.local(client, i64::from(self.creates)) as u16,
            deleting: self.deleting.iter().map(|d| r.path(d)).collect(),
            ..self.clone()
        })
    }

    /// `_c_c<client>-<uuid>-<marker><counter>`: the uuid is one of the client's own numbers.
    fn renumber_name(&self, name: &str, n: &Numbers) -> String {
        match parse_protected(name) {
            Some((client, uuid, rest)) => {
                format!("_c_c{client}-{}-{}", n.local(client, uuid), n.sequential_name(rest))
            }
            None => n.sequential_name(name),
        }
    }
}

/// The client, the uuid and the rest of a protected name (`_c_c0-3-latch-0000000005`).
fn parse_protected(name: &str) -> Option<(ClientId, i64, &str)> {
    let (client, rest) = name.strip_prefix("_c_c")?.split_once('-')?;
    let (uuid, rest) = rest.split_once('-')?;
    Some((client.parse().ok()?, uuid.parse().ok()?, rest))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::curator_mutex::{CURATOR_MUTEX, CURATOR_MUTEX_BEFORE_498};
    use crate::leader_election::LEADER_ELECTION;
    use crate::leader_latch::{LEADER_LATCH, LEADER_LATCH_BEFORE_644, LEADER_LATCH_BEFORE_696};
    use zklab_model::{Recipe, Stat};

    const CTX: Ctx = Ctx { client: 0, session: SessionId(2) };

    fn reply(r: &mut Contender, ctx: &Ctx, request: Request, result: zklab_model::ZkResult) -> Vec<Request> {
        let mut out = Vec::new();
        r.handle(ctx, Input::Reply { request, result }, &mut out);
        out
    }

    fn children(names: &[&str]) -> zklab_model::ZkResult {
        Ok(Response::Children { children: names.iter().map(|n| n.to_string()).collect(), stat: Stat::default() })
    }

    /// Acquires; the create's reply is lost; returns the recovery's listing request.
    fn lost_create(r: &mut Contender) -> Request {
        let mut out = Vec::new();
        r.handle(&CTX, Input::Acquire, &mut out);
        assert_eq!(out, vec![Request::create("/lock/_c_c0-1-lock-", CreateMode::EphemeralSequential)]);
        let mut listing = reply(r, &CTX, out.pop().unwrap(), Err(ZkError::ConnectionLoss));
        assert_eq!(listing, vec![Request::get_children("/lock", false)]);
        listing.pop().unwrap()
    }

    #[test]
    fn the_mutex_adopts_its_protected_node_after_a_lost_reply_and_lists_again() {
        let mut mutex = Contender::new("m", "/lock", CURATOR_MUTEX);
        let list = lost_create(&mut mutex);
        let out = reply(&mut mutex, &CTX, list, children(&["_c_c1-1-lock-0000000000", "_c_c0-1-lock-0000000001"]));
        assert_eq!(mutex.owned_node(), Some("/lock/_c_c0-1-lock-0000000001"));
        assert_eq!(out, vec![Request::get_children("/lock", false)]);
        let out =
            reply(&mut mutex, &CTX, out[0].clone(), children(&["_c_c1-1-lock-0000000000", "_c_c0-1-lock-0000000001"]));
        assert_eq!(out, vec![Request::get_data("/lock/_c_c1-1-lock-0000000000", true)], "getData, not exists");
        let gone = reply(&mut mutex, &CTX, out[0].clone(), Err(ZkError::NoNode));
        assert_eq!(gone, vec![Request::get_children("/lock", false)], "a vanished predecessor means list again");
    }

    #[test]
    fn a_node_found_after_the_session_changed_is_deleted_not_adopted() {
        let mut mutex = Contender::new("m", "/lock", CURATOR_MUTEX);
        let list = lost_create(&mut mutex);
        let later = Ctx { client: 0, session: SessionId(7) };
        let out = reply(&mut mutex, &later, list, children(&["_c_c0-1-lock-0000000001"]));
        assert_eq!(mutex.owned_node(), None);
        assert_eq!(
            out,
            vec![
                Request::delete("/lock/_c_c0-1-lock-0000000001"),
                Request::create("/lock/_c_c0-1-lock-", CreateMode::EphemeralSequential)
            ]
        );
    }

    /// Acquires; the create's reply is lost, then the session expires under the recovery's
    /// listing; returns the listing the create call sends on the new session.
    fn create_across_expiry(r: &mut Contender) -> Request {
        let list = lost_create(r);
        assert!(reply(r, &CTX, list, Err(ZkError::SessionExpired)).is_empty(), "the Expired event decides");
        let mut out = Vec::new();
        r.handle(&CTX, Input::State(SessionState::Expired), &mut out);
        assert_eq!(out, vec![Request::get_children("/lock", false)], "the same create call looks again");
        out.pop().unwrap()
    }

    #[test]
    fn across_an_expiry_the_fixed_mutex_deletes_its_old_node_and_the_mutex_before_498_adopts_it() {
        let later = Ctx { client: 0, session: SessionId(7) };
        let stale = || children(&["_c_c0-1-lock-0000000000"]);
        let mut fixed = Contender::new("m", "/lock", CURATOR_MUTEX);
        let list = create_across_expiry(&mut fixed);
        assert_eq!(
            reply(&mut fixed, &later, list, stale()),
            vec![
                Request::delete("/lock/_c_c0-1-lock-0000000000"),
                Request::create("/lock/_c_c0-1-lock-", CreateMode::EphemeralSequential)
            ],
            "same uuid, new session"
        );
        let mut old = Contender::new("m", "/lock", CURATOR_MUTEX_BEFORE_498);
        let list = create_across_expiry(&mut old);
        assert_eq!(reply(&mut old, &later, list, stale()), vec![Request::get_children("/lock", false)]);
        assert_eq!(old.owned_node(), Some("/lock/_c_c0-1-lock-0000000000"), "adopted from the old session");
    }

    /// A latch of `style` that led with `_c_c0-1-latch-0000000000` on session 2, whose session
    /// then expired: returns it with the listing it sends on its new session.
    fn latch_after_expiry(style: Style) -> (Contender, Request) {
        let (mut latch, _) = listed(style, "_c_c0-1-latch-0000000000", &["_c_c0-1-latch-0000000000"]);
        let mut out = Vec::new();
        latch.handle(&CTX, Input::State(SessionState::Disconnected), &mut out);
        latch.handle(&CTX, Input::State(SessionState::Expired), &mut out);
        assert_eq!(latch.belief(), Belief::Acquiring, "LOST drops leadership");
        assert_eq!(out, vec![Request::get_children("/lock", false)], "it keeps its path and lists");
        (latch, out.pop().unwrap())
    }

    #[test]
    fn shown_its_old_node_first_the_latch_before_696_leads_and_the_fixed_one_asks_whose_it_is() {
        let later = Ctx { client: 0, session: SessionId(7) };
        let stale = || children(&["_c_c0-1-latch-0000000000", "_c_c1-1-latch-0000000001"]);
        let (mut old, list) = latch_after_expiry(LEADER_LATCH_BEFORE_696);
        assert!(reply(&mut old, &later, list, stale()).is_empty());
        assert!(old.belief().is_holding(), "leads on a node its new session does not own");

        let (mut fixed, list) = latch_after_expiry(LEADER_LATCH);
        let read = reply(&mut fixed, &later, list, stale());
        assert_eq!(read, vec![Request::get_data("/lock/_c_c0-1-latch-0000000000", false)]);
        let old_owner = Ok(Response::Data {
            data: String::new(),
            stat: Stat { ephemeral_owner: Some(CTX.session), ..Stat::default() },
        });
        assert_eq!(
            reply(&mut fixed, &later, read[0].clone(), old_owner),
            vec![
                Request::delete("/lock/_c_c0-1-latch-0000000000"),
                Request::create("/lock/_c_c0-2-latch-", CreateMode::EphemeralSequential)
            ],
            "owned by the old session: reset"
        );
        assert_eq!(fixed.belief(), Belief::Acquiring);
    }

    #[test]
    fn the_fixed_latch_leads_when_its_node_is_its_sessions() {
        let names = ["_c_c0-1-latch-0000000000"];
        let (mut latch, read) = listed(LEADER_LATCH, names[0], &names);
        assert_eq!(read, vec![Request::get_data("/lock/_c_c0-1-latch-0000000000", false)]);
        assert_eq!(latch.belief(), Belief::Acquiring, "not leader before the owner is known");
        let mine = Ok(Response::Data {
            data: String::new(),
            stat: Stat { ephemeral_owner: Some(CTX.session), ..Stat::default() },
        });
        assert!(reply(&mut latch, &CTX, read[0].clone(), mine).is_empty());
        assert!(latch.belief().is_holding());
    }

    #[test]
    fn release_is_a_guaranteed_delete() {
        let mut mutex = Contender::new("m", "/lock", CURATOR_MUTEX);
        let mut out = Vec::new();
        mutex.handle(&CTX, Input::Acquire, &mut out);
        let created = Ok(Response::Created { path: "/lock/_c_c0-1-lock-0000000000".into(), stat: Stat::default() });
        let list = reply(&mut mutex, &CTX, out.pop().unwrap(), created);
        reply(&mut mutex, &CTX, list[0].clone(), children(&["_c_c0-1-lock-0000000000"]));
        assert!(mutex.belief().is_holding());
        mutex.handle(&CTX, Input::Release, &mut out);
        let delete = out.pop().unwrap();
        assert_eq!(reply(&mut mutex, &CTX, delete.clone(), Err(ZkError::ConnectionLoss)), vec![delete.clone()]);
        assert_eq!(mutex.belief(), Belief::Releasing);
        assert_eq!(mutex.owned_nodes(), vec!["/lock/_c_c0-1-lock-0000000000"]);
        reply(&mut mutex, &CTX, delete, Ok(Response::Deleted));
        assert_eq!(mutex.belief(), Belief::Idle);
    }

    /// A contender of `style` whose node is `mine`, given the listing `names`.
    fn listed(style: Style, mine: &str, names: &[&str]) -> (Contender, Vec<Request>) {
        let mut r = Contender::new("r", "/lock", style);
        let mut out = Vec::new();
        r.handle(&CTX, Input::Acquire, &mut out);
        let created = Ok(Response::Created { path: format!("/lock/{mine}"), stat: Stat::default() });
        let list = reply(&mut r, &CTX, out.pop().unwrap(), created);
        let out = reply(&mut r, &CTX, list[0].clone(), children(names));
        (r, out)
    }

    #[test]
    fn curator_sorts_the_counter_as_text_and_breaks_at_the_wrap() {
        let names = ["_c_c1-1-lock-2147483647", "_c_c0-1-lock--2147483648"];
        let (mutex, _) = listed(CURATOR_MUTEX, names[1], &names);
        assert!(mutex.belief().is_holding(), "-2147483648 sorts first as text");
    }

    #[test]
    fn the_recipes_page_election_orders_across_the_wrap() {
        let names = ["c1-s3-n_2147483647", "c0-s2-n_-2147483648"];
        let (election, out) = listed(LEADER_ELECTION, names[1], &names);
        assert_eq!(election.belief(), Belief::Acquiring);
        assert_eq!(out, vec![Request::exists("/lock/c1-s3-n_2147483647", true)]);
    }

    #[test]
    fn the_latch_before_644_resets_when_its_predecessor_is_gone_and_the_fixed_one_lists() {
        let names = ["_c_c1-1-latch-0000000000", "_c_c0-1-latch-0000000001"];
        let (mut fixed, out) = listed(LEADER_LATCH, names[1], &names);
        assert_eq!(out, vec![Request::get_data("/lock/_c_c1-1-latch-0000000000", true)]);
        assert_eq!(
            reply(&mut fixed, &CTX, out[0].clone(), Err(ZkError::NoNode)),
            vec![Request::get_children("/lock", false)]
        );
        let (mut old, out) = listed(LEADER_LATCH_BEFORE_644, names[1], &names);
        assert_eq!(
            reply(&mut old, &CTX, out[0].clone(), Err(ZkError::NoNode)),
            vec![
                Request::delete("/lock/_c_c0-1-latch-0000000001"),
                Request::create("/lock/_c_c0-2-latch-", CreateMode::EphemeralSequential)
            ]
        );
    }

    #[test]
    fn a_leader_that_reconnects_leads_again_only_after_listing() {
        let names = ["_c_c0-1-latch-0000000000"];
        let (mut latch, _) = listed(LEADER_LATCH_BEFORE_696, names[0], &names);
        assert!(latch.belief().is_holding());
        let mut out = Vec::new();
        latch.handle(&CTX, Input::State(SessionState::Disconnected), &mut out);
        assert!(matches!(latch.belief(), Belief::Suspended { .. }));
        latch.handle(&CTX, Input::State(SessionState::SyncConnected), &mut out);
        assert_eq!(latch.belief(), Belief::Acquiring);
        assert_eq!(out, vec![Request::get_children("/lock", false)]);
    }
}
