//! What the compared cases covered: how many used each feature, so that a run shows (and the
//! differential test can demand) that every part of the space of recipes was compared, not
//! merely drawn.

use super::case::{Case, Mix};
use super::usage::{Feature, Used};
use std::fmt::Write;

/// Counts over the compared cases.
#[derive(Debug, Default)]
pub struct Tally {
    pub drawn: u32,
    pub compared: u32,
    /// Each row met: its name and how many compared cases it applies to, in the order met.
    rows: Vec<(&'static str, u32)>,
}

/// The production checker's answer to a case's claims.
#[derive(Clone, Copy, Debug, Default)]
pub struct Refusals {
    pub renumbering: bool,
    pub symmetry: bool,
    /// The recipe writes no renumbering and the run renumbered it by replay (or tried to).
    pub replayed: bool,
}

/// The rows every run must fill: the features the recipes exercised, and the kinds of case
/// drawn on purpose.
pub const FLOORED: [&str; 22] = [
    "stat fields",
    "numbers in data",
    "own session",
    "arithmetic",
    "other tokens",
    "mixed programs",
    "deep paths",
    "giving up",
    "re-entry",
    "noting outages",
    "application steps",
    "jute.maxbuffer",
    "honest renumbering claim",
    "dishonest renumbering claim",
    "honest symmetry claim",
    "dishonest symmetry claim",
    "renumbered by replay",
    "sync",
    "multi",
    "operator-delete",
    "queue consumers",
    "barrier parties",
];

impl Tally {
    /// One compared case: `used` is what the reference checker's exploration exercised,
    /// `refused` what the production checker said of its claims, `limited` whether the reply
    /// length limit changed its graph, `shrunk` whether it is the drawn case made smaller.
    pub fn count(&mut self, case: &Case, used: Used, refused: Refusals, limited: bool, shrunk: bool) {
        self.compared += 1;
        let mut used = used;
        if case.mix != Mix::One {
            used.insert(Feature::Mixed);
        }
        for f in used.iter() {
            self.add(f.name());
        }
        let statics = [
            ("noting outages", case.variant.notes_outages),
            ("application steps", case.variant.application_steps),
            ("jute.maxbuffer", case.jute_maxbuffer.is_some()),
            ("jute.maxbuffer changed the graph", limited),
            ("compared in a smaller world than drawn", shrunk),
            ("one name over distinct programs", case.mix == Mix::Shared),
            ("three clients", case.clients == 3),
            ("operator-delete", case.faults.contains(&zklab_model::FaultKind::OperatorDelete)),
            ("queue consumers", case.programs().iter().any(|p| p.mode == zklab_model::Mode::Take)),
            ("barrier parties", case.programs().iter().any(|p| matches!(p.mode, zklab_model::Mode::Barrier { .. }))),
            ("unbounded rounds", case.rounds == zklab_model::UNBOUNDED_ROUNDS),
            ("honest renumbering claim", case.claims_renumbering(true)),
            ("honest renumbering claim refused", case.claims_renumbering(true) && refused.renumbering),
            ("dishonest renumbering claim", case.claims_renumbering(false)),
            ("dishonest renumbering claim refused", case.claims_renumbering(false) && refused.renumbering),
            ("renumbered by replay", refused.replayed),
            ("renumbered by replay, refused", refused.replayed && refused.renumbering),
            ("honest symmetry claim", case.claims_symmetry(true)),
            ("honest symmetry claim refused", case.claims_symmetry(true) && refused.symmetry),
            ("dishonest symmetry claim", case.claims_symmetry(false)),
            ("dishonest symmetry claim refused", case.claims_symmetry(false) && refused.symmetry),
        ];
        for (name, applies) in statics {
            if applies {
                self.add(name);
            }
        }
    }

    fn add(&mut self, name: &'static str) {
        self.add_many(name, 1);
    }

    fn add_many(&mut self, name: &'static str, many: u32) {
        match self.rows.iter_mut().find(|(n, _)| *n == name) {
            Some((_, count)) => *count += many,
            None => self.rows.push((name, many)),
        }
    }

    /// Another shard's tally added to this one (the differential test draws its cases in
    /// shards, one per thread).
    pub fn absorb(&mut self, other: Tally) {
        self.drawn += other.drawn;
        self.compared += other.compared;
        for (name, many) in other.rows {
            self.add_many(name, many);
        }
    }

    /// How many compared cases `name` applies to.
    pub fn get(&self, name: &str) -> u32 {
        self.rows.iter().find(|(n, _)| *n == name).map_or(0, |(_, c)| *c)
    }

    /// The floored rows below `floor`, with their counts.
    pub fn short_of(&self, floor: u32) -> Vec<String> {
        FLOORED.iter().filter(|n| self.get(n) < floor).map(|n| format!("{n}: {}", self.get(n))).collect()
    }

    /// One line per row, the floored ones first.
    pub fn report(&self) -> String {
        let mut out = format!("{} of {} drawn recipes compared\n", self.compared, self.drawn);
        let mut names: Vec<&str> = FLOORED.to_vec();
        names.extend(self.rows.iter().map(|(n, _)| *n).filter(|n| !FLOORED.contains(n)));
        for name in names {
            let _ = writeln!(out, "  {:>5}  {name}", self.get(name));
        }
        out
    }
}
