//! `zklab zk-fuzz`: random op scripts against the model and a live server, a difference shrunk
//! and saved as a case.

use super::{progress_to_stderr, CliError};
use crate::exit::Exit;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// The ZooKeeper server (its tree is cleaned before every script); default: one started here
    /// from Debian's ZooKeeper jar for the run, and stopped after it.
    #[arg(long, value_name = "HOST:PORT")]
    pub server: Option<String>,
    /// How many scripts to compare.
    #[arg(long, default_value_t = 100)]
    pub scripts: u32,
    /// The random seed: the same seed makes the same scripts.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Where a shrunk mismatch is saved (as DIR/cases/NN-fuzz-seed-S.json and
    /// DIR/expected/NN-fuzz-seed-S.json).
    #[arg(long, value_name = "DIR", default_value = "zklab-fuzz")]
    pub save_dir: PathBuf,
    /// At most this many shrinking steps (each runs the server once).
    #[arg(long, default_value_t = 200)]
    pub max_shrink: u32,
}

/// Fuzzes; failed (and the shrunk case saved) when the model and the server differ.
pub fn run(args: &Args) -> Result<Exit, CliError> {
    if args.scripts == 0 {
        return Err(CliError::BadInput("--scripts must be at least 1".to_string()));
    }
    let save_dir = args.save_dir.as_path();
    if save_dir.exists() && !save_dir.is_dir() {
        return Err(CliError::BadInput(format!("--save-dir {} exists and is not a directory", save_dir.display())));
    }
    // Caught before the server starts, so a signal while it starts stops the run, not the process.
    super::stop_on_ctrl_c();
    // Kept to the end of the run: dropping it stops the server it started.
    let started = match &args.server {
        Some(_) => None,
        None => {
            crate::real::private::temporary().map_err(CliError::BadInput)?;
            Some(crate::real::Ensemble::start_patiently(1, &progress_to_stderr).map_err(CliError::Environment)?)
        }
    };
    let server = match (&args.server, &started) {
        (Some(server), _) => server.clone(),
        (None, Some(ensemble)) => ensemble.servers[0].clone(),
        (None, None) => unreachable!("a server was started"),
    };
    let options = &crate::conformance::FuzzOptions {
        server,
        scripts: args.scripts,
        seed: args.seed,
        max_shrink_iters: args.max_shrink,
        progress: Some(progress_to_stderr),
    };
    let report = crate::conformance::fuzz(options).map_err(|e| CliError::BadInput(e.to_string()))?;
    let Some(mismatch) = report.mismatch else {
        if report.interrupted {
            say!(
                "interrupted: {} of {} scripts (seed {}) compared; the model answered each like the server",
                report.compared,
                options.scripts,
                options.seed
            );
            return Ok(Exit::Unknown);
        }
        say!(
            "zk-fuzz: {} scripts (seed {}): the model answered every one like the server",
            report.compared,
            options.seed
        );
        return Ok(Exit::Passed);
    };
    say!(
        "zk-fuzz: script {} of seed {} differs; shrunk in {} runs to {} ops:",
        report.compared,
        options.seed,
        report.shrink_runs,
        mismatch.script["ops"].as_array().map_or(0, Vec::len)
    );
    say_raw!("{}", crate::conformance::script_text(&mismatch.script));
    for d in &mismatch.differences {
        say!("differs: {d}");
    }
    match crate::conformance::save(&mismatch, save_dir) {
        Ok(name) => say!("saved as {name} in {}/cases and {}/expected", save_dir.display(), save_dir.display()),
        Err(e) => say!("not saved: {e}"),
    }
    Ok(Exit::Failed)
}
