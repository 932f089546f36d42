//! The `zklab` binary as a user meets it: exit codes (0 holds, 1 violated, 2 bad input, 3 budget
//! ran out), one-line errors on bad input, the JSON report, trace files that replay, progress on
//! stderr, and byte-identical traces from repeated runs.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_zklab");

/// The recipes the first release names; the catalogue may hold more.
const RECIPES: &[&str] = &["standard", "naive", "parent-watch", "blind-retry", "wait-on-null"];

/// The trace file `check --recipe wait-on-null --clients 2` writes.
const WAIT_ON_NULL_TRACE: &str = "wait-on-null-n2-eventual_acquire.json";

/// A fresh directory under the system temp dir, unique to a test and this process, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(test: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("zklab-cli-{test}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create temp dir");
        TempDir(dir)
    }

    fn path(&self) -> &Path {
        &self.0
    }

    fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    fn arg(&self) -> &str {
        self.0.to_str().expect("temp dir is UTF-8")
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// What one run of the binary did.
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    what: String,
}

impl Run {
    /// Everything about the run, for assertion messages.
    fn describe(&self) -> String {
        format!(
            "`{}` exited {:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.what, self.code, self.stdout, self.stderr
        )
    }

    fn json(&self) -> Value {
        let text = self.stdout.trim_end();
        assert_eq!(text.lines().count(), 1, "one JSON line on stdout: {}", self.describe());
        serde_json::from_str(text).unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", self.describe()))
    }

    /// Exit code 2, exactly one `error: ...` line on stderr (no panic, no backtrace, no clap
    /// usage block) and nothing on stdout. Returns the line.
    fn assert_bad_input(&self) -> &str {
        self.assert_one_line_error(2)
    }

    fn assert_one_line_error(&self, code: i32) -> &str {
        assert_eq!(self.code, Some(code), "exit code: {}", self.describe());
        assert!(self.stdout.is_empty(), "nothing on stdout: {}", self.describe());
        assert!(self.stderr.ends_with('\n'), "stderr ends its line: {}", self.describe());
        let lines: Vec<&str> = self.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "exactly one line on stderr: {}", self.describe());
        let line = lines[0];
        assert!(line.starts_with("error: ") && line.len() > "error: ".len(), "an error line: {}", self.describe());
        assert!(!line.contains("panicked"), "no panic: {}", self.describe());
        line
    }
}

/// Runs the binary in `cwd` (so a default `zklab-traces/` never lands in the source tree), with
/// backtraces on so that a panic can never pass for a one-line error.
fn zklab_in(cwd: &Path, args: &[&str]) -> Run {
    let Output { status, stdout, stderr } = Command::new(BIN)
        .args(args)
        .current_dir(cwd)
        .env("RUST_BACKTRACE", "1")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {BIN}: {e}"));
    Run {
        code: status.code(),
        stdout: String::from_utf8(stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(stderr).expect("stderr is UTF-8"),
        what: format!("zklab {}", args.join(" ")),
    }
}

fn zklab(tmp: &TempDir, args: &[&str]) -> Run {
    zklab_in(tmp.path(), args)
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

fn property<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["properties"]
        .as_array()
        .expect("properties is an array")
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("property {name} in {report}"))
}

/// Runs the failing wait-on-null check into `dir` and returns the trace it wrote.
fn write_failing_trace(tmp: &TempDir, dir: &Path) -> PathBuf {
    let run = zklab(
        tmp,
        &["check", "--recipe", "wait-on-null", "--clients", "2", "-q", "--trace-dir", dir.to_str().unwrap()],
    );
    assert_eq!(run.code, Some(1), "wait-on-null is caught: {}", run.describe());
    let file = dir.join(WAIT_ON_NULL_TRACE);
    assert!(file.is_file(), "{} was written: {}", file.display(), run.describe());
    file
}

/// Writes a copy of the trace `original` changed by `edit` to `tmp/<name>.json`.
fn tampered(tmp: &TempDir, original: &Path, name: &str, edit: impl FnOnce(&mut Value)) -> PathBuf {
    let mut trace = read_json(original);
    edit(&mut trace);
    let file = tmp.join(&format!("{name}.json"));
    std::fs::write(&file, serde_json::to_string_pretty(&trace).unwrap()).unwrap();
    file
}

fn replay(tmp: &TempDir, file: &Path) -> Run {
    zklab(tmp, &["replay", file.to_str().unwrap()])
}

// ---- bad input: exit 2, one line ----------------------------------------------------------------

#[test]
fn check_rejects_bad_arguments_with_one_line() {
    let tmp = TempDir::new("check_rejects_bad_arguments_with_one_line");
    // (arguments after `check --recipe`, a word the error must mention)
    let cases: &[(&[&str], &str)] = &[
        (&["no-such-recipe"], "no-such-recipe"),
        (&["standard", "--clients", "0"], "--clients"),
        (&["standard", "--clients", "9"], "--clients"),
        (&["standard", "--clients", "999999999999999999999"], "--clients"),
        (&["standard", "--clients", "-1"], "-1"),
        (&["standard", "--faults", "meteor-strike"], "meteor-strike"),
        (&["standard", "--faults", "expire,meteor-strike"], "meteor-strike"),
        (&["standard", "--rounds", "0"], "--rounds"),
        (&["standard", "--rounds", "256"], "--rounds"),
        (&["standard", "--threads", "0"], "--threads"),
        (&["standard", "--threads", "257"], "--threads"),
        (&["standard", "--timeout", "18446744073709551615"], "--timeout"),
        (&["standard", "--timeout", "604801"], "--timeout"),
        (&["standard", "--max-states", "0"], "--max-states"),
        (&["standard", "--max-states", "99999999999999999999999"], "--max-states"),
        (&["standard", "--client", "zookeeper-cli"], "--client"),
        (&["standard,naive", "--clients", "3"], "--recipe"),
        (&["standard,naive,naive", "--clients", "2"], "--recipe"),
        (&["standard,", "--clients", "2"], "unknown recipe"),
        (&["", "--clients", "2"], "unknown recipe"),
        (&["standard", "--no-such-flag"], "--no-such-flag"),
        // A fault list that says nothing, or says one thing twice.
        (&["standard", "--faults", ""], "empty entry"),
        (&["standard", "--faults", "expire,,disconnect"], "empty entry"),
        (&["standard", "--faults", "expire,expire"], "named twice"),
        (&["standard", "--faults", "expire,expire=2"], "named twice"),
        (&["standard", "--faults", "none,expire"], "stands alone"),
        (&["standard", "--faults", "all,expire=2"], "stands alone"),
        // A swarm of nothing, or one asked to do what only the exhaustive search does.
        (&["standard", "--swarm", "0"], "--swarm"),
        (&["standard", "--swarm", "10", "--walk-depth", "0"], "--walk-depth"),
        (&["standard", "--swarm", "10", "--symmetry"], "--swarm"),
        (&["standard", "--walk-depth", "10"], "--swarm"),
        // A reply-length limit of nothing, of more than an int, for a library without one, or
        // with a reduction that changes names' lengths.
        (&["standard", "--jute-maxbuffer", "0"], "--jute-maxbuffer"),
        (&["standard", "--jute-maxbuffer", "4294967296"], "--jute-maxbuffer"),
        (&["standard", "--jute-maxbuffer", "100", "--client", "kazoo"], "kazoo"),
        (&["standard", "--jute-maxbuffer", "100", "--symmetry"], "--symmetry"),
    ];
    for (rest, mentions) in cases {
        let mut args = vec!["check", "-q", "--recipe"];
        args.extend_from_slice(rest);
        let run = zklab(&tmp, &args);
        let line = run.assert_bad_input();
        assert!(line.contains(mentions), "the error names {mentions:?}: {}", run.describe());
    }
    assert!(!tmp.join("zklab-traces").exists(), "bad input writes no traces");
}

#[test]
fn an_unwritable_trace_dir_is_refused_before_the_run() {
    let tmp = TempDir::new("an_unwritable_trace_dir_is_refused_before_the_run");
    let file = tmp.join("a-file");
    std::fs::write(&file, "").unwrap();
    let below_a_file = file.join("traces");
    // A correct lock on a world far too big for one second: found late, the run would time
    // out (exit 3) with no trace to write; found first, it is bad input.
    let check = ["check", "--recipe", "standard", "--clients", "5", "--faults", "all", "--timeout", "1", "-q"];
    for command in [&check[..], &["suite"]] {
        let run = zklab(&tmp, &[command, &["--trace-dir", below_a_file.to_str().unwrap()]].concat());
        let line = run.assert_bad_input();
        assert!(line.contains("not a directory"), "{}", run.describe());
    }
    let run = zklab(
        &tmp,
        &["simulate", "--recipe", "standard", "--clients", "3", "--trace-dir", below_a_file.to_str().unwrap()],
    );
    run.assert_bad_input();
    // A directory that does not exist yet is fine: it is made when a trace is written.
    let fresh = tmp.join("new").join("traces");
    let run = zklab(
        &tmp,
        &["check", "--recipe", "wait-on-null", "--clients", "2", "-q", "--trace-dir", fresh.to_str().unwrap()],
    );
    assert_eq!(run.code, Some(1), "{}", run.describe());
    assert!(fresh.join(WAIT_ON_NULL_TRACE).is_file());
    assert!(std::fs::read_dir(tmp.path()).unwrap().all(|e| !e
        .unwrap()
        .file_name()
        .to_string_lossy()
        .contains("probe")));
}

#[test]
fn a_manifest_run_answers_in_json_when_asked() {
    let tmp = TempDir::new("a_manifest_run_answers_in_json_when_asked");
    let manifest = tmp.join("manifest.json");
    // The standard lock with two clients has more than one state, and more properties.
    let entry = r#"{"recipe": "standard", "clients": 2, "faults": "none", "client": "java", "rounds": 1,
        "first_sequence": 0, "unique_states": 1, "expect": {"belief_exclusion": "holds"}}"#;
    std::fs::write(&manifest, format!(r#"{{"format": 1, "entries": [{entry}]}}"#)).unwrap();
    let run = zklab(&tmp, &["check", "--manifest", manifest.to_str().unwrap(), "--json", "-q"]);
    assert_eq!(run.code, Some(1), "{}", run.describe());
    let report = run.json();
    assert_eq!((report["as_expected"].as_u64(), report["total"].as_u64()), (Some(0), Some(1)), "{report}");
    let row = &report["entries"][0];
    assert!(row["unique_states"].as_u64() > Some(1), "{row}");
    let deviations = row["deviations"].as_array().unwrap();
    assert!(deviations[0].as_str().unwrap().contains("unique states, manifest says 1"), "{row}");
    assert!(deviations.iter().any(|d| d.as_str().unwrap().contains("manifest lists 1")), "{row}");
}

#[test]
fn a_manifest_refuses_the_flags_it_would_ignore() {
    let tmp = TempDir::new("a_manifest_refuses_the_flags_it_would_ignore");
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/manifest.json");
    let world_flags: [&[&str]; 7] = [
        &["--swarm", "10"],
        &["--symmetry"],
        &["--clients", "5"],
        &["--faults", "expire"],
        &["--html"],
        &["--trace-dir", "elsewhere"],
        &["--properties", "no_herd"],
    ];
    for flag in world_flags {
        let run = zklab(&tmp, &[&["check", "--manifest", manifest][..], flag].concat());
        assert_eq!(run.code, Some(2), "{}", run.describe());
        assert!(run.stderr.contains("cannot be used with") && run.stderr.contains(flag[0]), "{}", run.describe());
    }
}

#[test]
fn a_budget_that_cuts_a_manifest_short_exits_3_and_names_itself() {
    let tmp = TempDir::new("a_budget_that_cuts_a_manifest_short_exits_3_and_names_itself");
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/manifest.json");
    let run = zklab(&tmp, &["check", "--manifest", manifest, "--max-states", "100", "-q"]);
    assert_eq!(run.code, Some(3), "{}", run.describe());
    assert!(run.stdout.contains("unknown (BOUNDED: --max-states ran out)"), "{}", run.describe());
    assert!(
        !run.stdout.contains("unique states, manifest says"),
        "a cut run has no count to compare: {}",
        run.describe()
    );
}

#[test]
fn out_of_range_clients_name_the_limit() {
    let tmp = TempDir::new("out_of_range_clients_name_the_limit");
    for clients in ["0", "9"] {
        let run = zklab(&tmp, &["check", "--recipe", "standard", "--clients", clients, "-q"]);
        let line = run.assert_bad_input();
        assert!(line.contains("between 1 and 8"), "{}", run.describe());
    }
}

#[test]
fn unknown_subcommand_exits_2_with_one_line() {
    let tmp = TempDir::new("unknown_subcommand_exits_2_with_one_line");
    let run = zklab(&tmp, &["frobnicate"]);
    let line = run.assert_bad_input();
    assert!(line.contains("frobnicate"), "{}", run.describe());
}

#[test]
fn replay_of_a_missing_file_exits_2() {
    let tmp = TempDir::new("replay_of_a_missing_file_exits_2");
    let missing = tmp.join("no-such-trace.json");
    let run = replay(&tmp, &missing);
    let line = run.assert_bad_input();
    assert!(line.contains("no-such-trace.json"), "names the file: {}", run.describe());
}

#[test]
fn replay_of_a_directory_exits_2() {
    let tmp = TempDir::new("replay_of_a_directory_exits_2");
    replay(&tmp, tmp.path()).assert_bad_input();
}

/// Each of `files` (name, contents) is refused by `replay` as not a zklab trace.
fn assert_replay_refuses(test: &str, files: &[(&str, &str)]) {
    let tmp = TempDir::new(test);
    for (name, text) in files {
        let file = tmp.join(&format!("{name}.json"));
        std::fs::write(&file, text).unwrap();
        let run = replay(&tmp, &file);
        let line = run.assert_bad_input();
        assert!(line.contains("not a zklab trace"), "{}", run.describe());
    }
}

#[test]
fn replay_of_a_file_that_is_not_json_exits_2() {
    assert_replay_refuses(
        "replay_of_a_file_that_is_not_json_exits_2",
        &[("text", "this is not json\nat all\n"), ("empty", ""), ("cut", "{\"format\": 1, \"scen")],
    );
}

#[test]
fn replay_of_json_that_is_not_a_trace_exits_2() {
    assert_replay_refuses(
        "replay_of_json_that_is_not_a_trace_exits_2",
        &[("object", "{}"), ("array", "[1, 2, 3]"), ("number", "42"), ("null", "null")],
    );
}

#[test]
fn replay_of_an_unsupported_format_exits_2() {
    let tmp = TempDir::new("replay_of_an_unsupported_format_exits_2");
    let original = write_failing_trace(&tmp, &tmp.join("traces"));
    let file = tampered(&tmp, &original, "format99", |t| t["format"] = 99.into());
    let run = replay(&tmp, &file);
    let line = run.assert_bad_input();
    assert!(line.contains("format 99"), "{}", run.describe());
    // --show must not render a trace it refuses to read.
    let run = zklab(&tmp, &["replay", "--show", file.to_str().unwrap()]);
    run.assert_bad_input();
}

#[test]
fn replay_of_a_trace_with_unknown_fields_exits_2() {
    let tmp = TempDir::new("replay_of_a_trace_with_unknown_fields_exits_2");
    let original = write_failing_trace(&tmp, &tmp.join("traces"));
    let file = tampered(&tmp, &original, "extra", |t| t["comment"] = "hand edited".into());
    let run = replay(&tmp, &file);
    let line = run.assert_bad_input();
    assert!(line.contains("comment"), "{}", run.describe());
}

#[test]
fn replay_of_a_trace_with_an_unknown_recipe_exits_2() {
    let tmp = TempDir::new("replay_of_a_trace_with_an_unknown_recipe_exits_2");
    let original = write_failing_trace(&tmp, &tmp.join("traces"));
    let file = tampered(&tmp, &original, "recipe", |t| t["scenario"]["recipes"][1] = "no-such-recipe".into());
    let run = replay(&tmp, &file);
    let line = run.assert_bad_input();
    assert!(line.contains("no-such-recipe"), "{}", run.describe());
}

#[test]
fn replay_of_a_trace_with_a_bad_client_count_exits_2() {
    let tmp = TempDir::new("replay_of_a_trace_with_a_bad_client_count_exits_2");
    let original = write_failing_trace(&tmp, &tmp.join("traces"));
    for (name, count) in [("none", 0), ("nine", 9)] {
        let file = tampered(&tmp, &original, name, |t| t["scenario"]["recipes"] = vec!["standard"; count].into());
        replay(&tmp, &file).assert_bad_input();
    }
}

#[test]
fn replay_of_a_trace_with_zero_rounds_exits_2() {
    let tmp = TempDir::new("replay_of_a_trace_with_zero_rounds_exits_2");
    let original = write_failing_trace(&tmp, &tmp.join("traces"));
    let file = tampered(&tmp, &original, "rounds0", |t| t["scenario"]["config"]["rounds"] = 0.into());
    replay(&tmp, &file).assert_bad_input();
}

#[test]
fn replay_of_a_trace_with_an_invalid_lock_path_exits_2() {
    let tmp = TempDir::new("replay_of_a_trace_with_an_invalid_lock_path_exits_2");
    let original = write_failing_trace(&tmp, &tmp.join("traces"));
    let bad = ["lock", "/a/b", "/x/", "", "/", "//", "/.", "/..", "/lo\u{1}ck", "/lock/"];
    for (i, lock) in bad.iter().enumerate() {
        let file =
            tampered(&tmp, &original, &format!("lock{i}"), |t| t["scenario"]["config"]["lock_path"] = (*lock).into());
        for show in [false, true] {
            let mut args = vec!["replay"];
            if show {
                args.push("--show");
            }
            args.push(file.to_str().unwrap());
            let run = zklab(&tmp, &args);
            let line = run.assert_bad_input();
            assert!(line.contains("lock path"), "lock_path {lock:?}: {}", run.describe());
        }
    }
}

#[test]
fn replay_of_a_trace_with_another_top_level_lock_path_still_replays() {
    // The lock path is part of the scenario: a valid one that is not /lock must work end to end.
    let tmp = TempDir::new("replay_of_a_trace_with_another_top_level_lock_path_still_replays");
    let original = write_failing_trace(&tmp, &tmp.join("traces"));
    let file = tampered(&tmp, &original, "mutex", |t| t["scenario"]["config"]["lock_path"] = "/mutex".into());
    let run = zklab(&tmp, &["replay", "--show", file.to_str().unwrap()]);
    assert_eq!(run.code, Some(0), "{}", run.describe());
    assert!(run.stdout.contains("/mutex/"), "nodes live under /mutex: {}", run.describe());
    assert!(!run.stdout.contains("/lock/"), "nothing under /lock: {}", run.describe());
}

// ---- recipes ------------------------------------------------------------------------------------

#[test]
fn recipes_lists_every_recipe_and_fault() {
    let tmp = TempDir::new("recipes_lists_every_recipe_and_fault");
    let run = zklab(&tmp, &["recipes"]);
    assert_eq!(run.code, Some(0), "{}", run.describe());
    assert!(run.stderr.is_empty(), "{}", run.describe());
    let lines: Vec<&str> = run.stdout.lines().collect();
    let recipes_at = lines.iter().position(|l| *l == "recipes:").expect("a recipes: section");
    let faults_at = lines.iter().position(|l| *l == "faults:").expect("a faults: section");
    assert!(recipes_at < faults_at, "{}", run.describe());
    let listed_recipes: Vec<&str> =
        lines[recipes_at + 1..faults_at].iter().filter_map(|l| l.split_whitespace().next()).collect();
    let listed_faults: Vec<&str> = lines[faults_at + 1..]
        .iter()
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .collect();

    for name in RECIPES {
        assert!(listed_recipes.contains(name), "recipe {name} listed: {}", run.describe());
    }
    let catalogue: Vec<&str> = zklab::recipes::CATALOGUE.iter().map(|e| e.name).collect();
    assert_eq!(listed_recipes, catalogue, "the listing is the catalogue, in order");

    let mut faults: Vec<&str> = zklab::model::FaultKind::ALL.iter().map(|k| k.name()).collect();
    for name in ["loss-before-apply", "loss-after-apply", "disconnect", "expire", "crash", "pause"] {
        assert!(faults.contains(&name), "fault {name} exists in the model");
    }
    faults.push("all");
    assert_eq!(listed_faults, faults, "every fault, then `all`: {}", run.describe());

    // Each flawed recipe says what it breaks.
    for entry in zklab::recipes::CATALOGUE.iter().filter(|e| e.flaw.is_some()) {
        let line =
            lines[recipes_at + 1..faults_at].iter().find(|l| l.split_whitespace().next() == Some(entry.name)).unwrap();
        for broken in entry.flaw.as_ref().unwrap().breaks {
            assert!(line.contains(broken.name()), "{} says it breaks {broken}: {line}", entry.name);
        }
    }
}

#[test]
fn every_listed_recipe_and_fault_is_accepted_by_check() {
    let tmp = TempDir::new("every_listed_recipe_and_fault_is_accepted_by_check");
    for name in RECIPES {
        let run = zklab(&tmp, &["check", "--recipe", name, "--clients", "1", "-q", "--json", "--trace-dir", tmp.arg()]);
        assert!(matches!(run.code, Some(0 | 1)), "{}", run.describe());
        assert_eq!(run.json()["recipe"], *name, "{}", run.describe());
    }
    for fault in zklab::model::FaultKind::ALL {
        let run = zklab(
            &tmp,
            &[
                "check",
                "--recipe",
                "standard",
                "--clients",
                "1",
                "--faults",
                fault.name(),
                "-q",
                "--json",
                "--trace-dir",
                tmp.arg(),
            ],
        );
        assert!(matches!(run.code, Some(0 | 1)), "{}", run.describe());
        assert_eq!(run.json()["faults"], serde_json::json!([fault.name()]), "{}", run.describe());
    }
}

// ---- check: a proof ---------------------------------------------------------------------------

#[test]
fn check_standard_proves_every_property_as_json() {
    let tmp = TempDir::new("check_standard_proves_every_property_as_json");
    let run = zklab(&tmp, &["check", "--recipe", "standard", "--clients", "2", "--json", "-q"]);
    assert_eq!(run.code, Some(0), "{}", run.describe());
    assert!(run.stderr.is_empty(), "quiet: {}", run.describe());
    let report = run.json();
    assert!(report.is_object(), "{report}");
    assert_eq!(report["recipe"], "standard");
    assert_eq!(report["clients"], 2);
    assert_eq!(report["faults"], serde_json::json!([]));
    assert_eq!(report["bounded"], false);
    let unique = report["unique_states"].as_u64().expect("unique_states is a number");
    let total = report["total_states"].as_u64().expect("total_states is a number");
    assert!(unique > 0, "{report}");
    assert!(total >= unique, "{report}");
    assert!(report["elapsed_ms"].is_u64(), "{report}");
    // Peak memory over stored states: a tiny world stores few states, so each costs much.
    let peak_kib = report["peak_rss_kib"].as_u64().expect("peak memory on Linux");
    assert_eq!(report["bytes_per_state"].as_u64(), Some(peak_kib * 1024 / unique), "{report}");

    let properties = report["properties"].as_array().expect("properties");
    for p in properties {
        assert!(p["name"].is_string() && p["kind"].is_string(), "{p}");
        assert_eq!(p["status"], "holds", "{p}");
        assert!(p.get("trace_file").is_none(), "no counterexample, no trace file: {p}");
    }
    for name in [
        "belief_exclusion",
        "fenced_exclusion",
        "zk_exclusion",
        "no_orphans",
        "eventual_acquire",
        "reached:handoff",
        "reached:predecessor-gone",
    ] {
        property(&report, name);
    }
    assert_eq!(property(&report, "belief_exclusion")["kind"], "safety");
    assert_eq!(property(&report, "eventual_acquire")["kind"], "liveness");
    assert_eq!(property(&report, "reached:handoff")["kind"], "reached");
    assert!(!tmp.join("zklab-traces").exists(), "a proof writes no traces");
}

#[test]
fn check_text_report_lists_every_property() {
    let tmp = TempDir::new("check_text_report_lists_every_property");
    let run = zklab(&tmp, &["check", "--recipe", "standard", "--clients", "2", "-q"]);
    assert_eq!(run.code, Some(0), "{}", run.describe());
    assert!(run.stderr.is_empty(), "{}", run.describe());
    assert!(run.stdout.starts_with("standard x2 "), "{}", run.describe());
    for name in ["belief_exclusion", "fenced_exclusion", "zk_exclusion", "no_orphans", "eventual_acquire"] {
        assert!(
            run.stdout.lines().any(|l| l.split_whitespace().collect::<Vec<_>>() == [name, "holds"]),
            "{name} holds: {}",
            run.describe()
        );
    }
}

// ---- check: a counterexample, replayed ------------------------------------------------------------

#[test]
fn check_stops_at_the_first_violation_with_the_counterexample_a_complete_run_gives() {
    let tmp = TempDir::new("check_stops_at_the_first_violation");
    let run = |extra: &[&str], dir: &str| {
        let dir = tmp.join(dir);
        let args = ["check", "--recipe", "naive-blind-delete", "--clients", "3", "--faults", "loss-after-apply"];
        let run = zklab(&tmp, &[&args[..], extra, &["--json", "-q", "--trace-dir", dir.to_str().unwrap()]].concat());
        assert_eq!(run.code, Some(1), "{}", run.describe());
        run.json()
    };
    let stopped = run(&[], "stopped");
    let complete = run(&["--continue"], "complete");
    assert_eq!(stopped["stopped_at_violation"], true, "{stopped}");
    assert_eq!(complete["stopped_at_violation"], false, "{complete}");
    assert!(stopped["unique_states"].as_u64() < complete["unique_states"].as_u64(), "it stopped early");
    // What the stopped run decided, it decided as the complete run did; the rest is unknown.
    let mut violated = 0;
    for p in stopped["properties"].as_array().unwrap() {
        let full = property(&complete, p["name"].as_str().unwrap());
        match p["status"].as_str().unwrap() {
            "unknown" => assert_ne!(full["status"], "unknown", "{p}"),
            "violated" => {
                violated += 1;
                assert_eq!(full["status"], "violated", "{p}");
                let steps = |r: &Value| read_json(Path::new(r["trace_file"].as_str().unwrap()))["steps"].clone();
                assert_eq!(steps(p), steps(full), "the same shortest counterexample: {p}");
            }
            status => assert_eq!(full["status"], status, "{p}"),
        }
    }
    assert!(violated >= 1, "{stopped}");
    assert!(stopped["properties"].as_array().unwrap().iter().any(|p| p["status"] == "unknown"), "{stopped}");
    // The text says so, and how to judge everything.
    let dir = tmp.join("text");
    let wait_on_null = |extra: &[&str]| {
        let args = ["check", "--recipe", "wait-on-null", "--clients", "2", "-q", "--trace-dir", dir.to_str().unwrap()];
        zklab(&tmp, &[&args[..], extra].concat())
    };
    let text = wait_on_null(&[]);
    assert_eq!(text.code, Some(1), "{}", text.describe());
    assert!(text.stdout.contains("stopped at the first violation"), "{}", text.describe());
    assert!(text.stdout.contains("--continue"), "{}", text.describe());
    // stateright's second opinion needs the whole graph.
    let crossed = wait_on_null(&["--cross-check", "--json"]);
    assert_eq!(crossed.json()["stopped_at_violation"], false, "{}", crossed.describe());
    assert!(crossed.json()["cross_check"].is_object(), "{}", crossed.describe());
    // A recipe that holds is explored to the end.
    let proven = zklab(&tmp, &["check", "--recipe", "standard", "--clients", "2", "--json", "-q"]);
    assert_eq!(proven.code, Some(0), "{}", proven.describe());
    assert_eq!(proven.json()["stopped_at_violation"], false);
}

#[test]
fn wait_on_null_violation_writes_a_trace_that_replays() {
    let tmp = TempDir::new("wait_on_null_violation_writes_a_trace_that_replays");
    let dir = tmp.join("traces");
    let run = zklab(
        &tmp,
        &[
            "check",
            "--recipe",
            "wait-on-null",
            "--clients",
            "2",
            "--continue",
            "--json",
            "-q",
            "--trace-dir",
            dir.to_str().unwrap(),
        ],
    );
    assert_eq!(run.code, Some(1), "{}", run.describe());
    assert!(run.stderr.is_empty(), "{}", run.describe());
    let report = run.json();
    let live = property(&report, "eventual_acquire");
    assert_eq!(live["status"], "violated", "{report}");
    let file = PathBuf::from(live["trace_file"].as_str().expect("a trace_file"));
    assert!(file.is_file(), "{} exists", file.display());
    assert_eq!(file, dir.join(WAIT_ON_NULL_TRACE));
    for p in report["properties"].as_array().unwrap() {
        if p["name"] != "eventual_acquire" {
            assert_eq!(p["status"], "holds", "only the liveness flaw: {p}");
            assert!(p.get("trace_file").is_none(), "{p}");
        }
    }
    let entries: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert_eq!(entries.len(), 1, "one trace per violated property");

    let trace = read_json(&file);
    assert_eq!(trace["format"], 1);
    assert_eq!(trace["verdict"]["property"], "eventual_acquire");
    assert_eq!(trace["scenario"]["recipes"], serde_json::json!(["wait-on-null", "wait-on-null"]));
    let steps = trace["steps"].as_array().expect("steps").len();
    assert!(steps > 0);

    let run = replay(&tmp, &file);
    assert_eq!(run.code, Some(0), "{}", run.describe());
    assert!(run.stderr.is_empty(), "{}", run.describe());
    assert!(run.stdout.contains("eventual_acquire"), "{}", run.describe());
    assert!(run.stdout.contains(&format!("{steps} steps")), "{}", run.describe());

    let run = zklab(&tmp, &["replay", "--show", file.to_str().unwrap()]);
    assert_eq!(run.code, Some(0), "{}", run.describe());
    assert!(run.stderr.is_empty(), "{}", run.describe());
    let lines: Vec<&str> = run.stdout.lines().collect();
    let header = lines.first().expect("a header line");
    let columns: Vec<&str> = header.split(" | ").map(str::trim).collect();
    assert_eq!(columns.len(), 3, "step and one column per client: {header}");
    assert_eq!(columns[0], "step", "{header}");
    assert!(columns[1].starts_with("c0 (wait-on-null"), "{header}");
    assert!(columns[2].starts_with("c1 (wait-on-null"), "{header}");
    let last_step = lines.iter().filter(|l| l.trim_start().starts_with(&format!("{steps} "))).count();
    assert_eq!(last_step, 1, "a row numbered {steps} for the last step: {}", run.describe());
    let verdict = lines.iter().find(|l| l.starts_with("=> ")).expect("a `=>` line");
    assert!(verdict.starts_with("=> eventual_acquire violated: "), "{verdict}");
    assert!(verdict.ends_with(trace["summary"].as_str().unwrap()), "{verdict}");
    assert!(run.stdout.contains("eventual_acquire"), "{}", run.describe());
}

#[test]
fn every_kept_trace_replays_through_the_cli() {
    let tmp = TempDir::new("every_kept_trace_replays_through_the_cli");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("traces");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).expect("traces/ exists") {
        let file = entry.unwrap().path();
        if file.extension().is_none_or(|e| e != "json") {
            continue;
        }
        seen += 1;
        let property = read_json(&file)["verdict"]["property"].as_str().unwrap().to_string();
        let run = replay(&tmp, &file);
        assert_eq!(run.code, Some(0), "{}", run.describe());
        assert!(run.stdout.contains(&format!("`{property}`")), "{}", run.describe());
    }
    assert!(seen > 0, "traces/ holds traces");
}

// ---- tampered traces: exit 1, one line ----------------------------------------------------------

#[test]
fn replay_of_a_tampered_trace_fails_with_one_line() {
    let tmp = TempDir::new("replay_of_a_tampered_trace_fails_with_one_line");
    let original = write_failing_trace(&tmp, &tmp.join("traces"));
    /// (file name, how the trace is tampered with, a word the error must contain)
    type Edit = (&'static str, fn(&mut Value), &'static str);
    let edits: [Edit; 10] = [
        ("reached", |t| t["verdict"]["property"] = "reached:handoff".into(), "reached:handoff"),
        ("drop-last-step", |t| drop(t["steps"].as_array_mut().unwrap().pop()), "does not reproduce"),
        ("no-steps", |t| t["steps"] = serde_json::json!([]), "does not reproduce"),
        ("belief", |t| t["verdict"]["property"] = "belief_exclusion".into(), "belief_exclusion"),
        ("no-orphans", |t| t["verdict"]["property"] = "no_orphans".into(), "no_orphans"),
        ("cycle-outside", |t| t["verdict"]["cycle_start"] = 99.into(), "cycle"),
        ("cycle-inside", |t| t["verdict"]["cycle_start"] = 3.into(), "cycle"),
        ("swap-first-steps", |t| t["steps"].as_array_mut().unwrap().swap(0, 1), "step 0"),
        ("absent-client", |t| t["steps"][0] = serde_json::json!({"acquire": 7}), "step 0"),
        ("summary", |t| t["summary"] = "c0 and c1 both believe they hold the lock".into(), "summary says"),
    ];
    for (name, edit, mentions) in edits {
        let file = tampered(&tmp, &original, name, edit);
        let run = replay(&tmp, &file);
        let line = run.assert_one_line_error(1);
        assert!(line.contains(mentions), "{name}: the error mentions {mentions:?}: {}", run.describe());
        assert!(line.contains(file.to_str().unwrap()), "{name}: the error names the file: {}", run.describe());
    }
    // A property no zklab knows is not a trace at all: bad input.
    let file = tampered(&tmp, &original, "unknown-property", |t| t["verdict"]["property"] = "world_peace".into());
    let run = replay(&tmp, &file);
    assert!(run.assert_bad_input().contains("unknown property `world_peace`"), "{}", run.describe());
}

/// A run of the standard lock cut off while c1 waits behind c0's hold: c0 can still release,
/// so this is no deadlock, whether or not the trace says it was stalled.
fn a_correct_run_cut_short(tmp: &TempDir, original: &Path, stalled: bool) -> PathBuf {
    tampered(tmp, original, if stalled { "cut-stalled" } else { "cut" }, |t| {
        t["scenario"]["recipes"] = serde_json::json!(["standard", "standard"]);
        t["steps"] =
            serde_json::json!([{"acquire": 0}, {"receive": 0}, {"receive": 0}, {"acquire": 1}, {"receive": 1}]);
        t["summary"] = "c1 waits and nothing but a fault can happen".into();
        if stalled {
            t["verdict"]["stalled"] = true.into();
        }
    })
}

#[test]
fn a_run_cut_short_while_someone_waits_is_never_a_liveness_violation() {
    let tmp = TempDir::new("a_run_cut_short_while_someone_waits_is_never_a_liveness_violation");
    let original = write_failing_trace(&tmp, &tmp.join("traces"));
    let cut = replay(&tmp, &a_correct_run_cut_short(&tmp, &original, false));
    assert!(cut.assert_one_line_error(1).contains("not a deadlock"), "{}", cut.describe());
    // A trace an older zklab marked stalled is refused as such, before its steps are taken.
    let stalled = replay(&tmp, &a_correct_run_cut_short(&tmp, &original, true));
    assert!(stalled.assert_bad_input().contains("marked stalled"), "{}", stalled.describe());
}

#[test]
fn a_trace_that_does_not_replay_is_refused_before_any_real_server_starts() {
    let tmp = TempDir::new("a_trace_that_does_not_replay_is_refused_before_any_real_server_starts");
    let original = write_failing_trace(&tmp, &tmp.join("traces"));
    let cut = a_correct_run_cut_short(&tmp, &original, false);
    let tampered = tampered(&tmp, &original, "belief", |t| t["verdict"]["property"] = "belief_exclusion".into());
    for (file, mentions) in [(&cut, "not a deadlock"), (&tampered, "belief_exclusion")] {
        // A server address nothing listens on: had the command got that far, it would say so.
        let run = zklab(&tmp, &["real", "--server", "127.0.0.1:9", "--reproduce", file.to_str().unwrap()]);
        let line = run.assert_bad_input();
        assert!(line.contains("does not replay") && line.contains(mentions), "{}", run.describe());
    }
}

/// A trace of a recipe another program registered names that program, and the installed
/// `zklab`, which does not know the recipe, says where the trace replays.
#[test]
fn a_trace_of_a_registered_recipe_says_which_program_replays_it() {
    let tmp = TempDir::new("a_trace_of_a_registered_recipe_says_which_program_replays_it");
    let original = write_failing_trace(&tmp, &tmp.join("traces"));
    assert!(read_json(&original).get("program").is_none(), "the catalogue's traces name no program");
    let theirs = tampered(&tmp, &original, "registered", |t| {
        t["scenario"]["recipes"] = serde_json::json!(["my-lock", "my-lock"]);
        t["program"] = "my_locks".into();
    });
    let run = replay(&tmp, &theirs);
    let line = run.assert_bad_input();
    assert!(line.contains("unknown recipe `my-lock`"), "{}", run.describe());
    assert!(line.contains(&format!("`my_locks replay {}`", theirs.display())), "{}", run.describe());
}

#[test]
fn a_check_never_replaces_a_file_of_the_users_named_like_its_trace_or_page() {
    let tmp = TempDir::new("a_check_never_replaces_a_file_of_the_users_named_like_its_trace_or_page");
    let dir = tmp.join("traces");
    std::fs::create_dir_all(&dir).unwrap();
    for mine in [WAIT_ON_NULL_TRACE.to_string(), WAIT_ON_NULL_TRACE.replace(".json", ".html")] {
        std::fs::write(dir.join(&mine), "my notes").unwrap();
        let args = [
            "check",
            "--recipe",
            "wait-on-null",
            "--clients",
            "2",
            "-q",
            "--html",
            "--trace-dir",
            dir.to_str().unwrap(),
        ];
        let run = zklab(&tmp, &args);
        assert!(run.assert_bad_input().contains("exists and is not"), "{}", run.describe());
        assert_eq!(std::fs::read_to_string(dir.join(&mine)).unwrap(), "my notes");
        std::fs::remove_file(dir.join(&mine)).unwrap();
    }
    // Its own trace and page, from a run before, are replaced.
    let args =
        ["check", "--recipe", "wait-on-null", "--clients", "2", "-q", "--html", "--trace-dir", dir.to_str().unwrap()];
    assert_eq!(zklab(&tmp, &args).code, Some(1));
    assert_eq!(zklab(&tmp, &args).code, Some(1));
}

#[test]
fn step_times_that_go_backwards_or_past_a_day_are_refused() {
    let tmp = TempDir::new("step_times_that_go_backwards_or_past_a_day_are_refused");
    let original = write_failing_trace(&tmp, &tmp.join("traces"));
    let steps = read_json(&original)["steps"].as_array().unwrap().len() as u64;
    let times = |edit: fn(&mut Vec<u64>)| {
        let mut times: Vec<u64> = (0..steps).map(|i| i * 1000).collect();
        edit(&mut times);
        serde_json::json!(times)
    };
    let backwards = times(|t| t[2] = 500);
    let file = tampered(&tmp, &original, "backwards", |t| t["times_us"] = backwards);
    let run = replay(&tmp, &file);
    assert!(
        run.assert_bad_input().contains("step 2's time (500 µs) is before the step ahead of it"),
        "{}",
        run.describe()
    );
    let forever = times(|t| *t.last_mut().unwrap() = u64::MAX);
    let file = tampered(&tmp, &original, "forever", |t| t["times_us"] = forever);
    for html in [false, true] {
        let args = if html {
            vec!["replay", "--html", file.to_str().unwrap(), "-o", "t.html"]
        } else {
            vec!["replay", file.to_str().unwrap()]
        };
        let run = zklab(&tmp, &args);
        assert!(run.assert_bad_input().contains("past a day of virtual time"), "{}", run.describe());
    }
    let fine = times(|_| {});
    let file = tampered(&tmp, &original, "fine", |t| t["times_us"] = fine);
    assert_eq!(replay(&tmp, &file).code, Some(0), "times that move forward replay");
}

#[test]
fn replay_show_of_a_tampered_trace_still_fails() {
    let tmp = TempDir::new("replay_show_of_a_tampered_trace_still_fails");
    let original = write_failing_trace(&tmp, &tmp.join("traces"));
    let file = tampered(&tmp, &original, "belief", |t| t["verdict"]["property"] = "belief_exclusion".into());
    let run = zklab(&tmp, &["replay", "--show", file.to_str().unwrap()]);
    assert_eq!(run.code, Some(1), "{}", run.describe());
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.describe());
    assert!(run.stderr.starts_with("error: ") && run.stderr.contains("belief_exclusion"), "{}", run.describe());

    // A step the world cannot take: the timeline cannot be drawn, and that is an error too.
    let file = tampered(&tmp, &original, "absent", |t| t["steps"][0] = serde_json::json!({"acquire": 7}));
    let run = zklab(&tmp, &["replay", "--show", file.to_str().unwrap()]);
    assert!(matches!(run.code, Some(1 | 2)), "{}", run.describe());
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.describe());
    assert!(run.stderr.starts_with("error: ") && run.stderr.contains("step 0"), "{}", run.describe());
}

// ---- budgets: exit 3 ----------------------------------------------------------------------------

#[test]
fn exhausted_state_budget_exits_3_with_unknown_properties() {
    let tmp = TempDir::new("exhausted_state_budget_exits_3_with_unknown_properties");
    let run = zklab(&tmp, &["check", "--recipe", "standard", "--clients", "3", "--max-states", "50", "-q", "--json"]);
    assert_eq!(run.code, Some(3), "{}", run.describe());
    assert!(run.stderr.is_empty(), "{}", run.describe());
    let report = run.json();
    assert_eq!(report["bounded"], true, "{report}");
    assert_eq!(report["bounded_by"], "states", "it says which budget: {report}");
    let statuses: Vec<&str> =
        report["properties"].as_array().unwrap().iter().map(|p| p["status"].as_str().unwrap()).collect();
    assert!(statuses.contains(&"unknown"), "{report}");
    assert!(statuses.iter().all(|s| *s == "unknown" || *s == "holds"), "no verdict beyond the budget: {report}");
    assert!(!tmp.join("zklab-traces").exists(), "no counterexample, no traces");
}

#[test]
fn zero_timeout_exits_3() {
    let tmp = TempDir::new("zero_timeout_exits_3");
    let run = zklab(&tmp, &["check", "--recipe", "standard", "--clients", "3", "--timeout", "0", "-q", "--json"]);
    assert_eq!(run.code, Some(3), "{}", run.describe());
    assert_eq!(run.json()["bounded"], true, "{}", run.describe());
    assert_eq!(run.json()["bounded_by"], "time", "{}", run.describe());
    let text = zklab(&tmp, &["check", "--recipe", "standard", "--clients", "3", "--timeout", "0", "-q"]);
    assert!(text.stdout.contains("BOUNDED: --timeout ran out"), "{}", text.describe());
}

// ---- progress -----------------------------------------------------------------------------------

#[test]
fn progress_goes_to_stderr_unless_quiet() {
    let tmp = TempDir::new("progress_goes_to_stderr_unless_quiet");
    // About two and a half seconds on a 2-core machine, so that a progress line is due.
    let run = zklab(
        &tmp,
        &["check", "--recipe", "standard", "--clients", "3", "--faults", "loss-after-apply,expire", "--json"],
    );
    assert_eq!(run.code, Some(0), "{}", run.describe());
    let elapsed = run.json()["elapsed_ms"].as_u64().unwrap();
    assert!(elapsed >= 1_100, "the scenario must take over a second to exercise progress, took {elapsed} ms");
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert!(!lines.is_empty(), "progress after a second: {}", run.describe());
    for line in &lines {
        assert!(line.contains("states") && line.contains("unique"), "a progress line: {line}");
    }
    assert!(!run.stdout.contains("unique,"), "progress stays off stdout: {}", run.describe());
}

#[test]
fn quiet_prints_nothing_on_stderr() {
    let tmp = TempDir::new("quiet_prints_nothing_on_stderr");
    let run = zklab(
        &tmp,
        &["check", "--recipe", "standard", "--clients", "3", "--faults", "loss-after-apply,expire", "--json", "-q"],
    );
    assert_eq!(run.code, Some(0), "{}", run.describe());
    let elapsed = run.json()["elapsed_ms"].as_u64().unwrap();
    assert!(elapsed >= 1_100, "the scenario must take over a second to exercise -q, took {elapsed} ms");
    assert!(run.stderr.is_empty(), "-q: {}", run.describe());
}

// ---- determinism --------------------------------------------------------------------------------

/// Runs `check` into a fresh subdirectory and returns each trace file's name and bytes, sorted.
fn traces_of(tmp: &TempDir, sub: &str, args: &[&str], code: i32) -> Vec<(String, Vec<u8>)> {
    let dir = tmp.join(sub);
    let mut all = vec!["check", "-q", "--trace-dir", dir.to_str().unwrap()];
    all.extend_from_slice(args);
    let run = zklab(tmp, &all);
    assert_eq!(run.code, Some(code), "{}", run.describe());
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}: {}", dir.display(), run.describe()))
        .map(|e| {
            let path = e.unwrap().path();
            (path.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&path).unwrap())
        })
        .collect();
    files.sort();
    assert!(!files.is_empty(), "{}", run.describe());
    files
}

#[test]
fn the_same_check_writes_byte_identical_traces() {
    let tmp = TempDir::new("the_same_check_writes_byte_identical_traces");
    let args = ["--recipe", "wait-on-null", "--clients", "2"];
    let first = traces_of(&tmp, "first", &args, 1);
    let second = traces_of(&tmp, "second", &args, 1);
    assert_eq!(first.len(), 1);
    assert_eq!(first[0].0, WAIT_ON_NULL_TRACE);
    assert!(first == second, "two runs, two different traces");
}

#[test]
fn thread_count_does_not_change_traces() {
    let tmp = TempDir::new("thread_count_does_not_change_traces");
    let scenarios: &[&[&str]] = &[
        &["--recipe", "wait-on-null", "--clients", "2"],
        &["--recipe", "blind-retry", "--clients", "2", "--faults", "loss-after-apply"],
        &["--recipe", "standard", "--clients", "2", "--faults", "expire,pause"],
        // A transition property: its first bad step is found in the same order on any count.
        &["--recipe", "parent-watch", "--clients", "3"],
    ];
    for (i, args) in scenarios.iter().enumerate() {
        let mut one = args.to_vec();
        one.extend(["--threads", "1"]);
        let mut two = args.to_vec();
        two.extend(["--threads", "2"]);
        let mut three = args.to_vec();
        three.extend(["--threads", "3"]);
        let a = traces_of(&tmp, &format!("{i}-t1"), &one, 1);
        let b = traces_of(&tmp, &format!("{i}-t2"), &two, 1);
        let c = traces_of(&tmp, &format!("{i}-t3"), &three, 1);
        assert!(a == b, "{args:?}: --threads 1 and 2 differ");
        assert!(a == c, "{args:?}: --threads 1 and 3 differ");
    }
}

#[test]
fn trace_file_names_follow_the_recipe_list() {
    let tmp = TempDir::new("trace_file_names_follow_the_recipe_list");
    let files = traces_of(&tmp, "mixed", &["--recipe", "standard,wait-on-null", "--clients", "2"], 1);
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    assert!(names.iter().all(|n| n.starts_with("standard+wait-on-null-n2-") && n.ends_with(".json")), "{names:?}");
}

// ---- bugs found by these tests, fixed ------------------------------------------------------------

#[test]
fn replay_of_a_trace_with_a_huge_tick_fails_cleanly() {
    let tmp = TempDir::new("replay_of_a_trace_with_a_huge_tick_fails_cleanly");
    let original = write_failing_trace(&tmp, &tmp.join("traces"));
    let file = tampered(&tmp, &original, "tick", |t| t["scenario"]["config"]["server"]["tick_ms"] = u32::MAX.into());
    let run = replay(&tmp, &file);
    assert_ne!(run.code, Some(101), "no panic: {}", run.describe());
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.describe());
}

#[test]
fn a_missing_required_argument_is_named() {
    let tmp = TempDir::new("a_missing_required_argument_is_named");
    let run = zklab(&tmp, &["check", "--clients", "2"]);
    let line = run.assert_bad_input();
    assert!(line.contains("--recipe"), "{}", run.describe());
}

#[test]
fn replay_and_replay_show_agree_on_an_unreplayable_step() {
    let tmp = TempDir::new("replay_and_replay_show_agree_on_an_unreplayable_step");
    let original = write_failing_trace(&tmp, &tmp.join("traces"));
    let file = tampered(&tmp, &original, "absent", |t| t["steps"][0] = serde_json::json!({"acquire": 7}));
    let plain = replay(&tmp, &file);
    let show = zklab(&tmp, &["replay", "--show", file.to_str().unwrap()]);
    assert_eq!(plain.code, show.code, "{}\n{}", plain.describe(), show.describe());
    assert!(show.stderr.contains(file.to_str().unwrap()), "names the file: {}", show.describe());
}

#[test]
fn first_sequence_crosses_the_wrap_and_breaks_fencing() {
    let tmp = TempDir::new("first_sequence_crosses_the_wrap_and_breaks_fencing");
    let args = [
        "check",
        "--recipe",
        "standard",
        "--faults",
        "expire,pause",
        "--continue",
        "--json",
        "-q",
        "--trace-dir",
        tmp.arg(),
    ];
    let near_wrap = zklab(&tmp, &[&args[..], &["--first-sequence", "2147483647"]].concat());
    assert_eq!(near_wrap.code, Some(1), "{}", near_wrap.describe());
    let report = near_wrap.json();
    let fenced = report["properties"].as_array().unwrap().iter().find(|p| p["name"] == "fenced_exclusion").unwrap();
    assert_eq!(fenced["status"], "violated", "{}", near_wrap.describe());
    let bad = zklab(&tmp, &["check", "--recipe", "standard", "--first-sequence", "2147483648"]);
    bad.assert_bad_input();
}

#[test]
fn replay_draws_a_mermaid_sequence_diagram() {
    let tmp = TempDir::new("replay_draws_a_mermaid_sequence_diagram");
    let trace = Path::new(env!("CARGO_MANIFEST_DIR")).join("traces/blind-retry-n2-no_orphans.json");
    let run = zklab(&tmp, &["replay", "--mermaid", trace.to_str().unwrap()]);
    assert_eq!(run.code, Some(0), "{}", run.describe());
    assert!(run.stdout.starts_with("sequenceDiagram\n"), "{}", run.describe());
    for expected in [
        "participant c0 as c0 (blind-retry)",
        "participant ZK as ZooKeeper",
        "c0->>ZK: create -e -s",
        "FAULT loss-after-apply",
        "no_orphans violated",
    ] {
        assert!(run.stdout.contains(expected), "{expected}: {}", run.describe());
    }
    assert!(!run.stdout.contains(';'), "no statement separators inside the text");
}

#[test]
fn symmetry_counts_classes_and_proves_the_same() {
    let tmp = TempDir::new("symmetry_counts_classes_and_proves_the_same");
    let args = ["check", "--recipe", "standard", "--clients", "3", "--faults", "loss-after-apply", "--json", "-q"];
    let full = zklab(&tmp, &args).json();
    let run = zklab(&tmp, &[&args[..], &["--symmetry"]].concat());
    assert_eq!(run.code, Some(0), "{}", run.describe());
    let reduced = run.json();
    assert_eq!((full["symmetry"].as_bool(), reduced["symmetry"].as_bool()), (Some(false), Some(true)));
    let count = |r: &Value| r["unique_states"].as_u64().expect("a number");
    assert!(count(&reduced) * 5 < count(&full), "about 3! fewer: {} vs {}", count(&reduced), count(&full));
    for p in reduced["properties"].as_array().expect("properties") {
        assert_eq!(p["status"], "holds", "{p}");
    }
}

#[test]
fn symmetry_with_clients_that_are_not_interchangeable_exits_2() {
    let tmp = TempDir::new("symmetry_with_clients_that_are_not_interchangeable_exits_2");
    let run = zklab(&tmp, &["check", "--recipe", "standard,naive", "--clients", "2", "--symmetry"]);
    assert!(run.assert_bad_input().contains("--symmetry"), "{}", run.describe());
}

#[test]
fn malformed_op_scripts_exit_2_naming_the_op() {
    let tmp = TempDir::new("malformed_op_scripts_exit_2_naming_the_op");
    let open = r#"{"s":"A","op":"open","timeout_ms":4000}"#;
    // (second op of the script, words the error must mention)
    let cases: &[(&str, &[&str])] = &[
        (r#"{"s":"A","op":"frobnicate"}"#, &["op 1", "frobnicate"]),
        (r#"{"s":"A","op":"create","mode":"persistent"}"#, &["op 1", "path"]),
        (r#"{"s":"A","op":"create","path":"no-slash","mode":"persistent"}"#, &["op 1"]),
        (r#"{"s":"B","op":"exists","path":"/x"}"#, &["op 1", "B"]),
        (r#"{"s":"A","op":"reconnect"}"#, &["op 1", "reconnect", "connected"]),
        // A misspelt field would be ignored and the op run without it.
        (r#"{"s":"A","op":"exists","path":"/x","watchh":true}"#, &["op 1", "watchh", "watch"]),
        (r#"{"op":"sleep","ms":-5}"#, &["op 1", "ms"]),
        (r#"{"s":"A","op":"create","path":"/x","data":42}"#, &["op 1", "data", "42"]),
        (r#"{"s":"B","op":"open","jute_maxbuffer":0}"#, &["op 1", "jute_maxbuffer"]),
        (r#"{"s":"B","op":"open","jute_maxbuffer":"1M"}"#, &["op 1", "jute_maxbuffer"]),
        ("7", &["op 1", "object"]),
    ];
    let big = format!(r#"{{"s":"A","op":"set_data","path":"/","data":"{}"}}"#, "x".repeat(8 << 20));
    let cases = cases.iter().copied().chain([(big.as_str(), &["op 1", "jute.maxbuffer"][..])]);
    for (i, (op, mentions)) in cases.enumerate() {
        let file = tmp.join(&format!("case-{i}.json"));
        std::fs::write(&file, format!(r#"{{"name":"bad","ops":[{open},{op}]}}"#)).unwrap();
        let run = zklab(&tmp, &["zk-script", file.to_str().unwrap()]);
        let line = run.assert_bad_input();
        for word in mentions {
            assert!(line.contains(word), "the error names {word:?}: {}", run.describe());
        }
    }
}

#[test]
fn zk_script_ops_on_a_cut_connection_and_unknown_clients_exit_2() {
    let tmp = TempDir::new("zk_script_ops_on_a_cut_connection_and_unknown_clients_exit_2");
    let file = tmp.join("cut.json");
    let ops = r#"{"s":"A","op":"open"},{"s":"A","op":"disconnect"},{"s":"A","op":"get_data","path":"/"}"#;
    std::fs::write(&file, format!(r#"{{"name":"cut","ops":[{ops}]}}"#)).unwrap();
    let run = zklab(&tmp, &["zk-script", file.to_str().unwrap(), "--client", "java"]);
    let line = run.assert_bad_input();
    assert!(line.contains("op 2") && line.contains("disconnected"), "{}", run.describe());
    let case = Path::new(env!("CARGO_MANIFEST_DIR")).join("conformance/cases/44-outage-missed-change.json");
    let run = zklab(&tmp, &["zk-script", case.to_str().unwrap(), "--client", "curator"]);
    assert!(run.assert_bad_input().contains("curator"), "{}", run.describe());
}

#[test]
fn zk_script_client_picks_the_recording_it_matches() {
    let tmp = TempDir::new("zk_script_client_picks_the_recording_it_matches");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("conformance");
    let case = root.join("cases/46-outage-exists-created.json");
    for (client, recorded, code) in
        [("java", "java", 0), ("kazoo", "kazoo", 0), ("kazoo", "java", 1), ("java", "kazoo", 1)]
    {
        let expected = root.join(format!("expected/{recorded}/46-outage-exists-created.json"));
        let args = ["zk-script", case.to_str().unwrap(), "--client", client, "--expect", expected.to_str().unwrap()];
        let run = zklab(&tmp, &args);
        assert_eq!(run.code, Some(code), "--client {client} against the {recorded} recording: {}", run.describe());
        // It says so either way, on stderr: stdout is the results.
        let said = if code == 0 { "matches".to_string() } else { "differences from".to_string() };
        assert!(run.stderr.contains(&said), "{}", run.describe());
    }
    // No --client: the Java client, as for check and simulate.
    let expected = root.join("expected/java/46-outage-exists-created.json");
    let run = zklab(&tmp, &["zk-script", case.to_str().unwrap(), "--expect", expected.to_str().unwrap()]);
    assert_eq!(run.code, Some(0), "{}", run.describe());
}

#[test]
fn zk_script_with_a_bad_server_exits_2_in_one_line() {
    let tmp = TempDir::new("zk_script_with_a_bad_server_exits_2_in_one_line");
    let case = Path::new(env!("CARGO_MANIFEST_DIR")).join("conformance/cases/10-errors.json");
    let case = case.to_str().unwrap();
    // A port nothing listens on: bound, then let go.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let unreachable = format!("127.0.0.1:{port}");
    for (server, mentions) in
        [("localhost", "localhost"), ("127.0.0.1:2181/chroot", "HOST:PORT"), (&*unreachable, "reach")]
    {
        let run = zklab(&tmp, &["zk-script", case, "--server", server]);
        assert!(run.assert_bad_input().contains(mentions), "{}", run.describe());
    }
    // A malformed script is refused before any server is contacted.
    let file = tmp.join("bad.json");
    std::fs::write(&file, r#"{"name":"bad","ops":[{"s":"A","op":"frobnicate"}]}"#).unwrap();
    let run = zklab(&tmp, &["zk-script", file.to_str().unwrap(), "--server", &unreachable]);
    assert!(run.assert_bad_input().contains("frobnicate"), "{}", run.describe());
}

#[test]
fn zk_fuzz_with_bad_arguments_or_an_unreachable_server_exits_2_in_one_line() {
    let tmp = TempDir::new("zk_fuzz_with_bad_arguments_or_an_unreachable_server_exits_2_in_one_line");
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let unreachable = format!("127.0.0.1:{port}");
    let file = tmp.join("a-file");
    std::fs::write(&file, "").unwrap();
    for (args, mentions) in [
        (vec!["zk-fuzz", "--server", "localhost"], "localhost"),
        (vec!["zk-fuzz", "--server", &unreachable], "reach"),
        (vec!["zk-fuzz", "--server", &unreachable, "--scripts", "0"], "--scripts"),
        (vec!["zk-fuzz", "--server", &unreachable, "--seed", "minus-one"], "seed"),
        (vec!["zk-fuzz", "--server", &unreachable, "--save-dir", file.to_str().unwrap()], "--save-dir"),
    ] {
        let run = zklab(&tmp, &args);
        assert!(run.assert_bad_input().contains(mentions), "{args:?}: {}", run.describe());
    }
    assert!(!tmp.join("zklab-fuzz").exists(), "nothing is saved when nothing was compared");
}

#[test]
fn ctrl_c_stops_a_check_and_prints_what_is_known_with_exit_3() {
    let tmp = TempDir::new("ctrl_c_stops_a_check_and_prints_what_is_known_with_exit_3");
    // Minutes of work: the interruption, not the answer, ends it.
    let child = std::process::Command::new(BIN)
        .current_dir(&tmp.0)
        .args([
            "check",
            "--recipe",
            "standard",
            "--clients",
            "5",
            "--faults",
            "loss-after-apply,expire",
            "--json",
            "-q",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let sent = std::process::Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(sent.success());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    let report: Value = serde_json::from_slice(&out.stdout).expect("the report so far, as JSON");
    assert_eq!((report["interrupted"].as_bool(), report["bounded"].as_bool()), (Some(true), Some(true)), "{report}");
    assert_eq!(report["bounded_by"], "interrupted", "{report}");
    assert!(report["unique_states"].as_u64() > Some(0), "states so far: {report}");
    // Nothing is proven by a run cut short: the exclusion properties are unknown, not holding.
    let status = |name: &str| {
        report["properties"].as_array().unwrap().iter().find(|p| p["name"] == name).map(|p| p["status"].clone())
    };
    for property in ["zk_exclusion", "belief_exclusion", "eventual_acquire"] {
        assert_eq!(status(property), Some(Value::from("unknown")), "{property}: {report}");
    }
}

#[test]
fn every_flag_has_help_and_the_help_shows_examples() {
    let tmp = TempDir::new("every_flag_has_help_and_the_help_shows_examples");
    let top = zklab(&tmp, &["--help"]);
    assert!(top.stdout.contains("Examples:\n  zklab check"), "{}", top.describe());
    let commands =
        ["check", "recipes", "replay", "simulate", "herd", "calibrate", "suite", "zk-script", "zk-fuzz", "completions"];
    for command in commands {
        let run = zklab(&tmp, &[command, "--help"]);
        assert_eq!(run.code, Some(0), "{}", run.describe());
        let lines: Vec<&str> = run.stdout.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            if !(line.starts_with("  -") || line.starts_with("      --")) {
                continue;
            }
            // `  -x, --flag <V>  Help [default: ..]`, or the help on the lines below.
            let said = line.trim().split("  ").skip(1).any(|part| {
                let part = part.trim();
                !part.is_empty() && !part.starts_with("[default")
            });
            let below = lines.get(i + 1).is_some_and(|next| next.starts_with("          ") && !next.trim().is_empty());
            assert!(said || below, "zklab {command}: `{}` has no help text", line.trim());
        }
    }
    let bash = zklab(&tmp, &["completions", "bash"]);
    assert_eq!(bash.code, Some(0), "{}", bash.describe());
    assert!(bash.stdout.contains("_zklab()") && bash.stdout.contains("zk-script"), "a bash completion script");
    zklab(&tmp, &["completions", "tcsh"]).assert_bad_input();
}

// ---- HTML timelines -----------------------------------------------------------------------------

#[test]
fn check_with_html_writes_a_timeline_beside_each_trace_and_replay_writes_one_where_asked() {
    let tmp = TempDir::new("html");
    let dir = tmp.join("traces");
    let run = zklab(
        &tmp,
        &["check", "--recipe", "wait-on-null", "--clients", "2", "-q", "--html", "--trace-dir", dir.to_str().unwrap()],
    );
    assert_eq!(run.code, Some(1), "{}", run.describe());
    let trace = dir.join(WAIT_ON_NULL_TRACE);
    let beside = trace.with_extension("html");
    let page = std::fs::read_to_string(&beside).unwrap_or_else(|e| panic!("{}: {e}", beside.display()));
    assert!(page.starts_with("<!DOCTYPE html>") && page.contains("eventual_acquire"), "an HTML timeline");
    let out = tmp.join("elsewhere/t.html");
    let run = zklab(&tmp, &["replay", "--html", trace.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert_eq!(run.code, Some(0), "{}", run.describe());
    assert!(run.stdout.contains("wrote the HTML timeline to"), "{}", run.describe());
    assert_eq!(std::fs::read_to_string(&out).unwrap(), page, "the same page for the same trace");
}

#[test]
fn an_html_timeline_that_cannot_be_written_is_refused_with_one_line() {
    let tmp = TempDir::new("html-bad");
    let trace = write_failing_trace(&tmp, &tmp.join("traces"));
    let file = tmp.join("a-file");
    std::fs::write(&file, "").unwrap();
    let under_a_file = file.join("t.html");
    for out in [under_a_file.to_str().unwrap(), tmp.arg()] {
        let run = zklab(&tmp, &["replay", "--html", trace.to_str().unwrap(), "-o", out]);
        let line = run.assert_bad_input();
        assert!(line.contains("cannot write"), "{line}");
    }
    // `-o` says where the page goes: without `--html` it means nothing.
    zklab(&tmp, &["replay", trace.to_str().unwrap(), "-o", "t.html"]).assert_bad_input();
}

// ---- structure -----------------------------------------------------------------------------------

/// Every library module computes and returns; only `src/cli/` parses flags and prints (the
/// printing macros are defined in lib.rs, and progress goes through a `Progress` sink).
#[test]
fn only_the_command_line_parses_flags_and_prints() {
    fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                rust_files(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let cli = src.join("cli");
    let library: Vec<&PathBuf> = files.iter().filter(|f| !f.starts_with(&cli) && !f.ends_with("lib.rs")).collect();
    assert!(library.len() >= 20 && files.iter().any(|f| f.starts_with(&cli)), "{files:?}");
    for file in library {
        let text = std::fs::read_to_string(file).unwrap();
        let code: String = text.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n");
        for word in ["println!", "eprintln!", "print!(", "say!", "say_raw!", "clap::", "use clap"] {
            assert!(!code.contains(word), "{} uses {word}: only src/cli/ parses flags and prints", file.display());
        }
    }
}

/// The suite takes the same threads as `check`: none, or more than a machine can start, is
/// refused before any case runs.
#[test]
fn suite_refuses_threads_it_cannot_run_with() {
    let tmp = TempDir::new("suite_refuses_threads_it_cannot_run_with");
    for threads in ["0", "257", "100000"] {
        let line = zklab(&tmp, &["suite", "--threads", threads]).assert_bad_input().to_string();
        assert!(line.contains("--threads"), "{line}");
    }
}

/// `zklab real` refuses a fault it cannot make happen on the servers asked for, before any
/// server starts: a lagging read needs the lagging follower of an ensemble it starts itself.
#[test]
fn real_refuses_what_it_cannot_drive_before_a_server_starts() {
    let tmp = TempDir::new("real_refuses_what_it_cannot_drive_before_a_server_starts");
    // (arguments after `real --recipe standard`, a word the error must mention)
    let cases: &[(&[&str], &str)] = &[
        (&["--faults", "lagging-read=0.2"], "--servers 3"),
        (&["--faults", "lagging-session=0.1", "--server", "127.0.0.1:1"], "--servers 3"),
        (&["--faults", "reap-parent=1", "--servers", "3"], "reap-parent"),
        (&["--servers", "2"], "--servers"),
        (&["--server", "no-port"], "HOST:PORT"),
        (&["--session-timeout-ms", "100"], "--session-timeout-ms"),
    ];
    for (rest, word) in cases {
        let mut args = vec!["real", "--recipe", "standard"];
        args.extend_from_slice(rest);
        let run = zklab(&tmp, &args);
        let line = run.assert_bad_input();
        assert!(line.contains(word), "`{}` should name {word}: {line}", args.join(" "));
    }
}

/// `replay --html` never writes its page over the trace it reads, nor over a file that is not a
/// page unless told to (`--force`); the trace is left byte for byte as it was.
#[test]
fn replay_never_writes_its_page_over_what_it_reads() {
    let tmp = TempDir::new("replay_never_writes_its_page_over_what_it_reads");
    let original = Path::new(env!("CARGO_MANIFEST_DIR")).join("traces/blind-retry-n2-eventual_acquire.json");
    let text = std::fs::read(&original).unwrap();
    let trace = tmp.join("t.json");
    std::fs::write(&trace, &text).unwrap();
    let line = zklab(&tmp, &["replay", "--html", trace.to_str().unwrap(), "-o", trace.to_str().unwrap()])
        .assert_bad_input()
        .to_string();
    assert!(line.contains("over the trace it reads"), "{line}");
    // A trace named like a page: the page's default name is the trace itself.
    let named = tmp.join("t.html");
    std::fs::write(&named, &text).unwrap();
    zklab(&tmp, &["replay", "--html", named.to_str().unwrap()]).assert_bad_input();
    let kept = tmp.join("notes.txt");
    std::fs::write(&kept, "mine").unwrap();
    let line = zklab(&tmp, &["replay", "--html", trace.to_str().unwrap(), "-o", kept.to_str().unwrap()])
        .assert_bad_input()
        .to_string();
    assert!(line.contains("--force"), "{line}");
    assert_eq!(std::fs::read(&trace).unwrap(), text, "the trace is untouched");
    assert_eq!(std::fs::read(&named).unwrap(), text, "the trace named .html is untouched");
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), "mine");
    let forced = zklab(&tmp, &["replay", "--html", trace.to_str().unwrap(), "-o", kept.to_str().unwrap(), "--force"]);
    assert_eq!(forced.code, Some(0), "{}", forced.describe());
    assert!(std::fs::read_to_string(&kept).unwrap().to_ascii_lowercase().starts_with("<!doctype html"));
}

/// A trace with more clients than a page draws is refused by `replay --html` as `simulate
/// --html` refuses it: bad input (exit 2), before any work.
#[test]
fn replay_refuses_a_page_too_large_as_bad_input() {
    let tmp = TempDir::new("replay_refuses_a_page_too_large_as_bad_input");
    let sim = zklab(
        &tmp,
        &["simulate", "--recipe", "blind-retry", "--clients", "40", "--faults", "loss-after-apply=0.3", "--seed", "1"],
    );
    assert_eq!(sim.code, Some(1), "blind-retry breaks: {}", sim.describe());
    let trace = std::fs::read_dir(tmp.join("zklab-traces"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "json"))
        .expect("a trace");
    let line = zklab(&tmp, &["replay", "--html", trace.to_str().unwrap()]).assert_bad_input().to_string();
    assert!(line.contains("too many for a page"), "{line}");
    assert!(!trace.with_extension("html").exists(), "no page written");
}
