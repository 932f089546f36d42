//! Hash-consing for the checker's stored states. A state is kept as shared parts (its clients,
//! its trees, its sessions and watch tables), and a step changes one or two of them, but
//! renumbering and symmetry rebuild every part they rename: two states met far apart in the
//! graph, or one state's successors after renaming, then hold equal parts as separate copies.
//! The interner hands each state the one copy of each part met so far, so the frontier holds a
//! few pointers per state instead of a few kilobytes, and what is memoized on a part (its
//! digest, the numbers renumbering collects) is computed once for all the states that share it.
//!
//! The frontier keeps each state packed (`Packed`): what is left of a state without its clients
//! (its shell) is shared as one more part.
//!
//! Why it cannot change an answer: a part is replaced only by one equal to it (compared in
//! full, not by digest), so every state keeps its value, and with it its fingerprint, its
//! successors and every property's verdict; a packed state unpacks to a state equal to the one
//! packed. A client is shared only at the index it was met at, since what renumbering collects
//! from a client depends on its index.

use rustc_hash::{FxHashMap, FxHashSet};
use std::hash::{BuildHasher, Hash};
use std::sync::{Arc, Mutex};
use zklab_model::world::{Client, Clients, Shell};
use zklab_model::{DataTree, Recipe, Sessions, WatchTable, World};

/// Shards of each table, so that the expanding threads rarely wait for one another.
const SHARDS: usize = 64;

/// Parts filed under a key (their digest): the tree and the clients, whose digests are
/// memoized on them.
type ByDigest<K, V> = Vec<Mutex<FxHashMap<K, Arc<V>>>>;

/// Parts filed by their content: the sessions and the watch tables, small enough to hash.
type ByContent<V> = Vec<Mutex<FxHashSet<Arc<V>>>>;

pub(super) struct Interner<R> {
    clients: ByDigest<(usize, u128), Client<R>>,
    trees: ByDigest<u128, DataTree>,
    sessions: ByContent<Sessions>,
    watches: ByContent<WatchTable>,
    shells: ByContent<Shell<R>>,
}

/// A state as the frontier keeps it: its shell, shared with every state of the same shell
/// (a run meets a few thousand), and its clients, each a shared pointer. About 80 bytes at five
/// clients where the world is about 380 (see `zklab_model::world::Shell`).
pub(super) struct Packed<R> {
    shell: Arc<Shell<R>>,
    clients: Clients<R>,
}

impl<R: Recipe> Packed<R> {
    /// The state itself, equal to the one packed.
    pub(super) fn unpack(self) -> World<R> {
        self.shell.with(self.clients)
    }
}

fn shards<T: Default>() -> Vec<Mutex<T>> {
    (0..SHARDS).map(|_| Mutex::default()).collect()
}

fn shard_of(key: &impl Hash) -> usize {
    rustc_hash::FxBuildHasher.hash_one(key) as usize % SHARDS
}

impl<R: Recipe> Interner<R> {
    pub(super) fn new() -> Self {
        Interner { clients: shards(), trees: shards(), sessions: shards(), watches: shards(), shells: shards() }
    }

    /// `world`, a successor of `from` (see `share`), shared and packed for the frontier.
    pub(super) fn pack(&self, world: World<R>, from: &World<R>) -> Packed<R> {
        self.pack_shared(self.share(world, from))
    }

    /// A state whose parts are shared already (or need not be: the initial state), packed.
    pub(super) fn pack_shared(&self, world: World<R>) -> Packed<R> {
        let (shell, clients) = world.into_shell();
        Packed { shell: by_content(&self.shells, &Arc::new(shell)), clients }
    }

    /// `world` with each of its parts replaced by the copy met first. `world` is a successor of
    /// `from`, a state the interner has seen: the parts a step left alone are `from`'s own,
    /// shared already, and need no lookup.
    fn share(&self, mut world: World<R>, from: &World<R>) -> World<R> {
        world.clients.share(&from.clients, |i, client| by_digest(&self.clients, (i, client.digest()), client));
        world.server.share(
            &from.server,
            |tree| by_digest(&self.trees, tree.digest(), tree),
            |sessions| by_content(&self.sessions, sessions),
            |watches| by_content(&self.watches, watches),
        );
        world
    }
}

/// The copy of `part` filed under `key`, filing `part` if there is none. A different part under
/// the same key (two digests colliding) is left unshared.
fn by_digest<K: Hash + Eq, V: PartialEq>(table: &ByDigest<K, V>, key: K, part: &Arc<V>) -> Arc<V> {
    let mut shard = table[shard_of(&key)].lock().expect("no thread panics holding it");
    let kept = shard.entry(key).or_insert_with(|| part.clone());
    match Arc::ptr_eq(kept, part) || **kept == **part {
        true => kept.clone(),
        false => part.clone(),
    }
}

/// The copy of `part` equal to it, filing `part` if there is none.
fn by_content<V: Hash + Eq>(table: &ByContent<V>, part: &Arc<V>) -> Arc<V> {
    let mut shard = table[shard_of(&**part)].lock().expect("no thread panics holding it");
    match shard.get(&**part) {
        Some(kept) => kept.clone(),
        None => {
            shard.insert(part.clone());
            part.clone()
        }
    }
}
