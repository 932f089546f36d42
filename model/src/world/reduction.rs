//! Partial-order reduction for the checker. When a client's next step is to handle a reply or
//! event that makes it send nothing and changes nothing anyone can see (a waiter told that its
//! predecessor still exists, a stale reply after an outage), every order of that step among the
//! other clients' steps leads to the same states. The checker may then take that step alone
//! from the state (an ample set of one step) instead of every step.
//!
//! Why that is sound, for the properties the checker judges:
//! - Independence: the step reads and writes only the client's recipe and the front of its
//!   inbound queue. Other clients' steps only append to that queue (a notification), and the
//!   client's own connection faults (a disconnect, a partition, the server expiring the session
//!   afterwards, a reconnect) change its link and append to the back: they commute with it.
//!   The client's steps that do not commute (acquire, a re-entrant acquire among them, write,
//!   release, giving up, a lagging follower catching up, crash, pause, resume) are not enabled,
//!   and none of the steps that commute can enable them, except that a follower struck during
//!   a reconnect can then catch up, which the step, sending nothing, never reads: a reconnect
//!   enables an
//!   acquire, so a client that is idle with rounds left never has its receive taken alone
//!   (condition C1 of ample sets: no step dependent on the ample one can occur before it).
//!   So along every run from
//!   the state, the step stays enabled until it is taken, and taking it first reaches the same
//!   states.
//! - Invisibility: beliefs, modes, owned nodes, the server, the resource, the fault counts and
//!   the coverage are unchanged, so every safety property, every `reached:*` property, who
//!   waits, and whether a later step wakes a herd read the same before and after it. A state in
//!   which nothing but faults can happen (a deadlock, or where `no_orphans` is judged) never has
//!   the step enabled, so every one is still reached exactly.
//! - Cycles: the step shortens the inbound queues and appends nothing, so no cycle is made of
//!   reduced states only.
//!
//! What it does not keep: the shortest path to a violation (the reduced graph takes the
//! invisible step first), and the cycles' fairness (a reduced state lists one step). The
//! checker therefore answers from the reduced graph only when every property holds and no
//! cycle needs judging, and explores again without the reduction otherwise.

use super::{Sending, Step, World};
use crate::recipe::{ClientId, Input, Recipe};
use crate::{FaultKind, SessionState};

impl<R: Recipe> World<R> {
    /// A step that may be taken alone from this state (see the module), with the state it leads
    /// to: the first client's, in client order, that qualifies.
    pub fn local_step(&self) -> Option<(Step, World<R>)> {
        let enabled = self.steps();
        (0..self.clients.len() as ClientId)
            .filter_map(|i| self.local_candidate(i, &enabled))
            .map(|step| (step, self.successor(step)))
            .find(|(step, next)| self.invisible(*step, next))
    }

    /// Every enabled step with the state it leads to, in the order `steps` lists them; or,
    /// with `partial_order`, only the local step when there is one. The states tried as local
    /// steps are not computed twice.
    pub fn successors(&self, partial_order: bool) -> Vec<(Step, World<R>)> {
        let enabled = self.steps();
        let mut tried = Vec::new();
        if partial_order {
            for i in 0..self.clients.len() as ClientId {
                if let Some(step) = self.local_candidate(i, &enabled) {
                    let next = self.successor(step);
                    if self.invisible(step, &next) {
                        return vec![(step, next)];
                    }
                    tried.push((step, next));
                }
            }
        }
        enabled
            .into_iter()
            .map(|step| match tried.iter().position(|(s, _)| *s == step) {
                Some(at) => tried.swap_remove(at),
                None => (step, self.successor(step)),
            })
            .collect()
    }

    fn successor(&self, step: Step) -> World<R> {
        let mut next = self.clone();
        next.apply(step).expect("listed steps are enabled");
        next
    }

    /// Client `i`'s receive, if it commutes with every other step enabled here (whether it
    /// is invisible needs the state it leads to).
    fn local_candidate(&self, i: ClientId, enabled: &[Step]) -> Option<Step> {
        let step = Step::Receive(i);
        // Expired opens a new session. Disconnected only tells the world that the client has
        // noticed the outage (which lets the server expire a partitioned session): a step of
        // the client's own that only it enables.
        let c = &self.clients[i as usize];
        let front = c.inbound.front()?;
        let commutes = *front != Input::State(SessionState::Expired)
            && enabled.contains(&step)
            && World::<R>::only_commuting_steps_besides(step, enabled)
            && !World::<R>::may_ask_to_acquire(c);
        commutes.then_some(step)
    }

    /// Whether the receive `step` leading to `next` changed nothing but its client's recipe and
    /// the front of its queue, and nothing a property reads.
    fn invisible(&self, step: Step, next: &World<R>) -> bool {
        let i = step.client();
        let c = &self.clients[i as usize];
        let disconnected = c.inbound.front() == Some(&Input::State(SessionState::Disconnected));
        let after = &next.clients[i as usize];
        let unchanged_elsewhere = next.routed.is_empty()
            && next.server == self.server
            && next.resource == self.resource
            && next.faults_used == self.faults_used
            && next.grants == self.grants
            && next.coverage == self.coverage
            && (0..self.clients.len()).all(|j| j == (i as usize) || next.clients[j] == self.clients[j]);
        let unchanged_but_recipe_and_queue = after.belief() == c.belief()
            && after.recipe.mode() == c.recipe.mode()
            && after.recipe.owned_nodes() == c.recipe.owned_nodes()
            && after.session == c.session
            && after.link == c.link
            && after.outbound == c.outbound
            && after.watches == c.watches
            && (after.drop_zxid, after.rounds_left, after.grant, after.armed, after.lagging)
                == (c.drop_zxid, c.rounds_left, c.grant, c.armed, c.lagging)
            && (after.paused, after.crashed, after.wrote) == (c.paused, c.crashed, c.wrote)
            && (disconnected || after.noticed_disconnect == c.noticed_disconnect)
            && after.created == c.created
            && after.inbound.len() + 1 == c.inbound.len();
        unchanged_elsewhere && unchanged_but_recipe_and_queue
    }

    /// Whether the application could ask client `c` for the lock before its next receive: it is
    /// idle with rounds left. Its acquire does not commute with the receive, and although it
    /// may not be enabled now (the link is down), a step that commutes with the receive (the
    /// reconnect) enables it. Such a receive is never taken alone: an ample set must hold back
    /// nothing that a path of other steps could turn into a dependent step (condition C1).
    /// Write and release need a belief of holding, a re-entrant acquire and giving up need the
    /// recipe to say so (`accepts_reentry`, `can_abandon`), and only the client's own recipe
    /// steps change either; crash, pause and give-up only lose budget. So no other step of the
    /// client's can be enabled that way, and one that is enabled now is among the steps that do
    /// not commute, which keeps the receive from being taken alone.
    fn may_ask_to_acquire(c: &super::Client<R>) -> bool {
        c.belief() == crate::Belief::Idle && c.rounds_left > 0
    }

    /// Whether every other enabled step of `step`'s client (in `enabled`) commutes with it: the
    /// client's connection dropping, coming back (with or without a lost request) or its
    /// session expiring, and the server's own events. None of them reads or writes the recipe,
    /// and they only append to the inbound queue. (A crash or a pause would stop the step:
    /// while their budget lasts they are enabled, and are not among these. The server expiring
    /// the session waits for the client to notice its outage, so it is never enabled while a
    /// Disconnected, whose handling is what notices it, waits in the queue.)
    fn only_commuting_steps_besides(step: Step, enabled: &[Step]) -> bool {
        enabled.iter().filter(|s| s.client() == step.client()).all(|&other| {
            other == step
                || matches!(
                    other,
                    Step::Reconnect(_)
                        | Step::Expire(_)
                        | Step::Lossy(_, Sending::Reconnect, _)
                        | Step::Fault(FaultKind::Disconnect | FaultKind::Expire | FaultKind::ReapParent, _)
                )
        })
    }
}
