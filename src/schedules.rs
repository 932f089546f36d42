//! Searching for failure schedules with proptest: random lists of timed faults for a small
//! world, each run by the simulator; the first list that breaks a property is shrunk (fewer
//! faults, earlier, on lower-numbered clients) to a minimal schedule, which is kept as a file
//! that `zklab simulate --schedule` replays.

use crate::budget::{Budget, Spent};
use crate::progress::Progress;
use crate::scenario::{BadInput, Scenario};
use crate::simulate::{run_within, RunReport};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner};
use std::cell::Cell;
use std::time::{Duration, Instant};
use zklab_model::{ClientId, FaultKind};
use zklab_sim::{SimConfig, TimedFault};

/// A shrunk schedule and the run it breaks.
pub struct Found {
    pub faults: Vec<TimedFault>,
    pub report: RunReport,
    /// Schedules run before the first failure, and runs spent shrinking it.
    pub tried: u32,
    pub shrink_runs: u32,
}

/// What a search came to: the shrunk schedule that breaks a property, or none among the
/// schedules tried; `stopped` when Ctrl-C (or SIGTERM) or a budget stopped it early: then
/// `tried` is fewer than asked, and a schedule found is shrunk only as far as it got.
pub struct Searched {
    pub found: Option<Found>,
    pub tried: u32,
    pub stopped: Option<Spent>,
    /// Schedules whose run ended with a client waiting and no deadlock (no verdict), and the
    /// first one's reason: a search with any passes nothing.
    pub undecided: (u32, Option<String>),
}

/// Tries `cases` random schedules of up to `max_faults` faults of `kinds`, within the chaos
/// phase, on `base` (whose own fault rates are ignored), within `budget`, saying to `progress`
/// once a second how many it tried (and, once one failed, how many shrinking runs).
pub fn search(
    scenario: &Scenario,
    base: &SimConfig,
    kinds: &[FaultKind],
    (cases, max_faults): (u32, usize),
    progress: Option<Progress>,
    budget: &Budget,
) -> Result<Searched, BadInput> {
    if kinds.is_empty() {
        return Err(BadInput("--search needs fault kinds to schedule (give --faults)".to_string()));
    }
    let clients = scenario.recipes.len() as ClientId;
    // Faults matter while the clients contend: twice the time their holds take one after the
    // other (and never past the chaos phase).
    let busy_us = (base.hold_us + base.think_us) * u64::from(base.world.rounds) * u64::from(clients) * 2;
    let window_ms = (base.chaos_us.min(busy_us) / 1000).max(1);
    let fault = (0..window_ms, proptest::sample::select(kinds.to_vec()), 0..clients)
        .prop_map(|(at_ms, fault, client)| TimedFault { at_ms, fault, client });
    let schedules = proptest::collection::vec(fault, 1..=max_faults.max(1));
    let config = Config { cases, failure_persistence: None, max_shrink_iters: 4096, ..Config::default() };
    let mut seed = [0u8; 32];
    seed[..8].copy_from_slice(&base.seed.to_le_bytes());
    let mut runner = TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &seed));
    let quiet = SimConfig { rates: Default::default(), ..base.clone() };
    let (tried, failed, shrink_runs) = (Cell::new(0u32), Cell::new(false), Cell::new(0u32));
    let undecided = std::cell::RefCell::new((0u32, None));
    let (started, last) = (Instant::now(), Cell::new(Instant::now()));
    let outcome = runner.run(&schedules, |faults| {
        // Stopped, every schedule left passes at once: the search ends, and a shrink keeps the
        // smallest failing schedule it had.
        if budget.spent(0).is_some() {
            return Ok(());
        }
        match failed.get() {
            true => shrink_runs.set(shrink_runs.get() + 1),
            false => tried.set(tried.get() + 1),
        }
        if let Some(say) = progress.filter(|_| last.get().elapsed() >= Duration::from_secs(1)) {
            last.set(Instant::now());
            let elapsed = started.elapsed().as_secs_f64();
            match failed.get() {
                false => say(&format!("{elapsed:>6.1}s  {} of {cases} schedules tried, none failed yet", tried.get())),
                true => say(&format!(
                    "{elapsed:>6.1}s  schedule {} failed; {} shrinking runs so far",
                    tried.get(),
                    shrink_runs.get()
                )),
            }
        }
        let report = run_within(scenario, &SimConfig { schedule: sorted(faults), ..quiet.clone() }, None, budget);
        if report.verdict == crate::simulate::RunVerdict::Unknown && !failed.get() {
            let mut undecided = undecided.borrow_mut();
            undecided.0 += 1;
            undecided.1 = undecided.1.take().or(report.detail.clone());
        }
        match report.violated {
            Some(property) => {
                failed.set(true);
                Err(TestCaseError::fail(property))
            }
            None => Ok(()),
        }
    });
    let found = match outcome {
        Ok(()) => None,
        Err(TestError::Abort(why)) => return Err(BadInput(format!("the schedule search stopped: {why}"))),
        Err(TestError::Fail(_, minimal)) => {
            let faults = sorted(minimal);
            // Run to its end even after a signal: it is the answer.
            let report = crate::simulate::run_unstoppable(scenario, &SimConfig { schedule: faults.clone(), ..quiet });
            Some(Found { faults, report, tried: tried.get(), shrink_runs: shrink_runs.get() })
        }
    };
    Ok(Searched { found, tried: tried.get(), stopped: budget.spent(0), undecided: undecided.into_inner() })
}

fn sorted(mut faults: Vec<TimedFault>) -> Vec<TimedFault> {
    faults.sort();
    faults
}
