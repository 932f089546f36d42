//! The `zklab simulate` command line: flags to a simulator config, runs to a report, a violation
//! to a trace file and the command that reproduces it.

use super::{progress_to_stderr, stop_on_ctrl_c, CliError};
use crate::exit::Exit;
use crate::scenario::{BadInput, Scenario};
use crate::shard::ShardReport;
use crate::simulate::{parse_rates, run_seeds, run_within, RunReport, RunVerdict};
use crate::user_files::{write_output, Output};
use std::path::PathBuf;
use std::time::Instant;
use zklab_model::WorldConfig;
use zklab_sim::{Breaks, Latency, Schedule, SimConfig};

#[derive(clap::Args, Clone, Debug)]
pub struct Args {
    /// Recipe name, or a comma list of one name per client.
    #[arg(long)]
    pub recipe: String,
    /// How many clients take the lock (1 to 1000000).
    #[arg(long, default_value_t = 3)]
    pub clients: usize,
    /// How many times each client acquires and releases.
    #[arg(long, default_value_t = 1)]
    pub rounds: u8,
    /// The seed (default: $ZKLAB_SEED, else 1).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Run this many seeds, from the seed on, in parallel.
    #[arg(long, default_value_t = 1)]
    pub seeds: u64,
    /// Run only the I-th of N equal parts of the seeds (`2/4`): one job of a sweep split across
    /// machines. `--json` then prints the shard's report, which `zklab merge` combines.
    #[arg(long, value_name = "I/N", value_parser = crate::shard::Shard::parse, conflicts_with = "search")]
    pub shard: Option<crate::shard::Shard>,
    /// Faults: kind[=rate] separated by commas (loss kinds: probability per request, default
    /// 0.01; others: how many over the chaos phase, default 1), `all` or `none`.
    #[arg(long, default_value = "none")]
    pub faults: String,
    /// A JSON fault schedule: {"faults": [{"at_ms": 120, "fault": "expire", "client": 0}]}.
    #[arg(long)]
    pub schedule: Option<PathBuf>,
    /// How long faults strike, in virtual milliseconds (a scheduled fault must fall within
    /// it); the run heals afterwards.
    #[arg(long, default_value_t = 2000, value_parser = super::a_day_of_ms())]
    pub chaos_ms: u64,
    /// After the chaos phase (and the last client's start) every waiter must acquire within
    /// this many virtual ms (default: ten session timeouts plus every hold one after the other).
    #[arg(long, value_parser = super::a_day_of_ms())]
    pub heal_ms: Option<u64>,
    /// How long a holder keeps the lock, in virtual ms.
    #[arg(long, default_value_t = 10, value_parser = super::a_day_of_ms())]
    pub hold_ms: u64,
    /// Server-to-client latency range in microseconds, MIN..MAX; a comma list gives links their
    /// own ranges, client i taking entry i modulo the list's length.
    #[arg(long, default_value = "100..400")]
    pub latency_us: String,
    /// Clients start within this many virtual ms of each other (0: together).
    #[arg(long, default_value_t = 0, value_parser = super::a_day_of_ms())]
    pub start_spread_ms: u64,
    /// Client library behaviour on reconnect.
    #[arg(long, value_enum, default_value = "java")]
    pub client: super::ClientChoice,
    /// The Java client's jute.maxbuffer in bytes: a reply longer than this drops its connection,
    /// as a real client does [default: 1048575, the Java client's own].
    #[arg(long, value_name = "BYTES")]
    pub jute_maxbuffer: Option<u64>,
    #[command(flatten)]
    pub budget: super::budget_args::BudgetArgs,
    /// Threads for a sweep of seeds.
    #[arg(long, default_value_t = 2)]
    pub threads: usize,
    /// Print one JSON array (one object per seed) instead of text.
    #[arg(long)]
    pub json: bool,
    /// Instead of fault rates, try this many random fault schedules (of the kinds --faults
    /// names) and shrink the first that breaks a property to a minimal one, kept as a file.
    /// One seed's workload: not with --seeds.
    #[arg(long, conflicts_with = "seeds")]
    pub search: Option<u32>,
    /// The most faults a searched schedule holds.
    #[arg(long, default_value_t = 4)]
    pub max_faults: usize,
    /// Print no progress.
    #[arg(long, short)]
    pub quiet: bool,
    /// Where violation traces are written.
    #[arg(long, default_value = "zklab-traces")]
    pub trace_dir: PathBuf,
    /// Also write each violation's HTML timeline beside its trace (`.html`), virtual time on
    /// its axis.
    #[arg(long)]
    pub html: bool,
}

/// Runs the command: passed when every run passed, failed on a violation, unknown when Ctrl-C
/// or a budget stopped it before every run had passed.
pub fn run(args: &Args) -> Result<Exit, CliError> {
    args.budget.validate()?;
    let world = WorldConfig {
        rounds: args.rounds,
        client_behaviour: args.client.behaviour(),
        jute_maxbuffer: args.client.jute_maxbuffer(args.jute_maxbuffer)?.or(match args.client {
            super::ClientChoice::Java => Some(zklab_model::JAVA_MAX_PACKET_BYTES),
            super::ClientChoice::Kazoo => None,
        }),
        ..WorldConfig::default()
    };
    let scenario = Scenario::with_limit(&args.recipe, args.clients, world.clone(), zklab_sim::MAX_CLIENTS)?;
    let first = first_seed(args.seed)?;
    if args.seeds == 0 || args.seeds > 1_000_000 {
        return Err(BadInput(format!("--seeds must be between 1 and 1000000, got {}", args.seeds)).into());
    }
    if args.threads == 0 || args.threads > 256 {
        return Err(BadInput(format!("--threads must be between 1 and 256, got {}", args.threads)).into());
    }
    crate::user_files::check_writable(&args.trace_dir)?;
    let mut config = SimConfig::new(world, first);
    config.rates = parse_rates(&args.faults)?;
    let links = args.latency_us.split(',').map(parse_latency).collect::<Result<Vec<_>, _>>()?;
    config.latency = links[0];
    if links.len() > 1 {
        config.links = links;
    }
    config.chaos_us = args.chaos_ms.saturating_mul(1000);
    config.heal_bound_us = args.heal_ms.map(|ms| ms.saturating_mul(1000));
    config.hold_us = args.hold_ms.saturating_mul(1000);
    config.start_spread_us = args.start_spread_ms.saturating_mul(1000);
    if let Some(path) = &args.schedule {
        config.schedule = Schedule::load(path).map_err(|e| BadInput(e.to_string()))?.faults;
    }
    config.validate(args.clients).map_err(|e| BadInput(e.0))?;
    if args.html && args.clients > crate::html::MAX_CLIENTS {
        return Err(BadInput(format!(
            "--html draws at most {} clients (a page holds every client's state at every step); got {}: read a trace \
                with `zklab replay --show`",
            crate::html::MAX_CLIENTS,
            args.clients
        ))
        .into());
    }
    if let Some(cases) = args.search {
        if !(1..=1_000_000).contains(&cases) {
            return Err(BadInput(format!("--search must be between 1 and 1000000 schedules, got {cases}")).into());
        }
        if !(1..=100).contains(&args.max_faults) {
            return Err(BadInput(format!("--max-faults must be between 1 and 100, got {}", args.max_faults)).into());
        }
        return search(args, &scenario, &config, cases, first);
    }
    let shard = args.shard.unwrap_or(crate::shard::Shard::WHOLE);
    if shard.count > args.seeds {
        return Err(BadInput(format!(
            "--shard {shard}: {} seeds cannot be cut into {} parts",
            args.seeds, shard.count
        ))
        .into());
    }
    let seeds: Vec<u64> = shard.range(args.seeds).map(|k| first.wrapping_add(k)).collect();
    stop_on_ctrl_c();
    let started = Instant::now();
    let progress = (!args.quiet).then_some(progress_to_stderr as crate::progress::Progress);
    let budget = args.budget.starting_now();
    let reports = match seeds.as_slice() {
        [seed] => vec![run_within(&scenario, &SimConfig { seed: *seed, ..config.clone() }, progress, &budget)],
        _ => run_seeds(&scenario, &config, &seeds, args.threads, progress, &budget),
    };
    let wall = started.elapsed();
    let mut failed = false;
    for report in &reports {
        if let Some(trace) = &report.trace {
            failed = true;
            let file = write_trace(args, report, trace)?;
            if !args.json {
                say!(
                    "seed {}: {} violated: {}",
                    report.seed,
                    report.violated.as_deref().unwrap_or(""),
                    report.detail.as_deref().unwrap_or("")
                );
                say!("  trace: {file}");
                say!("  reproduce: {}", reproduce(args, report.seed));
            }
        } else if !args.json {
            let m = &report.metrics;
            match report.verdict {
                RunVerdict::Interrupted | RunVerdict::Bounded => say!(
                    "seed {}: {} after {} steps, {:.1} s of virtual time: no verdict",
                    report.seed,
                    report.bounded_by.unwrap_or("interrupted"),
                    m.steps,
                    m.virtual_us as f64 / 1e6
                ),
                RunVerdict::Unknown => say!(
                    "seed {}: UNKNOWN: {} (a liveness violation is a deadlock; give --heal-ms more time, or check \
                     the recipe with `zklab check` for a fair cycle)",
                    report.seed,
                    report.detail.as_deref().unwrap_or("")
                ),
                _ => say!("seed {}: passed", report.seed),
            }
        }
    }
    if let Some(shard) = args.shard {
        let campaign = serde_json::json!({
            "command": "simulate",
            "scenario": scenario,
            "config": config,
            "seeds": args.seeds,
        });
        let name = |run: &RunReport, trace: &crate::trace::Trace| trace_name(args, run, trace);
        let report = ShardReport::of_seeds(&reports, name, (campaign, args.seeds, shard), budget.spent(0));
        match args.json {
            true => say!("{}", serde_json::to_string(&report).expect("shard reports serialize")),
            false => {
                say!("shard {shard}: seeds {} to {} of {} from {first}", seeds[0], seeds[seeds.len() - 1], args.seeds)
            }
        }
    } else if args.json {
        say!("{}", serde_json::to_string(&reports).expect("reports serialize"));
    }
    if !args.json {
        print_summary(&reports, wall);
    }
    let ended = reports.iter().filter(|r| r.verdict.ended()).count();
    let unfinished = ended < seeds.len();
    if unfinished && !args.json {
        let why = budget.spent(0).map_or("interrupted", |s| s.what_ran_out());
        say!("{why}: {ended} of {} seeds ran to the end", seeds.len());
    }
    let undecided = reports.iter().any(|r| r.verdict == RunVerdict::Unknown);
    // A violation found is a verdict; otherwise a sweep cut short, or a run that ended with
    // someone waiting and no deadlock, is no pass.
    Ok(match (failed, unfinished || undecided) {
        (true, _) => Exit::Failed,
        (false, true) => Exit::Unknown,
        (false, false) => Exit::Passed,
    })
}

/// The seed a run starts from: the flag's, else `$ZKLAB_SEED`, else 1.
pub(super) fn first_seed(flag: Option<u64>) -> Result<u64, BadInput> {
    match (flag, std::env::var("ZKLAB_SEED")) {
        (Some(seed), _) => Ok(seed),
        (None, Ok(text)) => text.trim().parse().map_err(|_| BadInput(format!("ZKLAB_SEED `{text}` is not a seed"))),
        (None, Err(_)) => Ok(1),
    }
}

fn parse_latency(text: &str) -> Result<Latency, BadInput> {
    let bad = || BadInput(format!("--latency-us must look like 100..400 (or 100..400,2000..9000), got `{text}`"));
    let (lo, hi) = text.split_once("..").ok_or_else(bad)?;
    let (min_us, max_us) = (lo.trim().parse().map_err(|_| bad())?, hi.trim().parse().map_err(|_| bad())?);
    Ok(Latency { min_us, max_us })
}

fn write_trace(args: &Args, report: &RunReport, trace: &crate::trace::Trace) -> Result<String, BadInput> {
    let cant = |e: std::io::Error| BadInput(format!("cannot write traces to {}: {e}", args.trace_dir.display()));
    std::fs::create_dir_all(&args.trace_dir).map_err(cant)?;
    let file = args.trace_dir.join(trace_name(args, report, trace));
    trace.write(&file).map_err(cant)?;
    if args.html {
        crate::html::write_beside(trace, &file).map_err(cant)?;
    }
    Ok(file.display().to_string())
}

/// The file a run's trace is written to in the trace directory.
fn trace_name(args: &Args, report: &RunReport, trace: &crate::trace::Trace) -> String {
    format!(
        "sim-{}-n{}-seed{}-{}.json",
        trace.scenario.recipe_label().replace(',', "+"),
        args.clients,
        report.seed,
        trace.verdict.property
    )
}

/// The command that runs exactly this seed again.
fn reproduce(args: &Args, seed: u64) -> String {
    let mut words = vec![super::program_for(&args.recipe)];
    words.extend(run_args(args, seed, &args.faults));
    if let Some(schedule) = &args.schedule {
        words.extend(["--schedule".to_string(), schedule.display().to_string()]);
    }
    words.join(" ")
}

/// The `simulate` arguments that fix a run, apart from its schedule.
fn run_args(args: &Args, seed: u64, faults: &str) -> Vec<String> {
    let mut words: Vec<String> = [
        "simulate",
        "--recipe",
        &args.recipe,
        "--clients",
        &args.clients.to_string(),
        "--rounds",
        &args.rounds.to_string(),
        "--seed",
        &seed.to_string(),
        "--faults",
        faults,
        "--chaos-ms",
        &args.chaos_ms.to_string(),
        "--hold-ms",
        &args.hold_ms.to_string(),
        "--latency-us",
        &args.latency_us,
        "--start-spread-ms",
        &args.start_spread_ms.to_string(),
        "--client",
        args.client.name(),
    ]
    .iter()
    .map(|w| w.to_string())
    .collect();
    if let Some(ms) = args.heal_ms {
        words.extend(["--heal-ms".to_string(), ms.to_string()]);
    }
    if let Some(bytes) = args.jute_maxbuffer {
        words.extend(["--jute-maxbuffer".to_string(), bytes.to_string()]);
    }
    words
}

/// `--search`: random schedules, the first failing one shrunk and kept.
fn search(args: &Args, scenario: &Scenario, config: &SimConfig, cases: u32, seed: u64) -> Result<Exit, CliError> {
    let kinds: Vec<zklab_model::FaultKind> =
        zklab_model::FaultKind::ALL.into_iter().filter(|k| config.rated(*k)).collect();
    stop_on_ctrl_c();
    let progress = (!args.quiet).then_some(progress_to_stderr as crate::progress::Progress);
    let budget = args.budget.starting_now();
    let searched = crate::schedules::search(scenario, config, &kinds, (cases, args.max_faults), progress, &budget)?;
    let Some(found) = searched.found else {
        if let Some(stopped) = searched.stopped {
            say!(
                "{}: {} of {cases} schedules of up to {} faults tried, none breaks a property so far",
                stopped.what_ran_out(),
                searched.tried,
                args.max_faults
            );
            return Ok(Exit::Unknown);
        }
        if let (n @ 1.., first) = &searched.undecided {
            say!(
                "{cases} schedules of up to {} faults: none breaks a property, but {n} ended with a client still \
                 waiting and no deadlock (unknown): {}",
                args.max_faults,
                first.as_deref().unwrap_or("")
            );
            return Ok(Exit::Unknown);
        }
        say!("{cases} schedules of up to {} faults: none breaks a property", args.max_faults);
        return Ok(Exit::Passed);
    };
    let report = &found.report;
    let (Some(property), Some(trace)) = (report.violated.clone(), report.trace.as_ref()) else {
        return Err(BadInput("the shrunk schedule no longer fails (the run is not deterministic)".to_string()).into());
    };
    let cant = |e: std::io::Error| BadInput(format!("cannot write to {}: {e}", args.trace_dir.display()));
    std::fs::create_dir_all(&args.trace_dir).map_err(cant)?;
    let stem = format!("sched-{}-n{}-{property}", args.recipe.replace(',', "+"), args.clients);
    let schedule_file = args.trace_dir.join(format!("{stem}.json"));
    let schedule = Schedule {
        faults: found.faults.clone(),
        breaks: Some(Breaks { args: run_args(args, seed, "none"), property: trace.verdict.property }),
    };
    write_output(&schedule_file, &schedule.to_json(), Output::Json).map_err(cant)?;
    let trace_file = args.trace_dir.join(format!("{stem}-trace.json"));
    trace.write(&trace_file).map_err(cant)?;
    if args.html {
        crate::html::write_beside(trace, &trace_file).map_err(cant)?;
    }
    say!(
        "schedule {} of {cases} breaks {property}; shrunk in {} runs to {} fault(s):",
        found.tried,
        found.shrink_runs,
        found.faults.len()
    );
    for f in &found.faults {
        say!("  at {} ms: {} on c{}", f.at_ms, f.fault, f.client);
    }
    say!("  {}", report.detail.as_deref().unwrap_or(""));
    say!("schedule: {}", schedule_file.display());
    say!("trace: {}", trace_file.display());
    say!(
        "reproduce: {} {} --schedule {}",
        super::program_for(&args.recipe),
        run_args(args, seed, "none").join(" "),
        schedule_file.display()
    );
    if let Some(stopped) = searched.stopped {
        say!(
            "{} while shrinking: the schedule above breaks {property} but may not be the smallest",
            stopped.what_ran_out()
        );
    }
    Ok(Exit::Failed)
}

fn print_summary(reports: &[RunReport], wall: std::time::Duration) {
    let steps: u64 = reports.iter().map(|r| r.metrics.steps).sum();
    let passed = reports.iter().filter(|r| r.verdict == RunVerdict::Passed).count();
    if let [one] = reports {
        let (m, h) = (&one.metrics, &one.herd);
        say!(
            "{} steps in {:.1} s of virtual time: {} acquisitions, {} releases, {} notifications ({:.2} per release), \
                {} futile wakeups",
            m.steps,
            m.virtual_us as f64 / 1e6,
            m.acquisitions,
            m.releases,
            m.notifications,
            h.notifications_per_release,
            m.futile_wakeups
        );
        say!(
            "per acquisition: {:.2} getChildren, {:.2} requests; latency ms p50 {:.1} p90 {:.1} p99 {:.1} max {:.1}; \
                fairness {:.3}",
            h.get_children_per_acquisition,
            h.requests_per_acquisition,
            h.latency_ms_p50,
            h.latency_ms_p90,
            h.latency_ms_p99,
            h.latency_ms_max,
            h.fairness
        );
    }
    for (seed, m) in reports.iter().map(|r| (r.seed, &r.metrics)).filter(|(_, m)| m.refused_replies > 0) {
        let shortest =
            m.shortest_refused_listing.map_or(String::new(), |n| format!(" (the shortest a listing of {n} children)"));
        say!(
            "seed {seed}: {} replies longer than jute.maxbuffer{shortest}; each dropped its client's connection",
            m.refused_replies
        );
    }
    let secs = wall.as_secs_f64().max(1e-9);
    let unknown = reports.iter().filter(|r| r.verdict == RunVerdict::Unknown).count();
    let unknown = match unknown {
        0 => String::new(),
        n => format!(", {n} unknown (someone still waited, no deadlock)"),
    };
    say!(
        "{passed} of {} runs passed{unknown}; {steps} steps in {:.2} s wall ({:.0} simulated operations/s)",
        reports.len(),
        secs,
        steps as f64 / secs
    );
}
