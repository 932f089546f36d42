//! A second opinion on the graph pass, which the checker trusts for every verdict: stateright's
//! own depth-first checker explores the same model (`WorldModel`, the same steps and the same
//! symmetry representatives) and must find as many states and the same safety and
//! reachability verdicts. Liveness is ours alone (stateright's `eventually` misses cycles), and
//! so are transition properties (stateright's properties are predicates of one state).

use super::bfs::Reduction;
use super::model::WorldModel;
use super::properties::{Def, Kind};
use super::{representative, Options, Status, Verdict};
use serde::Serialize;
use stateright::{Checker, Model};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use zklab_model::{Recipe, World};

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CrossCheck {
    pub stateright_unique_states: usize,
    /// What stateright found differently, one line each; empty when it agrees.
    pub disagreements: Vec<String>,
}

impl CrossCheck {
    pub fn agrees(&self) -> bool {
        self.disagreements.is_empty()
    }
}

/// Whether stateright can judge a property of this kind: states, not the steps between them.
fn judged_by_stateright(kind: Kind) -> bool {
    matches!(kind, Kind::Safety | Kind::Reached)
}

/// Runs stateright on `init` and compares its answer with the graph pass's `unique` states and
/// `verdicts`.
pub fn run<R: Recipe>(
    init: &World<R>,
    defs: &[Def<R>],
    reduction: Reduction,
    options: &Options,
    unique: usize,
    verdicts: &[Verdict],
) -> CrossCheck {
    let judged: Vec<Def<R>> = defs.iter().copied().filter(|d| judged_by_stateright(d.kind)).collect();
    let model = WorldModel { init: init.clone(), defs: judged.clone(), stop: Arc::new(AtomicBool::new(false)) };
    let mut builder = model.checker().threads(options.threads);
    if reduction.symmetry {
        builder = builder.symmetry_fn(representative::<R>);
    }
    let checker = builder.spawn_dfs().join();
    let found = checker.discoveries();
    let stateright_unique_states = checker.unique_state_count();
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
    for verdict in verdicts.iter().filter(|v| judged_by_stateright(v.kind)) {
        let ours = match verdict.kind {
            Kind::Safety => verdict.status == Status::Violated,
            _ => verdict.status == Status::Holds,
        };
        let theirs = found.contains_key(verdict.name);
        if ours != theirs {
            let said = |found: bool| match (verdict.kind, found) {
                (Kind::Safety, true) => "violated",
                (Kind::Safety, false) => "holds",
                (_, true) => "reached",
                (_, false) => "never reached",
            };
            disagreements.push(format!(
                "{}: stateright says {}, the graph pass {}",
                verdict.name,
                said(theirs),
                said(ours)
            ));
        }
    }
    CrossCheck { stateright_unique_states, disagreements }
}
