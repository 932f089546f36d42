//! `zklab client-check`: real lock code, in any language, run against the model served as a
//! ZooKeeper server, with zklab's scheduler owning every message: which client's request the
//! server applies next, when each reply and watch event reaches its client, and where a
//! connection is lost (before or after the server applied a request) or a session expires.
//!
//! - `switchboard`: the held requests and frames, and the choices (without I/O);
//! - `wiring`: a loopback port per client, the frames and the history lines heard;
//! - `clients`: the client processes and the line protocol they speak;
//! - `quiet`: when the clients have finished reacting to a choice;
//! - `strategy`: random choices with PCT priorities, or a recorded schedule;
//! - `rig`: the ports, client processes and connections a campaign's runs share;
//! - `run`: one run, judged by the history judge `real` uses;
//! - `describe`: each choice in words;
//! - `divergence`: a schedule followed on zklab's model of the library, and where they part;
//! - `server_state`: the served server's state, canonical, to count the distinct ones covered;
//! - `systematic`: depth-first over the choices, bounded, with sleep sets;
//! - `shrink`: a violating schedule made smaller;
//! - `saved`: a schedule in a file, run again from it;
//! - `page`: a saved schedule as an HTML page.

pub mod clients;
pub mod describe;
pub mod divergence;
pub mod page;
pub mod quiet;
pub mod rig;
pub mod run;
pub mod saved;
pub mod server_state;
pub mod shrink;
pub mod strategy;
pub mod switchboard;
pub mod systematic;
pub mod wiring;

pub use clients::{ClientProgram, Task};
pub use run::{End, RunError, RunResult, Runner, Setup};
pub use saved::SavedSchedule;
pub use shrink::{shrink, Shrunk};
pub use switchboard::{Choice, Faults};

use strategy::{Pct, Replay};

/// A campaign: random schedules from consecutive seeds.
#[derive(Clone, Debug)]
pub struct Campaign {
    pub setup: Setup,
    pub schedules: usize,
    pub seed: u64,
    /// PCT's depth: priority changes per run, plus one.
    pub depth: usize,
    pub max_faults: u32,
    pub fault_chance: f64,
    /// Each schedule run again this many times, its history compared.
    pub replays: usize,
}

/// One schedule's run.
pub struct Tried {
    /// The seed of a random schedule (none for a systematic run).
    pub seed: Option<u64>,
    pub result: RunResult,
    /// Replays whose history was the same, and replays made.
    pub replayed_same: usize,
    pub replayed: usize,
    /// Where the first replay that told another history parted from the first run.
    pub parted: Option<String>,
    /// Recorded choices the replays waited for (`RunResult::late`).
    pub late: usize,
}

/// Where `again`, a replay of `first`'s schedule, tells another history; `None` if it does not.
pub fn parting(first: &RunResult, again: &RunResult) -> Option<String> {
    let (a, b) = (first.story(), again.story());
    if a == b && first.end == again.end {
        return None;
    }
    let at = a.iter().zip(&b).position(|(x, y)| x != y).unwrap_or(a.len().min(b.len()));
    let show = |s: &[(usize, usize, String)]| {
        s.get(at).map_or("nothing".to_string(), |(step, c, said)| format!("c{c} {said} after step {step}"))
    };
    Some(format!(
        "event {at}: {} the first time, {} on replay (ends {:?} and {:?})",
        show(&a),
        show(&b),
        first.end,
        again.end
    ))
}

/// Runs the campaign, calling `each` after every schedule; stops at the first violation when
/// `stop_at_violation`.
pub fn explore(
    campaign: &Campaign,
    dir: &std::path::Path,
    stop_at_violation: bool,
    mut each: impl FnMut(&Tried),
) -> Result<Vec<Tried>, RunError> {
    let mut tried = Vec::new();
    // PCT draws its priority changes among a run's steps; a change point past a run's end
    // never acts. A seed's schedule depends on nothing but the seed and the setup, so the
    // estimate is the setup's: some 15 choices per client per round (kazoo's Lock takes 14).
    let steps = (15 * campaign.setup.clients * campaign.setup.task.rounds as usize).min(campaign.setup.max_steps);
    let mut runner = run::Runner::new(&campaign.setup, dir);
    for k in 0..campaign.schedules {
        if crate::interrupt::interrupted() {
            break;
        }
        let seed = campaign.seed.wrapping_add(k as u64);
        let mut pct =
            Pct::new(seed, campaign.setup.clients, campaign.depth, steps, campaign.max_faults, campaign.fault_chance);
        let result = runner.run(&mut pct)?;
        let mut same = 0;
        let mut parted = None;
        let mut late = 0;
        for _ in 0..campaign.replays {
            let again = runner.run(&mut Replay::new(result.schedule.clone()))?;
            late += again.late;
            match parting(&result, &again) {
                None => same += 1,
                Some(how) => parted = parted.or(Some(how)),
            }
        }
        let violated = !result.findings.is_empty();
        let one = Tried { seed: Some(seed), result, replayed_same: same, replayed: campaign.replays, parted, late };
        each(&one);
        tried.push(one);
        if violated && stop_at_violation {
            break;
        }
    }
    Ok(tried)
}

/// Runs a recorded schedule again.
pub fn replay(setup: &Setup, schedule: &[Choice], dir: &std::path::Path) -> Result<RunResult, RunError> {
    run::run(setup, &mut Replay::new(schedule.to_vec()), dir)
}
