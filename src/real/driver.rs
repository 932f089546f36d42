//! The real run: the same recipe state machines as the checker and the simulator, each a client
//! of a real ZooKeeper over its own connection, driven by the simulator's workload and fault
//! plan (the same seed draws the same moments), and followed step by step by the model world of
//! `shadow`, which judges it.
//!
//! The driver plays the client library (`library`) and makes faults happen exactly where the
//! model places them (`faults`); this file holds the run: its set-up, the workload and fault
//! plan drawn from the seed as the simulator draws them, the loop, and the clean-up.

use super::client::RealClient;
use super::connection::{Arrival, Connection, Frame};
use super::jute::{self, Reader};
use super::lagging::LaggingFollower;
use super::shadow::{Shadow, ShadowStep, Standing};
use super::unify::Unify;
use super::wire_log::{WireEntry, WireLog};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};
use zklab_model::world::{Link, Sending};
use zklab_model::{
    Belief, ClientBehaviour, ClientId, ClientWatches, FaultBudget, FaultKind, Input, Property, Recipe, Request,
    SessionId, Step, World, ZkError, ZkResult,
};
use zklab_sim::{between, fault_streams, planned_faults, Anchors, Broken, Ending, SessionTiming, SimConfig, Streams};

/// A real run's result.
pub struct RealRun<R> {
    /// The model world as the shadow left it.
    pub world: World<R>,
    pub steps: Vec<Step>,
    pub times_us: Vec<u64>,
    pub standing: Standing,
    pub metrics: RealMetrics,
    /// Stopped by Ctrl-C before its end: nothing was judged at its end.
    pub interrupted: bool,
    /// The faults the run used, by kind (a trace's world allows exactly these).
    pub faults_used: FaultBudget,
    /// The model world the run started from, and where it diverged on an answer, the exchange.
    pub start: World<R>,
    /// How many of the run's writes the committed transaction log showed as the model's, or
    /// why it could not be read (`None`: servers this command did not start).
    pub ground_truth: Option<Result<usize, String>>,
    /// The run's wire log (`wire_log`).
    pub wire: Vec<WireEntry>,
    pub exchange: Option<super::shadow::Exchange>,
    /// The first step that woke a herd, if one did (its trace ends there).
    pub herd: Option<super::shadow::Herd>,
    /// Every fault of the plan: where its client was when it struck, or why it did not.
    pub strikes: Vec<super::fault_ledger::Strike>,
    /// A steered run only (`Target::script`): what arrived for a client after the last step,
    /// once the wire fell quiet, and no step of the trace took (`c1: watch NodeDeleted ...`).
    /// A trace that ends in a deadlock is shown for real only if nothing did.
    pub after_the_end: Vec<String>,
}

/// What a real run counted.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct RealMetrics {
    pub acquisitions: u64,
    pub releases: u64,
    /// Requests the recipes sent (not pings, SetWatches or the driver's own).
    pub requests: u64,
    /// Watch notifications handed to recipes.
    pub notifications: u64,
    pub faults: u64,
    pub wall_ms: u64,
}

impl RealMetrics {
    pub fn requests_per_acquisition(&self) -> f64 {
        self.requests as f64 / self.acquisitions.max(1) as f64
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Event {
    Acquire(ClientId),
    Write(ClientId),
    Release(ClientId),
    Reconnect(ClientId),
    CloseSession(ClientId),
    Resume(ClientId),
    CatchUp(ClientId),
    Fault(FaultKind, ClientId),
}

/// What the run needs from outside: the servers and how to reach them.
pub struct Target<'a> {
    pub servers: &'a [String],
    /// The node the run's tree lives under (created, then deleted at the end).
    pub chroot: String,
    /// How long the shadow waits before taking a step (a follower's read may come in behind).
    pub margin: Duration,
    pub stop: Option<&'a AtomicBool>,
    /// Told about the run once a second.
    pub progress: Option<&'a dyn Fn(&str)>,
    /// Steer the run through these steps instead of the seed's plan (`zklab real --reproduce`;
    /// see `steer`): the world's fault budget is then the config's own.
    pub script: Option<&'a [Step]>,
    /// The ensemble's follower that can be held one write behind (`lagging`), if it has one.
    pub lagging: Option<&'a LaggingFollower>,
    /// Where the leader's transaction log is, with ZooKeeper's classpath (servers started
    /// here): the run is checked against it (`ground_truth`).
    pub txn_log: Option<(String, std::path::PathBuf)>,
}

/// Runs `recipes` against the servers of `target` as `config` says.
pub fn run_real<R: Recipe>(config: &SimConfig, recipes: Vec<R>, target: &Target) -> Result<RealRun<R>, String> {
    let mut driver = Driver::new(config, recipes, target)?;
    let interrupted = match target.script {
        Some(steps) => driver.steer(steps),
        None => driver.run(),
    };
    let after_the_end = match (target.script, interrupted) {
        (Some(_), false) => driver.after_the_end(),
        _ => Vec::new(),
    };
    let metrics = RealMetrics { wall_ms: driver.start.elapsed().as_millis() as u64, ..driver.metrics.clone() };
    let ground_truth = driver.against_the_log();
    driver.clean_up();
    let start = driver.start_world;
    let wire = driver.wire.into_entries();
    let mut strikes = driver.strikes;
    strikes.extend(driver.anchors.left().into_iter().map(super::fault_ledger::Strike::never_reached));
    let shadow = driver.shadow;
    Ok(RealRun {
        start,
        wire,
        ground_truth,
        exchange: shadow.exchange,
        faults_used: FaultBudget(shadow.world.faults_used),
        herd: shadow.herd,
        strikes,
        world: shadow.world,
        steps: shadow.steps,
        times_us: shadow.times_us,
        standing: shadow.standing,
        metrics,
        interrupted,
        after_the_end,
    })
}

pub(super) struct Driver<'a, R> {
    pub(super) config: &'a SimConfig,
    pub(super) target: &'a Target<'a>,
    pub(super) clients: Vec<RealClient<R>>,
    pub(super) shadow: Shadow<R>,
    pub(super) arrivals: Receiver<Arrival>,
    pub(super) sender: Sender<Arrival>,
    pub(super) streams: Streams,
    pub(super) fault_streams: Vec<rand_chacha::ChaCha8Rng>,
    pub(super) queue: BTreeMap<(u64, u64), Event>,
    pub(super) order: u64,
    pub(super) start: Instant,
    pub(super) timing: SessionTiming,
    /// Real session ids to the driver's numbers (what recipes see as owners).
    pub(super) sessions: HashMap<i64, SessionId>,
    pub(super) next_session: u32,
    /// The highest zxid any reply carried.
    pub(super) seen_zxid: i64,
    pub(super) metrics: RealMetrics,
    /// Every fault of the plan: where its client was when it struck, or why it did not.
    pub(super) strikes: Vec<super::fault_ledger::Strike>,
    /// The rates' client faults still waiting for a point of their client's lock work, as the
    /// simulator anchors them (`zklab_sim::Anchors`).
    pub(super) anchors: Anchors,
    pub(super) behaviour: ClientBehaviour,
    /// The lagging follower, when the run has lagging reads (it then serves no client of its
    /// own: sessions move there for their lagging reads only).
    pub(super) lagging: Option<&'a LaggingFollower>,
    /// Every frame sent and received, every connection opened, cut or moved.
    pub(super) wire: WireLog,
    start_world: World<R>,
    /// The set-up's session and the last zxid before the run (the log's writes after it are
    /// the run's).
    admin_session: i64,
    start_zxid: i64,
}

impl<'a, R: Recipe> Driver<'a, R> {
    fn new(config: &'a SimConfig, recipes: Vec<R>, target: &'a Target<'a>) -> Result<Self, String> {
        if target.servers.is_empty() {
            return Err("no server to run against".into());
        }
        if config.world.first_sequence != 0 {
            return Err(format!(
                "the lock's counter cannot start at {} on a real server (only 2^31 creates would get it there)",
                config.world.first_sequence
            ));
        }
        let (sender, arrivals) = channel();
        let mut world_config = config.world.clone();
        if target.script.is_none() {
            world_config.faults = config.fault_budget();
        }
        world_config.jute_maxbuffer = None;
        let world = World::new(world_config, recipes.clone());
        let timing = SessionTiming::new(config.world.session_timeout_ms, super::ensemble::TICK_MS);
        let fault_streams = fault_streams(config.seed);
        let mut driver = Driver {
            config,
            target,
            clients: Vec::new(),
            shadow: Shadow::new(world.clone(), Unify::default()),
            arrivals,
            sender,
            streams: Streams::new(config.seed),
            fault_streams,
            queue: BTreeMap::new(),
            order: 0,
            start: Instant::now(),
            timing,
            sessions: HashMap::new(),
            next_session: 1,
            seen_zxid: 0,
            metrics: RealMetrics::default(),
            strikes: Vec::new(),
            anchors: Anchors::new(recipes.len()),
            behaviour: config.world.client_behaviour,
            lagging: target.lagging.filter(|_| lags(config, target.script)),
            start_world: world.clone(),
            wire: WireLog::default(),
            admin_session: 0,
            start_zxid: 0,
        };
        // Steered through a trace, the run is judged by the trace's own verdict on its steps.
        driver.shadow.judging = target.script.is_none();
        if let Some(lagging) = driver.lagging {
            // The follower catches up with everything before the run (the last run's clean-up,
            // this one's set-up): the model's history starts with the run's first write.
            lagging.hold(false);
        }
        driver.set_up(&world)?;
        if let Some(lagging) = driver.lagging {
            let follower = &target.servers[lagging.server];
            super::ensemble::wait_applied(follower, driver.seen_zxid)?;
            lagging.hold(true);
        }
        let homes = driver.homes();
        for (i, recipe) in recipes.into_iter().enumerate() {
            let server = homes[i % homes.len()];
            let generation = 1;
            let conn = driver.connect(i, server, (0, &[]), 0, generation)?;
            let session = driver.session_of(conn.session);
            driver.shadow.unify().session(session, world.clients[i].session)?;
            driver.clients.push(RealClient {
                recipe,
                session,
                real_session: conn.session,
                password: conn.password.clone(),
                conn: Some(conn),
                generation,
                server,
                link: Link::Up,
                crashed: false,
                rounds_left: config.world.rounds,
                wrote: false,
                in_flight: VecDeque::new(),
                outbound: VecDeque::new(),
                inbound: VecDeque::new(),
                cut: None,
                pings: 0,
                last_zxid: 0,
                last_sent: Instant::now(),
                watches: ClientWatches::default(),
                catching_up: false,
                reconnected_entry: None,
                noticed_disconnect: false,
                reconnecting: false,
                armed: None,
                keeper: None,
                asked_at: None,
                paused: false,
                closed: false,
                lag: None,
                on_follower: false,
                lag_rest: None,
            });
        }
        driver.start = Instant::now();
        // The run's clock starts now: the set-up's connections are at its start.
        driver.wire.restart();
        Ok(driver)
    }

    /// Creates the run's chroot and lock parent as the model's world starts (an admin session
    /// that creates the lock parent and closes), and binds their zxids to the model's.
    fn set_up(&mut self, world: &World<R>) -> Result<(), String> {
        // The model's admin session, which creates the lock parent, is its first: so is ours.
        self.session_of(-1);
        let (tx, rx) = channel();
        let admin = &self.target.servers[self.homes()[0]];
        let mut conn = Connection::open(admin, (0, &[]), 0, 10_000, (tx, usize::MAX, 0)).map_err(|e| e.to_string())?;
        let chroot = &self.target.chroot;
        let base = match chroot.rfind('/') {
            Some(0) | None => None,
            Some(k) => Some(&chroot[..k]),
        };
        let persistent = |path: &str| Request::create(path, zklab_model::CreateMode::Persistent);
        if let Some(base) = base {
            match call(&mut conn, &rx, &persistent(base), "")? {
                (_, Ok(_)) | (_, Err(ZkError::NodeExists)) => {}
                (_, Err(e)) => return Err(format!("creating {base}: {e}")),
            }
        }
        let (root_zxid, made) = call(&mut conn, &rx, &persistent(chroot), "")?;
        made.map_err(|e| format!("creating {chroot}: {e} (is another run using it?)"))?;
        let lock = &world.config().lock_path;
        let (lock_zxid, made) = call(&mut conn, &rx, &persistent(lock), chroot)?;
        made.map_err(|e| format!("creating {chroot}{lock}: {e}"))?;
        let _ = conn.send(|xid| jute::bare_request(xid, jute::op::CLOSE_SESSION));
        let model_lock = world.server.tree().get(lock).map(|n| n.czxid).ok_or("the model has no lock parent")?;
        self.shadow.unify().bind_zxid(root_zxid, 0)?;
        self.shadow.unify().bind_zxid(lock_zxid, model_lock)?;
        self.seen_zxid = lock_zxid;
        self.start_zxid = lock_zxid;
        self.admin_session = conn.session;
        Ok(())
    }

    /// The servers clients live on: all but the lagging follower, when the run lags.
    pub(super) fn homes(&self) -> Vec<usize> {
        let lagging = self.lagging.map(|l| l.server);
        (0..self.target.servers.len()).filter(|s| Some(*s) != lagging).collect()
    }

    pub(super) fn connect(
        &mut self,
        i: usize,
        server: usize,
        session: (i64, &[u8]),
        last_zxid: i64,
        generation: u64,
    ) -> Result<Connection, String> {
        let timeout = self.config.world.session_timeout_ms;
        let address = &self.target.servers[server];
        let opened = Connection::open(address, session, last_zxid, timeout, (self.sender.clone(), i, generation))
            .map_err(|e| e.to_string());
        let what = match &opened {
            Ok(c) if c.timeout_ms == 0 => format!("open session {:#x} on {address}: expired", session.0),
            Ok(c) => {
                format!("open session {:#x} on {address} (last zxid {last_zxid:#x}): {} ms", c.session, c.timeout_ms)
            }
            Err(why) => format!("open session {:#x} on {address}: {why}", session.0),
        };
        let now = self.now_us();
        self.wire.push(now, i, "connection", what);
        opened
    }

    /// The driver's number for a real session, given when first seen (as the model numbers
    /// sessions in the order they open: the admin's first).
    pub(super) fn session_of(&mut self, real: i64) -> SessionId {
        if let Some(s) = self.sessions.get(&real) {
            return *s;
        }
        let s = SessionId(self.next_session);
        self.next_session += 1;
        self.sessions.insert(real, s);
        s
    }

    pub(super) fn now_us(&self) -> u64 {
        self.start.elapsed().as_micros() as u64
    }

    pub(super) fn push(&mut self, at_us: u64, event: Event) {
        self.order += 1;
        self.queue.insert((at_us, self.order), event);
    }

    /// The same deadline as the simulator's (`SimConfig::heal_deadline_us`).
    fn heal_deadline(&self) -> u64 {
        self.config.heal_deadline_us(self.clients.len(), &self.timing)
    }

    /// Runs to the end; whether Ctrl-C stopped it.
    fn run(&mut self) -> bool {
        self.plan();
        let deadline = self.heal_deadline();
        let mut quiet_since = Instant::now();
        let mut last_progress = Instant::now();
        loop {
            if self.target.stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
                return true;
            }
            let now = self.now_us();
            if now > deadline || self.shadow.standing != Standing::Agrees {
                break;
            }
            if self.idle() && quiet_since.elapsed() > QUIET {
                break;
            }
            let next_event = self.queue.keys().next().map(|(at, _)| *at);
            let wait =
                next_event.map_or(PING_CHECK, |at| Duration::from_micros(at.saturating_sub(now)).min(PING_CHECK));
            match self.arrivals.recv_timeout(wait) {
                Ok(arrival) => {
                    // A ping's reply says only that the connection is alive.
                    if !matches!(arrival.frame, Frame::Reply { xid: jute::PING_XID, .. }) {
                        quiet_since = Instant::now();
                    }
                    self.arrived(arrival);
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => unreachable!("the driver holds a sender"),
            }
            while let Some((&key, _)) = self.queue.iter().next() {
                if key.0 > self.now_us() {
                    break;
                }
                let event = self.queue.remove(&key).expect("just seen");
                quiet_since = Instant::now();
                self.handle(event);
            }
            self.keep_alive();
            self.shadow.advance(self.now_us(), self.target.margin.as_micros() as u64);
            if let Some(say) = self.target.progress.filter(|_| last_progress.elapsed() >= Duration::from_secs(1)) {
                last_progress = Instant::now();
                say(&format!(
                    "{:>6.1}s  {} acquisitions granted, {} steps judged",
                    self.start.elapsed().as_secs_f64(),
                    self.metrics.acquisitions,
                    self.shadow.steps.len()
                ));
            }
        }
        // Replies still on their way are waited for (a little), then the shadow takes the rest.
        let settle = Instant::now();
        while self.clients.iter().any(|c| !c.in_flight.is_empty() || c.cut.is_some()) && settle.elapsed() < SETTLE {
            if let Ok(arrival) = self.arrivals.recv_timeout(PING_CHECK) {
                self.arrived(arrival);
            }
        }
        self.shadow.advance(u64::MAX, 0);
        if self.shadow.standing == Standing::Agrees && self.shadow.waiting() {
            self.shadow.stuck();
        }
        self.shadow.unfinished(self.now_us());
        if self.shadow.standing == Standing::Agrees {
            let now_ms = self.now_us() / 1000;
            let healed_ms = now_ms.saturating_sub(self.config.chaos_us / 1000);
            self.shadow.standing = match (self.shadow.judge_the_end(healed_ms, now_ms), &self.shadow.herd) {
                (Some(Ending::Broken(broken)), _) => Standing::Broke { broken, at_us: self.now_us() },
                // A herd is a verdict; a waiter at the end with steps left is none.
                (_, Some(herd)) => {
                    let broken = Broken { property: Property::NoHerd, detail: String::new() };
                    Standing::Broke { broken, at_us: herd.at_us }
                }
                (Some(Ending::Undecided(why)), None) => Standing::Undecided { why, at_us: self.now_us() },
                (None, None) => Standing::Agrees,
            };
        }
        false
    }

    /// Nothing more can happen without a fault: nothing scheduled, nothing on the wire.
    fn idle(&self) -> bool {
        self.queue.is_empty()
            && self.clients.iter().all(|c| c.in_flight.is_empty() && c.cut.is_none() && c.inbound.is_empty())
    }

    /// The workload's moments and the faults' moments or anchors, drawn as the simulator draws
    /// them.
    fn plan(&mut self) {
        let (timed, anchors) = planned_faults(self.config, self.clients.len(), &mut self.fault_streams);
        for (at, kind, client) in timed {
            self.push(at, Event::Fault(kind, client));
        }
        self.anchors = anchors;
        for i in 0..self.clients.len() {
            let at = between(&mut self.streams.workload, 0, self.config.start_spread_us);
            self.push(at, Event::Acquire(i as ClientId));
        }
    }

    pub(super) fn handle(&mut self, event: Event) {
        let now = self.now_us();
        if let Event::Acquire(i) | Event::Write(i) | Event::Release(i) = event {
            if self.clients[i as usize].paused {
                // The application goes on with its work once the process runs again.
                self.push(now + self.timing.tick, event);
                return;
            }
        }
        match event {
            Event::Acquire(i) => {
                let c = &mut self.clients[i as usize];
                let idle = c.recipe.belief() == Belief::Idle;
                let reentry = c.recipe.accepts_reentry();
                if !c.crashed && c.cut.is_none() && (reentry || (c.link == Link::Up && c.rounds_left > 0 && idle)) {
                    if !reentry && c.rounds_left != zklab_model::UNBOUNDED_ROUNDS {
                        c.rounds_left -= 1;
                    }
                    c.asked_at = Some(Instant::now());
                    self.take(i as usize, Sending::Acquire, Input::Acquire);
                } else if !c.crashed && c.rounds_left > 0 && idle {
                    self.push(now + self.timing.ping_interval().min(50_000), Event::Acquire(i));
                }
            }
            Event::Write(i) => {
                let c = &mut self.clients[i as usize];
                if !c.crashed && c.recipe.belief().is_holding() && !c.wrote {
                    c.wrote = true;
                    let entry = ShadowStep::new(now, Step::Write(i), c.recipe.belief());
                    self.shadow.push(i as usize, entry);
                }
            }
            Event::Release(i) => {
                let c = &self.clients[i as usize];
                if c.cut.is_some() {
                    self.push(now + 1_000, event);
                } else if !c.crashed && c.recipe.belief().is_holding() && c.wrote {
                    self.metrics.releases += 1;
                    self.take(i as usize, Sending::Release, Input::Release);
                } else if matches!(c.recipe.belief(), Belief::Suspended { .. }) {
                    self.push(now + self.timing.ping_interval().min(50_000), event);
                }
            }
            Event::Reconnect(i) => self.reconnect(i as usize),
            Event::CloseSession(i) => self.close_session(i as usize),
            Event::Resume(i) => self.resume(i as usize),
            Event::CatchUp(i) => {
                self.catch_up(i as usize);
            }
            Event::Fault(kind, i) => self.fault(kind, i as usize),
        }
    }

    /// What follows a change of belief: a grant schedules the holder's write and release, an
    /// idle client asks again after thinking.
    pub(super) fn after_belief(&mut self, i: usize, was: Belief, mode_was: zklab_model::Mode) {
        let now = self.now_us();
        let c = &mut self.clients[i];
        let belief = c.recipe.belief();
        if belief.is_holding() && was.is_holding() && c.recipe.mode() != mode_was {
            // A downgrade is a new hold in a new mode, with its own access to the resource.
            c.wrote = false;
        }
        if belief.is_holding() && !was.is_holding() && !matches!(was, Belief::Suspended { .. }) {
            c.wrote = false;
            self.metrics.acquisitions += 1;
            self.push(now, Event::Write(i as ClientId));
            self.push(now + self.config.hold_us, Event::Release(i as ClientId));
        }
        let c = &self.clients[i];
        if belief == Belief::Idle && was != Belief::Idle && !c.crashed && c.rounds_left > 0 {
            self.push(now + self.config.think_us, Event::Acquire(i as ClientId));
        }
        // The anchored faults due at this point of the client's lock work strike now.
        for kind in self.anchors.after(i as ClientId, was, belief, now < self.config.chaos_us) {
            self.push(now, Event::Fault(kind, i as ClientId));
        }
    }
}

impl<R: Recipe> Driver<'_, R> {
    /// Checks the run against the committed transaction log (`ground_truth`): the run's writes
    /// there must be the model's, one for one; a run that disagrees is diverged, whatever it
    /// said before. `None` when there is no log to read.
    fn against_the_log(&mut self) -> Option<Result<usize, String>> {
        let (classpath, dir) = self.target.txn_log.as_ref()?;
        // Reading the log can fail for its own reasons (the tool, the JVM): that leaves the run
        // unchecked against it, which is not a disagreement.
        let unread = |why: String| (false, format!("the committed transaction log could not be read: {why}"));
        let disagrees =
            |why: String| (true, format!("the committed transaction log disagrees with the model world: {why}"));
        let checked = (|| {
            // Every write of the run is committed before the end's read answers.
            let (tx, rx) = channel();
            let server = &self.target.servers[self.homes()[0]];
            let mut admin = Connection::open(server, (0, &[]), 0, 10_000, (tx, usize::MAX, 0))
                .map_err(|e| unread(e.to_string()))?;
            let (end, _) = call(&mut admin, &rx, &Request::exists("/", false), "").map_err(unread)?;
            let _ = admin.send(|xid| jute::bare_request(xid, jute::op::CLOSE_SESSION));
            let txns = super::ground_truth::committed(classpath, dir).map_err(unread)?;
            let real = super::ground_truth::real_writes(
                &txns,
                self.start_zxid,
                end,
                &self.target.chroot,
                &[self.admin_session],
            );
            let model = super::ground_truth::model_writes(&self.start_world, &self.shadow.steps).map_err(unread)?;
            // A run judged broken stopped taking steps there: the log may go on.
            let real = match self.shadow.standing {
                Standing::Broke { .. } => &real[..real.len().min(model.len())],
                _ => &real[..],
            };
            super::ground_truth::agree(&model, real).map_err(disagrees)
        })();
        if let (Err((true, why)), Standing::Agrees | Standing::Broke { .. } | Standing::Undecided { .. }) =
            (&checked, &self.shadow.standing)
        {
            let (client, step) = (0, Step::Receive(0));
            self.shadow.standing = Standing::Diverged { client, step, at_us: self.now_us(), why: why.clone() };
        }
        Some(checked.map_err(|(_, why)| why))
    }

    /// Closes every session the run left open and deletes the run's tree.
    pub(super) fn clean_up(&mut self) {
        for c in &mut self.clients {
            if let Some(conn) = c.conn.as_mut() {
                let _ = conn.send(|xid| jute::bare_request(xid, jute::op::CLOSE_SESSION));
            }
        }
        if let Some(lagging) = self.lagging {
            lagging.hold(false);
        }
        let (tx, rx) = channel();
        let server = &self.target.servers[self.homes()[0]];
        let Ok(mut admin) = Connection::open(server, (0, &[]), 0, 10_000, (tx, usize::MAX, 0)) else {
            return;
        };
        // Closing sessions remove their ephemeral nodes a little later: try a few times.
        for _ in 0..20 {
            if delete_tree(&mut admin, &rx, &self.target.chroot).is_ok() {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = admin.send(|xid| jute::bare_request(xid, jute::op::CLOSE_SESSION));
    }
}

/// Deletes `top` and everything under it, deepest first.
pub(super) fn delete_tree(conn: &mut Connection, rx: &Receiver<Arrival>, top: &str) -> Result<(), String> {
    let mut nodes = vec![top.to_string()];
    let mut next = 0;
    while next < nodes.len() {
        let parent = nodes[next].clone();
        next += 1;
        let list = Request::GetChildren { path: parent.clone(), watch: false };
        if let (_, Ok(zklab_model::Response::Children { children, .. })) = call(conn, rx, &list, "")? {
            nodes.extend(children.names().map(|c| format!("{parent}/{c}")));
        }
    }
    for node in nodes.iter().rev() {
        match call(conn, rx, &Request::delete(node), "")?.1 {
            Ok(_) | Err(ZkError::NoNode) => {}
            Err(e) => return Err(format!("deleting {node}: {e}")),
        }
    }
    Ok(())
}

/// Quiet for this long with nothing scheduled and nothing on the wire: the run is over.
const QUIET: Duration = Duration::from_millis(300);
/// How often the loop wakes to ping idle connections.
const PING_CHECK: Duration = Duration::from_millis(20);
/// How long the end waits for replies still on their way.
const SETTLE: Duration = Duration::from_secs(5);

/// Sends `request` on an admin connection and waits for its reply: (the reply's zxid, result).
pub(super) fn call(
    conn: &mut Connection,
    rx: &Receiver<Arrival>,
    request: &Request,
    chroot: &str,
) -> Result<(i64, ZkResult), String> {
    let xid = conn.send(|xid| jute::encode_request(xid, request, chroot)).map_err(|e| e.to_string())?;
    loop {
        match rx.recv_timeout(Duration::from_secs(10)) {
            Ok(Arrival { frame: Frame::Reply { xid: got, zxid, err, body }, .. }) if got == xid => {
                let wire =
                    jute::decode_result(request, err, &mut Reader::new(&body), chroot).map_err(|e| e.to_string())?;
                return Ok((zxid, wire.map(|w| w.to_model(&mut |z| z, &mut |_| SessionId(0)))));
            }
            Ok(Arrival { frame: Frame::Closed, .. }) => return Err("the server closed the admin connection".into()),
            Ok(_) => {}
            Err(_) => return Err(format!("no reply to {} within 10 s", zklab_model::world::describe_request(request))),
        }
    }
}

/// Whether a run has lagging reads: its plan uses a lagging fault, or its script strikes one.
fn lags(config: &SimConfig, script: Option<&[Step]>) -> bool {
    match script {
        Some(steps) => steps.iter().any(|s| matches!(s, Step::Lossy(kind, _, _) if kind.lags())),
        None => config.uses(FaultKind::LaggingRead) || config.uses(FaultKind::LaggingSession),
    }
}
