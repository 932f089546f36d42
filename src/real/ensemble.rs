//! A real ZooKeeper to run against: one the user runs (`--server HOST:PORT,...`), or one this
//! module starts from ZooKeeper's own jar, standalone or as a 3-server ensemble on loopback,
//! and stops (kills, and deletes its data) when dropped.
//!
//! ZooKeeper comes from `ZOOKEEPER_CLASSPATH` (a Java classpath), else `ZOOKEEPER_HOME` (an
//! unpacked release, its jars in `lib/`), else Debian's package (`apt-get install zookeeper`),
//! as `scripts/zk-server.sh` finds it. Each server gets its own data directory (with `myid` in
//! an ensemble), free loopback ports, `tickTime=100`, session timeouts from 200 ms to 20 s, and
//! four-letter words (the driver asks `srvr` to know when a server serves and which leads).

use super::lagging::LaggingFollower;
use crate::conformance::fourlw;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The servers of a run: addresses, and the processes when this module started them.
pub struct Ensemble {
    /// HOST:PORT of each server's client port.
    pub servers: Vec<String>,
    processes: Vec<Child>,
    dir: Option<PathBuf>,
    /// How long the servers took to serve (0 for servers the user runs).
    pub started_in: Duration,
    /// In an ensemble started here, server 1 follows through a proxy that can hold it one
    /// write behind the leader (`lagging`).
    pub lagging: Option<LaggingFollower>,
}

/// Which server of an ensemble started here can lag (server 1).
const LAGGING: usize = 0;

/// The server's tick: session timeouts are clamped to [2, 200] ticks by the config below.
pub const TICK_MS: u32 = 100;

/// How long servers may take to serve before the start is called failed.
const PATIENCE: Duration = Duration::from_secs(60);

/// Where ZooKeeper's classes are, or why none was found.
pub fn classpath() -> Result<String, String> {
    if let Ok(cp) = std::env::var("ZOOKEEPER_CLASSPATH") {
        return Ok(cp);
    }
    if let Ok(home) = std::env::var("ZOOKEEPER_HOME") {
        let home = Path::new(&home);
        if !home.join("lib").is_dir() {
            return Err(format!("ZOOKEEPER_HOME={} has no lib/ directory", home.display()));
        }
        return Ok(format!("{}/lib/*:{}/*", home.display(), home.display()));
    }
    let debian = Path::new("/usr/share/java/zookeeper.jar");
    if debian.is_file() {
        // Debian's jar names its dependencies in its manifest.
        return Ok(debian.display().to_string());
    }
    Err("no ZooKeeper found: install Debian's zookeeper package, or set ZOOKEEPER_HOME or ZOOKEEPER_CLASSPATH".into())
}

fn free_port() -> Result<u16, String> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("no free port: {e}"))?;
    Ok(listener.local_addr().map_err(|e| e.to_string())?.port())
}

/// What a server's `srvr` says its mode is (`standalone`, `leader`, `follower`), once it serves.
pub fn mode(server: &str) -> Option<String> {
    let answer = fourlw::ask(server, "srvr").ok()?;
    answer.lines().find_map(|l| l.strip_prefix("Mode: ")).map(|m| m.trim().to_string())
}

/// The zxid a server has applied, as its `srvr` says.
pub fn applied(server: &str) -> Option<i64> {
    let answer = fourlw::ask(server, "srvr").ok()?;
    let zxid = answer.lines().find_map(|l| l.strip_prefix("Zxid: "))?;
    i64::from_str_radix(zxid.trim().trim_start_matches("0x"), 16).ok()
}

/// Waits (a second at most) until `server` has applied `zxid`: a follower applies a committed
/// write a little after the leader.
pub fn wait_applied(server: &str, zxid: i64) -> Result<(), String> {
    let since = Instant::now();
    while applied(server).is_none_or(|z| z < zxid) {
        if since.elapsed() > Duration::from_secs(1) {
            return Err(format!("{server} had not applied zxid {zxid:#x} after a second"));
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    Ok(())
}

impl Ensemble {
    /// Servers the user runs, checked to serve.
    pub fn given(servers: Vec<String>) -> Result<Ensemble, String> {
        for server in &servers {
            if mode(server).is_none() {
                return Err(format!(
                    "{server} does not answer `srvr` as a serving ZooKeeper (is it up, with 4lw.commands.whitelist=*?)"
                ));
            }
        }
        Ok(Ensemble { servers, processes: Vec::new(), dir: None, started_in: Duration::ZERO, lagging: None })
    }

    /// "1 server", "3 servers": how the reports name it.
    pub fn size_text(&self) -> String {
        match self.servers.len() {
            1 => "1 server".to_string(),
            n => format!("{n} servers"),
        }
    }

    /// `start`, tried a second time if the first fails: a port found free can be taken by
    /// another process before the server binds it, and an election can make the lagging
    /// follower the leader. Both are the machine's chance, not the user's input.
    /// `say` is told of the second try.
    pub fn start_patiently(count: usize, say: &dyn Fn(&str)) -> Result<Ensemble, String> {
        Ensemble::start(count).or_else(|first| {
            say(&format!("the servers did not start ({first}): starting them again"));
            Ensemble::start(count).map_err(|second| format!("{second} (and the time before: {first})"))
        })
    }

    /// Starts `count` servers (1: standalone; 3: an ensemble) and waits until each serves.
    pub fn start(count: usize) -> Result<Ensemble, String> {
        let classpath = classpath()?;
        if Command::new("java").arg("-version").stdout(Stdio::null()).stderr(Stdio::null()).status().is_err() {
            return Err("no java on PATH (Debian: apt-get install default-jre-headless)".into());
        }
        let started = Instant::now();
        let dir = super::private::private_dir("real")?;
        let mut ensemble = Ensemble {
            servers: Vec::new(),
            processes: Vec::new(),
            dir: Some(dir.clone()),
            started_in: Duration::ZERO,
            lagging: None,
        };
        let ports: Vec<(u16, u16, u16)> =
            (0..count).map(|_| Ok((free_port()?, free_port()?, free_port()?))).collect::<Result<_, String>>()?;
        if count > 1 {
            // Server 1 dials the others' quorum ports through the proxy. It never leads: a
            // fresh election picks the highest id among a quorum, and any quorum holds another.
            let upstreams: Vec<u16> = ports[1..].iter().map(|(_, quorum, _)| *quorum).collect();
            ensemble.lagging = Some(LaggingFollower::listen(LAGGING, &upstreams)?);
        }
        for (k, (client, _, _)) in ports.iter().enumerate() {
            let data = dir.join(format!("server{}", k + 1));
            std::fs::create_dir_all(&data).map_err(|e| format!("cannot make {}: {e}", data.display()))?;
            let mut cfg = format!(
                "tickTime={TICK_MS}\ninitLimit=50\nsyncLimit=20\nminSessionTimeout=200\nmaxSessionTimeout=20000\n\
                 dataDir={}\nclientPort={client}\nclientPortAddress=127.0.0.1\nmaxClientCnxns=0\n\
                 4lw.commands.whitelist=*\nadmin.enableServer=false\n",
                data.display()
            );
            let main = match count {
                1 => "org.apache.zookeeper.server.ZooKeeperServerMain",
                _ => {
                    std::fs::write(data.join("myid"), format!("{}\n", k + 1)).map_err(|e| e.to_string())?;
                    for (j, (_, quorum, election)) in ports.iter().enumerate() {
                        let quorum = match (&ensemble.lagging, k == LAGGING && j != LAGGING) {
                            (Some(proxy), true) => proxy.ports[j - 1],
                            _ => *quorum,
                        };
                        cfg.push_str(&format!("server.{}=127.0.0.1:{quorum}:{election}\n", j + 1));
                    }
                    "org.apache.zookeeper.server.quorum.QuorumPeerMain"
                }
            };
            let cfg_path = data.join("zoo.cfg");
            std::fs::write(&cfg_path, cfg).map_err(|e| format!("cannot write {}: {e}", cfg_path.display()))?;
            let log = std::fs::File::create(data.join("server.log")).map_err(|e| e.to_string())?;
            let child = super::children::spawn(
                Command::new("java")
                    .args(["-Xmx256m", "-cp", &classpath, main])
                    .arg(&cfg_path)
                    .stdin(Stdio::null())
                    .stdout(log.try_clone().map_err(|e| e.to_string())?)
                    .stderr(log),
            )
            .map_err(|e| format!("cannot start java: {e}"))?;
            ensemble.processes.push(child);
            ensemble.servers.push(format!("127.0.0.1:{client}"));
        }
        let serving = |s: &String| matches!(mode(s).as_deref(), Some("standalone" | "leader" | "follower"));
        while !ensemble.servers.iter().all(serving) {
            for (k, p) in ensemble.processes.iter_mut().enumerate() {
                if let Ok(Some(status)) = p.try_wait() {
                    let log = dir.join(format!("server{}/server.log", k + 1));
                    let tail = std::fs::read_to_string(&log).unwrap_or_default();
                    // Its error, else the last thing it said.
                    let last = tail.lines().rev().find(|l| l.contains("ERROR"));
                    let last = last.or(tail.lines().rev().find(|l| !l.trim().is_empty())).unwrap_or("").to_string();
                    return Err(format!("ZooKeeper server {} exited ({status}) before serving: {last}", k + 1));
                }
            }
            if started.elapsed() > PATIENCE {
                return Err(format!("ZooKeeper did not serve within {} s", PATIENCE.as_secs()));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        ensemble.started_in = started.elapsed();
        if ensemble.lagging.is_some() && ensemble.leader() == Some(LAGGING) {
            return Err("server 1 was elected leader, so it cannot be the lagging follower: start again".into());
        }
        Ok(ensemble)
    }

    /// The server that leads (or the only one), if any says so.
    pub fn leader(&self) -> Option<usize> {
        self.servers.iter().position(|s| matches!(mode(s).as_deref(), Some("leader" | "standalone")))
    }

    /// Where the leader keeps its transaction log, with ZooKeeper's classpath (servers started
    /// here only).
    pub fn txn_log(&self) -> Option<(String, PathBuf)> {
        let dir = self.dir.as_ref()?;
        let leader = self.leader()?;
        Some((classpath().ok()?, dir.join(format!("server{}", leader + 1))))
    }

    /// The servers' directory (configs, data, logs), when this module started them.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }
}

impl Drop for Ensemble {
    fn drop(&mut self) {
        for p in &mut self.processes {
            let _ = p.kill();
            let _ = p.wait();
        }
        if let Some(dir) = &self.dir {
            // `ZKLAB_REAL_KEEP` keeps the servers' configs, data and logs (the command line says
            // where).
            if std::env::var_os("ZKLAB_REAL_KEEP").is_none() {
                let _ = std::fs::remove_dir_all(dir);
            }
            super::children::disown_dir(dir);
        }
    }
}
