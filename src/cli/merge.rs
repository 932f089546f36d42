//! `zklab merge`: the shard reports of one campaign (`check --swarm ... --shard I/N --json`,
//! `simulate --seeds ... --shard I/N --json`), run as independent jobs, combined into the
//! verdict one run would give: each broken property's shortest counterexample, written to the
//! trace directory; counts summed; exit 1 on a violation, 3 while a shard is missing or was cut
//! short (or for a swarm, which never proves), else 0.

use super::CliError;
use crate::exit::Exit;
use crate::scenario::BadInput;
use crate::shard::{merge, Shard, ShardReport};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// The shard reports, one file each (as `--shard I/N --json` prints them), of one campaign.
    #[arg(required = true, value_name = "REPORT")]
    reports: Vec<PathBuf>,
    /// Print the merged report as one JSON object (the shard report format) instead of text.
    #[arg(long)]
    json: bool,
    /// Where the kept counterexamples are written.
    #[arg(long, default_value = "zklab-traces")]
    trace_dir: PathBuf,
}

pub fn run(args: &Args) -> Result<Exit, CliError> {
    let mut reports = Vec::new();
    for file in &args.reports {
        let name = file.display().to_string();
        let text = crate::user_files::read_input(file).map_err(|e| BadInput(format!("cannot read {name}: {e}")))?;
        let report: ShardReport =
            serde_json::from_str(&text).map_err(|e| BadInput(format!("{name} is not a shard report: {e}")))?;
        reports.push((name, report));
    }
    let merged = merge(reports).map_err(BadInput)?;
    crate::user_files::check_writable(&args.trace_dir)?;
    for finding in &merged.findings {
        crate::user_files::replaceable(&args.trace_dir.join(&finding.file), crate::user_files::Output::Json)
            .map_err(BadInput)?;
    }
    let cant = |e: std::io::Error| BadInput(format!("cannot write traces to {}: {e}", args.trace_dir.display()));
    if !merged.findings.is_empty() {
        std::fs::create_dir_all(&args.trace_dir).map_err(cant)?;
    }
    let mut written = Vec::new();
    for finding in &merged.findings {
        let file = args.trace_dir.join(&finding.file);
        finding.trace.write(&file).map_err(cant)?;
        written.push(file.display().to_string());
    }
    if args.json {
        say!("{}", serde_json::to_string(&merged).expect("shard reports serialize"));
    } else {
        print(&merged, &written);
    }
    Ok(merged.exit())
}

fn print(merged: &ShardReport, written: &[String]) {
    let command = merged.campaign["command"].as_str().unwrap_or("a campaign");
    let swarm = !merged.can_pass;
    let unit = if swarm { "walks" } else { "seeds" };
    let c = &merged.covered;
    say!(
        "merged {} of {} shards of `{command}`: {} of {} {unit} run to their end, {} {}",
        merged.shards.len(),
        merged.count,
        c.units,
        merged.total,
        c.steps,
        if swarm { "states visited" } else { "steps" }
    );
    if let Some(distinct) = c.distinct_states {
        say!("  distinct states: at most {distinct} (each shard's, summed: shards may meet the same state)");
    }
    if let Some(broke) = c.broke {
        say!("  {broke} of the {unit} broke a property");
    }
    if let Some(undecided) = c.undecided {
        say!("  {undecided} of the {unit} ended with a client still waiting and no deadlock: no verdict");
    }
    for (finding, file) in merged.findings.iter().zip(written) {
        let from = if swarm { "walk" } else { "seed" };
        say!(
            "{} violated: shortest counterexample {} steps ({from} {}): {}",
            finding.property,
            finding.trace.steps.len(),
            finding.unit,
            finding.detail
        );
        say!("  trace: {file}");
    }
    for reached in &merged.reached {
        say!("{reached}: reached");
    }
    let missing: Vec<String> =
        merged.missing().iter().map(|&index| Shard { index, count: merged.count }.to_string()).collect();
    if !missing.is_empty() {
        say!("missing shards: {}", missing.join(", "));
    }
    for why in &merged.bounded_by {
        say!("a shard was stopped before its part was done: {why}");
    }
    let verdict = match merged.exit() {
        Exit::Failed => "violated",
        Exit::Passed => "passed",
        _ if swarm && missing.is_empty() && merged.bounded_by.is_empty() => {
            "unknown: nothing broken (random walks cannot prove a property)"
        }
        _ if c.undecided.is_some() => "unknown: some runs ended with a client still waiting (no deadlock)",
        _ => "unknown: the campaign is not complete",
    };
    say!("{verdict}");
}
