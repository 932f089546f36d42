//! How the next choice is picked: at random from a seed, with priorities in the manner of PCT
//! (Burckhardt et al., ASPLOS 2010), or as a recorded schedule says (replay).
//!
//! PCT gives each client a random priority and always runs the highest-priority client that can
//! move; at `depth - 1` random steps it drops the running client below every other. A bug that
//! needs `depth` ordering constraints is found with probability at least 1/(n k^(depth-1)) per
//! run (n clients, k steps), where uniform random choices can be exponentially worse. Faults are
//! drawn beside: at each step, while the run has faults left, one is taken with `fault_chance`,
//! and the client it strikes drops below every other (a change point of its own).

use super::switchboard::Choice;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Picks among the enabled choices.
pub trait Strategy {
    /// The choice to take at `step`, among `enabled` (non-empty); `None` ends the run (a replay
    /// whose recorded choice is not enabled).
    fn pick(&mut self, step: usize, enabled: &[Choice]) -> Option<Choice>;

    /// When no client can move and none acts by itself: a fault to take (from `enabled`), or
    /// `None` to call the run stuck. A random run calls it stuck; a replay takes what it
    /// recorded.
    fn at_rest(&mut self, _step: usize, _enabled: &[Choice]) -> Option<Choice> {
        None
    }

    /// Whether a `None` from `pick` at `step` means the schedule is used up (the run is cut
    /// there) rather than that it diverged.
    fn exhausted(&self, _step: usize) -> bool {
        false
    }

    /// The choice a recorded schedule has for `step`, if it follows one (for a divergence's
    /// report).
    fn wanted(&self, _step: usize) -> Option<Choice> {
        None
    }
}

/// Random choices with PCT priorities, from a seed.
pub struct Pct {
    rng: ChaCha8Rng,
    /// Each client's priority: the higher runs first.
    priority: Vec<i64>,
    /// The steps at which the running client drops to the lowest priority.
    change_points: Vec<usize>,
    lowest: i64,
    fault_chance: f64,
    faults_left: u32,
}

impl Pct {
    /// `clients` clients, priorities changed at `depth - 1` of the first `steps` steps, at most
    /// `max_faults` faults each drawn with `fault_chance`.
    pub fn new(seed: u64, clients: usize, depth: usize, steps: usize, max_faults: u32, fault_chance: f64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut priority: Vec<i64> = (0..clients as i64).map(|p| p + depth as i64).collect();
        for i in (1..priority.len()).rev() {
            let j = rng.random_range(0..=i);
            priority.swap(i, j);
        }
        let change_points = (1..depth).map(|_| rng.random_range(0..steps.max(1))).collect();
        Pct { rng, priority, change_points, lowest: depth as i64, fault_chance, faults_left: max_faults }
    }
}

impl Strategy for Pct {
    fn pick(&mut self, step: usize, enabled: &[Choice]) -> Option<Choice> {
        let faults: Vec<Choice> = enabled.iter().copied().filter(|c| c.is_fault()).collect();
        if self.faults_left > 0 && !faults.is_empty() && self.rng.random_bool(self.fault_chance) {
            self.faults_left -= 1;
            let fault = faults[self.rng.random_range(0..faults.len())];
            // The client a fault strikes drops below every other, as at a change point: what
            // the others do while it recovers is where faults break locks (an expired holder
            // that has not heard yet, a waiter woken while the holder reconnects).
            self.lowest -= 1;
            self.priority[fault.client()] = self.lowest;
            return Some(fault);
        }
        let moves: Vec<Choice> = enabled.iter().copied().filter(|c| !c.is_fault()).collect();
        let pool = if moves.is_empty() { &faults } else { &moves };
        if pool.is_empty() {
            return None;
        }
        let top = pool.iter().map(|c| self.priority[c.client()]).max()?;
        let mine: Vec<Choice> = pool.iter().copied().filter(|c| self.priority[c.client()] == top).collect();
        let choice = mine[self.rng.random_range(0..mine.len())];
        if choice.is_fault() {
            self.faults_left = self.faults_left.saturating_sub(1);
        }
        if self.change_points.contains(&step) {
            self.lowest -= 1;
            self.priority[choice.client()] = self.lowest;
        }
        Some(choice)
    }
}

/// The choices of a recorded schedule, in order.
pub struct Replay {
    schedule: Vec<Choice>,
}

impl Replay {
    pub fn new(schedule: Vec<Choice>) -> Self {
        Replay { schedule }
    }
}

impl Strategy for Replay {
    fn pick(&mut self, step: usize, enabled: &[Choice]) -> Option<Choice> {
        self.schedule.get(step).copied().filter(|c| enabled.contains(c))
    }

    fn at_rest(&mut self, step: usize, enabled: &[Choice]) -> Option<Choice> {
        self.pick(step, enabled)
    }

    fn exhausted(&self, step: usize) -> bool {
        step >= self.schedule.len()
    }

    fn wanted(&self, step: usize) -> Option<Choice> {
        self.schedule.get(step).copied()
    }
}

/// A recorded schedule followed loosely, for shrinking: a choice that is not enabled when its
/// turn comes is skipped, so a schedule with a step or a fault taken out still runs (each
/// choice names a client, not a message, so the next one moves that client's oldest).
pub struct Guided {
    schedule: Vec<Choice>,
    next: usize,
}

impl Guided {
    pub fn new(schedule: Vec<Choice>) -> Self {
        Guided { schedule, next: 0 }
    }
}

impl Strategy for Guided {
    fn pick(&mut self, _step: usize, enabled: &[Choice]) -> Option<Choice> {
        while let Some(choice) = self.schedule.get(self.next).copied() {
            self.next += 1;
            if enabled.contains(&choice) {
                return Some(choice);
            }
        }
        None
    }

    fn at_rest(&mut self, step: usize, enabled: &[Choice]) -> Option<Choice> {
        self.pick(step, enabled)
    }

    fn exhausted(&self, _step: usize) -> bool {
        self.next >= self.schedule.len()
    }
}
