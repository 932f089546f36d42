//! The properties zklab judges, as one type. The checker, the simulator and `replay` all name
//! them with `Property` and judge them with its methods, so a property means the same thing
//! wherever a verdict comes from. docs/reference.md states each one formally.

use crate::world::FaultKind;
use crate::{ClientId, Mode, Recipe, Step, World};
use serde::{Deserialize, Serialize};
use std::fmt;

/// How a property is judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Must hold in every reachable state.
    Safety,
    /// Must be reached in some state, or the run proves nothing about it.
    Reached,
    /// Every waiting client eventually acquires once faults stop.
    Liveness,
    /// Must hold of every step taken, including steps into states already known: what a step
    /// does (which clients it wakes) is not part of the state it leads to.
    Transition,
}

/// Something a run must show reachable (non-vacuity).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Reach {
    /// The fault happened somewhere.
    Fault(FaultKind),
    /// The resource refused a stale token (with `expire` and `pause`: fencing did its job).
    StaleWriteRefused,
    /// A client acquired after another had held the lock.
    Handoff,
    /// The delete-before-watch race happened.
    PredecessorGone,
    /// Two clients held a shared lock at once.
    SharedHold,
}

/// A property, named as in the design.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum Property {
    BeliefExclusion,
    FencedExclusion,
    ZkExclusion,
    NoOrphans,
    StaleHolder,
    FencingAvailable,
    NoHerd,
    EventualAcquire,
    /// A barrier's: no client passes before all its parties entered.
    BarrierWaits,
    /// A queue's: no item is processed twice.
    TakenOnce,
    Reached(Reach),
}

impl Property {
    /// The safety properties, in report order.
    pub const SAFETY: [Property; 6] = [
        Property::BeliefExclusion,
        Property::FencedExclusion,
        Property::ZkExclusion,
        Property::NoOrphans,
        Property::StaleHolder,
        Property::FencingAvailable,
    ];

    /// Every property that a name can denote, for parsing and for listing them.
    pub fn all() -> Vec<Property> {
        let mut all = Property::SAFETY.to_vec();
        all.extend([Property::NoHerd, Property::EventualAcquire, Property::BarrierWaits, Property::TakenOnce]);
        all.extend(FaultKind::ALL.map(|k| Property::Reached(Reach::Fault(k))));
        all.extend(
            [Reach::StaleWriteRefused, Reach::Handoff, Reach::PredecessorGone, Reach::SharedHold]
                .map(Property::Reached),
        );
        all
    }

    pub fn name(self) -> &'static str {
        match self {
            Property::BeliefExclusion => "belief_exclusion",
            Property::FencedExclusion => "fenced_exclusion",
            Property::ZkExclusion => "zk_exclusion",
            Property::NoOrphans => "no_orphans",
            Property::StaleHolder => "stale_holder",
            Property::FencingAvailable => "fencing_available",
            Property::NoHerd => "no_herd",
            Property::EventualAcquire => "eventual_acquire",
            Property::BarrierWaits => "barrier_waits",
            Property::TakenOnce => "taken_at_most_once",
            Property::Reached(reach) => match reach {
                Reach::Fault(FaultKind::LossBeforeApply) => "reached:loss-before-apply",
                Reach::Fault(FaultKind::LossAfterApply) => "reached:loss-after-apply",
                Reach::Fault(FaultKind::Disconnect) => "reached:disconnect",
                Reach::Fault(FaultKind::Expire) => "reached:expire",
                Reach::Fault(FaultKind::Crash) => "reached:crash",
                Reach::Fault(FaultKind::Pause) => "reached:pause",
                Reach::Fault(FaultKind::LaggingRead) => "reached:lagging-read",
                Reach::Fault(FaultKind::ReapParent) => "reached:reap-parent",
                Reach::Fault(FaultKind::GiveUp) => "reached:give-up",
                Reach::Fault(FaultKind::LaggingSession) => "reached:lagging-session",
                Reach::Fault(FaultKind::OperatorDelete) => "reached:operator-delete",
                Reach::StaleWriteRefused => "reached:stale-write-refused",
                Reach::Handoff => "reached:handoff",
                Reach::PredecessorGone => "reached:predecessor-gone",
                Reach::SharedHold => "reached:shared-hold",
            },
        }
    }

    /// The property called `name`, if there is one.
    /// What the property says, in one line (docs/reference.md states it in full).
    pub fn summary(self) -> &'static str {
        match self {
            Property::BeliefExclusion => "the clients that believe they hold may hold together (a mutex: one at most)",
            Property::FencedExclusion => "the resource never accepts an earlier holder's write after a later holder's",
            Property::ZkExclusion => {
                "the holders ZooKeeper agrees with (live session, own lock node) may hold together"
            }
            Property::NoOrphans => "once only faults can happen, every lock node has a live owner that knows it",
            Property::StaleHolder => {
                "no client believes it holds once ZooKeeper disagrees (its session or its node is gone)"
            }
            Property::FencingAvailable => "the resource never refuses a holder that ZooKeeper agrees with",
            Property::NoHerd => "no step wakes two or more waiters of an exclusive lock",
            Property::EventualAcquire => "every waiting client holds eventually, once faults stop (weak fairness)",
            Property::BarrierWaits => "no client passes a barrier before as many clients as it has parties entered it",
            Property::TakenOnce => "no item of a queue is processed by two consumers, or twice by one",
            Property::Reached(_) => "it happened somewhere; a proof in which it never does is vacuous",
        }
    }

    pub fn parse(name: &str) -> Option<Property> {
        Property::all().into_iter().find(|p| p.name() == name)
    }

    pub fn kind(self) -> Kind {
        match self {
            Property::BeliefExclusion
            | Property::FencedExclusion
            | Property::ZkExclusion
            | Property::NoOrphans
            | Property::StaleHolder
            | Property::FencingAvailable
            | Property::BarrierWaits
            | Property::TakenOnce => Kind::Safety,
            Property::NoHerd => Kind::Transition,
            Property::EventualAcquire => Kind::Liveness,
            Property::Reached(_) => Kind::Reached,
        }
    }

    /// A `reached:*` item met on a step rather than held by a state: what the step saw is not
    /// part of the state it leads to (see `World::predecessor_went`), so the item is judged on
    /// every step, into new states and known ones alike, and a checker that judges states only
    /// (stateright's) cannot judge it.
    pub fn met_on_steps(self) -> bool {
        self == Property::Reached(Reach::PredecessorGone)
    }

    /// Whether this state property (safety, or a `reached:*` item) holds in `world`; for an item
    /// met on steps (`met_on_steps`), whether the step that led to `world` met it. Transition
    /// and liveness properties are not properties of one state: true.
    pub fn holds<R: Recipe>(self, world: &World<R>) -> bool {
        match self {
            Property::BeliefExclusion | Property::ZkExclusion => self.holds_among(world, &world.believers()),
            Property::FencedExclusion => world.fenced_exclusion(),
            Property::NoOrphans => world.no_orphans(),
            Property::StaleHolder => self.holds_among(world, &world.believers()),
            Property::FencingAvailable => !world.resource.refused_live,
            Property::BarrierWaits => world.barrier_waits(),
            Property::TakenOnce => !world.resource.taken_twice,
            Property::NoHerd | Property::EventualAcquire => true,
            Property::Reached(reach) => match reach {
                Reach::Fault(kind) => world.fault_happened(kind),
                Reach::StaleWriteRefused => world.resource.refused_stale,
                Reach::Handoff => world.coverage.handoff,
                Reach::PredecessorGone => world.predecessor_went(),
                Reach::SharedHold => world.shared_hold(),
            },
        }
    }

    /// `holds`, given the clients that believe they hold (`World::believers`): the simulator
    /// keeps that set as it goes rather than walking every client after every event.
    pub fn holds_among<R: Recipe>(self, world: &World<R>, believers: &[ClientId]) -> bool {
        match self {
            Property::BeliefExclusion => world.compatible(believers),
            Property::ZkExclusion => world.zk_exclusion_among(believers),
            Property::StaleHolder => world.stale_holders_among(believers).is_empty(),
            other => other.holds(world),
        }
    }

    /// Whether the transition property allows the step from `before` to `after`, the raw
    /// successor right after `World::apply` (what a step did, `World::routed`, is gone once the
    /// state is settled and renamed). Other properties allow every step.
    pub fn allows<R: Recipe>(self, before: &World<R>, step: Step, after: &World<R>) -> bool {
        match self {
            Property::NoHerd => herd(before, step, after).len() < 2,
            _ => true,
        }
    }

    /// The properties that apply to a world: every safety property, liveness, and the
    /// reachability of each enabled fault, of a handoff (with two or more clients), of the
    /// delete-before-watch race (when every recipe waits on a single node it has listed) and of
    /// two clients holding at once (when two or more ask for a shared mode); and `no_herd` when
    /// two or more clients ask for an exclusive mode (with fewer, no step can wake two of them).
    ///
    /// Of those, only the ones every client's recipe says apply to it (`Recipe::applies`).
    pub fn applicable<R: Recipe>(world: &World<R>) -> Vec<Property> {
        let mut properties = Property::candidates(world);
        properties.retain(|&p| world.clients.iter().all(|c| c.recipe.applies(p)));
        properties
    }

    /// The properties that would apply to `world` if every recipe took every property
    /// (`applicable` before the recipes' say): a run reports those it does not judge as
    /// `not applicable`.
    pub fn candidates<R: Recipe>(world: &World<R>) -> Vec<Property> {
        let mut properties = Property::SAFETY.to_vec();
        // A barrier's and a queue's own: only where a client is one's party or consumer (the
        // barrier's counts who asked to enter, which an unbounded number of rounds does not).
        if world.config().rounds != crate::world::UNBOUNDED_ROUNDS
            && world.clients.iter().any(|c| matches!(c.recipe.mode(), Mode::Barrier { .. }))
        {
            properties.push(Property::BarrierWaits);
        }
        if world.clients.iter().any(|c| c.recipe.mode() == Mode::Take) {
            properties.push(Property::TakenOnce);
        }
        if world.clients.iter().filter(|c| exclusive(c.recipe.mode())).count() >= 2 {
            properties.push(Property::NoHerd);
        }
        properties.push(Property::EventualAcquire);
        let faults = world.config().faults;
        properties.extend(faults.enabled().into_iter().map(|k| Property::Reached(Reach::Fault(k))));
        if faults.get(FaultKind::Pause) > 0 && faults.get(FaultKind::Expire) > 0 {
            // A holder can outlive its session: fencing must be seen doing its job.
            properties.push(Property::Reached(Reach::StaleWriteRefused));
        }
        if world.clients.len() >= 2 {
            properties.push(Property::Reached(Reach::Handoff));
            if world.clients.iter().all(|c| c.recipe.waits_on_one_node()) {
                properties.push(Property::Reached(Reach::PredecessorGone));
            }
            let shared =
                world.clients.iter().filter(|c| matches!(c.recipe.mode(), Mode::Read | Mode::Lease { max: 2.. }));
            if shared.count() >= 2 {
                // A shared lock that never lets two clients in at once proves exclusion vacuously.
                properties.push(Property::Reached(Reach::SharedHold));
            }
        }
        properties
    }
}

impl fmt::Display for Property {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl From<Property> for String {
    fn from(p: Property) -> String {
        p.name().to_string()
    }
}

impl TryFrom<String> for Property {
    type Error = String;
    fn try_from(name: String) -> Result<Property, String> {
        Property::parse(&name).ok_or_else(|| format!("unknown property `{name}`"))
    }
}

impl std::str::FromStr for Property {
    type Err = String;
    fn from_str(name: &str) -> Result<Property, String> {
        Property::try_from(name.to_string())
    }
}

/// A mode that lets one holder in at a time: waking several clients that wait for it wakes all
/// but one for nothing. Readers woken together by a writer's release all get in, and so may
/// lease holders, so they do not count.
fn exclusive(mode: Mode) -> bool {
    matches!(mode, Mode::Exclusive | Mode::Write)
}

/// The client that acts in `step`, if a client does: the server expires sessions and reaps
/// parents on its own.
fn actor(step: Step) -> Option<ClientId> {
    match step {
        Step::Expire(_) | Step::Server(_) => None,
        other => other.client(),
    }
}

/// The clients that were waiting for an exclusive mode in `before` and that `step`, leading to
/// `after` (the raw successor), queued a watch notification for: the herd it woke. The client
/// taking the step is awake already: a watch on its own node that its own delete fires (a
/// waiter giving up) wakes nobody.
pub fn herd<R: Recipe>(before: &World<R>, step: Step, after: &World<R>) -> Vec<ClientId> {
    woken_among(step, after, |i| {
        before.clients[i as usize].is_waiting() && exclusive(before.clients[i as usize].recipe.mode())
    })
}

/// `herd`, read from the world after the step alone, for a run that keeps no copy of the world
/// before each step (the simulator's thousands of clients, the real backend's shadow). It is
/// `herd`: a step changes no client's belief, mode or crash but its actor's (a client changes
/// only by a step of its own), and the actor is never counted, so every client it reads is
/// the same before and after. `tests/no_herd.rs` checks the two agree on every step of explored
/// worlds.
pub fn herd_after<R: Recipe>(step: Step, after: &World<R>) -> Vec<ClientId> {
    woken_among(step, after, |i| {
        after.clients[i as usize].is_waiting() && exclusive(after.clients[i as usize].recipe.mode())
    })
}

/// The clients `step` queued a notification for (in `after`), other than its actor, that
/// waited for an exclusive mode (`waits_alone`).
fn woken_among<R: Recipe>(step: Step, after: &World<R>, waits_alone: impl Fn(ClientId) -> bool) -> Vec<ClientId> {
    if after.routed().len() < 2 {
        return Vec::new();
    }
    let mut woken: Vec<ClientId> =
        after.routed().iter().copied().filter(|&i| Some(i) != actor(step) && waits_alone(i)).collect();
    woken.sort_unstable();
    woken.dedup();
    woken
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_property_is_parsed_back_from_its_name() {
        let all = Property::all();
        assert_eq!(all.len(), 10 + FaultKind::ALL.len() + 4);
        for p in all {
            assert_eq!(Property::parse(p.name()), Some(p));
        }
        assert_eq!(Property::parse("belief-exclusion"), None, "names are exact");
    }
}
