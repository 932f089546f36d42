//! A run's fingerprint, taken step by step: FNV-1a over each step (which step, its fault and
//! sending step, its whole client number) and its virtual time, as fixed little-endian bytes. It
//! is the same on every machine and thread count, and needs no step kept, so a run that keeps no
//! steps (`SimConfig::keep_steps`) can still be shown equal to one that does.

use crate::queue::Micros;
use zklab_model::Step;

const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const PRIME: u64 = 0x0100_0000_01b3;

/// The hash of the steps so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StepsHash(u64);

impl Default for StepsHash {
    fn default() -> Self {
        StepsHash(OFFSET)
    }
}

impl StepsHash {
    pub fn add(&mut self, step: Step, at: Micros) {
        // Which step, without its client (`packed` has room for a checked world's clients only);
        // a server event is told apart by `what`, and has no client.
        let what = step.for_client(0).packed() >> 16;
        let bytes = (u64::from(what) << 32 | u64::from(step.client().unwrap_or_default())).to_le_bytes().into_iter();
        for b in bytes.chain(at.to_le_bytes()) {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(PRIME);
        }
    }

    pub fn value(self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zklab_model::ClientFault;

    fn hash(steps: &[(Step, Micros)]) -> u64 {
        let mut h = StepsHash::default();
        for (step, at) in steps {
            h.add(*step, *at);
        }
        h.value()
    }

    #[test]
    fn runs_that_differ_in_a_step_its_client_or_its_time_hash_apart() {
        let run = [(Step::Acquire(0), 0), (Step::Receive(70_000), 300)];
        let base = hash(&run);
        assert_eq!(base, hash(&run));
        for other in [
            [(Step::Acquire(0), 0), (Step::Receive(4_464), 300)],
            [(Step::Acquire(0), 0), (Step::Receive(70_000), 301)],
            [(Step::Acquire(0), 0), (Step::Fault(ClientFault::Expire, 70_000), 300)],
            [(Step::Receive(70_000), 300), (Step::Acquire(0), 0)],
        ] {
            assert_ne!(hash(&other), base, "{other:?}");
        }
    }
}
