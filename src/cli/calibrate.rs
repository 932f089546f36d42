//! `zklab calibrate`: how much of the checker's state space a number of simulated seeds reaches.

use super::CliError;
use super::ClientChoice;
use crate::exit::Exit;
use crate::scenario::{parse_faults, BadInput, Scenario};
use zklab_model::WorldConfig;

#[derive(clap::Args)]
pub struct Args {
    /// The recipe every client runs.
    #[arg(long, default_value = "standard")]
    pub recipe: String,
    /// How many clients: few enough for the checker to explore every state.
    #[arg(long, default_value_t = 3)]
    pub clients: usize,
    /// The checker's faults (each once); the simulator runs them as rates.
    #[arg(long, default_value = "loss-after-apply")]
    pub faults: String,
    /// Client library behaviour on reconnect.
    #[arg(long, value_enum, default_value = "java")]
    pub client: ClientChoice,
    /// Comma list of seed counts to report.
    #[arg(long, default_value = "1,10,100,1000")]
    pub seeds: String,
    /// Refuse worlds with more states than this.
    #[arg(long, default_value_t = 2_000_000)]
    pub max_states: usize,
    /// Print the rows as JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Print no progress.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Calibrates and prints the table; failed when a simulated state is one the checker never
/// explored.
pub fn run(args: &Args) -> Result<Exit, CliError> {
    let (recipe, clients, faults, client, seeds, max_states, json) =
        (&args.recipe, args.clients, &args.faults, args.client, &args.seeds, args.max_states, args.json);
    let config =
        WorldConfig { faults: parse_faults(faults)?, client_behaviour: client.behaviour(), ..WorldConfig::default() };
    let scenario = Scenario::new(recipe, clients, config)?;
    let counts = seeds
        .split(',')
        .map(|s| match s.trim().parse::<u64>() {
            Ok(n) if (1..=1_000_000).contains(&n) => Ok(n),
            _ => Err(BadInput(format!("--seeds: `{s}` is not a count between 1 and 1000000"))),
        })
        .collect::<Result<Vec<_>, _>>()?;
    super::stop_on_ctrl_c();
    let progress = (!args.quiet).then_some(super::progress_to_stderr as crate::progress::Progress);
    let calibration = crate::calibrate::calibrate(&scenario, &counts, max_states, progress).map_err(BadInput)?;
    if json {
        say!("{}", serde_json::to_string(&calibration).expect("calibrations serialize"));
    } else {
        match (calibration.interrupted, calibration.rows.is_empty()) {
            (true, true) => say!("interrupted while exploring the checker's space: nothing to compare yet"),
            (true, false) => {
                say_raw!("{}", crate::calibrate::table(&calibration));
                say!("interrupted: the rows above are what was run by then");
            }
            (false, _) => say_raw!("{}", crate::calibrate::table(&calibration)),
        }
    }
    let explained = calibration.rows.iter().all(|r| r.unexplained == 0);
    Ok(match (explained, calibration.interrupted) {
        (false, _) => Exit::Failed,
        (true, true) => Exit::Unknown,
        (true, false) => Exit::Passed,
    })
}
