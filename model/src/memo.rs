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

/// A value's 128-bit digest (XXH3 of what its `Hash` writes): what an owner that is shared
/// between many states writes into their hashes instead of its whole self (see `Memo`), so a
/// state's fingerprint reads each shared part once. Two different values share a digest with
/// probability about 2^-128.
pub fn digest(value: &impl std::hash::Hash) -> u128 {
    // Room for a world of a few clients at once, where growing the buffer would copy it.
    let mut bytes = Bytes(Vec::with_capacity(1024));
    value.hash(&mut bytes);
    xxhash_rust::xxh3::xxh3_128(&bytes.0)
}

/// What a `Hash` writes, gathered to be digested in one pass: a value writes many small pieces
/// (a number, a length, a short name), and XXH3's streaming state costs a buffered copy per
/// piece where appending to a vector costs a few instructions. The digest is XXH3's of the same
/// bytes either way.
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
        xxhash_rust::xxh3::xxh3_64(&self.0)
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
