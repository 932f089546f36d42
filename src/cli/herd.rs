//! `zklab herd`: the herd effect measured per recipe and client count, as a table and a chart.

use super::CliError;
use crate::exit::Exit;
use crate::scenario::BadInput;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct Args {
    /// Comma list of recipes.
    #[arg(long, default_value = "standard,parent-watch,naive")]
    pub recipes: String,
    /// Comma list of client counts.
    #[arg(long, default_value = "5,10,25,50,100")]
    pub clients: String,
    /// The simulator's seed for every run of the table.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Where the chart is written (its directory is made if need be).
    #[arg(long, short = 'o', default_value = "zklab-traces/herd.svg")]
    pub svg: PathBuf,
    /// Print the rows as JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Print no progress.
    #[arg(long, short)]
    pub quiet: bool,
    /// Replace the chart's file even if it is not an SVG chart (a file of yours by that name).
    #[arg(long)]
    pub force: bool,
}

/// Measures, prints the table and writes the chart; failed when a run broke a property.
pub fn run(args: &Args) -> Result<Exit, CliError> {
    let (recipes, clients, seed, svg, json) = (&args.recipes, &args.clients, args.seed, &args.svg, args.json);
    let recipes: Vec<String> = recipes.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect();
    let counts = clients
        .split(',')
        .map(|s| s.trim().parse::<usize>().map_err(|_| BadInput(format!("--clients: `{s}` is not a count"))))
        .collect::<Result<Vec<_>, _>>()?;
    if recipes.is_empty() || counts.is_empty() {
        return Err(BadInput("--recipes and --clients each need at least one entry".to_string()).into());
    }
    // Found out before the measuring, not after.
    let dir = svg.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    crate::user_files::check_writable(dir)?;
    super::refuse_to_replace(svg, crate::user_files::Output::Chart, args.force)?;
    if svg.is_dir() {
        return Err(BadInput(format!("cannot write {}: it is a directory", svg.display())).into());
    }
    super::stop_on_ctrl_c();
    let progress = (!args.quiet).then_some(super::progress_to_stderr as crate::progress::Progress);
    let (rows, interrupted) = crate::herd::measure(&recipes, &counts, seed, progress)?;
    std::fs::create_dir_all(dir).map_err(|e| BadInput(format!("cannot make {}: {e}", dir.display())))?;
    crate::herd::chart(&rows, svg).map_err(BadInput)?;
    if json {
        say!("{}", serde_json::to_string(&rows).expect("rows serialize"));
    } else {
        say_raw!("{}", crate::herd::table(&rows));
        say!("chart: {}", svg.display());
        if interrupted {
            say!("interrupted: {} of {} runs measured", rows.len(), recipes.len() * counts.len());
        }
    }
    Ok(match (rows.iter().all(|r| r.passed), interrupted) {
        (false, _) => Exit::Failed,
        (true, true) => Exit::Unknown,
        (true, false) => Exit::Passed,
    })
}
