//! Ctrl-C and SIGTERM stop every long command with what it knows: each test starts a command
//! that would run for minutes, waits for its first progress line (progress comes once a second
//! on stderr), sends the signal, and reads the partial report and exit code 3 (1 had it already
//! found a violation).

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_zklab");

/// What a stopped command printed and how it exited.
struct Stopped {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Runs `zklab args` in a fresh directory, sends `signal` once a stderr line contains `ready`,
/// and waits for it to end.
fn stop(test: &str, args: &[&str], ready: &str, signal: &str) -> Stopped {
    let dir = std::env::temp_dir().join(format!("zklab-signals-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut child = Command::new(BIN)
        .args(args)
        .current_dir(&dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("zklab starts");
    let (lines, seen) = mpsc::channel();
    let stderr = BufReader::new(child.stderr.take().unwrap());
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        for line in stderr.lines().map_while(Result::ok) {
            all += &line;
            all.push('\n');
            let _ = lines.send(line);
        }
        all
    });
    let waited = std::iter::from_fn(|| seen.recv_timeout(Duration::from_secs(120)).ok()).find(|l| l.contains(ready));
    assert!(waited.is_some(), "`zklab {}` never printed a line with {ready:?}", args.join(" "));
    let killed = Command::new("kill").args([&format!("-{signal}"), &child.id().to_string()]).status().unwrap();
    assert!(killed.success());
    let output = child.wait_with_output().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    Stopped {
        code: output.status.code(),
        stdout: String::from_utf8(output.stdout).unwrap(),
        stderr: reader.join().unwrap(),
    }
}

impl Stopped {
    fn assert(&self, code: i32, says: &str) {
        let what = format!("exit {:?}\n--- stdout ---\n{}\n--- stderr ---\n{}", self.code, self.stdout, self.stderr);
        assert_eq!(self.code, Some(code), "{what}");
        assert!(self.stdout.contains(says), "stdout lacks {says:?}: {what}");
        assert!(self.stderr.contains("interrupted: stopping"), "{what}");
    }
}

#[test]
fn a_schedule_search_stopped_by_sigterm_says_how_many_schedules_it_tried() {
    let args = ["simulate", "--recipe", "standard", "--clients", "20", "--search", "1000000"];
    let stopped =
        stop("search", &[&args[..], &["--faults", "loss-after-apply,expire"]].concat(), "schedules tried", "TERM");
    stopped.assert(3, "of 1000000 schedules of up to 4 faults tried, none breaks a property so far");
}

#[test]
fn a_seed_sweep_stopped_by_ctrl_c_reports_the_seeds_it_finished() {
    let args = ["simulate", "--recipe", "standard", "--clients", "300", "--seeds", "1000000", "--faults", "expire=1"];
    let stopped = stop("seeds", &args, "seeds done", "INT");
    stopped.assert(3, "of 1000000 seeds ran to the end");
}

#[test]
fn a_manifest_stopped_by_sigterm_prints_its_table_so_far() {
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/manifest.json");
    let stopped = stop("manifest", &["check", "--manifest", manifest, "--threads", "1"], "[3/", "TERM");
    stopped.assert(3, "not run (interrupted)");
    assert!(stopped.stdout.contains("as expected"), "{}", stopped.stdout);
}

#[test]
fn the_suite_stopped_by_ctrl_c_says_how_many_cases_ran() {
    let stopped = stop("suite", &["suite"], "[3/", "INT");
    let total = zklab::suite::CASES.len();
    stopped.assert(3, &format!("of {total} cases run, 0 NOT as expected"));
}

#[test]
fn calibration_stopped_by_sigterm_keeps_the_rows_it_has() {
    let args = ["calibrate", "--clients", "2", "--faults", "loss-after-apply,expire", "--seeds", "1000000"];
    let stopped = stop("calibrate", &args, "states reached", "TERM");
    stopped.assert(3, "interrupted: the rows above are what was run by then");
}

#[test]
fn a_herd_measurement_stopped_by_ctrl_c_keeps_its_finished_rows() {
    let args = ["herd", "--recipes", "naive", "--clients", "5,3000", "-o", "herd.svg"];
    let stopped = stop("herd", &args, "acquisitions granted", "INT");
    stopped.assert(3, "interrupted: 1 of 2 runs measured");
}

#[test]
fn a_swarm_stopped_by_sigterm_is_bounded_by_the_signal() {
    let args = ["check", "--recipe", "standard", "--clients", "4", "--faults", "loss-after-apply,expire"];
    let stopped = stop("swarm", &[&args[..], &["--swarm", "1000000000"]].concat(), "walks", "TERM");
    stopped.assert(3, "(BOUNDED: interrupted)");
}

/// Needs Debian's ZooKeeper: `zk-fuzz` starts one for its run.
#[cfg(feature = "real-server")]
#[test]
fn fuzzing_stopped_by_sigterm_says_how_many_scripts_it_compared() {
    let stopped = stop("fuzz", &["zk-fuzz", "--scripts", "1000000"], "scripts compared", "TERM");
    stopped.assert(3, "of 1000000 scripts (seed 1) compared; the model answered each like the server");
}

/// Needs Debian's ZooKeeper: `real` starts one for its runs.
#[cfg(feature = "real-server")]
#[test]
fn a_real_campaign_stopped_by_ctrl_c_says_how_many_seeds_ran() {
    let stopped =
        stop("real", &["real", "--recipe", "standard", "--clients", "3", "--seeds", "1000"], "serving after", "INT");
    stopped.assert(3, "of 1000 seeds ran");
}

/// The processes alive now whose command line mentions `needle` (the JVMs of a run's servers
/// name its private directory in their arguments).
#[cfg(feature = "real-server")]
fn processes_mentioning(needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().filter_map(Result::ok) {
        if let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) {
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            if cmdline.contains(needle) {
                found.push(format!("{}: {cmdline}", entry.file_name().to_string_lossy()));
            }
        }
    }
    found
}

/// Nothing a run starts outlives it, whatever ends it: a second Ctrl-C at once (which quits
/// without the orderly tear-down), SIGTERM, SIGHUP. Each run's servers, JVMs and directories are
/// gone once the command has exited.
#[cfg(feature = "real-server")]
#[test]
fn no_server_or_directory_outlives_its_command_whatever_signal_ends_it() {
    let real = ["real", "--recipe", "standard", "--clients", "3", "--seeds", "1000"];
    let cases: [(&[&str], &str, &[&str]); 5] = [
        (&[&real[..], &["--servers", "1"]].concat(), "serving after", &["INT", "INT"]),
        (&[&real[..], &["--servers", "3"]].concat(), "serving after", &["INT", "INT"]),
        (&["zk-fuzz", "--scripts", "1000000"], "scripts compared", &["INT", "INT"]),
        (&[&real[..], &["--servers", "1"]].concat(), "serving after", &["TERM"]),
        (&[&real[..], &["--servers", "1"]].concat(), "serving after", &["HUP"]),
    ];
    for (args, ready, signals) in cases {
        let mut child = Command::new(BIN).args(args).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
        let pid = child.id();
        let (lines, seen) = mpsc::channel();
        let stderr = BufReader::new(child.stderr.take().unwrap());
        std::thread::spawn(move || {
            for line in stderr.lines().map_while(Result::ok) {
                let _ = lines.send(line);
            }
        });
        let waited =
            std::iter::from_fn(|| seen.recv_timeout(Duration::from_secs(120)).ok()).find(|l| l.contains(ready));
        assert!(waited.is_some(), "`zklab {}` never printed {ready:?}", args.join(" "));
        let mine = format!("zklab-real-{pid}-");
        assert!(!processes_mentioning(&mine).is_empty(), "the run's servers are up and named by its directory");
        for signal in signals {
            assert!(Command::new("kill").args([&format!("-{signal}"), &pid.to_string()]).status().unwrap().success());
        }
        let status = child.wait().unwrap();
        // The kernel ends the children as their parent dies; give it a moment to reap them.
        let mut left = processes_mentioning(&mine);
        for _ in 0..50 {
            if left.is_empty() {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
            left = processes_mentioning(&mine);
        }
        assert!(left.is_empty(), "`zklab {}` ended by {signals:?} ({status}) left {left:?}", args.join(" "));
        let dirs: Vec<_> = std::fs::read_dir(std::env::temp_dir())
            .unwrap()
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().starts_with(&mine))
            .map(|e| e.path())
            .collect();
        assert!(dirs.is_empty(), "`zklab {}` ended by {signals:?} left {dirs:?}", args.join(" "));
    }
}

/// Two runs on one machine at once, each with servers of its own: neither stops the other's
/// servers nor touches the other's files, and both are judged to their end.
#[cfg(feature = "real-server")]
#[test]
fn two_real_runs_at_once_pass_side_by_side() {
    let run = |trace_dir: &str| {
        Command::new(BIN)
            .args(["real", "--recipe", "standard", "--clients", "3", "--seeds", "3", "-q", "--trace-dir", trace_dir])
            .env("ZKLAB_REAL_KEEP", "1")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let dir = std::env::temp_dir().join(format!("zklab-signals-side-by-side-{}", std::process::id()));
    let (a, b) = (run(&dir.join("a").to_string_lossy()), run(&dir.join("b").to_string_lossy()));
    for child in [a, b] {
        let out = child.wait_with_output().unwrap();
        let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        // Neither run broke anything nor lost its servers; a run the model could not follow on
        // a busy machine is unknown (exit 3), which is not what this test is about.
        assert!(matches!(out.status.code(), Some(0 | 3)), "{stdout}\n{stderr}");
        let passed: usize = stdout
            .split(" of 3 real runs passed")
            .next()
            .and_then(|s| s.rsplit('\n').next())
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or(0);
        assert!(passed >= 2, "both runs were judged to their end: {stdout}");
        assert!(!stdout.contains("could not start"), "{stdout}");
        // Each kept its servers' files: the other run removed nothing of them.
        let kept = stderr.lines().find_map(|l| l.split("are kept in ").nth(1)).expect("ZKLAB_REAL_KEEP says where");
        let cfg = std::path::Path::new(kept.trim()).join("server1/zoo.cfg");
        assert!(cfg.is_file(), "{} is still there", cfg.display());
        let _ = std::fs::remove_dir_all(kept.trim());
    }
    let _ = std::fs::remove_dir_all(&dir);
}
