//! The model answers like the real server: every op script in conformance/cases, run against
//! the model, gives the answers a real ZooKeeper 3.8 recorded in conformance/expected (compared
//! as conformance/FORMAT.md says).

use serde_json::Value;
use std::path::Path;

fn load(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn the_model_answers_every_recorded_case_like_the_real_server() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("conformance");
    let mut cases: Vec<_> = std::fs::read_dir(root.join("cases")).unwrap().map(|e| e.unwrap().path()).collect();
    cases.sort();
    assert!(cases.len() >= 10, "the recorded cases are kept in the repo");
    let mut failures = Vec::new();
    for case in &cases {
        let expected = load(&root.join("expected").join(case.file_name().unwrap()));
        let actual = zklab::conformance::run_script(&load(case)).unwrap_or_else(|e| panic!("{}: {e}", case.display()));
        for difference in zklab::conformance::differences(&expected, &actual) {
            failures.push(format!("{}: {difference}", case.file_name().unwrap().to_string_lossy()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_difference_is_reported() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("conformance");
    let case = load(&root.join("cases/14-lock-race.json"));
    let mut expected = load(&root.join("expected/14-lock-race.json"));
    expected["results"][9]["created"] = "/lock/x-0000000003".into();
    let actual = zklab::conformance::run_script(&case).unwrap();
    let found = zklab::conformance::differences(&expected, &actual);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].starts_with("op 9:"), "{found:?}");
}

#[test]
fn every_case_is_listed_in_the_conformance_page() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let page = std::fs::read_to_string(root.join("docs/conformance.md")).unwrap();
    for case in std::fs::read_dir(root.join("conformance/cases")).unwrap() {
        let name = case.unwrap().path().file_stem().unwrap().to_string_lossy().to_string();
        assert!(page.contains(&format!("| {name} |")), "docs/conformance.md has no line for case {name}");
    }
}
