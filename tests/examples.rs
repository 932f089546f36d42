//! The commands a user is shown work as written: every argument of every subcommand has help,
//! every subcommand's help ends with one example, and each example and each `zklab` line of
//! the README is run here, as a shell would run it, in a fresh directory that sees the
//! checkout's `traces/`, `conformance/` and `tests/`. Those that start a real ZooKeeper, kazoo
//! or Java run with `--features real-server` (CI installs them); the rest in every `cargo test`.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_zklab");

/// A fresh directory with the checkout's example inputs linked in, removed on drop.
struct Sandbox(PathBuf);

impl Sandbox {
    fn new(test: &str) -> Sandbox {
        let dir = std::env::temp_dir().join(format!("zklab-examples-{test}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for input in ["traces", "conformance", "tests", "scripts"] {
            std::os::unix::fs::symlink(Path::new(env!("CARGO_MANIFEST_DIR")).join(input), dir.join(input)).unwrap();
        }
        Sandbox(dir)
    }

    /// Runs `line` with `sh`, `zklab` on the PATH; its exit code, stdout and stderr.
    fn run(&self, line: &str) -> (Option<i32>, String, String) {
        let bin_dir = Path::new(BIN).parent().unwrap();
        let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
        let out = Command::new("sh").args(["-c", line]).current_dir(&self.0).env("PATH", path).output().unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
    }

    /// Starts `line` (a server that runs until stopped), fetches its page and stops it.
    fn serve(&self, line: &str) -> String {
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
fn needs_a_server(line: &str) -> bool {
    ["zklab real ", "zklab zk-fuzz", "zklab client-check", "--server ", "scripts/"].iter().any(|w| line.contains(w))
}

/// Runs `line` and checks it exits `code`, with output and without an error line.
fn runs_as_written(sandbox: &Sandbox, line: &str, code: i32) {
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
fn examples() -> Vec<(String, String)> {
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

#[test]
fn every_argument_has_help_and_every_subcommand_one_example() {
    let command = <zklab::cli::Cli as clap::CommandFactory>::command();
    for sub in command.get_subcommands() {
        for arg in sub.get_arguments().filter(|a| !["help", "version"].contains(&a.get_id().as_str())) {
            assert!(arg.get_help().is_some(), "`zklab {}`: `{}` has no help text", sub.get_name(), arg.get_id());
        }
    }
    assert_eq!(examples().len(), command.get_subcommands().count());
}

#[test]
fn every_subcommand_s_example_works_as_written() {
    let sandbox = Sandbox::new("help");
    for (name, line) in examples().into_iter().filter(|(_, l)| cfg!(feature = "real-server") || !needs_a_server(l)) {
        runs_as_written(&sandbox, &line, 0);
        if name == "completions" {
            let script = std::fs::read_to_string(sandbox.0.join("zklab.bash")).unwrap();
            assert!(script.contains("_zklab()"), "a bash completion script: {}", &script[..script.len().min(200)]);
        }
    }
}

/// Every `zklab` line of the README's code blocks and the exit code its text promises: 0 a
/// proof, a passing run or a listing; 1 a broken recipe caught (or a kept trace reproduced
/// with its violation, for `--reproduce`, is 0); 3 a run that ends with clients waiting and no
/// deadlock (the queue too long to list: unknown, never violated).
fn readme_commands() -> Vec<(String, i32)> {
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

#[test]
fn every_readme_command_does_what_its_text_says() {
    let sandbox = Sandbox::new("readme");
    let commands = readme_commands();
    let yours = cfg!(feature = "real-server").then(|| zklab::real::Ensemble::start(1).expect("ZooKeeper starts"));
    assert!(commands.len() >= 20, "the README's commands were found: {commands:?}");
    for (line, code) in commands {
        // `tests/manifest.rs` runs the manifest; the completions line writes under $HOME.
        if line.contains("--manifest") || line.contains("completions") {
            continue;
        }
        if needs_a_server(&line) && !cfg!(feature = "real-server") {
            continue;
        }
        // "A real server of yours": one started here stands in for it, at its own address.
        let line = match (line.contains("127.0.0.1:2181"), &yours) {
            (true, Some(server)) => line.replace("127.0.0.1:2181", &server.servers[0]),
            (true, None) => continue,
            (false, _) => line,
        };
        runs_as_written(&sandbox, &line, code);
    }
    // What the HTML line promises: each counterexample's page beside its trace.
    let pages = std::fs::read_dir(sandbox.0.join("zklab-traces")).unwrap();
    assert!(pages
        .filter_map(Result::ok)
        .any(|f| f.path().to_string_lossy().ends_with("blind-retry-n2-no_orphans.html")));
}
