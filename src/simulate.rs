//! `zklab simulate`: run the simulator for one seed or a sweep of seeds, judge every run, and
//! turn a violation into a replayable trace with the command that reproduces it.

use crate::budget::{Budget, Spent};
use crate::scenario::{BadInput, Scenario};
use crate::trace::{RunEnd, Trace};
use serde::Serialize;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use zklab_model::FaultKind;
use zklab_recipes::AnyRecipe;
use zklab_sim::{FaultRates, Herd, Metrics, SimConfig, SimOutcome};

/// Parses `--faults`: `kind[=rate]` separated by commas, `all` or `none`. A loss rate is a
/// probability per request; the other kinds are counts over the chaos phase.
pub fn parse_rates(list: &str) -> Result<FaultRates, BadInput> {
    let mut rates = FaultRates::default();
    for item in crate::scenario::fault_entries(list, "give it a rate or a count: `kind=3`")? {
        let (name, value) = match item.split_once('=') {
            Some((name, value)) => (name.trim(), Some(value.trim())),
            None => (item, None),
        };
        let kinds: Vec<FaultKind> = match name {
            "all" => FaultKind::ALL.into_iter().filter(|k| k.in_all()).collect(),
            "none" => Vec::new(),
            _ => vec![FaultKind::parse(name).ok_or_else(|| {
                let known: Vec<_> = FaultKind::ALL.iter().map(|k| k.name()).collect();
                BadInput(format!("unknown fault `{name}` (known: {}, all, none)", known.join(", ")))
            })?],
        };
        for kind in kinds {
            match value {
                None => rates.set_default(kind),
                Some(text) => {
                    let rate: f64 = text
                        .parse()
                        .ok()
                        .filter(|r: &f64| r.is_finite() && *r >= 0.0)
                        .ok_or_else(|| BadInput(format!("fault `{name}`: `{text}` is not a rate")))?;
                    if kind.strikes_a_request() && rate > 1.0 {
                        return Err(BadInput(format!("fault `{name}`: a loss rate is a probability, got {rate}")));
                    }
                    if !kind.strikes_a_request() && (rate.fract() != 0.0 || rate > 1_000_000.0) {
                        return Err(BadInput(format!("fault `{name}`: give a whole number of faults, got {rate}")));
                    }
                    rates.set(kind, rate);
                }
            }
        }
    }
    Ok(rates)
}

/// What one simulated run says, as its report names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RunVerdict {
    /// Ran to its end; every property judged held.
    Passed,
    /// A property broke: `RunReport::trace` replays to it.
    Violated,
    /// Clients still waited when the run's bound ran out, but the world was not deadlocked
    /// (`RunReport::detail` says who and why): the lock may only have been slow. No verdict.
    Unknown,
    /// Stopped by Ctrl-C before its end with nothing broken: no verdict.
    Interrupted,
    /// Stopped by a budget before its end with nothing broken (`bounded_by` says which).
    Bounded,
}

impl RunVerdict {
    /// Whether the run went to its end and was judged (`passed`, `violated` or `unknown`).
    pub fn ended(self) -> bool {
        matches!(self, RunVerdict::Passed | RunVerdict::Violated | RunVerdict::Unknown)
    }
}

/// One simulated run, judged.
#[derive(Clone, Debug, Serialize)]
pub struct RunReport {
    pub seed: u64,
    pub verdict: RunVerdict,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bounded_by: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub violated: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// The steps taken and their times, hashed (`zklab_sim::StepsHash`): equal hashes, equal
    /// runs.
    pub steps_hash: String,
    pub metrics: Metrics,
    pub herd: Herd,
    #[serde(skip)]
    pub trace: Option<Trace>,
}

/// Simulates `scenario` under `base` for each seed in `seeds`, on `threads` threads, within
/// `budget`, saying to `progress` once a second how many seeds are done and how many broke a
/// property. The reports come back in seed order whatever the thread count; once the budget
/// is spent no seed starts, and the seeds running stop and say so.
pub fn run_seeds(
    scenario: &Scenario,
    base: &SimConfig,
    seeds: &[u64],
    threads: usize,
    progress: Option<crate::progress::Progress>,
    budget: &Budget,
) -> Vec<RunReport> {
    let next = AtomicU64::new(0);
    let (done, violated, finished) = (AtomicU64::new(0), AtomicU64::new(0), AtomicBool::new(false));
    let results = Mutex::new(Vec::with_capacity(seeds.len()));
    std::thread::scope(|scope| {
        if let Some(say) = progress {
            let (done, violated, finished) = (&done, &violated, &finished);
            scope.spawn(move || {
                let started = Instant::now();
                let mut last = started;
                while !finished.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(50));
                    if last.elapsed() >= Duration::from_secs(1) {
                        last = Instant::now();
                        say(&format!(
                            "{:>6.1}s  {} of {} seeds done, {} broke a property",
                            started.elapsed().as_secs_f64(),
                            done.load(Ordering::Relaxed),
                            seeds.len(),
                            violated.load(Ordering::Relaxed)
                        ));
                    }
                }
            });
        }
        let workers: Vec<_> = (0..threads.clamp(1, seeds.len().max(1)))
            .map(|_| {
                scope.spawn(|| loop {
                    if budget.spent(0).is_some() {
                        break;
                    }
                    let k = next.fetch_add(1, Ordering::Relaxed) as usize;
                    let Some(&seed) = seeds.get(k) else { break };
                    let report = run_within(scenario, &SimConfig { seed, ..base.clone() }, None, budget);
                    violated.fetch_add(u64::from(report.violated.is_some()), Ordering::Relaxed);
                    done.fetch_add(1, Ordering::Relaxed);
                    results.lock().expect("no run panics").push((k, report));
                })
            })
            .collect();
        for worker in workers {
            worker.join().expect("no run panics");
        }
        finished.store(true, Ordering::Relaxed);
    });
    let mut results = results.into_inner().expect("no run panics");
    results.sort_by_key(|(k, _)| *k);
    results.into_iter().map(|(_, r)| r).collect()
}

/// One run to its end whatever signal came: a search's answer, re-run to be reported.
pub fn run_unstoppable(scenario: &Scenario, config: &SimConfig) -> RunReport {
    run_with(scenario, config, None, None)
}

/// One run within `budget` (its states bound aside: a run stores no states), saying to
/// `progress` at most once a second how far it got: virtual time, steps, acquisitions granted
/// and clients waiting (a run with thousands of waiters and no grant is stuck, whatever its
/// step count says).
pub fn run_within(
    scenario: &Scenario,
    config: &SimConfig,
    progress: Option<crate::progress::Progress>,
    budget: &Budget,
) -> RunReport {
    run_with(scenario, config, progress, Some(budget))
}

/// The most steps a run keeps as it goes (16 bytes each with their times: 256 MiB); past them
/// it keeps none (`SimConfig::keep_steps`).
pub const KEEP_STEPS: usize = 1 << 24;

/// How often, in steps, a run looks at the clock for progress and its budget.
const LOOK_EVERY: u64 = 1024;

fn run_with(
    scenario: &Scenario,
    config: &SimConfig,
    progress: Option<crate::progress::Progress>,
    budget: Option<&Budget>,
) -> RunReport {
    let recipes = || scenario.world().clients.into_iter().map(|c| c.recipe).collect::<Vec<AnyRecipe>>();
    let (started, mut said, mut looked) = (Instant::now(), Instant::now(), Instant::now());
    let (halt, mut spent) = (AtomicBool::new(false), None);
    let mut watch = |world: &zklab_model::World<AnyRecipe>, metrics: &Metrics| {
        if !metrics.steps.is_multiple_of(LOOK_EVERY) {
            return;
        }
        // The budget (a file read for memory) at most twenty times a second.
        if let Some(budget) = budget.filter(|_| spent.is_none() && looked.elapsed() >= Duration::from_millis(50)) {
            looked = Instant::now();
            spent = budget.spent(0);
            halt.store(spent.is_some(), Ordering::Relaxed);
        }
        if let Some(say) = progress.filter(|_| said.elapsed() >= Duration::from_secs(1)) {
            said = Instant::now();
            say(&format!(
                "{:>6.1}s  seed {}: {:.1} s virtual, {} steps, {} acquisitions granted, {} clients waiting",
                started.elapsed().as_secs_f64(),
                config.seed,
                metrics.virtual_us as f64 / 1e6,
                metrics.steps,
                metrics.acquisitions,
                world.clients.iter().filter(|c| c.is_waiting()).count()
            ));
        }
    };
    // The run keeps its steps up to a bound, so its memory is the world's however long it
    // runs; a violation after more steps is run again, keeping them all, for its trace.
    let lean = SimConfig { keep_steps: config.keep_steps.min(KEEP_STEPS), ..config.clone() };
    let stop = budget.map(|_| &halt);
    let mut run = zklab_sim::simulate_stoppable(&lean, recipes(), &mut watch, stop).expect("validated before the run");
    let dropped = run.steps.len() as u64 != run.metrics.steps;
    if matches!(run.outcome, SimOutcome::Violated(_)) && dropped {
        let lean_hash = run.steps_hash;
        drop(run);
        let all = SimConfig { keep_steps: usize::MAX, ..config.clone() };
        run = zklab_sim::simulate(&all, recipes()).expect("validated before the run");
        assert_eq!(run.steps_hash, lean_hash, "a seed's run is the same run every time");
    }
    let steps_hash = format!("{:016x}", run.steps_hash);
    let herd = run.metrics.herd();
    let bounded_by = spent.filter(|s| run.interrupted && *s != Spent::Interrupted).map(Spent::what_ran_out);
    let (verdict, violated, detail, trace) = match &run.outcome {
        SimOutcome::Passed if bounded_by.is_some() => (RunVerdict::Bounded, None, None, None),
        SimOutcome::Passed if run.interrupted => (RunVerdict::Interrupted, None, None, None),
        SimOutcome::Passed => (RunVerdict::Passed, None, None, None),
        SimOutcome::Undecided(u) => (RunVerdict::Unknown, None, Some(u.reason.clone()), None),
        SimOutcome::Violated(v) => {
            // The trace ends at the step that broke the property (`of_run`).
            let end = RunEnd {
                seed: config.seed,
                steps: &run.steps,
                times_us: &run.times_us,
                world: &run.world,
                detail: &v.detail,
            };
            let trace = Trace::of_run(scenario, end, v.property, v.steps);
            (RunVerdict::Violated, Some(v.property.to_string()), Some(trace.summary.clone()), Some(trace))
        }
    };
    RunReport {
        seed: config.seed,
        verdict,
        bounded_by,
        violated,
        detail,
        steps_hash,
        metrics: run.metrics,
        herd,
        trace,
    }
}
