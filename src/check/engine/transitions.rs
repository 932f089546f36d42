//! The steps the graph pass has taken, memoized on the parts of the state they read. A state
//! is a shell and its clients (see `intern`), and a run meets few of each: at four clients of
//! the standard lock under loss-after-apply and expire, 587,386 states are made of 3,626 shells
//! and 1,820 clients, and 1,243,342 steps taken from them are 88,837 distinct (shell, client,
//! step) triples. What a client's step does depends on that triple alone, so it is worked out
//! once, filed by number, and every later step of the triple stands for its successor by the
//! numbers of its parts, put together into a world only where one is needed.
//!
//! **What a step reads.** A client `i`'s step (`World::apply`) reads and writes its client and
//! the rest of the world without its clients (the shell: the server, the fault counts, the
//! resource, the grants, the coverage, and which client each session belongs to). It reads no
//! other client but to route a watch notification to it (`World::route`), which reads that
//! client's session, connection and crash and writes its inbound queue and its library's
//! watches. Whether a step is enabled reads the same (`World::enabled`, the fault steps'
//! `*_enabled`). A server event reads and writes the shell and routes notifications. So a step
//! that addresses no notification to another client (`StepOutputs::notified_another`) leaves
//! the other clients as they are and does to its own client and the shell what it does to them
//! in any state with the same shell and the same client at that index: its successor is that
//! state with the shell and the client replaced by what the step made of them, and it leaves
//! the same `StepOutputs` (the notifications routed, all to its own client, a refused reply,
//! a revival, the delete-before-watch race). A step that does address another client is not
//! filed: it is taken in full every time.
//!
//! What the pass asks of a step besides its successor is filed with it, being read off the same
//! values: whether partial order may take it alone (`World::invisible` reads the step's client
//! before and after, the shell before and after, what the step left, and whether the other
//! clients are as they were, which they are), which transition properties it violates
//! (`Property::allows`: the herd reads what the step left and the clients it notified, only its
//! own) and which `reached:*` items it meets (read off what it left: `Property::met_on_steps`).
//!
//! **Why a filed step is exact.** A part's number stands for one value (`intern`: equal parts,
//! one number, up to the digest collisions the run's bound counts), so the key names the
//! values the step reads, and the entry the values it made, as `apply` made them the first
//! time. Put back together (`Shell::after_step`), the successor equals the one `apply` makes,
//! with the same parts shared. Which thread filed an entry first changes nothing but which of
//! two equal copies is kept, which no answer depends on.

use super::intern::{Interner, Number, Packed};
use crate::check::search::{judge_met, judge_step};
use rustc_hash::FxHashMap;
use std::hash::BuildHasher;
use std::sync::Mutex;
use zklab_model::world::StepOutputs;
use zklab_model::{Property, Recipe, Step, World};

/// Shards of the table, so that the expanding threads rarely wait for one another.
const SHARDS: usize = 64;

/// A step taken from a state: its shell, its client (`u32::MAX` for a server event, which has
/// none) and that client's number, and the step (packed).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct Taken {
    shell: Number,
    index: u32,
    client: Number,
    step: u32,
}

/// What a filed step made and what the pass asks of it.
#[derive(Clone)]
pub(in crate::check) struct Made {
    shell: Number,
    client: Number,
    /// What the step left beside the state; `None` when nothing (most steps).
    outputs: Option<Box<StepOutputs>>,
    /// Whether partial order may take the step alone, were it a local candidate (asked of
    /// receives and reconnects only).
    pub(in crate::check) invisible: bool,
    /// Bit `i` set: the step violates the transition property `properties[i]` (`judge_step`).
    pub(in crate::check) broken: u64,
    /// Bit `i` set: the step meets the `reached:*` item `properties[i]` (`judge_met`).
    pub(in crate::check) met: u64,
}

impl Made {
    /// Whether the step could make a forgotten watch's name again (`World::revived`).
    pub(in crate::check) fn revives(&self) -> bool {
        self.outputs.as_ref().is_some_and(|outputs| outputs.revived().is_some())
    }
}

pub(in crate::check) struct Transitions {
    shards: Vec<Mutex<FxHashMap<Taken, Made>>>,
}

/// A successor as `Transitions::successor` made it.
#[derive(Clone)]
pub(in crate::check) enum Next<R> {
    /// Filed: the numbers of its parts and what the step made.
    Filed(Packed, Made),
    /// Taken in full (a step that addressed another client): the world, whose changed clients
    /// are not filed.
    Taken(Box<World<R>>),
}

impl<R: Recipe> Next<R> {
    /// The world this successor stands for, from `from`, the state the step was taken from.
    pub(in crate::check) fn world(self, interner: &Interner<R>, from: &World<R>, step: Step) -> World<R> {
        let (numbers, made) = match self {
            Next::Filed(numbers, made) => (numbers, made),
            Next::Taken(world) => return *world,
        };
        let index = step.client().map(|i| i as usize);
        let clients = (0..from.clients.len())
            .map(|j| match index == Some(j) {
                true => interner.client(numbers.clients()[j]),
                false => from.clients.shared(j).expect("one number a client").clone(),
            })
            .collect();
        interner.shell(made.shell).after_step(clients, made.outputs.as_deref().unwrap_or(&StepOutputs::default()))
    }
}

impl Transitions {
    pub(in crate::check) fn new() -> Self {
        Transitions { shards: (0..SHARDS).map(|_| Mutex::default()).collect() }
    }

    /// The successor `step` leads to from `world`, which the pass keeps as `packed`, judged on
    /// `properties`: what the same step made in an earlier state with the same shell and
    /// client, or the step taken, and filed if it may be.
    pub(in crate::check) fn successor<R: Recipe>(
        &self,
        interner: &Interner<R>,
        world: &World<R>,
        packed: &Packed,
        step: Step,
        properties: &[Property],
    ) -> Next<R> {
        let index = step.client();
        let client = index.map_or(0, |i| packed.clients()[i as usize]);
        let taken = Taken { shell: packed.shell(), index: index.unwrap_or(u32::MAX), client, step: step.packed() };
        let shard = &self.shards[rustc_hash::FxBuildHasher.hash_one(taken) as usize % SHARDS];
        let filed = shard.lock().expect("no thread panics holding it").get(&taken).cloned();
        if let Some(made) = filed {
            let numbers = packed.moved(made.shell, index.map(|i| (i as usize, made.client)));
            return Next::Filed(numbers, made);
        }
        let mut next = world.clone();
        next.apply(step).expect("listed steps are enabled");
        if next.step_outputs().notified_another() {
            return Next::Taken(Box::new(next));
        }
        let numbers = interner.file(&mut next, world, packed);
        let outputs = next.step_outputs();
        let made = Made {
            shell: numbers.shell(),
            client: index.map_or(0, |i| numbers.clients()[i as usize]),
            outputs: (*outputs != StepOutputs::default()).then(|| Box::new(outputs.clone())),
            invisible: matches!(step, Step::Receive(_) | Step::Reconnect(_)) && world.invisible(step, &next),
            broken: judge_step(world, step, &next, properties),
            met: judge_met(&next, properties),
        };
        shard.lock().expect("no thread panics holding it").entry(taken).or_insert_with(|| made.clone());
        Next::Filed(numbers, made)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Scenario;
    use zklab_model::{FaultBudget, FaultKind, WorldConfig};

    /// Every step of 20,000 states of the standard lock under loss-after-apply and
    /// expire, asked of the memo and taken in full: a step put together from what an earlier
    /// state with the same shell and client made is the successor `apply` makes, with what the
    /// pass reads off it, and most are put together so.
    #[test]
    fn a_step_put_together_from_the_memo_is_the_step_taken() {
        let config = WorldConfig {
            faults: FaultBudget::once(&[FaultKind::LossAfterApply, FaultKind::Expire]),
            ..WorldConfig::default()
        };
        let init = Scenario::new("standard", 3, config).unwrap().world();
        let properties = Property::all();
        let (interner, transitions) = (Interner::new(), Transitions::new());
        let mut frontier = std::collections::VecDeque::from([interner.pack_first(init)]);
        let mut seen = std::collections::HashSet::new();
        let (mut filed, mut taken) = (0, 0);
        // The (shell, client, step) triples met: a filed step met again is put together.
        let mut triples = std::collections::HashSet::new();
        while let Some(packed) = frontier.pop_front() {
            if seen.len() >= 20_000 {
                break;
            }
            if !seen.insert(packed.numbers().to_vec()) {
                continue;
            }
            let world = interner.unpack(&packed);
            for step in world.steps() {
                let mut direct = world.clone();
                direct.apply(step).unwrap();
                let next = transitions.successor(&interner, &world, &packed, step, &properties);
                if let Next::Filed(numbers, made) = &next {
                    filed += 1;
                    let client = step.client().map(|i| packed.clients()[i as usize]);
                    triples.insert((packed.shell(), step.client(), client, step.packed()));
                    assert_eq!(made.broken, judge_step(&world, step, &direct, &properties), "{step}");
                    assert_eq!(made.met, judge_met(&direct, &properties), "{step}");
                    if matches!(step, Step::Receive(_) | Step::Reconnect(_)) {
                        assert_eq!(made.invisible, world.invisible(step, &direct), "{step}");
                    }
                    assert!(interner.unpack(numbers) == direct, "its numbers are the successor's: {step}");
                    frontier.push_back(numbers.clone());
                } else {
                    taken += 1;
                }
                let put_together = next.world(&interner, &world, step);
                assert!(put_together == direct, "the successor `apply` makes: {step}");
                assert_eq!(put_together.step_outputs(), direct.step_outputs(), "what it left: {step}");
            }
        }
        assert!(seen.len() >= 20_000, "enough states: {}", seen.len());
        assert!(taken > 0, "steps that notify another client are taken in full");
        assert!(filed > 10 * taken, "most steps are filed: {filed} against {taken}");
        assert!(filed > 3 * triples.len(), "most are put together: {filed} steps, {} triples", triples.len());
    }
}
