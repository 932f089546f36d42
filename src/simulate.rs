//! `zklab simulate`: run the simulator for one seed or a sweep of seeds, judge every run, and
//! turn a violation into a replayable trace with the command that reproduces it.

use crate::scenario::{BadInput, Scenario};
use crate::trace::{summarize, Trace, Verdict, FORMAT};
use serde::Serialize;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use zklab_model::{FaultBudget, FaultKind};
use zklab_recipes::AnyRecipe;
use zklab_sim::{FaultRates, Herd, Metrics, Outcome, SimConfig};

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
            "all" => FaultKind::ALL.to_vec(),
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

/// One simulated run, judged.
#[derive(Clone, Debug, Serialize)]
pub struct RunReport {
    pub seed: u64,
    pub verdict: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub violated: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// FNV-1a of the steps taken, as JSON: equal hashes, equal runs.
    pub steps_hash: String,
    pub metrics: Metrics,
    pub herd: Herd,
    #[serde(skip)]
    pub trace: Option<Trace>,
}

/// Simulates `scenario` under `base` for each seed in `seeds`, on `threads` threads, saying to
/// `progress` once a second how many seeds are done and how many broke a property. The
/// reports come back in seed order whatever the thread count.
pub fn run_seeds(
    scenario: &Scenario,
    base: &SimConfig,
    seeds: &[u64],
    threads: usize,
    progress: Option<crate::progress::Progress>,
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
                    // After Ctrl-C no new seed starts; the ones running stop and report so.
                    if crate::interrupt::interrupted() {
                        break;
                    }
                    let k = next.fetch_add(1, Ordering::Relaxed) as usize;
                    let Some(&seed) = seeds.get(k) else { break };
                    let report = run_one(scenario, &SimConfig { seed, ..base.clone() });
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

/// One run, stopped early by Ctrl-C or SIGTERM (`interrupt`), judged.
pub fn run_one(scenario: &Scenario, config: &SimConfig) -> RunReport {
    run_watched(scenario, config, None)
}

/// One run to its end whatever signal came: a search's answer, re-run to be reported.
pub fn run_unstoppable(scenario: &Scenario, config: &SimConfig) -> RunReport {
    run_with(scenario, config, None, None)
}

/// As `run_one`, saying to `progress` at most once a second how far the run got: virtual time,
/// steps, acquisitions granted and clients waiting (a run with thousands of waiters and no
/// grant is stuck, whatever its step count says).
pub fn run_watched(scenario: &Scenario, config: &SimConfig, progress: Option<crate::progress::Progress>) -> RunReport {
    run_with(scenario, config, progress, Some(&crate::interrupt::INTERRUPTED))
}

fn run_with(
    scenario: &Scenario,
    config: &SimConfig,
    progress: Option<crate::progress::Progress>,
    stop: Option<&AtomicBool>,
) -> RunReport {
    let recipes: Vec<AnyRecipe> = scenario.world().clients.into_iter().map(|c| c.recipe).collect();
    let (started, mut last) = (Instant::now(), Instant::now());
    let mut watch = |world: &zklab_model::World<AnyRecipe>, metrics: &Metrics| {
        let due = metrics.steps.is_multiple_of(1024) && last.elapsed() >= Duration::from_secs(1);
        if let Some(say) = progress.filter(|_| due) {
            last = Instant::now();
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
    let run = zklab_sim::simulate_stoppable(config, recipes, &mut watch, stop).expect("validated before the sweep");
    let steps_json = serde_json::to_string(&run.steps).expect("steps serialize");
    let steps_hash = format!("{:016x}", fnv1a(steps_json.as_bytes()));
    let herd = run.metrics.herd();
    let (verdict, violated, detail, trace) = match &run.outcome {
        Outcome::Passed if run.interrupted => ("interrupted", None, None, None),
        Outcome::Passed => ("passed", None, None, None),
        Outcome::Violated(v) => {
            // The trace's world allows exactly the faults the run used, so it replays as is.
            let mut replayable = scenario.clone();
            replayable.config.faults = FaultBudget(run.world.faults_used);
            let summary = match v.detail.is_empty() {
                true => summarize(v.property, &run.world),
                false => v.detail.clone(),
            };
            let trace = Trace {
                format: FORMAT,
                scenario: replayable,
                seed: Some(config.seed),
                steps: run.steps.clone(),
                times_us: run.times_us.clone(),
                verdict: Verdict { property: v.property, cycle_start: None, stalled: v.stalled },
                summary: summary.clone(),
            };
            ("violated", Some(v.property.to_string()), Some(summary), Some(trace))
        }
    };
    RunReport { seed: config.seed, verdict, violated, detail, steps_hash, metrics: run.metrics, herd, trace }
}

/// FNV-1a, 64 bits: a stable fingerprint of a run's steps on every machine.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3))
}
