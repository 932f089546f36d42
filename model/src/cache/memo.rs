//! A value derived from its owner, computed at most once and shared by every state that shares
//! the owner. The checker keeps clients, trees, the sessions and the watch tables behind shared
//! pointers, and most steps leave most of them alone: what is derived from one of them (its
//! digest, the numbers renumbering collects) need not be derived again for every successor.
//!
//! A memo is never part of its owner's identity (equality and hashing ignore it), and a copy
//! starts empty: an owner is copied only to be changed (copy on write), and whoever changes an
//! owner in place clears its memo, or changes it along with the owner (`get_mut`).

use std::fmt;
use std::sync::OnceLock;

pub struct Memo<T>(OnceLock<T>);

impl<T> Memo<T> {
    pub fn get_or_init(&self, derive: impl FnOnce() -> T) -> &T {
        self.0.get_or_init(derive)
    }

    /// The value, if it has been computed.
    pub fn get(&self) -> Option<&T> {
        self.0.get()
    }

    /// The value, if it has been computed, to be changed along with its owner.
    pub fn get_mut(&mut self) -> Option<&mut T> {
        self.0.get_mut()
    }

    /// The memo of a copy of the owner changed in a way whose effect on the value `carry`
    /// knows (renaming a client renames the clients its numbers are filed under).
    pub fn carried(&self, carry: impl FnOnce(&T) -> T) -> Memo<T> {
        let memo = Memo::default();
        if let Some(value) = self.0.get() {
            let _ = memo.0.set(carry(value));
        }
        memo
    }

    /// Forgets the value: the owner is about to change.
    pub fn clear(&mut self) {
        self.0.take();
    }
}

/// A value's 128-bit digest: SipHash-1-3 with a 128-bit output, keyed by a secret drawn once per
/// process (`key`), of what its `Hash` writes. It is what an owner that is shared between many
/// states writes into their hashes instead of its whole self (see `Memo`), so a state's
/// fingerprint reads each shared part once, and what the checker tells states and parts apart
/// by.
///
/// Why keyed: an unkeyed hash is a fixed function, and a fixed function has collisions that a
/// state can be built to hit. XXH3, which this was before, is not collision resistant: on an
/// input over 240 bytes a 64-bit lane `v` adds `lo32(v ^ s) * hi32(v ^ s)` for a public secret
/// word `s`, which is 0 whenever `hi32(v) == hi32(s)`, so a value can be moved between two such
/// lanes without changing the digest (`tests/identity.rs` builds two recipe states that
/// collide so). Keyed, the digest is a pseudo-random function of its input to anyone who does
/// not know the key, and nothing a recipe, a world or a user's input does can depend on the
/// key: the values digested in a run are fixed before the key is drawn. So for every set of
/// inputs, however structured, two distinct ones get one digest with probability 2^-128 (plus
/// SipHash's distinguishing advantage, which no known attack makes larger than that), and the
/// bound the checker prints (`bfs::collision_probability`) holds for every input, not just for
/// inputs that look random. The same holds of digests of digests (a state's fingerprint over
/// its parts' digests): a collision there needs either two distinct parts with one digest or
/// two distinct sequences of digests with one digest, each bounded alike.
///
/// The key changes nothing a run reports: no order, choice or output depends on a digest's
/// value, only on whether two digests are equal, so counts and traces are the same from
/// process to process (`tests/identity.rs` checks it).
pub fn digest(value: &impl std::hash::Hash) -> u128 {
    // Room for a world of a few clients at once, where growing the buffer would copy it.
    let mut bytes = Bytes(Vec::with_capacity(1024));
    value.hash(&mut bytes);
    digest_bytes(&bytes.0)
}

/// The keyed digest of `bytes` (see `digest`).
fn digest_bytes(bytes: &[u8]) -> u128 {
    static KEY: OnceLock<(u64, u64)> = OnceLock::new();
    digest_with(key(&KEY), bytes)
}

/// The keyed digest of a list of numbers a checker handed out (the numbers of the parts of a
/// state, say), under a second key drawn apart from `digest`'s: the two are independent
/// pseudo-random functions, so a digest of numbers equals a digest of a value (whose bytes may
/// well be the same) only by the chance the collision bound counts, never because the bytes
/// are.
pub fn digest_numbers(numbers: &[u32]) -> u128 {
    static KEY: OnceLock<(u64, u64)> = OnceLock::new();
    assert!(numbers.len() <= 16, "at most 16 numbers");
    let mut bytes = [0u8; 4 * 16];
    let bytes = &mut bytes[..4 * numbers.len()];
    for (at, n) in bytes.chunks_exact_mut(4).zip(numbers) {
        at.copy_from_slice(&n.to_le_bytes());
    }
    digest_with(key(&KEY), bytes)
}

fn digest_with((k0, k1): (u64, u64), bytes: &[u8]) -> u128 {
    let mut hasher = siphasher::sip128::SipHasher13::new_with_keys(k0, k1);
    std::hash::Hasher::write(&mut hasher, bytes);
    siphasher::sip128::Hasher128::finish128(&hasher).as_u128()
}

/// A digest's secret: 128 bits from the operating system, drawn once per process on first use
/// (every digest of a process must use one key: parts memoize theirs). It is a key, not a
/// source of behaviour (see `digest`).
fn key(slot: &OnceLock<(u64, u64)>) -> (u64, u64) {
    *slot.get_or_init(|| {
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes).expect("the operating system hands out random bytes");
        let (k0, k1) = bytes.split_at(8);
        (u64::from_le_bytes(k0.try_into().expect("8 bytes")), u64::from_le_bytes(k1.try_into().expect("8 bytes")))
    })
}

/// What a `Hash` writes, gathered to be digested in one pass: a value writes many small pieces
/// (a number, a length, a short name), and a streaming hasher costs a buffered copy per piece
/// where appending to a vector costs a few instructions. The digest is the same either way.
struct Bytes(Vec<u8>);

impl std::hash::Hasher for Bytes {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        self.0.extend_from_slice(bytes);
    }

    #[inline]
    fn write_u8(&mut self, n: u8) {
        self.0.push(n);
    }

    #[inline]
    fn write_u32(&mut self, n: u32) {
        self.0.extend_from_slice(&n.to_le_bytes());
    }

    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.0.extend_from_slice(&n.to_le_bytes());
    }

    #[inline]
    fn write_u128(&mut self, n: u128) {
        self.0.extend_from_slice(&n.to_le_bytes());
    }

    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }

    fn finish(&self) -> u64 {
        digest_bytes(&self.0) as u64
    }
}

impl<T> Default for Memo<T> {
    fn default() -> Self {
        Memo(OnceLock::new())
    }
}

impl<T> Clone for Memo<T> {
    fn clone(&self) -> Self {
        Memo::default()
    }
}

impl<T> PartialEq for Memo<T> {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl<T> Eq for Memo<T> {}

impl<T> std::hash::Hash for Memo<T> {
    fn hash<H: std::hash::Hasher>(&self, _: &mut H) {}
}

impl<T> fmt::Debug for Memo<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Memo")
    }
}

/// A table shared between states (a tree's nodes, the sessions, the watch tables) with what is
/// derived from it memoized, as clients have: its digest, which a state's hash writes in its
/// place, and the numbers renumbering collects from it. Changing it through `DerefMut` forgets both,
/// so a table changed in place (`Arc::make_mut(..).insert(..)`) is derived afresh.
#[derive(Default)]
pub struct Memoized<T> {
    value: T,
    digest: Memo<u128>,
    /// The numbers renumbering collects from it (see `Numbers::collect_part`).
    pub numbers: Memo<Option<crate::Collected>>,
}

impl<T> Memoized<T> {
    /// This part, renumbered by `r` from one whose numbers memo was `numbers`: the memo carried
    /// (see `Renumber::carry`).
    pub fn numbers_carried(mut self, r: &crate::Renumber, numbers: &Memo<Option<crate::Collected>>) -> Self {
        self.numbers = r.carry(numbers);
        self
    }
}

impl<T: std::hash::Hash> Memoized<T> {
    /// What its hash is in a state's (see `digest`).
    pub fn digest(&self) -> u128 {
        *self.digest.get_or_init(|| digest(&self.value))
    }
}

impl<T> std::ops::Deref for Memoized<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.value
    }
}

impl<T> std::ops::DerefMut for Memoized<T> {
    fn deref_mut(&mut self) -> &mut T {
        self.digest.clear();
        self.numbers.clear();
        &mut self.value
    }
}

impl<T: Clone> Clone for Memoized<T> {
    /// A copy is made to be changed (copy on write): its memos start empty.
    fn clone(&self) -> Self {
        Memoized { value: self.value.clone(), digest: Memo::default(), numbers: Memo::default() }
    }
}

impl<T: PartialEq> PartialEq for Memoized<T> {
    fn eq(&self, other: &Self) -> bool {
        self.value == other.value
    }
}

impl<T: Eq> Eq for Memoized<T> {}

impl<T: std::hash::Hash> std::hash::Hash for Memoized<T> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_u128(self.digest());
    }
}

impl<T: fmt::Debug> fmt::Debug for Memoized<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.value.fmt(f)
    }
}

impl<T: FromIterator<E>, E> FromIterator<E> for Memoized<T> {
    fn from_iter<I: IntoIterator<Item = E>>(iter: I) -> Self {
        Memoized { value: iter.into_iter().collect(), digest: Memo::default(), numbers: Memo::default() }
    }
}

impl<T: serde::Serialize> serde::Serialize for Memoized<T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.value.serialize(serializer)
    }
}

impl<'de, T: serde::Deserialize<'de>> serde::Deserialize<'de> for Memoized<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        T::deserialize(deserializer).map(|value| Memoized { value, digest: Memo::default(), numbers: Memo::default() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn computed_once_forgotten_on_clear_and_not_copied() {
        let mut memo = Memo::default();
        assert_eq!(*memo.get_or_init(|| 1), 1);
        assert_eq!(*memo.get_or_init(|| 2), 1, "computed once");
        assert_eq!(*memo.clone().get_or_init(|| 3), 3, "a copy starts empty");
        assert_eq!(*memo.carried(|v| v * 10).get_or_init(|| 5), 10, "carried over");
        assert_eq!(*Memo::<i32>::default().carried(|v| v * 10).get_or_init(|| 6), 6, "nothing to carry");
        memo.clear();
        assert_eq!(*memo.get_or_init(|| 4), 4);
    }

    #[test]
    fn a_memoized_table_forgets_what_it_derived_once_changed_in_place() {
        let mut table: Memoized<Vec<u32>> = [1, 2].into_iter().collect();
        let before = table.digest();
        assert_eq!(before, digest(&vec![1u32, 2]), "the digest of its value");
        let _ = table.numbers.get_or_init(|| None);
        table.push(3);
        assert!(table.numbers.get().is_none(), "changed in place: the numbers are forgotten");
        assert_eq!(table.digest(), digest(&vec![1u32, 2, 3]), "and the digest derived afresh");
        let copy = table.clone();
        assert!(copy == table && copy.digest.get().is_none(), "a copy is equal, with its memos empty");
    }
}
