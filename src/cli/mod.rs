//! The zklab command line: one file per command, each turning its arguments into a result
//! (`Result<Exit, CliError>`); this file parses, dispatches and hands the exit code to the shell.
//! Only the command line parses flags and prints: the library modules compute and return.

mod budget_args;
mod calibrate;
mod check;
mod client_check;
mod client_choice;
mod explore;
mod herd;
mod merge;
mod real;
mod real_args;
mod real_library;
mod recipes;
mod replay;
mod serve;
pub mod simulate;
mod suite;
mod world_args;
mod zk_fuzz;
mod zk_script;

use crate::exit::Exit;
use crate::scenario::BadInput;
use clap::{Parser, Subcommand};
pub use client_choice::ClientChoice;
use std::process::ExitCode;
use world_args::WorldArgs;

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
pub struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Explore every interleaving and fault of a scenario and judge every property.
    #[command(after_help = "Example:\n  zklab check --recipe standard --clients 2 --faults loss-after-apply,expire")]
    Check(check::Args),
    /// List the recipes, their flaws and the fault names.
    #[command(after_help = "Example:\n  zklab recipes")]
    Recipes,
    /// Re-apply a trace's steps and re-check its verdict.
    #[command(after_help = "Example:\n  zklab replay --show traces/wait-on-null-n2-eventual_acquire.json")]
    Replay(replay::Args),
    /// Play the scheduler in a local page: pick each next step, see the state, undo, load a
    /// trace; with a broken recipe, reach its violation ("break it").
    #[command(after_help = "Example:\n  zklab explore --recipe wait-on-null --clients 2")]
    Explore(explore::Args),
    /// Simulate many clients with latencies, timeouts and faults from a seed, judging every run.
    #[command(after_help = "Example:\n  zklab simulate --recipe standard --clients 1000 --faults \
            loss-after-apply=0.01,expire=3")]
    Simulate(simulate::Args),
    /// Run a recipe's clients against a real ZooKeeper (started here from its jar, or yours),
    /// with the simulator's workload and faults from a seed, each run judged by the model
    /// world kept in step with it.
    #[command(after_help = "Example:\n  zklab real --recipe standard --clients 3 --faults expire=1 \
            --chaos-ms 5000 --seeds 2")]
    Real(real_args::Args),
    /// Measure the herd effect: each recipe fault-free at each client count, a table and an SVG
    /// chart of notifications per release.
    #[command(after_help = "Example:\n  zklab herd --recipes standard,naive --clients 5,25 -o herd.svg")]
    Herd(herd::Args),
    /// How far simulation can be trusted: which fraction of the checker's states a number of
    /// simulated seeds reaches, for a world small enough to explore.
    #[command(after_help = "Example:\n  zklab calibrate --recipe standard --clients 2 --seeds 10,100")]
    Calibrate(calibrate::Args),
    /// Run the built-in suite: the standard lock proven, every broken variant caught.
    #[command(after_help = "Example:\n  zklab suite --trace-dir zklab-traces")]
    Suite(suite::Args),
    /// Run real lock code (a built-in library's, or your command) against the model served as
    /// a ZooKeeper server, zklab's scheduler owning every message: random schedules with faults
    /// at exact points, each run's history judged.
    #[command(
        after_help = "Example:\n  zklab client-check --library kazoo-listening --clients 2 --faults expire --schedules 10"
    )]
    ClientCheck(client_check::Args),
    /// Serve the model as a ZooKeeper server on a loopback port: real clients (the Java client,
    /// kazoo, Curator, go-zookeeper, node-zookeeper-client) connect to it unchanged.
    #[command(after_help = "Example:\n  zklab serve --port 0 --for-seconds 1")]
    Serve(serve::Args),
    /// Run a ZooKeeper op script (conformance/FORMAT.md) against the model, or a live server,
    /// and print the results.
    #[command(after_help = "Example:\n  zklab zk-script conformance/cases/14-lock-race.json --expect \
            conformance/expected/14-lock-race.json")]
    ZkScript(zk_script::Args),
    /// Differential fuzzing: run random op scripts against the model and a live ZooKeeper; on a
    /// difference, shrink the script, save it with the server's answer as a case, exit 1.
    #[command(after_help = "Example:\n  zklab zk-fuzz --scripts 20 --seed 7")]
    ZkFuzz(zk_fuzz::Args),
    /// Combine the shard reports of one campaign (`--shard I/N --json` of `check --swarm` or
    /// `simulate --seeds`, run as separate jobs) into the verdict one run would give.
    #[command(after_help = "Example:\n  zklab simulate --recipe standard --clients 5 --seeds 20 --faults \
            loss-after-apply=0.05,expire=2 --shard 1/2 --json -q > a.json; zklab simulate --recipe standard --clients \
            5 --seeds 20 --faults loss-after-apply=0.05,expire=2 --shard 2/2 --json -q > b.json; zklab merge a.json \
            b.json")]
    Merge(merge::Args),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell) on stdout.
    #[command(after_help = "Example:\n  zklab completions bash > zklab.bash")]
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
}

/// Why a command stopped short: bad input (exit 2, before any long work) or a failure found on
/// the way (exit 1, such as a trace that does not replay).
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error("{0}")]
    BadInput(String),
    #[error("{0}")]
    Failed(String),
    /// The machine could not give what the command needs (a server that would not start).
    #[error("{0}")]
    Environment(String),
}

impl CliError {
    fn exit(&self) -> Exit {
        match self {
            CliError::BadInput(_) => Exit::BadInput,
            CliError::Failed(_) => Exit::Failed,
            CliError::Environment(_) => Exit::Environment,
        }
    }
}

impl From<BadInput> for CliError {
    fn from(BadInput(message): BadInput) -> Self {
        CliError::BadInput(message)
    }
}

/// The command line with a program's own recipes beside the catalogue: every command takes
/// their names (`--recipe mine`, traces that name them, `zklab recipes`), and runs them on the
/// code path the catalogue's recipes run on. A program that proves its own lock calls this
/// from its `main` (see examples/getdata_lock.rs).
pub fn main_with(recipes: &'static [zklab_recipes::Entry]) -> ExitCode {
    if let Err(e) = zklab_recipes::register(recipes) {
        eprintln!("error: {e}");
        return ExitCode::from(Exit::BadInput.code());
    }
    main()
}

/// The command that runs this program, for the advice a report prints (`zklab replay ...`):
/// `zklab` for the catalogue's recipes, and the program as it was invoked when `label` (a
/// scenario's recipes, `a,b`) names a recipe it registered (`main_with`): only that program
/// knows it.
pub(crate) fn program_for(label: &str) -> String {
    let registered = label.split(['+', ',']).any(zklab_recipes::is_registered);
    match (registered, std::env::args().next()) {
        (true, Some(program)) => program,
        _ => "zklab".to_string(),
    }
}

/// Parses the command line, runs the command, prints its one-line error if it has one, and
/// returns the exit code.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if e.use_stderr() => {
            eprintln!("{} (see zklab --help)", one_line(&e.to_string()));
            return ExitCode::from(Exit::BadInput.code());
        }
        Err(e) => {
            say_raw!("{e}");
            return ExitCode::SUCCESS;
        }
    };
    let outcome = match cli.command {
        None => suite::run(&suite::Args::default()),
        Some(Command::Suite(args)) => suite::run(&args),
        Some(Command::Check(args)) => check::run(&args),
        Some(Command::Recipes) => Ok(recipes::run()),
        Some(Command::Replay(args)) => replay::run(&args),
        Some(Command::Explore(args)) => explore::run(&args),
        Some(Command::Simulate(args)) => simulate::run(&args),
        Some(Command::Herd(args)) => herd::run(&args),
        Some(Command::Merge(args)) => merge::run(&args),
        Some(Command::Real(args)) => real::run(&args),
        Some(Command::Calibrate(args)) => calibrate::run(&args),
        Some(Command::Serve(args)) => serve::run(&args),
        Some(Command::ClientCheck(args)) => client_check::run(&args),
        Some(Command::ZkScript(args)) => zk_script::run(&args),
        Some(Command::ZkFuzz(args)) => zk_fuzz::run(&args),
        Some(Command::Completions { shell }) => {
            let mut command = <Cli as clap::CommandFactory>::command();
            clap_complete::generate(shell, &mut command, "zklab", &mut std::io::stdout());
            Ok(Exit::Passed)
        }
    };
    let exit = outcome.unwrap_or_else(|e| {
        eprintln!("error: {e}");
        e.exit()
    });
    ExitCode::from(exit.code())
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

/// An output the command is about to write at `out` replaces nothing but what it writes
/// itself (`user_files::replaceable`), unless `force`; a special file (a FIFO, a device) is
/// refused even then.
pub(crate) fn refuse_to_replace(
    out: &std::path::Path,
    kind: crate::user_files::Output,
    force: bool,
) -> Result<(), CliError> {
    if let Some(why) = crate::user_files::special(out) {
        return Err(CliError::BadInput(why));
    }
    match force {
        true => Ok(()),
        false => crate::user_files::replaceable(out, kind)
            .map_err(|e| CliError::BadInput(format!("{e} (--force replaces it)"))),
    }
}

/// A span of virtual (or real) milliseconds: at most a day, as the simulator takes them; a
/// longer one is a typo, refused with the number as typed.
pub(crate) fn a_day_of_ms() -> clap::builder::RangedU64ValueParser<u64> {
    clap::value_parser!(u64).range(0..=86_400_000)
}

/// Where the command line's long work says how far it got: stderr.
pub(crate) fn progress_to_stderr(line: &str) {
    eprintln!("{line}");
}

/// Installs the handler of Ctrl-C (SIGINT), SIGTERM and SIGHUP: the first raises
/// `interrupt::INTERRUPTED`, which every long command polls and stops at, printing what it
/// knows (exit 3, or 1 if it already found a violation); a second one quits at once. Without
/// the handler (another is installed already) the signals keep their default.
pub(crate) fn stop_on_ctrl_c() {
    use std::sync::atomic::Ordering;
    let installed = ctrlc::set_handler(|| {
        if crate::interrupt::INTERRUPTED.swap(true, Ordering::SeqCst) {
            // What the run made goes with it: its directories here, its child processes by
            // the kernel as the process ends (`real::children`).
            #[cfg(feature = "live")]
            crate::real::children::quit_now();
            std::process::exit(130);
        }
        eprintln!("interrupted: stopping; what is known so far follows (a second signal quits at once)");
    });
    drop(installed);
}
