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

#[test]
fn a_malformed_manifest_is_refused_in_one_line() {
    for bad in ["{", r#"{"format": 2, "entries": []}"#, r#"{"format": 1, "entries": [{"recipe": 3}]}"#] {
        let message = zklab::manifest::parse(bad).err().expect("refused");
        assert!(!message.contains('\n'), "{message}");
    }
}
