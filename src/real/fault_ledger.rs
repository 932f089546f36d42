//! Where a real run's faults struck, and the ledger of what became of each.
//!
//! A real run keeps the simulator's plan, so that a seed is the same run in both: the rates'
//! client faults (`disconnect`, `expire`, `crash`, `pause`, `give-up`) are anchored to a drawn
//! point of a drawn attempt of their client's lock work and strike the moment the client gets
//! there, within the chaos phase (`zklab_sim::Anchors`); a schedule's faults keep their moment
//! (the user chose it); a loss strikes a request the rates draw it for.
//!
//! Every fault is written in the ledger with where the client was when it struck
//! (`Phase::of_belief` in a recipe's run, its lines in a library's), or why it never did (the
//! client had died or finished; a loss armed for a create that never came; a point never
//! reached). A campaign in which some kind it asked for never struck during lock work says
//! nothing about that kind (`never_struck`), so it is no pass.

use super::history::Said;
use zklab_model::{Belief, FaultKind};
use zklab_sim::{Anchored, Anchors, Point};

/// Where a client is in its lock work, as its lines say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Connected, not asked for the lock yet.
    NotStarted,
    Waiting,
    Holding,
    Releasing,
    /// Released, its next round not begun.
    BetweenRounds,
    /// Done with every round, or dead.
    Finished,
}

impl Phase {
    /// Where a recipe's belief puts its client (`done`: it has no round left).
    pub fn of_belief(belief: Belief, done: bool) -> Phase {
        match belief {
            Belief::Acquiring => Phase::Waiting,
            Belief::Holding { .. } | Belief::Suspended { .. } => Phase::Holding,
            Belief::Releasing => Phase::Releasing,
            Belief::Idle if done => Phase::Finished,
            Belief::Idle => Phase::BetweenRounds,
        }
    }

    fn after(self, said: &Said) -> Phase {
        match said {
            Said::Acquiring => Phase::Waiting,
            Said::Acquired(_) => Phase::Holding,
            Said::Releasing => Phase::Releasing,
            Said::Released => Phase::BetweenRounds,
            Said::Done | Said::Died => Phase::Finished,
            _ => self,
        }
    }

    /// Whether a fault now strikes the lock's work.
    pub fn in_lock_work(self) -> bool {
        matches!(self, Phase::Waiting | Phase::Holding | Phase::Releasing)
    }

    fn name(self) -> &'static str {
        match self {
            Phase::NotStarted => "before it asked for the lock",
            Phase::Waiting => "while waiting",
            Phase::Holding => "while holding",
            Phase::Releasing => "while releasing",
            Phase::BetweenRounds => "between rounds",
            Phase::Finished => "after it finished",
        }
    }
}

/// A fault of a run and what became of it.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Strike {
    pub kind: FaultKind,
    pub client: usize,
    /// When it struck, in ms into the run; none if it never did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at_ms: Option<f64>,
    /// Where the client was (`while holding`), or why the fault never struck.
    pub moment: String,
    /// It struck while the client was waiting, holding or releasing.
    pub during_lock_work: bool,
}

impl Strike {
    /// `kind` struck client `client` at `at_us`, the client in `phase`.
    pub fn at(kind: FaultKind, client: usize, at_us: u64, phase: Phase) -> Strike {
        Strike {
            kind,
            client,
            at_ms: Some(at_us as f64 / 1000.0),
            moment: phase.name().to_string(),
            during_lock_work: phase.in_lock_work(),
        }
    }

    /// `kind` was to strike `client` and did not: `why`.
    pub fn missed(kind: FaultKind, client: usize, why: &str) -> Strike {
        Strike { kind, client, at_ms: None, moment: why.to_string(), during_lock_work: false }
    }

    /// An anchored fault whose client never reached its point within the chaos phase.
    pub fn never_reached(a: Anchored) -> Strike {
        Strike::missed(
            a.kind,
            a.client as usize,
            "its client never reached the point drawn for it within the chaos phase",
        )
    }
}

impl std::fmt::Display for Strike {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.at_ms {
            Some(ms) => write!(f, "{} c{} at {ms:.0} ms {}", self.kind, self.client, self.moment),
            None => write!(f, "{} c{} never struck ({})", self.kind, self.client, self.moment),
        }
    }
}

/// The run's faults: where each client is, the anchored faults still to strike, and each
/// fault's fate.
pub struct Ledger {
    phases: Vec<Phase>,
    anchors: Anchors,
    pub strikes: Vec<Strike>,
}

impl Ledger {
    /// A ledger for `clients` clients whose rates' faults wait at `anchors`.
    pub fn new(clients: usize, anchors: Anchors) -> Ledger {
        Ledger { phases: vec![Phase::NotStarted; clients], anchors, strikes: Vec::new() }
    }

    /// Client `i` said `said`: its phase moves on, and the anchored faults due at that point
    /// come back, to strike now (`in_chaos`: the chaos phase is not over; after it no
    /// anchored fault strikes, as in the simulator).
    pub fn heard(&mut self, i: usize, said: &Said, in_chaos: bool) -> Vec<FaultKind> {
        self.phases[i] = self.phases[i].after(said);
        let point = match said {
            Said::Acquiring => Point::Waiting,
            Said::Acquired(_) => Point::Holding,
            Said::Releasing => Point::Releasing,
            _ => return Vec::new(),
        };
        match in_chaos {
            true => self.anchors.reached(i as zklab_model::ClientId, point),
            false => Vec::new(),
        }
    }

    /// `kind` struck client `i` at `at_us`.
    pub fn struck(&mut self, kind: FaultKind, i: usize, at_us: u64) {
        let phase = self.phases[i];
        let moment = phase.name().to_string();
        self.strikes.push(Strike {
            kind,
            client: i,
            at_ms: Some(at_us as f64 / 1000.0),
            moment,
            during_lock_work: phase.in_lock_work(),
        });
    }

    /// `kind` was to strike client `i` and did not: `why`.
    pub fn missed(&mut self, kind: FaultKind, i: usize, why: &str) {
        self.strikes.push(Strike::missed(kind, i, why));
    }

    /// The run is over: anchored faults still waiting never struck, and of the losses armed for
    /// client `i`, only the first `losses_struck(i)` met a create.
    pub fn close(&mut self, losses_struck: impl Fn(usize) -> usize) {
        self.strikes.extend(self.anchors.left().into_iter().map(Strike::never_reached));
        for i in 0..self.phases.len() {
            let loss = |s: &Strike| s.client == i && s.at_ms.is_some() && s.kind.strikes_a_request();
            let armed: Vec<usize> = (0..self.strikes.len()).filter(|&k| loss(&self.strikes[k])).collect();
            for &k in armed.iter().skip(losses_struck(i)) {
                let s = &mut self.strikes[k];
                (s.at_ms, s.during_lock_work) = (None, false);
                s.moment = "armed for a create that never came".to_string();
            }
        }
    }
}

/// The kinds in `asked` that struck during lock work in none of the runs.
pub fn never_struck(asked: &[FaultKind], runs: &[&[Strike]]) -> Vec<FaultKind> {
    let struck = |kind: FaultKind| runs.iter().flat_map(|r| r.iter()).any(|s| s.kind == kind && s.during_lock_work);
    asked.iter().copied().filter(|&k| !struck(k)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_anchored_fault_strikes_at_its_point_and_one_never_reached_is_missed() {
        let anchored = |kind, client, point| Anchored { kind, client, attempt: 1, point };
        let anchors = Anchors::with(
            2,
            vec![anchored(FaultKind::Expire, 0, Point::Holding), anchored(FaultKind::Crash, 1, Point::Releasing)],
        );
        let mut ledger = Ledger::new(2, anchors);
        assert!(ledger.heard(0, &Said::Acquiring, true).is_empty());
        assert_eq!(ledger.heard(0, &Said::Acquired(3), true), [FaultKind::Expire]);
        ledger.struck(FaultKind::Expire, 0, 1500);
        ledger.heard(1, &Said::Acquiring, true);
        ledger.heard(1, &Said::Done, true);
        // A disconnect a schedule placed after c1 finished strikes outside lock work.
        ledger.struck(FaultKind::Disconnect, 1, 9000);
        ledger.close(|_| 0);
        let said: Vec<String> = ledger.strikes.iter().map(|s| s.to_string()).collect();
        assert_eq!(
            said,
            [
                "expire c0 at 2 ms while holding",
                "disconnect c1 at 9 ms after it finished",
                "crash c1 never struck (its client never reached the point drawn for it within the chaos phase)"
            ]
        );
        let during: Vec<bool> = ledger.strikes.iter().map(|s| s.during_lock_work).collect();
        assert_eq!(during, [true, false, false]);
        let runs = [&ledger.strikes[..]];
        assert_eq!(
            never_struck(&[FaultKind::Expire, FaultKind::Crash, FaultKind::Disconnect], &runs),
            [FaultKind::Crash, FaultKind::Disconnect]
        );
    }

    #[test]
    fn a_loss_armed_for_a_create_that_never_came_did_not_strike() {
        let mut ledger = Ledger::new(1, Anchors::new(1));
        ledger.heard(0, &Said::Acquiring, true);
        ledger.struck(FaultKind::LossAfterApply, 0, 10);
        ledger.heard(0, &Said::Acquiring, true);
        ledger.struck(FaultKind::LossBeforeApply, 0, 20);
        ledger.close(|_| 1);
        assert_eq!(ledger.strikes[0].at_ms, Some(0.01));
        assert!(ledger.strikes[0].during_lock_work);
        assert_eq!(ledger.strikes[1].at_ms, None);
        assert!(!ledger.strikes[1].during_lock_work);
    }
}
