//! Failure schedules kept in traces/sim/ (found by `zklab simulate --search`, shrunk by
//! proptest) still break what they broke: each schedule, run as its file says, violates its
//! property and writes the kept trace byte for byte; each kept trace replays to its verdict.

use std::path::{Path, PathBuf};
use std::process::Command;
use zklab::trace::Trace;
use zklab_sim::Schedule;

fn kept(suffix_trace: bool) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("traces/sim");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("traces/sim exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with("-trace.json") == suffix_trace)
        .collect();
    files.sort();
    files
}

#[test]
fn every_kept_schedule_still_breaks_its_property_with_the_same_trace() {
    let schedules = kept(false);
    assert!(schedules.len() >= 2, "schedules for broken variants are kept");
    let out_dir = std::env::temp_dir().join(format!("zklab-schedules-{}", std::process::id()));
    for file in schedules {
        let schedule = Schedule::load(&file).unwrap();
        let breaks = schedule.breaks.expect("a kept schedule says what it breaks");
        assert!(!schedule.faults.is_empty());
        let out = Command::new(env!("CARGO_BIN_EXE_zklab"))
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(&breaks.args)
            .args(["--schedule", file.to_str().unwrap(), "--trace-dir", out_dir.to_str().unwrap()])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(1), "{}: {text}", file.display());
        assert!(text.contains(&format!("{} violated", breaks.property)), "{}: {text}", file.display());
        let written = text.lines().find_map(|l| l.trim().strip_prefix("trace: ")).unwrap();
        let kept_trace = file.with_file_name(file.file_stem().unwrap().to_string_lossy().to_string() + "-trace.json");
        assert_eq!(
            std::fs::read_to_string(written).unwrap(),
            std::fs::read_to_string(&kept_trace).unwrap(),
            "{} gives its kept trace",
            file.display()
        );
    }
    let _ = std::fs::remove_dir_all(out_dir);
}

#[test]
fn every_kept_simulation_trace_replays_to_its_verdict() {
    for file in kept(true) {
        let trace = Trace::load(&file).unwrap_or_else(|e| panic!("{e}"));
        assert!(trace.seed.is_some(), "{}: a simulated trace names its seed", file.display());
        trace.replay().unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    }
}
