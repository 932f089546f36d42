//! A table from fingerprints to numbers that one thread writes while the others read it
//! without a lock: the graph pass's index (see `index`). The expanding threads look up every
//! successor in it, several times each, while the merging thread files the new ones; behind a
//! reader-writer lock each lookup wrote the lock's count, a cache line every thread shares (a
//! tenth of a two-thread run's time went to the index's lookups). Here a lookup only reads.
//!
//! **How.** The table is cut in shards by 6 bits of the fingerprint. A shard is an open-addressed
//! array of 16-byte slots, probed linearly from a place taken from the fingerprint, and kept at
//! most half full, so every probe ends at an empty slot, soon: most lookups of a name miss
//! (`index::name`), and a miss reads on to the next empty slot (at most half full, a
//! two-thread run at five clients under loss-after-apply and expire took 0.88 of the time it
//! took at three quarters). A slot holds 96 bits of the
//! fingerprint and the number plus one in two words: the writer fills the first, then the second
//! with release ordering, and a reader that loads the second with acquire ordering sees the
//! first as written. A slot is written once and never moved or emptied, except that a full shard
//! is copied into an array twice its size, which then replaces it (`arc_swap`): a reader holding
//! the old array reads a table that lacks what was filed since, which the callers tolerate
//! (an expanding thread that misses a known state works it out again, and the merge, the only
//! writer, reads the newest). So a lookup finds a fingerprint filed before it began, where
//! "before" is what the threads' channels order, and never a number filed under another one.

use arc_swap::ArcSwap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

/// Shards, chosen by the fingerprint's bits 104 to 109.
const SHARDS: usize = 64;

/// Slots a shard starts with.
const FIRST_SLOTS: usize = 64;

pub(in crate::check) struct Fingerprints {
    shards: Box<[Shard]>,
}

struct Shard {
    slots: ArcSwap<Slots>,
    /// Slots filled: read and written by the writing thread only.
    filled: AtomicUsize,
}

/// A power of two of them.
struct Slots(Box<[Slot]>);

#[derive(Default)]
struct Slot {
    /// The fingerprint's bits 32 to 95.
    high: AtomicU64,
    /// The fingerprint's bits 0 to 31, then the number plus one: 0 while the slot is empty.
    low: AtomicU64,
}

/// A fingerprint as its shard, the first slot to probe (for `slots` slots) and its two words.
fn parts(fingerprint: u128, id: u32) -> (usize, u64, u64) {
    let shard = (fingerprint >> 104) as usize % SHARDS;
    let high = (fingerprint >> 32) as u64;
    let low = ((fingerprint as u32 as u64) << 32) | (u64::from(id) + 1);
    (shard, high, low)
}

impl Slots {
    fn new(len: usize) -> Self {
        Slots((0..len).map(|_| Slot::default()).collect())
    }

    /// Where a fingerprint whose bits 32 to 95 are `high` is first looked for.
    fn start(&self, high: u64) -> usize {
        (high.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as usize & (self.0.len() - 1)
    }

    /// The number filed under the fingerprint of `high` and `low` (whose number is ignored), or
    /// the empty slot it would go in.
    fn find(&self, high: u64, low: u64) -> Result<u32, &Slot> {
        let mask = self.0.len() - 1;
        let mut at = self.start(high);
        loop {
            let slot = &self.0[at];
            let filed = slot.low.load(Ordering::Acquire);
            if filed == 0 {
                return Err(slot);
            }
            if filed >> 32 == low >> 32 && slot.high.load(Ordering::Relaxed) == high {
                return Ok((filed as u32).wrapping_sub(1));
            }
            at = (at + 1) & mask;
        }
    }
}

impl Slot {
    /// Fills this empty slot; the second word last, for the readers (see the module).
    fn fill(&self, high: u64, low: u64) {
        self.high.store(high, Ordering::Relaxed);
        self.low.store(low, Ordering::Release);
    }
}

impl Fingerprints {
    pub(in crate::check) fn new() -> Self {
        let shard = || Shard { slots: ArcSwap::from_pointee(Slots::new(FIRST_SLOTS)), filled: AtomicUsize::new(0) };
        Fingerprints { shards: (0..SHARDS).map(|_| shard()).collect() }
    }

    /// The number filed under `fingerprint`, if one was filed before this lookup began (see
    /// the module).
    pub(in crate::check) fn get(&self, fingerprint: u128) -> Option<u32> {
        let (shard, high, low) = parts(fingerprint, 0);
        self.shards[shard].slots.load().find(high, low).ok()
    }

    /// Files `id` under `fingerprint` unless a number is filed under it already; returns the
    /// number filed. Only one thread may file.
    pub(in crate::check) fn file(&self, fingerprint: u128, id: u32) -> u32 {
        let (at, high, low) = parts(fingerprint, id);
        let shard = &self.shards[at];
        let mut slots = shard.slots.load_full();
        if let Ok(filed) = slots.find(high, low) {
            return filed;
        }
        let filled = shard.filled.load(Ordering::Relaxed) + 1;
        if filled * 2 > slots.0.len() {
            slots = Arc::new(slots.grown());
            shard.slots.store(slots.clone());
        }
        slots.find(high, low).expect_err("not filed: looked up above").fill(high, low);
        shard.filled.store(filled, Ordering::Relaxed);
        id
    }
}

impl Slots {
    /// The same entries in twice as many slots.
    fn grown(&self) -> Slots {
        let grown = Slots::new(self.0.len() * 2);
        for slot in self.0.iter() {
            let low = slot.low.load(Ordering::Relaxed);
            if low != 0 {
                let high = slot.high.load(Ordering::Relaxed);
                grown.find(high, low).expect_err("each fingerprint once").fill(high, low);
            }
        }
        grown
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_filed_is_found_across_growth_and_nothing_else() {
        let table = Fingerprints::new();
        // Spread over the shards and the slots, as fingerprints are.
        let fingerprint = |i: u32| zklab_model::cache::memo::digest_numbers(&[i]);
        for i in 0..200_000 {
            assert_eq!(table.file(fingerprint(i), i), i, "a new fingerprint takes its number");
        }
        for i in 0..200_000 {
            assert_eq!(table.get(fingerprint(i)), Some(i));
            assert_eq!(table.file(fingerprint(i), i + 1), i, "filed once: the first number stays");
        }
        assert!((200_000..210_000).all(|i| table.get(fingerprint(i)).is_none()), "never filed, never found");
    }
}
