//! Symmetry reduction is sound only if renaming clients commutes with every step: the renamed
//! state must offer the renamed steps and reach the renamed successors. These tests check that
//! on real states of the standard lock under faults, then check that reduced runs give the same
//! verdicts and equally short, replayable counterexamples.

use crate::common;
use common::reachable;
use zklab::check::properties::herd;
use zklab::check::{self, Options, Status};
use zklab::scenario::Scenario;
use zklab_model::{FaultBudget, FaultKind, Renaming, Step, World, WorldConfig};
use zklab_recipes::AnyRecipe;

fn world(recipe: &str, clients: usize, faults: &[FaultKind]) -> World<AnyRecipe> {
    let config = WorldConfig { faults: FaultBudget::once(faults), ..WorldConfig::default() };
    Scenario::new(recipe, clients, config).unwrap().world()
}

fn permutations(n: zklab_model::ClientId) -> Vec<Vec<zklab_model::ClientId>> {
    if n == 0 {
        return vec![vec![]];
    }
    let mut all = Vec::new();
    for rest in permutations(n - 1) {
        for at in 0..=rest.len() {
            let mut p = rest.clone();
            p.insert(at, n - 1);
            all.push(p);
        }
    }
    all
}

fn sorted(mut steps: Vec<Step>) -> Vec<Step> {
    steps.sort();
    steps
}

#[test]
fn renaming_clients_commutes_with_every_step() {
    let faults = [FaultKind::LossBeforeApply, FaultKind::LossAfterApply, FaultKind::Expire, FaultKind::Pause];
    let mut states = Vec::new();
    for recipe in ["standard", "parent-watch", "naive-blind-delete"] {
        states.extend(reachable(world(recipe, 3, &faults), 600));
    }
    let first = states[0].clients[0].session;
    let mut renamed_names = 0;
    for state in &states {
        for to in permutations(3) {
            let renaming = Renaming::new(to, first);
            let renamed = state.renamed(&renaming).expect("the standard lock supports renaming");
            let expected: Vec<Step> = state.steps().iter().map(|s| s.renamed_by(|c| renaming.client(c))).collect();
            assert_eq!(sorted(renamed.steps()), sorted(expected), "renamed state offers the renamed steps");
            for step in state.steps() {
                let mut next = state.clone();
                next.apply(step).unwrap();
                let mut renamed_next = renamed.clone();
                renamed_next.apply(step.renamed_by(|c| renaming.client(c))).unwrap();
                assert_eq!(next.renamed(&renaming).unwrap(), renamed_next, "step {step} under {renaming:?}");
            }
            renamed_names += usize::from(renamed.server.tree() != state.server.tree());
        }
    }
    assert!(states.len() >= 1500, "the states cover more than the first few steps");
    assert!(renamed_names > 1000, "lock nodes were renamed, not only client slots ({renamed_names})");
}

#[test]
fn a_representative_is_its_own_representative() {
    let init = world("standard", 3, &[FaultKind::LossAfterApply, FaultKind::Expire]);
    let mut moved = 0;
    for state in reachable(init, 1500) {
        let (representative, renaming) = state.canonical().unwrap();
        moved += usize::from(!renaming.is_identity());
        let (again, identity) = representative.canonical().unwrap();
        assert!(identity.is_identity());
        assert_eq!(again, representative);
    }
    assert!(moved > 100, "most states are not their own representative ({moved})");
}

fn explore(recipe: &str, clients: usize, faults: &[FaultKind], symmetry: bool) -> check::Outcome {
    check::explore(
        world(recipe, clients, faults),
        &Options { symmetry, stop_at_violation: false, ..Options::default() },
    )
}

#[test]
fn reduced_runs_prove_what_full_runs_prove_with_fewer_states() {
    let faults = [FaultKind::Expire];
    let full = explore("standard", 3, &faults, false);
    let reduced = explore("standard", 3, &faults, true);
    assert!(reduced.symmetric && !full.symmetric);
    for v in &full.verdicts {
        assert_eq!(v.status, Status::Holds, "{}", v.name());
        assert_eq!(reduced.status(v.property), Some(Status::Holds), "{}", v.name());
    }
    // Three interchangeable clients: close to 3! = 6 states per class.
    let ratio = full.unique_states as f64 / reduced.unique_states as f64;
    assert!(ratio > 5.0, "{} full states, {} classes", full.unique_states, reduced.unique_states);
}

#[test]
fn reduced_counterexamples_are_as_short_and_replay_in_client_numbering() {
    for (recipe, clients, faults, property) in [
        ("blind-retry", 2, vec![FaultKind::LossAfterApply], "no_orphans"),
        ("blind-retry", 3, vec![FaultKind::LossAfterApply], "eventual_acquire"),
        ("wait-on-null", 3, vec![], "eventual_acquire"),
        ("naive-blind-delete", 3, vec![FaultKind::LossAfterApply], "belief_exclusion"),
        ("standard", 2, vec![FaultKind::Expire, FaultKind::Pause], "belief_exclusion"),
        ("naive", 3, vec![], "no_herd"),
        ("parent-watch", 3, vec![], "no_herd"),
    ] {
        let full = explore(recipe, clients, &faults, false);
        let reduced = explore(recipe, clients, &faults, true);
        assert!(reduced.symmetric, "{recipe}: no cycle to send it back to the full graph");
        let cx = |o: &check::Outcome| o.verdicts.iter().find(|v| v.name() == property).unwrap().counterexample.clone();
        let (full_cx, reduced_cx) = (cx(&full).unwrap(), cx(&reduced).unwrap());
        assert_eq!(full_cx.steps.len(), reduced_cx.steps.len(), "{recipe} {property}: equally short");
        let mut replay = world(recipe, clients, &faults);
        let mut before = replay.clone();
        for step in &reduced_cx.steps {
            before = replay.clone();
            replay.apply(*step).unwrap_or_else(|e| panic!("{recipe}: {e}"));
        }
        let last = *reduced_cx.steps.last().expect("a step");
        let violated = match property {
            "no_herd" => herd(&before, last, &replay).len() >= 2,
            "no_orphans" => replay.quiescent() && !replay.no_orphans(),
            "belief_exclusion" => !replay.belief_exclusion(),
            _ => replay.waiting_mask() != 0 && replay.steps().iter().all(|s| s.is_fault()),
        };
        assert!(violated, "{recipe}: the replayed trace ends in a state violating {property}");
    }
}
