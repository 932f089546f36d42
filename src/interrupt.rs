//! Ctrl-C for long commands: the first one raises a flag that `check` and `simulate` poll and
//! stop at, as at a spent budget, so that what is known so far is printed (exit 3); a second one
//! quits at once. Nothing raises the flag unless the command line installs its handler
//! (`cli::stop_on_ctrl_c`), so a library user's runs are never stopped by it.

use std::sync::atomic::{AtomicBool, Ordering};

/// Raised by the first Ctrl-C once the command line has installed its handler.
pub static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Whether Ctrl-C has asked to stop.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}
