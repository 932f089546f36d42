//! Stopping a long command by a signal and reading what it says: shared by the signal tests
//! that need nothing real (tests/signals.rs) and those that start a real ZooKeeper
//! (tests/real/signals.rs).

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

pub const BIN: &str = env!("CARGO_BIN_EXE_zklab");

/// What a stopped command printed and how it exited.
pub struct Stopped {
    code: Option<i32>,
    pub stdout: String,
    stderr: String,
}

/// Runs `zklab args` in a fresh directory, sends `signal` once a stderr line contains `ready`,
/// and waits for it to end.
pub fn stop(test: &str, args: &[&str], ready: &str, signal: &str) -> Stopped {
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
    pub fn assert(&self, code: i32, says: &str) {
        let what = format!("exit {:?}\n--- stdout ---\n{}\n--- stderr ---\n{}", self.code, self.stdout, self.stderr);
        assert_eq!(self.code, Some(code), "{what}");
        assert!(self.stdout.contains(says), "stdout lacks {says:?}: {what}");
        assert!(self.stderr.contains("interrupted: stopping"), "{what}");
    }
}
