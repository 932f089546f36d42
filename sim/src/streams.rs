//! Randomness, one ChaCha stream per concern. All streams come from the run's seed; each concern
//! draws only from its own, so switching a fault family off, or changing the workload, does not
//! reshuffle the network's latencies (and the reverse).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

pub struct Streams {
    /// Link latencies and reconnect delays.
    pub network: ChaCha8Rng,
    /// Which requests are lost, when timed faults strike and whom.
    pub faults: ChaCha8Rng,
    /// When clients start and how long they think between rounds.
    pub workload: ChaCha8Rng,
}

impl Streams {
    pub fn new(seed: u64) -> Self {
        let stream = |n: u64| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            rng.set_stream(n);
            rng
        };
        Streams { network: stream(1), faults: stream(2), workload: stream(3) }
    }
}

/// A uniform draw from `lo..=hi` (`lo` when the range is empty).
pub fn between(rng: &mut ChaCha8Rng, lo: u64, hi: u64) -> u64 {
    if hi <= lo {
        lo
    } else {
        rng.random_range(lo..=hi)
    }
}
