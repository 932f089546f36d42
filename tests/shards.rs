//! A campaign cut into shards, each run as its own job, and merged: the merge finds what one
//! run of the whole campaign finds (the same shortest counterexamples from the same seeds or
//! walks, the same counts), says what is missing while a shard is, and refuses reports that do
//! not belong together.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_zklab");

fn zklab(dir: &Path, args: &[&str]) -> Output {
    Command::new(BIN).args(args).current_dir(dir).output().expect("zklab runs")
}

fn temp_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("zklab-shards-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `campaign` as `--shard I/N` for each shard given, keeping each report as a file.
fn shards(dir: &Path, campaign: &[&str], which: &[&str]) -> Vec<String> {
    which
        .iter()
        .map(|shard| {
            let out = zklab(dir, &[campaign, &["--shard", shard, "--json", "-q"]].concat());
            assert!(matches!(out.status.code(), Some(0 | 1 | 3)), "{}", String::from_utf8_lossy(&out.stderr));
            let file = format!("shard-{}.json", shard.replace('/', "-of-"));
            std::fs::write(dir.join(&file), &out.stdout).unwrap();
            file
        })
        .collect()
}

/// Merges `files`, giving the exit code and the merged report.
fn merge(dir: &Path, files: &[String]) -> (Option<i32>, Value) {
    let args: Vec<&str> = ["merge", "--json"].into_iter().chain(files.iter().map(String::as_str)).collect();
    let out = zklab(dir, &args);
    let report = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out.status.code(), report)
}

/// What a merged report found, apart from which shards it holds.
fn found(report: &Value) -> Value {
    let mut report = report.clone();
    for key in ["shards", "count"] {
        report.as_object_mut().unwrap().remove(key);
    }
    report
}

#[test]
fn a_seed_sweep_in_two_shards_merges_to_what_one_run_finds() {
    let dir = temp_dir("seeds");
    let campaign =
        ["simulate", "--recipe", "blind-retry", "--clients", "3", "--seeds", "24", "--faults", "loss-after-apply=0.1"];
    let (whole_code, whole) = merge(&dir, &shards(&dir, &campaign, &["1/1"]));
    let (code, merged) = merge(&dir, &shards(&dir, &campaign, &["2/2", "1/2"]));
    assert_eq!(whole_code, Some(1), "blind-retry breaks under lost replies: {whole}");
    assert!(!whole["findings"].as_array().unwrap().is_empty());
    assert_eq!((code, found(&merged)), (whole_code, found(&whole)));
    assert_eq!(merged["shards"], serde_json::json!([1, 2]));
    // And both say what the plain sweep says, seed by seed.
    let plain = zklab(&dir, &[&campaign[..], &["--json", "-q"]].concat());
    let runs: Value = serde_json::from_slice(&plain.stdout).unwrap();
    let broke = runs.as_array().unwrap().iter().filter(|r| r["verdict"] == "violated").count();
    assert_eq!(merged["covered"]["broke"].as_u64(), Some(broke as u64));
    assert_eq!(merged["covered"]["units"].as_u64(), Some(24));
    // The kept counterexample is written, and replays.
    let file = merged["findings"][0]["file"].as_str().unwrap();
    let replay = zklab(&dir, &["replay", &format!("zklab-traces/{file}")]);
    assert_eq!(replay.status.code(), Some(0), "{}", String::from_utf8_lossy(&replay.stdout));
}

#[test]
fn a_swarm_in_three_shards_merges_to_what_one_swarm_finds() {
    let dir = temp_dir("swarm");
    let campaign =
        ["check", "--recipe", "blind-retry", "--clients", "2", "--faults", "all", "--swarm", "60", "--seed", "3"];
    let (whole_code, whole) = merge(&dir, &shards(&dir, &campaign, &["1/1"]));
    let (code, merged) = merge(&dir, &shards(&dir, &campaign, &["1/3", "3/3", "2/3"]));
    assert_eq!(whole_code, Some(1), "{whole}");
    assert_eq!(code, whole_code);
    for key in ["findings", "reached", "total", "campaign"] {
        assert_eq!(merged[key], whole[key], "{key}");
    }
    assert_eq!(merged["covered"]["units"], whole["covered"]["units"]);
    assert_eq!(merged["covered"]["steps"], whole["covered"]["steps"], "the same walks visit the same states");
    let distinct = |r: &Value| r["covered"]["distinct_states"].as_u64().unwrap();
    assert!(distinct(&merged) >= distinct(&whole), "the sum of each shard's distinct states bounds the whole's");
}

#[test]
fn a_missing_shard_leaves_the_campaign_unknown_and_reports_that_do_not_belong_together_are_refused() {
    let dir = temp_dir("refused");
    let standard = ["simulate", "--recipe", "standard", "--clients", "3", "--seeds", "6", "--faults", "expire=1"];
    let files = shards(&dir, &standard, &["1/3", "3/3"]);
    let out = zklab(&dir, &["merge", &files[0], &files[1]]);
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stdout).contains("missing shards: 2/3"));
    let all = [files.clone(), shards(&dir, &standard, &["2/3"])].concat();
    assert_eq!(merge(&dir, &all).0, Some(0), "every shard in, nothing broken: passed");

    let other = shards(&dir, &["simulate", "--recipe", "standard", "--clients", "4", "--seeds", "6"], &["2/3"]);
    std::fs::write(dir.join("not-a-report.json"), "[]").unwrap();
    for (bad, says) in [
        (vec![files[0].clone(), other[0].clone()], "another campaign"),
        (vec![files[0].clone(), files[0].clone()], "given twice"),
        (vec!["not-a-report.json".to_string()], "not a shard report"),
        (vec!["no-such.json".to_string()], "cannot read"),
    ] {
        let out = zklab(&dir, &[&["merge"][..], &bad.iter().map(String::as_str).collect::<Vec<_>>()].concat());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {stderr}");
        assert!(stderr.contains(says) && stderr.lines().count() == 1, "{bad:?}: {stderr}");
    }
    for shard in ["0/2", "3/2", "1/0", "a/b", "2", "1/100001"] {
        assert_eq!(zklab(&dir, &[&standard[..], &["--shard", shard]].concat()).status.code(), Some(2), "{shard}");
    }
    assert_eq!(zklab(&dir, &[&standard[..], &["--shard", "1/7"]].concat()).status.code(), Some(2), "7 parts of 6");
    let check = ["check", "--recipe", "standard", "--clients", "2", "--shard", "1/2"];
    assert_eq!(zklab(&dir, &check).status.code(), Some(2), "--shard cuts a swarm's walks only");
}

fn cut_to_one_step(trace: &mut Value) {
    trace["steps"].as_array_mut().unwrap().truncate(1);
    trace["times_us"].as_array_mut().unwrap().truncate(1);
}

/// A report is read as untrusted input: every field that could send a trace outside the trace
/// directory, crash the merge, pass an empty campaign, or report a violation that was never
/// shown is refused with one line and exit 2, and nothing is written.
#[test]
fn merge_trusts_nothing_it_reads() {
    let dir = temp_dir("untrusted");
    let campaign =
        ["simulate", "--recipe", "blind-retry", "--clients", "3", "--seeds", "24", "--faults", "loss-after-apply=0.1"];
    let file = shards(&dir, &campaign, &["1/1"]).remove(0);
    let good: Value = serde_json::from_slice(&std::fs::read(dir.join(&file)).unwrap()).unwrap();
    assert!(!good["findings"].as_array().unwrap().is_empty(), "blind-retry breaks something in 24 seeds: {good}");
    let outside = dir.join("outside.json");
    std::fs::write(&outside, "{\"mine\": true}").unwrap();
    type Edit = (&'static str, fn(&mut Value, &Path), &'static str);
    let edits: &[Edit] = &[
        ("escape", |r, _| r["findings"][0]["file"] = "../outside.json".into(), "not a plain"),
        ("absolute", |r, d| r["findings"][0]["file"] = d.join("outside.json").to_str().unwrap().into(), "not a plain"),
        ("count-zero", |r, _| (r["count"], r["shards"]) = (0.into(), serde_json::json!([0])), "1 to"),
        ("count-zero-empty", |r, _| (r["count"], r["shards"]) = (0.into(), serde_json::json!([])), "1 to"),
        ("no-shards", |r, _| r["shards"] = serde_json::json!([]), "no shard"),
        ("beyond-count", |r, _| r["shards"] = serde_json::json!([7]), "does not exist"),
        ("twice", |r, _| (r["count"], r["shards"]) = (3.into(), serde_json::json!([1, 1])), "twice"),
        ("claims-more", |r, _| (r["count"], r["shards"]) = (3.into(), serde_json::json!([1, 2])), "ran"),
        ("claims-less", |r, _| r["covered"]["units"] = 3.into(), "nothing stopped"),
        ("version", |r, _| r["version"] = "0.0.1".into(), "not this zklab"),
        ("no-version", |r, _| drop(r.as_object_mut().unwrap().remove("version")), "an older zklab"),
        ("relabelled", |r, _| r["findings"][0]["property"] = "zk_exclusion".into(), "filed under"),
        ("cut", |r, _| cut_to_one_step(&mut r["findings"][0]["trace"]), "does not replay"),
        ("format", |r, _| r["findings"][0]["trace"]["format"] = 9.into(), "format"),
    ];
    for (name, edit, mentions) in edits {
        let mut report = good.clone();
        edit(&mut report, &dir);
        let file = format!("{name}.json");
        std::fs::write(dir.join(&file), report.to_string()).unwrap();
        let traces = dir.join(format!("traces-{name}"));
        let out = zklab(&dir, &["merge", "--trace-dir", traces.to_str().unwrap(), &file]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert_eq!(err.lines().count(), 1, "{name}: one line: {err}");
        assert!(err.contains(mentions) && !err.contains("panicked"), "{name}: mentions {mentions:?}: {err}");
        assert!(!traces.exists(), "{name}: nothing written");
    }
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "{\"mine\": true}", "the file outside is untouched");
    let _ = std::fs::remove_dir_all(&dir);
}
