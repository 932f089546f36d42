//! The lock that identifies its node by data instead of by name.
//!
//! **Source.** No one project ships it as such: it is the shape of locks that record who holds them
//! for operators. Curator's `LeaderSelector` keeps its participant id as the lock node's data (its
//! `InterProcessMutex` writes the id as the node's bytes), and kazoo's `Lock` its `identifier`. The
//! flaw is the one of CURATOR-358: Curator's `LeaderSelector.getLeader()` threw NoNode when
//! leadership changed between `getParticipantNodes()` and the read of a participant's data (fixed
//! in `participantForPath`, which now treats a vanished node as "not this one" so that the next
//! child is read); brooklin PR #784 and armeria PR #839 fix the same pattern elsewhere. The
//! ephemeral-owner check on adoption is the fix for Curator's adoption of an expired session's node
//! (CURATOR-498).
//!
//! **What it does.** Every contender creates `<lock>/lock-` (ephemeral, sequential) holding its
//! client id as the node's data, so the names carry no guid. Waiting and release are those of the
//! standard lock. After a ConnectionLoss on the create the client cannot tell from the names
//! whether its node exists, so it lists the children and reads each one's data (getData), in
//! sequence order, until it finds its id; if none carries it, the create was never applied and it
//! creates again. It adopts a node only if its ephemeral owner is the current session. Between the
//! listing and a read, another contender's node can go (its holder released, its session ended),
//! and that getData fails NoNode. The correct recipe (`client-id-lock`) skips such a node: it is
//! not ours, since ours lives as long as our session.
//!
//! **What it gets wrong.** The flawed variant (`client-id-lock-nonode-fatal`) lets the NoNode
//! escape the acquire, as listing-then-reading code did in Curator: the acquire fails while its own
//! node, created but never found, stays in the queue. That is an orphan (`no_orphans`, two
//! clients), and with three clients it also blocks the third (`eventual_acquire`). The correct
//! recipe: nothing the model can show, since it either finds its node or knows the create was never
//! applied.
//!
//! **What the model leaves out.** The id is the client number and stays the same across sessions,
//! like a host name. Without lagging reads the model cannot show the worth of the ephemeral-owner
//! check: a session's nodes are gone before its client learns of the expiry, and a crashed client
//! does not come back under the same id, so no listing in a new session shows the old node. There
//! are no timeouts and no retry limits: the client retries after ConnectionLoss for as long as it
//! takes.

use crate::queue::{Names, Order, Place, Queue};
use zklab_model::path;
use zklab_model::Listing;
use zklab_model::Rewrite;
use zklab_model::{
    Belief, ClientId, CreateMode, Ctx, EventType, Input, Numbers, Renumber, Request, Response, SessionState, ZkError,
    ZkResult,
};

/// The name prefix of every contender's node.
const PREFIX: &str = "lock-";

/// The line: `lock-<counter>` and nothing else, by sequence number.
const QUEUE: Queue = Queue { marker: PREFIX, names: Names::Exactly, order: Order::Signed };

/// What the recovery does when a child vanished between the listing and its getData.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OnDataNoNode {
    /// Go on with the next child: the vanished node was someone else's.
    Skip,
    /// Fail the acquire: the node it created, if any, is forgotten.
    Fail,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Phase {
    Idle,
    Creating,
    /// The create failed with ConnectionLoss: listing the children to look for our node.
    Searching,
    /// getData of the first of these children is in flight; the rest are still to read.
    Reading(Vec<String>),
    Listing,
    Checking(String),
    Waiting(String),
    Holding,
    Suspended,
    Releasing,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ClientIdLock {
    name: &'static str,
    on_data_no_node: OnDataNoNode,
    lock_path: String,
    phase: Phase,
    node: Option<String>,
}

impl ClientIdLock {
    pub fn new(name: &'static str, lock_path: &str, on_data_no_node: OnDataNoNode) -> Self {
        ClientIdLock { name, on_data_no_node, lock_path: lock_path.to_string(), phase: Phase::Idle, node: None }
    }

    /// The data every node of this client carries.
    fn id(ctx: &Ctx) -> String {
        format!("c{}", ctx.client)
    }

    fn create(&mut self, ctx: &Ctx, out: &mut Vec<Request>) {
        self.phase = Phase::Creating;
        let prefix = path::join(&self.lock_path, PREFIX);
        out.push(Request::Create { path: prefix, data: Self::id(ctx), mode: CreateMode::EphemeralSequential });
    }

    fn list(&mut self, phase: Phase, out: &mut Vec<Request>) {
        self.phase = phase;
        out.push(Request::get_children(&self.lock_path, false));
    }

    /// Reads the next child's data, or creates again once none is left.
    fn read_next(&mut self, ctx: &Ctx, mut rest: Vec<String>, out: &mut Vec<Request>) {
        if rest.is_empty() {
            return self.create(ctx, out);
        }
        out.push(Request::get_data(&path::join(&self.lock_path, &rest[0]), false));
        rest.remove(0);
        self.phase = Phase::Reading(rest);
    }

    fn on_children(&mut self, ctx: &Ctx, children: &Listing, out: &mut Vec<Request>) {
        if self.phase == Phase::Searching {
            let line = QUEUE.line(children).into_iter().cloned().collect();
            return self.read_next(ctx, line, out);
        }
        let Some(node) = self.node.clone() else { return self.create(ctx, out) };
        match QUEUE.place(children, path::name(&node)) {
            Place::Gone => {
                // Our node is gone (our session ended under us): start over.
                self.node = None;
                self.create(ctx, out)
            }
            Place::First => self.phase = Phase::Holding,
            Place::Behind(predecessor) => {
                let predecessor = path::join(&self.lock_path, predecessor);
                out.push(Request::exists(&predecessor, true));
                self.phase = Phase::Checking(predecessor);
            }
        }
    }

    fn on_reply(&mut self, ctx: &Ctx, request: Request, result: ZkResult, out: &mut Vec<Request>) {
        match (self.phase.clone(), request, result) {
            (_, _, Err(ZkError::SessionExpired)) => self.reset(),
            (Phase::Creating, Request::Create { .. }, Ok(Response::Created { path, .. })) => {
                self.node = Some(path);
                self.list(Phase::Listing, out);
            }
            (Phase::Creating, Request::Create { .. }, Err(ZkError::ConnectionLoss)) => self.list(Phase::Searching, out),
            (
                Phase::Searching | Phase::Listing,
                Request::GetChildren { .. },
                Ok(Response::Children { children, .. }),
            ) => self.on_children(ctx, &children, out),
            (
                phase @ (Phase::Searching | Phase::Listing),
                Request::GetChildren { .. },
                Err(ZkError::ConnectionLoss),
            ) => self.list(phase, out),
            (Phase::Reading(rest), Request::GetData { path, .. }, Ok(Response::Data { data, stat })) => {
                if data == Self::id(ctx) && stat.ephemeral_owner == Some(ctx.session) {
                    self.node = Some(path);
                    self.list(Phase::Listing, out);
                } else {
                    self.read_next(ctx, rest, out);
                }
            }
            (Phase::Reading(rest), Request::GetData { .. }, Err(ZkError::NoNode)) => match self.on_data_no_node {
                OnDataNoNode::Skip => self.read_next(ctx, rest, out),
                OnDataNoNode::Fail => self.reset(),
            },
            (Phase::Reading(_), Request::GetData { .. }, Err(_)) => self.list(Phase::Searching, out),
            (Phase::Checking(predecessor), Request::Exists { .. }, Ok(Response::Exists(found))) => match found {
                Some(_) => self.phase = Phase::Waiting(predecessor),
                None => self.list(Phase::Listing, out),
            },
            (Phase::Checking(_), Request::Exists { .. }, Err(_)) => self.list(Phase::Listing, out),
            (Phase::Releasing, Request::Delete { .. }, Ok(_) | Err(ZkError::NoNode)) => self.reset(),
            (Phase::Releasing, Request::Delete { path, .. }, Err(ZkError::ConnectionLoss)) => {
                out.push(Request::delete(&path))
            }
            _ => {}
        }
    }

    fn reset(&mut self) {
        self.phase = Phase::Idle;
        self.node = None;
    }
}

impl zklab_model::Recipe for ClientIdLock {
    fn name(&self) -> String {
        self.name.to_string()
    }

    fn handle(&mut self, ctx: &Ctx, input: Input, out: &mut Vec<Request>) {
        match input {
            Input::Acquire if self.phase == Phase::Idle => self.create(ctx, out),
            Input::Release if self.phase == Phase::Holding => {
                self.phase = Phase::Releasing;
                out.push(Request::delete(self.node.as_deref().expect("holding implies a node")));
            }
            Input::Reply { request, result } => self.on_reply(ctx, request, result, out),
            Input::Watch(event) => {
                if let Phase::Waiting(watched) = &self.phase {
                    if event.kind == EventType::NodeDeleted && &event.path == watched {
                        self.list(Phase::Listing, out);
                    }
                }
            }
            Input::State(SessionState::Disconnected) if self.phase == Phase::Holding => self.phase = Phase::Suspended,
            Input::State(SessionState::SyncConnected) => match self.phase {
                Phase::Suspended => self.phase = Phase::Holding,
                Phase::Waiting(_) => self.list(Phase::Listing, out),
                _ => {}
            },
            Input::State(SessionState::Expired) => self.reset(),
            _ => {}
        }
    }

    fn belief(&self) -> Belief {
        let token = || self.node.as_deref().and_then(|n| QUEUE.sequence(path::name(n))).map_or(0, i64::from);
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
        true
    }

    /// Supported: contenders are ordered by sequence number alone, and the names still to read
    /// are renumbered with the rest.
    fn renumbered(&self, _: ClientId, r: &Renumber) -> Option<Self> {
        let phase = match &self.phase {
            Phase::Reading(rest) => Phase::Reading(rest.iter().map(|name| r.child(name)).collect()),
            Phase::Checking(watched) => Phase::Checking(r.path(watched)),
            Phase::Waiting(watched) => Phase::Waiting(r.path(watched)),
            other => other.clone(),
        };
        Some(ClientIdLock { phase, node: self.node.as_deref().map(|n| r.path(n)), ..self.clone() })
    }

    /// Its nodes' data is a client id, which holds no sequence number or zxid.
    fn renumber_data(&self, data: &str, _: &Numbers) -> Option<String> {
        Some(data.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zklab_model::{Recipe, SessionId, Stat};

    const CTX: Ctx = Ctx { client: 0, session: SessionId(1) };

    fn stat(ephemeral_owner: Option<SessionId>) -> Stat {
        Stat {
            czxid: 0,
            mzxid: 0,
            pzxid: 0,
            version: 0,
            cversion: 0,
            aversion: 0,
            ephemeral_owner,
            data_length: 0,
            num_children: 0,
        }
    }

    /// Acquires, loses the create's reply, and lists two contenders: another client's, then ours.
    fn reading(on_data_no_node: OnDataNoNode) -> (ClientIdLock, Vec<Request>) {
        let mut lock = ClientIdLock::new("c", "/lock", on_data_no_node);
        let mut out = Vec::new();
        lock.handle(&CTX, Input::Acquire, &mut out);
        let create = out.pop().unwrap();
        assert_eq!(
            create,
            Request::Create { path: "/lock/lock-".into(), data: "c0".into(), mode: CreateMode::EphemeralSequential }
        );
        lock.handle(&CTX, Input::Reply { request: create, result: Err(ZkError::ConnectionLoss) }, &mut out);
        let list = out.pop().unwrap();
        let children = vec!["lock-0000000001".to_string(), "lock-0000000000".to_string()];
        lock.handle(
            &CTX,
            Input::Reply {
                request: list,
                result: Ok(Response::Children { children: children.into(), stat: stat(None) }),
            },
            &mut out,
        );
        (lock, out)
    }

    #[test]
    fn recovery_reads_the_children_in_sequence_order_and_skips_a_vanished_one() {
        let (mut lock, mut out) = reading(OnDataNoNode::Skip);
        assert_eq!(out, vec![Request::get_data("/lock/lock-0000000000", false)]);
        let gone = Input::Reply { request: out.pop().unwrap(), result: Err(ZkError::NoNode) };
        lock.handle(&CTX, gone, &mut out);
        assert_eq!(out, vec![Request::get_data("/lock/lock-0000000001", false)]);
        let stat = stat(Some(SessionId(1)));
        let ours = Ok(Response::Data { data: "c0".into(), stat });
        lock.handle(&CTX, Input::Reply { request: out.pop().unwrap(), result: ours }, &mut out);
        assert_eq!(lock.owned_node(), Some("/lock/lock-0000000001"));
        assert_eq!(out, vec![Request::get_children("/lock", false)]);
    }

    #[test]
    fn a_node_with_our_id_from_another_session_is_not_adopted() {
        let (mut lock, mut out) = reading(OnDataNoNode::Skip);
        let stat = stat(Some(SessionId(9)));
        let stale = Ok(Response::Data { data: "c0".into(), stat });
        lock.handle(&CTX, Input::Reply { request: out.pop().unwrap(), result: stale }, &mut out);
        assert_eq!(lock.owned_node(), None);
        assert_eq!(out, vec![Request::get_data("/lock/lock-0000000001", false)]);
    }

    #[test]
    fn the_flawed_variant_fails_the_acquire_on_a_vanished_child() {
        let (mut lock, mut out) = reading(OnDataNoNode::Fail);
        lock.handle(&CTX, Input::Reply { request: out.pop().unwrap(), result: Err(ZkError::NoNode) }, &mut out);
        assert!(out.is_empty());
        assert_eq!(lock.belief(), Belief::Idle);
    }
}
