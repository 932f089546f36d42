//! The client processes of a run: the user's command (or a built-in driver of a library's lock)
//! started once per client, each told its own port, reporting what it does on stdout in the
//! line protocol of `scripts/real-clients/` (docs/your-lock.md).

use super::wiring::{self, Heard};
use std::io::Write;
use std::net::SocketAddr;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::Sender;

/// What runs as each client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClientProgram {
    /// kazoo 2.8's `Lock`, driven by scripts/real-clients/kazoo_lock.py.
    Kazoo,
    /// The same, with a connection listener that stops believing it holds on SUSPENDED or LOST,
    /// as kazoo's docs advise.
    KazooListening,
    /// A shell command: it gets the protocol's arguments appended.
    Command(String),
}

impl ClientProgram {
    pub fn name(&self) -> String {
        match self {
            ClientProgram::Kazoo => "kazoo".to_string(),
            ClientProgram::KazooListening => "kazoo-listening".to_string(),
            ClientProgram::Command(cmd) => cmd.clone(),
        }
    }
}

const PYTHON: &str = "/usr/bin/python3";
const KAZOO_CLIENT: &str = include_str!("../../scripts/real-clients/kazoo_lock.py");

/// What every client is told: the lock, its session timeout, its rounds, how it holds.
#[derive(Clone, Debug)]
pub struct Task {
    pub lock_path: String,
    pub session_timeout_ms: u32,
    pub rounds: u32,
    /// -1: a hold is one round trip to the server (no timer, so a schedule replays).
    pub hold_ms: i64,
}

/// The running client processes.
pub struct Clients {
    children: Vec<Child>,
    stdins: Vec<Option<ChildStdin>>,
    _dir: Option<std::path::PathBuf>,
}

impl Clients {
    /// Starts one process per address, its stdout heard as lines.
    pub fn start(
        program: &ClientProgram,
        addrs: &[SocketAddr],
        task: &Task,
        dir: &std::path::Path,
        heard: &Sender<Heard>,
    ) -> Result<Clients, String> {
        let mut children = Vec::new();
        let mut stdins = Vec::new();
        let script = match program {
            ClientProgram::Kazoo | ClientProgram::KazooListening => {
                let path = dir.join("kazoo_lock.py");
                std::fs::write(&path, KAZOO_CLIENT).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
                Some(path)
            }
            ClientProgram::Command(_) => None,
        };
        for (i, addr) in addrs.iter().enumerate() {
            let args = [
                addr.to_string(),
                task.lock_path.clone(),
                task.session_timeout_ms.to_string(),
                task.rounds.to_string(),
                task.hold_ms.to_string(),
            ];
            let mut command = match (program, &script) {
                (ClientProgram::Kazoo | ClientProgram::KazooListening, Some(script)) => {
                    let mut c = Command::new(PYTHON);
                    c.arg(script).args(&args);
                    if *program == ClientProgram::KazooListening {
                        c.env("ZKLAB_HEED_LOSS", "1");
                    }
                    c
                }
                (ClientProgram::Command(cmd), _) => {
                    let mut c = Command::new("sh");
                    c.arg("-c").arg(format!("exec {cmd} \"$@\"")).arg("zklab-client").args(&args);
                    c
                }
                (ClientProgram::Kazoo | ClientProgram::KazooListening, None) => {
                    unreachable!("the script is written above")
                }
            };
            command
                .env("ZKLAB_HOSTS", addr.to_string())
                .env("ZKLAB_CLIENT", i.to_string())
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::null());
            let mut child = crate::real::children::spawn(&mut command)
                .map_err(|e| format!("cannot start client {i} ({}): {e}", program.name()))?;
            let out = child.stdout.take().expect("piped");
            wiring::lines(i, out, heard.clone());
            stdins.push(child.stdin.take());
            children.push(child);
        }
        Ok(Clients { children, stdins, _dir: None })
    }

    pub fn pids(&self) -> Vec<u32> {
        self.children.iter().map(Child::id).collect()
    }

    /// Tells every client to go (the protocol's first stdin line).
    pub fn go(&mut self) {
        for stdin in self.stdins.iter_mut().flatten() {
            let _ = stdin.write_all(b"go\n");
            let _ = stdin.flush();
        }
    }

    /// Whether client `i`'s process has exited.
    pub fn exited(&mut self, i: usize) -> bool {
        self.children[i].try_wait().ok().flatten().is_some()
    }
}

impl Drop for Clients {
    fn drop(&mut self) {
        for child in &mut self.children {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
