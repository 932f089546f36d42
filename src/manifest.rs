//! The manifest: for each recipe x clients x faults x client behaviour x rounds, the expected
//! verdict of every property and the exact unique state count. `cargo test` and
//! `zklab check --manifest FILE` both run it through here.

use crate::check::{self, Options, Report, Status};
use crate::scenario::{parse_faults, parse_rounds, Scenario};
use serde::Deserialize;
use serde_json::Value;
use zklab_model::{ClientBehaviour, Property, WorldConfig};

/// One manifest entry: the scenario and what checking it must give.
pub struct ManifestEntry {
    pub label: String,
    pub scenario: Scenario,
    pub unique_states: usize,
    pub expect: Vec<(Property, Status)>,
}

const STATUSES: [Status; 5] =
    [Status::Holds, Status::Violated, Status::Vacuous, Status::Unknown, Status::NotApplicable];

pub fn status_name(status: Status) -> &'static str {
    match status {
        Status::Holds => "holds",
        Status::Violated => "violated",
        Status::Vacuous => "vacuous",
        Status::Unknown => "unknown",
        Status::NotApplicable => "not applicable",
    }
}

/// The status called `name`.
fn parse_status(name: &str) -> Option<Status> {
    STATUSES.into_iter().find(|s| status_name(*s) == name)
}

/// A manifest file as written: every field named here, no other (`deny_unknown_fields`: a
/// misspelt field is refused, never silently ignored).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    format: u64,
    entries: Vec<Value>,
}

/// One entry as written. Each is read on its own so that an error names its entry.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EntryFile {
    recipe: String,
    clients: usize,
    faults: String,
    client: String,
    /// 1 to 254, or `"unbounded"`, as `--rounds` takes them.
    rounds: Value,
    first_sequence: i32,
    unique_states: usize,
    expect: serde_json::Map<String, Value>,
}

/// Parses a manifest, or says in one line what is wrong with it.
pub fn parse(text: &str) -> Result<Vec<ManifestEntry>, String> {
    let manifest: File = serde_json::from_str(text).map_err(|e| format!("not a manifest: {e}"))?;
    if manifest.format != 1 {
        return Err("unsupported manifest format (this zklab reads format 1)".to_string());
    }
    if manifest.entries.is_empty() {
        return Err("no entries: a manifest that checks nothing proves nothing".to_string());
    }
    manifest.entries.into_iter().enumerate().map(|(i, e)| entry(e).map_err(|m| format!("entry {i}: {m}"))).collect()
}

fn entry(e: Value) -> Result<ManifestEntry, String> {
    let e: EntryFile = serde_json::from_value(e).map_err(|e| e.to_string())?;
    let client_behaviour = match e.client.as_str() {
        "java" => ClientBehaviour::Java,
        "kazoo" => ClientBehaviour::Kazoo,
        other => return Err(format!("unknown client behaviour `{other}` (java or kazoo)")),
    };
    let rounds_text = match &e.rounds {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    let rounds = parse_rounds(&rounds_text).map_err(|m| format!("`rounds` {m}"))?;
    let config = WorldConfig {
        faults: parse_faults(&e.faults).map_err(|b| b.0)?,
        rounds,
        first_sequence: e.first_sequence,
        client_behaviour,
        ..WorldConfig::default()
    };
    let scenario = Scenario::new(&e.recipe, e.clients, config).map_err(|b| b.0)?;
    let expect = e
        .expect
        .iter()
        .map(|(k, v)| {
            let property = Property::parse(k).ok_or(format!("unknown property `{k}` in `expect`"))?;
            let status = v
                .as_str()
                .and_then(parse_status)
                .ok_or(format!("`expect.{k}` must be one of {}", STATUSES.map(status_name).join(", ")))?;
            Ok((property, status))
        })
        .collect::<Result<_, String>>()?;
    Ok(ManifestEntry {
        label: format!(
            "{} n{} faults {} {} rounds {} first {}",
            e.recipe, e.clients, e.faults, e.client, rounds_text, e.first_sequence
        ),
        scenario,
        unique_states: e.unique_states,
        expect,
    })
}

/// Checks one entry; returns the unique state count found and every deviation from the manifest.
/// Counts are of the full graph, states rather than symmetry classes and every interleaving, so
/// that they compare with stateright's and do not move when a reduction improves; and every
/// property is judged, so the run never stops at the first violation.
/// The report comes back too: whether a budget cut it short (`Report::bounded_by`).
pub fn run(entry: &ManifestEntry, options: &Options) -> (Report, Vec<String>) {
    let options = Options { symmetry: false, partial_order: false, stop_at_violation: false, ..options.clone() };
    let report = check::run(&entry.scenario, &options);
    let deviations = deviations(entry, &report);
    (report, deviations)
}

/// Every way `report` differs from what `entry` expects: its state count, each verdict, a
/// counterexample that does not replay, and stateright's second opinion when it was asked for.
/// A run a budget cut short (`bounded`) has no count to compare and its unknowns are not
/// answers: only what it did decide (a violation, a reached item) is held to the manifest.
pub fn deviations(entry: &ManifestEntry, report: &Report) -> Vec<String> {
    let mut deviations = Vec::new();
    if report.outcome.unique_states != entry.unique_states && !report.outcome.bounded {
        deviations
            .push(format!("{} unique states, manifest says {}", report.outcome.unique_states, entry.unique_states));
    }
    if entry.expect.len() != report.properties.len() {
        deviations.push(format!("{} properties apply, manifest lists {}", report.properties.len(), entry.expect.len()));
    }
    for p in &report.properties {
        let want = entry.expect.iter().find(|(k, _)| k.name() == p.name).map(|(_, v)| *v);
        let undecided = report.outcome.bounded && p.status == Status::Unknown;
        if want != Some(p.status) && !undecided {
            let want = want.map_or("nothing (missing)", status_name);
            deviations.push(format!("{} is {}, manifest says {want}", p.name, status_name(p.status)));
        }
        if let Some(trace) = &p.trace {
            if let Err(e) = trace.replay() {
                deviations.push(format!("{} counterexample does not replay: {e}", p.name));
            }
        }
    }
    // Asked for a second opinion (`--cross-check`), the manifest holds it to it.
    if let Some(cross) = &report.outcome.cross_check {
        if !cross.complete {
            deviations.push("stateright did not finish the cross-check within the budget".to_string());
        }
        deviations.extend(cross.disagreements.iter().map(|d| format!("cross-check: {d}")));
    }
    deviations
}
