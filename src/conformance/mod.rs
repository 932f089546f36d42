//! Conformance: the op scripts of `conformance/` (what a real ZooKeeper 3.8 answered, recorded
//! with a kazoo client) run against the model, in the same result format, so the two can be
//! compared answer by answer. See conformance/FORMAT.md.

mod compare;
#[cfg(feature = "live")]
mod differential;
#[cfg(feature = "live")]
pub(crate) mod fourlw;
#[cfg(feature = "live")]
mod fuzz;
#[cfg(feature = "live")]
mod live;
#[cfg(feature = "live")]
mod proxy;
mod runner;
#[cfg(feature = "live")]
mod sandbox;
mod script;

pub use compare::differences;
#[cfg(feature = "live")]
pub use differential::{fuzz, results_text, save, script_text, FuzzOptions, FuzzReport, Mismatch};
#[cfg(feature = "live")]
pub use live::{run_script_live, run_script_live_as};
pub use runner::{run_script, run_script_as};
pub use script::op_of;

/// The client behaviour a script runs with when none is named: the Java client's, as `check`
/// and `simulate` default to. The single-library recordings in conformance/expected (made with
/// kazoo) cannot tell the libraries apart: they cut no connection and set no jute.maxbuffer.
pub const DEFAULT_CLIENT: zklab_model::ClientBehaviour = zklab_model::ClientBehaviour::Java;

/// A script that cannot be run, said in one line naming the op.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ScriptError(pub String);
