//! `--cross-check`: a second opinion on the graph pass from stateright's own depth-first
//! checker. It explores the same model (`WorldModel`: the same `World`, the same steps, each
//! state settled and renumbered the same way, and under symmetry the same representatives) and
//! must find as many states and the same safety and reachability verdicts.
//!
//! What it checks is the graph pass itself (our breadth-first search, its parallel merge, its
//! fingerprint index, its verdict bookkeeping), not the model or the reductions the model does
//! (settling, renumbering, symmetry), which both sides share. Those are checked by the
//! differential test against the independent reference checker (`tests/differential.rs`).
//! Liveness and transition properties are ours alone: stateright's `eventually` misses cycles,
//! and its properties are predicates of one state.
//!
//! It runs within what is left of the run's budget (states and time); cut short, it says it did
//! not finish rather than agreeing.

use super::options::Options;
use super::properties::{Kind, Property};
use super::search::{Budget, Reduction};
use super::stateright_adapter::WorldModel;
use super::verdict::{Status, Verdict};
use serde::Serialize;
use stateright::{Checker, Model};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use zklab_model::{Recipe, World};

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CrossCheck {
    pub stateright_unique_states: usize,
    /// stateright explored everything before the budget ran out; otherwise nothing is compared.
    pub complete: bool,
    /// What stateright found differently, one line each; empty when it agrees.
    pub disagreements: Vec<String>,
}

impl CrossCheck {
    /// stateright finished and found the same.
    pub fn agrees(&self) -> bool {
        self.complete && self.disagreements.is_empty()
    }
}

/// Whether stateright can judge a property: of states, not of the steps between them.
fn judged_by_stateright(property: Property) -> bool {
    matches!(property.kind(), Kind::Safety | Kind::Reached) && !property.met_on_steps()
}

/// Runs stateright on `init` within `budget` and compares its answer with the graph pass's
/// `unique` states and `verdicts`.
pub fn run<R: Recipe>(
    init: &World<R>,
    properties: &[Property],
    reduction: Reduction,
    options: &Options,
    budget: Budget,
    unique: usize,
    verdicts: &[Verdict],
) -> CrossCheck {
    let judged: Vec<Property> = properties.iter().copied().filter(|p| judged_by_stateright(*p)).collect();
    let stop = Arc::new(AtomicBool::new(false));
    let model = WorldModel { init: init.clone(), properties: judged.clone(), stop: stop.clone() };
    let mut builder = model.checker().threads(options.threads);
    if reduction.symmetry {
        builder = builder.symmetry_fn(representative::<R>);
    }
    let checker = builder.spawn_dfs();
    // stateright 0.31 looks at its own timeout only when a thread runs out of work: the budget
    // is kept here, by telling the model to stop.
    while !checker.is_done() {
        if budget.exhausted(checker.unique_state_count()) {
            stop.store(true, Ordering::Relaxed);
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let checker = checker.join();
    let stateright_unique_states = checker.unique_state_count();
    let complete = !stop.load(Ordering::Relaxed);
    if !complete {
        return CrossCheck { stateright_unique_states, complete, disagreements: Vec::new() };
    }
    let found = checker.discoveries();
    let mut disagreements = Vec::new();
    // stateright stops once every property has a discovery, so only a full run counts states;
    // under symmetry it continues from concrete states and we from representatives, and the
    // representative of a class can depend on the member reached, so counts differ slightly;
    // stateright knows nothing of partial-order reduction.
    if !reduction.symmetry
        && !reduction.partial_order
        && found.len() < judged.len()
        && stateright_unique_states != unique
    {
        disagreements
            .push(format!("stateright found {stateright_unique_states} unique states, the graph pass {unique}"));
    }
    for verdict in verdicts.iter().filter(|v| judged_by_stateright(v.property)) {
        let ours = match verdict.kind() {
            Kind::Safety => verdict.status == Status::Violated,
            _ => verdict.status == Status::Holds,
        };
        let theirs = found.contains_key(verdict.name());
        if ours != theirs {
            let said = |found: bool| match (verdict.kind(), found) {
                (Kind::Safety, true) => "violated",
                (Kind::Safety, false) => "holds",
                (_, true) => "reached",
                (_, false) => "never reached",
            };
            disagreements.push(format!(
                "{}: stateright says {}, the graph pass {}",
                verdict.name(),
                said(theirs),
                said(ours)
            ));
        }
    }
    CrossCheck { stateright_unique_states, complete, disagreements }
}

/// stateright's view of symmetry: a state's representative.
fn representative<R: Recipe>(world: &World<R>) -> World<R> {
    world.canonical().map_or_else(|| world.clone(), |(representative, _)| representative)
}
