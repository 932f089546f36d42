//! The zklab command line (`zklab::cli`). Exit codes: 0 all properties hold, 1 a property is
//! violated (or the proof is vacuous), 2 bad input, 3 a budget ran out before the answer.

use std::process::ExitCode;

/// The checker clones and drops millions of small states per second; glibc's allocator spends
/// most of a run consolidating their freed blocks, mimalloc does not.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_purge_delay` in mimalloc's `mi_option_t` (include/mimalloc.h, for the pinned
/// libmimalloc-sys): how long freed memory stays mapped before it goes back to the system.
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// A checker's memory use only grows until the end of a run, and what one level of states frees
/// the next one needs again: memory handed back to the system comes back as fresh pages the
/// kernel must zero first (measured: 7,805 page faults against 576 and 10% of the run for the
/// standard lock with 4 clients). So freed memory is never given back during the run.
fn keep_freed_memory() {
    // SAFETY: sets one of mimalloc's own options to a value its header documents (-1: never
    // purge); it takes effect from the next purge and touches nothing else.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1) }
}
fn main() -> ExitCode {
    keep_freed_memory();
    zklab::cli::main()
}
