//! One client-check campaign on the machine at a time. A campaign decides that a client has
//! finished reacting by watching its threads (src/client_check/quiet.rs); a second campaign's
//! JVMs, or a real ZooKeeper ensemble started beside it, starve those threads on a 2-core
//! machine long enough for a choice to race a reaction. A schedule then does not replay, and a
//! finding the campaign makes alone is missed. Measured: in each of three runs of the
//! campaigns two at a time a WriteLock test failed (its expired holder, found by one schedule
//! of forty, missed twice; its deadlock's schedule not replaying once), and each passed in
//! every run alone. So a campaign runs alone; the tests that start real servers run side by
//! side with each other, never beside a campaign.

use std::sync::{Condvar, Mutex};

/// What a real test does to the machine.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    /// Runs client processes under zklab's scheduler (`client_check`): one at a time.
    Scheduled,
    /// Starts a real ZooKeeper server or ensemble (the examples and signals that need one).
    Servers,
}

/// The kind running now and how many tests of it.
static RUNNING: Mutex<(Option<Kind>, usize)> = Mutex::new((None, 0));
static CHANGED: Condvar = Condvar::new();

/// Held for a test's length: while any is held, only tests of its kind start, and no other
/// campaign.
pub struct Pass;

/// Waits until this test may run, and holds the gate for it.
pub fn enter(kind: Kind) -> Pass {
    let mut running = RUNNING.lock().unwrap_or_else(|e| e.into_inner());
    while running.0.is_some_and(|k| k != kind || k == Kind::Scheduled) {
        running = CHANGED.wait(running).unwrap_or_else(|e| e.into_inner());
    }
    *running = (Some(kind), running.1 + 1);
    Pass
}

impl Drop for Pass {
    fn drop(&mut self) {
        let mut running = RUNNING.lock().unwrap_or_else(|e| e.into_inner());
        running.1 -= 1;
        if running.1 == 0 {
            running.0 = None;
            CHANGED.notify_all();
        }
    }
}
