//! A getChildren reply's names.
//!
//! Two kinds of listing answer the same questions:
//! - a short one (every listing the checker makes, a trace's, a test's) is its names as given;
//! - a long one is kept by its tree (see `DataTree::listing`) and changed in place, one name at
//!   a time, as children come and go. It is persistent: copying it is O(1), a change is
//!   O(log n) and leaves the copies handed out earlier as they were. A herd of N clients each
//!   listing N children therefore holds one listing, not N, and a queue of N children changing
//!   N times costs O(N log N), not O(N²).
//!
//! A long listing also files its names by the counter ZooKeeper appends to a sequential name
//! (`counters_below`), so that a waiter can find the contender just before it without reading
//! every name: what keeps the simulator linear in its clients.
//!
//! A listing is its names: equality, order, hashing, printing and serialization are those of
//! the names in their order, exactly as for a `Vec<String>`, so states and traces are the same
//! whatever kind a listing is. It knows its length on the wire, which the Java client compares
//! with its `jute.maxbuffer` on every reply.

use crate::ChildrenOrder;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::hash::{Hash, Hasher};
use std::ops::Deref;
use std::sync::{Arc, OnceLock};

#[derive(Clone, Default)]
pub struct Listing {
    names: Stored,
    /// The names as jute writes a vector of strings: an int count, then each name after an int
    /// length.
    wire_bytes: usize,
}

#[derive(Clone)]
enum Stored {
    /// The names as given, in their order.
    Given(Arc<[String]>),
    /// A long listing its tree keeps (see `Kept`).
    Kept(Arc<Kept>),
}

impl Default for Stored {
    fn default() -> Self {
        Stored::Given(Arc::from([]))
    }
}

/// A long listing: the names in the order a reply carries them, and filed by their counters.
struct Kept {
    order: ChildrenOrder,
    /// Each name under its key in `order` (see `order_key`); read backwards when `Reversed`.
    by_order: imbl::OrdSet<(u64, Arc<str>)>,
    /// Each name that ends in a counter (see `counter`), under that counter.
    by_counter: imbl::OrdSet<(u64, Arc<str>)>,
    /// How many names a marker ending in each byte would read as a negative number (see
    /// `signed_after`).
    signed_after: Box<[u32; 256]>,
    /// The names as one slice, made the first time someone reads them as one (see `Deref`).
    flat: OnceLock<Arc<[String]>>,
}

impl Clone for Kept {
    /// A copy is made only to be changed: its slice starts unmade.
    fn clone(&self) -> Self {
        Kept {
            order: self.order,
            by_order: self.by_order.clone(),
            by_counter: self.by_counter.clone(),
            signed_after: self.signed_after.clone(),
            flat: OnceLock::new(),
        }
    }
}

/// Where `name` sorts in `order`: first by this key, then by the name itself.
fn order_key(order: ChildrenOrder, name: &str) -> u64 {
    match order {
        ChildrenOrder::Sorted | ChildrenOrder::Reversed => 0,
        ChildrenOrder::Scrambled(seed) => crate::children_order::scramble_key(seed, name),
    }
}

/// The counter a name ends in: its last ten characters, when they are all digits (ZooKeeper
/// appends `%010d` of its counter to a sequential name).
fn counter(name: &str) -> Option<u64> {
    let tail = name.get(name.len().checked_sub(10)?..)?;
    tail.bytes().all(|b| b.is_ascii_digit()).then(|| tail.parse().ok()).flatten()
}

/// The byte after which a marker would make a recipe read `name` as a negative number: a name
/// ending in `-` and ten digits reads as one when the marker ends just before the `-`, and one
/// ending in `-` and nine digits when it ends just before those ten characters (0 when nothing
/// is there). A recipe reads any other name as its counter or as no number at all, whatever its
/// marker (see `Listing::counters_below`).
fn signed_after(name: &str) -> Option<u8> {
    let bytes = name.as_bytes();
    let before = |at: usize| if at == 0 { 0 } else { bytes[at - 1] };
    let n = bytes.len();
    let digits = |from: usize| bytes[from..].iter().all(u8::is_ascii_digit);
    if n >= 11 && bytes[n - 11] == b'-' && digits(n - 10) {
        Some(before(n - 11))
    } else if n >= 10 && bytes[n - 10] == b'-' && digits(n - 9) {
        Some(before(n - 10))
    } else {
        None
    }
}

fn wire_len(name: &str) -> usize {
    4 + name.len()
}

impl Listing {
    /// The names as given, in their order.
    pub fn new(names: Vec<String>) -> Self {
        let wire_bytes = 4 + names.iter().map(|n| wire_len(n)).sum::<usize>();
        Listing { names: Stored::Given(names.into()), wire_bytes }
    }

    /// `names` (in any order) as a reply arranges them in `order`, kept to be changed in place
    /// (`insert`, `remove`).
    pub fn kept(order: ChildrenOrder, names: Vec<String>) -> Self {
        let mut listing = Listing {
            names: Stored::Kept(Arc::new(Kept {
                order,
                by_order: imbl::OrdSet::new(),
                by_counter: imbl::OrdSet::new(),
                signed_after: Box::new([0; 256]),
                flat: OnceLock::new(),
            })),
            wire_bytes: 4,
        };
        for name in names {
            listing.insert(&name);
        }
        listing
    }

    /// Adds a name to a kept listing (a given one is never changed: nothing is done).
    pub fn insert(&mut self, name: &str) {
        let Stored::Kept(kept) = &mut self.names else { return };
        let kept = Arc::make_mut(kept);
        let name: Arc<str> = Arc::from(name);
        if kept.by_order.insert((order_key(kept.order, &name), name.clone())).is_some() {
            return;
        }
        self.wire_bytes += wire_len(&name);
        if let Some(after) = signed_after(&name) {
            kept.signed_after[usize::from(after)] += 1;
        }
        if let Some(at) = counter(&name) {
            kept.by_counter.insert((at, name));
        }
    }

    /// Takes a name out of a kept listing (a given one is never changed: nothing is done).
    pub fn remove(&mut self, name: &str) {
        let Stored::Kept(kept) = &mut self.names else { return };
        let kept = Arc::make_mut(kept);
        let name: Arc<str> = Arc::from(name);
        if kept.by_order.remove(&(order_key(kept.order, &name), name.clone())).is_none() {
            return;
        }
        self.wire_bytes -= wire_len(&name);
        if let Some(after) = signed_after(&name) {
            kept.signed_after[usize::from(after)] -= 1;
        }
        if let Some(at) = counter(&name) {
            kept.by_counter.remove(&(at, name));
        }
    }

    /// The bytes the names take in a reply.
    pub fn wire_bytes(&self) -> usize {
        self.wire_bytes
    }

    pub fn len(&self) -> usize {
        match &self.names {
            Stored::Given(names) => names.len(),
            Stored::Kept(kept) => kept.by_order.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether `name` is among the names (O(log n) for a kept listing).
    pub fn contains(&self, name: &str) -> bool {
        match &self.names {
            Stored::Given(names) => names.iter().any(|n| n == name),
            Stored::Kept(kept) => kept.by_order.contains(&(order_key(kept.order, name), Arc::from(name))),
        }
    }

    /// The names in their order, without making a slice of a kept listing.
    pub fn names(&self) -> NameIter<'_> {
        match &self.names {
            Stored::Given(names) => NameIter::Given(names.iter()),
            Stored::Kept(kept) => match kept.order {
                ChildrenOrder::Reversed => NameIter::Backwards(kept.by_order.iter()),
                _ => NameIter::Forwards(kept.by_order.iter()),
            },
        }
    }

    /// The names that end in a counter (see `counter`) below `below`, with their counters,
    /// greatest counter first (and among equal counters, greatest name first); `None` unless
    /// this is a kept listing in which no name reads as a negative number after a marker that
    /// ends in `marker_end` (see `signed_after`). Then every number a recipe with such a marker
    /// reads from a name here is that name's counter, so the contender just before the one
    /// numbered `below` is among the first of these (see `Queue::place` in the recipes).
    pub fn counters_below(&self, below: u64, marker_end: u8) -> Option<impl Iterator<Item = (u64, &str)> + '_> {
        let Stored::Kept(kept) = &self.names else { return None };
        (kept.signed_after[usize::from(marker_end)] == 0)
            .then(|| kept.by_counter.range(..(below, Arc::from(""))).rev().map(|(at, name)| (*at, &**name)))
    }

    /// Whether both are the same shared copy (not merely equal).
    pub fn shares(&self, other: &Listing) -> bool {
        match (&self.names, &other.names) {
            (Stored::Given(a), Stored::Given(b)) => Arc::ptr_eq(a, b),
            (Stored::Kept(a), Stored::Kept(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

/// A listing's names in their order (see `Listing::names`).
pub enum NameIter<'a> {
    Given(std::slice::Iter<'a, String>),
    Forwards(KeptIter<'a>),
    Backwards(KeptIter<'a>),
}

type KeptIter<'a> = imbl::ordset::Iter<'a, (u64, Arc<str>), imbl::shared_ptr::DefaultSharedPtr>;

impl<'a> Iterator for NameIter<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        match self {
            NameIter::Given(names) => names.next().map(String::as_str),
            NameIter::Forwards(names) => names.next().map(|(_, name)| &**name),
            NameIter::Backwards(names) => names.next_back().map(|(_, name)| &**name),
        }
    }
}

impl Deref for Listing {
    type Target = [String];
    /// The names as a slice: a kept listing makes it once, on first use, and every reader of the
    /// same copy shares it.
    fn deref(&self) -> &[String] {
        match &self.names {
            Stored::Given(names) => names,
            Stored::Kept(kept) => kept.flat.get_or_init(|| self.names().map(str::to_string).collect()),
        }
    }
}

impl From<Vec<String>> for Listing {
    fn from(names: Vec<String>) -> Self {
        Listing::new(names)
    }
}

impl FromIterator<String> for Listing {
    fn from_iter<I: IntoIterator<Item = String>>(names: I) -> Self {
        Listing::new(names.into_iter().collect())
    }
}

impl PartialEq for Listing {
    fn eq(&self, other: &Self) -> bool {
        match (&self.names, &other.names) {
            (Stored::Given(a), Stored::Given(b)) => a == b,
            _ => self.len() == other.len() && self.names().eq(other.names()),
        }
    }
}

impl Eq for Listing {}

impl PartialOrd for Listing {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Listing {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        match (&self.names, &other.names) {
            (Stored::Given(a), Stored::Given(b)) => a.cmp(b),
            _ => self.names().cmp(other.names()),
        }
    }
}

impl Hash for Listing {
    /// As a `[String]` hashes: its length, then each name.
    fn hash<H: Hasher>(&self, state: &mut H) {
        match &self.names {
            Stored::Given(names) => names.hash(state),
            Stored::Kept(_) => (**self).hash(state),
        }
    }
}

impl std::fmt::Debug for Listing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

impl Serialize for Listing {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.names())
    }
}

impl<'de> Deserialize<'de> for Listing {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Vec::<String>::deserialize(deserializer).map(Listing::new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn arranged(order: ChildrenOrder, names: &[String]) -> Vec<String> {
        let mut unique = names.to_vec();
        unique.sort();
        unique.dedup();
        order.arrange(unique)
    }

    #[test]
    fn a_name_that_could_read_as_negative_is_counted_after_its_marker() {
        assert_eq!(counter("c0-s1-lock-0000000003"), Some(3));
        assert_eq!(counter("0000000012"), Some(12));
        assert_eq!(counter("lock-000000005"), None, "nine digits");
        assert_eq!(signed_after("c0-s1-lock-0000000003"), Some(b'k'), "`-lock` would read -3");
        assert_eq!(signed_after("x-lock--0000000005"), Some(b'-'), "`-lock-` reads -5");
        assert_eq!(signed_after("x__lock__-000000005"), Some(b'_'), "`__lock__` reads -5");
        assert_eq!(signed_after("-0000000005"), Some(0));
        assert_eq!(signed_after("x__lock__0000000005"), None);
    }

    proptest! {
        /// A kept listing changed one name at a time reads exactly as the same names arranged
        /// afresh: in order, on the wire, by counter, and as a given listing of those names.
        #[test]
        fn a_kept_listing_changed_in_place_is_the_listing_built_afresh(
            ops in proptest::collection::vec(
                (any::<bool>(), 0u8..24, prop_oneof![Just(""), Just("-"), Just("x")]),
                0..80,
            ),
            seed in any::<u64>(),
            which in 0..3usize,
        ) {
            let order = [ChildrenOrder::Sorted, ChildrenOrder::Reversed, ChildrenOrder::Scrambled(seed)][which];
            let mut kept = Listing::kept(order, Vec::new());
            let mut names: Vec<String> = Vec::new();
            let mut earlier = Vec::new();
            for (add, n, sign) in ops {
                let name = format!("c{}-lock-{sign}{:010}", n % 5, n);
                earlier.push((kept.clone(), Listing::new(arranged(order, &names))));
                if add {
                    kept.insert(&name);
                    names.push(name);
                } else {
                    kept.remove(&name);
                    names.retain(|m| *m != name);
                }
                let fresh = Listing::new(arranged(order, &names));
                prop_assert_eq!(&kept, &fresh);
                prop_assert_eq!(&kept[..], &fresh[..]);
                prop_assert_eq!(kept.wire_bytes(), fresh.wire_bytes());
                prop_assert_eq!(kept.len(), fresh.len());
                prop_assert!(names.iter().all(|m| kept.contains(m)) && !kept.contains("absent"));
                let below: Option<Vec<(u64, &str)>> = kept.counters_below(12, b'-').map(Iterator::collect);
                let signed = fresh.iter().any(|m| signed_after(m) == Some(b'-'));
                let mut expected: Vec<(u64, &str)> =
                    fresh.iter().filter_map(|m| Some((counter(m)?, m.as_str()))).filter(|(c, _)| *c < 12).collect();
                expected.sort_by(|a, b| b.cmp(a));
                prop_assert_eq!(below, (!signed).then_some(expected));
            }
            for (copy, then) in earlier {
                prop_assert_eq!(&copy, &then, "a copy handed out earlier stays as it was");
            }
        }
    }

    #[test]
    fn both_kinds_hash_and_serialize_alike() {
        use std::hash::BuildHasher;
        let names: Vec<String> = (0..70).map(|i| format!("n-{i:010}")).collect();
        let kept = Listing::kept(ChildrenOrder::Reversed, names.clone());
        let given = Listing::new(ChildrenOrder::Reversed.arrange(names));
        let hasher = std::collections::hash_map::RandomState::new();
        assert_eq!(hasher.hash_one(&kept), hasher.hash_one(&given));
        assert_eq!(serde_json::to_string(&kept).ok(), serde_json::to_string(&given).ok());
        assert!(kept.shares(&kept.clone()) && !kept.shares(&given));
    }
}
