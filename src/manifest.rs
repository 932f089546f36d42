//! The manifest: for each recipe x clients x faults x client behaviour x rounds, the expected
//! verdict of every property and the exact unique state count. `cargo test` and
//! `zklab check --manifest FILE` both run it through here.

use crate::check::{self, Options, Report, Status};
use crate::scenario::{parse_faults, Scenario};
use serde_json::Value;
use zklab_model::{ClientBehaviour, Property, WorldConfig};

/// One manifest entry: the scenario and what checking it must give.
pub struct Entry {
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

/// Parses a manifest, or says in one line what is wrong with it.
pub fn parse(text: &str) -> Result<Vec<Entry>, String> {
    let manifest: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    if manifest["format"] != 1 {
        return Err("unsupported manifest format (this zklab reads format 1)".to_string());
    }
    let entries = manifest["entries"].as_array().ok_or("no `entries` array")?;
    if entries.is_empty() {
        return Err("no entries: a manifest that checks nothing proves nothing".to_string());
    }
    entries.iter().enumerate().map(|(i, e)| entry(e).map_err(|m| format!("entry {i}: {m}"))).collect()
}

fn entry(e: &Value) -> Result<Entry, String> {
    let text = |k: &str| e[k].as_str().map(str::to_string).ok_or(format!("`{k}` must be a string"));
    let number = |k: &str| e[k].as_i64().ok_or(format!("`{k}` must be a number"));
    let client_behaviour = match text("client")?.as_str() {
        "java" => ClientBehaviour::Java,
        "kazoo" => ClientBehaviour::Kazoo,
        other => return Err(format!("unknown client behaviour `{other}` (java or kazoo)")),
    };
    let config = WorldConfig {
        faults: parse_faults(&text("faults")?).map_err(|b| b.0)?,
        rounds: u8::try_from(number("rounds")?).map_err(|_| "`rounds` out of range")?,
        first_sequence: i32::try_from(number("first_sequence")?).map_err(|_| "`first_sequence` out of range")?,
        client_behaviour,
        ..WorldConfig::default()
    };
    let clients = usize::try_from(number("clients")?).map_err(|_| "`clients` out of range")?;
    let scenario = Scenario::new(&text("recipe")?, clients, config).map_err(|b| b.0)?;
    let expect = e["expect"]
        .as_object()
        .ok_or("`expect` must be an object")?
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
    Ok(Entry {
        label: format!(
            "{} n{} faults {} {} rounds {} first {}",
            text("recipe")?,
            clients,
            text("faults")?,
            text("client")?,
            number("rounds")?,
            number("first_sequence")?
        ),
        scenario,
        unique_states: usize::try_from(number("unique_states")?).map_err(|_| "`unique_states` out of range")?,
        expect,
    })
}

/// Checks one entry; returns the unique state count found and every deviation from the manifest.
/// Counts are of the full graph, states rather than symmetry classes and every interleaving, so
/// that they compare with stateright's and do not move when a reduction improves; and every
/// property is judged, so the run never stops at the first violation.
pub fn run(entry: &Entry, options: &Options) -> (usize, Vec<String>) {
    let options = Options { symmetry: false, partial_order: false, stop_at_violation: false, ..options.clone() };
    let report = check::run(&entry.scenario, &options);
    (report.unique_states, deviations(entry, &report))
}

/// Every way `report` differs from what `entry` expects: its state count, each verdict, a
/// counterexample that does not replay, and stateright's second opinion when it was asked for.
pub fn deviations(entry: &Entry, report: &Report) -> Vec<String> {
    let mut deviations = Vec::new();
    if report.unique_states != entry.unique_states {
        deviations.push(format!("{} unique states, manifest says {}", report.unique_states, entry.unique_states));
    }
    if entry.expect.len() != report.properties.len() {
        deviations.push(format!("{} properties apply, manifest lists {}", report.properties.len(), entry.expect.len()));
    }
    for p in &report.properties {
        let want = entry.expect.iter().find(|(k, _)| k.name() == p.name).map(|(_, v)| *v);
        if want != Some(p.status) {
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
    if let Some(cross) = &report.cross_check {
        if !cross.complete {
            deviations.push("stateright did not finish the cross-check within the budget".to_string());
        }
        deviations.extend(cross.disagreements.iter().map(|d| format!("cross-check: {d}")));
    }
    deviations
}
