//! `zklab check`: prove or refute a scenario. The breadth-first graph pass (on all threads)
//! checks the safety properties in every state, the transition properties on every step and the
//! reachability of each fault and race, supplies the shortest counterexamples and judges
//! liveness on the whole graph. Once the graph pass is complete every property is decided;
//! `--cross-check` then has stateright explore the same model for a second opinion.
//!
//! What a run means: `options` (what it is asked), `explore` (the passes), `verdict`, `outcome`
//! and `report` (what it found). How a state is expanded: `expand`, with the recipe's claims
//! checked in `claims`; judged in `search`, on a graph (`graph`, `liveness`). The storage and the
//! memos that make it fast, which a reader of the semantics may skip, are the `engine` wing.

pub mod bfs;
mod builder;
mod claims;
pub mod cross_check;
pub mod engine;
mod expand;
mod explore;
mod graph;
pub mod liveness;
mod options;
mod outcome;
pub mod properties;
mod report;
pub mod search;
pub mod stateright_adapter;
pub mod swarm;
mod verdict;

pub use crate::budget::default_max_memory_mib;
pub use builder::{check, Builder, Checked};
pub use engine::index;
pub use explore::{explore, judged};
pub use options::{Options, Walks};
pub use outcome::{GrowingNumbers, Outcome};
pub use report::{growing_numbers_text, peak_rss_kib, run, PropertyReport, Report, REPLAY_TEXT};
pub use verdict::{status_text, Status, Verdict};
