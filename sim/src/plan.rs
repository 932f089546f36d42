//! What a seed plans for a run, drawn the same way wherever the plan is carried out (the
//! simulator's virtual clock, or a real ZooKeeper's wall clock): which fault kinds the world
//! must allow, the faults of the chaos phase (timed, or anchored to lock work), and the lost
//! requests.

use crate::anchors::Anchors;
use crate::config::SimConfig;
use crate::queue::Micros;
use crate::streams::{between, Streams};
use crate::timing::SessionTiming;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use zklab_model::{ClientId, FaultBudget, FaultKind, RequestFault};

impl SimConfig {
    /// Whether the run's rates make `kind` strike.
    pub fn rated(&self, kind: FaultKind) -> bool {
        match kind {
            FaultKind::LossBeforeApply => self.rates.loss_before_apply > 0.0,
            FaultKind::LossAfterApply => self.rates.loss_after_apply > 0.0,
            FaultKind::LaggingRead => self.rates.lagging_read > 0.0,
            FaultKind::LaggingSession => self.rates.lagging_session > 0.0,
            _ => self.rates.count(kind) > 0,
        }
    }

    /// Whether the run's rates or schedule make `kind` strike.
    pub fn uses(&self, kind: FaultKind) -> bool {
        self.rated(kind) || self.schedule.iter().any(|f| f.fault == kind)
    }

    /// The world's fault budget for the run: the plan decides when faults strike, so the budget
    /// only must not refuse the kinds it uses (and must not allow the others: a lagging-read
    /// budget alone makes the server keep its history). A pause that outlasts the session is a
    /// partition too, so pauses allow expiry.
    pub fn fault_budget(&self) -> FaultBudget {
        let mut budget = [0; FaultKind::COUNT];
        for kind in FaultKind::ALL {
            if self.uses(kind) || (kind == FaultKind::Expire && self.uses(FaultKind::Pause)) {
                budget[kind.index()] = u32::MAX;
            }
        }
        FaultBudget(budget)
    }

    /// When a run of `clients` clients ends, counted from its start: the healed phase's bound
    /// after the faults have stopped and every client has started (a client that starts late is
    /// judged from its start). The durations are bounded (`SimConfig::validate`), so this fits
    /// the clock with room to spare. The simulator, `zklab real` and its libraries' runs all end
    /// here.
    pub fn heal_deadline_us(&self, clients: usize, timing: &SessionTiming) -> Micros {
        let per_round = self.hold_us + self.think_us + 2 * self.max_latency_us();
        let rounds = u64::from(self.world.rounds) * clients as u64;
        let bound = self.heal_bound_us.unwrap_or(10 * timing.timeout + rounds * per_round);
        self.chaos_us.max(self.start_spread_us) + bound
    }
}

impl SimConfig {
    /// How long clients may wait with no acquisition granted before the run is judged stalled
    /// (`eventual_acquire`, ended early): three session timeouts (a crashed or paused holder's
    /// session expires within one, and a waiter that was queued behind it is served then) plus
    /// two rounds of a hold, a think and a round trip. A correct lock grants within that while
    /// anyone waits; a run without a grant for longer is stuck, however busy, and is ended
    /// rather than run on to its heal deadline (for a long queue, hours of virtual time).
    pub fn stall_window_us(&self, timing: &SessionTiming) -> Micros {
        3 * timing.timeout + 2 * (self.hold_us + self.think_us + 2 * self.max_latency_us())
    }
}

/// One stream per fault kind, so turning one family off leaves the others' draws alone.
pub fn fault_streams(seed: u64) -> Vec<ChaCha8Rng> {
    FaultKind::ALL
        .iter()
        .map(|k| {
            let mut rng = Streams::new(seed).faults;
            rng.set_stream(10 + k.index() as u64);
            rng
        })
        .collect()
}

/// The run's faults: the timed ones, as (moment, kind, client), which are the server's events
/// the rates spread over the chaos phase and then the schedule's; and the rates' client faults,
/// anchored to a point of their client's lock work (`anchors`). Each is drawn from its kind's
/// stream: a moment and a client, then for an anchored one its attempt and point.
pub fn planned_faults(
    config: &SimConfig,
    clients: usize,
    streams: &mut [ChaCha8Rng],
) -> (Vec<(Micros, FaultKind, ClientId)>, Anchors) {
    let mut timed = Vec::new();
    let mut anchors = Anchors::new(clients);
    for kind in FaultKind::ALL {
        let rng = &mut streams[kind.index()];
        for _ in 0..config.rates.count(kind) {
            let at = between(rng, 0, config.chaos_us.saturating_sub(1));
            let client = between(rng, 0, clients as u64 - 1) as ClientId;
            if Anchors::anchors(kind) {
                anchors.anchor(kind, client, config.world.rounds, rng);
            } else {
                timed.push((at, kind, client));
            }
        }
    }
    timed.extend(config.schedule.iter().map(|f| (f.at(), f.fault, f.client)));
    (timed, anchors)
}

/// Whether the request a step is about to send is lost (or read from a lagging follower), as
/// the rates draw it: one draw per rated kind, the first that strikes wins.
pub fn draw_loss(config: &SimConfig, streams: &mut [ChaCha8Rng]) -> Option<RequestFault> {
    let mut loss = None;
    for (fault, p) in [
        (RequestFault::LossBeforeApply, config.rates.loss_before_apply),
        (RequestFault::LossAfterApply, config.rates.loss_after_apply),
        (RequestFault::LaggingRead, config.rates.lagging_read),
        (RequestFault::LaggingSession, config.rates.lagging_session),
    ] {
        if p > 0.0 {
            let draw: f64 = streams[fault.kind().index()].random();
            if loss.is_none() && draw < p {
                loss = Some(fault);
            }
        }
    }
    loss
}

/// How long a `pause` lasts, and when the server would expire the paused session counted from
/// the pause (it does only when the pause outlasts the earliest expiry: a process that sends no
/// pings is, to the server, partitioned). Both are drawn, in this order, whatever they give.
pub fn draw_pause(timing: &SessionTiming, rng: &mut ChaCha8Rng) -> (Micros, Option<Micros>) {
    let (lo, hi) = timing.expiry_window();
    let length = between(rng, timing.timeout / 2, 2 * timing.timeout);
    let expiry = between(rng, lo, hi);
    (length, (length > lo).then_some(expiry))
}

/// The longest a follower stays behind after a `lagging-session` fault, in microseconds.
pub const LAG_CATCH_UP_US: Micros = 100_000;

/// How long after a `lagging-session` fault the follower catches up: within a tenth of a
/// second (a healthy ensemble's followers trail by milliseconds, a busy one's by more).
pub fn draw_catch_up(rng: &mut ChaCha8Rng) -> Micros {
    between(rng, 1_000, LAG_CATCH_UP_US)
}
