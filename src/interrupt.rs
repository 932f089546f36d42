//! Ctrl-C for long commands: the first one raises a flag that `check` and `simulate` poll and
//! stop at, as at a spent budget, so that what is known so far is printed (exit 3); a second one
//! quits at once. Nothing raises the flag unless the handler is installed, so a library user's
//! runs are never stopped by it.

use std::sync::atomic::{AtomicBool, Ordering};

/// Raised by the first Ctrl-C once `stop_on_ctrl_c` has installed the handler.
pub static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Installs the handler. Without one (another is installed already) Ctrl-C keeps its default:
/// the process ends.
pub fn stop_on_ctrl_c() {
    let installed = ctrlc::set_handler(|| {
        if INTERRUPTED.swap(true, Ordering::SeqCst) {
            std::process::exit(130);
        }
        eprintln!("interrupted: stopping; what is known so far follows (Ctrl-C again quits at once)");
    });
    drop(installed);
}

/// Whether Ctrl-C has asked to stop.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}
