//! The model answers like the real server: every op script in conformance/cases, run against
//! the model, gives the answers a real ZooKeeper 3.8 recorded (compared as conformance/FORMAT.md
//! says): conformance/expected/NAME.json with the default client, and
//! conformance/expected/{java,kazoo}/NAME.json, recorded with the real Java and kazoo clients, with
//! `--client java` and `--client kazoo`.

use serde_json::Value;
use std::path::{Path, PathBuf};
use zklab_model::ClientBehaviour;

fn load(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("conformance")
}

/// Every recording of `case`: the file and the client behaviour it was recorded with.
fn recordings(case: &Path) -> Vec<(PathBuf, ClientBehaviour)> {
    let name = case.file_name().unwrap();
    [
        (root().join("expected").join(name), zklab::conformance::DEFAULT_CLIENT),
        (root().join("expected/java").join(name), ClientBehaviour::Java),
        (root().join("expected/kazoo").join(name), ClientBehaviour::Kazoo),
    ]
    .into_iter()
    .filter(|(path, _)| path.exists())
    .collect()
}

#[test]
fn the_model_answers_every_recorded_case_like_the_real_server() {
    let mut cases: Vec<_> = std::fs::read_dir(root().join("cases")).unwrap().map(|e| e.unwrap().path()).collect();
    cases.sort();
    assert!(cases.len() >= 10, "the recorded cases are kept in the repo");
    let mut failures = Vec::new();
    let mut per_client = 0;
    for case in &cases {
        let recorded = recordings(case);
        assert!(!recorded.is_empty(), "{} has no recording", case.display());
        for (expected, client) in recorded {
            per_client += usize::from(expected.parent() != Some(&root().join("expected")));
            let actual = zklab::conformance::run_script_as(&load(case), client)
                .unwrap_or_else(|e| panic!("{}: {e}", case.display()));
            for difference in zklab::conformance::differences(&load(&expected), &actual) {
                failures.push(format!("{} ({client:?}): {difference}", case.file_name().unwrap().to_string_lossy()));
            }
        }
    }
    assert!(per_client >= 8, "the disconnect cases are recorded with both libraries");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The libraries really differ over a cut connection, and the flag picks the right one: each
/// library's recording of a watched change during an outage fails the other's behaviour.
#[test]
fn java_and_kazoo_recordings_tell_the_behaviours_apart() {
    let case = root().join("cases/44-outage-missed-change.json");
    let java = load(&root().join("expected/java/44-outage-missed-change.json"));
    let kazoo = load(&root().join("expected/kazoo/44-outage-missed-change.json"));
    let as_java = zklab::conformance::run_script_as(&load(&case), ClientBehaviour::Java).unwrap();
    let as_kazoo = zklab::conformance::run_script_as(&load(&case), ClientBehaviour::Kazoo).unwrap();
    assert!(zklab::conformance::differences(&java, &as_java).is_empty());
    assert!(zklab::conformance::differences(&kazoo, &as_kazoo).is_empty());
    let crossed = zklab::conformance::differences(&java, &as_kazoo);
    assert!(crossed.iter().any(|d| d.starts_with("op 15:")), "kazoo hears no catch-up events: {crossed:?}");
    assert!(crossed.iter().any(|d| d.starts_with("op 16:")), "kazoo re-arms nothing: {crossed:?}");
    assert!(!zklab::conformance::differences(&kazoo, &as_java).is_empty());
}

#[test]
fn a_difference_is_reported() {
    let case = load(&root().join("cases/14-lock-race.json"));
    let mut expected = load(&root().join("expected/14-lock-race.json"));
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

/// The state changes a session hears, in order, from every `events` result of `results`.
fn states_heard(results: &Value, session: &str) -> Vec<String> {
    let results = results["results"].as_array().expect("a results array");
    let heard = results.iter().filter(|r| r["op"] == "events" && r["s"] == session);
    let events = heard.flat_map(|r| r["events"].as_array().cloned().unwrap_or_default());
    events.filter_map(|e| e["state"].as_str().map(str::to_string)).collect()
}

/// A server expires only a session it no longer hears from: both real libraries hand their
/// watchers Disconnected when the connection goes, and learn Expired only after it. The model
/// answers so for each library.
#[test]
fn an_expiry_is_heard_as_disconnected_then_expired_by_both_libraries() {
    let case = load(&root().join("cases/32-expire-drops-watches.json"));
    for (dir, client) in [("java", ClientBehaviour::Java), ("kazoo", ClientBehaviour::Kazoo)] {
        let recorded = load(&root().join(format!("expected/{dir}/32-expire-drops-watches.json")));
        assert_eq!(states_heard(&recorded, "A"), ["Disconnected", "Expired"], "{dir} recorded");
        let modelled = zklab::conformance::run_script_as(&case, client).unwrap();
        assert_eq!(states_heard(&modelled, "A"), ["Disconnected", "Expired"], "the model as {dir}");
    }
}
