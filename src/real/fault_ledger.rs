//! Where a real run's faults strike, and the ledger of what became of each.
//!
//! A recipe's run (`zklab real --recipe`) keeps the simulator's plan, so that a seed is the same
//! run in both; its report lists each fault with where its client was (`Phase::of_belief`), and
//! a campaign whose asked kinds never struck during lock work is unknown, as a library's is. A
//! library's run (`zklab real --library`) anchors its faults as follows.
//!
//! A fault that strikes a client after it finished its lock work (or before it began) tests
//! nothing of the lock. So the faults a run's rates draw over time (`disconnect`, `expire`,
//! `crash`, `pause`) are anchored instead to a point of a client's lock work, drawn from the
//! fault's own stream: as it starts to wait (`acquiring`), as it starts to hold (`acquired`), or
//! as it starts to release (`releasing`). They strike the moment the client says so. Faults a
//! schedule places keep their moment (the user chose it). A loss is armed as a client starts
//! to acquire and strikes its next create.
//!
//! Every fault is written in the ledger with where the client was when it struck, or why it
//! never did (the client had died or finished; a loss armed for a create that never came). A
//! campaign in which some kind it asked for never struck during lock work says nothing about
//! that kind (`never_struck`), so it is no pass.

use super::history::Said;
use rand_chacha::ChaCha8Rng;
use zklab_model::{Belief, FaultKind};
use zklab_sim::between;

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

/// The point of a client's lock work an anchored fault strikes at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Point {
    Waiting,
    Holding,
    Releasing,
}

impl Point {
    /// One of the three, from the fault's stream.
    pub fn draw(rng: &mut ChaCha8Rng) -> Point {
        [Point::Waiting, Point::Holding, Point::Releasing][between(rng, 0, 2) as usize]
    }

    fn reached_by(self, said: &Said) -> bool {
        matches!(
            (self, said),
            (Point::Waiting, Said::Acquiring)
                | (Point::Holding, Said::Acquired(_))
                | (Point::Releasing, Said::Releasing)
        )
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
    anchored: Vec<(FaultKind, usize, Point)>,
    pub strikes: Vec<Strike>,
}

impl Ledger {
    pub fn new(clients: usize) -> Ledger {
        Ledger { phases: vec![Phase::NotStarted; clients], anchored: Vec::new(), strikes: Vec::new() }
    }

    /// `kind` is to strike `client` when it reaches `point`.
    pub fn anchor(&mut self, kind: FaultKind, client: usize, point: Point) {
        self.anchored.push((kind, client, point));
    }

    /// Client `i` said `said`: its phase moves on, and the anchored faults due at that point
    /// come back, to strike now.
    pub fn heard(&mut self, i: usize, said: &Said) -> Vec<FaultKind> {
        self.phases[i] = self.phases[i].after(said);
        let (due, left) = self.anchored.iter().partition(|(_, c, point)| *c == i && point.reached_by(said));
        self.anchored = left;
        due.into_iter().map(|(kind, _, _)| kind).collect()
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
        self.strikes.push(Strike { kind, client: i, at_ms: None, moment: why.to_string(), during_lock_work: false });
    }

    /// The run is over: anchored faults still waiting never struck, and of the losses armed for
    /// client `i`, only the first `losses_struck(i)` met a create.
    pub fn close(&mut self, losses_struck: impl Fn(usize) -> usize) {
        for (kind, i, _) in std::mem::take(&mut self.anchored) {
            self.missed(kind, i, "its client never reached the point drawn for it");
        }
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
        let mut ledger = Ledger::new(2);
        ledger.anchor(FaultKind::Expire, 0, Point::Holding);
        ledger.anchor(FaultKind::Crash, 1, Point::Releasing);
        assert!(ledger.heard(0, &Said::Acquiring).is_empty());
        assert_eq!(ledger.heard(0, &Said::Acquired(3)), [FaultKind::Expire]);
        ledger.struck(FaultKind::Expire, 0, 1500);
        ledger.heard(1, &Said::Acquiring);
        ledger.heard(1, &Said::Done);
        // A disconnect a schedule placed after c1 finished strikes outside lock work.
        ledger.struck(FaultKind::Disconnect, 1, 9000);
        ledger.close(|_| 0);
        let said: Vec<String> = ledger.strikes.iter().map(|s| s.to_string()).collect();
        assert_eq!(
            said,
            [
                "expire c0 at 2 ms while holding",
                "disconnect c1 at 9 ms after it finished",
                "crash c1 never struck (its client never reached the point drawn for it)"
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
        let mut ledger = Ledger::new(1);
        ledger.heard(0, &Said::Acquiring);
        ledger.struck(FaultKind::LossAfterApply, 0, 10);
        ledger.heard(0, &Said::Acquiring);
        ledger.struck(FaultKind::LossBeforeApply, 0, 20);
        ledger.close(|_| 1);
        assert_eq!(ledger.strikes[0].at_ms, Some(0.01));
        assert!(ledger.strikes[0].during_lock_work);
        assert_eq!(ledger.strikes[1].at_ms, None);
        assert!(!ledger.strikes[1].during_lock_work);
    }
}
