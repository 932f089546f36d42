//! How much a checker step allocates: the figure the packed state (issue "Ahead of Spin with
//! faults, by design") must bring to zero once a run is warm. A counting allocator wraps the
//! system's; the standard lock is checked under it on one thread with `--symmetry` (as
//! `scripts/bench-spin.sh` checks it), and what the check allocated
//! is divided by its steps (every successor generated, `total_states`). The count covers the
//! whole check, the tables' growth and the verdicts included, so it bounds a warm step's from
//! above. Counts, not times: the same on any machine for one build of one commit.
//!
//! `cargo bench --bench allocations` prints one JSON object a line; `scripts/bench-allocations.sh`
//! appends them to `bench/allocations.jsonl`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use zklab::check::{self, Options};
use zklab::scenario::{parse_faults, Scenario};
use zklab_model::WorldConfig;

/// The system allocator, counting every allocation (a reallocation counts as one) and the bytes
/// asked for.
struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);

// SAFETY: every call is passed on to the system allocator unchanged; only counters are added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Relaxed);
        BYTES.fetch_add(layout.size() as u64, Relaxed);
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Relaxed);
        BYTES.fetch_add(layout.size() as u64, Relaxed);
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Relaxed);
        BYTES.fetch_add(new_size as u64, Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// The sizes measured, with loss-after-apply and expire: the N=4, and one size either
/// side (a larger check is warmer: its tables' growth is spread over more steps).
const CASES: [usize; 3] = [3, 4, 5];
const FAULTS: &str = "loss-after-apply,expire";

fn main() {
    for clients in CASES {
        let config = WorldConfig { faults: parse_faults(FAULTS).expect("a fault list"), ..WorldConfig::default() };
        let scenario = Scenario::new("standard", clients, config).expect("the standard lock");
        // As `scripts/bench-spin.sh` checks it: one state per symmetry class.
        let options = Options { threads: 1, symmetry: true, ..Options::default() };
        let (allocations, bytes) = (ALLOCATIONS.load(Relaxed), BYTES.load(Relaxed));
        let report = check::run(&scenario, &options);
        let allocations = ALLOCATIONS.load(Relaxed) - allocations;
        let bytes = BYTES.load(Relaxed) - bytes;
        let steps = report.outcome.total_states as u64;
        assert!(steps > 0, "the check took no step");
        println!(
            "{}",
            serde_json::json!({
                "config": { "recipe": "standard", "clients": clients, "faults": FAULTS, "symmetry": true, "threads": 1 },
                "unique_states": report.outcome.unique_states,
                "total_states": steps,
                "allocations": allocations,
                "allocations_per_step": allocations as f64 / steps as f64,
                "bytes_allocated_per_step": bytes as f64 / steps as f64,
            })
        );
    }
}
