//! What `zklab real` reads from the command line, and what its runs of recipes (`real`) and of
//! real libraries (`real_library`) share: the servers, the seeds, the exit code.

use super::CliError;
use crate::exit::Exit;
use crate::real::Ensemble;
use crate::scenario::BadInput;
use std::path::PathBuf;
use std::time::{Duration, Instant};

#[derive(clap::Args, Clone, Debug)]
pub struct Args {
    /// Recipe name, or a comma list of one name per client.
    #[arg(long, required_unless_present_any = ["reproduce", "library"])]
    pub recipe: Option<String>,
    /// Instead of zklab's recipes, run a real client library's own lock, one process per
    /// client, judged from the history it reports: `kazoo` (kazoo's Lock) or `curator`
    /// (Curator's InterProcessMutex).
    #[arg(long, value_name = "LIBRARY", conflicts_with_all = ["recipe", "reproduce"])]
    pub library: Option<String>,
    /// Instead of runs from seeds, steer the servers through each trace's steps (a
    /// counterexample from `check` or `simulate`) and say whether its violation happens for
    /// real, e.g. `--reproduce traces/*.json`.
    #[arg(long, num_args = 1.., value_name = "TRACE", conflicts_with_all = ["seeds", "faults", "schedule"])]
    pub reproduce: Vec<PathBuf>,
    /// How many clients, each a real session of its own.
    #[arg(long, default_value_t = 3)]
    pub clients: usize,
    /// How many times each client acquires and releases.
    #[arg(long, default_value_t = 1)]
    pub rounds: u8,
    /// Start this many ZooKeeper servers on loopback: 1 (standalone) or 3 (an ensemble).
    #[arg(long, default_value_t = 1, conflicts_with = "server")]
    pub servers: usize,
    /// Run against servers you run yourself instead: HOST:PORT,... (four-letter words allowed).
    #[arg(long)]
    pub server: Option<String>,
    /// The seed (default: $ZKLAB_SEED, else 1).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Run this many seeds, from the seed on, one after the other.
    #[arg(long, default_value_t = 1)]
    pub seeds: u64,
    /// Faults, as `simulate` names them: kind[=rate] separated by commas, `all` or `none`.
    /// All but reap-parent and operator-delete are driven; lagging-read and lagging-session need
    /// --servers 3.
    #[arg(long, default_value = "none")]
    pub faults: String,
    /// A JSON fault schedule, as `simulate --schedule` reads it.
    #[arg(long)]
    pub schedule: Option<PathBuf>,
    /// How long faults strike, in milliseconds.
    #[arg(long, default_value_t = 2000, value_parser = super::a_day_of_ms())]
    pub chaos_ms: u64,
    /// After the chaos phase every waiter must acquire within this many ms (default: ten
    /// session timeouts plus every hold one after the other).
    #[arg(long, value_parser = super::a_day_of_ms())]
    pub heal_ms: Option<u64>,
    /// How long a holder keeps the lock, in ms.
    #[arg(long, default_value_t = 10, value_parser = super::a_day_of_ms())]
    pub hold_ms: u64,
    /// Clients start within this many ms of each other (0: together).
    #[arg(long, default_value_t = 0, value_parser = super::a_day_of_ms())]
    pub start_spread_ms: u64,
    /// The session timeout each client asks for, in ms.
    #[arg(long, default_value_t = 4000)]
    pub session_timeout_ms: u32,
    /// Client library behaviour on reconnect (the driver plays the library).
    #[arg(long, value_enum, default_value = "java")]
    pub client: super::ClientChoice,
    /// Stop after this many seconds in all (what is known is printed).
    #[arg(long)]
    pub timeout: Option<u64>,
    /// Print one JSON array (one object per seed) instead of text.
    #[arg(long)]
    pub json: bool,
    /// Print no progress.
    #[arg(long, short)]
    pub quiet: bool,
    /// Where violation traces are written.
    #[arg(long, default_value = "zklab-traces")]
    pub trace_dir: PathBuf,
    /// Also write each violation's HTML timeline beside its trace.
    #[arg(long)]
    pub html: bool,
}

/// The servers to run against: the user's, or started here. Ctrl-C is caught from here on, before
/// the servers are started or their address printed: a signal that comes while they start stops
/// the command with its report (no seed run) and the servers torn down, never kills it outright.
pub(super) fn ensemble(args: &Args) -> Result<Ensemble, CliError> {
    crate::real::private::temporary().map_err(BadInput)?;
    super::stop_on_ctrl_c();
    let ensemble = match &args.server {
        Some(list) => {
            let servers: Vec<String> = list.split(',').map(|s| s.trim().to_string()).collect();
            if let Some(bad) =
                servers.iter().find(|s| s.rsplit_once(':').is_none_or(|(_, p)| p.parse::<u16>().is_err()))
            {
                return Err(BadInput(format!("--server takes HOST:PORT,...; `{bad}` is not one")).into());
            }
            Ensemble::given(servers).map_err(BadInput)?
        }
        None => {
            if !args.quiet {
                eprintln!("starting {} ZooKeeper server(s) on loopback ...", args.servers);
            }
            Ensemble::start_patiently(args.servers, &super::progress_to_stderr).map_err(CliError::Environment)?
        }
    };
    if let Some(dir) = ensemble.dir().filter(|_| std::env::var_os("ZKLAB_REAL_KEEP").is_some()) {
        eprintln!("ZKLAB_REAL_KEEP: the servers' configs, data and logs are kept in {}", dir.display());
    }
    if !args.quiet && ensemble.started_in > Duration::ZERO {
        eprintln!("serving after {:.1} s: {}", ensemble.started_in.as_secs_f64(), ensemble.servers.join(", "));
    }
    Ok(ensemble)
}

/// The seeds to run, numbered, until `--seeds` ran, `--timeout` passed or Ctrl-C.
pub(super) fn seeds(args: &Args, first: u64, started: Instant) -> impl Iterator<Item = (u64, u64)> + '_ {
    let deadline = args.timeout.map(|t| started + Duration::from_secs(t));
    (0..args.seeds)
        .take_while(move |_| !crate::interrupt::interrupted() && deadline.is_none_or(|d| Instant::now() < d))
        .map(move |k| (k, first.wrapping_add(k)))
}

/// The exit code of runs with these verdicts: 1 if one was violated, 3 if one was not judged
/// to its end or seeds were left, else 0.
pub(super) fn exit<'a>(args: &Args, verdicts: impl Iterator<Item = &'a str>) -> Exit {
    let verdicts: Vec<&str> = verdicts.collect();
    let violated = verdicts.contains(&"violated");
    let unknown = verdicts.iter().any(|v| *v != "passed") || (verdicts.len() as u64) < args.seeds;
    match (violated, unknown) {
        (true, _) => Exit::Failed,
        (false, true) => Exit::Unknown,
        (false, false) => Exit::Passed,
    }
}
