//! One controlled run: the served model on a port per client, the client processes started,
//! and then, until every client is done or none can move, wait until the clients are quiet and
//! take the next choice. The history the clients reported is judged by the same code that
//! judges a real library's run on a real ensemble (`real::history`).

use super::clients::{ClientProgram, Task};
use super::describe;
use super::quiet;
use super::rig::Rig;
use super::strategy::Strategy;
use super::switchboard::{self, Choice, Faults, Switchboard, Wire};
use super::wiring::{self, Heard};
use crate::real::clock::monotonic_ns;
use crate::real::history::{self, Event, Finding, Said, Tally};
use serde::Serialize;
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};
use zklab_model::server::ServerConfig;

/// What a run is asked to do.
#[derive(Clone, Debug)]
pub struct Setup {
    pub program: ClientProgram,
    pub clients: usize,
    pub task: Task,
    pub faults: Faults,
    /// The most choices a run takes before it stops, undecided.
    pub max_steps: usize,
    /// Nothing in flight, no client moving, for this long, and some not done: stuck.
    pub stuck_after: Duration,
    /// Every client must have connected within this.
    pub connect_within: Duration,
}

impl Setup {
    /// A setup with the usual patience: one second of nothing moving is a deadlock, and every
    /// client connects within 20 seconds (a Python or Java client starts in well under that).
    pub fn new(program: ClientProgram, clients: usize, task: Task, faults: Faults, max_steps: usize) -> Self {
        Setup {
            program,
            clients,
            task,
            faults,
            max_steps,
            stuck_after: Duration::from_millis(1000),
            connect_within: Duration::from_secs(20),
        }
    }
}

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case", tag = "end")]
pub enum End {
    /// Every client took its rounds.
    Done,
    /// Nothing in flight and every unfinished client waiting: a deadlock.
    Stuck,
    /// The step bound was reached first: undecided.
    StepBound,
    /// Replaying: the recorded choice at `step` (`wanted`) was not enabled; `enabled` was.
    Diverged { step: usize, wanted: Option<Choice>, enabled: Vec<Choice> },
    /// Replaying: every recorded choice was taken (a saved schedule ends where its violation
    /// shows, so the clients are left where it showed).
    Cut,
    /// A client process ended without finishing its rounds.
    ClientExited { client: usize },
    /// The clients kept acting by themselves (lines, connections) with nothing for the
    /// schedule to move, for `BUSY_PATIENCE`: undecided.
    Busy,
}

/// Why a run could not be made.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The client program is at fault: it would not start, connect or speak the protocol.
    #[error("{0}")]
    Client(String),
    /// The machine is: no loopback port.
    #[error("{0}")]
    Machine(String),
}

/// What a run did and what its history shows.
#[derive(Clone, Debug)]
pub struct RunResult {
    pub schedule: Vec<Choice>,
    /// What each choice did, in words (`describe`).
    pub steps: Vec<String>,
    pub events: Vec<Event>,
    /// The number of choices taken when each event was heard.
    pub heard_at: Vec<usize>,
    pub findings: Vec<Finding>,
    pub tally: Tally,
    pub end: End,
    /// Waits for quiet that gave up (a client that never went quiet within `QUIET_PATIENCE`).
    pub restless: usize,
    /// Recorded choices a replay waited for, the client's request coming after the quiet test
    /// had called it done (see `LATE_PATIENCE`).
    pub late: usize,
    /// The served server's state (`server_state::fingerprint`) before the first choice and
    /// after each: `server_states[k]` is after `k` choices.
    pub server_states: Vec<u64>,
    /// What each choice moved (the request, the frames flushed), for following the schedule
    /// on a model of the library (`divergence`).
    pub moved: Vec<super::divergence::Moved>,
}

impl RunResult {
    /// The history as the clients told it, without times and without session ids (which the
    /// clients' first connections, made before any choice, take in the order they happen to
    /// connect): what a replay must give again.
    ///
    /// Each event is placed at the step it was heard after: what clients say between two
    /// choices happens concurrently (both clients ask for the lock once told to go), so their
    /// lines are ordered by client there, each client's in its own order.
    pub fn story(&self) -> Vec<(usize, usize, String)> {
        let told = |said: &Said| match said {
            Said::Session(..) => "session".to_string(),
            other => other.words(),
        };
        let mut story: Vec<_> =
            self.events.iter().zip(&self.heard_at).map(|(e, step)| (*step, e.client, told(&e.said))).collect();
        story.sort_by_key(|(step, client, _)| (*step, *client));
        story
    }

    /// The faults among its choices.
    pub fn faults(&self) -> usize {
        self.schedule.iter().filter(|c| c.is_fault()).count()
    }

    /// The run as if it had been cut after `steps` choices: what was heard by then, judged
    /// again (no orphans are judged, as not every client got to the end).
    pub fn cut(&self, steps: usize, clients: usize) -> RunResult {
        let (events, heard_at): (Vec<Event>, Vec<usize>) = self
            .events
            .iter()
            .zip(&self.heard_at)
            .filter(|(_, at)| **at <= steps)
            .map(|(e, at)| (e.clone(), *at))
            .unzip();
        let (findings, tally) = history::judge(&events, clients, None);
        RunResult {
            schedule: self.schedule[..steps].to_vec(),
            steps: self.steps[..steps].to_vec(),
            events,
            heard_at,
            findings,
            tally,
            end: End::Cut,
            restless: self.restless,
            late: self.late,
            server_states: self.server_states[..(steps + 1).min(self.server_states.len())].to_vec(),
            moved: self.moved[..steps.min(self.moved.len())].to_vec(),
        }
    }

    /// The fewest choices after which the history heard so far already breaks a safety
    /// property (what a saved schedule keeps); `None` if no prefix does (a deadlock or an
    /// orphan shows only at the end).
    pub fn violation_step(&self, clients: usize) -> Option<usize> {
        (0..=self.schedule.len()).find(|&step| {
            let heard: Vec<Event> =
                self.events.iter().zip(&self.heard_at).filter(|(_, at)| **at <= step).map(|(e, _)| e.clone()).collect();
            !history::judge(&heard, clients, None).0.is_empty()
        })
    }
}

/// The longest wait for the clients to go quiet before the next choice is taken anyway.
const QUIET_PATIENCE: Duration = Duration::from_secs(5);

/// The longest a replay waits for its recorded choice to be enabled (a client's request that
/// comes after a timed wait the quiet test cannot see) before it calls the run diverged.
const LATE_PATIENCE: Duration = Duration::from_secs(2);

/// The longest the clients may keep acting by themselves with nothing for the schedule to move.
const BUSY_PATIENCE: Duration = Duration::from_secs(30);

/// The longest wait for a client that lost its connection to connect again. ZooKeeper's Java
/// client sleeps up to a second at random before it reconnects, and Curator's reconnect after
/// an expiry was measured at 1.7 s: a wait that ends first lets the schedule move on before the
/// handshake is in, and a replay could then find it in.
const RECONNECT_PATIENCE: Duration = Duration::from_secs(5);

/// The served server: ZooKeeper's default tickTime, as `zklab serve` has it, so a client gets
/// the session timeout it asks for (the drivers ask 10 s) rather than the model's 100 ms tick
/// clamping it to 2 s. A session expires where the schedule says, but a client
/// keeps its own clock too: Curator calls a session lost once it has been disconnected for its
/// negotiated timeout, so a 2 s timeout let the wall clock, not the schedule, decide when
/// Curator gave up on a reconnecting session.
fn served_config() -> ServerConfig {
    ServerConfig { tick_ms: crate::serve::ZOOKEEPER_TICK_MS, ..ServerConfig::default() }
}

/// Runs the clients under `strategy` until they are done, stuck, or the step bound, on
/// processes of their own.
pub fn run(setup: &Setup, strategy: &mut dyn Strategy, dir: &std::path::Path) -> Result<RunResult, RunError> {
    Runner::new(setup, dir).run(strategy)
}

/// Runs one schedule after another on the same client processes where it can (see `rig`):
/// after a run whose clients all finished, the next starts with a reset rather than new
/// processes.
pub struct Runner<'a> {
    setup: &'a Setup,
    dir: &'a std::path::Path,
    rig: Option<Rig>,
    /// Whether the program takes `reset`: until one of its clients ends instead.
    resets: bool,
    /// Runs made on a reset rig, and on new processes.
    pub reused: usize,
    pub started: usize,
}

impl<'a> Runner<'a> {
    pub fn new(setup: &'a Setup, dir: &'a std::path::Path) -> Self {
        Runner { setup, dir, rig: None, resets: true, reused: 0, started: 0 }
    }

    /// One run under `strategy`.
    pub fn run(&mut self, strategy: &mut dyn Strategy) -> Result<RunResult, RunError> {
        if let Some(mut rig) = self.rig.take() {
            rig.reset();
            let mut owner = Owner::new(self.setup, &mut rig);
            match owner.await_sessions(self.setup) {
                Ok(()) => {
                    self.reused += 1;
                    let result = owner.run(self.setup, strategy);
                    self.keep(rig, &result);
                    return Ok(result);
                }
                // A client that ended rather than start over: the program does not take
                // `reset`; every run from now on starts its own processes.
                Err(_) => self.resets = false,
            }
        }
        let mut rig = Rig::start(&self.setup.program, self.setup.clients, &self.setup.task, self.dir).map_err(|e| {
            match e.strip_prefix("machine: ") {
                Some(why) => RunError::Machine(why.to_string()),
                None => RunError::Client(e),
            }
        })?;
        self.started += 1;
        let mut owner = Owner::new(self.setup, &mut rig);
        owner.await_sessions(self.setup).map_err(RunError::Client)?;
        let result = owner.run(self.setup, strategy);
        self.keep(rig, &result);
        Ok(result)
    }

    /// Keeps `rig` for the next run if its clients all finished and the program takes `reset`.
    fn keep(&mut self, rig: Rig, result: &RunResult) {
        if result.end == End::Done && self.resets {
            self.rig = Some(rig);
        }
    }
}

/// The thread that owns the schedule: the switchboard, the connections, the history heard.
struct Owner<'r> {
    board: Switchboard,
    rig: &'r mut Rig,
    events: Vec<Event>,
    heard_at: Vec<usize>,
    /// Choices taken so far.
    step: usize,
    /// The clients handed something (a frame, a closed connection) or heard from since the
    /// clients were last found quiet: the only ones that may still be reacting. A client
    /// found quiet and given nothing since has nothing to react to, but a timer of its own
    /// (which the quiet test cannot see in an event loop's poll anyway).
    stirred: Vec<bool>,
    /// Clients that stayed away a whole `RECONNECT_PATIENCE` (a handle closed for good by an
    /// expiry, as ZooKeeper's Java client is): not waited for again until they connect.
    gone_for_good: Vec<bool>,
    sessions_said: Vec<bool>,
    done: Vec<bool>,
    ended: Vec<bool>,
    started_ns: u64,
}

impl<'r> Owner<'r> {
    fn new(setup: &Setup, rig: &'r mut Rig) -> Self {
        let clients = setup.clients;
        let mut board = Switchboard::new(clients, served_config());
        if setup.task.lock_made {
            // A top-level path (the command line's `/lock`; a saved file's is checked as it loads).
            board.make_node(&setup.task.lock_path).expect("the lock's parent is a top-level path");
        }
        Owner {
            board,
            rig,
            events: Vec::new(),
            heard_at: Vec::new(),
            step: 0,
            stirred: vec![true; clients],
            gone_for_good: vec![false; clients],
            sessions_said: vec![false; clients],
            done: vec![false; clients],
            ended: vec![false; clients],
            started_ns: monotonic_ns(),
        }
    }

    /// Every client connects and says its session before any choice is taken; their first
    /// handshakes are answered as they come (the schedule starts at `go`). Then it says `go`.
    fn await_sessions(&mut self, setup: &Setup) -> Result<(), String> {
        let deadline = Instant::now() + setup.connect_within;
        while self.sessions_said.iter().any(|s| !s) {
            if Instant::now() > deadline {
                let missing: Vec<String> =
                    (0..setup.clients).filter(|c| !self.sessions_said[*c]).map(|c| format!("c{c}")).collect();
                return Err(format!(
                    "{} did not connect and say its session within {} s ({}): see docs/your-lock.md for the line \
                     protocol",
                    missing.join(", "),
                    setup.connect_within.as_secs(),
                    setup.program.name()
                ));
            }
            if let Some(c) = (0..setup.clients).find(|c| self.rig.clients.exited(*c)) {
                self.hear_for(Duration::from_millis(50));
                if !self.sessions_said[c] {
                    return Err(format!(
                        "client c{c} ({}) exited before it connected and said its session",
                        setup.program.name()
                    ));
                }
            }
            self.hear_for(Duration::from_millis(5));
            for c in 0..setup.clients {
                if let Some(wires) = self.board.take(Choice::Connect(c)) {
                    self.wire(wires);
                }
            }
        }
        self.rig.clients.go();
        Ok(())
    }

    /// Takes choices under `strategy` until the clients are done, stuck, or the step bound.
    fn run(mut self, setup: &Setup, strategy: &mut dyn Strategy) -> RunResult {
        let pids = self.rig.pids.clone();
        let mut schedule = Vec::new();
        let mut steps = Vec::new();
        let mut restless = 0;
        let mut late = 0;
        let mut server_states = vec![super::server_state::fingerprint(&self.board)];
        let mut moved = Vec::new();
        // When the last choice was taken: clients that keep acting by themselves (a retry loop
        // that never gives up) with nothing for the schedule to move end the run undecided.
        let mut idle_since = Instant::now();
        let end = loop {
            // Only a client handed something, or heard from, since the clients were last found
            // quiet may still be reacting (see `stirred`): a choice that hands nothing to
            // anyone (the server applying a request, whose reply and events wait here) is
            // followed by no wait.
            self.hear_for(Duration::ZERO);
            if self.stirred.iter().any(|s| *s) && !self.quiet(&pids) {
                restless += 1;
            }
            if self.done.iter().all(|d| *d) {
                break End::Done;
            }
            if let Some(c) = (0..setup.clients).find(|c| self.ended[*c] && !self.done[*c]) {
                break End::ClientExited { client: c };
            }
            if schedule.len() >= setup.max_steps {
                break End::StepBound;
            }
            let mut enabled = self.board.enabled(setup.faults);
            // A recorded choice that is not enabled yet may be a request its client has not
            // sent: the quiet test took a timed wait inside the client (a JVM's park, an event
            // loop's timer) for the end of its reaction. It is waited for, up to
            // `LATE_PATIENCE`, rather than called a divergence: the choices stay the
            // schedule's, and what the clients say is compared as ever.
            if let Some(wanted) = strategy.wanted(schedule.len()) {
                if !enabled.contains(&wanted) {
                    let give_up = Instant::now() + LATE_PATIENCE;
                    while !enabled.contains(&wanted) && Instant::now() < give_up {
                        self.hear_for(quiet::SAMPLE);
                        enabled = self.board.enabled(setup.faults);
                    }
                    if enabled.contains(&wanted) {
                        late += 1;
                    }
                }
            }
            let moves = enabled.iter().any(|c| !c.is_fault());
            let choice = if moves {
                strategy.pick(schedule.len(), &enabled)
            } else {
                // Nothing to move: wait for a client to act by itself (a retry after a back-off);
                // if none does, the run is stuck, unless the schedule takes a fault here.
                if self.hear_for(setup.stuck_after) {
                    if idle_since.elapsed() > BUSY_PATIENCE {
                        break End::Busy;
                    }
                    continue;
                }
                match strategy.at_rest(schedule.len(), &enabled) {
                    Some(choice) => Some(choice),
                    None => break End::Stuck,
                }
            };
            let Some(choice) = choice else {
                break match strategy.exhausted(schedule.len()) {
                    true => End::Cut,
                    false => End::Diverged {
                        step: schedule.len(),
                        wanted: strategy.wanted(schedule.len()),
                        enabled: enabled.clone(),
                    },
                };
            };
            let said = describe::choice(&self.board, choice);
            let what = describe::moved(&self.board, choice);
            let Some(wires) = self.board.take(choice) else {
                break End::Diverged { step: schedule.len(), wanted: Some(choice), enabled };
            };
            // What a client says in answer to this choice is heard after it (`wire` may wait
            // for an answer, see there).
            self.step = schedule.len() + 1;
            self.wire(wires);
            schedule.push(choice);
            steps.push(said);
            server_states.push(super::server_state::fingerprint(&self.board));
            moved.push(what);
            idle_since = Instant::now();
        };
        // What is left under the lock once every client is done: orphans.
        let left = (end == End::Done).then(|| self.board.served().server().tree().children(&setup.task.lock_path));
        self.rig.handshaking =
            (0..setup.clients).filter(|c| self.board.handshaking(*c)).filter_map(|c| self.rig.conn_of[c]).collect();
        let mut events = std::mem::take(&mut self.events);
        for e in &mut events {
            e.at_us = e.at_us.saturating_sub(self.started_ns / 1000);
        }
        let (mut findings, tally) = history::judge(&events, setup.clients, left.as_deref());
        if end == End::Stuck {
            let waiting: Vec<String> = (0..setup.clients).filter(|c| !self.done[*c]).map(|c| format!("c{c}")).collect();
            findings.push(Finding {
                property: "eventual_acquire",
                detail: format!(
                    "deadlock: nothing in flight and {} waiting, for {} ms",
                    waiting.join(", "),
                    setup.stuck_after.as_millis()
                ),
            });
        }
        let heard_at = std::mem::take(&mut self.heard_at);
        RunResult { schedule, steps, events, heard_at, findings, tally, end, restless, late, server_states, moved }
    }

    /// Handles what is heard until something other than a ping is (and then what else is
    /// already waiting), or `patience` passes; whether anything other than a ping was.
    fn hear_for(&mut self, patience: Duration) -> bool {
        let deadline = Instant::now() + patience;
        let mut active = false;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rig.heard.recv_timeout(left) {
                Ok(heard) => active |= self.handle(heard),
                Err(RecvTimeoutError::Timeout) | Err(RecvTimeoutError::Disconnected) => return active,
            }
            if active {
                while let Ok(heard) = self.rig.heard.try_recv() {
                    self.handle(heard);
                }
                return true;
            }
            if Instant::now() >= deadline {
                return active;
            }
        }
    }

    /// Waits until the clients are quiet (see `quiet`); false if they never were within
    /// `QUIET_PATIENCE`. A client that lost its connection is not quiet until its handshake
    /// has come in again (its back-off is a timer, which the next choice would otherwise race;
    /// the answer is a choice of its own, so the others may move first), unless it stays away
    /// for `RECONNECT_PATIENCE` (a library that gives up after an expiry): then it is not
    /// waited for again until it connects.
    fn quiet(&mut self, pids: &[u32]) -> bool {
        let started = Instant::now();
        let calm = self.calm(|owner| {
            // A client that is done still reconnects when its connection is cut (its session
            // may be open until the run ends), so it is waited for too.
            let away = started.elapsed() < RECONNECT_PATIENCE && (0..owner.done.len()).any(|c| owner.away(c));
            away || pids.iter().zip(&owner.stirred).any(|(p, stirred)| *stirred && quiet::running(*p))
        });
        // A client still away after the whole patience is not coming back by itself: waiting
        // for it again at every later choice would cost the patience each time and tell
        // nothing new (measured: WriteLock's runs spent most of their time so).
        let waited_out = started.elapsed() >= RECONNECT_PATIENCE;
        for c in 0..self.done.len() {
            if waited_out && self.away(c) {
                self.gone_for_good[c] = true;
            }
        }
        self.stirred.fill(false);
        calm
    }

    /// Whether `client` is away: it lost its connection and has not reached the server again,
    /// and has not already stayed away a whole `RECONNECT_PATIENCE`.
    fn away(&self, client: usize) -> bool {
        !self.ended[client] && !self.gone_for_good[client] && !self.board.reached(client)
    }

    /// Waits until `client` has finished reacting to what it was just handed (the test of
    /// `quiet`, for one client whose connection is about to close, so not for a reconnect).
    fn settle(&mut self, client: usize) {
        let pid = self.rig.pids[client];
        self.calm(|_| quiet::running(pid));
    }

    /// The sampling both waits share: nothing heard and `busy` false for `quiet::SAMPLES`
    /// samples in a row; false if that never came within `QUIET_PATIENCE`.
    fn calm(&mut self, busy: impl Fn(&Self) -> bool) -> bool {
        let give_up = Instant::now() + QUIET_PATIENCE;
        let mut calm = 0;
        while calm < quiet::SAMPLES {
            if Instant::now() > give_up {
                return false;
            }
            let active = self.hear_for(quiet::SAMPLE);
            calm = if active || busy(self) { 0 } else { calm + 1 };
        }
        true
    }

    /// One thing heard; whether it was activity (anything but a ping).
    fn handle(&mut self, heard: Heard) -> bool {
        let c = match &heard {
            Heard::Accepted(c, ..) | Heard::Frame(c, ..) | Heard::Gone(c, _) | Heard::Line(c, _) | Heard::Ended(c) => {
                *c
            }
        };
        self.stirred[c] = true;
        match heard {
            // A connection of the run before a reset, closing: not this run's activity.
            Heard::Frame(_, conn, payload) if self.rig.is_stale(conn) => {
                self.rig.answer_stale(conn, &payload);
                false
            }
            Heard::Gone(_, conn) if self.rig.is_stale(conn) => {
                self.rig.drop_stale(conn);
                false
            }
            Heard::Accepted(c, conn, stream) => {
                self.gone_for_good[c] = false;
                self.rig.streams.insert(conn, stream);
                self.rig.conn_of[c] = Some(conn);
                let wires = self.board.accepted(c, conn);
                self.wire(wires);
                true
            }
            Heard::Frame(c, conn, payload) => {
                let ping = switchboard::is_ping(&payload);
                let wires = self.board.received(c, conn, payload);
                self.wire(wires);
                !ping
            }
            Heard::Gone(c, conn) => {
                self.board.gone(c, conn);
                if let Some(stream) = self.rig.streams.remove(&conn) {
                    wiring::close(&stream);
                }
                if self.rig.conn_of[c] == Some(conn) {
                    self.rig.conn_of[c] = None;
                }
                true
            }
            Heard::Line(c, line) => {
                if let Some((stamp_ns, said)) = Said::parse_stamped(&line) {
                    // After a reset, what a client says before its new session is the last
                    // words of its life before.
                    if self.rig.reset && !self.sessions_said[c] && !matches!(said, Said::Session(..)) {
                        return false;
                    }
                    match said {
                        Said::Session(..) => self.sessions_said[c] = true,
                        Said::Done => self.done[c] = true,
                        _ => {}
                    }
                    self.events.push(Event { at_us: stamp_ns / 1000, client: c, said });
                    self.heard_at.push(self.step);
                }
                true
            }
            Heard::Ended(c) => {
                self.ended[c] = true;
                if !self.done[c] {
                    self.events.push(Event { at_us: monotonic_ns() / 1000, client: c, said: Said::Died });
                    self.heard_at.push(self.step);
                }
                true
            }
        }
    }

    /// Hands `wires` to the clients. A connection the server closes after frames it sent on it
    /// (an expiry with replies still held, which reach the client first) is closed only once
    /// its client has finished reacting to them: the client's answer (say, the next request,
    /// which the closed session never applies) and the close would otherwise race inside the
    /// client (is the request already sent when the close is seen?), and a schedule run again
    /// could end either way. Real servers close after the replies, so both orders are real;
    /// this one is taken every time.
    fn wire(&mut self, wires: Vec<Wire>) {
        let mut written = vec![false; self.stirred.len()];
        for w in wires {
            let (Wire::Write(c, _) | Wire::Close(c, _)) = &w;
            self.stirred[*c] = true;
            if let Wire::Close(c, _) = &w {
                if written[*c] {
                    self.settle(*c);
                }
            }
            match w {
                Wire::Write(c, bytes) => {
                    written[c] = true;
                    let Some(conn) = self.rig.conn_of[c] else { continue };
                    if let Some(stream) = self.rig.streams.get_mut(&conn) {
                        if !wiring::write(stream, &bytes) {
                            self.board.gone(c, conn);
                        }
                    }
                }
                Wire::Close(c, conn) => {
                    if let Some(stream) = self.rig.streams.remove(&conn) {
                        wiring::close(&stream);
                    }
                    if self.rig.conn_of[c] == Some(conn) {
                        self.rig.conn_of[c] = None;
                    }
                }
            }
        }
    }
}
