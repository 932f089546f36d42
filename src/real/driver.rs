//! The real run: the same recipe state machines as the checker and the simulator, each a client
//! of a real ZooKeeper over its own connection, driven by the simulator's workload and fault
//! plan (the same seed draws the same moments), and followed step by step by the model world of
//! `shadow`, which judges it.
//!
//! The driver is the client library: it keeps each session's requests in order, hands the
//! recipe every reply and notification in the order they arrived, re-arms watches with
//! SetWatches on reconnect (the Java client's behaviour; kazoo's drops them), and tells the
//! recipe Disconnected, SyncConnected and Expired as the Java client does. That is what makes a
//! fault exact: the driver decides where a connection drops.
//! - **loss-before-apply**: the struck request is never sent; a ping bars the connection (its
//!   reply comes after every frame the server sent before it), then the connection drops.
//! - **loss-after-apply**: the struck request is sent and its reply read but not handed on: the
//!   connection drops right after it, the write applied.
//! - **disconnect**: a ping bars the connection, then it drops; the library reconnects to the
//!   same session after a back-off.
//! - **expire**: as disconnect, and the library stays away; once the recipe has heard it is
//!   disconnected, the driver opens the session from a second connection with its id and
//!   password and closes it: the server's closeSession, exactly the transaction an expiry is.
//! - **crash**: the process is gone (no close); its session is closed the same way later.
//! - **give-up**: the application stops waiting (`Input::Abandon`).
//!
//! Pauses, lagging followers and the container reaper are not driven yet (`unsupported`).

use super::connection::{Arrival, Connection, Frame};
use super::jute::{self, Reader, WireResponse};
use super::shadow::{Entry, Landing, Place, Sent, Shadow, Standing};
use super::unify::Unify;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};
use zklab_model::world::{Link, Sending};
use zklab_model::{
    Belief, ClientBehaviour, ClientId, ClientWatches, Ctx, FaultBudget, FaultKind, Input, Recipe, Request, SessionId,
    SessionState, Step, WatchKind, WatchedEvent, World, ZkError, ZkResult,
};
use zklab_sim::{between, SessionTiming, SimConfig, Streams};

/// The faults the driver cannot make happen on a real server yet, and why.
pub fn unsupported(kind: FaultKind) -> Option<&'static str> {
    match kind {
        FaultKind::Pause => Some("a paused process needs its connection frozen and its session timed out for real"),
        FaultKind::LaggingRead | FaultKind::LaggingSession => {
            Some("a lagging follower needs an ensemble whose follower's quorum link is held")
        }
        FaultKind::ReapParent => Some("the container reaper's moment cannot be chosen on a real server"),
        _ => None,
    }
}

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
}

/// What a real run counted.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct RealMetrics {
    pub acquisitions: u64,
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

/// A request on the wire, waiting for its reply.
pub(super) struct Flight {
    xid: i32,
    request: Request,
    /// The entry that sent it, and which of its requests it is.
    entry: u64,
    index: usize,
    /// A loss-after-apply: its reply is read and swallowed, and the connection drops.
    swallow: bool,
}

/// A connection about to drop, waiting for the frame that bars it.
pub(super) struct Cut {
    why: CutKind,
    /// The entry whose barrier it is (none for a swallowed reply, which is its own).
    entry: Option<u64>,
    /// Requests that fail with ConnectionLoss once it drops, in order.
    lost: Vec<Request>,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum CutKind {
    /// Reconnects after a back-off.
    Drop,
    /// Stays away until its session is closed.
    Partition,
    Crash,
}

pub(super) struct RealClient<R> {
    pub(super) recipe: R,
    /// What the recipe runs as: the driver's number for its real session.
    session: SessionId,
    real_session: i64,
    password: Vec<u8>,
    conn: Option<Connection>,
    generation: u64,
    server: usize,
    pub(super) link: Link,
    pub(super) crashed: bool,
    rounds_left: u8,
    wrote: bool,
    pub(super) in_flight: VecDeque<Flight>,
    outbound: VecDeque<Request>,
    pub(super) inbound: VecDeque<Input>,
    pub(super) cut: Option<Cut>,
    pub(super) pings: u32,
    last_zxid: i64,
    last_sent: Instant,
    watches: ClientWatches,
    /// Notifications before this reconnect's SetWatches reply are its catch-up events.
    catching_up: bool,
    /// The reconnect whose SetWatches reply places it.
    reconnected_entry: Option<u64>,
    /// The recipe has been handed the Disconnected of the current outage.
    noticed_disconnect: bool,
    reconnecting: bool,
    /// A loss planned for the client's next request.
    pub(super) armed: Option<FaultKind>,
    /// While the client is cut off (expire, crash), a second connection that holds its session
    /// open, so that the server expires it only when the driver closes it, never on its own.
    keeper: Option<(Connection, Receiver<Arrival>)>,
    asked_at: Option<Instant>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Event {
    Acquire(ClientId),
    Write(ClientId),
    Release(ClientId),
    Reconnect(ClientId),
    CloseSession(ClientId),
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
}

/// Runs `recipes` against the servers of `target` as `config` says.
pub fn run_real<R: Recipe>(config: &SimConfig, recipes: Vec<R>, target: &Target) -> Result<RealRun<R>, String> {
    let mut driver = Driver::new(config, recipes, target)?;
    let interrupted = match target.script {
        Some(steps) => driver.steer(steps),
        None => driver.run(),
    };
    let metrics = RealMetrics { wall_ms: driver.start.elapsed().as_millis() as u64, ..driver.metrics.clone() };
    driver.clean_up();
    let shadow = driver.shadow;
    Ok(RealRun {
        faults_used: FaultBudget(shadow.world.faults_used),
        world: shadow.world,
        steps: shadow.steps,
        times_us: shadow.times_us,
        standing: shadow.standing,
        metrics,
        interrupted,
    })
}

pub(super) struct Driver<'a, R> {
    config: &'a SimConfig,
    pub(super) target: &'a Target<'a>,
    pub(super) clients: Vec<RealClient<R>>,
    pub(super) shadow: Shadow<R>,
    pub(super) arrivals: Receiver<Arrival>,
    sender: Sender<Arrival>,
    streams: Streams,
    fault_streams: Vec<rand_chacha::ChaCha8Rng>,
    queue: BTreeMap<(u64, u64), Event>,
    order: u64,
    pub(super) start: Instant,
    timing: SessionTiming,
    /// Real session ids to the driver's numbers (what recipes see as owners).
    sessions: HashMap<i64, SessionId>,
    next_session: u32,
    /// The highest zxid any reply carried.
    seen_zxid: i64,
    pub(super) metrics: RealMetrics,
    behaviour: ClientBehaviour,
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
            world_config.faults = budget(config);
        }
        world_config.jute_maxbuffer = None;
        let world = World::new(world_config, recipes.clone());
        let timing = SessionTiming::new(config.world.session_timeout_ms, super::ensemble::TICK_MS);
        let fault_streams = FaultKind::ALL
            .iter()
            .map(|k| {
                let mut rng = Streams::new(config.seed).faults;
                rng.set_stream(10 + k.index() as u64);
                rng
            })
            .collect();
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
            behaviour: config.world.client_behaviour,
        };
        // Steered through a trace, the run is judged by the trace's own verdict on its steps.
        driver.shadow.judging = target.script.is_none();
        driver.set_up(&world)?;
        for (i, recipe) in recipes.into_iter().enumerate() {
            let server = i % target.servers.len();
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
            });
        }
        driver.start = Instant::now();
        Ok(driver)
    }

    /// Creates the run's chroot and lock parent as the model's world starts (an admin session
    /// that creates the lock parent and closes), and binds their zxids to the model's.
    fn set_up(&mut self, world: &World<R>) -> Result<(), String> {
        let admin = self.session_of(-1);
        let _ = admin;
        let (tx, rx) = channel();
        let mut conn = Connection::open(&self.target.servers[0], (0, &[]), 0, 10_000, (tx, usize::MAX, 0))
            .map_err(|e| e.to_string())?;
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
        Ok(())
    }

    fn connect(
        &self,
        i: usize,
        server: usize,
        session: (i64, &[u8]),
        last_zxid: i64,
        generation: u64,
    ) -> Result<Connection, String> {
        let timeout = self.config.world.session_timeout_ms;
        Connection::open(
            &self.target.servers[server],
            session,
            last_zxid,
            timeout,
            (self.sender.clone(), i, generation),
        )
        .map_err(|e| e.to_string())
    }

    /// The driver's number for a real session, given when first seen (as the model numbers
    /// sessions in the order they open: the admin's first).
    fn session_of(&mut self, real: i64) -> SessionId {
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

    fn push(&mut self, at_us: u64, event: Event) {
        self.order += 1;
        self.queue.insert((at_us, self.order), event);
    }

    /// The same deadline as the simulator's: the healed phase's bound after the faults stopped.
    fn heal_deadline(&self) -> u64 {
        let per_round = self.config.hold_us + self.config.think_us + 2 * self.config.max_latency_us();
        let rounds = u64::from(self.config.world.rounds) * self.clients.len() as u64;
        let bound = self.config.heal_bound_us.unwrap_or(10 * self.timing.timeout + rounds * per_round);
        self.config.chaos_us.max(self.config.start_spread_us) + bound
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
                if std::env::var_os("ZKLAB_REAL_DEBUG").is_some() {
                    eprintln!("end: queue {:?}", self.queue.values().take(5).collect::<Vec<_>>());
                    for (i, c) in self.clients.iter().enumerate() {
                        eprintln!(
                            "  c{i}: in_flight {} cut {} inbound {} link {:?} crashed {}",
                            c.in_flight.len(),
                            c.cut.is_some(),
                            c.inbound.len(),
                            c.link,
                            c.crashed
                        );
                    }
                }
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
        if self.shadow.standing == Standing::Agrees {
            let now_ms = self.now_us() / 1000;
            let healed_ms = now_ms.saturating_sub(self.config.chaos_us / 1000);
            if let Some(broken) = self.shadow.judge_the_end(healed_ms, now_ms) {
                self.shadow.standing = Standing::Broke { broken, at_us: self.now_us() };
            }
        }
        false
    }

    /// Nothing more can happen without a fault: nothing scheduled, nothing on the wire.
    fn idle(&self) -> bool {
        self.queue.is_empty()
            && self.clients.iter().all(|c| c.in_flight.is_empty() && c.cut.is_none() && c.inbound.is_empty())
    }

    /// The workload's and the faults' moments, drawn as the simulator draws them.
    fn plan(&mut self) {
        let n = self.clients.len() as u64;
        for kind in FaultKind::ALL {
            for _ in 0..self.config.rates.count(kind) {
                let rng = &mut self.fault_streams[kind.index()];
                let at = between(rng, 0, self.config.chaos_us.saturating_sub(1));
                let client = between(rng, 0, n - 1) as ClientId;
                self.push(at, Event::Fault(kind, client));
            }
        }
        for fault in self.config.schedule.clone() {
            self.push(fault.at(), Event::Fault(fault.fault, fault.client));
        }
        for i in 0..self.clients.len() {
            let at = between(&mut self.streams.workload, 0, self.config.start_spread_us);
            self.push(at, Event::Acquire(i as ClientId));
        }
    }

    pub(super) fn handle(&mut self, event: Event) {
        let now = self.now_us();
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
                    let entry = Entry::new(now, Step::Write(i), c.recipe.belief());
                    self.shadow.push(i as usize, entry);
                }
            }
            Event::Release(i) => {
                let c = &self.clients[i as usize];
                if c.cut.is_some() {
                    self.push(now + 1_000, event);
                } else if !c.crashed && c.recipe.belief().is_holding() && c.wrote {
                    self.take(i as usize, Sending::Release, Input::Release);
                } else if matches!(c.recipe.belief(), Belief::Suspended { .. }) {
                    self.push(now + self.timing.ping_interval().min(50_000), event);
                }
            }
            Event::Reconnect(i) => self.reconnect(i as usize),
            Event::CloseSession(i) => self.close_session(i as usize),
            Event::Fault(kind, i) => self.fault(kind, i as usize),
        }
    }

    /// Hands client `i`'s recipe `input` as step `sending`, striking the request it sends when
    /// a loss is armed or drawn, and sends what it asks for.
    pub(super) fn take(&mut self, i: usize, sending: Sending, input: Input) {
        let mut loss = self.clients[i].armed;
        if loss.is_none() && self.now_us() < self.config.chaos_us {
            for (kind, p) in [
                (FaultKind::LossBeforeApply, self.config.rates.loss_before_apply),
                (FaultKind::LossAfterApply, self.config.rates.loss_after_apply),
            ] {
                if p > 0.0 {
                    let draw: f64 = rand::Rng::random(&mut self.fault_streams[kind.index()]);
                    if loss.is_none() && draw < p {
                        loss = Some(kind);
                    }
                }
            }
        }
        let c = &mut self.clients[i];
        let ctx = Ctx { client: i as ClientId, session: c.session };
        let expired = input == Input::State(SessionState::Expired);
        if input == Input::State(SessionState::Disconnected) {
            c.noticed_disconnect = true;
        }
        if expired {
            // As the model: what was queued on the dead handle dies with it.
            c.outbound.clear();
            c.inbound.clear();
            c.watches.clear();
        }
        let was = c.recipe.belief();
        let mode_was = c.recipe.mode();
        let mut out = Vec::new();
        let handed = matches!(sending, Sending::Receive).then(|| input.clone());
        c.recipe.handle(&ctx, input, &mut out);
        let belief = c.recipe.belief();
        let sends_now = !out.is_empty() && (c.link == Link::Up || expired) && c.cut.is_none();
        let loss = loss.filter(|_| sends_now);
        if loss.is_some() {
            c.armed = None;
            self.metrics.faults += 1;
        }
        let step = match loss {
            Some(kind) => Step::Lossy(kind, sending, i as ClientId),
            None => sending.step(i as ClientId),
        };
        let mut entry = Entry::new(self.now_us(), step, belief);
        entry.input = handed;
        let number = self.shadow.push(i, entry);
        if expired {
            self.new_session(i);
        }
        self.after_belief(i, was, mode_was);
        self.send(i, out, number, loss);
    }

    /// The recipe handled Expired: the application makes a new handle, a new session.
    fn new_session(&mut self, i: usize) {
        let c = &mut self.clients[i];
        if let Some(conn) = c.conn.take() {
            conn.drop_link();
        }
        c.generation += 1;
        let (server, generation) = (c.server, c.generation);
        match self.connect(i, server, (0, &[]), 0, generation) {
            Ok(conn) => {
                let session = self.session_of(conn.session);
                let c = &mut self.clients[i];
                c.session = session;
                c.real_session = conn.session;
                c.password = conn.password.clone();
                c.conn = Some(conn);
                c.link = Link::Up;
                c.last_zxid = 0;
                c.last_sent = Instant::now();
            }
            Err(_) => self.clients[i].link = Link::Down,
        }
    }

    /// What follows a change of belief: a grant schedules the holder's write and release, an
    /// idle client asks again after thinking.
    fn after_belief(&mut self, i: usize, was: Belief, mode_was: zklab_model::Mode) {
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
    }

    /// Sends the requests one step asked for (held while the connection is down), striking the
    /// first with `loss`.
    fn send(&mut self, i: usize, out: Vec<Request>, entry: u64, loss: Option<FaultKind>) {
        if out.is_empty() {
            return;
        }
        let c = &mut self.clients[i];
        if c.link != Link::Up || c.conn.is_none() || c.cut.is_some() {
            c.outbound.extend(out);
            return;
        }
        self.metrics.requests += out.len() as u64;
        let mut out = VecDeque::from(out);
        let mut index = 0;
        while let Some(request) = out.pop_front() {
            let struck = if index == 0 { loss } else { None };
            if struck == Some(FaultKind::LossBeforeApply) {
                if let Some(e) = self.shadow.entry_mut(i, entry) {
                    e.sent.push(Sent { request: request.clone(), landing: Landing::Nowhere, result: None });
                }
                let lost = std::iter::once(request).chain(out).collect();
                self.begin_cut(i, CutKind::Drop, Some(entry), lost);
                return;
            }
            let floor = match request.is_write() {
                true => Place::read(self.seen_zxid),
                false => Place::read(self.clients[i].last_zxid),
            };
            let c = &mut self.clients[i];
            let chroot = self.target.chroot.clone();
            let sent = c.conn.as_mut().expect("up").send(|xid| jute::encode_request(xid, &request, &chroot));
            let Ok(xid) = sent else {
                // The socket failed under us: the reader reports it closed.
                c.outbound.push_back(request);
                c.outbound.extend(out);
                return;
            };
            c.last_sent = Instant::now();
            if std::env::var_os("ZKLAB_REAL_DEBUG").is_some() {
                eprintln!("send c{i} xid {xid} {request:?} floor {floor:?} at {}", self.start.elapsed().as_micros());
            }
            let c = &mut self.clients[i];
            let swallow = struck == Some(FaultKind::LossAfterApply);
            c.in_flight.push_back(Flight { xid, request: request.clone(), entry, index, swallow });
            if let Some(e) = self.shadow.entry_mut(i, entry) {
                e.sent.push(Sent { request, landing: Landing::InFlight { floor }, result: None });
            }
            if swallow {
                // The rest of the step's requests die with the connection.
                let c = &mut self.clients[i];
                c.cut = Some(Cut { why: CutKind::Drop, entry: None, lost: out.into_iter().collect() });
                return;
            }
            index += 1;
        }
    }

    /// Starts dropping client `i`'s connection: a ping bars it, and it drops when the ping's
    /// reply arrives (every frame the server sent before is read by then).
    fn begin_cut(&mut self, i: usize, why: CutKind, entry: Option<u64>, lost: Vec<Request>) {
        let floor = Place::read(self.clients[i].last_zxid);
        if let Some(e) = entry.and_then(|n| self.shadow.entry_mut(i, n)) {
            e.barrier = Some(Landing::InFlight { floor });
        }
        let c = &mut self.clients[i];
        c.cut = Some(Cut { why, entry, lost });
        let pinged = c
            .conn
            .as_mut()
            .is_some_and(|conn| conn.send_bare(jute::bare_request(jute::PING_XID, jute::op::PING)).is_ok());
        if pinged {
            c.pings += 1;
        } else {
            self.finish_cut(i, None);
        }
    }

    /// The connection drops, after the frame at `place` (its barrier).
    fn finish_cut(&mut self, i: usize, place: Option<Place>) {
        let Some(cut) = self.clients[i].cut.take() else { return };
        if let (Some(n), Some(place)) = (cut.entry, place) {
            if let Some(e) = self.shadow.entry_mut(i, n) {
                e.barrier = Some(Landing::At(place));
            }
        }
        let behaviour = self.behaviour;
        let c = &mut self.clients[i];
        if let Some(conn) = c.conn.take() {
            conn.drop_link();
        }
        c.generation += 1;
        if let Some(place) = place {
            c.last_zxid = c.last_zxid.max(place.zxid);
        }
        c.pings = 0;
        c.catching_up = false;
        if matches!(cut.why, CutKind::Partition | CutKind::Crash) {
            self.hold_session(i);
        }
        let c = &mut self.clients[i];
        if cut.why == CutKind::Crash {
            c.crashed = true;
            c.in_flight.clear();
            c.outbound.clear();
            c.inbound.clear();
            c.watches.clear();
            return;
        }
        if behaviour == ClientBehaviour::Kazoo {
            c.watches.clear();
        }
        let lost: Vec<Request> =
            c.in_flight.drain(..).map(|f| f.request).chain(cut.lost).chain(c.outbound.drain(..)).collect();
        for request in lost {
            c.inbound.push_back(Input::Reply { request, result: Err(ZkError::ConnectionLoss) });
        }
        c.inbound.push_back(Input::State(SessionState::Disconnected));
        c.noticed_disconnect = false;
        c.link = match cut.why {
            CutKind::Partition => Link::Partitioned,
            _ => Link::Down,
        };
        if c.link == Link::Down && !c.reconnecting {
            c.reconnecting = true;
            let back = between(&mut self.streams.network, self.config.link(i).max_us, self.timing.ping_interval());
            self.push(self.now_us() + back.min(200_000), Event::Reconnect(i as ClientId));
        }
        self.deliver(i);
    }

    /// Hands client `i`'s recipe what has arrived, in order, unless its connection is being
    /// barred (what arrives meanwhile came before the drop, and is handed after it).
    fn deliver(&mut self, i: usize) {
        // Steered, what arrived is handed when a step says so.
        while self.target.script.is_none() && self.clients[i].cut.is_none() && !self.clients[i].crashed {
            let Some(input) = self.clients[i].inbound.pop_front() else { return };
            if matches!(input, Input::Watch(_)) {
                self.metrics.notifications += 1;
            }
            self.take(i, Sending::Receive, input);
        }
    }

    pub(super) fn arrived(&mut self, arrival: Arrival) {
        let i = arrival.client;
        if i >= self.clients.len() || self.clients[i].generation != arrival.generation {
            return;
        }
        match arrival.frame {
            Frame::Reply { xid: jute::PING_XID, zxid, .. } => {
                let c = &mut self.clients[i];
                c.pings = c.pings.saturating_sub(1);
                if c.pings == 0 && c.cut.is_some() {
                    self.finish_cut(i, Some(Place::read(zxid)));
                }
            }
            Frame::Reply { xid: jute::SET_WATCHES_XID, zxid, .. } => {
                let c = &mut self.clients[i];
                c.catching_up = false;
                if let Some(n) = c.reconnected_entry.take() {
                    if let Some(e) = self.shadow.entry_mut(i, n) {
                        e.barrier = Some(Landing::At(Place::read(zxid)));
                    }
                }
                self.deliver(i);
            }
            Frame::Reply { xid, zxid, err, body } => self.replied(i, xid, zxid, err, &body),
            Frame::Notification { body } => {
                let chroot = self.target.chroot.clone();
                let Ok(Some((kind, path))) = jute::decode_notification(&mut Reader::new(&body), &chroot) else {
                    return;
                };
                let event = WatchedEvent { kind, path };
                let c = &mut self.clients[i];
                let found = c.watches.on_event(&event);
                // A reconnect's catch-up events go only to watches the library still holds.
                if found || !c.catching_up {
                    c.inbound.push_back(Input::Watch(event));
                }
                self.deliver(i);
            }
            Frame::Closed => {
                let c = &self.clients[i];
                if c.conn.is_some() && !c.crashed {
                    self.shadow_diverges(
                        i,
                        Step::Receive(i as ClientId),
                        "the server closed the connection, which no planned fault did".to_string(),
                    );
                }
            }
        }
    }

    fn shadow_diverges(&mut self, i: usize, step: Step, why: String) {
        if self.shadow.standing == Standing::Agrees {
            self.shadow.standing = Standing::Diverged { client: i as ClientId, step, at_us: self.now_us(), why };
        }
    }

    fn replied(&mut self, i: usize, xid: i32, zxid: i64, err: i32, body: &[u8]) {
        if std::env::var_os("ZKLAB_REAL_DEBUG").is_some() {
            eprintln!("reply c{i} xid {xid} zxid {zxid} err {err} at {}", self.now_us());
        }
        self.seen_zxid = self.seen_zxid.max(zxid);
        let c = &mut self.clients[i];
        c.last_zxid = c.last_zxid.max(zxid);
        let Some(flight) = c.in_flight.pop_front() else {
            return self.shadow_diverges(i, Step::Receive(i as ClientId), format!("a reply (xid {xid}) to no request"));
        };
        if flight.xid != xid {
            return self.shadow_diverges(
                i,
                Step::Receive(i as ClientId),
                format!("the reply to xid {xid} came before the one to {}", flight.xid),
            );
        }
        let chroot = self.target.chroot.clone();
        let wire = match jute::decode_result(&flight.request, err, &mut Reader::new(body), &chroot) {
            Ok(wire) => wire,
            Err(e) => return self.shadow_diverges(i, Step::Receive(i as ClientId), e.to_string()),
        };
        let result = self.as_recipe_sees(&wire);
        let place = match flight.request.is_write() {
            true => Place::write(zxid),
            false => Place::read(zxid),
        };
        if let Some(e) = self.shadow.entry_mut(i, flight.entry) {
            if let Some(sent) = e.sent.get_mut(flight.index) {
                sent.landing = Landing::At(place);
                sent.result = Some(result.clone());
            }
        }
        let c = &mut self.clients[i];
        if flight.swallow {
            let lost = c.cut.as_mut().map(|cut| std::mem::take(&mut cut.lost)).unwrap_or_default();
            c.cut = Some(Cut {
                why: CutKind::Drop,
                entry: None,
                lost: std::iter::once(flight.request).chain(lost).collect(),
            });
            return self.finish_cut(i, Some(place));
        }
        c.watches.on_reply(&flight.request, &result);
        c.inbound.push_back(Input::Reply { request: flight.request, result });
        self.deliver(i);
    }

    /// A real result as the recipe sees it: real zxids, sessions by the driver's numbers.
    fn as_recipe_sees(&mut self, wire: &Result<WireResponse, ZkError>) -> ZkResult {
        let mut owners: Vec<i64> = Vec::new();
        if let Ok(w) = wire {
            owners.extend(w.stat().map(|s| s.ephemeral_owner).filter(|o| *o != 0));
        }
        for o in owners {
            self.session_of(o);
        }
        let sessions = &self.sessions;
        wire.clone().map(|w| w.to_model(&mut |z| z, &mut |s| sessions[&s]))
    }
}

impl<R: Recipe> Driver<'_, R> {
    /// A fault that is not a lost request strikes client `i` now, if the model would let it.
    pub(super) fn fault(&mut self, kind: FaultKind, i: usize) {
        if kind.strikes_a_request() {
            self.clients[i].armed = Some(kind);
            return;
        }
        let c = &self.clients[i];
        if c.crashed || c.cut.is_some() {
            return;
        }
        let enabled = match kind {
            FaultKind::Disconnect => c.link == Link::Up && c.conn.is_some(),
            FaultKind::Expire => c.link != Link::Partitioned,
            FaultKind::Crash => true,
            FaultKind::GiveUp => c.recipe.belief() == Belief::Acquiring && c.recipe.can_abandon(),
            _ => false,
        };
        if !enabled {
            return;
        }
        self.metrics.faults += 1;
        if kind == FaultKind::GiveUp {
            return self.take(i, Sending::GiveUp, Input::Abandon);
        }
        let now = self.now_us();
        let number = self.shadow.push(i, Entry::new(now, Step::Fault(kind, i as ClientId), c.recipe.belief()));
        let connected = c.link == Link::Up && c.conn.is_some();
        match (kind, connected) {
            (FaultKind::Disconnect, _) => self.begin_cut(i, CutKind::Drop, Some(number), Vec::new()),
            (FaultKind::Expire, true) => self.begin_cut(i, CutKind::Partition, Some(number), Vec::new()),
            (FaultKind::Expire, false) => {
                self.clients[i].link = Link::Partitioned;
                self.hold_session(i);
            }
            (FaultKind::Crash, true) => self.begin_cut(i, CutKind::Crash, Some(number), Vec::new()),
            (FaultKind::Crash, false) => {
                self.hold_session(i);
                let c = &mut self.clients[i];
                c.crashed = true;
                c.in_flight.clear();
                c.outbound.clear();
                c.inbound.clear();
                c.watches.clear();
            }
            _ => unreachable!("enabled above"),
        }
        if matches!(kind, FaultKind::Expire | FaultKind::Crash) {
            // When the server would expire it, as the simulator draws it; then exactly.
            let (lo, hi) = self.timing.expiry_window();
            let at = now + between(&mut self.fault_streams[kind.index()], lo, hi);
            self.push(at, Event::CloseSession(i as ClientId));
        }
    }

    /// The server expires client `i`'s session: the driver opens it from a second connection
    /// and closes it (the closeSession transaction an expiry is), once the model would.
    pub(super) fn close_session(&mut self, i: usize) {
        let c = &self.clients[i];
        let partitioned = c.link == Link::Partitioned && c.noticed_disconnect;
        if !(c.crashed || partitioned) {
            if c.link == Link::Partitioned && !c.crashed {
                // The recipe has not heard of the outage yet; the tracker looks again.
                self.push(self.now_us() + self.timing.tick, Event::CloseSession(i as ClientId));
            }
            return;
        }
        if c.keeper.is_none() && c.crashed {
            // Closed already: a second expiry of a crashed client's session is none.
            return;
        }
        let closed = match self.clients[i].keeper.take() {
            Some((conn, _)) if conn.timeout_ms == 0 => Err("the server had expired the session on its own".to_string()),
            Some((mut conn, rx)) => close(&mut conn, &rx),
            None => Err("no connection held the session open".to_string()),
        };
        let zxid = match closed {
            Ok(zxid) => zxid,
            Err(why) => {
                return self.shadow_diverges(i, Step::Expire(i as ClientId), format!("closing the session: {why}"))
            }
        };
        self.seen_zxid = self.seen_zxid.max(zxid);
        let now = self.now_us();
        let c = &mut self.clients[i];
        let mut entry = Entry::new(now, Step::Expire(i as ClientId), c.recipe.belief());
        entry.barrier = Some(Landing::At(Place::write(zxid)));
        self.shadow.push(i, entry);
        if !c.crashed {
            c.link = Link::Down;
            if !c.reconnecting {
                c.reconnecting = true;
                let back = between(&mut self.streams.network, self.config.link(i).max_us, self.timing.ping_interval());
                self.push(now + back.min(200_000), Event::Reconnect(i as ClientId));
            }
        }
    }

    /// Holds client `i`'s session open from a second connection while the client is cut off
    /// (see `RealClient::keeper`).
    fn hold_session(&mut self, i: usize) {
        let c = &mut self.clients[i];
        if c.keeper.is_some() {
            return;
        }
        let (tx, rx) = channel();
        let server = &self.target.servers[c.server];
        let timeout = self.config.world.session_timeout_ms;
        if let Ok(keeper) = Connection::open(server, (c.real_session, &c.password), 0, timeout, (tx, usize::MAX, 0)) {
            c.keeper = Some((keeper, rx));
        }
    }

    /// The library reconnects client `i` to its session: SyncConnected, its watches re-armed
    /// (catch-up events for what it missed), its held requests sent; or Expired.
    pub(super) fn reconnect(&mut self, i: usize) {
        let c = &mut self.clients[i];
        c.reconnecting = false;
        if c.link != Link::Down || c.crashed {
            return;
        }
        c.generation += 1;
        let (server, session, password, last, generation) =
            (c.server, c.real_session, c.password.clone(), c.last_zxid, c.generation);
        let conn = match self.connect(i, server, (session, &password), last, generation) {
            Ok(conn) => conn,
            Err(_) => {
                self.clients[i].reconnecting = true;
                self.push(self.now_us() + 100_000, Event::Reconnect(i as ClientId));
                return;
            }
        };
        let now = self.now_us();
        let c = &mut self.clients[i];
        if conn.timeout_ms == 0 {
            self.shadow.push(i, Entry::new(now, Step::Reconnect(i as ClientId), c.recipe.belief()));
            for request in c.outbound.drain(..) {
                c.inbound.push_back(Input::Reply { request, result: Err(ZkError::SessionExpired) });
            }
            c.watches.clear();
            c.inbound.push_back(Input::State(SessionState::Expired));
            c.link = Link::Partitioned;
            return self.deliver(i);
        }
        c.conn = Some(conn);
        c.link = Link::Up;
        c.last_sent = Instant::now();
        c.inbound.push_back(Input::State(SessionState::SyncConnected));
        let mut loss = c.armed.filter(|_| !c.outbound.is_empty());
        if loss.is_none() && !c.outbound.is_empty() && now < self.config.chaos_us {
            for (kind, p) in [
                (FaultKind::LossBeforeApply, self.config.rates.loss_before_apply),
                (FaultKind::LossAfterApply, self.config.rates.loss_after_apply),
            ] {
                if p > 0.0 {
                    let draw: f64 = rand::Rng::random(&mut self.fault_streams[kind.index()]);
                    if loss.is_none() && draw < p {
                        loss = Some(kind);
                    }
                }
            }
        }
        let c = &mut self.clients[i];
        if loss.is_some() {
            c.armed = None;
            self.metrics.faults += 1;
        }
        let step = match loss {
            Some(kind) => Step::Lossy(kind, Sending::Reconnect, i as ClientId),
            None => Step::Reconnect(i as ClientId),
        };
        let number = self.shadow.push(i, Entry::new(now, step, c.recipe.belief()));
        let c = &mut self.clients[i];
        if self.behaviour == ClientBehaviour::Java {
            let paths = |kind: WatchKind| -> Vec<String> {
                c.watches.to_vec().into_iter().filter(|(_, k)| *k == kind).map(|(p, _)| p).collect()
            };
            let (data, exist, child) = (paths(WatchKind::Data), paths(WatchKind::Exist), paths(WatchKind::Child));
            let payload = jute::set_watches(last, &data, &exist, &child, &self.target.chroot);
            if c.conn.as_mut().expect("just connected").send_bare(payload).is_ok() {
                c.catching_up = true;
                c.reconnected_entry = Some(number);
                if let Some(e) = self.shadow.entry_mut(i, number) {
                    e.barrier = Some(Landing::InFlight { floor: Place::read(last) });
                }
            }
        }
        let c = &mut self.clients[i];
        let out: Vec<Request> = c.outbound.drain(..).collect();
        self.send(i, out, number, loss);
        self.deliver(i);
    }

    /// Pings client `i`'s live connection now; whether it could.
    pub(super) fn ping(&mut self, i: usize) -> bool {
        let c = &mut self.clients[i];
        let Some(conn) = c.conn.as_mut().filter(|_| c.cut.is_none()) else { return false };
        let sent = conn.send_bare(jute::bare_request(jute::PING_XID, jute::op::PING)).is_ok();
        if sent {
            c.pings += 1;
            c.last_sent = Instant::now();
        }
        sent
    }

    /// Pings every connection that has been quiet for a third of its session timeout.
    pub(super) fn keep_alive(&mut self) {
        let quiet = Duration::from_micros(self.timing.ping_interval());
        for c in &mut self.clients {
            if let Some((keeper, rx)) = c.keeper.as_mut() {
                while rx.try_recv().is_ok() {}
                if keeper.idle_for() >= quiet {
                    let _ = keeper.send_bare(jute::bare_request(jute::PING_XID, jute::op::PING));
                }
            }
            let Some(conn) = c.conn.as_mut() else { continue };
            if c.cut.is_none()
                && c.last_sent.elapsed() >= quiet
                && conn.send_bare(jute::bare_request(jute::PING_XID, jute::op::PING)).is_ok()
            {
                c.pings += 1;
                c.last_sent = Instant::now();
            }
        }
    }

    /// Closes every session the run left open and deletes the run's tree.
    fn clean_up(&mut self) {
        for c in &mut self.clients {
            if let Some(conn) = c.conn.as_mut() {
                let _ = conn.send(|xid| jute::bare_request(xid, jute::op::CLOSE_SESSION));
            }
        }
        let (tx, rx) = channel();
        let Ok(mut admin) = Connection::open(&self.target.servers[0], (0, &[]), 0, 10_000, (tx, usize::MAX, 0)) else {
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

/// Closes a session on `conn`; the closeSession transaction's zxid.
fn close(conn: &mut Connection, rx: &Receiver<Arrival>) -> Result<i64, String> {
    let xid = conn.send(|xid| jute::bare_request(xid, jute::op::CLOSE_SESSION)).map_err(|e| e.to_string())?;
    loop {
        match rx.recv_timeout(Duration::from_secs(10)) {
            Ok(Arrival { frame: Frame::Reply { xid: got, zxid, .. }, .. }) if got == xid => return Ok(zxid),
            Ok(Arrival { frame: Frame::Closed, .. }) => return Err("the connection closed first".into()),
            Ok(_) => {}
            Err(_) => return Err("no reply to closeSession within 10 s".into()),
        }
    }
}

/// Deletes `top` and everything under it, deepest first.
fn delete_tree(conn: &mut Connection, rx: &Receiver<Arrival>, top: &str) -> Result<(), String> {
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

/// The model world's fault budget for a plan: every kind the plan may use, unbounded.
fn budget(config: &SimConfig) -> FaultBudget {
    let mut budget = [0; FaultKind::COUNT];
    for kind in FaultKind::ALL {
        let rated = match kind {
            FaultKind::LossBeforeApply => config.rates.loss_before_apply > 0.0,
            FaultKind::LossAfterApply => config.rates.loss_after_apply > 0.0,
            FaultKind::LaggingRead => config.rates.lagging_read > 0.0,
            FaultKind::LaggingSession => config.rates.lagging_session > 0.0,
            _ => config.rates.count(kind) > 0,
        };
        let scheduled = config.schedule.iter().any(|f| f.fault == kind);
        if rated || scheduled {
            budget[kind.index()] = u32::MAX;
        }
    }
    FaultBudget(budget)
}

/// Sends `request` on an admin connection and waits for its reply: (the reply's zxid, result).
fn call(
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
