//! Real client libraries as clients (`zklab real --library kazoo|curator`): kazoo's `Lock` and
//! Curator's `InterProcessMutex`, unchanged, each client its own process through its own proxy
//! (`frame_proxy`), under the seed's fault plan, judged from the history they report
//! (`history`). The clients are small programs in scripts/real-clients/, built into the binary
//! and written out for each run.
//!
//! Where the faults strike (a point of a client's lock work, drawn) and what became of each is
//! `fault_ledger`'s. The faults, as real actions:
//! - `loss-before-apply`, `loss-after-apply`: drawn (at the run's rates) each time a client
//!   says it is about to acquire; the proxy then drops its next create, or swallows the
//!   create's reply and drops the connection after it;
//! - `disconnect`: the proxy cuts the connection and lets the library back after a back-off;
//! - `expire`: the proxy cuts it and keeps it cut; at the drawn moment the driver opens the
//!   session (its id and password, as the client reported them) and closes it: the
//!   `closeSession` an expiry is; then the library is let back, and learns it;
//! - `crash`: the process is killed; its session is closed the same way at the drawn moment;
//! - `pause`: the process is stopped (SIGSTOP) for the drawn length, its connection left to
//!   time out on the server's own clock (SIGCONT after).

use super::clock::monotonic_ns;
use super::connection::{Arrival, Connection};
use super::driver::{call, delete_tree};
use super::ensemble::TICK_MS;
use super::fault_ledger::{Ledger, Strike};
use super::faults::close;
use super::frame_proxy::FrameProxy;
use super::history::{judge, Event, Finding, Said, Tally};
use super::jute;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};
use zklab_model::{CreateMode, FaultKind, Request, Response, ZkError};
use zklab_sim::{
    between, draw_loss, draw_pause, fault_streams, planned_faults, Anchors, SessionTiming, SimConfig, Streams,
};

/// A real client library.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Library {
    Kazoo,
    Curator,
}

impl Library {
    pub fn parse(name: &str) -> Option<Library> {
        match name {
            "kazoo" => Some(Library::Kazoo),
            "curator" => Some(Library::Curator),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Library::Kazoo => "kazoo",
            Library::Curator => "curator",
        }
    }

    /// The zklab recipe that models this library's lock.
    pub fn model(self) -> &'static str {
        match self {
            Library::Kazoo => "kazoo-lock",
            Library::Curator => "curator-mutex",
        }
    }

    /// The faults a library run can make happen.
    pub fn drives(kind: FaultKind) -> bool {
        matches!(
            kind,
            FaultKind::LossBeforeApply
                | FaultKind::LossAfterApply
                | FaultKind::Disconnect
                | FaultKind::Expire
                | FaultKind::Crash
                | FaultKind::Pause
        )
    }

    /// Whether this machine can run the library's clients, or why not.
    pub fn available(self) -> Result<(), String> {
        match self {
            Library::Kazoo => {
                let ok = Command::new(PYTHON).args(["-c", "import kazoo"]).stderr(Stdio::null()).status();
                ok.ok()
                    .filter(|s| s.success())
                    .map(|_| ())
                    .ok_or_else(|| format!("{PYTHON} has no kazoo (Debian: apt-get install python3-kazoo)"))
            }
            Library::Curator => {
                let missing = CURATOR_JARS.iter().find(|j| !std::path::Path::new(j).is_file());
                match missing {
                    Some(jar) => Err(format!("no {jar} (Debian: apt-get install libcurator-recipes-java)")),
                    None => Ok(()),
                }
            }
        }
    }

    /// The command that runs one client, its program written into `dir`.
    fn command(self, dir: &std::path::Path, args: &[String]) -> Result<Command, String> {
        let write = |name: &str, text: &str| {
            let path = dir.join(name);
            std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            Ok::<_, String>(path)
        };
        Ok(match self {
            Library::Kazoo => {
                let script = write("kazoo_lock.py", KAZOO_CLIENT)?;
                let mut c = Command::new(PYTHON);
                c.arg(script).args(args);
                c
            }
            Library::Curator => {
                let source = write("CuratorMutex.java", CURATOR_CLIENT)?;
                let classpath = curator_classpath()?;
                let mut c = Command::new("java");
                c.args(["-Xmx128m", "-cp", &classpath]).arg(source).args(args);
                c
            }
        })
    }
}

/// ZooKeeper's client and Curator's jars, as a java classpath.
pub fn curator_classpath() -> Result<String, String> {
    Ok(format!("{}:{}", super::ensemble::classpath()?, CURATOR_JARS.join(":")))
}

const PYTHON: &str = "/usr/bin/python3";
const CURATOR_JARS: [&str; 3] = [
    "/usr/share/java/curator-client.jar",
    "/usr/share/java/curator-framework.jar",
    "/usr/share/java/curator-recipes.jar",
];
const KAZOO_CLIENT: &str = include_str!("../../scripts/real-clients/kazoo_lock.py");
const CURATOR_CLIENT: &str = include_str!("../../scripts/real-clients/CuratorMutex.java");

/// A library run's result.
pub struct LibraryRun {
    pub events: Vec<Event>,
    pub findings: Vec<Finding>,
    pub tally: Tally,
    /// Every fault of the run: where it struck, or why it never did.
    pub faults: Vec<Strike>,
    pub wall_ms: u64,
    pub interrupted: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Action {
    Fault(FaultKind, usize),
    Heal(usize),
    CloseSession(usize),
    Resume(usize),
}

struct Client {
    process: Child,
    proxy: FrameProxy,
    server: String,
    session: Option<(i64, Vec<u8>)>,
    finished: bool,
    dead: bool,
}

/// Runs `clients` clients of `library` on `servers` under `chroot` as `config` plans.
pub fn run_library(
    config: &SimConfig,
    library: Library,
    clients: usize,
    servers: &[String],
    chroot: &str,
    stop: Option<&AtomicBool>,
) -> Result<LibraryRun, String> {
    let timing = SessionTiming::new(config.world.session_timeout_ms, TICK_MS);
    // The set-up's and the end's own sessions (a run may outlast an idle session).
    let admin = || {
        let (tx, rx) = channel();
        Connection::open(&servers[0], (0, &[]), 0, 10_000, (tx, usize::MAX, 0))
            .map(|c| (c, rx))
            .map_err(|e| e.to_string())
    };
    let (mut set_up, rx) = admin()?;
    for path in ancestors(chroot).chain([format!("{chroot}{}", config.world.lock_path)]) {
        match call(&mut set_up, &rx, &Request::create(&path, CreateMode::Persistent), "")?.1 {
            Ok(_) | Err(ZkError::NodeExists) => {}
            Err(e) => return Err(format!("creating {path}: {e}")),
        }
    }
    let _ = set_up.send(|xid| jute::bare_request(xid, jute::op::CLOSE_SESSION));
    let dir = super::private::private_dir("real-clients")?;
    let (lines_tx, lines) = channel::<(usize, String)>();
    let mut all = Vec::new();
    for i in 0..clients {
        let server = servers[i % servers.len()].clone();
        let proxy = FrameProxy::start(&server)?;
        let args = [
            format!("{}{chroot}", proxy.address),
            config.world.lock_path.clone(),
            config.world.session_timeout_ms.to_string(),
            config.world.rounds.to_string(),
            (config.hold_us / 1000).to_string(),
        ];
        let mut process = super::children::spawn(
            library.command(&dir, &args)?.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()),
        )
        .map_err(|e| format!("cannot start a {} client: {e}", library.name()))?;
        let stdout = process.stdout.take().expect("piped");
        let to = lines_tx.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if to.send((i, line)).is_err() {
                    return;
                }
            }
        });
        all.push(Client { process, proxy, server, session: None, finished: false, dead: false });
    }
    let mut run = Run {
        config,
        timing,
        clients: all,
        start_ns: monotonic_ns(),
        events: Vec::new(),
        ledger: Ledger::new(clients, Anchors::new(clients)),
        queue: BTreeMap::new(),
        order: 0,
        fault_streams: fault_streams(config.seed),
        streams: Streams::new(config.seed),
    };
    // The plan's clock starts once every client has its session (a JVM takes a second).
    let ready = Instant::now();
    while run.clients.iter().any(|c| c.session.is_none()) {
        if ready.elapsed() > Duration::from_secs(60) {
            return Err(format!("a {} client did not connect within 60 s", library.name()));
        }
        if let Ok((i, line)) = lines.recv_timeout(Duration::from_millis(10)) {
            run.heard(i, &line);
        }
    }
    run.start_ns = monotonic_ns();
    for e in &mut run.events {
        e.at_us = 0;
    }
    for c in &mut run.clients {
        if let Some(stdin) = c.process.stdin.as_mut() {
            let _ = stdin.write_all(b"go\n").and_then(|_| stdin.flush());
        }
    }
    // The rates' client faults strike at a point of their client's lock work; a schedule's at
    // its moment (`zklab_sim::Anchors`). A library's run drives no server event (`Library::drives`).
    let (timed, anchors) = planned_faults(config, clients, &mut run.fault_streams);
    run.ledger = Ledger::new(clients, anchors);
    for (at, kind, client) in timed {
        run.push(at, Action::Fault(kind, client as usize));
    }
    let interrupted = run.go(&lines, stop);
    let (mut admin, rx) = admin()?;
    let left = match run.clients.iter().all(|c| c.finished || c.dead) {
        true => match call(
            &mut admin,
            &rx,
            &Request::get_children(&format!("{chroot}{}", config.world.lock_path), false),
            "",
        )?
        .1
        {
            Ok(Response::Children { children, .. }) => Some(children.names().map(str::to_string).collect::<Vec<_>>()),
            _ => None,
        },
        false => None,
    };
    for c in &mut run.clients {
        if let Some(stdin) = c.process.stdin.as_mut() {
            let _ = stdin.write_all(b"stop\n");
        }
    }
    let patience = Instant::now();
    for c in &mut run.clients {
        let _ = Command::new("kill").arg("-CONT").arg(c.process.id().to_string()).status();
        while matches!(c.process.try_wait(), Ok(None)) && patience.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = c.process.kill();
        let _ = c.process.wait();
    }
    for _ in 0..20 {
        if delete_tree(&mut admin, &rx, chroot).is_ok() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = admin.send(|xid| jute::bare_request(xid, jute::op::CLOSE_SESSION));
    let _ = std::fs::remove_dir_all(&dir);
    super::children::disown_dir(&dir);
    run.events.sort_by_key(|e| e.at_us);
    let (findings, tally) = judge(&run.events, clients, left.as_deref());
    let wall_ms = run.now_us() / 1000;
    let struck: Vec<usize> = run.clients.iter().map(|c| c.proxy.struck().len()).collect();
    run.ledger.close(|i| struck[i]);
    Ok(LibraryRun { events: run.events, findings, tally, faults: run.ledger.strikes, wall_ms, interrupted })
}

/// `/a`, `/a/b` for `/a/b/c`: the nodes above a chroot, and the chroot itself.
fn ancestors(chroot: &str) -> impl Iterator<Item = String> + '_ {
    chroot.match_indices('/').skip(1).map(|(k, _)| chroot[..k].to_string()).chain([chroot.to_string()])
}

struct Run<'a> {
    config: &'a SimConfig,
    timing: SessionTiming,
    clients: Vec<Client>,
    /// When the plan's clock started, on the clock the clients stamp their lines with.
    start_ns: u64,
    events: Vec<Event>,
    ledger: Ledger,
    queue: BTreeMap<(u64, u64), Action>,
    order: u64,
    fault_streams: Vec<rand_chacha::ChaCha8Rng>,
    streams: Streams,
}

impl Run<'_> {
    fn now_us(&self) -> u64 {
        self.since_start_us(monotonic_ns())
    }

    /// A stamp of the one clock as µs into the run (0 for one before it began).
    fn since_start_us(&self, ns: u64) -> u64 {
        ns.saturating_sub(self.start_ns) / 1000
    }

    fn push(&mut self, at_us: u64, action: Action) {
        self.order += 1;
        self.queue.insert((at_us, self.order), action);
    }

    /// The run's loop, until every client is done or dead and nothing is planned, or the
    /// deadline; whether Ctrl-C stopped it.
    fn go(&mut self, lines: &Receiver<(usize, String)>, stop: Option<&AtomicBool>) -> bool {
        // The simulator's deadline, and half a minute for a library's own retry sleeps.
        let deadline = self.config.heal_deadline_us(self.clients.len(), &self.timing) + 30_000_000;
        loop {
            if stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
                return true;
            }
            let settled = self.clients.iter().all(|c| c.finished || c.dead);
            if (settled && self.queue.is_empty()) || self.now_us() > deadline {
                return false;
            }
            if let Ok((i, line)) = lines.recv_timeout(Duration::from_millis(10)) {
                self.heard(i, &line);
            }
            while let Some((&key, _)) = self.queue.iter().next() {
                if key.0 > self.now_us() {
                    break;
                }
                let action = self.queue.remove(&key).expect("just seen");
                self.act(action);
            }
        }
    }

    fn heard(&mut self, i: usize, line: &str) {
        let Some((stamp_ns, said)) = Said::parse_stamped(line) else { return };
        // Where the client now is, and the anchored faults due at this point of its lock work.
        let in_chaos = self.now_us() < self.config.chaos_us;
        let due = self.ledger.heard(i, &said, in_chaos);
        match &said {
            Said::Session(id, password) => self.clients[i].session = Some((*id, password.clone())),
            Said::Done => self.clients[i].finished = true,
            Said::Acquiring if self.now_us() < self.config.chaos_us && !self.clients[i].proxy.armed() => {
                // The create the acquisition is about to send may be lost, as the rates draw.
                if let Some(kind) =
                    draw_loss(self.config, &mut self.fault_streams).filter(|k| Library::drives(k.kind()))
                {
                    self.clients[i].proxy.arm(kind.kind());
                    let now = self.now_us();
                    self.ledger.struck(kind.kind(), i, now);
                }
            }
            _ => {}
        }
        for kind in due {
            let now = self.now_us();
            self.push(now, Action::Fault(kind, i));
        }
        let at_us = self.since_start_us(stamp_ns);
        self.events.push(Event { at_us, client: i, said });
    }

    fn act(&mut self, action: Action) {
        let now = self.now_us();
        match action {
            Action::Fault(kind, i) => {
                let c = &mut self.clients[i];
                if c.dead || c.finished || !Library::drives(kind) {
                    let why = match (c.dead, c.finished) {
                        (true, _) => "its client had died",
                        (_, true) => "its client had finished",
                        _ => "the library's run cannot make it",
                    };
                    self.ledger.missed(kind, i, why);
                    return;
                }
                if matches!(kind, FaultKind::LossBeforeApply | FaultKind::LossAfterApply) {
                    c.proxy.arm(kind);
                    self.ledger.struck(kind, i, now);
                    return;
                }
                self.ledger.struck(kind, i, now);
                let (lo, hi) = self.timing.expiry_window();
                match kind {
                    FaultKind::Disconnect => {
                        c.proxy.cut();
                        let back = between(&mut self.streams.network, 20_000, 200_000);
                        self.push(now + back, Action::Heal(i));
                    }
                    FaultKind::Expire => {
                        c.proxy.cut();
                        let at = now + between(&mut self.fault_streams[kind.index()], lo, hi);
                        self.push(at, Action::CloseSession(i));
                    }
                    FaultKind::Crash => {
                        let _ = c.process.kill();
                        c.dead = true;
                        // Stamped once the kill is sent: a line stamped before it is the living
                        // process's.
                        let died = self.now_us();
                        self.events.push(Event { at_us: died, client: i, said: Said::Died });
                        let at = now + between(&mut self.fault_streams[kind.index()], lo, hi);
                        self.push(at, Action::CloseSession(i));
                    }
                    FaultKind::Pause => {
                        let _ = Command::new("kill").arg("-STOP").arg(c.process.id().to_string()).status();
                        let (length, _) = draw_pause(&self.timing, &mut self.fault_streams[kind.index()]);
                        self.push(now + length, Action::Resume(i));
                    }
                    _ => {}
                }
            }
            Action::Heal(i) => self.clients[i].proxy.heal(),
            Action::Resume(i) => {
                let _ = Command::new("kill").arg("-CONT").arg(self.clients[i].process.id().to_string()).status();
            }
            Action::CloseSession(i) => {
                // The session, taken over from a second connection and closed: an exact expiry.
                let c = &self.clients[i];
                if let Some((id, password)) = c.session.clone() {
                    let (tx, rx) = channel::<Arrival>();
                    let timeout = self.config.world.session_timeout_ms;
                    if let Ok(mut keeper) =
                        Connection::open(&c.server, (id, &password), 0, timeout, (tx, usize::MAX, 0))
                    {
                        if keeper.timeout_ms > 0 {
                            let _ = close(&mut keeper, &rx);
                        }
                    }
                }
                self.clients[i].proxy.heal();
            }
        }
    }
}
