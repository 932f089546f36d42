//! What one simulated run is: the world, the seed, the network, the workload and the faults.

use crate::faults::TimedFault;
use crate::queue::Micros;
use serde::{Deserialize, Serialize};
use zklab_model::{FaultKind, WorldConfig};

/// The most clients a run may have: enough for a production-sized herd, small enough that a
/// mistyped count is refused rather than eating the machine.
pub const MAX_CLIENTS: usize = 100_000;

/// The longest any one duration of a run may be (a hold, the chaos phase, the healed phase, the
/// start spread, a scheduled fault's moment): a day of virtual time. A longer one is a typo, and
/// sums of them must never overflow the clock.
pub const MAX_DURATION_US: Micros = 86_400_000_000;

/// The slowest link a run may have: a minute one way.
pub const MAX_LATENCY_US: Micros = 60_000_000;

/// A uniform one-way latency, server to client, in microseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Latency {
    pub min_us: u64,
    pub max_us: u64,
}

impl Default for Latency {
    /// A LAN: well under a millisecond.
    fn default() -> Self {
        Latency { min_us: 100, max_us: 400 }
    }
}

/// How often each fault strikes during the chaos phase. A lost request or reply is a
/// probability per request sent; the other faults are counts, each striking a client chosen at
/// random at a drawn point of its lock work (`Anchors`), or for the server's own events at a
/// moment drawn in the chaos phase.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FaultRates {
    pub loss_before_apply: f64,
    pub loss_after_apply: f64,
    /// The probability that a read is answered by a lagging follower.
    pub lagging_read: f64,
    /// The probability that a read's follower falls behind for the rest of the connection.
    #[serde(default)]
    pub lagging_session: f64,
    pub disconnects: u32,
    pub expiries: u32,
    pub crashes: u32,
    pub pauses: u32,
    /// Times the container manager gets to delete an empty lock parent.
    pub reaps: u32,
    /// Times an application stops waiting (only a waiter whose recipe can give up does).
    #[serde(default)]
    pub give_ups: u32,
    /// Times an operator deletes the lock node's oldest child.
    #[serde(default)]
    pub operator_deletes: u32,
}

impl FaultRates {
    /// The default rate of `kind` when it is named without one: 1% of requests for connection
    /// loss, one occurrence of the others.
    pub fn set_default(&mut self, kind: FaultKind) {
        self.set(kind, if kind.strikes_a_request() { 0.01 } else { 1.0 });
    }

    pub fn set(&mut self, kind: FaultKind, rate: f64) {
        match kind {
            FaultKind::LossBeforeApply => self.loss_before_apply = rate,
            FaultKind::LossAfterApply => self.loss_after_apply = rate,
            FaultKind::LaggingRead => self.lagging_read = rate,
            FaultKind::LaggingSession => self.lagging_session = rate,
            FaultKind::Disconnect => self.disconnects = rate as u32,
            FaultKind::Expire => self.expiries = rate as u32,
            FaultKind::Crash => self.crashes = rate as u32,
            FaultKind::Pause => self.pauses = rate as u32,
            FaultKind::ReapParent => self.reaps = rate as u32,
            FaultKind::GiveUp => self.give_ups = rate as u32,
            FaultKind::OperatorDelete => self.operator_deletes = rate as u32,
        }
    }

    /// How many times a timed fault kind strikes.
    pub fn count(&self, kind: FaultKind) -> u32 {
        match kind {
            FaultKind::LossBeforeApply
            | FaultKind::LossAfterApply
            | FaultKind::LaggingRead
            | FaultKind::LaggingSession => 0,
            FaultKind::Disconnect => self.disconnects,
            FaultKind::Expire => self.expiries,
            FaultKind::Crash => self.crashes,
            FaultKind::Pause => self.pauses,
            FaultKind::ReapParent => self.reaps,
            FaultKind::GiveUp => self.give_ups,
            FaultKind::OperatorDelete => self.operator_deletes,
        }
    }

    pub fn any(&self) -> bool {
        self.loss_before_apply > 0.0
            || self.loss_after_apply > 0.0
            || self.lagging_read > 0.0
            || self.lagging_session > 0.0
            || FaultKind::ALL.into_iter().any(|k| self.count(k) > 0)
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SimConfig {
    /// The world as the checker would build it (fault budgets are the simulator's to set).
    pub world: WorldConfig,
    pub seed: u64,
    /// Every link's latency, unless `links` says otherwise.
    pub latency: Latency,
    /// Per-link latencies: client `i`'s link has `links[i % links.len()]` (empty: all alike).
    pub links: Vec<Latency>,
    /// Clients start within this long of the beginning (0: all together, in client order).
    pub start_spread_us: Micros,
    /// How long a holder keeps the lock.
    pub hold_us: Micros,
    /// How long a client waits between releasing and asking again.
    pub think_us: Micros,
    pub rates: FaultRates,
    /// Faults at given moments, on top of the rates.
    pub schedule: Vec<TimedFault>,
    /// Faults strike only before this moment; after it the run heals.
    pub chaos_us: Micros,
    /// After the chaos phase, and once every client has started, every live waiter must
    /// acquire within this long, or the run is a liveness violation. `None`: ten session timeouts
    /// plus every round's hold, one after the other.
    pub heal_bound_us: Option<Micros>,
    /// The observer settles each state as the checker keeps it (calibration), so the world
    /// keeps what renumbering by replay needs; otherwise no client keeps its recipe's inputs.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub as_checked: bool,
    /// Keep at most this many steps (and their times) for a trace. A run that takes more drops
    /// them all and keeps none from then on, so its memory is the world's and its counts',
    /// however long it runs; the run is the same (its `steps_hash` says so), so a violation
    /// found without them can be run again with them to make its trace.
    #[serde(skip, default = "keep_all")]
    pub keep_steps: usize,
    /// Measure the herd instead of judging it: `no_herd` is not judged, so a herd recipe's run
    /// goes on to its end and its figures are whole (`zklab herd`). Otherwise a herd is a
    /// violation that ends the run, as any other.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub measure_herd: bool,
}

fn keep_all() -> usize {
    usize::MAX
}

impl SimConfig {
    pub fn new(world: WorldConfig, seed: u64) -> Self {
        SimConfig {
            world,
            seed,
            latency: Latency::default(),
            links: Vec::new(),
            start_spread_us: 0,
            hold_us: 10_000,
            think_us: 1_000,
            rates: FaultRates::default(),
            schedule: Vec::new(),
            chaos_us: 2_000_000,
            heal_bound_us: None,
            as_checked: false,
            keep_steps: usize::MAX,
            measure_herd: false,
        }
    }

    /// Client `i`'s link.
    pub fn link(&self, i: usize) -> Latency {
        match self.links.len() {
            0 => self.latency,
            n => self.links[i % n],
        }
    }

    /// The slowest link's worst latency.
    pub fn max_latency_us(&self) -> u64 {
        std::iter::once(&self.latency).chain(&self.links).map(|l| l.max_us).max().unwrap_or(0)
    }

    pub fn validate(&self, clients: usize) -> Result<(), BadConfig> {
        if clients == 0 || clients > MAX_CLIENTS {
            return Err(BadConfig(format!("--clients must be between 1 and {MAX_CLIENTS}, got {clients}")));
        }
        if self.world.rounds == zklab_model::UNBOUNDED_ROUNDS {
            return Err(BadConfig(format!(
                "--rounds must be below {}: a simulated run ends when every client has played its rounds",
                zklab_model::UNBOUNDED_ROUNDS
            )));
        }
        if let Some(bad) = std::iter::once(&self.latency).chain(&self.links).find(|l| l.min_us > l.max_us) {
            return Err(BadConfig(format!("latency minimum {} us is above its maximum {} us", bad.min_us, bad.max_us)));
        }
        for (name, p) in [
            ("loss-before-apply", self.rates.loss_before_apply),
            ("loss-after-apply", self.rates.loss_after_apply),
            ("lagging-read", self.rates.lagging_read),
            ("lagging-session", self.rates.lagging_session),
        ] {
            if !(0.0..=1.0).contains(&p) {
                return Err(BadConfig(format!("{name} must be a probability between 0 and 1, got {p}")));
            }
        }
        if self.rates.loss_before_apply + self.rates.loss_after_apply > 1.0 {
            return Err(BadConfig("the connection-loss probabilities add up to more than 1".to_string()));
        }
        if let Some(fault) = self.schedule.iter().find(|f| (f.client as usize) >= clients) {
            return Err(BadConfig(format!(
                "the schedule names client {} but the run has {clients} clients",
                fault.client
            )));
        }
        let day = MAX_DURATION_US / 1000;
        for (name, us) in [
            ("--hold-ms", self.hold_us),
            ("the think time", self.think_us),
            ("--chaos-ms", self.chaos_us),
            ("--heal-ms", self.heal_bound_us.unwrap_or(0)),
            ("--start-spread-ms", self.start_spread_us),
        ] {
            if us > MAX_DURATION_US {
                return Err(BadConfig(format!("{name} must be at most {day} ms (a day), got {} ms", us / 1000)));
            }
        }
        if let Some(slow) = std::iter::once(&self.latency).chain(&self.links).find(|l| l.max_us > MAX_LATENCY_US) {
            return Err(BadConfig(format!(
                "--latency-us must be at most {MAX_LATENCY_US} us (a minute), got {}",
                slow.max_us
            )));
        }
        // A fault after the chaos phase would strike the healed run, whose waiters are judged
        // as if nothing could go wrong any more.
        if let Some(late) = self.schedule.iter().find(|f| f.at_ms.saturating_mul(1000) >= self.chaos_us) {
            return Err(BadConfig(format!(
                "the schedule's {} at {} ms is not within the chaos phase (the first {} ms): raise --chaos-ms",
                late.fault,
                late.at_ms,
                self.chaos_us / 1000
            )));
        }
        Ok(())
    }
}

/// A configuration that cannot be simulated, said in one line.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BadConfig(pub String);
