//! The `zklab real` command line: a recipe's clients against a real ZooKeeper (started here, or
//! the user's), the simulator's workload and fault plan from a seed, each run judged by the
//! model world kept in step with it. A violation is written as a trace that `zklab replay`
//! replays; a run the model could not follow is reported as such, never as passed.

use super::real_args::{ensemble, exit, seeds, Args};
use super::{progress_to_stderr, CliError};
use crate::exit::Exit;
use crate::real::libraries::Library;
use crate::real::{self, Ensemble, RealRun, Standing, Target};
use crate::scenario::{BadInput, Scenario};
use crate::simulate::parse_rates;
use crate::trace::{RunEnd, Trace};
use crate::user_files::{write_output, Output};
use std::time::{Duration, Instant};
use zklab_model::{FaultKind, WorldConfig};
use zklab_recipes::AnyRecipe;
use zklab_sim::{Schedule, SimConfig};

/// The most clients a real run may have: each is a real session and a thread.
pub const MAX_CLIENTS: usize = 200;

/// One real run, as reported.
#[derive(serde::Serialize)]
struct Report {
    seed: u64,
    /// The scenario's recipes, as a label (`standard`, `rw-writer,rw-reader`).
    #[serde(skip)]
    recipes: String,
    /// passed, violated, unknown (someone still waited at the end, no deadlock), diverged, not
    /// run or interrupted.
    verdict: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    violated: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    detail: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    trace: Option<String>,
    /// The wire log of a run that was violated or diverged (`NAME.wire.jsonl`).
    #[serde(skip_serializing_if = "Option::is_none")]
    wire: Option<String>,
    /// Where the run diverged on an answer: the conformance case written of it.
    #[serde(skip_serializing_if = "Option::is_none")]
    case: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    case_refused: Option<String>,
    steps: usize,
    metrics: real::RealMetrics,
    requests_per_acquisition: f64,
    /// As `zklab herd` counts it: watch notifications handed to recipes per release.
    notifications_per_release: f64,
    /// How many of the run's writes the committed transaction log showed as the model's (servers
    /// started here).
    #[serde(skip_serializing_if = "Option::is_none")]
    writes_in_the_log: Option<usize>,
    /// Every fault of the seed's plan: where its client was when it struck (waiting, holding,
    /// releasing: at its lock work; or between rounds, after it finished), or why it did not.
    faults: Vec<crate::real::fault_ledger::Strike>,
    /// Why the committed transaction log could not be read (the run is then unchecked against
    /// it, which is no disagreement).
    #[serde(skip_serializing_if = "Option::is_none")]
    log_unread: Option<String>,
}

pub fn run(args: &Args) -> Result<Exit, CliError> {
    if !args.reproduce.is_empty() {
        return reproduce(args);
    }
    let library = match args.library.as_deref() {
        Some(name) => Some(
            Library::parse(name).ok_or_else(|| BadInput(format!("--library takes kazoo or curator, got `{name}`")))?,
        ),
        None => None,
    };
    // A library's run is checked against the recipe that models it.
    let recipe: &str = match library {
        Some(library) => library.model(),
        None => args.recipe.as_deref().unwrap_or_default(),
    };
    let world = WorldConfig {
        rounds: args.rounds,
        client_behaviour: args.client.behaviour(),
        session_timeout_ms: args.session_timeout_ms,
        jute_maxbuffer: None,
        ..WorldConfig::default()
    };
    let scenario = Scenario::with_limit(recipe, args.clients, world.clone(), MAX_CLIENTS)?;
    let first = super::simulate::first_seed(args.seed)?;
    if args.seeds == 0 || args.seeds > 100_000 {
        return Err(BadInput(format!("--seeds must be between 1 and 100000, got {}", args.seeds)).into());
    }
    if !(200..=20_000).contains(&args.session_timeout_ms) {
        return Err(BadInput(format!(
            "--session-timeout-ms must be between 200 and 20000 (the servers' bounds), got {}",
            args.session_timeout_ms
        ))
        .into());
    }
    if args.timeout == Some(0) || args.timeout.is_some_and(|t| t > 86_400 * 7) {
        return Err(BadInput("--timeout must be between 1 s and a week".to_string()).into());
    }
    if args.server.is_none() && !matches!(args.servers, 1 | 3) {
        return Err(
            BadInput(format!("--servers must be 1 (standalone) or 3 (an ensemble), got {}", args.servers)).into()
        );
    }
    crate::user_files::check_writable(&args.trace_dir)?;
    let mut config = SimConfig::new(world, first);
    config.rates = parse_rates(&args.faults)?;
    config.chaos_us = args.chaos_ms.saturating_mul(1000);
    config.heal_bound_us = args.heal_ms.map(|ms| ms.saturating_mul(1000));
    config.hold_us = args.hold_ms.saturating_mul(1000);
    config.start_spread_us = args.start_spread_ms.saturating_mul(1000);
    if let Some(path) = &args.schedule {
        config.schedule = Schedule::load(path).map_err(|e| BadInput(e.to_string()))?.faults;
    }
    config.validate(args.clients).map_err(|e| BadInput(e.0))?;
    let used = FaultKind::ALL.into_iter().filter(|k| config.uses(*k));
    if let Some(library) = library {
        if let Some(kind) = used.clone().find(|k| !Library::drives(*k)) {
            return Err(BadInput(format!("`zklab real --library` cannot drive {kind}")).into());
        }
        library.available().map_err(BadInput)?;
        return super::real_library::run(args, library, &config, first);
    }
    for kind in used {
        if let Some(why) = real::unsupported(kind, args.server.is_none() && args.servers == 3) {
            return Err(BadInput(format!("`zklab real` cannot drive {kind} yet: {why}")).into());
        }
    }
    if args.html && args.clients > crate::html::MAX_CLIENTS {
        return Err(BadInput(format!(
            "--html draws at most {} clients, got {}",
            crate::html::MAX_CLIENTS,
            args.clients
        ))
        .into());
    }

    let ensemble = ensemble(args)?;
    let started = Instant::now();
    let mut reports = Vec::new();
    for (k, seed) in seeds(args, first, started) {
        let recipes: Vec<AnyRecipe> = scenario.world().clients.into_iter().map(|c| c.recipe).collect();
        let target = target(args, &ensemble, format!("{seed}-{k}"), None);
        let report = match real::run_real(&SimConfig { seed, ..config.clone() }, recipes, &target) {
            Ok(run) => report(args, &scenario, seed, &run)?,
            // The first run's set-up failing is the servers' or the flags' fault; a later one's
            // (a server that did not answer in time) leaves that seed unjudged.
            Err(why) if k == 0 => return Err(BadInput(why).into()),
            Err(why) => Report::not_run(seed, why),
        };
        if !args.json {
            print(&report);
        }
        reports.push(report);
    }
    let asked: Vec<FaultKind> = FaultKind::ALL.into_iter().filter(|k| config.uses(*k)).collect();
    finish(args, &ensemble, (reports, &asked), started)
}

/// Where one run goes: its own node on the servers.
fn target<'a>(
    args: &Args,
    ensemble: &'a Ensemble,
    name: String,
    script: Option<&'a [zklab_model::Step]>,
) -> Target<'a> {
    Target {
        servers: &ensemble.servers,
        chroot: format!("/zklab-real/{}-{name}", crate::real::private::run_id()),
        margin: Duration::from_millis(match ensemble.servers.len() {
            1 => 5,
            _ => 50,
        }),
        stop: Some(&crate::interrupt::INTERRUPTED),
        progress: (!args.quiet && args.seeds == 1 && script.is_none()).then_some(&progress_to_stderr as &dyn Fn(&str)),
        script,
        lagging: ensemble.lagging.as_ref(),
        txn_log: ensemble.txn_log(),
    }
}

fn finish(
    args: &Args,
    ensemble: &Ensemble,
    (reports, asked): (Vec<Report>, &[FaultKind]),
    started: Instant,
) -> Result<Exit, CliError> {
    // A kind asked for that never struck while a client was at its lock work was not tried: the
    // campaign says nothing of it, so it is no pass (as a library's campaign).
    let runs: Vec<&[crate::real::fault_ledger::Strike]> = reports.iter().map(|r| &r.faults[..]).collect();
    let untried = crate::real::fault_ledger::never_struck(asked, &runs);
    if args.json {
        say!("{}", serde_json::to_string(&reports).expect("reports serialize"));
    } else {
        let passed = reports.iter().filter(|r| r.verdict == "passed").count();
        let acquisitions: u64 = reports.iter().map(|r| r.metrics.acquisitions).sum();
        let requests: u64 = reports.iter().map(|r| r.metrics.requests).sum();
        say!(
            "{passed} of {} real runs passed ({}); {acquisitions} acquisitions, {:.2} requests per acquisition; {:.1} \
                s wall",
            reports.len(),
            ensemble.size_text(),
            requests as f64 / acquisitions.max(1) as f64,
            started.elapsed().as_secs_f64()
        );
        if (reports.len() as u64) < args.seeds {
            say!("stopped early: {} of {} seeds ran", reports.len(), args.seeds);
        }
        for kind in &untried {
            say!("UNKNOWN: no {kind} struck while a client was at its lock work: these runs say nothing of it");
        }
    }
    Ok(match exit(args, reports.iter().map(|r| r.verdict)) {
        Exit::Passed if !untried.is_empty() => Exit::Unknown,
        other => other,
    })
}

impl Report {
    /// A seed whose run could not start.
    fn not_run(seed: u64, why: String) -> Report {
        Report {
            seed,
            recipes: String::new(),
            verdict: "not run",
            violated: None,
            detail: Some(why),
            trace: None,
            wire: None,
            case: None,
            case_refused: None,
            steps: 0,
            metrics: real::RealMetrics::default(),
            requests_per_acquisition: 0.0,
            notifications_per_release: 0.0,
            writes_in_the_log: None,
            faults: Vec::new(),
            log_unread: None,
        }
    }
}

fn report(args: &Args, scenario: &Scenario, seed: u64, run: &RealRun<AnyRecipe>) -> Result<Report, CliError> {
    let mut report = Report {
        seed,
        recipes: scenario.recipe_label(),
        verdict: "passed",
        violated: None,
        detail: None,
        trace: None,
        wire: None,
        case: None,
        case_refused: None,
        steps: run.steps.len(),
        metrics: run.metrics.clone(),
        requests_per_acquisition: run.metrics.requests_per_acquisition(),
        notifications_per_release: run.metrics.notifications as f64 / run.metrics.releases.max(1) as f64,
        writes_in_the_log: run.ground_truth.as_ref().and_then(|g| g.as_ref().ok().copied()),
        faults: run.strikes.clone(),
        log_unread: match (&run.ground_truth, &run.standing) {
            (Some(Err(why)), Standing::Agrees | Standing::Broke { .. } | Standing::Undecided { .. }) => {
                Some(why.clone())
            }
            _ => None,
        },
    };
    if run.interrupted {
        report.verdict = "interrupted";
        return Ok(report);
    }
    match &run.standing {
        Standing::Agrees => {}
        Standing::Undecided { why, .. } => {
            report.verdict = "unknown";
            report.detail = Some(why.clone());
        }
        Standing::Diverged { client, step, at_us, why } => {
            report.verdict = "diverged";
            report.detail = Some(format!("at {:.1} ms, c{client}'s step {step}: {why}", *at_us as f64 / 1000.0));
            let name = format!("real-{}-n{}-seed{seed}", scenario.recipe_label().replace(',', "+"), args.clients);
            report.wire = Some(write_wire(args, &name, &run.wire)?);
            if let Some(exchange) = &run.exchange {
                let name = format!("real-{}-n{}-seed{seed}", scenario.recipe_label().replace(',', "+"), args.clients);
                let about = format!("seed {seed}, {} clients", args.clients);
                match real::divergence_case(&run.start, &run.steps, exchange, &name, &about) {
                    Ok(case) => report.case = Some(write_case(args, &name, &case)?),
                    Err(why) => report.case_refused = Some(format!("no conformance case written: {why}")),
                }
            }
        }
        Standing::Broke { broken, .. } => {
            report.verdict = "violated";
            report.violated = Some(broken.property.to_string());
            // A herd does not end the run: its trace ends at the step that woke it.
            let kept = match (broken.property, &run.herd) {
                (zklab_model::Property::NoHerd, Some(herd)) => herd.steps,
                _ => run.steps.len(),
            };
            let end =
                RunEnd { seed, steps: &run.steps, times_us: &run.times_us, world: &run.world, detail: &broken.detail };
            let trace = Trace::of_run(scenario, end, broken.property, kept);
            let summary = trace.summary.clone();
            report.detail = Some(summary);
            let file = write_trace(args, seed, &trace)?;
            let name = file.trim_end_matches(".json").rsplit('/').next().unwrap_or_default().to_string();
            report.wire = Some(write_wire(args, &name, &run.wire)?);
            report.trace = Some(file);
        }
    }
    Ok(report)
}

/// Writes a run's wire log beside its trace (`NAME.wire.jsonl`).
fn write_wire(args: &Args, name: &str, wire: &[real::wire_log::WireEntry]) -> Result<String, BadInput> {
    let cant = |e: std::io::Error| BadInput(format!("cannot write wire logs to {}: {e}", args.trace_dir.display()));
    std::fs::create_dir_all(&args.trace_dir).map_err(cant)?;
    let file = args.trace_dir.join(format!("{name}.wire.jsonl"));
    write_output(&file, &real::wire_log::to_jsonl(wire), Output::JsonLines).map_err(cant)?;
    Ok(file.display().to_string())
}

/// Writes a divergence's conformance case beside the traces (`NAME.case.json`).
fn write_case(args: &Args, name: &str, case: &serde_json::Value) -> Result<String, BadInput> {
    let cant = |e: std::io::Error| BadInput(format!("cannot write cases to {}: {e}", args.trace_dir.display()));
    std::fs::create_dir_all(&args.trace_dir).map_err(cant)?;
    let file = args.trace_dir.join(format!("{name}.case.json"));
    let text = serde_json::to_string_pretty(case).expect("a JSON value prints");
    write_output(&file, &(text + "\n"), Output::Json).map_err(cant)?;
    Ok(file.display().to_string())
}

fn write_trace(args: &Args, seed: u64, trace: &Trace) -> Result<String, BadInput> {
    let cant = |e: std::io::Error| BadInput(format!("cannot write traces to {}: {e}", args.trace_dir.display()));
    std::fs::create_dir_all(&args.trace_dir).map_err(cant)?;
    let name = format!(
        "real-{}-n{}-seed{seed}-{}.json",
        trace.scenario.recipe_label().replace(',', "+"),
        args.clients,
        trace.verdict.property
    );
    let file = args.trace_dir.join(name);
    trace.write(&file).map_err(cant)?;
    if args.html {
        crate::html::write_beside(trace, &file).map_err(cant)?;
    }
    Ok(file.display().to_string())
}

fn print(r: &Report) {
    let m = &r.metrics;
    match r.verdict {
        "passed" => say!(
            "seed {}: passed: {} acquisitions, {:.2} requests and {:.2} notifications per acquisition, faults: {}; {} \
                steps judged{}, {} ms",
            r.seed,
            m.acquisitions,
            r.requests_per_acquisition,
            m.notifications as f64 / m.acquisitions.max(1) as f64,
            match r.faults.is_empty() {
                true => "none".to_string(),
                false => r.faults.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", "),
            },
            r.steps,
            r.writes_in_the_log
                .map_or(r.log_unread.as_ref().map_or(String::new(), |why| format!(" ({why})")), |n| format!(
                    ", its {n} writes as committed"
                )),
            m.wall_ms
        ),
        "violated" => {
            say!(
                "seed {}: {} violated on a real server: \
                {}",
                r.seed,
                r.violated.as_deref().unwrap_or(""),
                r.detail.as_deref().unwrap_or("")
            );
            if let Some(trace) = &r.trace {
                say!("  trace: {trace} ({} replay {trace})", super::program_for(&r.recipes));
            }
        }
        "diverged" => {
            say!(
                "seed {}: UNKNOWN: the model could not follow the real run ({}); judged up to there, nothing after",
                r.seed,
                r.detail.as_deref().unwrap_or("")
            );
            if let Some(case) = &r.case {
                say!("  conformance case: {case} (record it on a real server: scripts/record.sh)");
            }
        }
        "unknown" => say!(
            "seed {}: UNKNOWN: {} (a liveness violation is a deadlock; a run can end before a slow lock \
             grants)",
            r.seed,
            r.detail.as_deref().unwrap_or("")
        ),
        "not run" => say!("seed {}: UNKNOWN: the run could not start: {}", r.seed, r.detail.as_deref().unwrap_or("")),
        _ => say!("seed {}: interrupted after {} steps: no verdict", r.seed, r.steps),
    }
}

/// `--reproduce`: each trace's steps taken on the real servers, its violation judged there.
fn reproduce(args: &Args) -> Result<Exit, CliError> {
    let mut traces = Vec::new();
    for path in &args.reproduce {
        let trace = Trace::load(path).map_err(|e| BadInput(format!("{}: {e}", path.display())))?;
        trace.scenario.validate_with(MAX_CLIENTS).map_err(|e| BadInput(format!("{}: {e}", path.display())))?;
        // A trace whose steps do not lead to its violation in the model is bad input, refused
        // before any server starts: a real run of it could only be blamed on the model.
        trace.replay().map_err(|e| BadInput(format!("{}: does not replay: {e}", path.display())))?;
        traces.push((path.clone(), trace));
    }
    let ensemble = ensemble(args)?;
    let mut rows = Vec::new();
    for (k, (path, trace)) in traces.iter().enumerate() {
        if crate::interrupt::interrupted() {
            break;
        }
        let recipes: Vec<AnyRecipe> = trace.scenario.world().clients.into_iter().map(|c| c.recipe).collect();
        let config = SimConfig::new(trace.scenario.config.clone(), trace.seed.unwrap_or(1));
        let target = target(args, &ensemble, format!("trace{k}"), Some(&trace.steps));
        let (verdict, detail, taken, wall_ms) = match real::run_real(&config, recipes, &target) {
            Ok(run) => {
                let (verdict, detail) = reproduced(trace, &run);
                (verdict, detail, run.steps.len(), run.metrics.wall_ms)
            }
            Err(why) => ("not reproduced", why, 0, 0),
        };
        if !args.json {
            say!("{}: {verdict}: {detail}", path.display());
        }
        rows.push(serde_json::json!({
            "trace": path.display().to_string(),
            "property": trace.verdict.property.to_string(),
            "verdict": verdict,
            "detail": detail,
            "steps": trace.steps.len(),
            "steps_taken": taken,
            "wall_ms": wall_ms,
        }));
    }
    let count = |v: &str| rows.iter().filter(|r| r["verdict"] == v).count();
    if args.json {
        say!("{}", serde_json::Value::Array(rows.clone()));
    } else {
        say!(
            "{} of {} traces reproduced on a real server ({}); {} could not be steered; {} held for real",
            count("reproduced"),
            traces.len(),
            ensemble.size_text(),
            count("not reproduced"),
            count("held")
        );
    }
    Ok(match (count("held"), count("reproduced") == traces.len()) {
        (0, true) => Exit::Passed,
        (0, false) => Exit::Unknown,
        _ => Exit::Failed,
    })
}

/// Whether a steered run showed its trace's violation (the trace replays in the model: checked
/// before any server started): `reproduced` (every step happened on the real servers, the
/// model agreeing at each, and for a deadlock nothing more arrived once the wire fell quiet),
/// `not reproduced` (the servers could not be steered through a step: why), or `held` (every
/// step happened for real, but after the deadlock's last step a server still sent a client
/// something: the model is wrong somewhere).
fn reproduced(trace: &Trace, run: &RealRun<AnyRecipe>) -> (&'static str, String) {
    let wanted = trace.verdict.property;
    let deadlock = wanted.kind() == zklab_model::property::Kind::Liveness && trace.verdict.cycle_start.is_none();
    match &run.standing {
        Standing::Diverged { step, why, .. } => (
            "not reproduced",
            format!(
                "at step {} `{step}`: \
            {why}",
                run.steps.len() + 1
            ),
        ),
        _ if run.interrupted => ("not reproduced", "interrupted".to_string()),
        _ if run.steps != trace.steps => (
            "not reproduced",
            format!("the real run took {} of the trace's {} steps", run.steps.len(), trace.steps.len()),
        ),
        _ if deadlock && !run.after_the_end.is_empty() => (
            "held",
            format!(
                "all {} steps happened for real, but the deadlock did not: once the wire fell quiet, {}",
                run.steps.len(),
                run.after_the_end.join("; ")
            ),
        ),
        _ if trace.verdict.cycle_start.is_some() => (
            "reproduced",
            format!(
                "all {} steps happened on a real server, the model agreeing at each: {wanted} violated (its starving \
                 cycle went round once; a real run shows a lap, not forever)",
                run.steps.len()
            ),
        ),
        _ if deadlock => (
            "reproduced",
            format!(
                "all {} steps happened on a real server, the model agreeing at each, and once the wire fell quiet \
                 nothing more arrived: {wanted} violated (a deadlock)",
                run.steps.len()
            ),
        ),
        _ => (
            "reproduced",
            format!(
                "all {} steps happened on a real server, the model agreeing at each: {wanted} violated",
                run.steps.len()
            ),
        ),
    }
}
