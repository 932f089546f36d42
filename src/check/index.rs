//! What a state is known by: its fingerprint, and the index from fingerprints to state numbers
//! that the graph pass shares between its threads (in the role of TLC's `fp/`). The chance that
//! two states were taken for one is bounded here too, since it is the index's bits and the
//! digests' that make it.

use super::fingerprints::Fingerprints;
use std::sync::atomic::{AtomicUsize, Ordering};
use zklab_model::{Recipe, World};

/// A state's identity in the index: the 128-bit keyed digest (`zklab_model::reduce::memo::digest`, a
/// pseudo-random function under a key drawn for the run) of what the state's `Hash` writes,
/// which puts each client and the tree as its own 128-bit digest. The index compares 102 of
/// those bits (`INDEX_BITS`). Two distinct states are taken for one only if their
/// fingerprints agree on those bits (2^-102 per pair) or two of their distinct parts' digests
/// collide (2^-128 per pair), for any states a recipe makes, since they are fixed before the
/// key is drawn; `collision_probability` bounds it for a whole run, as TLC prints it.
pub(super) fn fingerprint<R: Recipe>(world: &World<R>) -> u128 {
    zklab_model::reduce::memo::digest(world)
}

/// An upper bound on the probability that two distinct states, or two distinct parts of states,
/// of a run were taken for one, so that a state went unexplored or one never reached was
/// explored in its place: each lookup could have matched another entry of the index on the bits
/// it compares by chance (TLC's "optimistic" estimate is the same product, over its 64 bits),
/// or two of the 128-bit digests taken on the way could have collided. The index holds the
/// `states` fingerprints and at most one alias a transition (the name of its raw successor, a
/// keyed digest of its parts' numbers under a key of its own: `expand::raw_name`), and each
/// transition looks up at most its name and its fingerprint, so there are fewer than
/// `2 × transitions × (states + transitions)` such pairs. Those are at most `parts_per_state` (`World::digested_parts`) for each state met,
/// as many again for its raw successor, whose changed clients the interner looks up by digest
/// before it is settled (`Interner::share_changed`), and a recipe situation for each client of
/// each expanded state (`Client::situation`, which the claim checks key on: a collision there
/// would skip a claim's check), so fewer
/// than `((2 × transitions + states) × parts_per_state)²` pairs.
pub fn collision_probability(states: usize, transitions: usize, parts_per_state: usize) -> f64 {
    let met = transitions.max(states) as f64;
    let parts = (2.0 * met + states as f64) * parts_per_state as f64;
    2.0 * met * (states as f64 + met) / 2f64.powi(INDEX_BITS) + parts * parts / 2f64.powi(128)
}

/// Which state each fingerprint is, readable by the expanding threads while the merging
/// thread adds to it (`Fingerprints`: a lookup takes no lock), and which state each raw
/// successor met in the last `NAMED_LEVELS` levels settled into, by its name (`expand::raw_name`).
/// An entry is 16 bytes: the state's number and 96 bits of the fingerprint; 6 more choose its
/// shard, so two fingerprints are told apart by `INDEX_BITS` of their bits (see
/// `collision_probability`).
///
/// Names are kept for a few levels only: 72 % of the raw successors found by name at five
/// clients under loss-after-apply and expire settle into a state new in the level that meets
/// them again (the two orders of two steps that commute meet at the same depth), and a raw
/// successor is named as often as states are found, so keeping every name would double the
/// index.
pub(super) struct Index {
    states: Fingerprints,
    /// The names filed in the last levels, the current level's at `level % NAMED_LEVELS`.
    names: [Fingerprints; NAMED_LEVELS],
    /// The level being expanded: written by the merging thread between levels, when no other
    /// thread reads the index.
    level: AtomicUsize,
    /// Written by the merging thread only.
    len: AtomicUsize,
}

/// How many bits of a fingerprint the index compares: 96 in the key and 6 in the shard.
pub(super) const INDEX_BITS: i32 = 102;

/// Levels whose names the index keeps: the current one and the one before.
const NAMED_LEVELS: usize = 2;

impl Index {
    pub(super) fn new() -> Self {
        Index {
            states: Fingerprints::new(),
            names: std::array::from_fn(|_| Fingerprints::new()),
            level: AtomicUsize::new(0),
            len: AtomicUsize::new(0),
        }
    }

    /// The state of `fingerprint`, if the index has it.
    pub(super) fn get(&self, fingerprint: u128) -> Option<u32> {
        self.states.get(fingerprint)
    }

    /// The state the raw successor `name` settled into, if the index has the name.
    pub(super) fn named(&self, name: u128) -> Option<u32> {
        let level = self.level.load(Ordering::Relaxed);
        (0..NAMED_LEVELS).find_map(|back| self.names[(level + NAMED_LEVELS - back) % NAMED_LEVELS].get(name))
    }

    pub(super) fn len(&self) -> usize {
        self.len.load(Ordering::Relaxed)
    }

    /// Numbers a new state: the next number. Only the merging thread inserts.
    pub(super) fn insert(&self, fingerprint: u128) -> u32 {
        let id = self.len.fetch_add(1, Ordering::Relaxed) as u32;
        self.states.file(fingerprint, id);
        id
    }

    /// Files `name` as the name of a raw successor that settled into the known state `id` (see
    /// `expand`), unless it names one already. Only the merging thread files.
    pub(super) fn name(&self, name: u128, id: u32) {
        self.names[self.level.load(Ordering::Relaxed) % NAMED_LEVELS].file(name, id);
    }

    /// Starts the next level: the names of the oldest level kept are forgotten. Called by the
    /// merging thread while no other thread reads the index (between levels).
    pub(super) fn next_level(&self) {
        let level = self.level.load(Ordering::Relaxed) + 1;
        self.names[level % NAMED_LEVELS].clear();
        self.level.store(level, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_index_tells_fingerprints_apart_by_exactly_its_compared_bits() {
        let index = Index::new();
        index.insert(0);
        let told_apart: Vec<u32> = (0..128).filter(|&bit| index.get(1u128 << bit).is_none()).collect();
        let expected: Vec<u32> = (0..96).chain(104..110).collect();
        assert_eq!(told_apart, expected, "96 bits in the key, 6 choosing the shard");
        assert_eq!(told_apart.len() as i32, INDEX_BITS);
    }

    #[test]
    fn the_collision_bound_grows_with_states_and_transitions() {
        let small = collision_probability(1_000, 3_000, 3);
        let large = collision_probability(100_000_000, 400_000_000, 9);
        assert!(small > 0.0 && small < large && large < 1e-13, "{small:e} {large:e}");
        assert_eq!(collision_probability(10, 0, 3), collision_probability(10, 10, 3), "at least one lookup a state");
        assert!(collision_probability(10, 10, 9) > collision_probability(10, 10, 3), "more parts, more pairs");
    }
}
