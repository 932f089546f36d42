//! Running the commands a user is shown, as a shell would run them: shared by the examples that
//! need nothing real (tests/examples.rs) and those that start a real ZooKeeper, kazoo or Java
//! (tests/real/examples.rs).

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub const BIN: &str = env!("CARGO_BIN_EXE_zklab");

/// A fresh directory with the checkout's example inputs linked in, removed on drop.
pub struct Sandbox(pub PathBuf);

impl Sandbox {
    pub fn new(test: &str) -> Sandbox {
        let dir = std::env::temp_dir().join(format!("zklab-examples-{test}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for input in ["traces", "conformance", "tests", "scripts"] {
            std::os::unix::fs::symlink(Path::new(env!("CARGO_MANIFEST_DIR")).join(input), dir.join(input)).unwrap();
        }
        Sandbox(dir)
    }

    /// Runs `line` with `sh`, `zklab` on the PATH; its exit code, stdout and stderr.
    pub fn run(&self, line: &str) -> (Option<i32>, String, String) {
        let bin_dir = Path::new(BIN).parent().unwrap();
        let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
        let out = Command::new("sh").args(["-c", line]).current_dir(&self.0).env("PATH", path).output().unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
    }

    /// Starts `line` (a server that runs until stopped), fetches its page and stops it.
    pub fn serve(&self, line: &str) -> String {
        let words: Vec<&str> = line.split_whitespace().skip(1).collect();
        let mut child =
            Command::new(BIN).args(words).current_dir(&self.0).stdout(Stdio::piped()).spawn().expect("zklab starts");
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let url = lines.find_map(|l| l.unwrap().split_once("http://").map(|(_, rest)| rest.to_string()));
        let address = url.expect("it prints its address").split('/').next().unwrap().to_string();
        let mut stream = std::net::TcpStream::connect(&address).unwrap();
        write!(stream, "GET / HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n").unwrap();
        let mut page = String::new();
        stream.read_to_string(&mut page).unwrap();
        let _ = child.kill();
        let _ = child.wait();
        page
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Whether a command needs a real ZooKeeper, kazoo or Java.
pub fn needs_a_server(line: &str) -> bool {
    ["zklab real ", "zklab zk-fuzz", "zklab client-check", "--server ", "scripts/"].iter().any(|w| line.contains(w))
}

/// Runs `line` and checks it exits `code`, with output and without an error line.
pub fn runs_as_written(sandbox: &Sandbox, line: &str, code: i32) {
    if line.starts_with("zklab explore") {
        let page = sandbox.serve(line);
        let explorer = page.contains("Break it") || page.contains("/lesson/");
        assert!(page.starts_with("HTTP/1.1 200") && explorer, "`{line}` serves its page: {page}");
        return;
    }
    let (got, stdout, stderr) = sandbox.run(line);
    let what = format!("`{line}` exited {got:?}\n--- stdout ---\n{stdout}\n--- stderr ---\n{stderr}");
    assert_eq!(got, Some(code), "{what}");
    assert!(!stderr.contains("error:") && !stderr.contains("panicked"), "{what}");
    assert!(!stdout.is_empty() || line.contains('>'), "`{line}` prints what it found: {what}");
}

/// The subcommands and the one example line each one's help ends with.
pub fn examples() -> Vec<(String, String)> {
    let command = <zklab::cli::Cli as clap::CommandFactory>::command();
    command
        .get_subcommands()
        .map(|sub| {
            let help = sub.get_after_help().map(|h| h.to_string()).unwrap_or_default();
            let lines: Vec<&str> =
                help.lines().filter_map(|l| l.trim().starts_with("zklab ").then_some(l.trim())).collect();
            assert_eq!(lines.len(), 1, "`zklab {} --help` ends with one example: {help:?}", sub.get_name());
            (sub.get_name().to_string(), lines[0].to_string())
        })
        .collect()
}

/// Every `zklab` line of the README's code blocks and the exit code its text promises: 0 a
/// proof, a passing run or a listing; 1 a broken recipe caught (or a kept trace reproduced
/// with its violation, for `--reproduce`, is 0); 3 a run that ends with clients waiting and no
/// deadlock (the queue too long to list: unknown, never violated).
pub fn readme_commands() -> Vec<(String, i32)> {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let blocks = readme.split("```").skip(1).step_by(2);
    let lines = blocks.flat_map(|b| b.lines().map(str::to_string).collect::<Vec<_>>());
    let commands = lines.filter(|l| l.starts_with("zklab ")).map(|l| l.split(" #").next().unwrap().trim().to_string());
    commands
        .map(|line| {
            // What the README says each one finds: a broken recipe (or fault) caught exits 1.
            let caught = [
                "wait-on-null",
                "expire,pause",
                "blind-retry",
                "queue-optimistic",
                "operator-delete",
                "kazoo --clients 2",
            ];
            let searches = ["zklab check", "zklab simulate", "zklab real --recipe", "zklab client-check"]
                .iter()
                .any(|c| line.starts_with(c));
            let code = match (searches, line.contains("--clients 40000")) {
                (true, true) => 3,
                _ => i32::from(searches && caught.iter().any(|c| line.contains(c))),
            };
            (line, code)
        })
        .collect()
}
