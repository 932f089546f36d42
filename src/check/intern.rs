//! Hash-consing for the checker's stored states. A state is kept as shared parts (its clients,
//! its tree), and a step changes one or two of them, but renumbering and symmetry rebuild every
//! part they rename: two states met far apart in the graph, or one state's successors after
//! renaming, then hold equal parts as separate copies. The interner hands each state the one
//! copy of each part met so far, so the frontier holds a few pointers per state instead of a
//! few kilobytes, and what is memoized on a part (its digest, the numbers renumbering collects)
//! is computed once for all the states that share it.
//!
//! Why it cannot change an answer: a part is replaced only by one equal to it (compared in
//! full, not by digest), so every state keeps its value, and with it its fingerprint, its
//! successors and every property's verdict. A client is shared only at the index it was met at,
//! since what renumbering collects from a client depends on its index.

use rustc_hash::FxHashMap;
use std::hash::BuildHasher;
use std::sync::{Arc, Mutex};
use zklab_model::world::Client;
use zklab_model::{DataTree, Recipe, World};

/// Shards of each table, so that the expanding threads rarely wait for one another.
const SHARDS: usize = 64;

type Table<K, V> = Vec<Mutex<FxHashMap<K, Arc<V>>>>;

pub(super) struct Interner<R> {
    clients: Table<(usize, u128), Client<R>>,
    trees: Table<u128, DataTree>,
}

impl<R: Recipe> Interner<R> {
    pub(super) fn new() -> Self {
        Interner {
            clients: (0..SHARDS).map(|_| Mutex::default()).collect(),
            trees: (0..SHARDS).map(|_| Mutex::default()).collect(),
        }
    }

    /// `world` with each of its parts replaced by the copy met first.
    pub(super) fn share(&self, mut world: World<R>) -> World<R> {
        world.clients.share(|i, client| intern(&self.clients, (i, client.digest()), client));
        world.server.share_tree(|tree| intern(&self.trees, tree.digest(), tree));
        world
    }
}

/// The copy of `part` filed under `key`, filing `part` if there is none. A different part under
/// the same key (two digests colliding) is left unshared.
fn intern<K: std::hash::Hash + Eq, V: PartialEq>(table: &Table<K, V>, key: K, part: &Arc<V>) -> Arc<V> {
    let shard = rustc_hash::FxBuildHasher.hash_one(&key) as usize % SHARDS;
    let mut shard = table[shard].lock().expect("no thread panics holding it");
    let kept = shard.entry(key).or_insert_with(|| part.clone());
    match Arc::ptr_eq(kept, part) || **kept == **part {
        true => kept.clone(),
        false => part.clone(),
    }
}
