//! The manifest (tests/manifest.json), in the spirit of the tlaplus Examples manifest: every
//! entry's verdicts and exact unique state count must be what checking it gives today, and each
//! counterexample must replay.

use std::path::Path;
use zklab::check::Options;

#[test]
fn every_manifest_entry_has_its_expected_verdicts_and_state_count() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/manifest.json");
    let entries = zklab::manifest::parse(&std::fs::read_to_string(file).unwrap()).unwrap();
    assert!(!entries.is_empty());
    let options = Options { threads: 1, max_memory_mib: Some(4096), ..Options::default() };
    let deviations: Vec<String> = entries
        .iter()
        .flat_map(|e| zklab::manifest::run(e, &options).1.into_iter().map(move |d| format!("{}: {d}", e.label)))
        .collect();
    assert!(deviations.is_empty(), "manifest deviations:\n{}", deviations.join("\n"));
}

/// A manifest of one entry: the standard lock with two clients and no faults, expecting
/// `expect` (JSON).
fn one_entry(expect: &str) -> String {
    format!(
        r#"{{"format": 1, "entries": [{{"recipe": "standard", "clients": 2, "faults": "none", "client": "java",
            "rounds": 1, "first_sequence": 0, "unique_states": 1, "expect": {expect}}}]}}"#
    )
}

#[test]
fn a_malformed_manifest_is_refused_in_one_line() {
    let bad_entries = [
        one_entry(r#"{"belief-exclusion": "holds"}"#),
        one_entry(r#"{"belief_exclusion": "fine"}"#),
        one_entry(r#"{"belief_exclusion": 1}"#),
    ];
    let cases = ["{", r#"{"format": 2, "entries": []}"#, r#"{"format": 1, "entries": [{"recipe": 3}]}"#]
        .into_iter()
        .chain([r#"{"format": 1, "entries": []}"#])
        .chain(bad_entries.iter().map(String::as_str));
    for bad in cases {
        let message = zklab::manifest::parse(bad).err().expect("refused");
        assert!(!message.contains('\n'), "{message}");
    }
    let unknown = zklab::manifest::parse(&bad_entries[0]).err().unwrap();
    assert!(unknown.contains("unknown property `belief-exclusion`"), "{unknown}");
    let empty = zklab::manifest::parse(r#"{"format": 1, "entries": []}"#).err().unwrap();
    assert!(empty.contains("no entries"), "{empty}");
}

#[test]
fn the_manifest_holds_a_run_to_stateright_s_second_opinion_when_asked() {
    let text = one_entry(r#"{"belief_exclusion": "holds"}"#);
    let entry = &zklab::manifest::parse(&text).unwrap()[0];
    let options = Options { cross_check: true, partial_order: false, ..Options::default() };
    let mut report = zklab::check::run(&entry.scenario, &options);
    let cross = report.outcome.cross_check.clone().expect("asked for, and the run is complete");
    assert!(cross.agrees(), "{cross:?}");
    let agreed = zklab::manifest::deviations(entry, &report);
    assert!(!agreed.iter().any(|d| d.contains("cross-check")), "{agreed:?}");
    // The same report, had stateright disagreed or run out of budget.
    let mut disagreeing = cross.clone();
    disagreeing.disagreements.push("zk_exclusion: stateright says violated, the graph pass holds".to_string());
    report.outcome.cross_check = Some(disagreeing);
    let found = zklab::manifest::deviations(entry, &report);
    assert!(found.iter().any(|d| d.starts_with("cross-check: zk_exclusion")), "{found:?}");
    report.outcome.cross_check = Some(zklab::check::cross_check::CrossCheck { complete: false, ..cross });
    let found = zklab::manifest::deviations(entry, &report);
    assert!(found.iter().any(|d| d.contains("did not finish")), "{found:?}");
}

#[test]
fn a_manifest_is_checked_field_by_field() {
    let entry = |extra: &str, rounds: &str| {
        format!(
            r#"{{"format": 1, "entries": [{{"recipe": "standard", "clients": 2, "faults": "none", "client": "java",
                "rounds": {rounds}, "first_sequence": 0, "unique_states": 1, "expect": {{}}{extra}}}]}}"#
        )
    };
    // 255 is how the model spells "unbounded", not a count: as on the command line, refused.
    let unbounded_by_number = zklab::manifest::parse(&entry("", "255")).err().expect("refused");
    assert!(
        unbounded_by_number.contains("`rounds` must be a number from 1 to 254 or `unbounded`"),
        "{unbounded_by_number}"
    );
    let parsed = zklab::manifest::parse(&entry("", r#""unbounded""#)).expect("the word is taken");
    assert_eq!(parsed[0].scenario.config.rounds, zklab_model::UNBOUNDED_ROUNDS);
    assert_eq!(zklab::manifest::parse(&entry("", "3")).unwrap()[0].scenario.config.rounds, 3);
    // A misspelt field is named, never silently ignored; so is one beside `entries`.
    let misspelt = zklab::manifest::parse(&entry(r#", "faults_": "expire""#, "1")).err().expect("refused");
    assert!(misspelt.starts_with("entry 0: unknown field `faults_`"), "{misspelt}");
    let top = zklab::manifest::parse(r#"{"format": 1, "entries": [], "budget": 5}"#).err().expect("refused");
    assert!(top.contains("unknown field `budget`"), "{top}");
    let missing = entry("", "1").replace(r#""first_sequence": 0, "#, "");
    let missing = zklab::manifest::parse(&missing).err().expect("refused");
    assert!(missing.contains("missing field `first_sequence`"), "{missing}");
}
