//! The zklab command line. Exit codes: 0 all properties hold, 1 a property is violated (or the
//! proof is vacuous), 2 bad input, 3 a budget ran out before the answer.

use clap::{Parser, Subcommand};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;
use zklab::check::bfs::Spent;
use zklab::check::{self, Options, Report, Status};
use zklab::scenario::{parse_faults, BadInput, ClientChoice, Scenario};
use zklab::simulate_cli::{self, SimulateArgs};
use zklab::trace::Trace;

/// The checker clones and drops millions of small states per second; glibc's allocator spends
/// most of a run consolidating their freed blocks, mimalloc does not.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_purge_delay` in mimalloc's `mi_option_t` (include/mimalloc.h, for the pinned
/// libmimalloc-sys): how long freed memory stays mapped before it goes back to the system.
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// A checker's memory use only grows until the end of a run, and what one level of states frees
/// the next one needs again: memory handed back to the system comes back as fresh pages the
/// kernel must zero first (measured: 7,805 page faults against 576 and 10% of the run for the
/// standard lock with 4 clients). So freed memory is never given back during the run.
fn keep_freed_memory() {
    // SAFETY: sets one of mimalloc's own options to a value its header documents (-1: never
    // purge); it takes effect from the next purge and touches nothing else.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1) }
}
use zklab::{say, say_raw, suite, timeline};
use zklab_model::WorldConfig;

#[derive(Parser)]
#[command(
    name = "zklab",
    version,
    about = "Proves or breaks ZooKeeper lock recipes. With no command, runs the built-in suite.",
    after_help = "Examples:
  zklab check --recipe standard --clients 3 --faults loss-after-apply,expire   prove the standard lock
  zklab check --recipe wait-on-null --clients 2          a broken recipe: its shortest counterexample
  zklab replay --show zklab-traces/wait-on-null-n2-eventual_acquire.json   the trace as a timeline
  zklab simulate --recipe standard --clients 1000 --faults loss-after-apply=0.01,expire=3
  zklab recipes                                          every recipe, its flaw, the fault names"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Explore every interleaving and fault of a scenario and judge every property.
    Check(CheckArgs),
    /// List the recipes, their flaws and the fault names.
    Recipes,
    /// Re-apply a trace's steps and re-check its verdict.
    Replay {
        trace: PathBuf,
        /// Print the timeline too.
        #[arg(long)]
        show: bool,
        /// Print the trace as a Mermaid sequence diagram too.
        #[arg(long)]
        mermaid: bool,
        /// Write the trace as a self-contained HTML timeline (to `-o`, else beside the trace).
        #[arg(long)]
        html: bool,
        /// Where `--html` writes the page.
        #[arg(long, short, requires = "html")]
        output: Option<PathBuf>,
    },
    /// Play the scheduler in a local page: pick each next step, see the state, undo, load a
    /// trace; with a broken recipe, reach its violation ("break it").
    Explore(ExploreArgs),
    /// Simulate many clients with latencies, timeouts and faults from a seed, judging every run.
    Simulate(SimulateArgs),
    /// Measure the herd effect: each recipe fault-free at each client count, a table and an SVG
    /// chart of notifications per release.
    Herd {
        /// Comma list of recipes.
        #[arg(long, default_value = "standard,parent-watch,naive")]
        recipes: String,
        /// Comma list of client counts.
        #[arg(long, default_value = "5,10,25,50,100")]
        clients: String,
        /// The simulator's seed for every run of the table.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Where the chart is written (its directory is made if need be).
        #[arg(long, short = 'o', default_value = "zklab-traces/herd.svg")]
        svg: PathBuf,
        /// Print the rows as JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// How far simulation can be trusted: which fraction of the checker's states a number of
    /// simulated seeds reaches, for a world small enough to explore.
    Calibrate {
        /// The recipe every client runs.
        #[arg(long, default_value = "standard")]
        recipe: String,
        /// How many clients: few enough for the checker to explore every state.
        #[arg(long, default_value_t = 3)]
        clients: usize,
        /// The checker's faults (each once); the simulator runs them as rates.
        #[arg(long, default_value = "loss-after-apply")]
        faults: String,
        /// Client library behaviour on reconnect.
        #[arg(long, value_enum, default_value = "java")]
        client: ClientChoice,
        /// Comma list of seed counts to report.
        #[arg(long, default_value = "1,10,100,1000")]
        seeds: String,
        /// Refuse worlds with more states than this.
        #[arg(long, default_value_t = 2_000_000)]
        max_states: usize,
        /// Print the rows as JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Run the built-in suite: the standard lock proven, every broken variant caught.
    Suite(SuiteArgs),
    /// Run a ZooKeeper op script (conformance/FORMAT.md) against the model, or a live server,
    /// and print the results.
    ZkScript {
        script: PathBuf,
        /// Compare with a recorded result file and list the differences (exit 1 if any).
        #[arg(long)]
        expect: Option<PathBuf>,
        /// Run against the ZooKeeper server at HOST:PORT instead of the model (its tree is
        /// cleaned first: every top-level node but /zookeeper is deleted).
        #[arg(long, value_name = "HOST:PORT")]
        server: Option<String>,
        /// The client library whose behaviour over a cut connection (`disconnect`, `reconnect`)
        /// and whose jute.maxbuffer the session handles have [default: java, as for check and
        /// simulate; a single-library recording cannot tell the libraries apart].
        #[arg(long, value_enum)]
        client: Option<ClientChoice>,
    },
    /// Differential fuzzing: run random op scripts against the model and a live ZooKeeper; on a
    /// difference, shrink the script, save it with the server's answer as a case, exit 1.
    ZkFuzz {
        /// The ZooKeeper server (its tree is cleaned before every script).
        #[arg(long, value_name = "HOST:PORT")]
        server: String,
        /// How many scripts to compare.
        #[arg(long, default_value_t = 100)]
        scripts: u32,
        /// The random seed: the same seed makes the same scripts.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Where a shrunk mismatch is saved (as DIR/cases/NN-fuzz-seed-S.json and
        /// DIR/expected/NN-fuzz-seed-S.json).
        #[arg(long, value_name = "DIR", default_value = "zklab-fuzz")]
        save_dir: PathBuf,
        /// At most this many shrinking steps (each runs the server once).
        #[arg(long, default_value_t = 200)]
        max_shrink: u32,
    },
    /// Print a shell completion script: `zklab completions bash > ~/.local/share/bash-completion/completions/zklab`.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
}

#[derive(clap::Args)]
struct CheckArgs {
    /// Recipe name, or a comma list of one name per client.
    #[arg(long, required_unless_present = "manifest")]
    recipe: Option<String>,
    /// Run every entry of a manifest (tests/manifest.json) and compare with its expectations.
    #[arg(long, conflicts_with = "recipe")]
    manifest: Option<PathBuf>,
    #[arg(long, default_value_t = 2)]
    clients: usize,
    /// Comma list of faults (loss-before-apply, loss-after-apply, disconnect, expire, crash, pause,
    /// lagging-read, reap-parent), each once or `kind=N` times, `all` or `none`.
    #[arg(long, default_value = "none")]
    faults: String,
    /// How many times each client acquires and releases (1 to 254), or `unbounded`: each client
    /// asks again whenever it is idle, forever, so starvation by overtaking can be found.
    #[arg(long, default_value = "1", value_parser = parse_rounds)]
    rounds: u8,
    /// Start the lock's sequence counter here (e.g. 2147483647 to cross the 32-bit wrap).
    #[arg(long, default_value_t = 0, allow_hyphen_values = true)]
    first_sequence: i32,
    /// Client library behaviour on reconnect.
    #[arg(long, value_enum, default_value = "java")]
    client: ClientChoice,
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
    /// Stop after this many seconds (the answer is then unknown, exit 3).
    #[arg(long)]
    timeout: Option<u64>,
    /// Stop when memory use passes this many MiB (default: three quarters of the machine's).
    #[arg(long)]
    max_memory: Option<u64>,
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
    /// Keep states with their sequence numbers and zxids as they are, not renumbered by rank
    /// (to compare: a recipe that creates nodes forever then never closes).
    #[arg(long)]
    no_renumber: bool,
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

#[derive(clap::Args)]
struct ExploreArgs {
    /// Recipe name, or a comma list of one name per client.
    #[arg(long, required_unless_present = "trace", conflicts_with = "trace")]
    recipe: Option<String>,
    #[arg(long, default_value_t = 2)]
    clients: usize,
    /// Faults the learner may inject, as for `check` (each once, or `kind=N` times).
    #[arg(long, default_value = "none")]
    faults: String,
    /// How many times each client acquires and releases, or `unbounded`.
    #[arg(long, default_value = "1", value_parser = parse_rounds)]
    rounds: u8,
    /// Client library behaviour on reconnect.
    #[arg(long, value_enum, default_value = "java")]
    client: ClientChoice,
    /// Start at the end of this trace, in its world (step back with undo).
    #[arg(long)]
    trace: Option<PathBuf>,
    /// The local port to serve on (default: a free one, printed).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// How long the checker may look for the shortest violation to set as the goal, in seconds.
    #[arg(long, default_value_t = 30)]
    goal_timeout: u64,
}

#[derive(clap::Args)]
struct SuiteArgs {
    /// Threads that expand states (the answers do not depend on it).
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// Where the broken variants' counterexamples are written.
    #[arg(long, default_value = "zklab-traces")]
    trace_dir: PathBuf,
}

fn main() -> ExitCode {
    keep_freed_memory();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if e.use_stderr() => {
            eprintln!("{} (see zklab --help)", one_line(&e.to_string()));
            return ExitCode::from(2);
        }
        Err(e) => {
            say_raw!("{e}");
            return ExitCode::SUCCESS;
        }
    };
    let code = match cli.command {
        None => suite::run(&suite::Settings::default()),
        Some(Command::Suite(args)) => match zklab::trace::check_writable(&args.trace_dir) {
            Ok(()) => suite::run(&suite::Settings { threads: args.threads, trace_dir: args.trace_dir }),
            Err(e) => {
                eprintln!("error: {e}");
                2
            }
        },
        Some(Command::Recipes) => list_recipes(),
        Some(Command::Replay { trace, show, mermaid, html, output }) => {
            let html = html.then(|| output.unwrap_or_else(|| trace.with_extension("html")));
            replay(&trace, show, mermaid, html.as_deref())
        }
        Some(Command::ZkScript { script, expect, server, client }) => {
            let client = client.map_or(zklab::conformance::DEFAULT_CLIENT, ClientChoice::behaviour);
            zk_script(&script, expect.as_deref(), server.as_deref(), client)
        }
        Some(Command::Herd { recipes, clients, seed, svg, json }) => {
            match herd_command(&recipes, &clients, seed, &svg, json) {
                Ok(code) => code,
                Err(BadInput(message)) => {
                    eprintln!("error: {message}");
                    2
                }
            }
        }
        Some(Command::Calibrate { recipe, clients, faults, client, seeds, max_states, json }) => {
            match calibrate_command(&recipe, clients, &faults, client, &seeds, max_states, json) {
                Ok(code) => code,
                Err(BadInput(message)) => {
                    eprintln!("error: {message}");
                    2
                }
            }
        }
        Some(Command::Simulate(args)) => match simulate_cli::command(&args) {
            Ok(code) => code,
            Err(BadInput(message)) => {
                eprintln!("error: {message}");
                2
            }
        },
        Some(Command::Completions { shell }) => {
            clap_complete::generate(
                shell,
                &mut <Cli as clap::CommandFactory>::command(),
                "zklab",
                &mut std::io::stdout(),
            );
            0
        }
        Some(Command::ZkFuzz { server, scripts, seed, save_dir, max_shrink }) => {
            let options =
                zklab::conformance::FuzzOptions { server, scripts, seed, max_shrink_iters: max_shrink, progress: true };
            zk_fuzz(&options, &save_dir)
        }
        Some(Command::Explore(args)) => match explore_command(&args) {
            Ok(code) => code,
            Err(BadInput(message)) => {
                eprintln!("error: {message}");
                2
            }
        },
        Some(Command::Check(args)) => match check_command(&args) {
            Ok(code) => code,
            Err(BadInput(message)) => {
                eprintln!("error: {message}");
                2
            }
        },
    };
    ExitCode::from(code as u8)
}

/// clap's message up to its usage section, on one line (it names missing arguments on the
/// lines after the first).
fn one_line(message: &str) -> String {
    let words: Vec<&str> = message
        .lines()
        .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more information"))
        .flat_map(str::split_whitespace)
        .collect();
    if words.is_empty() {
        "error: bad arguments".to_string()
    } else {
        words.join(" ")
    }
}

/// `--rounds`: a count of rounds, or `unbounded`.
fn parse_rounds(text: &str) -> Result<u8, String> {
    if text == "unbounded" {
        return Ok(zklab_model::UNBOUNDED_ROUNDS);
    }
    match text.parse::<u8>() {
        Ok(n) if (1..zklab_model::UNBOUNDED_ROUNDS).contains(&n) => Ok(n),
        _ => Err(format!("must be a number from 1 to 254 or `unbounded`, got {text:?}")),
    }
}

fn explore_command(args: &ExploreArgs) -> Result<i32, BadInput> {
    if !(1..=3600).contains(&args.goal_timeout) {
        return Err(BadInput(format!("--goal-timeout must be between 1 and 3600 seconds, got {}", args.goal_timeout)));
    }
    let (scenario, start) = match &args.trace {
        Some(file) => {
            let trace = Trace::load(file).map_err(|e| BadInput(e.to_string()))?;
            (trace.scenario, trace.steps)
        }
        None => {
            let config = WorldConfig {
                rounds: args.rounds,
                faults: parse_faults(&args.faults)?,
                client_behaviour: args.client.behaviour(),
                ..WorldConfig::default()
            };
            (Scenario::new(args.recipe.as_deref().unwrap_or_default(), args.clients, config)?, Vec::new())
        }
    };
    zklab::explore::position(&scenario, &start).map_err(|e| BadInput(format!("the trace does not replay: {e}")))?;
    let server = tiny_http::Server::http(("127.0.0.1", args.port))
        .map_err(|e| BadInput(format!("cannot serve on 127.0.0.1:{}: {e}", args.port)))?;
    let address = server.server_addr().to_ip().map(|a| a.to_string()).unwrap_or_default();
    say!("looking for the shortest violation to set as the goal (at most {} s)...", args.goal_timeout);
    let goal = zklab::explore::goal(&scenario, Duration::from_secs(args.goal_timeout));
    match (&goal.property, goal.shortest) {
        (Some(property), Some(steps)) => say!("goal: break {property} (the shortest way takes {steps} steps)"),
        _ => say!("{}", goal.summary),
    }
    say!("zklab explore: http://{address}/ (only this machine can reach it; Ctrl-C stops)");
    zklab::explore::serve(&server, &scenario, &goal, &start);
    Ok(0)
}

fn check_command(args: &CheckArgs) -> Result<i32, BadInput> {
    if args.threads == 0 || args.threads > 256 {
        return Err(BadInput(format!("--threads must be between 1 and 256, got {}", args.threads)));
    }
    if args.max_states == 0 {
        return Err(BadInput("--max-states must be at least 1".to_string()));
    }
    if args.max_memory == Some(0) {
        return Err(BadInput("--max-memory must be at least 1 (MiB)".to_string()));
    }
    if let Some(file) = &args.manifest {
        return run_manifest(file, args);
    }
    if let Some(walks) = args.swarm {
        if !(1..=1_000_000_000).contains(&walks) {
            return Err(BadInput(format!("--swarm must be between 1 and 1000000000 walks, got {walks}")));
        }
        if !(1..=1_000_000).contains(&args.walk_depth) {
            return Err(BadInput(format!("--walk-depth must be between 1 and 1000000, got {}", args.walk_depth)));
        }
        if args.symmetry || args.cross_check || args.explore_everything || args.no_partial_order {
            return Err(BadInput(
                "--swarm walks the world as it is: --symmetry, --cross-check, --continue and --no-partial-order are for the exhaustive search"
                    .to_string(),
            ));
        }
    }
    let config = WorldConfig {
        rounds: args.rounds,
        first_sequence: args.first_sequence,
        faults: parse_faults(&args.faults)?,
        client_behaviour: args.client.behaviour(),
        jute_maxbuffer: args.client.jute_maxbuffer(args.jute_maxbuffer)?,
        renumber: !args.no_renumber,
        ..WorldConfig::default()
    };
    let recipe = args.recipe.as_deref().unwrap_or_default();
    let scenario = Scenario::new(recipe, args.clients, config)?;
    if args.symmetry && args.jute_maxbuffer.is_some() {
        return Err(BadInput(
            "--symmetry renames clients, which changes the lengths of their names: it cannot be used with --jute-maxbuffer"
                .to_string(),
        ));
    }
    if args.symmetry && scenario.world().canonical().is_none() {
        return Err(BadInput(format!(
            "--symmetry needs clients that all run one recipe that supports renaming (`{recipe}` does not)"
        )));
    }
    zklab::trace::check_writable(&args.trace_dir)?;
    let options = Options {
        threads: args.threads,
        max_states: args.max_states,
        timeout: args.timeout.map(Duration::from_secs),
        max_memory_mib: args.max_memory.or_else(check::default_max_memory_mib),
        progress: !args.quiet,
        symmetry: args.symmetry,
        partial_order: !args.no_partial_order,
        cross_check: args.cross_check,
        settle: true,
        // stateright's second opinion is of a complete graph.
        stop_at_violation: !args.explore_everything && !args.cross_check,
        swarm: args.swarm.map(|walks| check::Walks { walks, depth: args.walk_depth, seed: args.seed }),
        interrupt: Some(&zklab::interrupt::INTERRUPTED),
    };
    zklab::interrupt::stop_on_ctrl_c();
    let mut report = check::run(&scenario, &options);
    report.write_traces(&args.trace_dir, args.html).map_err(|e| BadInput(format!("cannot write traces: {e}")))?;
    if args.json {
        say!("{}", serde_json::to_string(&report).expect("reports serialize"));
    } else {
        print_report(&report);
    }
    Ok(report.exit_code())
}

fn calibrate_command(
    recipe: &str,
    clients: usize,
    faults: &str,
    client: ClientChoice,
    seeds: &str,
    max_states: usize,
    json: bool,
) -> Result<i32, BadInput> {
    let config =
        WorldConfig { faults: parse_faults(faults)?, client_behaviour: client.behaviour(), ..WorldConfig::default() };
    let scenario = Scenario::new(recipe, clients, config)?;
    let counts = seeds
        .split(',')
        .map(|s| match s.trim().parse::<u64>() {
            Ok(n) if (1..=1_000_000).contains(&n) => Ok(n),
            _ => Err(BadInput(format!("--seeds: `{s}` is not a count between 1 and 1000000"))),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let calibration = zklab::calibrate::calibrate(&scenario, &counts, max_states).map_err(BadInput)?;
    if json {
        say!("{}", serde_json::to_string(&calibration).expect("calibrations serialize"));
    } else {
        say_raw!("{}", zklab::calibrate::table(&calibration));
    }
    Ok(if calibration.rows.iter().all(|r| r.unexplained == 0) { 0 } else { 1 })
}

fn herd_command(recipes: &str, clients: &str, seed: u64, svg: &Path, json: bool) -> Result<i32, BadInput> {
    let recipes: Vec<String> = recipes.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect();
    let counts = clients
        .split(',')
        .map(|s| s.trim().parse::<usize>().map_err(|_| BadInput(format!("--clients: `{s}` is not a count"))))
        .collect::<Result<Vec<_>, _>>()?;
    if recipes.is_empty() || counts.is_empty() {
        return Err(BadInput("--recipes and --clients each need at least one entry".to_string()));
    }
    // Found out before the measuring, not after.
    let dir = svg.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    zklab::trace::check_writable(dir)?;
    let rows = zklab::herd::measure(&recipes, &counts, seed)?;
    std::fs::create_dir_all(dir).map_err(|e| BadInput(format!("cannot make {}: {e}", dir.display())))?;
    zklab::herd::chart(&rows, svg).map_err(BadInput)?;
    if json {
        say!("{}", serde_json::to_string(&rows).expect("rows serialize"));
    } else {
        say_raw!("{}", zklab::herd::table(&rows));
        say!("chart: {}", svg.display());
    }
    Ok(if rows.iter().all(|r| r.passed) { 0 } else { 1 })
}

/// Runs a manifest: one table row per entry, exit 1 on any deviation.
fn run_manifest(file: &Path, args: &CheckArgs) -> Result<i32, BadInput> {
    let text = std::fs::read_to_string(file).map_err(|e| BadInput(format!("cannot read {}: {e}", file.display())))?;
    let entries = zklab::manifest::parse(&text).map_err(|e| BadInput(format!("{}: {e}", file.display())))?;
    let options = Options {
        threads: args.threads,
        max_states: args.max_states,
        timeout: args.timeout.map(Duration::from_secs),
        max_memory_mib: args.max_memory.or_else(check::default_max_memory_mib),
        progress: false,
        // The manifest's counts are of the full graph (`manifest::run` says so itself).
        symmetry: false,
        partial_order: false,
        cross_check: args.cross_check,
        settle: true,
        // Every property of every entry is compared, and every count.
        stop_at_violation: false,
        swarm: None,
        interrupt: None,
    };
    let mut failed = 0;
    let mut rows = Vec::new();
    if !args.json {
        say!("{:<50} {:>10}  verdict", "entry", "states");
    }
    for (i, entry) in entries.iter().enumerate() {
        if !args.quiet {
            eprintln!("[{}/{}] {}", i + 1, entries.len(), entry.label);
        }
        let (states, deviations) = zklab::manifest::run(entry, &options);
        failed += usize::from(!deviations.is_empty());
        if args.json {
            rows.push(serde_json::json!({ "entry": entry.label, "unique_states": states, "deviations": deviations }));
        } else {
            let verdict = if deviations.is_empty() { "as expected".to_string() } else { deviations.join("; ") };
            say!("{:<50} {:>10}  {verdict}", entry.label, states);
        }
    }
    if args.json {
        let summary =
            serde_json::json!({ "entries": rows, "as_expected": entries.len() - failed, "total": entries.len() });
        say!("{summary}");
    } else {
        say!("{} of {} entries as expected", entries.len() - failed, entries.len());
    }
    Ok(i32::from(failed > 0))
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
        report.unique_states,
        if report.symmetry { "symmetry classes" } else { "states" },
        report.total_states,
        report.max_depth,
        report.elapsed_ms,
        match (report.swarm.is_some(), report.bounded, report.bounded_by) {
            (_, _, Some(Spent::Interrupted)) => " (BOUNDED: interrupted by Ctrl-C)",
            (true, _, _) => " (BOUNDED: random walks prove nothing)",
            (false, true, Some(Spent::States)) => " (BOUNDED: --max-states ran out)",
            (false, true, Some(Spent::Time)) => " (BOUNDED: --timeout ran out)",
            (false, true, Some(Spent::Memory)) => " (BOUNDED: --max-memory ran out)",
            (false, true, None) => " (BOUNDED: a budget ran out)",
            (false, false, _) => "",
        }
    );
    if let Some(swarm) = &report.swarm {
        say!(
            "  swarm: {} walks of at most {} steps (seed {}) met {} distinct states in {} visits; the chance that the next visit meets a new one is {:.3} (Good-Turing). What no walk met is unknown.",
            swarm.walks,
            swarm.depth,
            swarm.seed,
            swarm.distinct_states,
            swarm.visits,
            swarm.chance_next_is_new
        );
    }
    if report.stopped_at_violation {
        say!(
            "  stopped at the first violation, every state to depth {} judged: what was not decided by then is unknown (starving cycles need the whole graph); --continue explores everything",
            report.max_depth
        );
    }
    if let Some(why) = &report.symmetry_refused {
        say!("  --symmetry refused: the recipe claims its clients are interchangeable, but {why}; judged without it");
    }
    if let Some(why) = &report.renumbering_refused {
        say!("  renumbering refused: the recipe claims only the order of its numbers matters, but {why}; judged without it");
    }
    for p in &report.properties {
        let status = match p.status {
            Status::Holds => "holds",
            Status::Violated => "VIOLATED",
            Status::Vacuous => "VACUOUS (never reached)",
            Status::Unknown if report.stopped_at_violation => "unknown (stopped at the first violation)",
            Status::Unknown if report.swarm.is_some() => "unknown (random walks cannot tell)",
            Status::Unknown => "unknown (budget ran out)",
        };
        say!("  {:<28} {status}", p.name);
    }
    say!(
        "  states are 128-bit fingerprints: the chance that two shared one (and one went unexplored) is below {:.1e}",
        report.fingerprint_collision_probability
    );
    if let Some(cross) = &report.cross_check {
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
            match timeline::render(trace) {
                Ok(text) => say_raw!("{text}"),
                Err(e) => say!("  (cannot render: {e})"),
            }
        }
    }
}

fn list_recipes() -> i32 {
    say!("recipes:");
    for e in zklab_recipes::CATALOGUE {
        match &e.flaw {
            None => say!("  {:<20} {}", e.name, e.summary),
            Some(f) => say!(
                "  {:<20} {} [flaw: {}; breaks {}]",
                e.name,
                e.summary,
                f.bug,
                f.breaks.iter().map(|p| p.name()).collect::<Vec<_>>().join(", ")
            ),
        }
    }
    say!("faults:");
    for k in zklab_model::FaultKind::ALL {
        say!("  {}", k.name());
    }
    say!("  all");
    say!("client behaviours: java (re-arms watches on reconnect), kazoo (drops them)");
    0
}

fn read_json(path: &Path) -> Result<serde_json::Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{} is not JSON: {e}", path.display()))
}

fn zk_script(path: &Path, expect: Option<&Path>, server: Option<&str>, client: zklab_model::ClientBehaviour) -> i32 {
    let results = read_json(path).and_then(|script| {
        match server {
            None => zklab::conformance::run_script_as(&script, client),
            Some(server) => zklab::conformance::run_script_live_as(&script, server, client),
        }
        .map_err(|e| format!("{}: {e}", path.display()))
    });
    let results = match results {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    let cases = results["results"].as_array().map(Vec::as_slice).unwrap_or_default();
    say!("{{\"case\": {},\n \"results\": [", results["case"]);
    for (i, result) in cases.iter().enumerate() {
        say!("  {result}{}", if i + 1 < cases.len() { "," } else { "" });
    }
    say!(" ]}}");
    let Some(expect) = expect else { return 0 };
    let expected = match read_json(expect) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    let differences = zklab::conformance::differences(&expected, &results);
    for d in &differences {
        eprintln!("differs: {d}");
    }
    // On stderr, like the differences: stdout stays the results, JSON for whoever reads it.
    match differences.len() {
        0 => eprintln!("matches {}", expect.display()),
        n => eprintln!("{n} differences from {}", expect.display()),
    }
    i32::from(!differences.is_empty())
}

fn zk_fuzz(options: &zklab::conformance::FuzzOptions, save_dir: &Path) -> i32 {
    if options.scripts == 0 {
        eprintln!("error: --scripts must be at least 1");
        return 2;
    }
    if save_dir.exists() && !save_dir.is_dir() {
        eprintln!("error: --save-dir {} exists and is not a directory", save_dir.display());
        return 2;
    }
    let report = match zklab::conformance::fuzz(options) {
        Ok(report) => report,
        Err(e) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    let Some(mismatch) = report.mismatch else {
        say!(
            "zk-fuzz: {} scripts (seed {}): the model answered every one like the server",
            report.compared,
            options.seed
        );
        return 0;
    };
    say!(
        "zk-fuzz: script {} of seed {} differs; shrunk in {} runs to {} ops:",
        report.compared,
        options.seed,
        report.shrink_runs,
        mismatch.script["ops"].as_array().map_or(0, Vec::len)
    );
    say_raw!("{}", zklab::conformance::script_text(&mismatch.script));
    for d in &mismatch.differences {
        say!("differs: {d}");
    }
    match zklab::conformance::save(&mismatch, save_dir) {
        Ok(name) => say!("saved as {name} in {}/cases and {}/expected", save_dir.display(), save_dir.display()),
        Err(e) => say!("not saved: {e}"),
    }
    1
}

fn replay(path: &Path, show: bool, mermaid: bool, html: Option<&Path>) -> i32 {
    let trace = match Trace::load(path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    if let Some(Err(e)) = html.map(zklab::trace::check_file_writable) {
        eprintln!("error: {e}");
        return 2;
    }
    if let Err(e) = trace.replay() {
        eprintln!("error: {}: {e}", path.display());
        return 1;
    }
    let renders: [(bool, zklab::trace::Renderer); 2] = [(show, timeline::render), (mermaid, zklab::diagram::mermaid)];
    for (wanted, render) in renders {
        if !wanted {
            continue;
        }
        match render(&trace) {
            Ok(text) => say_raw!("{text}"),
            Err(e) => {
                eprintln!("error: {}: {e}", path.display());
                return 1;
            }
        }
    }
    if let Some(out) = html {
        let page = match zklab::html::render(&trace) {
            Ok(page) => page,
            Err(e) => {
                eprintln!("error: {}: {e}", path.display());
                return 1;
            }
        };
        let dir = out.parent().filter(|d| !d.as_os_str().is_empty());
        let written = dir.map_or(Ok(()), std::fs::create_dir_all).and_then(|()| std::fs::write(out, page));
        match written {
            Ok(()) => say!("wrote the HTML timeline to {}", out.display()),
            Err(e) => {
                eprintln!("error: cannot write {}: {e}", out.display());
                return 2;
            }
        }
    }
    say!("{}: {} steps reproduce `{}` ({})", path.display(), trace.steps.len(), trace.verdict.property, trace.summary);
    0
}
