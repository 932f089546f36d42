//! Every trace kept in traces/ is re-checked: replaying it reproduces its verdict, and checking
//! its scenario again produces the same trace byte for byte (still the shortest, still
//! deterministic). A trace that stops matching is a change in the model or a recipe to explain.

use std::path::Path;
use zklab::check::{self, Options, Status};
use zklab::trace::Trace;

fn kept_traces() -> Vec<std::path::PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("traces");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("traces/ exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
}

#[test]
fn traces_directory_holds_a_trace_for_each_broken_recipe() {
    let files = kept_traces();
    for entry in zklab_recipes::CATALOGUE.iter().filter(|e| e.flaw.is_some()) {
        for property in entry.flaw.as_ref().unwrap().breaks {
            let case = zklab::suite::CASES
                .iter()
                .find(|c| c.recipe.split(',').any(|r| r == entry.name))
                .expect("a suite case");
            let name =
                format!("{}-n{}-{property}.json", case.scenario().recipe_label().replace(',', "+"), case.clients);
            assert!(files.iter().any(|f| f.ends_with(&name)), "traces/{name} is kept");
        }
    }
    assert!(files.iter().any(|f| f.ends_with("standard-n2-belief_exclusion.json")), "holder-outlives-session");
}

#[test]
fn every_kept_trace_replays_to_its_verdict() {
    for file in kept_traces() {
        let trace = Trace::load(&file).unwrap_or_else(|e| panic!("{e}"));
        trace.replay().unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    }
}

#[test]
fn every_kept_trace_is_what_the_checker_finds_today() {
    for file in kept_traces() {
        let kept = std::fs::read_to_string(&file).unwrap();
        let trace = Trace::load(&file).unwrap();
        let report =
            check::run(&trace.scenario, &Options { threads: 1, stop_at_violation: false, ..Options::default() });
        let found = report.properties.iter().find(|p| p.name == trace.verdict.property.name()).unwrap();
        assert_eq!(found.status, Status::Violated, "{}", file.display());
        let fresh = found.trace.as_ref().unwrap().to_json();
        assert_eq!(
            fresh,
            kept,
            "{} differs from a fresh check (regenerate with `zklab suite --trace-dir traces`)",
            file.display()
        );
    }
}

#[test]
fn a_lasso_that_neglects_a_step_enabled_all_along_it_is_refused() {
    // The kept livelock is weakly fair: every fault-free step enabled all along its cycle is
    // taken on it. Leave any such step out of the steps taken and the cycle is one no fair run
    // goes round forever, which replay refuses.
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("traces/leader-latch-644-n2-eventual_acquire.json");
    let trace = Trace::load(&file).unwrap();
    trace.replay().unwrap();
    let start = trace.verdict.cycle_start.expect("a lasso");
    let worlds = trace.worlds().unwrap();
    let (cycle, steps) = (&worlds[start..], &trace.steps[start..]);
    assert!(zklab::trace::neglected(cycle, steps).is_empty());
    assert!(!zklab::trace::starving(cycle).is_empty());
    let always: Vec<_> = steps.iter().filter(|s| cycle.iter().all(|w| w.enabled(**s))).collect();
    assert!(!always.is_empty(), "some step is enabled all along the cycle");
    for required in always {
        let without: Vec<_> = steps.iter().copied().filter(|s| s != required).collect();
        assert_eq!(zklab::trace::neglected(cycle, &without), vec![*required]);
    }
}
