//! The explored graph: states numbered in breadth-first order, their edges, where each level
//! starts (which gives every state's shortest path), and what was found on the way. The merge
//! numbers what the expansions found in the order one thread would have met it.

use super::claims::{CheckedSituations, Refusal, Situation};
use super::engine::chunked::Chunked;
use super::engine::index::Index;
use super::engine::intern::Packed;
use super::expand::{Expansion, Successor, Target};
use super::properties::Kind;
use super::search::{deadlocked, Reduction};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use zklab_model::{Property, Step};

/// The states of one breadth-first level, in order, packed.
pub(super) type Level = Chunked<Packed>;

/// The explored graph. States are numbered in breadth-first order.
pub struct Graph {
    /// The first state of each breadth-first level: states are numbered level by level, so a
    /// state's depth is read here, and its parent is the first state of the level before with
    /// an edge to it (see `parent`). Parent pointers would cost eight bytes a state.
    levels: Vec<u32>,
    /// States found.
    states: usize,
    /// Out-edges of state `i` are `edges[offsets[i]..offsets[i + 1]]`, their steps packed:
    /// eight bytes a transition (see `out`).
    offsets: Chunked<u32>,
    edges: Chunked<(u32, u32)>,
    /// Bit `c` set: client `c` is waiting for the lock in that state.
    pub(super) waiting: Chunked<u8>,
    /// Bit `c` set: client `c` believes it holds the lock in that state.
    pub(super) holding: Chunked<u8>,
    /// How many clients the world has.
    pub(super) clients: usize,
    /// Every state was expanded (no budget ran out).
    pub complete: bool,
    /// Transitions generated, repeats included.
    pub total: usize,
    /// The length of the longest of the shortest paths to the states found.
    pub depth: usize,
    /// The first state (in breadth-first order) violating each safety property.
    pub first_violation: BTreeMap<Property, u32>,
    /// The first step (from the first state in breadth-first order, then in the order steps
    /// are listed) violating each transition property: a shortest path through that step.
    pub first_bad_step: BTreeMap<Property, (u32, Step)>,
    /// The `reached:*` properties that hold in some state.
    pub reached: BTreeSet<Property>,
    /// The first expanded state (in breadth-first order) where a client waits and nothing but
    /// a fault can happen: `eventual_acquire`'s deadlock.
    pub first_deadlock: Option<u32>,
    /// The pass stopped after the level in which it found its first violation or deadlock
    /// (`Budget::stop_at_violation`). Every state up to that level's depth was expanded and
    /// every state one deeper judged, so what was found is what a complete pass finds there:
    /// the same first violating states, bad steps and deadlock, with the same shortest paths.
    pub stopped: bool,
    /// Under symmetry: the first explored state where renaming the clients did not commute with
    /// a step (see `World::renaming_commutes`), and why. The recipe's claim is then false and
    /// nothing the reduced graph says can be trusted.
    pub symmetry_refused: Option<String>,
    /// The first explored state whose future depended on more than the order of its numbers
    /// (see `World::ranking_commutes`), and why: renumbering merged states it should not have.
    pub renumbering_refused: Option<String>,
    /// The recipe situations whose claims to symmetry and renumbering have been checked (see
    /// `situations`), as of the level being expanded, and those checked since.
    checked: CheckedSituations,
    newly_checked: Vec<Situation>,
    /// Under symmetry, states stand for their class (see `World::canonical`): paths are in the
    /// representatives' client numbering. Under either reduction a cycle cannot be judged for
    /// fairness.
    pub(super) reduction: Reduction,
}

impl Graph {
    /// The graph of a pass over a world of `clients` clients, with only its first state.
    pub(super) fn new(clients: usize, reduction: Reduction) -> Self {
        Graph {
            levels: vec![0],
            states: 1,
            offsets: [0].into_iter().collect(),
            edges: Chunked::default(),
            waiting: Chunked::default(),
            holding: Chunked::default(),
            clients,
            complete: true,
            total: 0,
            depth: 0,
            first_violation: BTreeMap::new(),
            first_bad_step: BTreeMap::new(),
            reached: BTreeSet::new(),
            first_deadlock: None,
            stopped: false,
            symmetry_refused: None,
            renumbering_refused: None,
            checked: CheckedSituations::default(),
            newly_checked: Vec::new(),
            reduction,
        }
    }

    /// Starts a level: the states it finds are numbered from `first`. Returns the recipe
    /// situations checked before it, which the level's expansions read.
    pub(super) fn begin_level(&mut self, first: usize) -> CheckedSituations {
        self.levels.push(first as u32);
        self.checked.clone()
    }

    /// Ends a level once every part of it is merged (no expansion holds the set handed out by
    /// `begin_level` any more): what it checked is known to the next.
    pub(super) fn end_level(&mut self) {
        let newly = std::mem::take(&mut self.newly_checked);
        Arc::make_mut(&mut self.checked).extend(newly);
    }

    /// Whether a reduction was found unsound: the pass stops, and nothing it found stands.
    pub fn refused(&self) -> bool {
        self.symmetry_refused.is_some() || self.renumbering_refused.is_some()
    }

    /// Whether a safety or transition property was violated or a waiting client deadlocked.
    pub(super) fn found_a_violation(&self) -> bool {
        !self.first_violation.is_empty() || !self.first_bad_step.is_empty() || self.first_deadlock.is_some()
    }

    /// Numbers the new states among a chunk's expansions and records its edges, in the order one
    /// thread would have met them.
    pub(super) fn merge(
        &mut self,
        expansions: impl IntoIterator<Item = Expansion>,
        index: &Index,
        next_level: &mut Level,
        depth: usize,
        properties: &[Property],
    ) {
        for expansion in expansions {
            let id = self.expanded() as u32;
            self.newly_checked.extend(expansion.checked);
            match expansion.refuted {
                Some(Refusal::Symmetry(why)) if self.symmetry_refused.is_none() => self.symmetry_refused = Some(why),
                Some(Refusal::Renumbering(why)) if self.renumbering_refused.is_none() => {
                    self.renumbering_refused = Some(why)
                }
                _ => {}
            }
            let steps = expansion.successors.iter().map(|s| s.step);
            if self.first_deadlock.is_none() && deadlocked(expansion.waiting, steps) {
                self.first_deadlock = Some(id);
            }
            self.waiting.push(expansion.waiting);
            self.holding.push(expansion.holding);
            for Successor { step, target, alias, broken, met } in expansion.successors {
                self.total += 1;
                if broken != 0 {
                    self.record_step(id, step, broken, properties);
                }
                self.record_met(met, properties);
                let target = match target {
                    Target::Known(t) => t,
                    Target::Met(name) => {
                        index.get(name).expect("numbered earlier: its thread handed it in a part merged first")
                    }
                    Target::Unknown { name, packed, holds } => match index.get(name) {
                        Some(t) => t,
                        None => {
                            let t = index.insert(name);
                            self.states += 1;
                            self.depth = depth + 1;
                            self.record(t, holds, properties);
                            next_level.push(packed);
                            t
                        }
                    },
                };
                if let Some(alias) = alias {
                    index.alias(alias, target);
                }
                self.edges.push((target, step.packed()));
            }
            self.offsets.push(self.edges.len() as u32);
        }
    }

    /// Records what `holds` (see `judge`) says of the new state `id`.
    pub(super) fn record(&mut self, id: u32, holds: u64, properties: &[Property]) {
        for (i, property) in properties.iter().enumerate() {
            let holds = holds & (1 << i) != 0;
            match property.kind() {
                Kind::Safety if !holds && !self.first_violation.contains_key(property) => {
                    self.first_violation.insert(*property, id);
                }
                Kind::Reached if holds => {
                    self.reached.insert(*property);
                }
                _ => {}
            }
        }
    }

    /// Records the `reached:*` items a step met (see `judge_met`), whether its state is new or not.
    fn record_met(&mut self, met: u64, properties: &[Property]) {
        let met = properties.iter().enumerate().filter(|(i, _)| met & (1 << i) != 0);
        self.reached.extend(met.map(|(_, property)| *property));
    }

    /// Records that `step` from state `id` violates the transition properties in `broken`.
    fn record_step(&mut self, id: u32, step: Step, broken: u64, properties: &[Property]) {
        for (i, property) in properties.iter().enumerate() {
            if broken & (1 << i) != 0 {
                self.first_bad_step.entry(*property).or_insert((id, step));
            }
        }
    }

    pub fn unique(&self) -> usize {
        self.states
    }

    pub(super) fn expanded(&self) -> usize {
        self.offsets.len() - 1
    }

    /// The out-edges of `state`: each step and the state it leads to.
    pub(super) fn out(&self, state: u32) -> impl DoubleEndedIterator<Item = (u32, Step)> + Clone + '_ {
        let i = state as usize;
        (self.offsets[i] as usize..self.offsets[i + 1] as usize).map(|at| {
            let (target, step) = self.edges[at];
            (target, Step::unpacked(step))
        })
    }

    /// The `n`-th out-edge of `state`, if it has that many.
    pub(super) fn edge(&self, state: u32, n: usize) -> Option<(u32, Step)> {
        let i = state as usize;
        let at = self.offsets[i] as usize + n;
        (at < self.offsets[i + 1] as usize).then(|| (self.edges[at].0, Step::unpacked(self.edges[at].1)))
    }

    /// The steps of a shortest path from the initial state to `state`.
    pub fn path_to(&self, mut state: u32) -> Vec<Step> {
        let mut steps = Vec::new();
        let mut depth = self.levels.partition_point(|&first| first <= state) - 1;
        while depth > 0 {
            let (parent, step) = self.parent(state, depth);
            steps.push(step);
            state = parent;
            depth -= 1;
        }
        steps.reverse();
        steps
    }

    /// The state that found `state` (at `depth`), and the step it took: the first state of the
    /// level before, in breadth-first order, with an edge to it, and its first such edge. The
    /// merge numbers a new state at its first edge, so that is the edge it was found by, as a
    /// parent pointer would have recorded it. The level before was expanded up to and past it.
    fn parent(&self, state: u32, depth: usize) -> (u32, Step) {
        let (from, to) = (self.levels[depth - 1], self.levels[depth].min(self.expanded() as u32));
        (from..to)
            .find_map(|s| self.out(s).find(|&(target, _)| target == state).map(|(_, step)| (s, step)))
            .expect("a state was found from the level before it")
    }

    /// The steps of a shortest path from the initial state that ends with `step` taken in `state`.
    pub fn path_through(&self, state: u32, step: Step) -> Vec<Step> {
        let mut steps = self.path_to(state);
        steps.push(step);
        steps
    }
}
