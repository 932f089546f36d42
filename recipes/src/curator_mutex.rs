//! Curator's `InterProcessMutex`, as `contender` styles.
//!
//! **Source.** Curator's `InterProcessMutex` (`LockInternals.attemptLock` and `internalLockLoop`,
//! `StandardLockInternalsDriver`, and the protected create of `CreateBuilderImpl` and
//! `ProtectedMode`). The issues it reproduces: CURATOR-498 and CURATOR-604 (a protected create that
//! adopts an expired session's node) and CURATOR-206 (a holder that "still thinks it has the
//! lock").
//!
//! **What it does.** Beside what every contender does (see `contender`):
//! - Any event on the predecessor's watch wakes the waiter (`Watch::GetDataAnyEvent`).
//! - The mutex never watches the connection; applications are told to add a listener that treats
//!   SUSPENDED as "maybe lost" and LOST as lost, and that listener is modelled here: on LOST it
//!   releases the thread's hold (its `LockData`) to zero.
//! - The mutex is re-entrant (`InterProcessMutex.internalLock`): a thread that holds and asks
//!   again gets `true` at once, its `lockCount` up and no request; `release` counts down and
//!   deletes the node at zero. One nested acquire per hold is modelled.
//! - A waiter whose node went with its session creates a new one (attemptLock retries on the
//!   NoNode its driver throws).
//! - A waiter whose `acquire(time, unit)` runs out deletes its node (`deleteOurPath`, a
//!   guaranteed delete): the `give-up` fault, while it waits on its predecessor.
//!
//! **What it gets wrong.** `CURATOR_MUTEX` (`curator-mutex`): nothing the model can show, beyond
//! what no lock can prevent (a holder paused past its session's expiry). The styles from before
//! each fix:
//! - `CURATOR_MUTEX_BEFORE_498` (`curator-mutex-498`): after an expiry during a protected create,
//!   the new session's search still lists the old node (a follower lagging behind the expiry) and
//!   the mutex adopts it without asking whose session owns it; it believes it holds while another
//!   client holds.
//! - `CURATOR_MUTEX_REENTER_AFTER_LOST` (`curator-mutex-reenter-after-lost`): the application's
//!   listener only notes LOST, so the thread's `LockData` outlives the session, and the thread's
//!   next acquire is answered from it: it holds with its old token and no node, beside the
//!   client that holds the lock (CURATOR-206's holder that "still thinks it has the lock").
//!
//! **What the model leaves out.** Re-entry deeper than one nested acquire, threads other than
//! the one that holds, and revocation; the rest as every contender (see `contender`).

use crate::contender::{AfterExpiry, Naming, Recheck, Reentry, Style, Watch};
use crate::queue::Order;

// Curator's InterProcessMutex, with the connection listener its documentation asks for.
pub const CURATOR_MUTEX: Style = Style {
    naming: Naming::Protected,
    marker: "lock-",
    watch: Watch::GetDataAnyEvent,
    order: Order::Text,
    on_predecessor_gone: Recheck::List,
    on_reconnect: Recheck::List,
    after_expiry: AfterExpiry::RequeueWaiter,
    holder_resumes: true,
    session_check: true,
    owner_check: false,
    reentry: Reentry::ReleasedOnLost,
    sync_before_listing: false,
};

/// InterProcessMutex before CURATOR-498: a protected node found on a new session is adopted.
pub const CURATOR_MUTEX_BEFORE_498: Style = Style { session_check: false, ..CURATOR_MUTEX };

/// InterProcessMutex whose application only notes LOST: the thread's re-entrant count survives
/// the session, and the thread's next acquire succeeds locally without a node (CURATOR-206).
pub const CURATOR_MUTEX_REENTER_AFTER_LOST: Style = Style { reentry: Reentry::KeptOnLost, ..CURATOR_MUTEX };
