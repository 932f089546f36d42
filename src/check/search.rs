//! What every strategy of `zklab check` shares (in the role of stateright's `checker.rs`): the
//! budget a search runs within, the reductions it may apply, how a state and a step are judged,
//! what a counterexample is, the progress it reports, and how a path found among class
//! representatives becomes a run of the real world. The graph pass (`bfs`), the swarm
//! (`swarm`), liveness (`liveness`) and the cross-check (`cross_check`) are built on it.

use super::properties::Kind;
use zklab_model::{Property, Recipe, Settle, Step, World};

pub use crate::budget::{resident_mib, Budget, Spent};

/// A counterexample: steps from the initial state, and for a cycle where it starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Counterexample {
    pub steps: Vec<Step>,
    pub cycle_start: Option<usize>,
}

/// How far a pass has explored, for the reporter.
#[derive(Clone, Copy, Debug)]
pub struct Explored {
    pub unique: usize,
    pub total: usize,
    pub depth: usize,
}

/// Which reductions a pass applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reduction {
    /// One state per symmetry class (see `World::canonical`).
    pub symmetry: bool,
    /// A client's invisible local step taken alone where there is one (see `World::local_step`).
    pub partial_order: bool,
    /// Each state is settled (`World::settle`: watch-equivalent zxids, renumbering) before it is
    /// kept. Off only to count states exactly as `World::apply` leaves them.
    pub settle: bool,
}

/// A settled state's representative under symmetry reduction.
pub(super) fn represent<R: Recipe>(world: World<R>, reduction: Reduction) -> World<R> {
    represent_telling(world, reduction).0
}

/// `represent`, saying whether the representative is another state than `world`.
pub(super) fn represent_telling<R: Recipe>(world: World<R>, reduction: Reduction) -> (World<R>, bool) {
    match reduction.symmetry {
        true => match world.into_canonical() {
            (world, Some(renaming)) => (world, !renaming.is_identity()),
            (world, None) => (world, false),
        },
        false => (world, false),
    }
}

/// Steps in the representatives' numbering, turned into the steps of the same run from `init`.
pub fn concrete_steps<R: Recipe>(init: &World<R>, steps: &[Step]) -> Vec<Step> {
    let Some((mut at, renaming)) = init.canonical() else { return steps.to_vec() };
    let mut to_concrete = renaming.inverse();
    steps
        .iter()
        .map(|&step| {
            let concrete = step.renamed_by(|c| to_concrete.client(c));
            at.apply(step).expect("a path of the graph replays");
            at.settle(Settle::Renumbering).ok();
            let (next, renaming) = at.canonical().expect("supported at the start");
            to_concrete = renaming.inverse().then(&to_concrete);
            at = next;
            concrete
        })
        .collect()
}

/// Bit `i` set: `properties[i]` holds in `world`.
pub(super) fn judge<R: Recipe>(world: &World<R>, properties: &[Property]) -> u64 {
    // Who believes it holds is read by several properties: found once.
    let believers = world.believers();
    properties
        .iter()
        .enumerate()
        .filter(|(_, d)| d.holds_among(world, &believers))
        .fold(0, |bits, (i, _)| bits | 1 << i)
}

/// Bit `i` set: `step` from `before` to the raw successor `after` violates the transition
/// property `properties[i]`.
pub(super) fn judge_step<R: Recipe>(before: &World<R>, step: Step, after: &World<R>, properties: &[Property]) -> u64 {
    properties
        .iter()
        .enumerate()
        .filter(|(_, d)| d.kind() == Kind::Transition && !d.allows(before, step, after))
        .fold(0, |bits, (i, _)| bits | 1 << i)
}

/// Bit `i` set: `step` into the raw successor `after` met the `reached:*` item `properties[i]`,
/// one met on steps (`Property::met_on_steps`).
pub(super) fn judge_met<R: Recipe>(after: &World<R>, properties: &[Property]) -> u64 {
    properties
        .iter()
        .enumerate()
        .filter(|(_, p)| p.met_on_steps() && p.holds(after))
        .fold(0, |bits, (i, _)| bits | 1 << i)
}

/// Whether a state where the clients in `waiting` wait, and `steps` are enabled, is
/// `eventual_acquire`'s deadlock: someone waits and nothing but a fault can happen.
pub(super) fn deadlocked(waiting: u8, mut steps: impl Iterator<Item = Step>) -> bool {
    waiting != 0 && steps.all(|s| s.is_fault())
}
