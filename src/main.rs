//! The zklab command line (`zklab::cli`). Exit codes: 0 all properties hold, 1 a property is
//! violated (or the proof is vacuous), 2 bad input, 3 a budget ran out before the answer.

use std::alloc::{GlobalAlloc, Layout};
use std::process::ExitCode;

/// The checker clones and drops millions of small states per second; glibc's allocator spends
/// most of a run consolidating their freed blocks, mimalloc does not.
#[global_allocator]
static ALLOCATOR: Mimalloc = Mimalloc;

/// mimalloc, entered by its plain `mi_malloc` wherever that already gives the alignment asked
/// for. The `mimalloc` crate asks `mi_malloc_aligned` for every block, and mimalloc 3 takes a
/// slower path for that whenever its free list's next block does not happen to sit at the
/// alignment (measured: 2 % of the instructions and 5 % of the time of the standard lock with
/// four clients and faults, on one thread).
struct Mimalloc;

/// The alignment every `mi_malloc` block of at least this size has (mimalloc's
/// `MI_MAX_ALIGN_SIZE` on 64-bit targets: its size classes are multiples of two words).
const MI_MALLOC_ALIGN: usize = 16;

/// Whether `mi_malloc(size)` returns a block aligned as `align` asks.
fn plain(size: usize, align: usize) -> bool {
    align <= MI_MALLOC_ALIGN && align <= size
}

// SAFETY: every block comes from mimalloc, aligned as its layout asks (`plain`, or mimalloc's
// own aligned entry points), and goes back to it through `mi_free`, which takes blocks from
// either entry point.
unsafe impl GlobalAlloc for Mimalloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match plain(layout.size(), layout.align()) {
            true => unsafe { libmimalloc_sys::mi_malloc(layout.size()).cast() },
            false => unsafe { mimalloc::MiMalloc.alloc(layout) },
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        match plain(layout.size(), layout.align()) {
            true => unsafe { libmimalloc_sys::mi_zalloc(layout.size()).cast() },
            false => unsafe { mimalloc::MiMalloc.alloc_zeroed(layout) },
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { mimalloc::MiMalloc.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        match plain(new_size, layout.align()) {
            true => unsafe { libmimalloc_sys::mi_realloc(ptr.cast(), new_size).cast() },
            false => unsafe { mimalloc::MiMalloc.realloc(ptr, layout, new_size) },
        }
    }
}

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
