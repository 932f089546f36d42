//! A deliberately simple reference model checker ("oracle") for differential tests against the
//! production checker. It is written from the property definitions alone (quoted in the doc
//! comments of `properties.rs` and `liveness.rs`), shares no code with `src/check`, and calls
//! none of the production property code of `zklab_model::World`.
//!
//! - `graph.rs`: plain breadth-first search from `World::new(config, recipes)`; successors are
//!   every step of `World::steps()` applied to a clone with `World::apply` (never `settle`);
//!   worlds are told apart by full equality; every edge is kept.
//! - `properties.rs`: the state, step and path predicates.
//! - `liveness.rs`: `eventual_acquire`'s weakly fair cycles, by strongly connected components.
//!
//! A module of the integration tests' binary (`tests/integration.rs`), used as `crate::oracle`.
#![allow(dead_code, unused_imports)]

mod graph;
mod liveness;
pub mod properties;

use properties::{self as p, Ghost};
use std::collections::{BTreeMap, BTreeSet};
use zklab_model::{ClientId, Recipe, Step, World};

pub use properties::PROPERTIES;

/// What the oracle found.
#[derive(Clone, Debug)]
pub struct Oracle {
    /// False if `max_states` was hit: then no verdict below may be trusted (the violations
    /// found are real, but a property not in `violated` may still fail, and `reached` may miss
    /// items).
    pub complete: bool,
    /// The number of distinct `World` values reached.
    pub unique_worlds: usize,
    /// The number of search states (world and the ghost state of `fenced_exclusion` and
    /// `fencing_available`).
    pub search_states: usize,
    /// The creations remembered by the ghosts of all search states (see
    /// `graph::GHOST_ENTRIES_PER_STATE`: past 16 per allowed search state the run stops).
    pub ghost_entries: usize,
    /// Property name -> a shortest counterexample path (steps from the initial world). For a
    /// safety property the path ends in a violating state (for `fencing_available`, the state
    /// right after the refused access); for `no_herd` and
    /// `fenced_exclusion` its last step is the violating step; for `eventual_acquire` it ends in
    /// a deadlock if there is one, else it is the stem of the lasso in `lasso`.
    pub violated: BTreeMap<String, Vec<Step>>,
    /// Every `reached:*` item that happened in some reachable state.
    pub reached: BTreeSet<String>,
    /// For `eventual_acquire` found as a weakly fair cycle (whether or not there is also a
    /// deadlock): (steps, cycle_start), the steps being stem + cycle and `cycle_start` the stem's
    /// length.
    pub lasso: BTreeMap<String, (Vec<Step>, usize)>,
}

impl Oracle {
    /// A verdict in the manifest's words: a property is "violated", or "holds" in a complete
    /// run; a `reached:*` item "holds" if it happened, else is "vacuous" in a complete run;
    /// anything a bounded run could not decide is "unknown".
    pub fn status(&self, name: &str) -> &'static str {
        if name.starts_with("reached:") {
            return match (self.reached.contains(name), self.complete) {
                (true, _) => "holds",
                (false, true) => "vacuous",
                (false, false) => "unknown",
            };
        }
        match (self.violated.contains_key(name), self.complete) {
            (true, _) => "violated",
            (false, true) => "holds",
            (false, false) => "unknown",
        }
    }
}

/// Explores every world reachable from `init`, breadth-first, up to `max_states` search states
/// (and the ghosts' share of memory, see `graph::GHOST_ENTRIES_PER_STATE`), and judges every
/// property on what it explored.
pub fn check<R: Recipe>(init: World<R>, max_states: usize) -> Oracle {
    let g = graph::Graph::explore(init, max_states);
    let mut violated: BTreeMap<String, Vec<Step>> = BTreeMap::new();
    for (name, (state, step)) in &g.violations {
        let mut path = g.path(*state);
        path.extend(*step);
        violated.insert(name.clone(), path);
    }
    let mut lasso = BTreeMap::new();
    let starving = liveness::starvations(&g);
    let first = starving.iter().min_by_key(|s| (g.first_state[s.root as usize], s.client));
    if let Some(s) = first {
        let mut steps = s.stem.clone();
        steps.extend(s.cycle.iter().copied());
        lasso.insert(p::EVENTUAL_ACQUIRE.to_string(), (steps, s.stem.len()));
    }
    match (g.deadlock, first) {
        (Some(state), _) => {
            violated.insert(p::EVENTUAL_ACQUIRE.to_string(), g.path(state));
        }
        (None, Some(s)) => {
            violated.insert(p::EVENTUAL_ACQUIRE.to_string(), s.stem.clone());
        }
        (None, None) => {}
    }
    Oracle {
        complete: g.complete,
        unique_worlds: g.worlds.len(),
        search_states: g.states.len(),
        ghost_entries: g.ghost_entries,
        violated,
        reached: g.reached.clone(),
        lasso,
    }
}

/// Replays `steps` from `init` (each must be enabled) and says whether the state reached (or,
/// for `no_herd` and `fenced_exclusion`, the last step) violates `property` by the oracle's own
/// definitions. `fencing_available` is judged on the state reached with the path that reached
/// it: violated if any step of the path refused a holder ZooKeeper agreed with. For
/// `eventual_acquire` this judges a deadlock (the state reached has a waiting client and no
/// non-fault step enabled); a cycle is judged by `is_fair_lasso`.
pub fn replays_to_violation<R: Recipe>(init: &World<R>, steps: &[Step], property: &str) -> Result<(), String> {
    let mut world = init.clone();
    let mut ghost = Ghost::new(init.clients.len());
    let mut last: Option<(World<R>, Step, Option<String>)> = None;
    for (k, &step) in steps.iter().enumerate() {
        let before = world.clone();
        world.apply(step).map_err(|e| format!("step {k} ({step}): {e}"))?;
        let fence = ghost.advance(&before, step, &world);
        last = Some((before, step, fence));
    }
    let violated = match property {
        p::BELIEF_EXCLUSION => !p::belief_exclusion(&world),
        p::ZK_EXCLUSION => !p::zk_exclusion(&world),
        p::NO_ORPHANS => !p::no_orphans(&world),
        p::STALE_HOLDER => !p::stale_holder(&world),
        p::FENCING_AVAILABLE => ghost.refused_agreed,
        p::EVENTUAL_ACQUIRE => p::deadlock(&world),
        p::BARRIER_WAITS => !p::barrier_waits(&world),
        p::TAKEN_ONCE => {
            let (before, step, _) = last.as_ref().ok_or("taken_at_most_once is judged on a step: the path is empty")?;
            p::takes_again(before, *step)
        }
        p::NO_HERD => {
            let (before, step, _) = last.as_ref().ok_or("no_herd is judged on a step: the path is empty")?;
            p::herd(before, *step, &world).len() >= 2
        }
        p::FENCED_EXCLUSION => {
            let (_, _, fence) = last.as_ref().ok_or("fenced_exclusion is judged on an access: the path is empty")?;
            fence.is_some()
        }
        other => return Err(format!("the oracle judges no property `{other}`")),
    };
    match violated {
        true => Ok(()),
        false => Err(format!("{property} is not violated at the end of the {} steps", steps.len())),
    }
}

/// Checks that `steps` from `init` is a lasso: the world after all steps equals (full equality)
/// the world after the first `cycle_start` steps, the cycle (`steps[cycle_start..]`) has no fault
/// step, some client waits in at least one state of the cycle and holds in none of them, and the
/// cycle is weakly fair (every non-fault step enabled in every state of the cycle is taken
/// somewhere on the cycle). Returns which client starves (the first, if several do), or an
/// error saying what fails.
pub fn is_fair_lasso<R: Recipe>(init: &World<R>, steps: &[Step], cycle_start: usize) -> Result<ClientId, String> {
    if cycle_start >= steps.len() {
        return Err(format!("the cycle is empty (cycle_start {cycle_start}, {} steps)", steps.len()));
    }
    let mut worlds = vec![init.clone()];
    for (k, &step) in steps.iter().enumerate() {
        let mut next = worlds[k].clone();
        next.apply(step).map_err(|e| format!("step {k} ({step}): {e}"))?;
        worlds.push(next);
    }
    if worlds[steps.len()] != worlds[cycle_start] {
        return Err(format!("the world after all {} steps is not the world after {cycle_start}", steps.len()));
    }
    let cycle = &steps[cycle_start..];
    if let Some(fault) = cycle.iter().find(|s| s.is_fault()) {
        return Err(format!("the cycle takes a fault step ({fault})"));
    }
    // The states of the cycle: the worlds its steps start from (the last one ends where it began).
    let states = &worlds[cycle_start..steps.len()];
    let clients = init.clients.len();
    let starving = (0..clients)
        .find(|&c| states.iter().any(|w| p::waits(&w.clients[c])) && states.iter().all(|w| !p::holds(&w.clients[c])));
    let Some(c) = starving else {
        return Err("no client waits in some state of the cycle and holds in none".to_string());
    };
    let taken: BTreeSet<Step> = cycle.iter().copied().collect();
    let mut throughout: Option<BTreeSet<Step>> = None;
    for w in states {
        let here = p::non_fault(&w.steps());
        throughout = Some(match throughout {
            None => here,
            Some(t) => t.intersection(&here).copied().collect(),
        });
    }
    let untaken: Vec<String> = throughout.unwrap_or_default().difference(&taken).map(|s| s.to_string()).collect();
    if !untaken.is_empty() {
        return Err(format!("not weakly fair: enabled throughout the cycle and never taken: {}", untaken.join(", ")));
    }
    Ok(c as ClientId)
}
