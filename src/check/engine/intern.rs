//! Hash-consing for the checker's stored states. A state is kept as shared parts (its clients,
//! its trees, its sessions and watch tables), and a step changes one or two of them, but
//! renumbering and symmetry rebuild every part they rename: two states met far apart in the
//! graph, or one state's successors after renaming, then hold equal parts as separate copies.
//! The interner hands each state the one copy of each part met so far, so a state holds a few
//! pointers instead of a few kilobytes, and what is memoized on a part (its digest, the numbers
//! renumbering collects) is computed once for all the states that share it.
//!
//! The frontier keeps each state packed (`Packed`): what is left of a state without its clients
//! (its shell) is shared as one more part, and a packed state is the numbers of its shell and
//! its clients in the interner's tables.
//!
//! A successor is also handed the kept copies of the clients its step changed before it is
//! settled (`share_changed`): a client met before then brings what renumbering collected from
//! it, and its digest, instead of having them derived again.
//!
//! Why it cannot change an answer, short of a collision the run's bound counts: a part is
//! replaced only by one equal to it, so every state keeps its value, and with it its
//! fingerprint, its successors and every property's verdict; a packed state unpacks to a state
//! equal to the one packed. A shell is filed under its whole content, which the table compares
//! in full. A client is filed under its index and its 128-bit digest, a tree under its digest:
//! the digests a state's fingerprint is made of. So a part is handed a different one only if
//! two distinct parts met in the run have the same digest, and the run's collision bound counts
//! every digest the interner looks up: those of every state kept and, once more, those of every
//! raw successor handed copies before it is settled (`index::collision_probability`). The same
//! event in a state's fingerprint can merge two states; here it would swap a part, so that a
//! state never reached is explored in its place. The bound covers both. Comparing the two parts
//! in full on every lookup cost 3.5 % of the instructions (measured) and checked nothing the
//! bound does not already cover. (That a part's digest is of its whole value needs each
//! recipe's `Hash` to write everything its `Eq` compares, as `Recipe` asks.) A client is shared
//! only at the index it was met at, since what renumbering collects from a client depends on
//! its index, and only with the same inputs handed to its recipe when the run renumbers by replay
//! (`zklab_model::reduce::world::replay`): equal clients with other histories renumber alike, but which
//! one a state keeps would otherwise depend on which thread met it first.

use rustc_hash::{FxHashMap, FxHashSet};
use std::hash::{BuildHasher, Hash};
use std::sync::{Arc, Mutex};
use zklab_model::world::{Client, Shell};
use zklab_model::{DataTree, Recipe, Sessions, WatchTable, World};

/// Shards of each table, so that the expanding threads rarely wait for one another.
const SHARDS: usize = 64;

/// Parts filed by their content: the sessions and the watch tables, small enough to hash.
type ByContent<V> = Vec<Mutex<FxHashSet<Arc<V>>>>;

pub(in crate::check) struct Interner<R> {
    /// By index, digest (memoized on each client) and what its recipe was handed (see
    /// `Client::interned_as`).
    clients: Numbered<(usize, u128, u128), Client<R>>,
    /// By digest (memoized on each tree); packed states do not name trees.
    trees: Numbered<u128, DataTree>,
    sessions: ByContent<Sessions>,
    watches: ByContent<WatchTable>,
    /// By content.
    shells: Numbered<Arc<Shell<R>>, Shell<R>>,
}

/// A part's number in its table: its place in its shard times `SHARDS`, plus the shard.
pub(in crate::check) type Number = u32;

/// Parts filed under a key, found again by key or by number: the clients and the shells that
/// packed states name, and the trees.
struct Numbered<K, V>(Vec<Mutex<NumberedShard<K, V>>>);

struct NumberedShard<K, V> {
    by_key: FxHashMap<K, Number>,
    parts: Vec<Arc<V>>,
}

impl<K: Hash + Eq, V: PartialEq> NumberedShard<K, V> {
    /// The number and the kept copy of `part`, filed under `key`, if there is one: equal to it
    /// (see the module).
    fn kept(&self, key: &K, part: &Arc<V>) -> Option<(Number, Arc<V>)> {
        let number = *self.by_key.get(key)?;
        let kept = &self.parts[number as usize / SHARDS];
        debug_assert!(Arc::ptr_eq(kept, part) || **kept == **part, "two parts under one digest");
        Some((number, kept.clone()))
    }
}

impl<K, V> Default for NumberedShard<K, V> {
    fn default() -> Self {
        NumberedShard { by_key: FxHashMap::default(), parts: Vec::new() }
    }
}

impl<K: Hash + Eq, V: PartialEq> Numbered<K, V> {
    fn new() -> Self {
        Numbered(shards())
    }

    /// The number and the kept copy of `part`, filed under `key`, filing `part` if there is
    /// none.
    fn file(&self, key: K, part: &Arc<V>) -> (Number, Arc<V>) {
        let at = shard_of(&key);
        let mut shard = self.0[at].lock().expect("no thread panics holding it");
        if let Some(kept) = shard.kept(&key, part) {
            return kept;
        }
        let number = Number::try_from(shard.parts.len() * SHARDS + at).expect("fewer than 2^32 parts of a kind");
        shard.parts.push(part.clone());
        shard.by_key.entry(key).or_insert(number);
        (number, part.clone())
    }

    /// The kept copy of `part`, filed under `key`, if there is one (filing nothing).
    fn find(&self, key: K, part: &Arc<V>) -> Option<Arc<V>> {
        let shard = self.0[shard_of(&key)].lock().expect("no thread panics holding it");
        shard.kept(&key, part).map(|(_, kept)| kept)
    }

    /// The part filed with `number`.
    fn get(&self, number: Number) -> Arc<V> {
        let shard = self.0[number as usize % SHARDS].lock().expect("no thread panics holding it");
        shard.parts[number as usize / SHARDS].clone()
    }
}

/// A state as the frontier keeps it: the numbers of its shell, shared with every state of the
/// same shell (a run meets a few thousand), and of its clients. 40 bytes, where the world is
/// about 380 at five clients (see `zklab_model::world::Shell`). Held inline rather than boxed:
/// a packed state is made on one thread and expanded and dropped on another, and a boxed one
/// cost an allocation each, freed across threads (docs/internals/performance.md, "Decision
/// log").
#[derive(Clone)]
pub(in crate::check) struct Packed {
    numbers: [Number; PACKED],
    len: u8,
}

/// The most numbers a packed state holds: its shell's and one per client, for the most clients
/// a check explores.
const PACKED: usize = crate::scenario::MAX_CLIENTS + 1;

impl Packed {
    /// `len` numbers, all 0 until set (`check::explore` holds a run to `MAX_CLIENTS`).
    fn of_len(len: usize) -> Packed {
        Packed { numbers: [0; PACKED], len: len as u8 }
    }

    /// The shell's number, then the clients'.
    pub(in crate::check) fn numbers(&self) -> &[Number] {
        &self.numbers[..usize::from(self.len)]
    }

    /// The shell's number.
    pub(in crate::check) fn shell(&self) -> Number {
        self.numbers[0]
    }

    /// The clients' numbers.
    pub(in crate::check) fn clients(&self) -> &[Number] {
        &self.numbers()[1..]
    }

    /// The same numbers with the shell's replaced by `shell` and, given, client `i`'s by its
    /// number: a state one step away whose step changed at most that client.
    pub(in crate::check) fn moved(&self, shell: Number, client: Option<(usize, Number)>) -> Packed {
        let mut moved = Packed { numbers: self.numbers, len: self.len };
        moved.numbers[0] = shell;
        if let Some((i, number)) = client {
            moved.numbers[i + 1] = number;
        }
        moved
    }
}

fn shards<T: Default>() -> Vec<Mutex<T>> {
    (0..SHARDS).map(|_| Mutex::default()).collect()
}

fn shard_of(key: &impl Hash) -> usize {
    rustc_hash::FxBuildHasher.hash_one(key) as usize % SHARDS
}

impl<R: Recipe> Interner<R> {
    pub(in crate::check) fn new() -> Self {
        Interner {
            clients: Numbered::new(),
            trees: Numbered::new(),
            sessions: shards(),
            watches: shards(),
            shells: Numbered::new(),
        }
    }

    /// The initial state, shared and packed.
    pub(in crate::check) fn pack_first(&self, mut world: World<R>) -> Packed {
        self.filed(&mut world, None)
    }

    /// Hands `next`, a successor of `from` not yet settled, the kept copy of each client the
    /// step changed, where one equal to it has been kept: settling it then finds the numbers
    /// renumbering collects already memoized on the copy, as its fingerprint finds its digest.
    /// Nothing is filed: most successors are met again or settle into other clients.
    pub(in crate::check) fn share_changed(&self, next: &mut World<R>, from: &World<R>) {
        next.clients.share(|i, client| {
            if from.clients.shared(i).is_some_and(|kept| Arc::ptr_eq(kept, client)) {
                return None;
            }
            self.clients.find(client.interned_as(i), client).filter(|kept| !Arc::ptr_eq(kept, client))
        });
    }

    /// `next`, a state a step led to from `from` (unpacked from `packed`), settled or as the
    /// step left it, filed with its parts: its parts are replaced by the kept copies, which
    /// carry what is memoized on them, and its numbers are returned (its packed form). The
    /// parts the step left alone are `from`'s own, shared already, and need no lookup. What a
    /// step made, filed once, is then found by number (see `transitions`).
    pub(in crate::check) fn file(&self, next: &mut World<R>, from: &World<R>, packed: &Packed) -> Packed {
        self.filed(next, Some((from, packed)))
    }

    /// Files `world` with its parts (`share_and_number`) and its shell, and returns its
    /// numbers. The shell is copied without the clients, which stay `world`'s: copying them too
    /// would write the counts of clients other states and threads share.
    fn filed(&self, world: &mut World<R>, from: Option<(&World<R>, &Packed)>) -> Packed {
        let mut numbers = self.share_and_number(world, from);
        let clients = std::mem::take(&mut world.clients);
        let shell = Arc::new(world.clone().into_shell().0);
        world.clients = clients;
        numbers.numbers[0] = self.shells.file(shell.clone(), &shell).0;
        numbers
    }

    /// The client filed with `number`.
    pub(in crate::check) fn client(&self, number: Number) -> Arc<Client<R>> {
        self.clients.get(number)
    }

    /// The shell filed with `number`.
    pub(in crate::check) fn shell(&self, number: Number) -> Arc<Shell<R>> {
        self.shells.get(number)
    }

    /// Files `world`'s clients and its server's parts, putting the kept copies in their place,
    /// and returns the clients' numbers (the shell's is left 0). Parts `from`'s state shares
    /// (a step left them alone) take its numbers and need no lookup.
    fn share_and_number(&self, world: &mut World<R>, from: Option<(&World<R>, &Packed)>) -> Packed {
        let mut packed = Packed::of_len(world.clients.len() + 1);
        let numbers = &mut packed.numbers;
        world.clients.share(|i, client| {
            if let Some((from, from_packed)) = from {
                if from.clients.shared(i).is_some_and(|kept| Arc::ptr_eq(kept, client)) {
                    numbers[i + 1] = from_packed.clients()[i];
                    return None;
                }
            }
            let (number, kept) = self.clients.file(client.interned_as(i), client);
            numbers[i + 1] = number;
            (!Arc::ptr_eq(&kept, client)).then_some(kept)
        });
        let kept_server = from.map(|(from, _)| &from.server);
        world.server.share(
            kept_server,
            |tree| self.trees.file(tree.digest(), tree).1,
            |sessions| by_content(&self.sessions, sessions),
            |watches| by_content(&self.watches, watches),
        );
        packed
    }

    /// The state `packed` stands for, equal to the one packed (see the module).
    pub(in crate::check) fn unpack(&self, packed: &Packed) -> World<R> {
        let clients = packed.clients().iter().map(|&number| self.clients.get(number)).collect();
        self.shells.get(packed.numbers()[0]).with(clients)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Scenario;
    use zklab_model::{FaultBudget, FaultKind, WorldConfig};
    use zklab_recipes::AnyRecipe;

    /// Walks up to `limit` states depth-first from the standard lock's initial state (three
    /// clients, one expiry), handing each successor with the state it came from and the
    /// state's packing to `pack`, which packs it for the frontier. Returns the states met.
    fn walk(
        interner: &Interner<AnyRecipe>,
        limit: usize,
        mut pack: impl FnMut(&World<AnyRecipe>, &Packed, World<AnyRecipe>) -> Packed,
    ) -> usize {
        let config = WorldConfig { faults: FaultBudget::once(&[FaultKind::Expire]), ..WorldConfig::default() };
        let init = Scenario::new("standard", 3, config).unwrap().world();
        let mut frontier = vec![interner.pack_first(init)];
        let mut met = 0;
        while let Some(packed) = frontier.pop() {
            let world = interner.unpack(&packed);
            met += 1;
            if met > limit {
                break;
            }
            for (_, next) in world.successors(false) {
                frontier.push(pack(&world, &packed, next));
            }
        }
        met
    }

    #[test]
    fn a_packed_state_unpacks_to_itself_and_equal_parts_get_one_number() {
        let interner = Interner::new();
        let met = walk(&interner, 2_000, |world, packed, next| {
            let again = interner.file(&mut next.clone(), world, packed);
            assert!(interner.unpack(&again) == next, "unpacks to the state packed");
            let fresh = interner.pack_first(next);
            assert_eq!(
                fresh.numbers(),
                again.numbers(),
                "the same numbers, whether parts were looked up or kept from the parent"
            );
            again
        });
        assert!(met > 2_000, "enough states: {met}");
    }

    #[test]
    fn a_successor_is_handed_the_kept_copies_of_its_changed_clients_and_stays_equal() {
        let interner = Interner::new();
        let mut handed = 0;
        walk(&interner, 2_000, |world, packed, next| {
            let mut shared = next.clone();
            interner.share_changed(&mut shared, world);
            assert!(shared == next, "only equal copies are handed over");
            for i in 0..next.clients.len() {
                let (before, after) = (next.clients.shared(i).unwrap(), shared.clients.shared(i).unwrap());
                match interner.clients.find(before.interned_as(i), before) {
                    Some(kept) => assert!(Arc::ptr_eq(&kept, after), "the kept copy, not another"),
                    None => assert!(Arc::ptr_eq(before, after), "left as it was without one"),
                }
                handed += usize::from(!Arc::ptr_eq(before, after));
            }
            interner.file(&mut next.clone(), world, packed)
        });
        assert!(handed > 100, "changed clients met before are handed their kept copies: {handed}");
    }
}
