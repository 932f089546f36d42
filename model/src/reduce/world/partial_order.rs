//! Partial-order reduction for the checker. When a client's next step is to handle a reply or
//! event in a way nobody else can see or be affected by (a waiter told that its predecessor
//! still exists, a stale reply after an outage, the reply to a release, a retry queued while the
//! connection is down), or to reconnect and learn that the server has expired its session,
//! every order of that step among the other clients' steps leads to the same states. The
//! checker may then take that step alone from the state (an ample set of one step) instead of
//! every step.
//!
//! Such a *local* step is a receive of client c (the other kind, the reconnect of a dead
//! session, is argued on its own below) that
//! - appends nothing to any inbound queue, and changes neither the server nor the resource, the
//!   fault counts, the grants, the coverage, nor any other client;
//! - changes c's session, link, watches, grant and the other per-client fields not at all;
//! - changes what the properties read of c not at all: c's belief, mode and owned nodes stay
//!   as they were, or c neither holds nor waits before or after it (properties read a client's
//!   mode and nodes only while it holds or waits, and its belief only as "holds" or "waits";
//!   `no_orphans` reads every client's nodes, but only in quiescent states, which are reached
//!   exactly: see below);
//! - and sends nothing: its requests stay in c's outbound queue, which it may only extend when
//!   the requests provably wait there until the step is taken (`requests_wait`).
//!
//! Why that is sound, for the properties the checker judges:
//! - Independence: the step writes only the client's recipe, the front of its inbound queue
//!   and the back of its outbound queue (and, handling Disconnected, whether the client has
//!   noticed its outage), and reads besides only the client's session and link, whether a
//!   later Disconnected waits in its queue, and, to judge it local, its other fields and the
//!   fault budgets. Other clients' steps only append to the
//!   inbound queue (a notification), and the client's own connection faults (a disconnect, a
//!   partition, the server expiring the session afterwards, a reconnect) change its link and
//!   append to the back: they commute with it. (Except a reconnect that sends a create: which
//!   earlier creations the new one keeps in `Client::created` depends on the queued messages
//!   that name them and on the nodes the recipe owns, which the step may change. While such a
//!   reconnect is enabled the step is not taken alone.) The client's steps that do not commute
//!   (acquire, a re-entrant acquire among them, write, release, giving up, a lagging follower
//!   catching up, crash, pause, resume) are not enabled, and none of the steps that commute can
//!   enable them, except that a follower struck during a reconnect can then catch up, which the
//!   step, sending nothing, never reads: a reconnect enables an acquire, so a client that is
//!   idle with rounds left never has its receive taken alone (condition C1 of ample sets: no
//!   step dependent on the ample one can occur before it). So along every run from the state,
//!   the step stays enabled until it is taken, and taking it first reaches the same states.
//! - Requests queued while the link is not up (`requests_wait`): the steps that read the
//!   outbound queue are the client's reconnect (which sends it on a live session and answers it
//!   SessionExpired on a dead one), a reconnect struck by a connection-loss or lagging fault,
//!   handling Expired (which empties it), a crash (which empties it: while its budget lasts it
//!   keeps any receive from being taken alone), and a dropped connection (which answers it
//!   ConnectionLoss, and needs a link that is up). The step is allowed to extend the queue only
//!   when none of them can come first:
//!   - on a partitioned link of a dead session no reconnect is ever enabled;
//!   - on a partitioned link of a live session the reconnect waits for the server to expire
//!     the session, which waits for the client to notice its outage, which only its own
//!     receives do, or for it to pause or crash, which keeps the step from being taken alone
//!     while their budgets last: the step is taken first if the client has not noticed yet;
//!   - on a dropped link of a live session the reconnect may come first, and then the step
//!     sends at once and depends on what other clients do. The argument moves the reconnect
//!     instead. With nothing queued before the step and no watch to re-arm, the reconnect
//!     sends nothing and re-arms nothing, so nothing another client does can notify the
//!     client or leave it a catch-up event, until the step: the reconnect commutes with every
//!     other client's step (with the same herd), and a run "reconnect, others' steps, the
//!     step" reaches the state that "others' steps, reconnect, step" does. The reconnect
//!     followed by the step sends what the step queued, in the same order and with nothing
//!     between, as the step followed by the reconnect does: the same state (nothing was
//!     queued before, so either order sends only the step's requests, with the same queue and
//!     recipe). And the step commutes with the others' steps while the link is down. So the
//!     run reaches the same state with the step taken first, by a run no longer, with the
//!     same observations up to repetition. A run that never takes the step has the same
//!     observations, herds included, with its reconnect moved to its end, and the reduced
//!     graph, taking the step first, covers what is left; an infinite one is not weakly fair
//!     (the step stays enabled throughout), and no liveness verdict reads it. That needs the
//!     client's own link to stay as it is until the step: no expire fault left to partition it (its
//!     session could then die, and a reconnect to a dead session answers what was queued with
//!     SessionExpired), no disconnect fault left to drop it again, and no connection-loss or
//!     lagging fault left to strike the reconnect (the struck reconnect after the step and the
//!     struck receive after the reconnect are different steps). A crash or a pause, while its
//!     budget lasts, keeps any receive from being taken alone (below).
//!   - queued Expired is never handled this way: it opens a new session and sends at once.
//! - Invisibility: the server, the resource, the fault counts, the coverage and what the
//!   properties read of each client are unchanged, so every safety property, every
//!   `reached:*` property, who waits, and whether a later step wakes a herd (it reads the
//!   beliefs and modes of waiting clients) read the same before and after it. A state in which
//!   nothing but faults can happen (a deadlock, or where `no_orphans` is judged) never has the
//!   step enabled, so every one is still reached exactly: a run to it from a reduced state
//!   takes the step somewhere, and taking it first instead reaches it by a run no longer.
//! - Cycles: the step shortens the inbound queues and appends to none, so no cycle is made of
//!   reduced states only (with the reconnect below: see there).
//!
//! **The reconnect of a dead session.** Once the server has expired a client's session, the
//! client's reconnect only learns it: it answers the requests queued on the dead handle with
//! SessionExpired, forgets the client's watches, queues Expired and leaves the link partitioned.
//! It is taken alone when its client can take no other step (no receive, no acquire, no fault
//! of its own, no crash or pause while their budgets last). Why that is sound:
//! - Independence: it writes only its client's link, watches, outbound queue and the back of its
//!   inbound queue, and reads besides only whether the session is alive. A dead session never
//!   comes back, and no other client's step reads or writes those fields: notifications reach
//!   a client only while its link is up (`route`), and the link is down before the step and
//!   partitioned after it; the server dropped the session's watches when it expired it. So it
//!   commutes with every other client's step, herds included (they read beliefs and modes,
//!   which it leaves alone).
//! - It stays enabled until taken (condition C1): none of its client's own steps is enabled,
//!   and none can become enabled before it, because each needs the client's own state to change
//!   (its inbound queue to fill, its belief, a fault budget to grow), which only the client's
//!   own steps do, and none of them is enabled.
//! - Invisibility: it changes neither the server, the resource, the fault counts, the grants,
//!   the coverage, any other client, nor its client's recipe, so every property reads the same
//!   before and after. It is not a fault, so a state that has it is neither a deadlock nor
//!   quiescent.
//! - Cycles: it leaves its client's link partitioned on a dead session, where nothing but
//!   handling Expired (a receive that opens a new session, never taken alone) gives the client
//!   a live link again. Along reduced states only, the number of clients on a dropped link of a
//!   dead session therefore falls at each such reconnect and never grows, and the inbound
//!   queues shrink at each receive: no cycle is made of reduced states only. Both measures are
//!   the same for every renaming and renumbering of a state.
//!
//! What it does not keep: the shortest path to a violation (the reduced graph takes the
//! invisible step first), and the cycles' fairness (a reduced state lists one step). The
//! checker therefore answers from the reduced graph only when every property holds and no
//! cycle needs judging, and explores again without the reduction otherwise.

use crate::recipe::{ClientId, Input, Recipe};
use crate::world::{ClientFault, Link, Sending, Step, World};
use crate::{Belief, FaultKind, SessionState};

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
        let (successor, invisible) =
            (&mut |step| self.successor(step), &|step, next: &World<R>| self.invisible(step, next));
        self.successors_with(partial_order, self.steps(), successor, invisible)
    }

    /// `successors`, given the enabled steps (`steps`), each successor made by `successor` as
    /// whatever stands for it (a checker's memo of the steps it took before stands for a world
    /// by the numbers of its parts: see its `transitions`), and a local candidate judged by
    /// `invisible`, which must say what `World::invisible` says of this state, the step and the
    /// world the successor stands for.
    pub fn successors_with<S>(
        &self,
        partial_order: bool,
        enabled: Vec<Step>,
        successor: &mut dyn FnMut(Step) -> S,
        invisible: &dyn Fn(Step, &S) -> bool,
    ) -> Vec<(Step, S)> {
        let mut tried = Vec::new();
        if partial_order {
            for i in 0..self.clients.len() as ClientId {
                if let Some(step) = self.local_candidate(i, &enabled) {
                    let next = successor(step);
                    if invisible(step, &next) {
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
                None => (step, successor(step)),
            })
            .collect()
    }

    fn successor(&self, step: Step) -> World<R> {
        let mut next = self.clone();
        next.apply(step).expect("listed steps are enabled");
        next
    }

    /// Client `i`'s step that may be taken alone, if it commutes with every other step enabled
    /// here (whether it is invisible needs the state it leads to): a receive, or the reconnect
    /// of a dead session.
    fn local_candidate(&self, i: ClientId, enabled: &[Step]) -> Option<Step> {
        self.receive_candidate(i, enabled).or_else(|| self.dead_reconnect_candidate(i, enabled))
    }

    /// Client `i`'s receive, if it commutes with every other step enabled here.
    fn receive_candidate(&self, i: ClientId, enabled: &[Step]) -> Option<Step> {
        let step = Step::Receive(i);
        // Expired opens a new session. Disconnected only tells the world that the client has
        // noticed the outage (which lets the server expire a partitioned session): a step of
        // the client's own that only it enables.
        let c = &self.clients[i as usize];
        let front = c.inbound.front()?;
        let commutes = *front != Input::State(SessionState::Expired)
            && enabled.contains(&step)
            && World::<R>::only_commuting_steps_besides(step, enabled)
            && !World::<R>::may_ask_to_acquire(c)
            && !World::<R>::reconnect_sends_a_create(i, c, enabled);
        commutes.then_some(step)
    }

    /// Client `i`'s reconnect, if its session is dead and the reconnect is the only step the
    /// client can take (see the module: "The reconnect of a dead session").
    fn dead_reconnect_candidate(&self, i: ClientId, enabled: &[Step]) -> Option<Step> {
        let step = Step::Reconnect(i);
        let alone = enabled.contains(&step) && enabled.iter().all(|s| s.client() != Some(i) || *s == step);
        (alone && !self.server.is_alive(self.clients[i as usize].session)).then_some(step)
    }

    /// Whether the reconnect of client `i` (`c`), with or without a fault, is enabled and would
    /// send a create. Which earlier creations a new one keeps in `Client::created` depends on the
    /// queued messages that name them and on the nodes the recipe owns, which the receive may
    /// change: the reconnect would not commute with it.
    fn reconnect_sends_a_create(i: ClientId, c: &crate::world::Client<R>, enabled: &[Step]) -> bool {
        let reconnects = enabled
            .iter()
            .any(|s| s.client() == Some(i) && matches!(s, Step::Reconnect(_) | Step::Lossy(_, Sending::Reconnect, _)));
        reconnects && c.outbound.iter().any(crate::Request::creates)
    }

    /// Whether the local candidate `step` leading to `next` changed nothing but its client's
    /// own channel and recipe, and nothing a property reads (see the module). It reads, besides
    /// the step's own client before and after, only the rest of the state without its clients
    /// (the server, the resource, the fault counts, the grants, the coverage), what the step
    /// left (`StepOutputs`), and whether the other clients are as they were.
    pub fn invisible(&self, step: Step, next: &World<R>) -> bool {
        let i = step.client().expect("a local step is a client's") as usize;
        let unchanged_elsewhere = next.derived.outputs.routed.is_empty()
            && next.server == self.server
            && next.resource == self.resource
            && next.faults_used == self.faults_used
            && next.grants == self.grants
            && next.coverage == self.coverage
            && (0..self.clients.len()).all(|j| j == i || next.clients.same(j, &self.clients));
        let (c, after) = (&self.clients[i], &next.clients[i]);
        let unchanged_but_channel = after.session == c.session
            && (after.drop_zxid, after.rounds_left, after.grant, after.armed, after.lagging)
                == (c.drop_zxid, c.rounds_left, c.grant, c.armed, c.lagging)
            && (after.paused, after.crashed, after.wrote) == (c.paused, c.crashed, c.wrote)
            && after.created == c.created;
        let own_part_unseen = match step {
            Step::Receive(_) => self.receive_unseen(c, after),
            _ => Self::dead_reconnect_unseen(c, after),
        };
        unchanged_elsewhere && unchanged_but_channel && own_part_unseen
    }

    /// Whether a receive that took client `c` to `after` changed only its recipe, in nothing a
    /// property reads, and the ends of its queues.
    fn receive_unseen(&self, c: &crate::world::Client<R>, after: &crate::world::Client<R>) -> bool {
        let disconnected = c.inbound.front() == Some(&Input::State(SessionState::Disconnected));
        // Properties read a client's mode and nodes only while it holds or waits.
        let unread = |belief: Belief| !belief.is_holding() && belief != Belief::Acquiring;
        let unseen = (unread(c.belief()) && unread(after.belief()))
            || (after.belief() == c.belief()
                && after.recipe.mode() == c.recipe.mode()
                && after.recipe.owned_nodes() == c.recipe.owned_nodes());
        let queued =
            after.outbound.len() > c.outbound.len() && after.outbound.iter().zip(&c.outbound).all(|(a, b)| a == b);
        unseen
            && (after.outbound == c.outbound || (queued && self.requests_wait(c)))
            && after.link == c.link
            && after.watches == c.watches
            && (disconnected || after.noticed_disconnect == c.noticed_disconnect)
            && after.inbound.len() + 1 == c.inbound.len()
    }

    /// Whether the reconnect of a dead session that took client `c` to `after` left its recipe
    /// alone and only moved its queued requests to its inbound queue as SessionExpired replies,
    /// followed by Expired, forgot its watches and left its link partitioned.
    fn dead_reconnect_unseen(c: &crate::world::Client<R>, after: &crate::world::Client<R>) -> bool {
        let answered = c.inbound.len() + c.outbound.len() + 1;
        after.recipe == c.recipe
            && after.noticed_disconnect == c.noticed_disconnect
            && after.outbound.is_empty()
            && after.watches.is_empty()
            && after.link == Link::Partitioned
            && after.inbound.len() == answered
            && after.inbound.iter().zip(&c.inbound).all(|(a, b)| a == b)
            && after.inbound.back() == Some(&Input::State(SessionState::Expired))
    }

    /// Whether requests that client `c`'s receive queues on its link that is not up stay
    /// queued, whatever else happens, until the receive is taken (see the module): its
    /// reconnect cannot come first, or comes first to the same effect.
    fn requests_wait(&self, c: &crate::world::Client<R>) -> bool {
        let alive = self.server.is_alive(c.session);
        match c.link {
            Link::Up => false,
            Link::Partitioned => !alive || !c.noticed_disconnect,
            Link::Down => {
                alive
                    && c.outbound.is_empty()
                    && c.watches.is_empty()
                    && self.fault_spent(FaultKind::Expire)
                    && self.fault_spent(FaultKind::Disconnect)
                    && FaultKind::ALL.into_iter().filter(|k| k.strikes_a_request()).all(|k| self.fault_spent(k))
            }
        }
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
    fn may_ask_to_acquire(c: &crate::world::Client<R>) -> bool {
        c.belief() == crate::Belief::Idle && c.rounds_left > 0
    }

    /// Whether every other enabled step of `step`'s client (in `enabled`) commutes with it: the
    /// client's connection dropping, coming back (with or without a lost request) or its
    /// session expiring, and the server's own events. None of them reads or writes the recipe,
    /// and they only append to the inbound queue. (A crash or a pause would stop the step:
    /// while their budget lasts they are enabled, and are not among these. The server expiring
    /// the session waits for the client to notice its outage, so it is never enabled while a
    /// Disconnected, whose handling is what notices it, waits in the queue.) A server event
    /// concerns no client, so it is not among the client's steps at all.
    fn only_commuting_steps_besides(step: Step, enabled: &[Step]) -> bool {
        enabled.iter().filter(|s| s.client() == step.client()).all(|&other| {
            other == step
                || matches!(
                    other,
                    Step::Reconnect(_)
                        | Step::Expire(_)
                        | Step::Lossy(_, Sending::Reconnect, _)
                        | Step::Fault(ClientFault::Disconnect | ClientFault::Expire, _)
                )
        })
    }
}
