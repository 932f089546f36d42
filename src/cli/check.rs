//! `zklab check`: one scenario explored and every property judged (or a manifest of them), the
//! report printed with each counterexample's timeline.

use super::{progress_to_stderr, stop_on_ctrl_c, CliError, WorldArgs};
use crate::check::{self, Options, Report};
use crate::exit::Exit;
use crate::progress::Progress;
use crate::scenario::{parse_faults, BadInput, Scenario};
use crate::shard::{Shard, ShardReport};
use std::path::{Path, PathBuf};
use zklab_model::{Property, WorldConfig};

#[derive(clap::Args)]
pub struct Args {
    /// Recipe name, or a comma list of one name per client.
    #[arg(long, required_unless_present = "manifest")]
    recipe: Option<String>,
    /// Run every entry of a manifest (tests/manifest.json) and compare with its expectations.
    /// Each entry names its own world and the manifest's counts are of the full graph, so the
    /// flags that describe a world or a search are refused beside it.
    #[arg(long, conflicts_with_all = MANIFEST_REFUSES)]
    manifest: Option<PathBuf>,
    #[command(flatten)]
    world: WorldArgs,
    /// Start the lock's sequence counter here (e.g. 2147483647 to cross the 32-bit wrap).
    #[arg(long, default_value_t = 0, allow_hyphen_values = true)]
    first_sequence: i32,
    /// The Java client's jute.maxbuffer in bytes: a reply longer than this drops its connection,
    /// as with a real client (default: no limit; the client's own 1048575 is far above any
    /// checked world). Switches symmetry and renumbering off: names' lengths then matter.
    #[arg(long, value_name = "BYTES")]
    jute_maxbuffer: Option<u64>,
    /// Threads that expand states (the answer does not depend on it).
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// After a complete run, have stateright's own checker explore the same model and compare
    /// its state count and verdicts (exit 1 if they differ). Implies --continue.
    #[arg(long)]
    cross_check: bool,
    /// Stop after this many unique states (the answer is then unknown, exit 3).
    #[arg(long, default_value_t = 50_000_000)]
    max_states: usize,
    #[command(flatten)]
    budget: super::budget_args::BudgetArgs,
    /// Explore one state per symmetry class: clients running the same recipe are
    /// interchangeable (recipes that support it; state counts are then counts of classes).
    #[arg(long)]
    symmetry: bool,
    /// Explore every interleaving, without taking a client's invisible local steps alone
    /// (partial-order reduction; see docs/reference.md): to compare state counts.
    #[arg(long)]
    no_partial_order: bool,
    /// Explore everything and judge every property, instead of stopping once the
    /// breadth-first level of the first violation or deadlock is finished (the default, as in
    /// Spin and TLC: its counterexample is the shortest either way).
    #[arg(long = "continue")]
    explore_everything: bool,
    /// For worlds too big to exhaust: take this many seeded random walks instead of the
    /// exhaustive search. Reports the violations they meet and the states they covered; never
    /// says a property holds (always bounded, exit 1 or 3).
    #[arg(long, value_name = "WALKS")]
    swarm: Option<u64>,
    /// With --swarm: the longest walk, in steps.
    #[arg(long, default_value_t = 200, requires = "swarm")]
    walk_depth: usize,
    /// With --swarm: the seed of the walks' random streams (same seed, same report).
    #[arg(long, default_value_t = 0, requires = "swarm")]
    seed: u64,
    /// With --swarm: take only the I-th of N equal parts of the walks (`2/4`), one job of a
    /// campaign split across machines. `--json` then prints the shard's report, which
    /// `zklab merge` combines.
    #[arg(long, value_name = "I/N", requires = "swarm", value_parser = crate::shard::Shard::parse)]
    shard: Option<crate::shard::Shard>,
    /// Keep states with their sequence numbers and zxids as they are, not renumbered by rank
    /// (to compare: a recipe that creates nodes forever then never closes).
    #[arg(long)]
    no_renumber: bool,
    /// Judge only these properties (comma list, e.g. belief_exclusion,eventual_acquire), of
    /// those that apply to the recipe; the others are reported `not applicable`. The
    /// `reached:*` items are always judged: a proof that never reaches its faults is vacuous.
    #[arg(long, value_name = "NAMES")]
    properties: Option<String>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
    /// Where counterexample traces are written.
    #[arg(long, default_value = "zklab-traces")]
    trace_dir: PathBuf,
    /// Also write each counterexample's HTML timeline beside its trace (`.html`).
    #[arg(long)]
    html: bool,
    /// Print no progress.
    #[arg(long, short)]
    quiet: bool,
}

/// What `--manifest` cannot honour: its entries name their worlds, it counts the full graph
/// and writes no traces. The budgets, `--threads`, `--cross-check`, `--json` and `-q` apply.
const MANIFEST_REFUSES: [&str; 17] = [
    "recipe",
    "clients",
    "faults",
    "rounds",
    "client",
    "first_sequence",
    "jute_maxbuffer",
    "symmetry",
    "no_partial_order",
    "explore_everything",
    "swarm",
    "no_renumber",
    "properties",
    "trace_dir",
    "html",
    "walk_depth",
    "shard",
];

/// `--threads` is between 1 and 256 (`check` and `suite`).
pub(super) fn check_threads(threads: usize) -> Result<(), CliError> {
    match (1..=256).contains(&threads) {
        true => Ok(()),
        false => Err(CliError::BadInput(format!("--threads must be between 1 and 256, got {threads}"))),
    }
}

/// Runs a check (or a manifest) and prints its report.
pub fn run(args: &Args) -> Result<Exit, CliError> {
    check_threads(args.threads)?;
    args.budget.validate()?;
    if args.max_states == 0 {
        return Err(CliError::BadInput("--max-states must be at least 1".to_string()));
    }
    if let Some(file) = &args.manifest {
        return run_manifest(file, args);
    }
    if let Some(walks) = args.swarm {
        if !(1..=1_000_000_000).contains(&walks) {
            return Err(CliError::BadInput(format!("--swarm must be between 1 and 1000000000 walks, got {walks}")));
        }
        if !(1..=1_000_000).contains(&args.walk_depth) {
            return Err(CliError::BadInput(format!(
                "--walk-depth must be between 1 and 1000000, got {}",
                args.walk_depth
            )));
        }
        if args.symmetry || args.cross_check || args.explore_everything || args.no_partial_order {
            return Err(CliError::BadInput(
                "--swarm walks the world as it is: --symmetry, --cross-check, --continue and --no-partial-order are \
                    for the exhaustive search"
                    .to_string(),
            ));
        }
    }
    let config = WorldConfig {
        rounds: args.world.rounds,
        first_sequence: args.first_sequence,
        faults: parse_faults(&args.world.faults)?,
        client_behaviour: args.world.client.behaviour(),
        jute_maxbuffer: args.world.client.jute_maxbuffer(args.jute_maxbuffer)?,
        renumber: !args.no_renumber,
        ..WorldConfig::default()
    };
    let recipe = args.recipe.as_deref().unwrap_or_default();
    let scenario = Scenario::new(recipe, args.world.clients, config)?;
    if args.symmetry && args.jute_maxbuffer.is_some() {
        return Err(CliError::BadInput(
            "--symmetry renames clients, which changes the lengths of their names: it cannot be used with \
                --jute-maxbuffer"
                .to_string(),
        ));
    }
    if args.symmetry && scenario.world().canonical().is_none() {
        return Err(CliError::BadInput(format!(
            "--symmetry needs clients that all run one recipe that supports renaming (`{recipe}` does not)"
        )));
    }
    let properties = args.properties.as_deref().map(|names| asked_properties(names, &scenario)).transpose()?;
    let shard = args.shard.unwrap_or(Shard::WHOLE);
    if let Some(total) = args.swarm.filter(|total| shard.count > *total) {
        return Err(BadInput(format!("--shard {shard}: {total} walks cannot be cut into {} parts", shard.count)).into());
    }
    // What fixes a shard's walks, for `zklab merge` to hold its shards together.
    let campaign = args.shard.is_some().then(|| {
        serde_json::json!({
            "command": "check --swarm",
            "scenario": scenario,
            "walks": args.swarm,
            "depth": args.walk_depth,
            "seed": args.seed,
            "properties": properties.as_ref().map(|ps| ps.iter().map(|p| p.name()).collect::<Vec<_>>()),
        })
    });
    crate::user_files::check_writable(&args.trace_dir)?;
    crate::trace_files::traces_replaceable(&scenario, &args.trace_dir, args.html).map_err(BadInput)?;
    let options = Options {
        threads: args.threads,
        max_states: args.max_states,
        timeout: args.budget.timeout(),
        max_memory_mib: args.budget.max_memory_mib(),
        progress: (!args.quiet).then_some(progress_to_stderr as Progress),
        symmetry: args.symmetry,
        partial_order: !args.no_partial_order,
        cross_check: args.cross_check,
        settle: true,
        // stateright's second opinion is of a complete graph.
        stop_at_violation: !args.explore_everything && !args.cross_check,
        swarm: args.swarm.map(|total| {
            let part = shard.range(total);
            check::Walks { first: part.start, walks: part.end - part.start, depth: args.walk_depth, seed: args.seed }
        }),
        interrupt: Some(&crate::interrupt::INTERRUPTED),
        properties,
    };
    stop_on_ctrl_c();
    let mut report = check::run(&scenario, &options);
    crate::trace_files::write(&mut report, &args.trace_dir, args.html)
        .map_err(|e| BadInput(format!("cannot write traces: {e}")))?;
    if let (Some(shard), Some(total), Some(campaign)) = (args.shard, args.swarm, campaign) {
        let part = ShardReport::of_swarm(&report, campaign, total, shard);
        match args.json {
            true => say!("{}", serde_json::to_string(&part).expect("shard reports serialize")),
            false => {
                let walks = shard.range(total);
                say!("shard {shard}: walks {} to {} of {total}", walks.start, walks.end - 1);
                print_report(&report);
            }
        }
    } else if args.json {
        say!("{}", serde_json::to_string(&report).expect("reports serialize"));
    } else {
        print_report(&report);
    }
    Ok(report.exit())
}

/// The properties `--properties` names, each known and applying to the scenario's recipe (a
/// property the recipe says does not apply cannot be asked for: it would be reported
/// `not applicable` and proven nothing).
fn asked_properties(names: &str, scenario: &Scenario) -> Result<Vec<Property>, CliError> {
    let world = scenario.world();
    let applicable = Property::applicable(&world);
    let mut asked = Vec::new();
    for name in names.split(',').map(str::trim) {
        let property: Property = name.parse().map_err(|e| BadInput(format!("--properties: {e}")))?;
        if property.kind() == check::properties::Kind::Reached {
            return Err(
                BadInput(format!("--properties: `{name}` is always judged (a proof must reach its faults)")).into()
            );
        }
        if !applicable.contains(&property) {
            return Err(BadInput(format!("--properties: `{name}` does not apply to this scenario")).into());
        }
        if !asked.contains(&property) {
            asked.push(property);
        }
    }
    Ok(asked)
}

/// Runs a manifest: one table row per entry; exit 1 on any deviation, else 3 if a budget or a
/// signal left an entry undecided.
fn run_manifest(file: &Path, args: &Args) -> Result<Exit, CliError> {
    let text =
        crate::user_files::read_input(file).map_err(|e| BadInput(format!("cannot read {}: {e}", file.display())))?;
    let entries = crate::manifest::parse(&text).map_err(|e| BadInput(format!("{}: {e}", file.display())))?;
    let options = Options {
        threads: args.threads,
        max_states: args.max_states,
        timeout: args.budget.timeout(),
        max_memory_mib: args.budget.max_memory_mib(),
        progress: (!args.quiet).then_some(progress_to_stderr as Progress),
        // The manifest's counts are of the full graph (`manifest::run` says so itself).
        symmetry: false,
        partial_order: false,
        cross_check: args.cross_check,
        settle: true,
        // Every property of every entry is compared, and every count.
        stop_at_violation: false,
        swarm: None,
        interrupt: Some(&crate::interrupt::INTERRUPTED),
        properties: None,
    };
    stop_on_ctrl_c();
    let (mut failed, mut undecided, mut run) = (0, 0, 0);
    let mut rows = Vec::new();
    if !args.json {
        say!("{:<50} {:>10}  verdict", "entry", "states");
    }
    for (i, entry) in entries.iter().enumerate() {
        if crate::interrupt::interrupted() {
            break;
        }
        if !args.quiet {
            eprintln!("[{}/{}] {}", i + 1, entries.len(), entry.label);
        }
        let (report, deviations) = crate::manifest::run(entry, &options);
        run += 1;
        let bounded = report.outcome.spent.map(|spent| format!("BOUNDED: {}", spent.what_ran_out()));
        failed += usize::from(!deviations.is_empty());
        undecided += usize::from(deviations.is_empty() && bounded.is_some());
        let verdict = match (deviations.is_empty(), &bounded) {
            (false, _) => deviations.join("; "),
            (true, Some(bounded)) => format!("unknown ({bounded})"),
            (true, None) => "as expected".to_string(),
        };
        if args.json {
            rows.push(serde_json::json!({
                "entry": entry.label,
                "unique_states": report.outcome.unique_states,
                "deviations": deviations,
                "bounded_by": report.outcome.spent,
            }));
        } else {
            say!("{:<50} {:>10}  {verdict}", entry.label, report.outcome.unique_states);
        }
    }
    let as_expected = run - failed - undecided;
    let not_run = entries.len() - run;
    if args.json {
        let summary = serde_json::json!({
            "entries": rows,
            "as_expected": as_expected,
            "deviating": failed,
            "unknown": undecided,
            "not_run": not_run,
            "total": entries.len(),
        });
        say!("{summary}");
    } else {
        let mut tail = String::new();
        if undecided > 0 {
            tail += &format!("; {undecided} unknown (a budget ran out)");
        }
        if not_run > 0 {
            tail += &format!("; {not_run} not run (interrupted)");
        }
        say!("{as_expected} of {} entries as expected{tail}", entries.len());
    }
    Ok(match (failed, undecided + not_run) {
        (0, 0) => Exit::Passed,
        (0, _) => Exit::Unknown,
        _ => Exit::Failed,
    })
}

fn print_report(report: &Report) {
    let faults = if report.faults.is_empty() { "none".to_string() } else { report.faults.join(",") };
    say!(
        "{} x{} (faults: {faults}; client: {:?}; rounds: {}): {} unique {}, {} total, depth {}, {} ms{}",
        report.recipe,
        report.clients,
        report.client_behaviour,
        match report.rounds {
            zklab_model::UNBOUNDED_ROUNDS => "unbounded".to_string(),
            n => n.to_string(),
        },
        report.outcome.unique_states,
        if report.outcome.symmetric { "symmetry classes" } else { "states" },
        report.outcome.total_states,
        report.outcome.max_depth,
        report.outcome.elapsed_ms,
        match (report.outcome.swarm.is_some(), report.outcome.bounded, report.outcome.spent) {
            (_, _, Some(spent)) => format!(" (BOUNDED: {})", spent.what_ran_out()),
            (true, _, None) => " (BOUNDED: random walks prove nothing)".to_string(),
            (false, true, None) => " (BOUNDED: a budget ran out)".to_string(),
            (false, false, _) => String::new(),
        }
    );
    if let Some(swarm) = &report.outcome.swarm {
        say!(
            "  swarm: {} walks of at most {} steps (seed {}) met {} distinct states in {} visits; the chance that the \
                next visit meets a new one is {:.3} (Good-Turing). What no walk met is unknown.",
            swarm.walks,
            swarm.depth,
            swarm.seed,
            swarm.distinct_states,
            swarm.visits,
            swarm.chance_next_is_new
        );
    }
    if report.outcome.stopped {
        say!(
            "  stopped at the first violation, every state to depth {} judged: what was not decided by then is unknown \
                (starving cycles need the whole graph); --continue explores everything",
            report.outcome.max_depth
        );
    }
    if let Some(why) = &report.outcome.symmetry_refused {
        say!("  --symmetry refused: the recipe claims its clients are interchangeable, but {why}; judged without it");
    }
    if report.outcome.renumbered_by_replay {
        say!("  {}", check::REPLAY_TEXT);
    }
    if let Some(why) = &report.outcome.renumbering_refused {
        say!(
            "  renumbering refused: the recipe claims only the order of its numbers matters, but {why}; judged \
            without it"
        );
    }
    for p in &report.properties {
        say!(
            "  {:<28} {}",
            p.name,
            check::status_text(p.status, report.outcome.stopped, report.outcome.swarm.is_some())
        );
    }
    say!(
        "  states are 128-bit keyed digests, 102 bits compared: the chance that two states or parts were taken for one \
            is below {:.1e}, for any recipe (SipHash under a key drawn for this run, taken as a pseudo-random \
            function)",
        report.outcome.collision_probability
    );
    if let Some(growing) = &report.outcome.growing_numbers {
        say!("  {}", check::growing_numbers_text(growing));
    }
    if let Some(cross) = &report.outcome.cross_check {
        match cross.agrees() {
            true => say!("  stateright agrees ({} unique states)", cross.stateright_unique_states),
            false if !cross.complete => say!(
                "  cross-check unknown: stateright did not finish within the budget ({} unique states)",
                cross.stateright_unique_states
            ),
            false => {
                for d in &cross.disagreements {
                    say!("  CROSS-CHECK FAILED: {d}");
                }
            }
        }
    }
    for p in &report.properties {
        if let (Some(trace), Some(file)) = (&p.trace, &p.trace_file) {
            say!("\n{} counterexample, {} steps ({file}):", p.name, trace.steps.len());
            match crate::timeline::render(trace) {
                Ok(text) => say_raw!("{text}"),
                Err(e) => say!("  (cannot render: {e})"),
            }
        }
    }
}
