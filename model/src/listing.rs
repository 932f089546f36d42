//! A getChildren reply's names. A listing is built once per change of the children and shared
//! by every reply that lists them (see `DataTree::listing`): a herd of N clients each listing N
//! children holds one copy, not N. It knows its length on the wire, which the Java client
//! compares with its `jute.maxbuffer` on every reply.
//!
//! A listing is its names: equality, order, hashing, printing and serialization are those of
//! the names in their order, exactly as for a `Vec<String>`, so states and traces are the same
//! whether a listing is shared or not.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::hash::{Hash, Hasher};
use std::ops::Deref;
use std::sync::Arc;

#[derive(Clone, Default)]
pub struct Listing {
    names: Arc<[String]>,
    /// The names as jute writes a vector of strings: an int count, then each name after an int
    /// length.
    wire_bytes: usize,
}

impl Listing {
    pub fn new(names: Vec<String>) -> Self {
        let wire_bytes = 4 + names.iter().map(|n| 4 + n.len()).sum::<usize>();
        Listing { names: names.into(), wire_bytes }
    }

    /// The bytes the names take in a reply.
    pub fn wire_bytes(&self) -> usize {
        self.wire_bytes
    }

    /// Whether both are the same shared copy (not merely equal).
    pub fn shares(&self, other: &Listing) -> bool {
        Arc::ptr_eq(&self.names, &other.names)
    }
}

impl Deref for Listing {
    type Target = [String];
    fn deref(&self) -> &[String] {
        &self.names
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
        self.names == other.names
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
        self.names.cmp(&other.names)
    }
}

impl Hash for Listing {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.names.hash(state);
    }
}

impl std::fmt::Debug for Listing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.names.fmt(f)
    }
}

impl Serialize for Listing {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.names.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Listing {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Vec::<String>::deserialize(deserializer).map(Listing::new)
    }
}
