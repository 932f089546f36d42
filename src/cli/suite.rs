//! `zklab` with no command, or `zklab suite`: the built-in suite (`crate::suite::CASES`) run and
//! printed case by case, then a legend of the properties.

use super::CliError;
use crate::check;
use crate::exit::Exit;
use crate::suite::{options, unexpected, CASES};
use std::path::PathBuf;
use zklab_model::ClientBehaviour::{Java, Kazoo};
use zklab_model::Property;

#[derive(clap::Args)]
pub struct Args {
    /// Threads that expand states (the answers do not depend on it).
    #[arg(long, default_value_t = 2)]
    pub threads: usize,
    /// Where the broken variants' counterexamples are written.
    #[arg(long, default_value = "zklab-traces")]
    pub trace_dir: PathBuf,
}

impl Default for Args {
    fn default() -> Self {
        Args { threads: 2, trace_dir: PathBuf::from("zklab-traces") }
    }
}

/// What the verdicts speak of, and where to look next.
fn legend() {
    say!("\nproperties:");
    let more = [Property::NoHerd, Property::EventualAcquire, Property::BarrierWaits, Property::TakenOnce];
    for p in Property::SAFETY.into_iter().chain(more) {
        say!("  {:<18} {}", p.name(), p.summary());
    }
    say!("  {:<18} {}", "reached:*", Property::Reached(zklab_model::Reach::Handoff).summary());
    say!(
        "a trace as a timeline: zklab replay --show TRACE (--html TRACE: a page to step through); why each pitfall \
            happens: docs/pitfalls.md"
    );
}

/// Runs every case; passed when each verdict is as expected.
pub fn run(args: &Args) -> Result<Exit, CliError> {
    super::check::check_threads(args.threads)?;
    crate::user_files::check_writable(&args.trace_dir)?;
    let options = check::Options {
        progress: Some(super::progress_to_stderr),
        interrupt: Some(&crate::interrupt::INTERRUPTED),
        ..options(args.threads)
    };
    super::stop_on_ctrl_c();
    let (mut failures, mut run) = (0, 0);
    say!("{:<18} {:>2}  {:<50} {:>9} {:>8}  verdict", "recipe", "N", "faults", "states", "ms");
    for (i, case) in CASES.iter().enumerate() {
        // Which case runs, as the manifest says it: most take well under the second after which
        // a check prints its own progress.
        let faults = match case.client {
            Java => case.faults.to_string(),
            Kazoo => format!("{} (kazoo)", case.faults),
        };
        eprintln!("[{}/{}] {} x{} {faults}", i + 1, CASES.len(), case.recipe, case.clients);
        let mut report = check::run(&case.scenario(), &options);
        if report.outcome.spent == Some(check::search::Spent::Interrupted) {
            // Stopped by a signal: this case has no verdict, and the rest are not run.
            break;
        }
        run += 1;
        crate::trace_files::write(&mut report, &args.trace_dir, false)
            .map_err(|e| CliError::BadInput(format!("cannot write traces: {e}")))?;
        let unexpected = unexpected(case, &report);
        let verdict = if case.violated.is_empty() {
            "proven".to_string()
        } else {
            format!("caught: {}", case.violated.iter().map(|p| p.name()).collect::<Vec<_>>().join(", "))
        };
        let verdict = if unexpected.is_empty() { verdict } else { format!("UNEXPECTED: {}", unexpected.join(", ")) };
        failures += usize::from(!unexpected.is_empty());
        say!(
            "{:<18} {:>2}  {:<50} {:>9} {:>8}  {verdict}",
            case.recipe,
            case.clients,
            faults,
            report.outcome.unique_states,
            report.outcome.elapsed_ms
        );
        say!("{:<22}  {}", "", case.lesson);
        for p in report.properties.iter().filter(|p| p.trace_file.is_some()) {
            say!("{:<22}  {} trace: {}", "", p.name, p.trace_file.as_deref().unwrap_or_default());
        }
    }
    legend();
    if run < CASES.len() {
        say!("\ninterrupted: {run} of {} cases run, {failures} NOT as expected", CASES.len());
        return Ok(if failures == 0 { Exit::Unknown } else { Exit::Failed });
    }
    if failures == 0 {
        say!("\nall {} cases as expected", CASES.len());
    } else {
        say!("\n{failures} of {} cases NOT as expected", CASES.len());
    }
    Ok(Exit::passed_if(failures == 0))
}
