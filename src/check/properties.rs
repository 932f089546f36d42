//! The properties a run is judged by, named as in the design. Safety properties are checked in
//! every reachable state; `reached:*` properties must each hold somewhere (non-vacuity);
//! `eventual_acquire` is checked on the state graph (deadlocks and fair cycles).

use super::model::WorldModel;
use stateright::Property;
use zklab_model::{FaultKind, World};
use zklab_recipes::AnyRecipe;

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Must hold in every reachable state.
    Safety,
    /// Must be reached in some state, or the run proves nothing about it.
    Reached,
    /// Every waiting client eventually acquires once faults stop.
    Liveness,
}

pub type Predicate = fn(&World<AnyRecipe>) -> bool;

/// A property: its name, kind, and for safety and reachability the state predicate.
#[derive(Clone, Copy)]
pub struct Def {
    pub name: &'static str,
    pub kind: Kind,
    pub holds: Predicate,
}

pub const SAFETY: [Def; 4] = [
    Def { name: "belief_exclusion", kind: Kind::Safety, holds: |w| w.belief_exclusion() },
    Def { name: "fenced_exclusion", kind: Kind::Safety, holds: |w| w.fenced_exclusion() },
    Def { name: "zk_exclusion", kind: Kind::Safety, holds: |w| w.zk_exclusion() },
    Def { name: "no_orphans", kind: Kind::Safety, holds: |w| w.no_orphans() },
];

pub const LIVENESS: Def = Def { name: "eventual_acquire", kind: Kind::Liveness, holds: |_| true };

const REACHED_FAULT: [Def; 6] = [
    Def { name: "reached:loss-before-apply", kind: Kind::Reached, holds: |w| w.fault_happened(FaultKind::LossBeforeApply) },
    Def { name: "reached:loss-after-apply", kind: Kind::Reached, holds: |w| w.fault_happened(FaultKind::LossAfterApply) },
    Def { name: "reached:disconnect", kind: Kind::Reached, holds: |w| w.fault_happened(FaultKind::Disconnect) },
    Def { name: "reached:expire", kind: Kind::Reached, holds: |w| w.fault_happened(FaultKind::Expire) && w.coverage.expired },
    Def { name: "reached:crash", kind: Kind::Reached, holds: |w| w.fault_happened(FaultKind::Crash) },
    Def { name: "reached:pause", kind: Kind::Reached, holds: |w| w.fault_happened(FaultKind::Pause) },
];

pub const HANDOFF: Def = Def { name: "reached:handoff", kind: Kind::Reached, holds: |w| w.coverage.handoff };

pub const PREDECESSOR_GONE: Def =
    Def { name: "reached:predecessor-gone", kind: Kind::Reached, holds: |w| w.coverage.predecessor_gone };

/// The properties that apply to a world: every safety property, liveness, and the reachability
/// of each enabled fault, of a handoff (with two or more clients) and of the delete-before-watch
/// race (for recipes that watch a single node they listed).
pub fn applicable(world: &World<AnyRecipe>) -> Vec<Def> {
    let mut defs = SAFETY.to_vec();
    defs.push(LIVENESS);
    for kind in world.config().faults.enabled() {
        defs.push(REACHED_FAULT[kind.index()]);
    }
    if world.clients.len() >= 2 {
        defs.push(HANDOFF);
        if world.clients.iter().all(|c| zklab_recipes::watches_single_node(&c.recipe)) {
            defs.push(PREDECESSOR_GONE);
        }
    }
    defs
}

/// The same properties in stateright's form. Its properties are plain function pointers, so
/// each predicate is reached through its index in `WorldModel::defs`.
pub fn for_stateright(defs: &[Def]) -> Vec<Property<WorldModel>> {
    const EVAL: [fn(&WorldModel, &World<AnyRecipe>) -> bool; 12] = [
        |m, w| (m.defs[0].holds)(w),
        |m, w| (m.defs[1].holds)(w),
        |m, w| (m.defs[2].holds)(w),
        |m, w| (m.defs[3].holds)(w),
        |m, w| (m.defs[4].holds)(w),
        |m, w| (m.defs[5].holds)(w),
        |m, w| (m.defs[6].holds)(w),
        |m, w| (m.defs[7].holds)(w),
        |m, w| (m.defs[8].holds)(w),
        |m, w| (m.defs[9].holds)(w),
        |m, w| (m.defs[10].holds)(w),
        |m, w| (m.defs[11].holds)(w),
    ];
    assert!(defs.len() <= EVAL.len(), "more properties than evaluators");
    defs.iter()
        .enumerate()
        .filter_map(|(i, d)| match d.kind {
            Kind::Safety => Some(Property::always(d.name, EVAL[i])),
            Kind::Reached => Some(Property::sometimes(d.name, EVAL[i])),
            Kind::Liveness => None,
        })
        .collect()
}
