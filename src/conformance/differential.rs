//! Differential fuzzing: random op scripts run against the model and a live ZooKeeper, their
//! results compared as recordings are. On a difference proptest shrinks the script to a minimal
//! one that still differs, so a finding arrives as a short case ready to keep.

use super::fuzz::{scripts, FuzzScript};
use super::{differences, run_script, run_script_live, ScriptError};
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner};
use serde_json::Value;
use std::cell::Cell;
use std::path::{Path, PathBuf};

/// The longest script the generator makes (before the closing `events` of each session).
const MAX_OPS: usize = 24;

pub struct FuzzOptions {
    pub server: String,
    pub scripts: u32,
    pub seed: u64,
    /// How many shrinking steps a mismatch may take (each runs the server once).
    pub max_shrink_iters: u32,
    /// Where to say how far the run got; none: say nothing.
    pub progress: Option<crate::progress::Progress>,
}

/// A script on which the model and the server disagree, shrunk.
pub struct Mismatch {
    pub script: Value,
    /// The server's answer (`None`: the live runner itself failed, with `differences` saying how).
    pub server: Option<Value>,
    pub differences: Vec<String>,
}

pub struct FuzzReport {
    /// Generated scripts compared (shrinking runs not counted).
    pub compared: u32,
    /// Runs made while shrinking a mismatch.
    pub shrink_runs: u32,
    pub mismatch: Option<Mismatch>,
    /// Ctrl-C or SIGTERM stopped it: fewer scripts than asked were compared (and a mismatch
    /// is shrunk only as far as it got).
    pub interrupted: bool,
}

/// The model's and the server's results for `script`, and how they differ.
fn compare(script: &Value, server: &str) -> Result<(Value, Vec<String>), ScriptError> {
    let model = run_script(script)?;
    let live = run_script_live(script, server)?;
    let found = differences(&live, &model);
    Ok((live, found))
}

fn name(seed: u64) -> String {
    format!("fuzz-seed-{seed}")
}

/// Runs `options.scripts` generated scripts against both; stops at the first mismatch, shrunk.
/// Errs only if the server cannot be used at all.
pub fn fuzz(options: &FuzzOptions) -> Result<FuzzReport, ScriptError> {
    // Fail fast on an unreachable server instead of shrinking its connection errors.
    let probe = FuzzScript { timeouts: vec![4000, 4000], ops: Vec::new() }.to_json("probe", "");
    run_script_live(&probe, &options.server)?;
    let config = Config {
        cases: options.scripts,
        max_shrink_iters: options.max_shrink_iters,
        max_shrink_time: 0,
        failure_persistence: None,
        fork: false,
        timeout: 0,
        verbose: 0,
        ..Config::default()
    };
    let mut seed = [0u8; 32];
    seed[..8].copy_from_slice(&options.seed.to_le_bytes());
    let mut runner = TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &seed));
    let compared = Cell::new(0u32);
    let failed = Cell::new(false);
    let shrink_runs = Cell::new(0u32);
    let total = options.scripts;
    let last = Cell::new(std::time::Instant::now());
    let outcome = runner.run(&scripts(MAX_OPS), |script| {
        // Stopped, every script left passes at once: the run ends, a shrink keeps what it has.
        if crate::interrupt::interrupted() {
            return Ok(());
        }
        if failed.get() {
            shrink_runs.set(shrink_runs.get() + 1);
            if let Some(say) = options.progress {
                say(&format!("zk-fuzz: shrinking, run {} ({} ops)", shrink_runs.get(), script.ops.len()));
            }
        } else {
            compared.set(compared.get() + 1);
            let due = last.get().elapsed() >= std::time::Duration::from_secs(1) || compared.get() == total;
            if let Some(say) = options.progress.filter(|_| due) {
                last.set(std::time::Instant::now());
                say(&format!("zk-fuzz: {}/{total} scripts compared", compared.get()));
            }
        }
        let json = script.to_json(&name(options.seed), "");
        let verdict = match compare(&json, &options.server) {
            Ok((_, found)) if found.is_empty() => Ok(()),
            Ok((_, found)) => Err(TestCaseError::fail(found.join("; "))),
            Err(e) => Err(TestCaseError::fail(format!("the live runner failed: {e}"))),
        };
        if let Some(say) = options.progress.filter(|_| verdict.is_err() && !failed.replace(true)) {
            say(&format!("zk-fuzz: script {} differs; shrinking it", compared.get()));
        }
        verdict
    });
    let mismatch = match outcome {
        Ok(()) => None,
        Err(TestError::Abort(why)) => return Err(ScriptError(format!("fuzzing stopped: {why}"))),
        Err(TestError::Fail(_, minimal)) => Some(confirm(&minimal, options)),
    };
    let interrupted = crate::interrupt::interrupted();
    Ok(FuzzReport { compared: compared.get(), shrink_runs: shrink_runs.get(), mismatch, interrupted })
}

/// Runs the minimal script once more to record the server's answer and the differences.
fn confirm(minimal: &FuzzScript, options: &FuzzOptions) -> Mismatch {
    let mut script = minimal.to_json(&name(options.seed), "");
    match compare(&script, &options.server) {
        Ok((live, found)) => {
            let about = match found.first() {
                Some(first) => {
                    format!("Found by zk-fuzz --seed {}: the model differed from the server ({first}).", options.seed)
                }
                None => format!("Found by zk-fuzz --seed {}; did not differ again when re-run.", options.seed),
            };
            script["about"] = Value::String(about);
            Mismatch { script, server: Some(live), differences: found }
        }
        Err(e) => Mismatch { script, server: None, differences: vec![format!("the live runner failed: {e}")] },
    }
}

/// Writes a mismatch as a case pair into `dir`/cases and `dir`/expected, numbered after the
/// highest case there, and returns the case's name.
pub fn save(mismatch: &Mismatch, dir: &Path) -> Result<String, String> {
    let server = mismatch.server.as_ref().ok_or("the server gave no answer to record")?;
    let (cases, expected) = (dir.join("cases"), dir.join("expected"));
    for d in [&cases, &expected] {
        std::fs::create_dir_all(d).map_err(|e| format!("cannot create {}: {e}", d.display()))?;
    }
    let highest = std::fs::read_dir(&cases)
        .map_err(|e| format!("cannot read {}: {e}", cases.display()))?
        .filter_map(|e| e.ok()?.file_name().to_str()?.split('-').next()?.parse::<u32>().ok())
        .max()
        .unwrap_or(0);
    let base = mismatch.script["name"].as_str().unwrap_or("fuzz");
    let name = format!("{:02}-{base}", highest + 1);
    let mut script = mismatch.script.clone();
    script["name"] = Value::String(name.clone());
    let mut answer = server.clone();
    answer["case"] = Value::String(name.clone());
    let write = |path: PathBuf, text: String| {
        std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
    };
    write(cases.join(format!("{name}.json")), script_text(&script))?;
    write(expected.join(format!("{name}.json")), results_text(&answer))?;
    Ok(name)
}

/// An op script in the layout of conformance/cases: one op per line.
pub fn script_text(script: &Value) -> String {
    let ops: Vec<String> = script["ops"].as_array().into_iter().flatten().map(Value::to_string).collect();
    format!(
        "{{\"name\": {},\n \"about\": {},\n \"ops\": [\n  {}\n ]}}\n",
        script["name"],
        script["about"],
        ops.join(",\n  ")
    )
}

/// A result file in the layout of conformance/expected: one result per line.
pub fn results_text(results: &Value) -> String {
    let lines: Vec<String> = results["results"].as_array().into_iter().flatten().map(Value::to_string).collect();
    format!("{{\"case\": {},\n \"results\": [\n  {}\n ]}}\n", results["case"], lines.join(",\n  "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_saved_mismatch_is_numbered_after_the_highest_case_and_reads_back() {
        let dir = std::env::temp_dir().join(format!("zklab-fuzz-save-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("cases")).unwrap();
        std::fs::write(dir.join("cases/41-old.json"), "{}").unwrap();
        let script =
            json!({"name": "fuzz-seed-1", "about": "a", "ops": [{"s": "A", "op": "open"}, {"s": "A", "op": "state"}]});
        let server = json!({"case": "fuzz-seed-1", "results": [{"i": 0, "op": "open"}, {"i": 1, "op": "state"}]});
        let mismatch = Mismatch { script: script.clone(), server: Some(server.clone()), differences: vec![] };
        assert_eq!(save(&mismatch, &dir).unwrap(), "42-fuzz-seed-1");
        let read = |p: &str| -> Value { serde_json::from_str(&std::fs::read_to_string(dir.join(p)).unwrap()).unwrap() };
        assert_eq!(read("cases/42-fuzz-seed-1.json")["ops"], script["ops"]);
        assert_eq!(read("cases/42-fuzz-seed-1.json")["name"], "42-fuzz-seed-1");
        assert_eq!(read("expected/42-fuzz-seed-1.json")["results"], server["results"]);
        let unanswered = Mismatch { server: None, ..mismatch };
        assert!(save(&unanswered, &dir).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
