//! The order in which the server lists a node's children. ZooKeeper promises none, so the model
//! can list them in any of several orders: a recipe that forgets to sort is caught. Its own file
//! because the tree, the listings and the server all read it.

use serde::{Deserialize, Serialize};

/// The order in which getChildren hands out names. ZooKeeper defines none (it is a Java HashSet's),
/// so a model must be able to hand them out in any order to catch recipes that forget to sort.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChildrenOrder {
    Sorted,
    #[default]
    Reversed,
    /// A fixed pseudo-random permutation chosen by the seed.
    Scrambled(u64),
}

impl ChildrenOrder {
    pub fn arrange(self, mut names: Vec<String>) -> Vec<String> {
        match self {
            ChildrenOrder::Sorted => names.sort(),
            // The tree lists children in key order already: reversing it is all it takes.
            ChildrenOrder::Reversed if names.is_sorted() => names.reverse(),
            ChildrenOrder::Reversed => names.sort_by(|a, b| b.cmp(a)),
            ChildrenOrder::Scrambled(seed) => names.sort_by_key(|n| (scramble_key(seed, n), n.clone())),
        }
        names
    }
}

/// Where a name sorts in a scrambled order: FNV-1a of its bytes, from the seed.
pub(crate) fn scramble_key(seed: u64, text: &str) -> u64 {
    let mut hash = 0xcbf2_9ce4_8422_2325u64 ^ seed;
    for byte in text.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}
