//! One client-check campaign on the machine at a time. A campaign decides that a client has
//! finished reacting by watching its threads (src/client_check/quiet.rs); a second campaign's
//! JVMs, or a real ZooKeeper ensemble started beside it, starve those threads on a 2-core
//! machine long enough for a choice to race a reaction. A schedule then does not replay, and a
//! finding the campaign makes alone is missed. Measured: in each of three runs of the
//! campaigns two at a time a WriteLock test failed (its expired holder, found by one schedule
//! of forty, missed twice; its deadlock's schedule not replaying once), and each passed in
//! every run alone. So a campaign runs alone; the tests that start real servers run side by
//! side with each other, never beside a campaign.

use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// What a real test does to the machine.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    /// Runs client processes under zklab's scheduler (`client_check`): one at a time.
    Scheduled,
    /// Starts a real ZooKeeper server or ensemble (the examples and signals that need one).
    Servers,
}

/// Campaigns take it to write (alone), server tests to read (side by side).
static GATE: RwLock<()> = RwLock::new(());

/// Held for a test's length: while any is held, only tests of its kind start, and no other
/// campaign. A test that failed holding it (a poisoned lock) does not stop the next.
pub enum Pass {
    Alone { _guard: RwLockWriteGuard<'static, ()> },
    Shared { _guard: RwLockReadGuard<'static, ()> },
}

/// Waits until this test may run, and holds the gate for it.
pub fn enter(kind: Kind) -> Pass {
    match kind {
        Kind::Scheduled => Pass::Alone { _guard: GATE.write().unwrap_or_else(PoisonError::into_inner) },
        Kind::Servers => Pass::Shared { _guard: GATE.read().unwrap_or_else(PoisonError::into_inner) },
    }
}
