//! What a state is known by: its name, and the index from names to state numbers that the
//! graph pass shares between its threads (in the role of TLC's `fp/`). The chance that two
//! states were taken for one is bounded here too, since it is the index's bits and the digests'
//! that make it.

use super::fingerprints::Fingerprints;
use super::intern::Packed;
use std::sync::atomic::{AtomicUsize, Ordering};
use zklab_model::{Recipe, World};

/// A state's digest, for the searches that keep no interner (the swarm, calibration): the
/// 128-bit keyed digest (`zklab_model::cache::memo::digest`, a pseudo-random function under a
/// key drawn for the run) of what the state's `Hash` writes, which puts each client and the
/// tree as its own 128-bit digest.
pub(in crate::check) fn fingerprint<R: Recipe>(world: &World<R>) -> u128 {
    zklab_model::cache::memo::digest(world)
}

/// An upper bound on the probability that two distinct states, or two distinct parts of states,
/// of a run were taken for one, so that a state went unexplored or one never reached was
/// explored in its place, as TLC prints it. Two kinds of event could do it, each for any states
/// a recipe makes, since they are fixed before the keys are drawn:
/// - a lookup in the index matches another entry on the `INDEX_BITS` it compares (2^-102 a
///   pair; TLC's "optimistic" estimate is the same product, over its 64 bits). The index holds
///   the `states` names and at most one other name a transition (the raw successor's: see
///   `name`), and each transition looks up at most two names, so there are fewer than
///   `2 × transitions × (states + transitions)` such pairs;
/// - two of the 128-bit digests taken on the way collide (2^-128 a pair): those of the parts
///   the interner files and looks up (at most `parts_per_state`, `World::digested_parts`, for
///   each state met, and as many again for its raw successor), the names (digests of numbers),
///   and a recipe situation for each client of each expanded state (`Client::situation`, which
///   the claim checks key on: a collision there would skip a claim's check), so fewer than
///   `((2 × transitions + states) × parts_per_state)²` pairs.
pub fn collision_probability(states: usize, transitions: usize, parts_per_state: usize) -> f64 {
    let met = transitions.max(states) as f64;
    let parts = (2.0 * met + states as f64) * parts_per_state as f64;
    2.0 * met * (states as f64 + met) / 2f64.powi(INDEX_BITS) + parts * parts / 2f64.powi(128)
}

/// What the graph pass knows a state by: a keyed digest of the numbers of its parts in the
/// run's interner (`intern`, `zklab_model::cache::memo::digest_numbers`). Equal parts get one
/// number and distinct parts distinct numbers (up to the digest collisions the bound counts:
/// the interner files clients and trees by their digests), so two states share their numbers
/// exactly when they are one state, and the name is a pseudo-random function of those numbers
/// under a key drawn for the run. The same name serves a raw successor, the state a step made,
/// before it is settled (`expand`; its parts filed by `Transitions::successor`, with what each
/// client's recipe was handed where the run renumbers by replay). The state a raw successor
/// settles into is a function of it (settling, renumbering and the representative read nothing
/// else, but whether the step could revive a forgotten watch, after which it is not named), so
/// a raw successor met again is found by name without being settled, renamed or named again:
/// where settling and the representative leave it as it is (most do), its name is the state's
/// own; otherwise the merge files it as another name of the state (`Index::alias`).
pub(in crate::check) fn name(numbers: &Packed) -> u128 {
    zklab_model::cache::memo::digest_numbers(numbers.numbers())
}

/// Which state each name is (see `name`), readable by the expanding threads while the merging
/// thread adds to it (`Fingerprints`: a lookup takes no lock): the states' own names, and the
/// names of raw successors that settled into another state, filed as other names of it (each
/// found again by name instead of being settled, renamed and packed). An entry is 16 bytes: the
/// state's number and 96 bits of the name; 6 more choose its shard, so two names are told apart
/// by `INDEX_BITS` of their bits (see `collision_probability`).
pub(in crate::check) struct Index {
    names: Fingerprints,
    /// Written by the merging thread only.
    len: AtomicUsize,
}

/// How many bits of a name the index compares: 96 in the key and 6 in the shard.
pub(in crate::check) const INDEX_BITS: i32 = 102;

impl Index {
    pub(in crate::check) fn new() -> Self {
        Index { names: Fingerprints::new(), len: AtomicUsize::new(0) }
    }

    /// The state named `name` (a state's or a raw successor's), if the index has it.
    pub(in crate::check) fn get(&self, name: u128) -> Option<u32> {
        self.names.get(name)
    }

    pub(in crate::check) fn len(&self) -> usize {
        self.len.load(Ordering::Relaxed)
    }

    /// Numbers a new state named `name`: the next number. Only the merging thread inserts.
    pub(in crate::check) fn insert(&self, name: u128) -> u32 {
        let id = self.len.fetch_add(1, Ordering::Relaxed) as u32;
        self.names.file(name, id);
        id
    }

    /// Files `name`, a raw successor's, as another name of the known state `id`, unless it names
    /// one already. Only the merging thread files. Every name is kept for the whole run: kept
    /// for the last two levels only, as the index once did (most raw successors found by
    /// another name settle into a state of the level that meets them again), the index of five
    /// clients under loss-after-apply and expire is 30 % smaller (668 MiB against 961 MiB at
    /// the peak) and the run takes 1.13 times the processor time (`farm-bench -n 3`).
    pub(in crate::check) fn alias(&self, name: u128, id: u32) {
        self.names.file(name, id);
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
