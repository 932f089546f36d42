//! `zklab client-check`: real lock code run against the served model under zklab's scheduler,
//! random schedules from a seed, each run's history judged; the first violating schedule made
//! smaller and saved to a file, which `--schedule` (or `zklab replay`) runs again.

use super::CliError;
use crate::client_check::{self, Campaign, ClientProgram, End, Faults, RunResult, SavedSchedule, Setup, Task, Tried};
use crate::exit::Exit;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(clap::Args)]
pub struct Args {
    /// A built-in client: `kazoo` (kazoo 2.8's Lock, scripts/real-clients/kazoo_lock.py),
    /// `kazoo-listening` (the same, heeding kazoo's connection states as its docs advise), `go`
    /// (go-zookeeper's zk.Lock), `node` (the recipes page's lock on node-zookeeper-client),
    /// `curator` (Curator 5's InterProcessMutex, heeding Curator's connection states) or
    /// `writelock` (ZooKeeper's own WriteLock recipe).
    #[arg(long, conflicts_with_all = ["cmd", "schedule"], required_unless_present_any = ["cmd", "schedule"])]
    pub library: Option<String>,
    /// Your client: a command run once per client, with the protocol's arguments appended
    /// (HOSTS LOCK_PATH SESSION_TIMEOUT_MS ROUNDS HOLD_MS) and its history read from stdout
    /// (docs/your-lock.md).
    #[arg(long, conflicts_with = "schedule")]
    pub cmd: Option<String>,
    /// Run a saved schedule again (as `client-check` saves it in `--trace-dir`), instead of
    /// exploring: its file says what runs and every choice.
    #[arg(long, value_name = "FILE")]
    pub schedule: Option<PathBuf>,
    /// Where the first violating schedule is saved (made smaller first, see `--shrink-runs`).
    #[arg(long, default_value = "zklab-traces")]
    pub trace_dir: PathBuf,
    /// Also write the saved schedule's HTML page beside it (`.html`).
    #[arg(long)]
    pub html: bool,
    /// The most runs spent making a violating schedule smaller (fewer faults, then fewer
    /// choices) before it is saved; 0 saves it as found.
    #[arg(long, default_value_t = 40, value_parser = clap::value_parser!(u32).range(0..=10_000))]
    pub shrink_runs: u32,
    /// Client processes, each on a port of its own.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..=16))]
    pub clients: u16,
    /// Lock rounds per client.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub rounds: u32,
    /// Make the lock's parent node before the clients start, as the checker's worlds do
    /// (otherwise the first client to lock makes it). A model of the library that takes the
    /// parent as given (curator-mutex, zk-write-lock) can follow only such a schedule.
    #[arg(long)]
    pub lock_made: bool,
    /// Fault kinds a schedule may use: loss-before-apply, loss-after-apply, expire, disconnect (or none).
    #[arg(long, default_value = "none")]
    pub faults: String,
    /// The most faults in one schedule.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(0..=20))]
    pub max_faults: u32,
    /// How schedules are drawn: `random` (seeded, PCT priorities) or `systematic` (depth-first
    /// over the choices within `--switches` and `--max-faults`, sleep sets for independent
    /// choices).
    #[arg(long, default_value = "random")]
    pub explore: String,
    /// Systematic: the most switches in a schedule (among the choices that reach the server,
    /// every one but a delivery, the times one is another client's than the one before).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u16).range(0..=64))]
    pub switches: u16,
    /// Random: schedules to run. Systematic: the most schedules to run before the search is cut
    /// (then undecided).
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
            "disconnect" => faults.disconnect = true,
            other => {
                let kinds = "loss-before-apply, loss-after-apply, expire, disconnect, or none";
                return Err(CliError::BadInput(format!("unknown fault `{other}` for client-check: {kinds}")));
            }
        }
    }
    Ok(faults)
}

/// The properties a schedule can break, each of which names the file it is saved to.
const PROPERTIES: [&str; 4] = ["belief_exclusion", "fenced_exclusion", "no_orphans", "eventual_acquire"];

pub fn run(args: &Args) -> Result<Exit, CliError> {
    if let Some(file) = &args.schedule {
        return run_saved(args, file);
    }
    let program = match (&args.library, &args.cmd) {
        (Some(name), _) => ClientProgram::library(name).map_err(CliError::BadInput)?,
        (None, Some(cmd)) if cmd.trim().is_empty() => return Err(CliError::BadInput("--cmd is empty".into())),
        (None, Some(cmd)) => ClientProgram::Command(cmd.clone()),
        (None, None) => return Err(CliError::BadInput("give --library, --cmd or --schedule".into())),
    };
    let faults = faults(&args.faults)?;
    let systematic = match args.explore.as_str() {
        "random" => false,
        "systematic" => true,
        other => {
            return Err(CliError::BadInput(format!("unknown --explore `{other}` for client-check: random, systematic")))
        }
    };
    // No fault kind asked for: no fault can be taken, whatever --max-faults says.
    let max_faults = if faults == Faults::default() { 0 } else { args.max_faults };
    crate::user_files::check_writable(&args.trace_dir)?;
    for property in PROPERTIES {
        let file = saved_file(&args.trace_dir, &program, usize::from(args.clients), property);
        crate::user_files::replaceable(&file, crate::user_files::Output::Json).map_err(CliError::BadInput)?;
        if args.html {
            crate::user_files::replaceable(&file.with_extension("html"), crate::user_files::Output::Page)
                .map_err(CliError::BadInput)?;
        }
    }
    // What the machine must have comes after what the input must be: bad input is exit 2
    // whether or not the library is installed.
    program.available().map_err(CliError::Environment)?;
    let campaign = Campaign {
        setup: Setup::new(
            program,
            usize::from(args.clients),
            Task {
                lock_path: "/lock".into(),
                session_timeout_ms: 10_000,
                rounds: args.rounds,
                hold_ms: -1,
                lock_made: args.lock_made,
            },
            faults,
            args.max_steps as usize,
        ),
        schedules: args.schedules as usize,
        seed: args.seed,
        depth: usize::from(args.depth),
        max_faults: args.max_faults,
        fault_chance: 0.05,
        replays: args.replay_check as usize,
    };
    super::stop_on_ctrl_c();
    let started = Instant::now();
    let quiet = args.quiet || args.json;
    let mut complete = None;
    let mut seconds = 0.0;
    let outcome = in_private_dir(|dir| {
        let explored = match systematic {
            false => client_check::explore(&campaign, dir, !args.keep_going, |t| {
                if !quiet {
                    eprintln!("{}", line(t));
                }
            }),
            true => {
                let bounds = client_check::systematic::Bounds {
                    switches: usize::from(args.switches),
                    faults: max_faults as usize,
                    cap: args.schedules as usize,
                };
                let mut k = 0;
                client_check::systematic::explore(&campaign.setup, bounds, dir, !args.keep_going, |r| {
                    k += 1;
                    if !quiet {
                        eprintln!("run {k}: {}", summary(r));
                    }
                })
                .map(|e| {
                    complete = Some((e.complete, e.diverged, e.cut));
                    e.runs
                        .into_iter()
                        .map(|result| Tried {
                            seed: None,
                            result,
                            replayed_same: 0,
                            replayed: 0,
                            parted: None,
                            late: 0,
                        })
                        .collect()
                })
            }
        };
        // The schedules' time, without the shrinking that follows.
        seconds = started.elapsed().as_secs_f64();
        explored.and_then(|tried| {
            // The first violation, made smaller, run once more exactly, and saved.
            let first = tried.iter().find(|t| !t.result.findings.is_empty());
            let saved = first.map(|t| save(args, &campaign.setup, t, dir, quiet)).transpose()?;
            Ok((tried, saved))
        })
    })?;
    let (tried, saved) = outcome.map_err(run_error)?;
    let saved = saved.transpose()?;
    let violated: Vec<&Tried> = tried.iter().filter(|t| !t.result.findings.is_empty()).collect();
    // A systematic run cut at its bound (or where the rest is explored in another order) is
    // the search's, not undecided; a diverged one is counted by the search.
    let undecided = tried
        .iter()
        .filter(|t| t.result.findings.is_empty())
        .filter(|t| match systematic {
            true => !matches!(t.result.end, End::Done | End::Cut | End::Diverged { .. }),
            false => t.result.end != End::Done,
        })
        .count();
    let replayed: usize = tried.iter().map(|t| t.replayed).sum();
    let same: usize = tried.iter().map(|t| t.replayed_same).sum();
    let late: usize = tried.iter().map(|t| t.late).sum();
    // Each schedule followed on zklab's model of the library, where it has one.
    let model = client_check::divergence::model_of(&campaign.setup.program).map(|(name, _)| name);
    let parted: Vec<(Option<u64>, String, serde_json::Value, bool)> = tried
        .iter()
        .filter_map(|t| {
            let followed = client_check::divergence::follow(&campaign.setup, &t.result)?;
            let (text, json, unplaced) = match followed {
                Ok(f) => {
                    let d = f.divergence?;
                    let json = serde_json::json!({
                        "seed": t.seed, "choice": d.choice, "client": d.client, "library": d.library, "model": d.model,
                        "unplaced": d.unplaced,
                    });
                    (d.to_string(), json, d.unplaced)
                }
                Err(why) => (format!("not followed: {why}"), serde_json::json!({"seed": t.seed, "error": why}), true),
            };
            Some((t.seed, text, json, unplaced))
        })
        .collect();
    // The distinct server-side states the schedules covered (canonical: see `server_state`).
    let server_states = tried
        .iter()
        .flat_map(|t| t.result.server_states.iter().copied())
        .collect::<std::collections::HashSet<u64>>()
        .len();
    if args.json {
        let runs: Vec<serde_json::Value> = tried
            .iter()
            .map(|t| {
                serde_json::json!({
                    "seed": t.seed,
                    "steps": t.result.schedule.len(),
                    "end": t.result.end,
                    "faults": t.result.faults(),
                    "findings": t.result.findings.iter().map(|f| serde_json::json!({"property": f.property, "detail": f.detail})).collect::<Vec<_>>(),
                    "tally": t.result.tally,
                    "schedule": t.result.schedule,
                    "history": t.result.story().iter().map(|(step, c, said)| format!("{step} c{c} {said}")).collect::<Vec<_>>(),
                    "replayed": t.replayed,
                    "replayed_same": t.replayed_same,
                    "replay_waited": t.late,
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
                "server_states": server_states,
                "model": model.map(|name| serde_json::json!({
                    "name": name,
                    "followed": tried.len(),
                    "diverged": parted.iter().filter(|p| !p.3).count(),
                    "unplaced": parted.iter().filter(|p| p.3).count(),
                    "divergences": parted.iter().map(|(_, _, json, _)| json.clone()).collect::<Vec<_>>(),
                })),
                "replayed": replayed,
                "replayed_same": same,
                "replay_waited": late,
                "explore": args.explore,
                "systematic": complete.map(|(complete, diverged, cut)| serde_json::json!({
                    "switches": args.switches,
                    "max_faults": max_faults,
                    "complete": complete,
                    "diverged": diverged,
                    "cut": cut,
                })),
                "runs": runs,
                "saved": saved.as_ref().map(|s| serde_json::json!({
                    "file": s.file.display().to_string(),
                    "steps": s.saved.schedule.len(),
                    "faults": s.saved.faults(),
                    "shrink_runs": s.saved.shrunk.as_ref().map_or(0, |k| k.runs),
                    "shown_again": s.shown_again,
                })),
            })
        );
    } else {
        say!(
            "{} schedules of {} with {} clients in {:.1} s ({:.1} a second): {} violated, {} undecided; \
             {server_states} distinct server states",
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
            if late > 0 {
                say!(
                    "  the replays waited for {late} recorded choice(s): a client's request that came after the quiet \
                     test had called its reaction done"
                );
            }
        }
        if let Some(name) = model {
            let unplaced = parted.iter().filter(|p| p.3).count();
            say!(
                "followed on zklab's model {name}: {} of {} schedules part from it{}{}",
                parted.len() - unplaced,
                tried.len(),
                if unplaced > 0 { format!(", {unplaced} could not be placed on its steps") } else { String::new() },
                if parted.is_empty() { "" } else { " (the first three below)" }
            );
            for (seed, text, _, _) in parted.iter().take(3) {
                let which = seed.map_or("systematic".to_string(), |s| format!("seed {s}"));
                say!("  {which}: {text}");
            }
        }
        if let Some((complete, diverged, cut)) = complete {
            let bounds = format!("at most {} switches and {max_faults} faults", args.switches);
            match complete {
                true => say!(
                    "systematic: every schedule within {bounds} was run, up to orders of independent choices \
                     ({cut} cut at the bound or where the rest was explored in another order; {diverged} did not \
                     follow their prefix)"
                ),
                false if violated.is_empty() => say!(
                    "systematic: cut at {} schedules before every schedule within {bounds} was run: undecided",
                    args.schedules
                ),
                false => {}
            }
        }
        if let Some(first) = violated.first() {
            let which = first.seed.map_or("systematic".to_string(), |s| format!("seed {s}"));
            for f in &first.result.findings {
                say!("VIOLATED {} ({which}): {}", f.property, f.detail);
            }
        }
        if let Some(s) = &saved {
            let faults = s.saved.faults();
            let from = s.saved.shrunk.as_ref().map_or(String::new(), |k| {
                format!(" (made smaller from {} choices and {} faults in {} runs)", k.from_steps, k.from_faults, k.runs)
            });
            say!("saved: {} ({} choices, {faults} faults{from})", s.file.display(), s.saved.schedule.len());
            say!(
                "run once more exactly, it {}; run it again: zklab client-check --schedule {}",
                match s.shown_again {
                    true => "showed the violation again".to_string(),
                    false => format!("did not show the violation again ({})", s.again_end),
                },
                s.file.display()
            );
        }
    }
    let cut_short = match complete {
        Some((complete, diverged, _)) => !complete || diverged > 0,
        None => tried.len() < campaign.schedules,
    };
    Ok(if !violated.is_empty() {
        Exit::Failed
    } else if undecided > 0 || cut_short {
        Exit::Unknown
    } else {
        Exit::Passed
    })
}

/// `work` in a private directory of its own under the temporary directory, removed after it.
fn in_private_dir<T>(work: impl FnOnce(&Path) -> T) -> Result<T, CliError> {
    crate::real::private::temporary().map_err(CliError::BadInput)?;
    let dir = crate::real::private::private_dir("client-check").map_err(CliError::Environment)?;
    let done = work(&dir);
    let _ = std::fs::remove_dir_all(&dir);
    crate::real::children::disown_dir(&dir);
    Ok(done)
}

/// `saved` run exactly `times` times (fewer if Ctrl-C comes): its setup, and each run.
fn rerun(saved: &SavedSchedule, times: u32) -> Result<(Setup, Vec<RunResult>), CliError> {
    let setup = saved.setup().map_err(CliError::BadInput)?;
    setup.program.available().map_err(CliError::Environment)?;
    super::stop_on_ctrl_c();
    let runs = in_private_dir(|dir| {
        let mut runs = Vec::new();
        for _ in 0..times {
            if crate::interrupt::interrupted() {
                break;
            }
            runs.push(client_check::replay(&setup, &saved.schedule, dir)?);
        }
        Ok(runs)
    })?
    .map_err(run_error)?;
    Ok((setup, runs))
}

/// A violating schedule as saved, and what running it once more exactly showed.
struct Saved {
    file: PathBuf,
    saved: SavedSchedule,
    shown_again: bool,
    again_end: String,
}

fn run_error(e: client_check::RunError) -> CliError {
    match e {
        client_check::RunError::Client(why) => CliError::BadInput(why),
        client_check::RunError::Machine(why) => CliError::Environment(why),
    }
}

/// Where a violation of `property` by `program`'s clients is saved.
fn saved_file(dir: &Path, program: &ClientProgram, clients: usize, property: &str) -> PathBuf {
    let label = match program {
        ClientProgram::Command(_) => "cmd".to_string(),
        library => library.name(),
    };
    dir.join(format!("client-check-{label}-n{clients}-{property}.json"))
}

/// Makes `found`'s schedule smaller, runs the result once more exactly, and saves it (the run
/// of the smaller schedule that showed the violation, with what running it again showed).
fn save(
    args: &Args,
    setup: &Setup,
    found: &Tried,
    dir: &Path,
    quiet: bool,
) -> Result<Result<Saved, CliError>, client_check::RunError> {
    let property = found.result.findings[0].property;
    let shrunk = client_check::shrink(setup, &found.result, dir, args.shrink_runs as usize, |runs, steps, faults| {
        if !quiet {
            eprintln!("shrinking: run {runs}: {steps} choices, {faults} faults");
        }
    })?;
    let again = client_check::replay(setup, &shrunk.result.schedule, dir)?;
    let shown_again = again.findings.iter().any(|f| f.property == property);
    let shrinking = (shrunk.runs > 0).then(|| client_check::saved::Shrinking {
        from_steps: found.result.schedule.len(),
        from_faults: found.result.faults(),
        runs: shrunk.runs,
    });
    let kept = if shown_again { &again } else { &shrunk.result };
    let saved = SavedSchedule::of(setup, kept, found.seed, shrinking);
    let file = saved_file(&args.trace_dir, &setup.program, setup.clients, property);
    let written =
        std::fs::create_dir_all(&args.trace_dir).and_then(|()| saved.write(&file)).and_then(|()| match args.html {
            true => {
                let page = client_check::page::render(&saved, &file.display().to_string());
                crate::user_files::write_output(&file.with_extension("html"), &page, crate::user_files::Output::Page)
            }
            false => Ok(()),
        });
    Ok(match written {
        Ok(()) => Ok(Saved { file, saved, shown_again, again_end: format!("{:?}", again.end) }),
        Err(e) => Err(CliError::Environment(format!("cannot save the schedule: {e}"))),
    })
}

/// `--schedule FILE`: the saved schedule run again exactly, once and then `--replay-check`
/// times more. Exit 1 if its first run breaks a property, 0 if it ran to the end and broke
/// none, 3 if it stopped short (cut where a violation had shown, or diverged) without one.
fn run_saved(args: &Args, file: &Path) -> Result<Exit, CliError> {
    let saved = SavedSchedule::load(file).map_err(CliError::BadInput)?;
    let (setup, runs) = rerun(&saved, args.replay_check + 1)?;
    let Some(first) = runs.first() else { return Ok(Exit::Unknown) };
    let shown = |r: &RunResult| r.findings.first().map(|f| f.property);
    let again = runs.iter().filter(|r| shown(r).is_some() && shown(r) == saved.property()).count();
    if args.json {
        let each: Vec<_> = runs
            .iter()
            .map(|r| serde_json::json!({"end": r.end, "findings": r.findings.iter().map(|f| serde_json::json!({"property": f.property, "detail": f.detail})).collect::<Vec<_>>(), "steps": r.schedule.len()}))
            .collect();
        say!(
            "{}",
            serde_json::json!({"schedule": file.display().to_string(), "recorded": saved.property(), "runs": each, "shown_again": again})
        );
    } else {
        say!(
            "{}: {} choices of {}, run {} time(s)",
            file.display(),
            saved.schedule.len(),
            setup.program.name(),
            runs.len()
        );
        for f in &first.findings {
            say!("VIOLATED {}: {}", f.property, f.detail);
        }
        if first.findings.is_empty() {
            say!("no property broken (the run ended {:?})", first.end);
        }
        if let Some(recorded) = saved.property() {
            say!("the recorded {recorded} showed again in {again} of {} runs", runs.len());
        }
    }
    Ok(if !first.findings.is_empty() {
        Exit::Failed
    } else if first.end == End::Done {
        Exit::Passed
    } else {
        Exit::Unknown
    })
}

/// `zklab replay FILE` of a saved schedule: run it once exactly; passed if the recorded
/// violation shows again (as a trace's replay passes when it reproduces its verdict). With
/// `show`, its choices and history printed; with `page`, its HTML page written there.
pub fn replay_saved(file: &Path, show: bool, page: Option<&Path>) -> Result<Exit, CliError> {
    let saved = SavedSchedule::load(file).map_err(CliError::BadInput)?;
    let Some(recorded) = saved.property() else {
        return Err(CliError::BadInput(format!("{}: the schedule records no violation to reproduce", file.display())));
    };
    let (setup, runs) = rerun(&saved, 1)?;
    let Some(again) = runs.into_iter().next() else { return Ok(Exit::Unknown) };
    if show {
        for (i, step) in saved.steps.iter().enumerate() {
            say!("{:>4}  {step}", i + 1);
        }
        for line in &saved.history {
            say!("heard after {line}");
        }
    }
    if let Some(out) = page {
        let html = client_check::page::render(&saved, &file.display().to_string());
        crate::user_files::write_output(out, &html, crate::user_files::Output::Page)
            .map_err(|e| CliError::BadInput(format!("cannot write {}: {e}", out.display())))?;
        say!("wrote the HTML page to {}", out.display());
    }
    match again.findings.iter().find(|f| f.property == recorded) {
        Some(f) => {
            say!(
                "{}: {} choices of {} reproduce `{recorded}` ({})",
                file.display(),
                saved.schedule.len(),
                setup.program.name(),
                f.detail
            );
            Ok(Exit::Passed)
        }
        None => Err(CliError::Failed(format!(
            "{}: run again, the clients did not show `{recorded}` (the run ended {:?}{})",
            file.display(),
            again.end,
            again.findings.first().map_or(String::new(), |f| format!(", breaking {} instead", f.property))
        ))),
    }
}

/// A run in a line: its choices, faults, how it ended, and its verdict.
fn summary(r: &RunResult) -> String {
    let verdict = match r.findings.first() {
        Some(f) => format!("VIOLATED {}", f.property),
        None => "ok".into(),
    };
    format!(
        "{} steps, {} faults, {:?}, {} acquisitions: {verdict}",
        r.schedule.len(),
        r.faults(),
        r.end,
        r.tally.acquisitions
    )
}

fn line(t: &Tried) -> String {
    let replays = match (&t.parted, t.replayed) {
        (_, 0) => String::new(),
        (None, n) => format!(", {n}/{n} replays the same"),
        (Some(how), n) => format!(", {}/{n} replays the same; one parted at {how}", t.replayed_same),
    };
    let which = t.seed.map_or("systematic".to_string(), |s| format!("seed {s}"));
    format!("{which}: {}{replays}", summary(&t.result))
}
