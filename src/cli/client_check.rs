//! `zklab client-check`: real lock code run against the served model under zklab's scheduler,
//! random schedules from a seed, each run's history judged.

use super::CliError;
use crate::client_check::{self, Campaign, ClientProgram, End, Faults, Setup, Task, Tried};
use crate::exit::Exit;
use std::time::{Duration, Instant};

#[derive(clap::Args)]
pub struct Args {
    /// A built-in client: `kazoo` (kazoo 2.8's Lock, scripts/real-clients/kazoo_lock.py), or
    /// `kazoo-listening` (the same, heeding kazoo's connection states as its docs advise).
    #[arg(long, conflicts_with = "cmd", required_unless_present = "cmd")]
    pub library: Option<String>,
    /// Your client: a command run once per client, with the protocol's arguments appended
    /// (HOSTS LOCK_PATH SESSION_TIMEOUT_MS ROUNDS HOLD_MS) and its history read from stdout
    /// (docs/your-lock.md).
    #[arg(long)]
    pub cmd: Option<String>,
    /// Client processes, each on a port of its own.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..=16))]
    pub clients: u16,
    /// Lock rounds per client.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub rounds: u32,
    /// Fault kinds a schedule may use: loss-before-apply, loss-after-apply, expire (or none).
    #[arg(long, default_value = "none")]
    pub faults: String,
    /// The most faults in one schedule.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(0..=20))]
    pub max_faults: u32,
    /// Random schedules to run.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub schedules: u64,
    /// The first schedule's seed (the next ones count up).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// PCT's depth: priority changes per schedule, plus one.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub depth: u16,
    /// The most choices in one schedule; a schedule that reaches it is undecided.
    #[arg(long, default_value_t = 400, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub max_steps: u32,
    /// Run each schedule again this many times and count the replays that tell the same history.
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=100))]
    pub replay_check: u32,
    /// Go on after a violation (by default the campaign stops at the first).
    #[arg(long)]
    pub keep_going: bool,
    /// Print the campaign as JSON on stdout.
    #[arg(long)]
    pub json: bool,
    /// No progress lines on stderr.
    #[arg(short, long)]
    pub quiet: bool,
}

fn faults(text: &str) -> Result<Faults, CliError> {
    let mut faults = Faults::default();
    if text == "none" {
        return Ok(faults);
    }
    for kind in text.split(',') {
        match kind {
            "loss-before-apply" => faults.loss_before_apply = true,
            "loss-after-apply" => faults.loss_after_apply = true,
            "expire" => faults.expire = true,
            other => {
                return Err(CliError::BadInput(format!(
                    "unknown fault `{other}` for client-check: loss-before-apply, loss-after-apply, expire, or none"
                )))
            }
        }
    }
    Ok(faults)
}

pub fn run(args: &Args) -> Result<Exit, CliError> {
    let program = match (&args.library, &args.cmd) {
        (Some(name), _) if name == "kazoo" => ClientProgram::Kazoo,
        (Some(name), _) if name == "kazoo-listening" => ClientProgram::KazooListening,
        (Some(name), _) => {
            return Err(CliError::BadInput(format!(
                "unknown library `{name}` for client-check: kazoo, kazoo-listening"
            )))
        }
        (None, Some(cmd)) if cmd.trim().is_empty() => return Err(CliError::BadInput("--cmd is empty".into())),
        (None, Some(cmd)) => ClientProgram::Command(cmd.clone()),
        (None, None) => return Err(CliError::BadInput("give --library or --cmd".into())),
    };
    if matches!(program, ClientProgram::Kazoo | ClientProgram::KazooListening) {
        crate::real::libraries::Library::Kazoo.available().map_err(CliError::Environment)?;
    }
    let faults = faults(&args.faults)?;
    let campaign = Campaign {
        setup: Setup {
            program,
            clients: usize::from(args.clients),
            task: Task { lock_path: "/lock".into(), session_timeout_ms: 10_000, rounds: args.rounds, hold_ms: -1 },
            faults,
            max_steps: args.max_steps as usize,
            stuck_after: Duration::from_millis(1000),
            connect_within: Duration::from_secs(20),
        },
        schedules: args.schedules as usize,
        seed: args.seed,
        depth: usize::from(args.depth),
        max_faults: args.max_faults,
        fault_chance: 0.05,
        replays: args.replay_check as usize,
    };
    super::stop_on_ctrl_c();
    crate::real::private::temporary().map_err(CliError::BadInput)?;
    let dir = crate::real::private::private_dir("client-check").map_err(CliError::Environment)?;
    let started = Instant::now();
    let quiet = args.quiet || args.json;
    let outcome = client_check::explore(&campaign, &dir, !args.keep_going, |t| {
        if !quiet {
            eprintln!("{}", line(t));
        }
    });
    let _ = std::fs::remove_dir_all(&dir);
    crate::real::children::disown_dir(&dir);
    let tried = outcome.map_err(|e| match e {
        client_check::RunError::Client(why) => CliError::BadInput(why),
        client_check::RunError::Machine(why) => CliError::Environment(why),
    })?;
    let seconds = started.elapsed().as_secs_f64();
    let violated: Vec<&Tried> = tried.iter().filter(|t| !t.result.findings.is_empty()).collect();
    let undecided = tried.iter().filter(|t| t.result.findings.is_empty() && t.result.end != End::Done).count();
    let replayed: usize = tried.iter().map(|t| t.replayed).sum();
    let same: usize = tried.iter().map(|t| t.replayed_same).sum();
    if args.json {
        let runs: Vec<serde_json::Value> = tried
            .iter()
            .map(|t| {
                serde_json::json!({
                    "seed": t.seed,
                    "steps": t.result.schedule.len(),
                    "end": t.result.end,
                    "faults": t.result.schedule.iter().filter(|c| c.is_fault()).count(),
                    "findings": t.result.findings.iter().map(|f| serde_json::json!({"property": f.property, "detail": f.detail})).collect::<Vec<_>>(),
                    "tally": t.result.tally,
                    "schedule": t.result.schedule,
                    "history": t.result.story().iter().map(|(step, c, said)| format!("{step} c{c} {said}")).collect::<Vec<_>>(),
                    "replayed": t.replayed,
                    "replayed_same": t.replayed_same,
                })
            })
            .collect();
        say!(
            "{}",
            serde_json::json!({
                "program": campaign.setup.program.name(),
                "clients": campaign.setup.clients,
                "schedules": tried.len(),
                "seconds": seconds,
                "schedules_per_second": tried.len() as f64 / seconds.max(1e-9),
                "violations": violated.len(),
                "undecided": undecided,
                "replayed": replayed,
                "replayed_same": same,
                "runs": runs,
            })
        );
    } else {
        say!(
            "{} schedules of {} with {} clients in {:.1} s ({:.1} a second): {} violated, {} undecided",
            tried.len(),
            campaign.setup.program.name(),
            campaign.setup.clients,
            seconds,
            tried.len() as f64 / seconds.max(1e-9),
            violated.len(),
            undecided
        );
        if replayed > 0 {
            say!("replayed: {same} of {replayed} replays told the same history as their schedule's first run");
        }
        if let Some(first) = violated.first() {
            for f in &first.result.findings {
                say!("VIOLATED {} (seed {}): {}", f.property, first.seed, f.detail);
            }
            say!("schedule: {}", serde_json::to_string(&first.result.schedule).unwrap_or_default());
        }
    }
    Ok(if !violated.is_empty() {
        Exit::Failed
    } else if undecided > 0 || tried.len() < campaign.schedules {
        Exit::Unknown
    } else {
        Exit::Passed
    })
}

fn line(t: &Tried) -> String {
    let r = &t.result;
    let verdict = match r.findings.first() {
        Some(f) => format!("VIOLATED {}", f.property),
        None => "ok".into(),
    };
    let replays = match (&t.parted, t.replayed) {
        (_, 0) => String::new(),
        (None, n) => format!(", {n}/{n} replays the same"),
        (Some(how), n) => format!(", {}/{n} replays the same; one parted at {how}", t.replayed_same),
    };
    format!(
        "seed {}: {} steps, {} faults, {:?}, {} acquisitions: {verdict}{replays}",
        t.seed,
        r.schedule.len(),
        r.schedule.iter().filter(|c| c.is_fault()).count(),
        r.end,
        r.tally.acquisitions
    )
}
