//! Where the rates' client faults strike: at a point of their client's lock work.
//!
//! A disconnect, expiry, crash, pause or give-up that strikes a client before it asks for the
//! lock, between its rounds or after it finished tests nothing of the lock; with a short hold
//! and a long chaos phase, most faults drawn over time strike there. So each one the rates draw
//! is anchored instead to a point of its client's lock work, drawn from the fault's own stream:
//! an attempt (the how-manieth time the client starts to acquire) and a point of it, as the
//! client starts to wait, to hold, or to release. It strikes the first time the client reaches
//! that point on that attempt or a later one, within the chaos phase; one whose client never gets
//! there never strikes, and the run says so (`Anchors::left`). Faults a schedule places keep
//! their moment (the user chose it), and the server's own events (a reaper, an operator) keep
//! the moment drawn for them: they strike no client.
//!
//! The simulator, `zklab real --recipe` and `zklab real --library` all anchor this way, from the
//! same draws, so a seed is the same plan in each.

use crate::streams::between;
use rand_chacha::ChaCha8Rng;
use zklab_model::{Belief, ClientId, Fault, FaultKind};

/// The point of a client's lock work an anchored fault strikes at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Point {
    /// As it starts to wait (its acquisition is under way).
    Waiting,
    /// As it starts to hold.
    Holding,
    /// As it starts to release.
    Releasing,
}

impl Point {
    /// One of the three, from the fault's stream; a give-up only ever strikes a waiter.
    fn draw(kind: FaultKind, rng: &mut ChaCha8Rng) -> Point {
        let point = [Point::Waiting, Point::Holding, Point::Releasing][between(rng, 0, 2) as usize];
        if kind == FaultKind::GiveUp {
            Point::Waiting
        } else {
            point
        }
    }

    /// The point a client reached as its belief went from `was` to `now`, if any.
    pub fn entered(was: Belief, now: Belief) -> Option<Point> {
        let holding = |b: Belief| b.is_holding() || matches!(b, Belief::Suspended { .. });
        match now {
            Belief::Acquiring if was != Belief::Acquiring => Some(Point::Waiting),
            Belief::Holding { .. } if !holding(was) => Some(Point::Holding),
            Belief::Releasing if was != Belief::Releasing => Some(Point::Releasing),
            _ => None,
        }
    }
}

/// A fault waiting for its client to reach `point` on attempt `attempt` (from 1) or later.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Anchored {
    pub kind: FaultKind,
    pub client: ClientId,
    pub attempt: u32,
    pub point: Point,
}

/// The anchored faults of a run still to strike, and how many times each client has started
/// to acquire.
#[derive(Clone, Debug)]
pub struct Anchors {
    waiting: Vec<Anchored>,
    attempts: Vec<u32>,
}

impl Anchors {
    /// No fault anchored yet, for `clients` clients.
    pub fn new(clients: usize) -> Anchors {
        Anchors { waiting: Vec::new(), attempts: vec![0; clients] }
    }

    /// These faults waiting, for `clients` clients none of which has started (a plan written
    /// out by hand, as a test's).
    pub fn with(clients: usize, waiting: Vec<Anchored>) -> Anchors {
        Anchors { waiting, attempts: vec![0; clients] }
    }

    /// Whether the rates' `kind` is anchored (a client's fault) rather than timed.
    pub fn anchors(kind: FaultKind) -> bool {
        matches!(kind.typed(), Fault::Client(_))
    }

    /// Anchors the rates' `kind` for `client`: the attempt among the run's `rounds` and the
    /// point, drawn in that order from the fault's stream.
    pub fn anchor(&mut self, kind: FaultKind, client: ClientId, rounds: u8, rng: &mut ChaCha8Rng) {
        let attempt = between(rng, 1, u64::from(rounds.max(1))) as u32;
        let point = Point::draw(kind, rng);
        self.waiting.push(Anchored { kind, client, attempt, point });
    }

    /// Client `i` reached `point`: the faults anchored there, in the order they were drawn, to
    /// strike now.
    pub fn reached(&mut self, i: ClientId, point: Point) -> Vec<FaultKind> {
        let attempts = &mut self.attempts[i as usize];
        if point == Point::Waiting {
            *attempts += 1;
        }
        let attempts = *attempts;
        let due = |a: &Anchored| a.client == i && a.point == point && attempts >= a.attempt;
        let (now, later): (Vec<Anchored>, Vec<Anchored>) = self.waiting.iter().partition(|a| due(a));
        self.waiting = later;
        now.into_iter().map(|a| a.kind).collect()
    }

    /// Client `i`'s belief went from `was` to `now`, `in_chaos` or after the chaos phase: the
    /// faults anchored at the point it entered, if any, to strike now (none after the chaos
    /// phase). What the simulator and a real recipe run ask after every step.
    pub fn after(&mut self, i: ClientId, was: Belief, now: Belief, in_chaos: bool) -> Vec<FaultKind> {
        match Point::entered(was, now).filter(|_| in_chaos) {
            Some(point) => self.reached(i, point),
            None => Vec::new(),
        }
    }

    /// The faults that never struck: their client never reached their point within the chaos
    /// phase. None are left waiting after this.
    pub fn left(&mut self) -> Vec<Anchored> {
        std::mem::take(&mut self.waiting)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn a_fault_waits_for_its_attempt_and_point_and_one_never_reached_is_left() {
        let mut anchors = Anchors::with(
            2,
            vec![
                Anchored { kind: FaultKind::Expire, client: 0, attempt: 2, point: Point::Holding },
                Anchored { kind: FaultKind::Crash, client: 1, attempt: 1, point: Point::Releasing },
            ],
        );
        assert!(anchors.reached(0, Point::Waiting).is_empty());
        assert!(anchors.reached(0, Point::Holding).is_empty(), "its first attempt is not the one drawn");
        assert!(anchors.reached(0, Point::Waiting).is_empty());
        assert_eq!(anchors.reached(0, Point::Holding), [FaultKind::Expire]);
        assert!(anchors.reached(0, Point::Holding).is_empty(), "a fault strikes once");
        anchors.reached(1, Point::Waiting);
        let left = anchors.left();
        assert_eq!(left.len(), 1);
        assert_eq!((left[0].kind, left[0].client), (FaultKind::Crash, 1));
    }

    #[test]
    fn a_give_up_strikes_a_waiter_and_a_drawn_attempt_is_within_the_rounds() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut anchors = Anchors::new(1);
        for _ in 0..200 {
            anchors.anchor(FaultKind::GiveUp, 0, 3, &mut rng);
            anchors.anchor(FaultKind::Pause, 0, 3, &mut rng);
        }
        assert!(anchors.waiting.iter().all(|a| (1..=3).contains(&a.attempt)));
        assert!(anchors.waiting.iter().filter(|a| a.kind == FaultKind::GiveUp).all(|a| a.point == Point::Waiting));
        let pauses: Vec<Point> =
            anchors.waiting.iter().filter(|a| a.kind == FaultKind::Pause).map(|a| a.point).collect();
        for point in [Point::Waiting, Point::Holding, Point::Releasing] {
            assert!(pauses.contains(&point), "{point:?} is drawn");
        }
    }

    #[test]
    fn the_points_are_where_a_belief_starts_to_wait_hold_and_release() {
        let held = Belief::Holding { token: 1 };
        assert_eq!(Point::entered(Belief::Idle, Belief::Acquiring), Some(Point::Waiting));
        assert_eq!(Point::entered(Belief::Acquiring, held), Some(Point::Holding));
        assert_eq!(Point::entered(held, Belief::Releasing), Some(Point::Releasing));
        assert_eq!(Point::entered(Belief::Acquiring, Belief::Acquiring), None);
        assert_eq!(Point::entered(Belief::Suspended { token: 1 }, held), None, "a hold resumed is not a new one");
        assert_eq!(Point::entered(Belief::Releasing, Belief::Idle), None);
    }
}
