//! `zklab simulate`: run the simulator for one seed or a sweep of seeds, judge every run, and
//! turn a violation into a replayable trace with the command that reproduces it.

use crate::scenario::{BadInput, Scenario};
use crate::trace::{summarize, Trace, Verdict, FORMAT};
use serde::Serialize;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
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

/// Simulates `scenario` under `base` for each seed in `seeds`, on `threads` threads. The
/// reports come back in seed order whatever the thread count.
pub fn run_seeds(scenario: &Scenario, base: &SimConfig, seeds: &[u64], threads: usize) -> Vec<RunReport> {
    let next = AtomicU64::new(0);
    let results = Mutex::new(Vec::with_capacity(seeds.len()));
    std::thread::scope(|scope| {
        for _ in 0..threads.clamp(1, seeds.len().max(1)) {
            scope.spawn(|| loop {
                // After Ctrl-C no new seed starts; the ones running stop and report so.
                if crate::interrupt::interrupted() {
                    break;
                }
                let k = next.fetch_add(1, Ordering::Relaxed) as usize;
                let Some(&seed) = seeds.get(k) else { break };
                let report = run_one(scenario, &SimConfig { seed, ..base.clone() });
                results.lock().expect("no run panics").push((k, report));
            });
        }
    });
    let mut results = results.into_inner().expect("no run panics");
    results.sort_by_key(|(k, _)| *k);
    results.into_iter().map(|(_, r)| r).collect()
}

pub fn run_one(scenario: &Scenario, config: &SimConfig) -> RunReport {
    run_watched(scenario, config, None)
}

/// As `run_one`, saying to `progress` at most once a second how far the run got (steps taken and
/// acquisitions asked for), for runs with thousands of clients.
pub fn run_watched(scenario: &Scenario, config: &SimConfig, progress: Option<crate::progress::Progress>) -> RunReport {
    let recipes: Vec<AnyRecipe> = scenario.world().clients.into_iter().map(|c| c.recipe).collect();
    let (started, mut last, mut steps) = (std::time::Instant::now(), std::time::Instant::now(), 0u64);
    let mut watch = |world: &zklab_model::World<AnyRecipe>| {
        steps += 1;
        let due = steps.is_multiple_of(1024) && last.elapsed() >= std::time::Duration::from_secs(1);
        if let Some(say) = progress.filter(|_| due) {
            last = std::time::Instant::now();
            let rounds = u64::from(world.config().rounds);
            let asked: u64 = world.clients.iter().map(|c| rounds - u64::from(c.rounds_left)).sum();
            say(&format!(
                "{:>6.1}s  seed {}: {steps} steps, {asked} acquisitions asked for",
                started.elapsed().as_secs_f64(),
                config.seed
            ));
        }
    };
    let stop = Some(&crate::interrupt::INTERRUPTED);
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
