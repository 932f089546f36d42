//! `zklab zk-script`: an op script run against the model (or a live server), its results printed
//! and, with `--expect`, compared with a recording.

use super::CliError;
use super::ClientChoice;
use crate::exit::Exit;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct Args {
    /// An op script (conformance/FORMAT.md), such as conformance/cases/14-lock-race.json.
    #[arg(value_name = "SCRIPT")]
    pub script: PathBuf,
    /// Compare with a recorded result file and list the differences (exit 1 if any).
    #[arg(long)]
    pub expect: Option<PathBuf>,
    /// Run against the ZooKeeper server at HOST:PORT instead of the model (its tree is
    /// cleaned first: every top-level node but /zookeeper is deleted).
    #[arg(long, value_name = "HOST:PORT")]
    pub server: Option<String>,
    /// Compare the results another runner wrote for SCRIPT (a client library's recorder run
    /// against `zklab serve`, say) with --expect, instead of running the script.
    #[arg(long, value_name = "FILE", requires = "expect", conflicts_with_all = ["server", "client"])]
    pub results: Option<PathBuf>,
    /// The client library whose behaviour over a cut connection (`disconnect`, `reconnect`)
    /// and whose jute.maxbuffer the session handles have [default: java, as for check and
    /// simulate; a single-library recording cannot tell the libraries apart].
    #[arg(long, value_enum)]
    pub client: Option<ClientChoice>,
}

fn read_json(path: &Path) -> Result<serde_json::Value, CliError> {
    let text = crate::user_files::read_input(path)
        .map_err(|e| CliError::BadInput(format!("cannot read {}: {e}", path.display())))?;
    serde_json::from_str(&text).map_err(|e| CliError::BadInput(format!("{} is not JSON: {e}", path.display())))
}

/// Runs the script and prints its results; failed when they differ from the recording.
pub fn run(args: &Args) -> Result<Exit, CliError> {
    let path = &args.script;
    let client = args.client.map_or(crate::conformance::DEFAULT_CLIENT, ClientChoice::behaviour);
    let script = read_json(path)?;
    // Read before the run: a recording that cannot be read is bad input, found first.
    let expected = args.expect.as_ref().map(|file| read_json(file)).transpose()?;
    let results = match (&args.results, &args.server) {
        (Some(file), _) => read_json(file)?,
        (None, None) => crate::conformance::run_script_as(&script, client)
            .map_err(|e| CliError::BadInput(format!("{}: {e}", path.display())))?,
        (None, Some(server)) => crate::conformance::run_script_live_as(&script, server, client)
            .map_err(|e| CliError::BadInput(format!("{}: {e}", path.display())))?,
    };
    if args.results.is_some() && results["case"] != script["name"] {
        return Err(CliError::BadInput(format!(
            "{} holds the results of case {}, not of {}",
            args.results.as_ref().map_or_else(String::new, |f| f.display().to_string()),
            results["case"],
            script["name"]
        )));
    }
    let cases = results["results"].as_array().map(Vec::as_slice).unwrap_or_default();
    say!("{{\"case\": {},\n \"results\": [", results["case"]);
    for (i, result) in cases.iter().enumerate() {
        say!("  {result}{}", if i + 1 < cases.len() { "," } else { "" });
    }
    say!(" ]}}");
    let (Some(expect), Some(expected)) = (&args.expect, expected) else { return Ok(Exit::Passed) };
    let differences = crate::conformance::differences(&expected, &results);
    for d in &differences {
        eprintln!("differs: {d}");
    }
    // On stderr, like the differences: stdout stays the results, JSON for whoever reads it.
    match differences.len() {
        0 => eprintln!("matches {}", expect.display()),
        n => eprintln!("{n} differences from {}", expect.display()),
    }
    Ok(Exit::passed_if(differences.is_empty()))
}
