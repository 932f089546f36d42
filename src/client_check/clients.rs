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
    /// go-zookeeper's `zk.Lock`, driven by scripts/real-clients/go_lock.go (built once a
    /// campaign with Debian's Go and golang-github-samuel-go-zookeeper-dev).
    Go,
    /// A lock written on node-zookeeper-client as ZooKeeper's recipes page describes it,
    /// scripts/real-clients/node_lock.js.
    Node,
    /// Curator 5's `InterProcessMutex` (Debian libcurator-recipes-java), driven by
    /// scripts/real-clients/CuratorMutex.java, compiled once a campaign.
    Curator,
    /// ZooKeeper's own lock recipe, `org.apache.zookeeper.recipes.lock.WriteLock` (the
    /// zookeeper-recipes-lock artifact), driven by scripts/real-clients/ZkWriteLock.java.
    WriteLock,
    /// A shell command: it gets the protocol's arguments appended.
    Command(String),
}

/// The built-in libraries, by the names `--library` takes.
pub const LIBRARIES: [&str; 6] = ["kazoo", "kazoo-listening", "go", "node", "curator", "writelock"];

impl ClientProgram {
    /// A built-in library by name; an unknown name is refused, naming those there are.
    pub fn library(name: &str) -> Result<Self, String> {
        match name {
            "kazoo" => Ok(ClientProgram::Kazoo),
            "kazoo-listening" => Ok(ClientProgram::KazooListening),
            "go" => Ok(ClientProgram::Go),
            "node" => Ok(ClientProgram::Node),
            "curator" => Ok(ClientProgram::Curator),
            "writelock" => Ok(ClientProgram::WriteLock),
            other => Err(format!("unknown library `{other}` for client-check: {}", LIBRARIES.join(", "))),
        }
    }

    pub fn name(&self) -> String {
        match self {
            ClientProgram::Kazoo => "kazoo".to_string(),
            ClientProgram::KazooListening => "kazoo-listening".to_string(),
            ClientProgram::Go => "go".to_string(),
            ClientProgram::Node => "node".to_string(),
            ClientProgram::Curator => "curator".to_string(),
            ClientProgram::WriteLock => "writelock".to_string(),
            ClientProgram::Command(cmd) => cmd.clone(),
        }
    }

    /// Whether the machine has what a built-in driver needs, or what to install.
    pub fn available(&self) -> Result<(), String> {
        match self {
            ClientProgram::Kazoo | ClientProgram::KazooListening => crate::real::libraries::Library::Kazoo.available(),
            ClientProgram::Go => {
                let go = Command::new("go").arg("version").stdout(Stdio::null()).stderr(Stdio::null()).status();
                if !go.is_ok_and(|s| s.success()) {
                    return Err("no Go on the PATH (Debian: apt-get install golang-go)".into());
                }
                match std::path::Path::new(GO_LOCK_SOURCE).is_file() {
                    true => Ok(()),
                    false => Err(format!(
                        "no {GO_LOCK_SOURCE} (Debian: apt-get install golang-github-samuel-go-zookeeper-dev)"
                    )),
                }
            }
            ClientProgram::Node => {
                let found = Command::new("node")
                    .args(["-e", "require('node-zookeeper-client')"])
                    .env("NODE_PATH", node_path())
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status();
                match found.is_ok_and(|s| s.success()) {
                    true => Ok(()),
                    false => Err("node cannot load node-zookeeper-client (Debian: apt-get install nodejs npm; then \
                        npm install -g node-zookeeper-client@1.1.3)"
                        .into()),
                }
            }
            ClientProgram::Curator => {
                crate::real::libraries::Library::Curator.available()?;
                javac_available()
            }
            ClientProgram::WriteLock => {
                crate::real::ensemble::classpath()?;
                match std::path::Path::new(WRITE_LOCK_JAR).is_file() {
                    true => javac_available(),
                    false => Err(format!("no {WRITE_LOCK_JAR} (Debian: apt-get install libzookeeper-java)")),
                }
            }
            ClientProgram::Command(_) => Ok(()),
        }
    }

    /// The command that starts one client, what it needs written (or built) into `dir` once:
    /// again whenever what is there is not this build's driver (a directory a caller reuses
    /// across an upgrade of zklab).
    fn command(&self, dir: &std::path::Path, args: &[String]) -> Result<Command, String> {
        let write = |name: &str, text: &str| {
            let path = dir.join(name);
            written(&path, text).map(|_| path)
        };
        Ok(match self {
            ClientProgram::Kazoo | ClientProgram::KazooListening => {
                let mut c = Command::new(PYTHON);
                c.arg(write("kazoo_lock.py", KAZOO_CLIENT)?).args(args);
                if *self == ClientProgram::KazooListening {
                    c.env("ZKLAB_HEED_LOSS", "1");
                }
                c
            }
            ClientProgram::Go => {
                let binary = dir.join("go_lock");
                let source = dir.join("go_lock.go");
                if written(&source, GO_CLIENT)? || !binary.is_file() {
                    let built = Command::new("go")
                        .arg("build")
                        .arg("-o")
                        .arg(&binary)
                        .arg(&source)
                        .env("GOPATH", "/usr/share/gocode")
                        .env("GO111MODULE", "off")
                        .env("GOCACHE", dir.join("gocache"))
                        .output()
                        .map_err(|e| format!("cannot run go build: {e}"))?;
                    if !built.status.success() {
                        let why = String::from_utf8_lossy(&built.stderr);
                        return Err(format!("go build of the go driver failed: {}", why.lines().next().unwrap_or("")));
                    }
                }
                let mut c = Command::new(binary);
                c.args(args);
                c
            }
            ClientProgram::Node => {
                let mut c = Command::new("node");
                c.arg(write("node_lock.js", NODE_CLIENT)?).args(args).env("NODE_PATH", node_path());
                c
            }
            ClientProgram::Curator => {
                let classpath = crate::real::libraries::curator_classpath()?;
                java(dir, "CuratorMutex", CURATOR_CLIENT, &classpath, args)?
            }
            ClientProgram::WriteLock => {
                let classpath = format!("{}:{WRITE_LOCK_JAR}", crate::real::ensemble::classpath()?);
                java(dir, "ZkWriteLock", WRITE_LOCK_CLIENT, &classpath, args)?
            }
            ClientProgram::Command(cmd) => {
                let mut c = Command::new("sh");
                c.arg("-c").arg(format!("exec {cmd} \"$@\"")).arg("zklab-client").args(args);
                c
            }
        })
    }
}

const PYTHON: &str = "/usr/bin/python3";
const KAZOO_CLIENT: &str = include_str!("../../scripts/real-clients/kazoo_lock.py");
const GO_CLIENT: &str = include_str!("../../scripts/real-clients/go_lock.go");
const NODE_CLIENT: &str = include_str!("../../scripts/real-clients/node_lock.js");
const CURATOR_CLIENT: &str = include_str!("../../scripts/real-clients/CuratorMutex.java");
const WRITE_LOCK_CLIENT: &str = include_str!("../../scripts/real-clients/ZkWriteLock.java");
/// ZooKeeper's lock recipe, as Debian installs it.
const WRITE_LOCK_JAR: &str = "/usr/share/java/zookeeper-recipes-lock.jar";

/// Writes `text` to `path` unless it already holds it; whether it was written.
fn written(path: &std::path::Path, text: &str) -> Result<bool, String> {
    if std::fs::read_to_string(path).is_ok_and(|was| was == text) {
        return Ok(false);
    }
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(true)
}

fn javac_available() -> Result<(), String> {
    let javac = Command::new("javac").arg("-version").stdout(Stdio::null()).stderr(Stdio::null()).status();
    match javac.is_ok_and(|s| s.success()) {
        true => Ok(()),
        false => Err("no JDK (javac) on the PATH (Debian: apt-get install default-jdk-headless)".into()),
    }
}

/// A Java driver `class` (its source `text`), compiled into `dir` once a campaign, and the
/// command that runs it: a JVM that starts fast and compiles little, as the JIT's compiler
/// threads are work the quiet test has to wait out. The classes are compiled again whenever
/// the source beside them is not this build's (a directory reused across an upgrade).
fn java(dir: &std::path::Path, class: &str, text: &str, classpath: &str, args: &[String]) -> Result<Command, String> {
    let classes = dir.join(format!("{class}-classes"));
    let source = dir.join(format!("{class}.java"));
    if written(&source, text)? || !classes.join(format!("{class}.class")).is_file() {
        let built = Command::new("javac")
            .args(["-nowarn", "-cp", classpath, "-d"])
            .arg(&classes)
            .arg(&source)
            .output()
            .map_err(|e| format!("cannot run javac: {e}"))?;
        if !built.status.success() {
            let why = String::from_utf8_lossy(&built.stderr);
            return Err(format!("javac of {class}.java failed: {}", why.lines().next().unwrap_or("")));
        }
    }
    let mut c = Command::new("java");
    c.args(["-Xmx128m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xshare:auto", "-cp"])
        .arg(format!("{}:{classpath}", classes.display()))
        .arg(class)
        .args(args);
    Ok(c)
}
/// go-zookeeper's lock, as Debian installs it.
const GO_LOCK_SOURCE: &str = "/usr/share/gocode/src/github.com/samuel/go-zookeeper/zk/lock.go";

/// Where node looks for node-zookeeper-client: the user's NODE_PATH, then npm's global root.
fn node_path() -> String {
    static PATH: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    PATH.get_or_init(|| {
        let global = Command::new("npm")
            .args(["root", "-g"])
            .stderr(Stdio::null())
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_default();
        let mine = std::env::var("NODE_PATH").unwrap_or_default();
        [mine, global].into_iter().filter(|p| !p.is_empty()).collect::<Vec<_>>().join(":")
    })
    .clone()
}

/// What every client is told: the lock, its session timeout, its rounds, how it holds.
#[derive(Clone, Debug)]
pub struct Task {
    pub lock_path: String,
    pub session_timeout_ms: u32,
    pub rounds: u32,
    /// -1: a hold is one round trip to the server (no timer, so a schedule replays).
    pub hold_ms: i64,
    /// The lock's parent node is made before the clients start, as in the checker's worlds
    /// (otherwise the first client to lock makes it).
    pub lock_made: bool,
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
        for (i, addr) in addrs.iter().enumerate() {
            let args = [
                addr.to_string(),
                task.lock_path.clone(),
                task.session_timeout_ms.to_string(),
                task.rounds.to_string(),
                task.hold_ms.to_string(),
            ];
            let mut command = program.command(dir, &args)?;
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
        self.say("go");
    }

    /// Writes `line` to every client's stdin.
    pub fn say(&mut self, line: &str) {
        for stdin in self.stdins.iter_mut().flatten() {
            let _ = stdin.write_all(format!("{line}\n").as_bytes());
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_driver_is_written_again_only_when_what_is_there_is_another() {
        let dir = std::env::temp_dir().join(format!("zklab-written-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("driver.py");
        assert!(written(&path, "new").unwrap(), "nothing there: written");
        assert!(!written(&path, "new").unwrap(), "the same driver: left alone");
        std::fs::write(&path, "an older zklab's driver").unwrap();
        assert!(written(&path, "new").unwrap(), "another driver: written again");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        std::fs::remove_dir_all(&dir).ok();
    }
}
