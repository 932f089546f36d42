//! Conformance: the op scripts of `conformance/` (what a real ZooKeeper 3.8 answered, recorded
//! with a kazoo client) run against the model, in the same result format, so the two can be
//! compared answer by answer. See conformance/FORMAT.md.

mod compare;
mod differential;
mod fourlw;
mod fuzz;
mod live;
mod proxy;
mod runner;
mod sandbox;
mod script;

pub use compare::differences;
pub use differential::{fuzz, results_text, save, script_text, FuzzOptions, FuzzReport, Mismatch};
pub use live::{run_script_live, run_script_live_as};
pub use runner::{run_script, run_script_as};

/// The client library the recordings in conformance/expected were made with, and so the
/// behaviour a script runs with when none is named. Before scripts could cut a connection the
/// two libraries answered every script alike.
pub const DEFAULT_CLIENT: zklab_model::ClientBehaviour = zklab_model::ClientBehaviour::Kazoo;

/// A script that cannot be run, said in one line naming the op.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ScriptError(pub String);
