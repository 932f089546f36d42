//! `zklab calibrate`: how far simulation can be trusted. For a world small enough to explore
//! exhaustively, every state the checker reaches is counted, then growing numbers of simulated
//! seeds run the same world and we count which of those states they reach. It also checks the
//! two explorers against each other: a simulated state whose faults stay within the checker's
//! budget must be one the checker explored.

use crate::interrupt::interrupted;
use crate::progress::Progress;
use crate::scenario::Scenario;
use rustc_hash::{FxHashSet, FxHasher};
use serde::Serialize;
use std::hash::{Hash, Hasher};
use std::time::{Duration, Instant};
use zklab_model::{FaultKind, Settle, World};
use zklab_recipes::AnyRecipe;
use zklab_sim::{FaultRates, SimConfig};

/// The explored space and what each number of seeds reached of it.
#[derive(Clone, Debug, Serialize)]
pub struct Calibration {
    pub checker_states: usize,
    pub rows: Vec<Row>,
    /// Stopped by Ctrl-C or SIGTERM: the last row counts the seeds run by then.
    pub interrupted: bool,
}

#[derive(Clone, Debug, Serialize)]
pub struct Row {
    pub seeds: u64,
    /// Distinct checker states the simulated runs passed through.
    pub reached: usize,
    pub fraction: f64,
    /// States with more faults than the checker's budget allows (outside its space by design).
    pub beyond_budget: usize,
    /// States within the budget that the checker never explored: must be 0.
    pub unexplained: usize,
}

/// The state as the checker keeps it (settled, not reduced by symmetry), hashed.
fn fingerprint(world: &World<AnyRecipe>) -> u64 {
    let mut settled = world.clone();
    settled.settle(Settle::Renumbering).ok();
    let mut hasher = FxHasher::default();
    settled.hash(&mut hasher);
    hasher.finish()
}

/// Every state the checker explores from `scenario`, breadth-first, stopping at `limit` (an
/// error) or at a signal (`None`).
fn explore(scenario: &Scenario, limit: usize, progress: Option<Progress>) -> Result<Option<FxHashSet<u64>>, String> {
    let (started, mut last) = (Instant::now(), Instant::now());
    let mut init = scenario.world();
    init.settle(Settle::Renumbering).ok();
    let mut seen = FxHashSet::default();
    seen.insert(fingerprint(&init));
    let mut frontier = vec![init];
    while let Some(world) = frontier.pop() {
        if seen.len() % 1024 == 0 && interrupted() {
            return Ok(None);
        }
        if let Some(say) = progress.filter(|_| last.elapsed() >= Duration::from_secs(1)) {
            last = Instant::now();
            say(&format!(
                "{:>6.1}s  the checker's space: {} states so far",
                started.elapsed().as_secs_f64(),
                seen.len()
            ));
        }
        for step in world.steps() {
            let mut next = world.clone();
            next.apply(step).expect("listed steps are enabled");
            if seen.insert(fingerprint(&next)) {
                if seen.len() > limit {
                    return Err(format!("the world has more than {limit} states: calibrate a smaller one"));
                }
                frontier.push(next);
            }
        }
    }
    Ok(Some(seen))
}

/// Runs seeds `1..=max(seed_counts)` with the scenario's fault kinds as rates (5% of requests
/// for request faults, one of each other kind), counting after each count in `seed_counts`;
/// saying to `progress` once a second how far it got, and stopping at Ctrl-C or SIGTERM.
pub fn calibrate(
    scenario: &Scenario,
    seed_counts: &[u64],
    limit: usize,
    progress: Option<Progress>,
) -> Result<Calibration, String> {
    let Some(space) = explore(scenario, limit, progress)? else {
        return Ok(Calibration { checker_states: 0, rows: Vec::new(), interrupted: true });
    };
    let (started, mut last) = (Instant::now(), Instant::now());
    let budget = scenario.config.faults;
    let mut rates = FaultRates::default();
    for kind in budget.enabled() {
        rates.set(kind, if kind.strikes_a_request() { 0.05 } else { 1.0 });
    }
    let mut reached = FxHashSet::default();
    let (mut beyond, mut unexplained) = (FxHashSet::default(), FxHashSet::default());
    let mut rows = Vec::new();
    let mut counts: Vec<u64> = seed_counts.to_vec();
    counts.sort_unstable();
    let mut seed = 0;
    let most = counts.last().copied().unwrap_or(0);
    let mut stopped = false;
    for &count in &counts {
        while seed < count && !stopped {
            stopped = interrupted();
            if stopped {
                break;
            }
            seed += 1;
            if let Some(say) = progress.filter(|_| last.elapsed() >= Duration::from_secs(1)) {
                last = Instant::now();
                say(&format!(
                    "{:>6.1}s  seed {seed} of {most}: {} of {} states reached",
                    started.elapsed().as_secs_f64(),
                    reached.len(),
                    space.len()
                ));
            }
            let mut config = SimConfig::new(scenario.config.clone(), seed);
            config.as_checked = true;
            config.rates = rates;
            config.start_spread_us = config.hold_us;
            let recipes: Vec<AnyRecipe> = scenario.world().clients.into_iter().map(|c| c.recipe).collect();
            zklab_sim::simulate_observed(&config, recipes, &mut |world, _| {
                let print = fingerprint(world);
                let within = FaultKind::ALL.iter().all(|k| world.faults_used[k.index()] <= budget.get(*k));
                match (space.contains(&print), within) {
                    (true, _) => {
                        reached.insert(print);
                    }
                    (false, false) => {
                        beyond.insert(print);
                    }
                    (false, true) => {
                        unexplained.insert(print);
                    }
                }
            })
            .map_err(|e| e.0)?;
        }
        rows.push(Row {
            seeds: seed,
            reached: reached.len(),
            fraction: reached.len() as f64 / space.len() as f64,
            beyond_budget: beyond.len(),
            unexplained: unexplained.len(),
        });
        if stopped {
            break;
        }
    }
    Ok(Calibration { checker_states: space.len(), rows, interrupted: stopped })
}

/// The calibration as a table.
pub fn table(c: &Calibration) -> String {
    let mut out = format!(
        "checker: {} states\n{:>8} {:>12} {:>10} {:>14} {:>12}\n",
        c.checker_states, "seeds", "reached", "fraction", "beyond budget", "unexplained"
    );
    for r in &c.rows {
        out.push_str(&format!(
            "{:>8} {:>12} {:>9.1}% {:>14} {:>12}\n",
            r.seeds,
            r.reached,
            100.0 * r.fraction,
            r.beyond_budget,
            r.unexplained
        ));
    }
    out
}
