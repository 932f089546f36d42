//! Ctrl-C and SIGTERM stop the commands that start a real ZooKeeper with what they know, and
//! nothing they started outlives them.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use crate::stopping::{stop, BIN};

/// Needs Debian's ZooKeeper: `zk-fuzz` starts one for its run.
#[test]
fn fuzzing_stopped_by_sigterm_says_how_many_scripts_it_compared() {
    let _gate = crate::gate::enter(crate::gate::Kind::Servers);
    let stopped = stop("fuzz", &["zk-fuzz", "--scripts", "1000000"], "scripts compared", "TERM");
    stopped.assert(3, "of 1000000 scripts (seed 1) compared; the model answered each like the server");
}

/// Needs Debian's ZooKeeper: `real` starts one for its runs.
#[test]
fn a_real_campaign_stopped_by_ctrl_c_says_how_many_seeds_ran() {
    let _gate = crate::gate::enter(crate::gate::Kind::Servers);
    let stopped =
        stop("real", &["real", "--recipe", "standard", "--clients", "3", "--seeds", "1000"], "serving after", "INT");
    stopped.assert(3, "of 1000 seeds ran");
}

/// The processes alive now whose command line mentions `needle` (the JVMs of a run's servers
/// name its private directory in their arguments).
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
#[test]
fn no_server_or_directory_outlives_its_command_whatever_signal_ends_it() {
    let _gate = crate::gate::enter(crate::gate::Kind::Servers);
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
#[test]
fn two_real_runs_at_once_pass_side_by_side() {
    let _gate = crate::gate::enter(crate::gate::Kind::Servers);
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
