//! The real backend: a catalogue or registered recipe's clients run against a real ZooKeeper,
//! with faults made exactly where the model places them, judged by a model world kept in step
//! (`shadow`) with the same property code as the checker and the simulator. See docs/real.md.

mod case;
pub mod children;
mod client;
pub mod clock;
pub mod connection;
pub mod driver;
pub mod ensemble;
pub mod fault_ledger;
mod faults;
mod frame_proxy;
pub mod ground_truth;
pub mod history;
pub use crate::wire::jute;
pub mod lagging;
pub mod libraries;
mod library;
pub mod private;
mod session_moves;
pub mod shadow;
mod steer;
pub mod unify;
pub mod wire_log;

pub use case::divergence_case;
pub use driver::{run_real, RealMetrics, RealRun, Target};
pub use ensemble::Ensemble;
pub use faults::unsupported;
pub use shadow::Standing;
