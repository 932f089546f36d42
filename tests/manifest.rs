//! The manifest (tests/manifest.json), in the spirit of the tlaplus Examples manifest: for each
//! recipe x clients x faults x client behaviour x rounds, the expected verdict of every property
//! and the exact number of unique states. A flawed variant must be caught with a replayable
//! counterexample, a correct one proven; a changed state count is a change in the model or a
//! recipe to explain.

use std::path::Path;
use zklab::check::{self, Options, Status};
use zklab::scenario::{parse_faults, Scenario};
use zklab_model::{ClientBehaviour, WorldConfig};

fn status_name(status: Status) -> &'static str {
    match status {
        Status::Holds => "holds",
        Status::Violated => "violated",
        Status::Vacuous => "vacuous",
        Status::Unknown => "unknown",
    }
}

#[test]
fn every_manifest_entry_has_its_expected_verdicts_and_state_count() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/manifest.json");
    let manifest: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    assert_eq!(manifest["format"], 1);
    let entries = manifest["entries"].as_array().expect("entries");
    assert!(!entries.is_empty());
    let mut deviations = Vec::new();
    for e in entries {
        let text = |k: &str| e[k].as_str().unwrap_or_else(|| panic!("{k} in {e}")).to_string();
        let number = |k: &str| e[k].as_i64().unwrap_or_else(|| panic!("{k} in {e}"));
        let config = WorldConfig {
            faults: parse_faults(&text("faults")).unwrap(),
            rounds: number("rounds") as u8,
            first_sequence: number("first_sequence") as i32,
            client_behaviour: match text("client").as_str() {
                "java" => ClientBehaviour::Java,
                "kazoo" => ClientBehaviour::Kazoo,
                other => panic!("unknown client behaviour {other}"),
            },
            ..WorldConfig::default()
        };
        let scenario = Scenario::new(&text("recipe"), number("clients") as usize, config).unwrap();
        let report = check::run(&scenario, &Options { threads: 1, max_memory_mib: Some(4096), ..Options::default() });
        let label = format!("{} n{} faults {} {}", text("recipe"), number("clients"), text("faults"), text("client"));
        if report.unique_states as i64 != number("unique_states") {
            deviations
                .push(format!("{label}: {} unique states, manifest says {}", report.unique_states, e["unique_states"]));
        }
        let expect = e["expect"].as_object().expect("expect");
        assert_eq!(expect.len(), report.properties.len(), "{label}: every property has an expected verdict");
        for p in &report.properties {
            let want = expect.get(p.name).and_then(|v| v.as_str()).unwrap_or("missing");
            if want != status_name(p.status) {
                deviations.push(format!("{label}: {} is {}, manifest says {want}", p.name, status_name(p.status)));
            }
            if p.status == Status::Violated {
                let trace = p.trace.as_ref().expect("a violated property has a counterexample");
                trace.replay().unwrap_or_else(|err| panic!("{label}: {} trace does not replay: {err}", p.name));
            }
        }
    }
    assert!(deviations.is_empty(), "manifest deviations:\n{}", deviations.join("\n"));
}
