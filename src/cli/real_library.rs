//! `zklab real --library kazoo|curator`: a real client library's own lock (kazoo's `Lock`,
//! Curator's `InterProcessMutex`), one process per client through its own proxy, under the
//! seed's fault plan, judged from the history it reports (`real::history`): belief and fenced
//! exclusion, every client done, no node left. Each run lists its faults with where they
//! struck; a campaign in which a kind it asked for never struck during lock work is unknown.

use super::real_args::{ensemble, exit, seeds, Args};
use super::CliError;
use crate::exit::Exit;
use crate::real::fault_ledger::{never_struck, Strike};
use crate::real::history::Tally;
use crate::real::libraries::{run_library, Library};
use crate::scenario::BadInput;
use std::time::Instant;
use zklab_model::FaultKind;
use zklab_sim::SimConfig;

/// One run, as reported.
#[derive(serde::Serialize)]
struct Report {
    seed: u64,
    /// passed, violated, unknown (a client had not finished by the deadline: `unfinished`), not
    /// run or interrupted.
    verdict: &'static str,
    /// Each property the history breaks, with what shows it.
    violated: Vec<(String, String)>,
    /// Why a run did not start.
    #[serde(skip_serializing_if = "Option::is_none")]
    detail: Option<String>,
    #[serde(flatten)]
    tally: Tally,
    /// Every fault: where its client was when it struck, or why it never did.
    faults: Vec<Strike>,
    wall_ms: u64,
}

pub(super) fn run(args: &Args, library: Library, config: &SimConfig, first: u64) -> Result<Exit, CliError> {
    let ensemble = ensemble(args)?;
    let started = Instant::now();
    let mut reports = Vec::new();
    for (k, seed) in seeds(args, first, started) {
        let chroot = format!("/zklab-real/{}-{}-{seed}", crate::real::private::run_id(), library.name());
        let config = SimConfig { seed, ..config.clone() };
        let stop = Some(&crate::interrupt::INTERRUPTED);
        let run = match run_library(&config, library, args.clients, &ensemble.servers, &chroot, stop) {
            Ok(run) => run,
            // The first run failing to start is the servers' or the flags' fault; a later one's
            // leaves that seed unjudged.
            Err(why) if k == 0 => return Err(BadInput(why).into()),
            Err(why) => {
                say!("seed {seed}: UNKNOWN: the run could not start: {why}");
                let report = Report {
                    seed,
                    verdict: "not run",
                    violated: Vec::new(),
                    detail: Some(why),
                    tally: Tally::default(),
                    faults: Vec::new(),
                    wall_ms: 0,
                };
                reports.push(report);
                continue;
            }
        };
        let report = Report {
            seed,
            verdict: match (run.interrupted, run.findings.is_empty(), run.tally.unfinished.is_empty()) {
                (true, _, _) => "interrupted",
                (false, false, _) => "violated",
                (false, true, false) => "unknown",
                (false, true, true) => "passed",
            },
            violated: run.findings.iter().map(|f| (f.property.to_string(), f.detail.clone())).collect(),
            detail: None,
            tally: run.tally.clone(),
            faults: run.faults.clone(),
            wall_ms: run.wall_ms,
        };
        if !args.json {
            print(&report, library);
        }
        reports.push(report);
    }
    // A kind asked for that never struck while a client was at its lock work was not tried.
    let asked: Vec<FaultKind> = FaultKind::ALL.into_iter().filter(|k| config.uses(*k)).collect();
    let runs: Vec<&[Strike]> = reports.iter().map(|r| &r.faults[..]).collect();
    let untried = never_struck(&asked, &runs);
    if args.json {
        say!("{}", serde_json::to_string(&reports).expect("reports serialize"));
    } else {
        let passed = reports.iter().filter(|r| r.verdict == "passed").count();
        say!(
            "{passed} of {} runs of real {} passed ({}); {:.1} s wall",
            reports.len(),
            library.name(),
            ensemble.size_text(),
            started.elapsed().as_secs_f64()
        );
        for kind in &untried {
            say!("UNKNOWN: no {kind} struck while a client was at its lock work: the campaign says nothing of it");
        }
    }
    Ok(match exit(args, reports.iter().map(|r| r.verdict)) {
        Exit::Passed if !untried.is_empty() => Exit::Unknown,
        other => other,
    })
}

fn print(r: &Report, library: Library) {
    let t = &r.tally;
    let faults: Vec<String> = r.faults.iter().map(|s| s.to_string()).collect();
    say!(
        "seed {}: {}: {} acquisitions, {} writes accepted, {} stale writes rejected by fencing, {} library errors; \
            faults: {}; {} ms",
        r.seed,
        r.verdict,
        t.acquisitions,
        t.accepted_writes,
        t.rejected_writes,
        t.errors,
        if faults.is_empty() { "none".to_string() } else { faults.join(", ") },
        r.wall_ms
    );
    for (property, detail) in &r.violated {
        say!("  {property} violated by real {}: {detail}", library.name());
    }
    if !t.unfinished.is_empty() {
        say!(
            "  UNKNOWN: {} had not taken all their rounds by the deadline (a history cannot tell slow from stuck)",
            t.unfinished.join(", ")
        );
    }
}
