//! A seeded discrete-event simulator for ZooKeeper lock recipes. It drives the same `World` and
//! the same recipe code as the checker, one `World::apply` at a time, but picks each step by
//! virtual time instead of enumerating them: replies and notifications travel with sampled
//! latencies, sessions time out as ZooKeeper's do, and faults strike at scheduled moments or at
//! drawn points of their clients' lock work. Every random draw comes from one ChaCha stream per concern, seeded by the run's
//! seed, so a run replays byte for byte and its steps form an ordinary zklab trace.

mod anchors;
mod config;
mod faults;
mod judge;
mod metrics;
mod plan;
mod queue;
mod run;
mod steps_hash;
mod streams;
mod timing;

pub use anchors::{Anchored, Anchors, Point};
pub use config::{BadConfig, FaultRates, Latency, SimConfig, MAX_CLIENTS};
pub use faults::{Breaks, Schedule, ScheduleError, TimedFault};
pub use judge::{orphaned, waiters, Broken, Ending, Judge};
pub use metrics::{Herd, Metrics};
pub use plan::{draw_catch_up, draw_loss, draw_pause, fault_streams, planned_faults, LAG_CATCH_UP_US};
pub use run::{simulate, simulate_observed, simulate_stoppable, SimOutcome, SimRun, Undecided, Violation};
pub use steps_hash::StepsHash;
pub use streams::{between, Streams};
pub use timing::SessionTiming;
