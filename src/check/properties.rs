//! The properties a run is judged by, named as in the design. Safety properties are checked in
//! every reachable state; transition properties on every step taken; `reached:*` properties
//! must each hold somewhere (non-vacuity); `eventual_acquire` is checked on the state graph
//! (deadlocks and fair cycles).

use super::model::WorldModel;
use stateright::Property;
use zklab_model::{ClientId, FaultKind, Mode, Recipe, Step, World};

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
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

/// A property: its name, kind, and for safety and reachability the state predicate, for a
/// transition property the step predicate.
pub struct Def<R> {
    pub name: &'static str,
    pub kind: Kind,
    pub holds: fn(&World<R>) -> bool,
    /// Whether the step from the first world to the second is allowed. The second is the raw
    /// successor, right after `World::apply`: what a step did (`World::routed`) is gone once
    /// the state is settled and renamed.
    pub allows: fn(&World<R>, Step, &World<R>) -> bool,
}

impl<R> Clone for Def<R> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<R> Copy for Def<R> {}

impl<R: Recipe> Def<R> {
    const fn new(name: &'static str, kind: Kind, holds: fn(&World<R>) -> bool) -> Self {
        Def { name, kind, holds, allows: |_, _, _| true }
    }

    const fn transition(name: &'static str, allows: fn(&World<R>, Step, &World<R>) -> bool) -> Self {
        Def { name, kind: Kind::Transition, holds: |_| true, allows }
    }
}

pub const SAFETY_NAMES: [&str; 4] = ["belief_exclusion", "fenced_exclusion", "zk_exclusion", "no_orphans"];
pub const LIVENESS_NAME: &str = "eventual_acquire";
pub const NO_HERD: &str = "no_herd";

/// The safety properties, in report order.
pub fn safety<R: Recipe>() -> [Def<R>; 4] {
    [
        Def::new("belief_exclusion", Kind::Safety, |w| w.belief_exclusion()),
        Def::new("fenced_exclusion", Kind::Safety, |w| w.fenced_exclusion()),
        Def::new("zk_exclusion", Kind::Safety, |w| w.zk_exclusion()),
        Def::new("no_orphans", Kind::Safety, |w| w.no_orphans()),
    ]
}

/// The transition properties.
pub fn transitions<R: Recipe>() -> [Def<R>; 1] {
    [Def::transition(NO_HERD, |before, step, after| herd(before, step, after).len() < 2)]
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
        Step::Expire(_) | Step::Fault(FaultKind::ReapParent, _) => None,
        other => Some(other.client()),
    }
}

/// The clients that were waiting for an exclusive mode in `before` and that `step`, leading to
/// `after` (the raw successor), queued a watch notification for: the herd it woke. The client
/// taking the step is awake already: a watch on its own node that its own delete fires (a
/// waiter giving up) wakes nobody.
pub fn herd<R: Recipe>(before: &World<R>, step: Step, after: &World<R>) -> Vec<ClientId> {
    if after.routed().len() < 2 {
        return Vec::new();
    }
    let mut woken: Vec<ClientId> = after
        .routed()
        .iter()
        .copied()
        .filter(|&i| {
            let c = &before.clients[usize::from(i)];
            Some(i) != actor(step) && c.is_waiting() && exclusive(c.recipe.mode())
        })
        .collect();
    woken.sort_unstable();
    woken.dedup();
    woken
}

fn reached_fault<R: Recipe>(kind: FaultKind) -> Def<R> {
    let holds: fn(&World<R>) -> bool = match kind {
        FaultKind::LossBeforeApply => |w| w.fault_happened(FaultKind::LossBeforeApply),
        FaultKind::LossAfterApply => |w| w.fault_happened(FaultKind::LossAfterApply),
        FaultKind::Disconnect => |w| w.fault_happened(FaultKind::Disconnect),
        FaultKind::Expire => |w| w.fault_happened(FaultKind::Expire),
        FaultKind::Crash => |w| w.fault_happened(FaultKind::Crash),
        FaultKind::Pause => |w| w.fault_happened(FaultKind::Pause),
        FaultKind::LaggingRead => |w| w.fault_happened(FaultKind::LaggingRead),
        FaultKind::ReapParent => |w| w.fault_happened(FaultKind::ReapParent),
    };
    let name = match kind {
        FaultKind::LossBeforeApply => "reached:loss-before-apply",
        FaultKind::LossAfterApply => "reached:loss-after-apply",
        FaultKind::Disconnect => "reached:disconnect",
        FaultKind::Expire => "reached:expire",
        FaultKind::Crash => "reached:crash",
        FaultKind::Pause => "reached:pause",
        FaultKind::LaggingRead => "reached:lagging-read",
        FaultKind::ReapParent => "reached:reap-parent",
    };
    Def::new(name, Kind::Reached, holds)
}

/// The properties that apply to a world: every safety property, liveness, and the reachability
/// of each enabled fault, of a handoff (with two or more clients), of the delete-before-watch
/// race (when every recipe waits on a single node it has listed) and of two clients holding at
/// once (when two or more ask for a shared mode); and `no_herd` when two or more clients ask
/// for an exclusive mode (with fewer, no step can wake two of them).
pub fn applicable<R: Recipe>(world: &World<R>) -> Vec<Def<R>> {
    let mut defs = safety().to_vec();
    if world.clients.iter().filter(|c| exclusive(c.recipe.mode())).count() >= 2 {
        defs.extend(transitions());
    }
    defs.push(Def::new(LIVENESS_NAME, Kind::Liveness, |_| true));
    for kind in world.config().faults.enabled() {
        defs.push(reached_fault(kind));
    }
    let faults = world.config().faults;
    if faults.get(FaultKind::Pause) > 0 && faults.get(FaultKind::Expire) > 0 {
        // A holder can outlive its session: fencing must be seen doing its job.
        defs.push(Def::new("reached:stale-write-refused", Kind::Reached, |w| w.resource.refused_stale));
    }
    if world.clients.len() >= 2 {
        defs.push(Def::new("reached:handoff", Kind::Reached, |w| w.coverage.handoff));
        if world.clients.iter().all(|c| c.recipe.waits_on_one_node()) {
            defs.push(Def::new("reached:predecessor-gone", Kind::Reached, |w| w.coverage.predecessor_gone));
        }
        let shared = world.clients.iter().filter(|c| matches!(c.recipe.mode(), Mode::Read | Mode::Lease { max: 2.. }));
        if shared.count() >= 2 {
            // A shared lock that never lets two clients in at once proves exclusion vacuously.
            defs.push(Def::new("reached:shared-hold", Kind::Reached, |w| w.shared_hold()));
        }
    }
    defs
}

/// How stateright calls a property: a plain function of the model and a state.
type Evaluator<R> = fn(&WorldModel<R>, &World<R>) -> bool;

fn eval<R: Recipe, const I: usize>(model: &WorldModel<R>, world: &World<R>) -> bool {
    (model.defs[I].holds)(world)
}

/// The same properties in stateright's form. Its properties are plain function pointers, so
/// each predicate is reached through its index in `WorldModel::defs`.
pub fn for_stateright<R: Recipe>(defs: &[Def<R>]) -> Vec<Property<WorldModel<R>>> {
    let evaluators: [Evaluator<R>; 16] = [
        eval::<R, 0>,
        eval::<R, 1>,
        eval::<R, 2>,
        eval::<R, 3>,
        eval::<R, 4>,
        eval::<R, 5>,
        eval::<R, 6>,
        eval::<R, 7>,
        eval::<R, 8>,
        eval::<R, 9>,
        eval::<R, 10>,
        eval::<R, 11>,
        eval::<R, 12>,
        eval::<R, 13>,
        eval::<R, 14>,
        eval::<R, 15>,
    ];
    assert!(defs.len() <= evaluators.len(), "more properties than evaluators");
    defs.iter()
        .zip(evaluators)
        .filter_map(|(d, eval)| match d.kind {
            Kind::Safety => Some(Property::always(d.name, eval)),
            Kind::Reached => Some(Property::sometimes(d.name, eval)),
            // Judged on steps, which stateright's properties cannot see.
            Kind::Liveness | Kind::Transition => None,
        })
        .collect()
}
