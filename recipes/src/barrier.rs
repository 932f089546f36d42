//! A barrier: parties meet at the lock path, and none goes on before all of them have come.
//! Asking for the lock is entering the barrier; holding it is having passed; releasing it is
//! leaving (`Mode::Barrier`, judged by `barrier_waits`).
//!
//! **Source.** ZooKeeper's recipes page, "Double Barriers", its enter half: create the party's
//! own ephemeral node `<b>/<name>`, set a watch on `<b>/ready` (exists), list `<b>`; with
//! fewer parties than the barrier's size wait for `ready`, else create `ready` and go on. A
//! party that finds `ready` there, or hears it created, passes.
//!
//! **What it does.** `barrier` is that recipe, for `PARTIES` parties, each named by its client
//! (`c0`, `c1`): a create whose reply is lost is sent again and answered NodeExists if the first
//! was applied, which is the party's own node. Leaving deletes it. `ready` stays: a party that
//! comes late passes at once. A lost read is sent again; on a reconnect a waiting party asks for
//! `ready` again (a library that drops its watches, kazoo, would not tell it).
//!
//! **What it gets wrong.** `barrier`: nothing the model can show. The broken variants:
//! - `barrier-count` waits for the listing itself to show every party (a child watch, no
//!   `ready`). The first to pass may leave before another has listed: its node is gone, the
//!   other never sees every party and waits forever (`eventual_acquire`). That is why the
//!   recipe has a `ready` node.
//! - `barrier-sequential` names its node with a sequential create and, on a lost reply, simply
//!   creates again (the blind retry of docs/pitfalls.md): when the first create was applied the
//!   party has two nodes, which count as two parties, and the other passes before every party
//!   has entered (`barrier_waits`).
//!
//! **What the model leaves out.** The leave half (wait until every party's node is gone) and
//! barriers of other sizes; a party whose session expires stops.

use zklab_model::path;
use zklab_model::{
    Belief, CreateMode, Ctx, EventType, Input, Mode, Property, Request, Response, SessionState, ZkError, ZkResult,
};

/// How many parties the catalogue's barriers wait for.
pub const PARTIES: u8 = 2;

/// The name of the node that says every party has entered.
const READY: &str = "ready";

/// Which barrier.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Style {
    /// The recipes page's: own names, a `ready` node.
    Ready,
    /// Waits for the listing to show every party; no `ready` node.
    Count,
    /// Sequential names, a lost create blindly sent again; otherwise `Ready`'s.
    Sequential,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Phase {
    Idle,
    /// Its own node's create is in flight (and, but for `Count`, the watch on `ready`).
    Entering,
    /// Listing the parties.
    Counting,
    /// Fewer parties than the barrier's size: waiting for `ready` (or, `Count`, the listing).
    Waiting,
    /// Creating `ready`.
    Opening,
    Passed,
    Leaving,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Barrier {
    name: &'static str,
    path: String,
    style: Style,
    phase: Phase,
    /// The party's own node, once it knows its name.
    node: Option<String>,
}

impl Barrier {
    pub fn new(name: &'static str, lock_path: &str, style: Style) -> Self {
        Barrier { name, path: lock_path.to_string(), style, phase: Phase::Idle, node: None }
    }

    fn ready(&self) -> String {
        path::join(&self.path, READY)
    }

    /// Its own node, then the watch on `ready` (the recipes page sets the watch first; either
    /// order sees a `ready` made before the listing, and this one lets a fault strike the
    /// create, the request a step sends first).
    fn enter(&mut self, ctx: &Ctx, out: &mut Vec<Request>) {
        self.phase = Phase::Entering;
        self.create(ctx, out);
        if self.style != Style::Count {
            out.push(Request::exists(&self.ready(), true));
        }
    }

    fn create(&mut self, ctx: &Ctx, out: &mut Vec<Request>) {
        match self.style {
            Style::Sequential => {
                out.push(Request::create(&path::join(&self.path, "p-"), CreateMode::EphemeralSequential))
            }
            Style::Ready | Style::Count => {
                let own = path::join(&self.path, &format!("c{}", ctx.client));
                out.push(Request::create(&own, CreateMode::Ephemeral));
                self.node = Some(own);
            }
        }
    }

    fn count(&mut self, out: &mut Vec<Request>) {
        self.phase = Phase::Counting;
        out.push(Request::get_children(&self.path, self.style == Style::Count));
    }

    fn pass(&mut self) {
        self.phase = Phase::Passed;
    }

    fn on_reply(&mut self, ctx: &Ctx, request: Request, result: ZkResult, out: &mut Vec<Request>) {
        let ready = self.ready();
        match (&self.phase, request, result) {
            (_, _, Err(ZkError::SessionExpired)) => {
                self.phase = Phase::Idle;
                self.node = None;
            }
            // `ready` already there: every party has entered.
            (
                Phase::Entering | Phase::Counting | Phase::Waiting,
                Request::Exists { path, .. },
                Ok(Response::Exists(Some(_))),
            ) if path == ready => self.pass(),
            (Phase::Entering | Phase::Counting | Phase::Waiting, Request::Exists { path, .. }, Err(_))
                if path == ready =>
            {
                out.push(Request::exists(&ready, true))
            }
            // Passed on `ready` before its own create was answered: it learns its node's name.
            (Phase::Passed, Request::Create { .. }, Ok(Response::Created { path, .. })) if path != ready => {
                self.node = Some(path)
            }
            (Phase::Entering, Request::Create { .. }, Ok(Response::Created { path, .. })) => {
                self.node = Some(path);
                self.count(out);
            }
            // The first create was applied: the node is this party's own.
            (Phase::Entering, Request::Create { .. }, Err(ZkError::NodeExists)) => self.count(out),
            (Phase::Entering, Request::Create { .. }, Err(ZkError::ConnectionLoss)) => self.create(ctx, out),
            (Phase::Counting, Request::GetChildren { .. }, Ok(Response::Children { children, .. })) => {
                let parties = children.names().filter(|n| *n != READY).count();
                match (parties >= usize::from(PARTIES), self.style) {
                    (true, Style::Count) => self.pass(),
                    (true, _) => {
                        self.phase = Phase::Opening;
                        out.push(Request::create(&ready, CreateMode::Persistent));
                    }
                    (false, _) => self.phase = Phase::Waiting,
                }
            }
            (Phase::Counting, Request::GetChildren { .. }, Err(_)) => self.count(out),
            (Phase::Opening, Request::Create { .. }, Ok(_) | Err(ZkError::NodeExists)) => self.pass(),
            (Phase::Opening, Request::Create { .. }, Err(_)) => {
                out.push(Request::create(&ready, CreateMode::Persistent))
            }
            (Phase::Leaving, Request::Delete { .. }, Ok(_) | Err(ZkError::NoNode)) => {
                self.phase = Phase::Idle;
                self.node = None;
            }
            (Phase::Leaving, Request::Delete { path, .. }, Err(_)) => out.push(Request::delete(&path)),
            _ => {}
        }
    }
}

impl zklab_model::Recipe for Barrier {
    fn name(&self) -> String {
        self.name.to_string()
    }

    fn handle(&mut self, ctx: &Ctx, input: Input, out: &mut Vec<Request>) {
        match input {
            Input::Acquire if self.phase == Phase::Idle => self.enter(ctx, out),
            Input::Release if self.phase == Phase::Passed => match self.node.clone() {
                Some(node) => {
                    self.phase = Phase::Leaving;
                    out.push(Request::delete(&node));
                }
                None => self.phase = Phase::Idle,
            },
            Input::Reply { request, result } => self.on_reply(ctx, request, result, out),
            Input::Watch(event) if matches!(self.phase, Phase::Entering | Phase::Counting | Phase::Waiting) => {
                match (self.style, event.kind) {
                    (Style::Count, EventType::NodeChildrenChanged) if self.phase == Phase::Waiting => self.count(out),
                    (Style::Ready | Style::Sequential, EventType::NodeCreated) if event.path == self.ready() => {
                        self.pass()
                    }
                    _ => {}
                }
            }
            // A library that dropped its watches says nothing more: ask again.
            Input::State(SessionState::SyncConnected) if self.phase == Phase::Waiting => match self.style {
                Style::Count => self.count(out),
                Style::Ready | Style::Sequential => out.push(Request::exists(&self.ready(), true)),
            },
            Input::State(SessionState::Expired) => {
                self.phase = Phase::Idle;
                self.node = None;
            }
            _ => {}
        }
    }

    fn belief(&self) -> Belief {
        match self.phase {
            Phase::Idle => Belief::Idle,
            Phase::Entering | Phase::Counting | Phase::Waiting | Phase::Opening => Belief::Acquiring,
            // A barrier hands out no fencing token.
            Phase::Passed => Belief::Holding { token: 0 },
            Phase::Leaving => Belief::Releasing,
        }
    }

    fn mode(&self) -> Mode {
        Mode::Barrier { parties: PARTIES }
    }

    fn owned_node(&self) -> Option<&str> {
        self.node.as_deref()
    }

    /// A barrier's own properties, liveness and what must be reached; not a lock's exclusion,
    /// fencing or orphans (`ready` is nobody's node, by design).
    fn applies(&self, property: Property) -> bool {
        matches!(property, Property::BarrierWaits | Property::EventualAcquire | Property::Reached(_))
    }

    /// It counts the nodes it lists, whatever their numbers: the checker keeps its states as
    /// they are rather than renumber them.
    fn renumbered_by_replay(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zklab_model::{Listing, Recipe, SessionId, Stat};

    const CTX: Ctx = Ctx { client: 1, session: SessionId(2) };

    fn reply(b: &mut Barrier, request: Request, result: ZkResult) -> Vec<Request> {
        let mut out = Vec::new();
        b.handle(&CTX, Input::Reply { request, result }, &mut out);
        out
    }

    fn children(names: &[&str]) -> ZkResult {
        Ok(Response::Children {
            children: Listing::new(names.iter().map(|n| n.to_string()).collect()),
            stat: Stat::default(),
        })
    }

    #[test]
    fn a_party_waits_for_ready_until_every_party_has_come() {
        let mut b = Barrier::new("barrier", "/lock", Style::Ready);
        let mut out = Vec::new();
        b.handle(&CTX, Input::Acquire, &mut out);
        assert_eq!(out, vec![Request::create("/lock/c1", CreateMode::Ephemeral), Request::exists("/lock/ready", true)]);
        let created = Ok(Response::Created { path: "/lock/c1".into(), stat: Stat::default() });
        assert_eq!(reply(&mut b, out[0].clone(), created), vec![Request::get_children("/lock", false)]);
        reply(&mut b, out[1].clone(), Ok(Response::Exists(None)));
        assert!(reply(&mut b, Request::get_children("/lock", false), children(&["c1"])).is_empty());
        assert_eq!(b.belief(), Belief::Acquiring, "one party of two waits");
        let created = zklab_model::WatchedEvent { kind: EventType::NodeCreated, path: "/lock/ready".into() };
        b.handle(&CTX, Input::Watch(created), &mut out);
        assert!(b.belief().is_holding(), "ready created: it passes");
    }

    #[test]
    fn the_last_party_to_come_opens_the_barrier() {
        let mut b = Barrier::new("barrier", "/lock", Style::Ready);
        let mut out = Vec::new();
        b.handle(&CTX, Input::Acquire, &mut out);
        reply(&mut b, out[0].clone(), Err(ZkError::NodeExists));
        let open = reply(&mut b, Request::get_children("/lock", false), children(&["c0", "c1"]));
        assert_eq!(open, vec![Request::create("/lock/ready", CreateMode::Persistent)]);
        reply(&mut b, open[0].clone(), Err(ZkError::NodeExists));
        assert!(b.belief().is_holding(), "ready made by another: it passes");
    }

    #[test]
    fn the_sequential_variant_creates_again_after_a_lost_reply() {
        let mut b = Barrier::new("barrier-sequential", "/lock", Style::Sequential);
        let mut out = Vec::new();
        b.handle(&CTX, Input::Acquire, &mut out);
        let again = reply(&mut b, out[0].clone(), Err(ZkError::ConnectionLoss));
        assert_eq!(again, vec![Request::create("/lock/p-", CreateMode::EphemeralSequential)]);
    }
}
