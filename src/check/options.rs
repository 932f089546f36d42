//! What a check is asked to do: its budgets, the reductions it may apply, what it judges, and
//! where it says how far it got.

use crate::budget::default_max_memory_mib;
use std::sync::atomic::AtomicBool;
use std::time::Duration;
use zklab_model::Property;

#[derive(Clone, Debug)]
pub struct Options {
    pub threads: usize,
    pub max_states: usize,
    pub timeout: Option<Duration>,
    /// Stop when the process's resident memory passes this many MiB.
    pub max_memory_mib: Option<u64>,
    /// Where to say how far the search got (at most once a second); none: say nothing.
    pub progress: Option<crate::progress::Progress>,
    /// Explore one state per symmetry class (clients running the same recipe are
    /// interchangeable), where the recipe supports it. State counts are then of classes.
    pub symmetry: bool,
    /// Take a client's invisible local step alone where there is one (see
    /// `World::local_step`); a violation or a cycle is then judged again without it.
    pub partial_order: bool,
    /// After a complete run, have stateright explore the same model and compare.
    pub cross_check: bool,
    /// Settle each state before keeping it (see `World::settle`). Off only to count states as
    /// `World::apply` leaves them, as the reference checker in the tests does.
    pub settle: bool,
    /// Stop once the breadth-first level in which a safety or transition property is first
    /// violated, or a waiting client first deadlocks, is finished, as Spin and TLC do: those
    /// counterexamples are as short as a complete run's (see docs/internals/checker.md), and every
    /// property not decided by then is unknown, starving cycles included (they need the whole
    /// graph). Off (`--continue`) to judge every property and count every state; a stopped run
    /// is never cross-checked (`cross_check` needs a complete one).
    pub stop_at_violation: bool,
    /// Instead of the exhaustive search, a swarm of seeded random walks (see `swarm`): always
    /// bounded, never "holds".
    pub swarm: Option<Walks>,
    /// A flag another thread may raise (the CLI's Ctrl-C handler) to stop the run as a spent
    /// budget stops it: bounded, with what it found so far.
    pub interrupt: Option<&'static AtomicBool>,
    /// Judge only these of the properties that apply (`--properties`); none: every one. The
    /// `reached:*` items are judged whatever this says: a proof that never reaches its faults
    /// and races is vacuous however few properties it judges. The rest are reported
    /// `not applicable`.
    pub properties: Option<Vec<Property>>,
}

/// A swarm's walks: how many, how long at most, and the seed of their streams.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Walks {
    /// The first walk's number: 0, or where a shard's part begins (`--shard`).
    pub first: u64,
    pub walks: u64,
    pub depth: usize,
    pub seed: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            threads: 2,
            max_states: 50_000_000,
            timeout: None,
            max_memory_mib: default_max_memory_mib(),
            progress: None,
            symmetry: false,
            partial_order: true,
            cross_check: false,
            settle: true,
            stop_at_violation: true,
            swarm: None,
            interrupt: None,
            properties: None,
        }
    }
}
