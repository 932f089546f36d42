//! Campaigns that outgrow one machine: `--shard I/N` runs the I-th of N equal parts of a seed
//! sweep (`simulate --seeds`) or of a swarm's walks (`check --swarm`), each part an independent
//! job on whatever scheduler runs them (a CI matrix, a Kubernetes Indexed Job), and writes a
//! `ShardReport`; `zklab merge` combines the reports into the verdict one run would give.
//!
//! A part is a contiguous range of seeds or walk numbers, and every seed and walk draws from
//! its own stream, so a shard runs exactly the runs the whole campaign would have run there:
//! merged, the shards find what one run finds. What merging keeps: for each property broken, the
//! shortest counterexample (the lowest seed or walk on a tie, as one run keeps the earliest);
//! the `reached:*` items any shard reached; counts summed. What it cannot keep: a swarm's
//! distinct states (two shards may meet the same state), reported as the sum of each shard's,
//! an upper bound.

use crate::exit::Exit;
use crate::trace::Trace;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::ops::Range;
use std::path::Path;

/// The shard report's format; `merge` refuses another.
pub const FORMAT: u32 = 1;

/// The zklab that wrote a report: reports of two builds are not one campaign (a fix between them
/// changes what a seed does), so `merge` refuses a report of another version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The most shards a campaign may be cut into.
pub const MAX_SHARDS: u64 = 100_000;

/// `--shard I/N`: the I-th (from 1) of N parts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
}

impl Shard {
    /// The whole campaign as one shard.
    pub const WHOLE: Shard = Shard { index: 1, count: 1 };

    pub fn parse(text: &str) -> Result<Shard, String> {
        let bad = || {
            format!(
                "--shard must look like I/N with 1 <= I <= N <= {MAX_SHARDS} (2/4: the second of four), got `{text}`"
            )
        };
        let (i, n) = text.split_once('/').ok_or_else(bad)?;
        let (index, count): (u64, u64) = (i.trim().parse().map_err(|_| bad())?, n.trim().parse().map_err(|_| bad())?);
        match (1..=count).contains(&index) && count <= MAX_SHARDS {
            true => Ok(Shard { index, count }),
            false => Err(bad()),
        }
    }

    /// This shard's part of `0..total`: contiguous, the parts of all shards covering it once,
    /// their lengths differing by at most one.
    pub fn range(self, total: u64) -> Range<u64> {
        let at = |k: u64| (u128::from(total) * u128::from(k) / u128::from(self.count)) as u64;
        at(self.index - 1)..at(self.index)
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// A property broken in a shard: its shortest counterexample there.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Finding {
    pub property: String,
    /// The seed or walk number that broke it.
    pub unit: u64,
    pub detail: String,
    /// The name the counterexample's file takes in a trace directory.
    pub file: String,
    pub trace: Trace,
}

/// What a shard (or a merge of shards) covered: the runs or walks it took to their end, and
/// the steps they took, summed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Covered {
    /// Seeds or walks run to their end.
    pub units: u64,
    /// Seeds that broke a property (a swarm does not count its walks so).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub broke: Option<u64>,
    /// Seeds that ended with a client still waiting and no deadlock: no verdict, so a
    /// campaign with any is unknown, never passed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undecided: Option<u64>,
    /// Steps taken (a swarm's: states visited).
    pub steps: u64,
    /// A swarm's distinct states, summed over shards (an upper bound once merged).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distinct_states: Option<u64>,
}

/// One shard's report (`--shard I/N --json`), or several merged.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShardReport {
    pub format: u32,
    /// The zklab version that wrote it (`VERSION`); absent in reports of an older zklab.
    #[serde(default)]
    pub version: String,
    /// Everything that fixes the campaign's runs (the command, its world, its seeds or walks):
    /// equal in all its shards.
    pub campaign: serde_json::Value,
    /// How many seeds or walks the whole campaign holds.
    pub total: u64,
    /// Whether the campaign passes when nothing breaks (a seed sweep), or is at best unknown
    /// (a swarm never says a property holds).
    pub can_pass: bool,
    /// The shards this report holds (one, or all that were merged), and how many there are.
    pub shards: Vec<u64>,
    pub count: u64,
    pub covered: Covered,
    /// Each broken property's shortest counterexample.
    pub findings: Vec<Finding>,
    /// `reached:*` items reached.
    pub reached: Vec<String>,
    /// What stopped a shard before its part was done (a budget, a signal), if anything did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bounded_by: Vec<String>,
}

impl ShardReport {
    pub fn new(campaign: serde_json::Value, total: u64, can_pass: bool, shard: Shard) -> ShardReport {
        ShardReport {
            format: FORMAT,
            version: VERSION.to_string(),
            campaign,
            total,
            can_pass,
            shards: vec![shard.index],
            count: shard.count,
            covered: Covered::default(),
            findings: Vec::new(),
            reached: Vec::new(),
            bounded_by: Vec::new(),
        }
    }

    /// Keeps `finding` if its property has none yet or it is shorter than the one kept (the
    /// lower unit on a tie).
    pub fn keep_shortest(&mut self, finding: Finding) {
        let key = |f: &Finding| (f.trace.steps.len(), f.unit);
        match self.findings.iter_mut().find(|f| f.property == finding.property) {
            Some(kept) if key(&finding) < key(kept) => *kept = finding,
            Some(_) => {}
            None => self.findings.push(finding),
        }
        self.findings.sort_by(|a, b| a.property.cmp(&b.property));
    }

    /// The shards of the campaign no report here holds.
    pub fn missing(&self) -> Vec<u64> {
        (1..=self.count).filter(|i| !self.shards.contains(i)).collect()
    }

    /// As for one run: failed on a broken property; unknown when a shard is missing or one
    /// was stopped before its part was done; else passed.
    pub fn exit(&self) -> Exit {
        if !self.findings.is_empty() {
            Exit::Failed
        } else if !self.can_pass
            || self.covered.undecided.unwrap_or(0) > 0
            || !self.missing().is_empty()
            || !self.bounded_by.is_empty()
            || self.covered.units < self.expected()
        {
            Exit::Unknown
        } else {
            Exit::Passed
        }
    }

    /// Seeds or walks the shards held here were to run.
    pub fn expected(&self) -> u64 {
        self.shards
            .iter()
            .map(|&index| Shard { index, count: self.count }.range(self.total))
            .map(|r| r.end - r.start)
            .sum()
    }
}

impl ShardReport {
    /// Whether the report is one this zklab can merge and says nothing impossible: its format and
    /// version are this zklab's; its shard count is 1 to `MAX_SHARDS`; its shards are a
    /// non-empty set of distinct indices within that count; it ran no more seeds or walks than
    /// its shards hold, and no fewer unless it says what stopped it; and every finding is a
    /// plain file name (no directory, so it stays inside the trace directory) whose trace
    /// replays to the property it is filed under. The error names what is wrong.
    pub fn validate(&self) -> Result<(), String> {
        if self.format != FORMAT {
            return Err(format!("shard report format {} (this zklab reads {FORMAT})", self.format));
        }
        if self.version != VERSION {
            let theirs = if self.version.is_empty() { "an older zklab" } else { &self.version };
            return Err(format!("written by zklab {theirs}, not this zklab {VERSION}: run every shard with one build"));
        }
        let planned = self.campaign.get("seeds").or(self.campaign.get("walks")).and_then(|n| n.as_u64());
        if planned != Some(self.total) {
            return Err(format!(
                "it says the campaign holds {} seeds or walks, but its command planned {}",
                self.total,
                planned.map_or("none".to_string(), |n| n.to_string())
            ));
        }
        let swarm = self.campaign.get("walks").is_some();
        if self.can_pass == swarm {
            return Err("it says a swarm can pass, or a seed sweep cannot".to_string());
        }
        if !(1..=MAX_SHARDS).contains(&self.count) {
            return Err(format!("a campaign is cut into 1 to {MAX_SHARDS} shards, this one says {}", self.count));
        }
        if self.shards.is_empty() {
            return Err("it holds no shard".to_string());
        }
        let mut seen = std::collections::BTreeSet::new();
        for &index in &self.shards {
            if !(1..=self.count).contains(&index) {
                return Err(format!("shard {index} of {} does not exist", self.count));
            }
            if !seen.insert(index) {
                return Err(format!("it gives shard {index}/{} twice", self.count));
            }
        }
        let expected = self.expected();
        if self.covered.units > expected {
            return Err(format!("its shards hold {expected} seeds or walks, but it says {} ran", self.covered.units));
        }
        if self.covered.units < expected && self.bounded_by.is_empty() {
            return Err(format!(
                "its shards hold {expected} seeds or walks, {} ran, and it says nothing stopped it",
                self.covered.units
            ));
        }
        let recipes = self.campaign.get("scenario").and_then(|s| s.get("recipes"));
        for finding in &self.findings {
            finding.validate()?;
            let theirs = serde_json::to_value(&finding.trace.scenario.recipes).ok();
            if recipes.is_none() || recipes != theirs.as_ref() {
                return Err(format!("{} is a trace of other recipes than the campaign's", finding.file));
            }
        }
        Ok(())
    }
}

impl Finding {
    /// A plain `.json` file name, and a trace that replays to the property it is filed under.
    fn validate(&self) -> Result<(), String> {
        let plain = Path::new(&self.file).file_name().is_some_and(|n| n == self.file.as_str());
        if !plain || self.file.starts_with('.') || !self.file.ends_with(".json") {
            return Err(format!(
                "the trace file `{}` is not a plain `.json` name: traces are written inside the trace directory only",
                self.file
            ));
        }
        if self.trace.verdict.property.name() != self.property {
            return Err(format!(
                "{} is filed under `{}` but its trace is of `{}`",
                self.file,
                self.property,
                self.trace.verdict.property.name()
            ));
        }
        self.trace.validate().map_err(|e| format!("{}: {e}", self.file))?;
        self.trace.replay().map_err(|e| format!("{} does not replay: {e}", self.file))
    }
}

/// Merges shard reports of one campaign, each valid (`ShardReport::validate`), refusing
/// reports of different campaigns, formats, versions or shard counts, and a shard given twice.
pub fn merge(reports: Vec<(String, ShardReport)>) -> Result<ShardReport, String> {
    for (name, report) in &reports {
        report.validate().map_err(|e| format!("{name}: {e}"))?;
    }
    let mut reports = reports.into_iter();
    let (first_name, mut merged) = reports.next().ok_or("give at least one shard report")?;
    let mut by_shard: BTreeMap<u64, String> = merged.shards.iter().map(|&i| (i, first_name.clone())).collect();
    for (name, report) in reports {
        if (&report.campaign, report.total, report.count) != (&merged.campaign, merged.total, merged.count) {
            return Err(format!(
                "{name} is of another campaign than {first_name} (its command, world, seeds or shard count differ)"
            ));
        }
        for &index in &report.shards {
            if let Some(other) = by_shard.insert(index, name.clone()) {
                return Err(format!("shard {index}/{} is given twice: {other} and {name}", merged.count));
            }
        }
        merged.shards.extend(&report.shards);
        let (a, b) = (&mut merged.covered, &report.covered);
        a.units += b.units;
        a.broke = match (a.broke, b.broke) {
            (Some(x), Some(y)) => Some(x + y),
            (x, y) => x.or(y),
        };
        a.undecided = match (a.undecided, b.undecided) {
            (Some(x), Some(y)) => Some(x + y),
            (x, y) => x.or(y),
        };
        a.steps += b.steps;
        a.distinct_states = match (a.distinct_states, b.distinct_states) {
            (Some(x), Some(y)) => Some(x + y),
            (x, y) => x.or(y),
        };
        for finding in report.findings {
            merged.keep_shortest(finding);
        }
        merged.reached.extend(report.reached);
        merged.bounded_by.extend(report.bounded_by);
    }
    merged.shards.sort_unstable();
    merged.reached.sort();
    merged.reached.dedup();
    merged.bounded_by.sort();
    merged.bounded_by.dedup();
    Ok(merged)
}

impl ShardReport {
    /// A swarm shard's report (`check --swarm W --shard I/N`): its violations with the walks
    /// that gave them, the reached items, and what its walks covered.
    pub fn of_swarm(report: &crate::check::Report, campaign: serde_json::Value, total: u64, shard: Shard) -> Self {
        let mut out = ShardReport::new(campaign, total, false, shard);
        let coverage = report.outcome.swarm.as_ref().expect("a swarm's report has its coverage");
        out.covered = Covered {
            units: coverage.walks,
            broke: None,
            undecided: None,
            steps: coverage.visits,
            distinct_states: Some(coverage.distinct_states as u64),
        };
        for p in &report.properties {
            match (&p.trace, p.status) {
                (Some(trace), _) => out.keep_shortest(Finding {
                    property: p.name.to_string(),
                    unit: coverage.counterexample_walks.get(p.name).copied().unwrap_or(coverage.first_walk),
                    detail: trace.summary.clone(),
                    file: file_name(&crate::trace_files::trace_file(
                        Path::new(""),
                        &report.recipe,
                        report.clients,
                        p.name,
                    )),
                    trace: trace.clone(),
                }),
                (None, crate::check::Status::Holds) if p.kind == crate::check::properties::Kind::Reached => {
                    out.reached.push(p.name.to_string())
                }
                _ => {}
            }
        }
        out.bounded_by.extend(report.outcome.spent.map(|s| s.what_ran_out().to_string()));
        out
    }

    /// A seed sweep's shard report (`simulate --seeds K --shard I/N`): each property's
    /// shortest counterexample among its seeds, and how many seeds ran and broke something.
    pub fn of_seeds(
        runs: &[crate::simulate::RunReport],
        name: impl Fn(&crate::simulate::RunReport, &Trace) -> String,
        (campaign, total, shard): (serde_json::Value, u64, Shard),
        stopped: Option<crate::budget::Spent>,
    ) -> Self {
        let mut out = ShardReport::new(campaign, total, true, shard);
        let ended: Vec<_> = runs.iter().filter(|r| r.verdict.ended()).collect();
        let undecided = runs.iter().filter(|r| r.verdict == crate::simulate::RunVerdict::Unknown).count() as u64;
        out.covered = Covered {
            units: ended.len() as u64,
            broke: Some(runs.iter().filter(|r| r.violated.is_some()).count() as u64),
            undecided: (undecided > 0).then_some(undecided),
            steps: runs.iter().map(|r| r.metrics.steps).sum(),
            distinct_states: None,
        };
        for run in runs {
            if let (Some(trace), Some(property)) = (&run.trace, &run.violated) {
                out.keep_shortest(Finding {
                    property: property.clone(),
                    unit: run.seed,
                    detail: run.detail.clone().unwrap_or_default(),
                    file: name(run, trace),
                    trace: trace.clone(),
                });
            }
        }
        if ended.len() < runs.len() || (runs.len() as u64) < out.expected() {
            out.bounded_by.push(stopped.map_or("interrupted", |s| s.what_ran_out()).to_string());
        }
        out
    }
}

fn file_name(path: &Path) -> String {
    path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shards_of_a_campaign_cover_it_once_in_order_and_nearly_evenly() {
        for (total, count) in [(10, 3), (3, 3), (1_000_000, 7), (u64::MAX, 5), (5, 1)] {
            let parts: Vec<Range<u64>> = (1..=count).map(|index| Shard { index, count }.range(total)).collect();
            assert_eq!(parts[0].start, 0);
            assert_eq!(parts[parts.len() - 1].end, total);
            assert!(parts.windows(2).all(|w| w[0].end == w[1].start));
            let lengths: Vec<u64> = parts.iter().map(|p| p.end - p.start).collect();
            assert!(lengths.iter().max().unwrap() - lengths.iter().min().unwrap() <= 1, "{lengths:?}");
        }
    }

    #[test]
    fn a_shard_is_read_as_i_of_n() {
        assert_eq!(Shard::parse("2/4"), Ok(Shard { index: 2, count: 4 }));
        for bad in ["0/4", "5/4", "1/0", "x/4", "4", "1/100001", ""] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
    }
}
