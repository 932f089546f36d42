//! What exploring a world found, for any recipe type: the counts, which budget ran out, which
//! reductions stood, each property's verdict, and why a bounded run's numbers may have grown.
//! A report (`report`) is an outcome with the scenario it was of and the traces of its
//! counterexamples.

use super::cross_check::CrossCheck;
use super::properties::Property;
use super::search::Spent;
use super::swarm::SwarmCoverage;
use super::verdict::{Status, Verdict};
use serde::Serialize;
use zklab_model::{Recipe, World};

/// What exploring a world found, for any recipe type. A report writes it under the names its
/// JSON has always used (`bounded_by`, `stopped_at_violation`, `symmetry`,
/// `fingerprint_collision_probability`); the verdicts a report writes with their traces.
#[derive(Clone, Debug, Serialize)]
pub struct Outcome {
    pub unique_states: usize,
    pub total_states: usize,
    pub max_depth: usize,
    pub elapsed_ms: u128,
    /// A budget (states, time, memory, an interruption) ran out, or the run was a swarm.
    pub bounded: bool,
    /// Which budget ran out, if one did (see `Budget::spent`; a swarm is bounded by its walks
    /// whether or not one did).
    #[serde(rename = "bounded_by", skip_serializing_if = "Option::is_none")]
    pub spent: Option<Spent>,
    /// Stopped after the level of the first violation (`Options::stop_at_violation`): the
    /// properties it had not decided are unknown.
    #[serde(rename = "stopped_at_violation")]
    pub stopped: bool,
    /// Explored with symmetry reduction: the counts are of classes.
    #[serde(rename = "symmetry")]
    pub symmetric: bool,
    /// The counts are of the graph reduced by partial order (see `Options::partial_order`).
    pub partial_order: bool,
    /// An upper bound on the chance that two distinct states, or two distinct parts of states,
    /// were taken for one by their 128-bit digests, over every pass whose findings the outcome
    /// keeps (see `index::collision_probability`). Computed once, by `explore`.
    #[serde(rename = "fingerprint_collision_probability")]
    pub collision_probability: f64,
    /// `symmetry` was asked for and refused: renaming the clients did not commute with a step
    /// in an explored state (why); the run was judged without it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub symmetry_refused: Option<String>,
    /// Renumbering was found unsound for the recipe: a state's future depended on more than the
    /// order of its numbers (why); the run was judged without it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub renumbering_refused: Option<String>,
    /// The recipe writes no renumbering and was renumbered by replay (see
    /// `zklab_model::reduce::world::replay`), its claim checked on the explored states.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub renumbered_by_replay: bool,
    #[serde(skip)]
    pub verdicts: Vec<Verdict>,
    /// stateright's second opinion, when asked for and the run was complete.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cross_check: Option<CrossCheck>,
    /// What the swarm covered, when the search was a swarm of random walks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub swarm: Option<SwarmCoverage>,
    /// A bounded exhaustive run whose numbers were not renumbered: how far they had grown, and
    /// why they were kept (see `GrowingNumbers`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub growing_numbers: Option<GrowingNumbers>,
}

/// Why a bounded run may never have ended: its sequence numbers and zxids are kept as they are,
/// so every new number makes a new state, and a recipe that creates nodes again and again
/// (re-enters a queue, re-creates its node) has a graph without end. Reported with how far the
/// numbers had grown by the last state the run met, and what to do about it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GrowingNumbers {
    /// Why the run kept its numbers (`World::why_not_renumbered`, or the refused claim).
    pub kept_because: String,
    /// The lock's next sequence number and the server's zxid in the last state met.
    pub sequence: i64,
    pub zxid: i64,
    /// That state's depth.
    pub depth: usize,
    /// What to do.
    pub remedy: &'static str,
    /// The run renumbered ZooKeeper's numbers by replay, and only the recipe's own numbers
    /// (a counter or uuid in its node names) were kept.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub by_replay: bool,
}

/// What to do about numbers that grow (see `GrowingNumbers`).
const REMEDY: &str = "if the recipe only compares sequence numbers and zxids with one another, claim renumbering \
(implement Recipe::renumbered, checked as a claim on the explored states) so that states differing only in their \
numbers are one (a recipe that writes none is renumbered by replay, which reaches ZooKeeper's numbers but not numbers \
the recipe makes itself: rank those with Renumber::local in a written renumbering); otherwise bound how often clients \
acquire (--rounds) and the faults' budgets";

impl GrowingNumbers {
    /// The note for a bounded run of `init` whose last state met is `last`, at `depth`, if the
    /// run kept its numbers.
    pub(super) fn of<R: Recipe>(init: &World<R>, last: &World<R>, depth: usize) -> Option<Self> {
        let by_replay = init.renumbers_by_replay();
        let kept_because = match by_replay {
            true => {
                "the recipe writes no renumbering, and replay ranks only the numbers ZooKeeper hands it".to_string()
            }
            false => init.why_not_renumbered()?.to_string(),
        };
        let (sequence, zxid) = last.counters();
        Some(GrowingNumbers { kept_because, sequence, zxid, depth, remedy: REMEDY, by_replay })
    }
}

impl Outcome {
    pub fn status(&self, property: Property) -> Option<Status> {
        self.verdicts.iter().find(|v| v.property == property).map(|v| v.status)
    }
}
