//! A property's verdict: its status, with a counterexample where it is violated, and the words
//! the reports print for it.

use super::properties::{Kind, Property};
use super::search::Counterexample;
use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Holds,
    Violated,
    /// A `reached:*` property never happened in a complete exploration: the proof is vacuous.
    Vacuous,
    /// A budget ran out before the answer.
    Unknown,
    /// Not judged: the recipe says the property says nothing about it (`Recipe::applies`), or
    /// the run was narrowed to other properties (`Options::properties`). Never a pass.
    NotApplicable,
}

/// A verdict in words, as the reports print it: why an unknown is unknown (`stopped`: the run
/// stopped at the first violation; `swarm`: random walks cannot tell).
pub fn status_text(status: Status, stopped: bool, swarm: bool) -> &'static str {
    match status {
        Status::Holds => "holds",
        Status::Violated => "VIOLATED",
        Status::Vacuous => "VACUOUS (never reached)",
        Status::Unknown if stopped => "unknown (stopped at the first violation)",
        Status::Unknown if swarm => "unknown (random walks cannot tell)",
        Status::Unknown => "unknown (budget ran out)",
        Status::NotApplicable => "not applicable",
    }
}

/// The verdict on one property, with a counterexample when violated.
#[derive(Clone, Debug)]
pub struct Verdict {
    pub property: Property,
    pub status: Status,
    pub counterexample: Option<Counterexample>,
}

impl Verdict {
    pub fn name(&self) -> &'static str {
        self.property.name()
    }

    pub fn kind(&self) -> Kind {
        self.property.kind()
    }
}
