//! `zklab explore`: the explorer's page served on 127.0.0.1, its goal found by the checker first.

use super::{CliError, WorldArgs};
use crate::exit::Exit;
use crate::scenario::{parse_faults, BadInput, Scenario};
use crate::trace::Trace;
use std::path::PathBuf;
use std::time::Duration;
use zklab_model::WorldConfig;

#[derive(clap::Args)]
pub struct Args {
    /// Recipe name, or a comma list of one name per client.
    #[arg(long, required_unless_present_any = ["trace", "lessons"], conflicts_with_all = ["trace", "lessons"])]
    recipe: Option<String>,
    /// The lessons: each pitfall of docs/pitfalls.md (and the herd) as a level to break, with
    /// its recipe, faults and a hint; reaching the violation names the real bug.
    #[arg(long, conflicts_with_all = ["trace", "clients", "faults", "rounds", "client"])]
    lessons: bool,
    /// The world (the faults are those the learner may inject).
    #[command(flatten)]
    world: WorldArgs,
    /// Start at the end of this trace, in its world (step back with undo); the goal is what the
    /// trace breaks. The trace names its world, so the world's flags are refused beside it.
    #[arg(long, value_name = "TRACE", conflicts_with_all = ["clients", "faults", "rounds", "client"])]
    trace: Option<PathBuf>,
    /// The local port to serve on (default: a free one, printed).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// How long the checker may look for the shortest violation to set as the goal, in seconds.
    #[arg(long, default_value_t = 30)]
    goal_timeout: u64,
}

/// Serves the explorer until the process is stopped.
pub fn run(args: &Args) -> Result<Exit, CliError> {
    if !(1..=3600).contains(&args.goal_timeout) {
        return Err(
            BadInput(format!("--goal-timeout must be between 1 and 3600 seconds, got {}", args.goal_timeout)).into()
        );
    }
    if args.lessons {
        return serve_lessons(args);
    }
    let (scenario, start, property) = match &args.trace {
        Some(file) => {
            let trace = Trace::load(file).map_err(|e| BadInput(e.to_string()))?;
            // A simulator's trace may have more clients than the checker, which finds the
            // explorer's goal, explores: the limit of a scenario written for a check.
            trace.scenario.validate().map_err(|e| {
                BadInput(format!(
                    "{}: to explore it, {} (`zklab replay` reads a simulator's trace of any size)",
                    file.display(),
                    e.0
                ))
            })?;
            (trace.scenario, trace.steps, Some(trace.verdict.property))
        }
        None => {
            let config = WorldConfig {
                rounds: args.world.rounds,
                faults: parse_faults(&args.world.faults)?,
                client_behaviour: args.world.client.behaviour(),
                ..WorldConfig::default()
            };
            (Scenario::new(args.recipe.as_deref().unwrap_or_default(), args.world.clients, config)?, Vec::new(), None)
        }
    };
    crate::explore::position(&scenario, &start).map_err(|e| BadInput(format!("the trace does not replay: {e}")))?;
    let server = listen(args.port)?;
    let address = server.server_addr().to_ip().map(|a| a.to_string()).unwrap_or_default();
    say!("looking for the shortest violation to set as the goal (at most {} s)...", args.goal_timeout);
    let goal = crate::explore::goal(&scenario, Duration::from_secs(args.goal_timeout), property);
    match (&goal.property, goal.shortest) {
        (Some(property), Some(steps)) => say!("goal: break {property} (the shortest way takes {steps} steps)"),
        _ => say!("{}", goal.summary),
    }
    say!("zklab explore: http://{address}/ (only this machine can reach it; Ctrl-C stops)");
    crate::explore::serve(&server, &[crate::explore::site(&scenario, &goal, &start)], None);
    Ok(Exit::Passed)
}

/// Serves the lessons' levels, their goals found first.
fn serve_lessons(args: &Args) -> Result<Exit, CliError> {
    let server = listen(args.port)?;
    say!("finding each level's shortest violation (at most {} s each)...", args.goal_timeout);
    let (sites, index) = crate::explore::lesson_sites(Duration::from_secs(args.goal_timeout));
    let address = server.server_addr().to_ip().map(|a| a.to_string()).unwrap_or_default();
    say!("zklab explore: http://{address}/ ({} levels; only this machine can reach it; Ctrl-C stops)", sites.len());
    crate::explore::serve(&server, &sites, Some(&index));
    Ok(Exit::Passed)
}

fn listen(port: u16) -> Result<tiny_http::Server, CliError> {
    tiny_http::Server::http(("127.0.0.1", port))
        .map_err(|e| BadInput(format!("cannot serve on 127.0.0.1:{port}: {e}")).into())
}
