//! Our own breadth-first pass over the world's state graph. stateright proves the safety
//! properties fast on many threads, but in 0.31 its counterexamples are not the shortest and its
//! `eventually` misses cycles. This pass keeps the edges (so liveness can be judged on the whole
//! graph) and where each breadth-first level starts, which give each state's shortest path (so
//! the first violating state it meets has a shortest counterexample).
//! Transition properties are judged on every step as it is taken, before its successor is
//! settled and renamed, since what a step did is not part of the state it leads to.

use super::chunked::Chunked;
use super::intern::{Interner, Packed};
use super::properties::Kind;
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::{BTreeMap, BTreeSet};
use std::hash::Hash;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, RwLock};
use zklab_model::{Property, Recipe, Step, World};

pub use crate::budget::{resident_mib, Budget, Spent};

/// The explored graph. States are numbered in breadth-first order.
pub struct Graph {
    /// The first state of each breadth-first level: states are numbered level by level, so a
    /// state's depth is read here, and its parent is the first state of the level before with
    /// an edge to it (see `parent`). Parent pointers would cost eight bytes a state.
    levels: Vec<u32>,
    /// States found.
    states: usize,
    /// Out-edges of state `i` are `edges[offsets[i]..offsets[i + 1]]`, their steps packed:
    /// eight bytes a transition (see `out`).
    offsets: Chunked<u32>,
    edges: Chunked<(u32, u32)>,
    /// Bit `c` set: client `c` is waiting for the lock in that state.
    pub(super) waiting: Chunked<u8>,
    /// Bit `c` set: client `c` believes it holds the lock in that state.
    pub(super) holding: Chunked<u8>,
    /// How many clients the world has.
    pub(super) clients: usize,
    /// Every state was expanded (no budget ran out).
    pub complete: bool,
    /// Transitions generated, repeats included.
    pub total: usize,
    /// The length of the longest of the shortest paths to the states found.
    pub depth: usize,
    /// The first state (in breadth-first order) violating each safety property.
    pub first_violation: BTreeMap<Property, u32>,
    /// The first step (from the first state in breadth-first order, then in the order steps
    /// are listed) violating each transition property: a shortest path through that step.
    pub first_bad_step: BTreeMap<Property, (u32, Step)>,
    /// The `reached:*` properties that hold in some state.
    pub reached: BTreeSet<Property>,
    /// The first expanded state (in breadth-first order) where a client waits and nothing but
    /// a fault can happen: `eventual_acquire`'s deadlock.
    pub first_deadlock: Option<u32>,
    /// The pass stopped after the level in which it found its first violation or deadlock
    /// (`Budget::stop_at_violation`). Every state up to that level's depth was expanded and
    /// every state one deeper judged, so what was found is what a complete pass finds there:
    /// the same first violating states, bad steps and deadlock, with the same shortest paths.
    pub stopped: bool,
    /// Under symmetry: the first explored state where renaming the clients did not commute with
    /// a step (see `World::renaming_commutes`), and why. The recipe's claim is then false and
    /// nothing the reduced graph says can be trusted.
    pub symmetry_refused: Option<String>,
    /// The first explored state whose future depended on more than the order of its numbers
    /// (see `World::ranking_commutes`), and why: renumbering merged states it should not have.
    pub renumbering_refused: Option<String>,
    /// The recipe situations whose claims to symmetry and renumbering have been checked (see
    /// `situations`), as of the level being expanded, and those checked since.
    checked: Checked,
    newly_checked: Vec<u128>,
    /// Under symmetry, states stand for their class (see `World::canonical`): paths are in the
    /// representatives' client numbering. Under either reduction a cycle cannot be judged for
    /// fairness.
    pub(super) reduction: Reduction,
}

/// A counterexample: steps from the initial state, and for a cycle where it starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Counterexample {
    pub steps: Vec<Step>,
    pub cycle_start: Option<usize>,
}

/// Progress of a pass, for the reporter.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    pub unique: usize,
    pub total: usize,
    pub depth: usize,
}

/// Which reductions a pass applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reduction {
    /// One state per symmetry class (see `World::canonical`).
    pub symmetry: bool,
    /// A client's invisible local step taken alone where there is one (see `World::local_step`).
    pub partial_order: bool,
    /// Each state is settled (`World::settle`: watch-equivalent zxids, renumbering) before it is
    /// kept. Off only to count states exactly as `World::apply` leaves them.
    pub settle: bool,
}

/// A settled state's representative under symmetry reduction.
fn represent<R: Recipe>(world: World<R>, reduction: Reduction) -> World<R> {
    match reduction.symmetry {
        true => world.into_canonical().0,
        false => world,
    }
}

/// Steps in the representatives' numbering, turned into the steps of the same run from `init`.
pub fn concrete_steps<R: Recipe>(init: &World<R>, steps: &[Step]) -> Vec<Step> {
    let Some((mut at, renaming)) = init.canonical() else { return steps.to_vec() };
    let mut to_concrete = renaming.inverse();
    steps
        .iter()
        .map(|&step| {
            let concrete = step.for_client(to_concrete.client(step.client()));
            at.apply(step).expect("a path of the graph replays");
            at.settle();
            let (next, renaming) = at.canonical().expect("supported at the start");
            to_concrete = renaming.inverse().then(&to_concrete);
            at = next;
            concrete
        })
        .collect()
}

/// A state's identity in the index: the 128-bit keyed digest (`zklab_model::memo::digest`, a
/// pseudo-random function under a key drawn for the run) of what the state's `Hash` writes,
/// which puts each client and the tree as its own 128-bit digest. The index compares 102 of
/// those bits (`INDEX_BITS`). Two distinct states are taken for one only if their
/// fingerprints agree on those bits (2^-102 per pair) or two of their distinct parts' digests
/// collide (2^-128 per pair), for any states a recipe makes, since they are fixed before the
/// key is drawn; `collision_probability` bounds it for a whole run, as TLC prints it.
pub(super) fn fingerprint<R: Recipe>(world: &World<R>) -> u128 {
    zklab_model::memo::digest(world)
}

/// An upper bound on the probability that two distinct states, or two distinct parts of states,
/// of a run were taken for one, so that a state went unexplored or one never reached was
/// explored in its place: each of `transitions` lookups could have matched any of the `states`
/// fingerprints on the bits the index compares by chance (TLC's "optimistic" estimate is the
/// same product, over its 64 bits), or two of the 128-bit digests taken on the way could have
/// collided. Those are at most `parts_per_state` (`World::digested_parts`) for each state met,
/// as many again for its raw successor, whose changed clients the interner looks up by digest
/// before it is settled (`Interner::share_changed`), and a recipe situation for each client of
/// each expanded state (`situations`: a collision there would skip a claim's check), so fewer
/// than `((2 × transitions + states) × parts_per_state)²` pairs.
pub fn collision_probability(states: usize, transitions: usize, parts_per_state: usize) -> f64 {
    let met = transitions.max(states) as f64;
    let parts = (2.0 * met + states as f64) * parts_per_state as f64;
    states as f64 * met / 2f64.powi(INDEX_BITS) + parts * parts / 2f64.powi(128)
}

/// States expanded per round: the helper threads expand a chunk side by side while the merging
/// thread numbers the one before in order. Small enough to bound the successors held at once,
/// large enough that handing out the work costs nothing.
const CHUNK: usize = 4096;

/// A successor as a worker found it: unknown states come with the state itself, packed, and
/// which properties hold there, so the merge only numbers them.
struct Successor {
    step: Step,
    fingerprint: u128,
    new: Option<(Packed, u64)>,
    /// Bit `i` set: the step violates the transition property `properties[i]`.
    broken: u64,
}

/// One expanded state.
struct Expansion {
    waiting: u8,
    holding: u8,
    successors: Vec<Successor>,
    /// Why a reduction the pass applies is unsound at this state.
    refuted: Option<Refusal>,
    /// The recipe situations (see `situations`) whose claims this expansion checked.
    checked: Vec<u128>,
}

/// The recipe situations whose claims were checked in an earlier level: shared,
/// read-only, with the expanding threads, and grown only between levels so that which states
/// are checked does not depend on how the threads interleave.
type Checked = Arc<FxHashSet<u128>>;

/// A recipe's claim that a reduction applies to it, checked on the states explored.
#[derive(Clone, Copy, Hash)]
enum Claim {
    /// Its clients are interchangeable (`World::renaming_commutes`).
    Symmetry,
    /// Only the order of its numbers matters (`World::ranking_commutes`).
    Renumbering,
}

/// What a client's recipe does next, and how it is renamed or renumbered, depends only on its
/// situation: the client's number and session (its `Ctx`), its recipe's state and the input
/// it handles next (`Client::situation`). Each client's, hashed with the claim it is checked
/// for. The model's own steps do not depend on the recipe's claims: they are symmetric and read
/// numbers by order by construction, which the differential test holds them to.
fn situations<R: Recipe>(world: &World<R>, claim: Claim) -> Vec<u128> {
    (0..world.clients.len()).map(|i| zklab_model::memo::digest(&(claim, i, world.clients[i].situation()))).collect()
}

/// Each client's situation in `raw` beside its situation once renumbered into `kept`, for the
/// check that renumbering commutes (`renumbering_commutes`).
fn renumbered_situations<R: Recipe>(raw: &World<R>, kept: &World<R>) -> Vec<u128> {
    (0..raw.clients.len())
        .map(|i| {
            zklab_model::memo::digest(&(Claim::Renumbering, i, raw.clients[i].situation(), kept.clients[i].situation()))
        })
        .collect()
}

/// Whether a state where the clients in `waiting` wait, and `steps` are enabled, is
/// `eventual_acquire`'s deadlock: someone waits and nothing but a fault can happen.
pub(super) fn deadlocked(waiting: u8, mut steps: impl Iterator<Item = Step>) -> bool {
    waiting != 0 && steps.all(|s| s.is_fault())
}

/// A reduction found unsound at an explored state, and why.
enum Refusal {
    /// Renaming the clients does not commute with a step (`World::renaming_commutes`).
    Symmetry(String),
    /// Ranking the numbers does not commute with a step (`World::ranking_commutes`).
    Renumbering(String),
}

/// Whether settling `raw` into `kept` (renumbering it through the recipes' own `renumbered`)
/// commutes with every step from it: `kept` offers the same steps, is judged the same, and each
/// step from either leads to states that settle to one. What the spread check
/// (`World::ranking_commutes`) cannot see: it compares two renumbered states, so a recipe whose
/// renumbering loses or changes what it acts on passes it.
fn renumbering_commutes<R: Recipe, T: PartialEq>(
    raw: &World<R>,
    kept: &World<R>,
    observed: &impl Fn(&World<R>) -> T,
) -> Result<(), String> {
    if raw == kept {
        return Ok(());
    }
    let steps = raw.steps();
    if steps != kept.steps() {
        return Err("the state offers other steps once renumbered".to_string());
    }
    if observed(raw) != observed(kept) {
        return Err("the state is judged otherwise once renumbered".to_string());
    }
    for step in steps {
        let (mut from_raw, mut from_kept) = (raw.clone(), kept.clone());
        from_raw.apply(step).expect("enabled");
        from_kept.apply(step).expect("enabled in the same state renumbered");
        from_raw.settle();
        from_kept.settle();
        if from_raw != from_kept {
            return Err(format!("step `{step}` leads elsewhere once the state is renumbered"));
        }
    }
    Ok(())
}

/// Bit `i` set: `properties[i]` holds in `world`.
fn judge<R: Recipe>(world: &World<R>, properties: &[Property]) -> u64 {
    // Who believes it holds is read by several properties: found once.
    let believers = world.believers();
    properties
        .iter()
        .enumerate()
        .filter(|(_, d)| d.holds_among(world, &believers))
        .fold(0, |bits, (i, _)| bits | 1 << i)
}

/// Bit `i` set: `step` from `before` to the raw successor `after` violates the transition
/// property `properties[i]`.
fn judge_step<R: Recipe>(before: &World<R>, step: Step, after: &World<R>, properties: &[Property]) -> u64 {
    properties
        .iter()
        .enumerate()
        .filter(|(_, d)| d.kind() == Kind::Transition && !d.allows(before, step, after))
        .fold(0, |bits, (i, _)| bits | 1 << i)
}

/// Expands `world`, which the frontier kept as `packed`.
fn expand<R: Recipe>(
    world: &World<R>,
    packed: &Packed,
    known: &Index,
    interner: &Interner<R>,
    checked: &Checked,
    properties: &[Property],
    reduction: Reduction,
) -> Expansion {
    let taken = world.successors(reduction.partial_order);
    // Each claim is checked once per client situation (see `situations`): a state whose every
    // client is in a situation checked before (in any state) hands each recipe an input it was
    // shown to handle as the claim says. A check looks at every successor of the state, not
    // only the step partial order takes alone, and a situation counts as checked only where the
    // check really ran.
    let symmetric = match reduction.symmetry {
        true => situations(world, Claim::Symmetry),
        false => Vec::new(),
    };
    let renumbers = reduction.settle && world.renumbering_applies();
    let ranked = match renumbers {
        true => situations(world, Claim::Renumbering),
        false => Vec::new(),
    };
    let unchecked = |situations: &[u128]| !situations.iter().all(|s| checked.contains(s));
    let check_symmetry = unchecked(&symmetric);
    // A state renumbering keeps as it is checks nothing (see `World::ranking_commutes`).
    let check_ranking = unchecked(&ranked) && world.ranking_checkable();
    // Partial order took fewer steps than are enabled (asked only when a claim is checked).
    let reduced = || taken.len() < world.steps().len();
    let every = match (check_symmetry || check_ranking) && reduced() {
        true => Some(world.successors(false)),
        false => None,
    };
    let claimed = every.as_ref().unwrap_or(&taken);
    let mut newly_checked = Vec::new();
    let mut refuted = None;
    if check_symmetry {
        refuted = world.renaming_commutes(claimed).err().map(Refusal::Symmetry);
        newly_checked = symmetric;
    }
    // A successor whose recipe, renumbered by replay, breaks the claim refutes it for the run.
    let replay_refuted = std::cell::RefCell::new(None);
    let settle = |(step, mut next): (Step, World<R>)| {
        let mut renumbered = false;
        if reduction.settle {
            interner.share_changed(&mut next, world);
            renumbered = match next.settle_or_refute() {
                Ok(renumbered) => renumbered,
                Err(why) => {
                    replay_refuted.borrow_mut().get_or_insert(format!("after step `{step}`, {why}"));
                    false
                }
            };
        }
        (step, next, renumbered)
    };
    let observed = |w: &World<R>| (judge(w, properties), w.waiting_mask(), w.holding_mask());
    // Each successor the pass keeps renumbered must behave as it did before (see
    // `renumbering_commutes`).
    let mut settled = Vec::with_capacity(taken.len());
    for (step, next) in taken {
        let broken = judge_step(world, step, &next, properties);
        // Copied only where settling may renumber it: most runs' successors need no copy.
        let raw = (renumbers && refuted.is_none()).then(|| next.clone());
        let (step, next, renumbered) = settle((step, next));
        if let Some(raw) = raw.filter(|_| renumbered) {
            // Asked once per pair of situations, each client's as the step left it and as
            // renumbered: what a recipe does depends on its situation, so a pair checked before
            // behaves alike. The situation as the step left it alone would not do: how it is
            // renumbered depends on the whole state's numbers.
            let pairs = renumbered_situations(&raw, &next);
            if unchecked(&pairs) {
                match renumbering_commutes(&raw, &next, &observed) {
                    Ok(()) => newly_checked.extend(pairs),
                    Err(why) => refuted = Some(Refusal::Renumbering(format!("after step `{step}`, {why}"))),
                }
            }
        }
        settled.push((step, next, broken));
    }
    if check_ranking && refuted.is_none() {
        let every_settled: Vec<(Step, World<R>)> = every
            .map(|all| all.into_iter().map(settle).map(|(step, next, _)| (step, next)).collect())
            .unwrap_or_default();
        let pairs: Vec<_> = match every_settled.is_empty() {
            true => settled.iter().map(|(step, next, _)| (*step, next)).collect(),
            false => every_settled.iter().map(|(step, next)| (*step, next)).collect(),
        };
        match world.ranking_commutes(&pairs, observed) {
            Ok(true) => newly_checked.extend(ranked),
            // Kept as it is (merged with no other state): nothing checked for its situations.
            Ok(false) => {}
            Err(why) => refuted = Some(Refusal::Renumbering(why)),
        }
    }
    if let Some(why) = replay_refuted.into_inner() {
        refuted.get_or_insert(Refusal::Renumbering(why));
    }
    let successors = settled
        .into_iter()
        .map(|(step, next, broken)| {
            let next = represent(next, reduction);
            let fingerprint = fingerprint(&next);
            // The index only grows, so a state known now is known at the merge; one unknown now
            // may have been found by then (by an earlier state of this chunk or the last).
            let new = known.get(fingerprint).is_none().then(|| {
                let holds = judge(&next, properties);
                (interner.pack_successor(next, world, packed), holds)
            });
            Successor { step, fingerprint, new, broken }
        })
        .collect();
    Expansion {
        waiting: world.waiting_mask(),
        holding: world.holding_mask(),
        successors,
        refuted,
        checked: newly_checked,
    }
}

/// Which state each fingerprint is, readable by the expanding threads while the merging
/// thread adds to it (in shards, so that a reader rarely meets the writer). An entry is 16
/// bytes: the state's number and the fingerprint's low 96 bits as three 32-bit words (a `u128`
/// key's 16-byte alignment would pad an entry to 32). The shard is chosen by 6 more bits, so two
/// fingerprints are told apart by `INDEX_BITS` of their bits (see `collision_probability`).
struct Index {
    shards: Vec<RwLock<FxHashMap<[u32; 3], u32>>>,
    /// Written by the merging thread only.
    len: AtomicUsize,
}

/// How many bits of a fingerprint the index compares: 96 in the key and 6 in the shard.
const INDEX_BITS: i32 = 102;

impl Index {
    const SHARDS: usize = 64;

    fn new() -> Self {
        Index { shards: (0..Self::SHARDS).map(|_| RwLock::default()).collect(), len: AtomicUsize::new(0) }
    }

    fn key(fingerprint: u128) -> [u32; 3] {
        [(fingerprint >> 64) as u32, (fingerprint >> 32) as u32, fingerprint as u32]
    }

    fn shard(&self, fingerprint: u128) -> &RwLock<FxHashMap<[u32; 3], u32>> {
        &self.shards[(fingerprint >> 104) as usize % Self::SHARDS]
    }

    fn get(&self, fingerprint: u128) -> Option<u32> {
        self.shard(fingerprint).read().expect("no thread panics holding it").get(&Self::key(fingerprint)).copied()
    }

    fn len(&self) -> usize {
        self.len.load(Ordering::Relaxed)
    }

    /// Numbers a new state: the next number. Only the merging thread inserts.
    fn insert(&self, fingerprint: u128) -> u32 {
        let id = self.len.fetch_add(1, Ordering::Relaxed) as u32;
        self.shard(fingerprint).write().expect("no thread panics holding it").insert(Self::key(fingerprint), id);
        id
    }
}

/// The states of one breadth-first level, in order, packed.
type Level = Chunked<Packed>;

/// Parts a chunk is cut into per helper thread, so that the helpers share it out evenly.
const PARTS_PER_HELPER: usize = 4;

/// A part of a chunk for a helper thread to expand: the chunk's number, the part's, its states.
type Work = (usize, usize, Vec<Packed>, Checked);

/// What a helper thread found in a part of a chunk.
type Done = (usize, usize, Vec<Expansion>);

/// Splits `states` into `parts` runs of about equal length, in order.
fn split<T>(mut states: Vec<T>, parts: usize) -> Vec<Vec<T>> {
    let part = states.len().div_ceil(parts.max(1)).max(1);
    let mut split = Vec::new();
    while states.len() > part {
        let rest = states.split_off(part);
        split.push(std::mem::replace(&mut states, rest));
    }
    split.push(states);
    split
}

/// Unpacks and expands `states` in order, dropping each once expanded (the merging thread would
/// otherwise).
fn expand_all<R: Recipe>(
    states: Vec<Packed>,
    known: &Index,
    interner: &Interner<R>,
    checked: &Checked,
    properties: &[Property],
    reduction: Reduction,
) -> Vec<Expansion> {
    states
        .into_iter()
        .map(|p| expand(&interner.unpack(&p), &p, known, interner, checked, properties, reduction))
        .collect()
}

/// Explores everything reachable from `init` breadth-first on `threads` threads, checking the
/// safety and reachability properties in `properties` in every state and the transition properties
/// on every step, with the reductions `reduction` asks for. States are numbered in the order
/// one thread would meet them, so the graph, its counterexamples and its counts do not depend
/// on the number of threads.
pub fn explore<R: Recipe>(
    init: World<R>,
    properties: &[Property],
    budget: Budget,
    reduction: Reduction,
    threads: usize,
    progress: &mut dyn FnMut(Progress),
) -> Graph {
    assert!(properties.len() <= 64, "properties are judged into a 64-bit mask");
    // The first state keeps the numbers the run starts with (see `World::settle_keeping_numbers`).
    let mut init = init;
    if reduction.settle {
        init.settle_keeping_numbers();
    }
    let init = represent(init, reduction);
    let index = Index::new();
    let interner = Interner::new();
    let mut graph = Graph {
        levels: vec![0],
        states: 1,
        offsets: [0].into_iter().collect(),
        edges: Chunked::default(),
        waiting: Chunked::default(),
        holding: Chunked::default(),
        clients: init.clients.len(),
        complete: true,
        total: 0,
        depth: 0,
        first_violation: BTreeMap::new(),
        first_bad_step: BTreeMap::new(),
        reached: BTreeSet::new(),
        first_deadlock: None,
        stopped: false,
        symmetry_refused: None,
        renumbering_refused: None,
        checked: Checked::default(),
        newly_checked: Vec::new(),
        reduction,
    };
    index.insert(fingerprint(&init));
    graph.record(0, judge(&init, properties), properties);
    let mut level = Level::default();
    level.push(interner.pack_first(init));
    let mut depth = 0;
    // With more than one thread, helper threads expand the states and this thread merges what
    // they found, one chunk behind: while it merges a chunk they expand the next. The helpers
    // live as long as the pass: a thread started per chunk would start with an empty allocator
    // heap each time and leave its pages to be reclaimed.
    // One queue of parts that every helper takes from: a helper slowed down (the merging thread
    // shares the cores) leaves the next parts to the others.
    let (give, work) = mpsc::channel::<Work>();
    let work = Mutex::new(work);
    std::thread::scope(|scope| {
        let (done, results) = mpsc::channel::<Done>();
        let helpers = if threads > 1 { threads } else { 0 };
        for _ in 0..helpers {
            let done = done.clone();
            let (index, work, interner) = (&index, &work, &interner);
            scope.spawn(move || loop {
                let next = work.lock().expect("no helper panics holding it").recv();
                let Ok((chunk, part, states, checked)) = next else { return };
                if done
                    .send((chunk, part, expand_all(states, index, interner, &checked, properties, reduction)))
                    .is_err()
                {
                    return;
                }
            });
        }
        while !level.is_empty() && graph.complete {
            // The states this level finds are the next level, numbered from here.
            graph.levels.push(index.len() as u32);
            let checked = graph.checked.clone();
            let mut next_level = Level::default();
            let mut unexpanded = level.into_iter();
            let mut next_chunk = || Some(unexpanded.by_ref().take(CHUNK).collect::<Vec<_>>()).filter(|c| !c.is_empty());
            if helpers == 0 {
                while let Some(chunk) = next_chunk() {
                    if budget.exhausted(index.len()) || graph.refused() {
                        graph.complete = false;
                        break;
                    }
                    let expansions = expand_all(chunk, &index, &interner, &checked, properties, reduction);
                    graph.merge(expansions, &index, &mut next_level, depth, properties);
                    progress(Progress { unique: index.len(), total: graph.total, depth });
                }
            } else {
                // Chunks sent and merged so far, how many parts each was cut into, and the parts
                // that came back before the ones merged ahead of them.
                let (mut sent, mut merged) = (0, 0);
                let mut parts = Vec::new();
                let mut arrived: BTreeMap<(usize, usize), Vec<Expansion>> = BTreeMap::new();
                loop {
                    while sent <= merged + 1 && graph.complete {
                        if budget.exhausted(index.len()) || graph.refused() {
                            graph.complete = false;
                            break;
                        }
                        let Some(chunk) = next_chunk() else { break };
                        let cut = split(chunk, helpers * PARTS_PER_HELPER);
                        parts.push(cut.len());
                        for (part, states) in cut.into_iter().enumerate() {
                            give.send((sent, part, states, checked.clone())).expect("helpers run until the pass ends");
                        }
                        sent += 1;
                    }
                    if merged == sent {
                        break;
                    }
                    while (0..parts[merged]).any(|part| !arrived.contains_key(&(merged, part))) {
                        let (chunk, part, expansions) = results.recv().expect("helpers run until the pass ends");
                        arrived.insert((chunk, part), expansions);
                    }
                    let expansions =
                        (0..parts[merged]).flat_map(|part| arrived.remove(&(merged, part)).unwrap_or_default());
                    graph.merge(expansions, &index, &mut next_level, depth, properties);
                    merged += 1;
                    progress(Progress { unique: index.len(), total: graph.total, depth });
                }
            }
            drop(checked);
            // Every part of the level is merged, so no helper holds the set any more.
            let newly = std::mem::take(&mut graph.newly_checked);
            Arc::make_mut(&mut graph.checked).extend(newly);
            level = next_level;
            depth += 1;
            if budget.stop_at_violation && graph.complete && !level.is_empty() && graph.found_a_violation() {
                graph.complete = false;
                graph.stopped = true;
            }
        }
        drop(give);
    });
    graph
}

impl Graph {
    /// Whether a reduction was found unsound: the pass stops, and nothing it found stands.
    pub fn refused(&self) -> bool {
        self.symmetry_refused.is_some() || self.renumbering_refused.is_some()
    }

    /// Whether a safety or transition property was violated or a waiting client deadlocked.
    fn found_a_violation(&self) -> bool {
        !self.first_violation.is_empty() || !self.first_bad_step.is_empty() || self.first_deadlock.is_some()
    }

    /// Numbers the new states among a chunk's expansions and records its edges, in the order one
    /// thread would have met them.
    fn merge(
        &mut self,
        expansions: impl IntoIterator<Item = Expansion>,
        index: &Index,
        next_level: &mut Level,
        depth: usize,
        properties: &[Property],
    ) {
        for expansion in expansions {
            let id = self.expanded() as u32;
            self.newly_checked.extend(expansion.checked);
            match expansion.refuted {
                Some(Refusal::Symmetry(why)) if self.symmetry_refused.is_none() => self.symmetry_refused = Some(why),
                Some(Refusal::Renumbering(why)) if self.renumbering_refused.is_none() => {
                    self.renumbering_refused = Some(why)
                }
                _ => {}
            }
            let steps = expansion.successors.iter().map(|s| s.step);
            if self.first_deadlock.is_none() && deadlocked(expansion.waiting, steps) {
                self.first_deadlock = Some(id);
            }
            self.waiting.push(expansion.waiting);
            self.holding.push(expansion.holding);
            for Successor { step, fingerprint, new, broken } in expansion.successors {
                self.total += 1;
                if broken != 0 {
                    self.record_step(id, step, broken, properties);
                }
                let target = match index.get(fingerprint) {
                    Some(t) => t,
                    None => {
                        let (next, holds) = new.expect("a state unknown at the merge was unknown before");
                        let t = index.insert(fingerprint);
                        self.states += 1;
                        self.depth = depth + 1;
                        self.record(t, holds, properties);
                        next_level.push(next);
                        t
                    }
                };
                self.edges.push((target, step.packed()));
            }
            self.offsets.push(self.edges.len() as u32);
        }
    }

    /// Records what `holds` (see `judge`) says of the new state `id`.
    fn record(&mut self, id: u32, holds: u64, properties: &[Property]) {
        for (i, property) in properties.iter().enumerate() {
            let holds = holds & (1 << i) != 0;
            match property.kind() {
                Kind::Safety if !holds && !self.first_violation.contains_key(property) => {
                    self.first_violation.insert(*property, id);
                }
                Kind::Reached if holds => {
                    self.reached.insert(*property);
                }
                _ => {}
            }
        }
    }

    /// Records that `step` from state `id` violates the transition properties in `broken`.
    fn record_step(&mut self, id: u32, step: Step, broken: u64, properties: &[Property]) {
        for (i, property) in properties.iter().enumerate() {
            if broken & (1 << i) != 0 {
                self.first_bad_step.entry(*property).or_insert((id, step));
            }
        }
    }

    pub fn unique(&self) -> usize {
        self.states
    }

    pub(super) fn expanded(&self) -> usize {
        self.offsets.len() - 1
    }

    /// The out-edges of `state`: each step and the state it leads to.
    pub(super) fn out(&self, state: u32) -> impl DoubleEndedIterator<Item = (u32, Step)> + Clone + '_ {
        let i = state as usize;
        (self.offsets[i] as usize..self.offsets[i + 1] as usize).map(|at| {
            let (target, step) = self.edges[at];
            (target, Step::unpacked(step))
        })
    }

    /// The `n`-th out-edge of `state`, if it has that many.
    pub(super) fn edge(&self, state: u32, n: usize) -> Option<(u32, Step)> {
        let i = state as usize;
        let at = self.offsets[i] as usize + n;
        (at < self.offsets[i + 1] as usize).then(|| (self.edges[at].0, Step::unpacked(self.edges[at].1)))
    }

    /// The steps of a shortest path from the initial state to `state`.
    pub fn path_to(&self, mut state: u32) -> Vec<Step> {
        let mut steps = Vec::new();
        let mut depth = self.levels.partition_point(|&first| first <= state) - 1;
        while depth > 0 {
            let (parent, step) = self.parent(state, depth);
            steps.push(step);
            state = parent;
            depth -= 1;
        }
        steps.reverse();
        steps
    }

    /// The state that found `state` (at `depth`), and the step it took: the first state of the
    /// level before, in breadth-first order, with an edge to it, and its first such edge. The
    /// merge numbers a new state at its first edge, so that is the edge it was found by, as a
    /// parent pointer would have recorded it. The level before was expanded up to and past it.
    fn parent(&self, state: u32, depth: usize) -> (u32, Step) {
        let (from, to) = (self.levels[depth - 1], self.levels[depth].min(self.expanded() as u32));
        (from..to)
            .find_map(|s| self.out(s).find(|&(target, _)| target == state).map(|(_, step)| (s, step)))
            .expect("a state was found from the level before it")
    }

    /// The steps of a shortest path from the initial state that ends with `step` taken in `state`.
    pub fn path_through(&self, state: u32, step: Step) -> Vec<Step> {
        let mut steps = self.path_to(state);
        steps.push(step);
        steps
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
