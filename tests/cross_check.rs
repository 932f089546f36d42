//! The graph pass decides every verdict, so it is checked against an independent explorer:
//! stateright's own depth-first checker on the same model must find as many states and the same
//! safety and reachability verdicts, for every recipe in the catalogue, flawed ones included.

use zklab::check::{self, Options};
use zklab::scenario::Scenario;
use zklab_model::{FaultBudget, FaultKind, WorldConfig};

fn cross_checked(recipe: &str, faults: &[FaultKind], symmetry: bool) -> check::Outcome {
    let config = WorldConfig { faults: FaultBudget::once(faults), ..WorldConfig::default() };
    let world = Scenario::new(recipe, 2, config).expect("catalogue recipes build").world();
    // Counts are compared on the full graph, which stateright explores.
    check::explore(
        world,
        &Options { cross_check: true, symmetry, partial_order: false, stop_at_violation: false, ..Options::default() },
    )
}

#[test]
fn stateright_agrees_on_every_recipe() {
    let faults = [FaultKind::LossAfterApply];
    for entry in zklab_recipes::CATALOGUE {
        let outcome = cross_checked(entry.name, &faults, false);
        let cross = outcome.cross_check.as_ref().expect("a complete run is cross-checked");
        assert!(cross.agrees(), "{}: {:?}", entry.name, cross.disagreements);
        assert!(cross.stateright_unique_states > 1, "{}: stateright explored nothing", entry.name);
    }
}

#[test]
fn stateright_agrees_under_symmetry_and_on_violations() {
    // blind-retry breaks exclusion here: stateright must find the same violations.
    for recipe in ["standard", "blind-retry"] {
        let outcome = cross_checked(recipe, &[FaultKind::LossAfterApply, FaultKind::Expire], true);
        let cross = outcome.cross_check.as_ref().expect("a complete run is cross-checked");
        assert!(cross.agrees(), "{recipe}: {:?}", cross.disagreements);
    }
    let violated = cross_checked("blind-retry", &[FaultKind::LossAfterApply], false);
    assert!(violated.verdicts.iter().any(|v| v.status == check::Status::Violated));
    assert!(violated.cross_check.expect("complete").agrees());
}

#[test]
fn the_cross_check_runs_within_the_budget_and_says_when_it_did_not_finish() {
    // stateright explores the graph again, so it is held to the run's budget: cut short, it
    // agrees with nothing, and the run's exit code says a budget ran out.
    let config = WorldConfig { faults: FaultBudget::once(&[FaultKind::LossAfterApply]), ..WorldConfig::default() };
    let world = Scenario::new("standard", 3, config).unwrap().world();
    let options = Options { partial_order: false, stop_at_violation: false, ..Options::default() };
    let outcome = check::explore(world.clone(), &options);
    assert!(!outcome.bounded);
    let properties = zklab_model::Property::applicable(&world);
    let reduction = check::search::Reduction { symmetry: false, partial_order: false, settle: true };
    let cross_check = |max_states: usize| {
        let budget = check::search::Budget {
            max_states,
            deadline: None,
            max_memory_mib: None,
            stop_at_violation: false,
            interrupt: None,
        };
        let (unique, verdicts) = (outcome.unique_states, &outcome.verdicts);
        check::cross_check::run(&world, &properties, reduction, &options, budget, unique, verdicts)
    };
    let cut = cross_check(100);
    assert!(!cut.complete && !cut.agrees() && cut.disagreements.is_empty(), "{cut:?}");
    assert!(cut.stateright_unique_states < outcome.unique_states);
    let full = cross_check(usize::MAX);
    assert!(full.complete && full.agrees(), "{full:?}");
    assert_eq!(full.stateright_unique_states, outcome.unique_states);
}
