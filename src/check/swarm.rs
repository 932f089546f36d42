//! A bounded search for worlds too big to exhaust: a swarm of seeded random walks (as in Spin's
//! swarm verification). Each walk starts from the initial world and takes one enabled step at a
//! time, chosen by its own ChaCha8 stream, until no step is enabled or it is `depth` steps
//! long; every state is judged as the exhaustive search judges it (each safety property, each
//! `reached:*` item, a waiting client with nothing but faults enabled) and every step by the
//! transition properties. What it reports:
//! - a violation, with the shortest walk prefix that shows it (a real run, replayable; not
//!   necessarily the shortest run there is);
//! - a `reached:*` item that happened;
//! - and `unknown` for everything else: a swarm never says "holds", and its report is always
//!   bounded. Starving cycles are not looked for (a walk cannot tell a fair cycle).
//!
//! Coverage: the distinct states the walks met (settled as the exhaustive search keeps them, so
//! the count compares with the count of `--no-partial-order`, which keeps every interleaving),
//! and the Good–Turing estimate of how likely the next visit is to meet a new state (states met
//! exactly once, over all visits). It is a heuristic: visits along one walk are not independent
//! draws (every walk starts at the initial state, and a walk circling a short cycle repeats
//! itself), so a low value can still leave much unmet, and it says nothing of states such walks
//! almost never reach.
//!
//! Walks are independent, so threads split them and the result is combined in walk order: the
//! same seed gives the same report on any number of threads, unless a budget cuts it short.

use super::engine::index::fingerprint;
use super::properties::{Kind, Property};
use super::search::{deadlocked, resident_mib, Budget, Counterexample, Spent};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rustc_hash::FxHashMap;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};
use zklab_model::{Recipe, Settle, Step, World};

/// How the swarm searches.
#[derive(Clone, Copy, Debug)]
pub struct Swarm {
    /// The first walk's number (0, or where a shard's part begins: `--shard`).
    pub first_walk: u64,
    pub walks: u64,
    /// The longest walk, in steps.
    pub depth: usize,
    pub seed: u64,
    pub threads: usize,
    /// Checked between rounds of walks, its state limit counting visits, and every
    /// `BUDGET_EVERY` steps inside a walk (time, memory, Ctrl-C: a long walk is cut short too). A
    /// report cut by it depends on the thread count.
    pub budget: Budget,
    /// Told once a second, between rounds, how many walks are done and what they met.
    pub progress: Option<crate::progress::Progress>,
}

/// What a swarm covered.
#[derive(Clone, Debug, Serialize)]
pub struct SwarmCoverage {
    /// Walks taken (fewer than asked when a budget ran out), numbered from `first_walk`.
    pub walks: u64,
    pub first_walk: u64,
    pub seed: u64,
    pub depth: usize,
    /// Distinct settled states met.
    pub distinct_states: usize,
    /// States visited, repeats included.
    pub visits: u64,
    /// The Good–Turing estimate that the next visit meets a new state: states met exactly once,
    /// over all visits.
    pub chance_next_is_new: f64,
    /// The walk that gave each broken property's counterexample.
    pub counterexample_walks: BTreeMap<&'static str, u64>,
}

/// What one walk found: for each property the step count at which it first broke (with the
/// steps), the `reached:*` items, every settled state's fingerprint it met, and the budget
/// that cut it short, if one did.
struct Walk {
    broken: BTreeMap<Property, Vec<Step>>,
    reached: BTreeSet<Property>,
    met: Vec<u128>,
    cut: Option<Spent>,
}

/// How many steps a walk takes between two looks at the budget.
const BUDGET_EVERY: usize = 4096;

/// About how many states a round of walks may keep at once (16 bytes each): long walks go a
/// few at a time so that a round's memory stays near 64 MiB whatever `--walk-depth` is.
const ROUND_VISITS: usize = 1 << 22;

/// The verdicts a swarm gives (`Violated`, `Holds` for a reached item, else `Unknown`) with
/// counterexamples, and its coverage.
pub struct Found {
    /// Each broken property's shortest counterexample, and the walk that gave it.
    pub broken: BTreeMap<Property, (u64, Vec<Step>)>,
    pub reached: BTreeSet<Property>,
    pub coverage: SwarmCoverage,
    pub longest: usize,
    /// The budget that stopped the swarm before its last walk, if one did.
    pub spent: Option<Spent>,
}

/// The fingerprint of `world` settled, as the exhaustive search keeps it.
fn settled_fingerprint<R: Recipe>(world: &World<R>) -> u128 {
    let mut settled = world.clone();
    settled.settle(Settle::Renumbering).ok();
    fingerprint(&settled)
}

/// One walk from `init` of at most `depth` steps, its steps drawn from the stream numbered
/// `walk` of `seed` (a shorter depth walks a prefix of the same walk).
fn walk<R: Recipe>(init: &World<R>, properties: &[Property], swarm: &Swarm, walk: u64, depth: usize) -> Walk {
    let mut rng = ChaCha8Rng::seed_from_u64(swarm.seed);
    rng.set_stream(walk);
    let mut found = Walk { broken: BTreeMap::new(), reached: BTreeSet::new(), met: Vec::new(), cut: None };
    let mut world = init.clone();
    let mut path = Vec::new();
    let mut steps = Vec::new();
    loop {
        found.met.push(settled_fingerprint(&world));
        for &property in properties {
            match property.kind() {
                Kind::Safety if !property.holds(&world) => {
                    found.broken.entry(property).or_insert_with(|| path.clone());
                }
                Kind::Reached if property.holds(&world) => {
                    found.reached.insert(property);
                }
                _ => {}
            }
        }
        steps.clear();
        world.steps_into(&mut steps);
        if deadlocked(world.waiting_mask(), steps.iter().copied()) && properties.contains(&Property::EventualAcquire) {
            found.broken.entry(Property::EventualAcquire).or_insert_with(|| path.clone());
        }
        if steps.is_empty() {
            return found;
        }
        if path.len() == depth {
            // Cut short by the state bound (see `run`), not at the walk's own depth.
            if depth < swarm.depth {
                found.cut = Some(Spent::States);
            }
            return found;
        }
        if path.len() % BUDGET_EVERY == BUDGET_EVERY - 1 {
            // Not the state limit (it counts the round's visits): time, memory, Ctrl-C.
            found.cut = swarm.budget.spent(0);
            if found.cut.is_some() {
                return found;
            }
        }
        let step = steps[rng.random_range(0..steps.len())];
        let before = world.clone();
        world.apply(step).expect("listed steps are enabled");
        path.push(step);
        for &property in properties.iter().filter(|p| p.kind() == Kind::Transition) {
            if !property.allows(&before, step, &world) {
                found.broken.entry(property).or_insert_with(|| path.clone());
            }
        }
    }
}

/// Runs the swarm from `init`, judging `properties`.
pub fn run<R: Recipe>(init: &World<R>, properties: &[Property], swarm: &Swarm) -> Found {
    let mut broken: BTreeMap<Property, (u64, Vec<Step>)> = BTreeMap::new();
    let mut reached = BTreeSet::new();
    let mut seen: FxHashMap<u128, u32> = FxHashMap::default();
    let (mut walks, mut visits, mut longest) = (0u64, 0u64, 0usize);
    let mut spent = None;
    // Rounds of walks, split across the threads and combined in walk order (so the round's
    // size does not change the report).
    let per_thread = (ROUND_VISITS / swarm.depth.max(1)).clamp(1, 64);
    let per_round = (swarm.threads.max(1) * per_thread) as u64;
    let (started, mut last) = (Instant::now(), Instant::now());
    while walks < swarm.walks && spent.is_none() {
        if let Some(say) = swarm.progress.filter(|_| last.elapsed() >= Duration::from_secs(1)) {
            last = Instant::now();
            say(&format!(
                "{:>6.1}s  {walks} of {} walks, {} distinct states in {visits} visits, {} properties broken",
                started.elapsed().as_secs_f64(),
                swarm.walks,
                seen.len(),
                broken.len()
            ));
        }
        spent = swarm.budget.spent(visits as usize);
        if spent.is_some() {
            break;
        }
        // The state bound is met exactly: a round holds no more walks than the states left
        // allow (each visits at most depth + 1), and when fewer are left than one walk visits,
        // one walk goes as far as they allow.
        let room = (swarm.budget.max_states as u64).saturating_sub(visits);
        let per_walk = swarm.depth as u64 + 1;
        let round_walks = per_round.min((room / per_walk).max(1));
        let depth = match room < per_walk {
            true => room.saturating_sub(1) as usize,
            false => swarm.depth,
        };
        let round: Vec<u64> =
            (swarm.first_walk + walks..swarm.first_walk + (walks + round_walks).min(swarm.walks)).collect();
        let parts: Vec<&[u64]> = round.chunks(round.len().div_ceil(swarm.threads.max(1))).collect();
        let results: Vec<Vec<(u64, Walk)>> = std::thread::scope(|scope| {
            let handles: Vec<_> = parts
                .iter()
                .map(|part| {
                    scope.spawn(move || {
                        part.iter().map(|&w| (w, walk(init, properties, swarm, w, depth))).collect::<Vec<_>>()
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().expect("a walk does not panic")).collect()
        });
        let incoming: usize = results.iter().flatten().map(|(_, w)| w.met.len()).sum();
        let out_of_room = table_would_outgrow(&seen, incoming, &swarm.budget);
        for (number, found) in results.into_iter().flatten() {
            if out_of_room {
                // What the round broke and reached is kept (facts, and small); its coverage is
                // not counted, its states not stored.
                spent = Some(Spent::Memory);
                reached.extend(found.reached);
                keep_shortest(&mut broken, number, found.broken);
                continue;
            }
            walks += 1;
            spent = spent.or(found.cut);
            visits += found.met.len() as u64;
            longest = longest.max(found.met.len() - 1);
            for fingerprint in found.met {
                *seen.entry(fingerprint).or_default() += 1;
            }
            reached.extend(found.reached);
            keep_shortest(&mut broken, number, found.broken);
        }
    }
    let once = seen.values().filter(|&&n| n == 1).count();
    let coverage = SwarmCoverage {
        walks,
        first_walk: swarm.first_walk,
        seed: swarm.seed,
        depth: swarm.depth,
        distinct_states: seen.len(),
        visits,
        chance_next_is_new: once as f64 / visits.max(1) as f64,
        counterexample_walks: broken.iter().map(|(p, (walk, _))| (p.name(), *walk)).collect(),
    };
    Found { broken, reached, coverage, longest, spent }
}

/// Adds walk `number`'s broken properties to `broken`, keeping the shorter path of two (the
/// earlier walk's on a tie: walks are merged in order).
fn keep_shortest(broken: &mut BTreeMap<Property, (u64, Vec<Step>)>, number: u64, found: BTreeMap<Property, Vec<Step>>) {
    for (property, steps) in found {
        if broken.get(&property).is_none_or(|(_, known)| steps.len() < known.len()) {
            broken.insert(property, (number, steps));
        }
    }
}

/// Whether storing `incoming` more states would make `seen` grow its table past the memory
/// budget. A table grows by doubling, and the old one is freed only once the new one is
/// filled: checked after the fact (as between rounds), one doubling overshoots the budget by
/// up to twice the table, so the swarm looks before it grows.
fn table_would_outgrow(seen: &FxHashMap<u128, u32>, incoming: usize, budget: &Budget) -> bool {
    let Some(max) = budget.max_memory_mib else { return false };
    if seen.len() + incoming <= seen.capacity() {
        return false;
    }
    // The next table: twice the room, at up to 40 bytes a slot (key, count, control, load).
    let next_mib = ((seen.len() + incoming).max(seen.capacity()) as u64 * 2 * 40) >> 20;
    resident_mib().is_some_and(|rss| rss + next_mib > max)
}

/// The swarm's counterexample for `property`, if it broke it.
pub fn counterexample(found: &Found, property: Property) -> Option<Counterexample> {
    found.broken.get(&property).map(|(_, steps)| Counterexample { steps: steps.clone(), cycle_start: None })
}
