//! What can be observed of a world: the facts the checker's properties are made of. They live
//! here, next to the state they read, so the checker and the simulator judge runs alike.

use super::{Step, World};
use crate::recipe::{ClientId, Mode, Recipe};
use crate::{Request, Response, ZkError, ZkResult};
use serde::{Deserialize, Serialize};

/// Races and events that a run has reached, for non-vacuity: a proof under faults means
/// nothing unless the faults and races it claims to cover happened somewhere. Each is part of
/// the state, so it must be a fact the rest of the state already implies (a fault's count, a
/// session's status, a grant count of two), or it would split every state reached both ways in
/// two. The delete-before-watch race is not: it is seen on the step that meets it
/// (`World::predecessor_went`), and judged on steps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Coverage {
    /// A client acquired after another had held the lock.
    pub handoff: bool,
    /// The server expired a session.
    pub expired: bool,
    /// A connection dropped with a request not yet applied.
    pub lost_before_apply: bool,
    /// A connection dropped after the server applied a request, losing its reply.
    pub lost_after_apply: bool,
    /// A read was answered from a lagging follower's older state.
    pub lagged_read: bool,
}

impl<R: Recipe> World<R> {
    pub(super) fn observe_reply(&mut self, request: &Request, result: &ZkResult) {
        let under_lock = request.path() != self.derived.config.lock_path && self.under_lock(request.path());
        let gone = matches!(
            (request, result),
            (Request::Exists { watch: true, .. }, Ok(Response::Exists(None)))
                | (Request::GetData { watch: true, .. }, Err(ZkError::NoNode))
        );
        if under_lock && gone {
            self.derived.outputs.predecessor_went = true;
        }
    }

    /// Whether the step that led here met the delete-before-watch race: a node below the lock
    /// vanished between a client listing it and setting its watch on it (its exists or getData
    /// with a watch found no node). Not part of the state: `reached:predecessor-gone` is judged on
    /// every step, into new states and known ones alike.
    pub fn predecessor_went(&self) -> bool {
        self.derived.outputs.predecessor_went
    }

    /// Live clients that believe they hold the lock (`Client::holds`): a crashed process's last
    /// belief is no one's, so no property counts it.
    pub fn believers(&self) -> Vec<ClientId> {
        (0..self.clients.len() as ClientId).filter(|i| self.clients[*i as usize].holds()).collect()
    }

    /// The mode each of `ids` holds in.
    pub fn modes(&self, ids: &[ClientId]) -> Vec<Mode> {
        ids.iter().map(|i| self.clients[*i as usize].recipe.mode()).collect()
    }

    /// The clients that believe they hold may all hold at once: one mutex or writer holder
    /// alone, any number of readers, at most `max` lease holders.
    pub fn belief_exclusion(&self) -> bool {
        self.compatible(&self.believers())
    }

    /// The clients `ids` may all hold at once. The simulator, which tracks who believes it
    /// holds as it goes, judges exclusion with this instead of walking every client per step.
    pub fn compatible(&self, ids: &[ClientId]) -> bool {
        ids.len() <= 1 || Mode::compatible(&self.modes(ids))
    }

    /// The resource never accepted a write from an older grant after a newer grant's.
    pub fn fenced_exclusion(&self) -> bool {
        !self.resource.interleaved
    }

    /// Holders that ZooKeeper agrees with: the client believes it holds, its session is alive,
    /// and the node it owns still exists and belongs to that session.
    pub fn zk_holders(&self) -> Vec<ClientId> {
        self.zk_holders_among(&self.believers())
    }

    /// Those of the believers `ids` that ZooKeeper agrees with.
    pub fn zk_holders_among(&self, ids: &[ClientId]) -> Vec<ClientId> {
        ids.iter().copied().filter(|i| self.zk_agrees(*i)).collect()
    }

    /// Those of the believers `ids` that ZooKeeper does not agree with: stale holders.
    pub fn stale_holders_among(&self, ids: &[ClientId]) -> Vec<ClientId> {
        ids.iter().copied().filter(|i| !self.zk_agrees(*i)).collect()
    }

    /// Whether ZooKeeper agrees that client `i` may hold: its session is alive, and the node it
    /// believes it owns exists and belongs to that session (whether it believes it holds aside).
    pub fn zk_agrees(&self, i: ClientId) -> bool {
        let c = &self.clients[i as usize];
        self.server.is_alive(c.session)
            && c.recipe.owned_node().and_then(|p| self.server.tree().get(p)).is_some_and(|n| n.owner == Some(c.session))
    }

    /// The holders that ZooKeeper agrees with may all hold at once.
    pub fn zk_exclusion(&self) -> bool {
        self.zk_exclusion_among(&self.believers())
    }

    /// `zk_exclusion`, given every client that believes it holds.
    pub fn zk_exclusion_among(&self, believers: &[ClientId]) -> bool {
        believers.len() <= 1 || self.compatible(&self.zk_holders_among(believers))
    }

    /// At least two clients hold at once (readers, or lease holders): the sharing a shared
    /// lock exists for, which a proof of it must show reachable.
    /// Every client that passed a barrier did so once its parties had all entered: as many
    /// clients as the barrier has parties have asked to enter (each client that asked once, a
    /// crashed one too: it entered).
    pub fn barrier_waits(&self) -> bool {
        let entered = (0..self.clients.len() as ClientId).filter(|&i| self.entered(i)).count();
        self.believers().into_iter().all(|i| match self.clients[i as usize].recipe.mode() {
            Mode::Barrier { parties } => entered >= usize::from(parties),
            _ => true,
        })
    }

    /// Client `i` has asked for the lock (entered the barrier) at least once.
    pub fn entered(&self, i: ClientId) -> bool {
        self.clients[i as usize].rounds_left < self.derived.config.rounds
    }

    pub fn shared_hold(&self) -> bool {
        self.clients.iter().filter(|c| c.holds()).count() >= 2
    }

    /// Nothing can happen any more unless a fault is injected.
    pub fn quiescent(&self) -> bool {
        (0..self.clients.len() as ClientId).all(|i| Step::of_client(i).into_iter().all(|step| !self.enabled(step)))
    }

    /// Ephemeral lock nodes that no live client believes it owns.
    pub fn orphans(&self) -> Vec<String> {
        self.server
            .tree()
            .iter()
            .filter(|(p, n)| n.owner.is_some() && self.under_lock(p))
            .filter(|(p, n)| {
                !self
                    .clients
                    .iter()
                    .any(|c| !c.crashed && Some(c.session) == n.owner && c.recipe.owned_nodes().contains(&p.as_str()))
            })
            .map(|(p, _)| p.clone())
            .collect()
    }

    /// At quiescence every lock node has a live owner that knows it owns it.
    pub fn no_orphans(&self) -> bool {
        !self.quiescent() || self.orphans().is_empty()
    }

    /// Bit `c` set: client `c` waits for the lock.
    pub fn waiting_mask(&self) -> u8 {
        self.mask_of(|c| c.is_waiting())
    }

    /// Bit `c` set: client `c` is alive and believes it holds the lock.
    pub fn holding_mask(&self) -> u8 {
        self.mask_of(|c| c.holds())
    }

    /// Bit `c` set: client `c` is as `is` says.
    fn mask_of(&self, is: impl Fn(&super::Client<R>) -> bool) -> u8 {
        self.clients.iter().enumerate().filter(|(_, c)| is(c)).fold(0, |m, (i, _)| m | (1 << i))
    }

    /// Clients waiting for the lock.
    pub fn waiting(&self) -> Vec<ClientId> {
        (0..self.clients.len() as ClientId).filter(|i| self.clients[*i as usize].is_waiting()).collect()
    }

    /// A waiting client with nothing left that could let it through (faults aside).
    pub fn deadlocked(&self) -> bool {
        !self.waiting().is_empty() && self.quiescent()
    }

    /// The fault kinds that have happened in this run.
    pub fn fault_happened(&self, kind: super::FaultKind) -> bool {
        match kind {
            super::FaultKind::LossBeforeApply => self.coverage.lost_before_apply,
            super::FaultKind::LossAfterApply => self.coverage.lost_after_apply,
            super::FaultKind::Expire => self.coverage.expired,
            super::FaultKind::LaggingRead => self.coverage.lagged_read,
            _ => self.faults_used[kind.index()] > 0,
        }
    }
}
