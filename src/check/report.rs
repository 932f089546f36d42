//! `zklab check`'s report: a run's outcome with the scenario it was of, each counterexample as a
//! trace, and the process's memory; what the command line prints and writes as JSON.

use super::explore::explore;
use super::options::Options;
use super::outcome::{GrowingNumbers, Outcome};
use super::properties::{Kind, Property};
use super::search::{Counterexample, Spent};
use super::verdict::Status;
use crate::exit::Exit;
use crate::scenario::Scenario;
use crate::trace::{Trace, TraceVerdict, FORMAT};
use serde::Serialize;

#[derive(Clone, Debug, Serialize)]
pub struct PropertyReport {
    #[serde(skip)]
    pub property: Property,
    /// The property's name, as files and the command line write it.
    pub name: &'static str,
    pub kind: Kind,
    pub status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace_file: Option<String>,
    #[serde(skip)]
    pub trace: Option<Trace>,
}

/// A check's report: the scenario, the outcome of exploring it, and each property's verdict
/// with its counterexample as a trace.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub recipe: String,
    pub clients: usize,
    pub faults: Vec<String>,
    pub client_behaviour: zklab_model::ClientBehaviour,
    pub rounds: u8,
    /// What exploring the scenario found (its verdicts are `properties`, with their traces).
    #[serde(flatten)]
    pub outcome: Outcome,
    /// The run was stopped by Ctrl-C (`bounded_by` says so too).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// Peak resident memory of the process, in KiB (Linux only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_rss_kib: Option<u64>,
    /// Peak resident memory over the states stored (`unique_states`): what a stored state
    /// costs, start-up and search structures included (the figure Spin's and TLC's reports
    /// compare with).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes_per_state: Option<u64>,
    pub properties: Vec<PropertyReport>,
}

impl Report {
    pub fn status(&self, property: Property) -> Option<Status> {
        self.properties.iter().find(|p| p.property == property).map(|p| p.status)
    }

    /// Passed: everything holds; failed: a property is violated, the run is vacuous or
    /// stateright disagrees; unknown: a budget ran out (before the answer, or before
    /// stateright's).
    pub fn exit(&self) -> Exit {
        let any = |s: Status| self.properties.iter().any(|p| p.status == s);
        let cross_check = self.outcome.cross_check.as_ref();
        let disagrees = cross_check.is_some_and(|c| !c.disagreements.is_empty());
        let unfinished = cross_check.is_some_and(|c| !c.complete);
        if any(Status::Violated) || any(Status::Vacuous) || disagrees {
            Exit::Failed
        } else if any(Status::Unknown) || unfinished {
            Exit::Unknown
        } else {
            Exit::Passed
        }
    }
}

/// What a report says of a run that renumbered its recipe by replay.
pub const REPLAY_TEXT: &str = "renumbered by replay: the recipe writes no renumbering, so each state's recipes \
    were rebuilt from the inputs they were handed, with sequence numbers and zxids ranked (checked as a claim on \
    the explored states); --symmetry is not combined with it";

/// What a report says of a bounded run that kept its numbers (see `GrowingNumbers`).
pub fn growing_numbers_text(g: &GrowingNumbers) -> String {
    if g.by_replay {
        return format!(
            "sequence numbers and zxids are renumbered by replay, but numbers the recipe makes itself (a counter \
             or uuid in its node names) are kept as they are, because {}: a recipe that makes new ones again and \
             again makes a new state with each, so the run may never end (the last state met was at depth {}); {}",
            g.kept_because, g.depth, g.remedy
        );
    }
    format!(
        "numbers are kept as they are, because {}: by the last state met (depth {}) the lock's counter was at {} \
         and the zxid at {}, and a recipe that creates nodes again and again makes a new state with every new \
         number, so the run may never end; {}",
        g.kept_because, g.depth, g.sequence, g.zxid, g.remedy
    )
}

/// Checks `scenario` against every property that applies to it; counterexamples become traces.
pub fn run(scenario: &Scenario, options: &Options) -> Report {
    let outcome = explore(scenario.world(), options);
    let trace = |property: Property, cx: &Counterexample| -> Trace {
        let mut trace = Trace {
            format: FORMAT,
            scenario: scenario.clone(),
            seed: None,
            summary: String::new(),
            verdict: TraceVerdict { property, cycle_start: cx.cycle_start, stalled: false },
            steps: cx.steps.clone(),
            times_us: Vec::new(),
            program: scenario.registering_program(),
        };
        // One way to tell what a trace shows: the way its replay checks it.
        trace.summary = trace.replayed_summary().expect("counterexample steps replay");
        trace
    };
    let peak_rss_kib = peak_rss_kib();
    Report {
        recipe: scenario.recipe_label(),
        clients: scenario.recipes.len(),
        faults: scenario
            .faults()
            .iter()
            .map(|k| match scenario.config.faults.get(*k) {
                1 => k.name().to_string(),
                n => format!("{}={n}", k.name()),
            })
            .collect(),
        client_behaviour: scenario.config.client_behaviour,
        rounds: scenario.config.rounds,
        interrupted: outcome.spent == Some(Spent::Interrupted),
        peak_rss_kib,
        bytes_per_state: peak_rss_kib
            .filter(|_| outcome.unique_states > 0)
            .map(|kib| kib * 1024 / outcome.unique_states as u64),
        properties: outcome
            .verdicts
            .iter()
            .map(|v| PropertyReport {
                property: v.property,
                name: v.name(),
                kind: v.kind(),
                status: v.status,
                trace_file: None,
                trace: v.counterexample.as_ref().map(|cx| trace(v.property, cx)),
            })
            .collect(),
        outcome,
    }
}

/// The process's peak resident memory so far, where the OS tells it (Linux).
pub fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
