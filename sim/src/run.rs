//! One simulated run: pop the next event, turn it into a world step when the step is enabled,
//! schedule what follows from it, judge the safety properties after every step and liveness
//! once the faults have stopped.

use crate::anchors::Anchors;
use crate::config::{BadConfig, SimConfig};
use crate::judge::{Ending, Judge};
use crate::metrics::{inversions, Metrics};
use crate::plan::{draw_catch_up, draw_loss, draw_pause, fault_streams, planned_faults};
use crate::queue::{Event, EventQueue, Micros};
use crate::steps_hash::StepsHash;
use crate::streams::{between, Streams};
use crate::timing::SessionTiming;
use rand_chacha::ChaCha8Rng;
use std::sync::atomic::{AtomicBool, Ordering};
use zklab_model::world::{Link, Sending};
use zklab_model::{
    Belief, ClientFault, ClientId, Fault, FaultKind, Input, Property, Recipe, Request, RequestFault, Step, World,
};

/// A property a run broke, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    pub property: Property,
    /// Steps taken up to and including the one that broke it.
    pub steps: usize,
    pub at_us: Micros,
    /// For liveness: who still waits and who holds.
    pub detail: String,
}

/// A run that could not be judged: clients still waited when its bound (the heal deadline or
/// the stall window) ran out, but the world was not deadlocked, so the lock may only have been
/// slow. Never a violation: a liveness violation is a deadlock (the checker also finds fair
/// cycles, which a simulated run cannot tell from slowness).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Undecided {
    pub steps: usize,
    pub at_us: Micros,
    /// Who waits, for how long, and what the run saw (replies refused as too long).
    pub reason: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SimOutcome {
    Passed,
    Violated(Violation),
    /// See `Undecided`: the run ended with no verdict on liveness.
    Undecided(Undecided),
}

/// A finished run: the world as it ended, every step taken, and the counts.
pub struct SimRun<R> {
    pub world: World<R>,
    /// Every step taken (none if there were more than `SimConfig::keep_steps`).
    pub steps: Vec<Step>,
    /// The virtual time of each step, in microseconds from the start (as `steps`).
    pub times_us: Vec<Micros>,
    /// The steps and their times, hashed as they were taken (`StepsHash`): equal hashes,
    /// equal runs, whether the steps were kept or not.
    pub steps_hash: u64,
    pub metrics: Metrics,
    /// `Passed` for a run stopped early (`interrupted`): nothing was judged at its end.
    pub outcome: SimOutcome,
    /// Stopped by its `stop` flag before the end (see `simulate_stoppable`).
    pub interrupted: bool,
}

/// Runs `config` with one recipe per client to the end of its healed phase.
pub fn simulate<R: Recipe>(config: &SimConfig, recipes: Vec<R>) -> Result<SimRun<R>, BadConfig> {
    simulate_observed(config, recipes, &mut |_, _| {})
}

/// As `simulate`, showing `observe` the initial world and the world after every step (to
/// compare what a number of seeds reaches with what the checker explores).
pub fn simulate_observed<R: Recipe>(
    config: &SimConfig,
    recipes: Vec<R>,
    observe: &mut dyn FnMut(&World<R>, &Metrics),
) -> Result<SimRun<R>, BadConfig> {
    simulate_stoppable(config, recipes, observe, None)
}

/// As `simulate_observed`, stopping before the next event once `stop` is raised (Ctrl-C): the
/// run so far comes back `interrupted`, with no verdict on its end.
pub fn simulate_stoppable<R: Recipe>(
    config: &SimConfig,
    recipes: Vec<R>,
    observe: &mut dyn FnMut(&World<R>, &Metrics),
    stop: Option<&AtomicBool>,
) -> Result<SimRun<R>, BadConfig> {
    config.validate(recipes.len())?;
    let mut sim = Sim::new(config, recipes, observe);
    (sim.observe)(&sim.world, &sim.metrics);
    let interrupted = sim.run(stop);
    let (world, steps, times_us, metrics, outcome) = (sim.world, sim.steps, sim.times_us, sim.metrics, sim.outcome);
    Ok(SimRun { world, steps, times_us, steps_hash: sim.steps_hash.value(), metrics, outcome, interrupted })
}

struct Sim<'a, R> {
    config: &'a SimConfig,
    observe: &'a mut dyn FnMut(&World<R>, &Metrics),
    world: World<R>,
    streams: Streams,
    /// One stream per fault kind, so turning one family off leaves the others' draws alone.
    fault_streams: Vec<ChaCha8Rng>,
    queue: EventQueue,
    now: Micros,
    timing: SessionTiming,
    /// A delivery is scheduled for the client.
    delivering: Vec<bool>,
    /// A reconnect attempt is scheduled for the client.
    reconnecting: Vec<bool>,
    /// A scheduled connection loss waiting for the client's next request.
    armed: Vec<Option<RequestFault>>,
    /// The rates' client faults still waiting for a point of their client's lock work.
    anchors: Anchors,
    /// Who holds, and what the run's end and every step are judged by.
    judge: Judge,
    /// Handled a notification while waiting and has not acquired since.
    woken: Vec<bool>,
    asked_at: Vec<Option<Micros>>,
    /// First-round order of asking, by client.
    arrival: Vec<Option<u32>>,
    arrivals: u32,
    /// First-round arrival ranks in the order the lock was granted.
    granted_ranks: Vec<u32>,
    steps: Vec<Step>,
    times_us: Vec<Micros>,
    steps_hash: StepsHash,
    metrics: Metrics,
    outcome: SimOutcome,
    /// Clients that believe they are acquiring, counted as beliefs change (a crashed one
    /// included: the count only says when to look; `World::waiting` decides).
    acquiring: usize,
    /// The last acquisition granted, or the moment someone started waiting with no one
    /// waiting before; and the refused replies counted by then.
    progress_at: Micros,
    refused_at_progress: u64,
}

impl<'a, R: Recipe> Sim<'a, R> {
    fn new(config: &'a SimConfig, recipes: Vec<R>, observe: &'a mut dyn FnMut(&World<R>, &Metrics)) -> Self {
        let n = recipes.len();
        let mut world_config = config.world.clone();
        world_config.faults = config.fault_budget();
        let mut world = World::new(world_config, recipes);
        if !config.as_checked {
            // The simulator never settles a state: no client need keep its recipe's inputs for
            // renumbering by replay (thousands of clients would each hold their round's).
            world.stop_keeping_inputs();
        }
        let judge = Judge::new(&world);
        let negotiated = world.server.session(world.clients[0].session).map_or(4000, |s| s.timeout_ms);
        let timing = SessionTiming::new(negotiated, world.server.config().tick_ms);
        let fault_streams = fault_streams(config.seed);
        Sim {
            config,
            observe,
            world,
            streams: Streams::new(config.seed),
            fault_streams,
            queue: EventQueue::default(),
            now: 0,
            timing,
            delivering: vec![false; n],
            reconnecting: vec![false; n],
            armed: vec![None; n],
            anchors: Anchors::new(n),
            judge,
            woken: vec![false; n],
            asked_at: vec![None; n],
            arrival: vec![None; n],
            arrivals: 0,
            granted_ranks: Vec::new(),
            steps: Vec::new(),
            times_us: Vec::new(),
            steps_hash: StepsHash::default(),
            metrics: Metrics::default(),
            outcome: SimOutcome::Passed,
            acquiring: 0,
            progress_at: 0,
            refused_at_progress: 0,
        }
    }

    fn clients(&self) -> usize {
        self.world.clients.len()
    }

    /// When the run ends (`SimConfig::heal_deadline_us`).
    fn heal_deadline(&self) -> Micros {
        self.config.heal_deadline_us(self.clients(), &self.timing)
    }

    /// Runs to the end, or until `stop` is raised; whether it was.
    fn run(&mut self, stop: Option<&AtomicBool>) -> bool {
        // Faults first: one planned for the very start strikes the clients' first requests.
        self.plan_faults();
        for i in 0..self.clients() {
            let at = between(&mut self.streams.workload, 0, self.config.start_spread_us);
            self.queue.push(at, Event::Acquire(i as ClientId));
        }
        let deadline = self.heal_deadline();
        let stall_window = self.config.stall_window_us(&self.timing);
        let mut stopped = false;
        while let Some((at, event)) = self.queue.pop() {
            if at > deadline {
                break;
            }
            if stop.is_some_and(|flag| flag.load(Ordering::Relaxed)) {
                stopped = true;
                break;
            }
            self.now = at;
            self.handle(event);
            if self.acquiring > 0 && self.now.saturating_sub(self.progress_at) > stall_window {
                self.judge_stall(stall_window);
            }
            if self.outcome != SimOutcome::Passed {
                break;
            }
        }
        self.metrics.virtual_us = self.now;
        for i in 0..self.clients() {
            if self.woken[i] {
                self.metrics.futile_wakeups += 1;
            }
        }
        let mut ranks = self.granted_ranks.clone();
        self.metrics.out_of_order_pairs = inversions(&mut ranks);
        let n = self.granted_ranks.len() as u64;
        self.metrics.pairs = n * n.saturating_sub(1) / 2;
        if self.outcome == SimOutcome::Passed && !stopped {
            self.judge_the_end();
        }
        stopped
    }

    /// The timed faults (the schedule's, the server's events the rates draw) and the rates'
    /// client faults, anchored to their clients' lock work (`anchors`).
    fn plan_faults(&mut self) {
        let (timed, anchors) = planned_faults(self.config, self.clients(), &mut self.fault_streams);
        for (at, kind, client) in timed {
            self.queue.push(at, Event::Fault(kind, client));
        }
        self.anchors = anchors;
    }

    fn latency(&mut self, i: ClientId) -> Micros {
        let link = self.config.link(i as usize);
        between(&mut self.streams.network, link.min_us, link.max_us)
    }

    fn handle(&mut self, event: Event) {
        match event {
            Event::Acquire(i) => {
                if self.world.enabled(Step::Acquire(i)) {
                    if self.arrival[i as usize].is_none() {
                        self.arrival[i as usize] = Some(self.arrivals);
                        self.arrivals += 1;
                    }
                    self.asked_at[i as usize] = Some(self.now);
                    self.take(Sending::Acquire, i);
                } else if self.wants_to_acquire(i) {
                    // Not connected yet: the application asks again once the library is back.
                    let later = self.now + self.timing.ping_interval();
                    self.queue.push(later, Event::Acquire(i));
                }
            }
            Event::Deliver(i) => {
                self.delivering[i as usize] = false;
                if self.world.enabled(Step::Receive(i)) {
                    self.count_input(i);
                    self.take(Sending::Receive, i);
                }
            }
            Event::Write(i) => {
                if self.world.enabled(Step::Write(i)) {
                    self.apply(Step::Write(i));
                } else if self.paused(i) {
                    self.queue.push(self.now + self.timing.tick, event);
                }
            }
            Event::Release(i) => {
                if self.world.enabled(Step::Release(i)) {
                    self.metrics.releases += 1;
                    self.take(Sending::Release, i);
                } else if self.paused(i) {
                    // The application finishes its work once the process runs again.
                    self.queue.push(self.now + self.timing.tick, event);
                } else if matches!(self.world.clients[i as usize].belief(), Belief::Suspended { .. }) {
                    let later = self.now + self.timing.ping_interval();
                    self.queue.push(later, Event::Release(i));
                }
            }
            Event::Reconnect(i) => {
                self.reconnecting[i as usize] = false;
                if self.world.enabled(Step::Reconnect(i)) {
                    self.take(Sending::Reconnect, i);
                } else if self.world.clients[i as usize].link == Link::Down {
                    // Paused: the library tries again once the process runs.
                    self.reconnect_at(i, self.now + self.timing.tick);
                }
            }
            Event::ServerExpire(i) => {
                let c = &self.world.clients[i as usize];
                if self.world.enabled(Step::Expire(i)) {
                    self.apply(Step::Expire(i));
                } else if self.world.server.is_alive(c.session) && c.link == Link::Partitioned {
                    // The client has not yet given up on the connection; the tracker looks again.
                    let later = self.now + self.timing.tick;
                    self.queue.push(later, Event::ServerExpire(i));
                }
            }
            Event::Resume(i) => {
                if self.world.enabled(Step::Resume(i)) {
                    self.apply(Step::Resume(i));
                }
            }
            Event::CatchUp(i) => {
                if self.world.enabled(Step::CatchUp(i)) {
                    self.apply(Step::CatchUp(i));
                }
            }
            Event::Fault(kind, i) => self.fault(kind, i),
        }
    }

    fn paused(&self, i: ClientId) -> bool {
        let c = &self.world.clients[i as usize];
        c.paused && !c.crashed
    }

    fn wants_to_acquire(&self, i: ClientId) -> bool {
        let c = &self.world.clients[i as usize];
        !c.crashed && c.rounds_left > 0 && c.belief() == Belief::Idle
    }

    fn fault(&mut self, kind: FaultKind, i: ClientId) {
        let step = match kind.typed() {
            // Struck at the client's next step that sends a request (see `take`).
            Fault::Request(fault) => {
                self.armed[i as usize] = Some(fault);
                return;
            }
            Fault::Client(fault) => Step::Fault(fault, i),
            Fault::Server(event) => Step::Server(event),
        };
        if !self.world.enabled(step) {
            return;
        }
        self.metrics.faults[kind.index()] += 1;
        self.apply(step);
        let (lo, hi) = self.timing.expiry_window();
        let rng = &mut self.fault_streams[kind.index()];
        let Step::Fault(fault, _) = step else { return };
        match fault {
            ClientFault::Disconnect | ClientFault::GiveUp => {}
            ClientFault::Expire | ClientFault::Crash => {
                let expiry = self.now + between(rng, lo, hi);
                self.queue.push(expiry, Event::ServerExpire(i));
            }
            ClientFault::Pause => {
                // A pause longer than the session timeout is a partition as far as the server is
                // concerned: the process sends no pings.
                let (length, expiry) = draw_pause(&self.timing, rng);
                self.queue.push(self.now + length, Event::Resume(i));
                if let Some(expiry) = expiry.filter(|_| self.world.enabled(Step::Fault(ClientFault::Expire, i))) {
                    self.apply(Step::Fault(ClientFault::Expire, i));
                    self.queue.push(self.now + expiry, Event::ServerExpire(i));
                }
            }
        }
    }

    /// Takes a step that may send a request, losing the connection with it when a scheduled
    /// loss is armed or the loss rates say so.
    fn take(&mut self, sending: Sending, i: ClientId) {
        let mut loss = self.armed[i as usize];
        if loss.is_none() && self.now < self.config.chaos_us {
            loss = draw_loss(self.config, &mut self.fault_streams);
        }
        if let Some(fault) = loss {
            if self.world.enabled(Step::Lossy(fault, sending, i)) {
                self.armed[i as usize] = None;
                self.metrics.faults[fault.kind().index()] += 1;
                self.apply(Step::Lossy(fault, sending, i));
                if fault == RequestFault::LaggingSession {
                    let lag = draw_catch_up(&mut self.fault_streams[fault.kind().index()]);
                    self.queue.push(self.now + lag, Event::CatchUp(i));
                }
                return;
            }
        }
        self.apply(sending.step(i));
    }

    fn count_input(&mut self, i: ClientId) {
        let c = &self.world.clients[i as usize];
        match c.inbound.front() {
            Some(Input::Reply { request, .. }) => {
                self.metrics.requests += 1;
                if matches!(request, Request::GetChildren { .. }) {
                    self.metrics.get_children += 1;
                }
            }
            Some(Input::Watch(_)) if c.is_waiting() => {
                self.metrics.wakeups += 1;
                if std::mem::replace(&mut self.woken[i as usize], true) {
                    self.metrics.futile_wakeups += 1;
                }
            }
            _ => {}
        }
    }

    fn apply(&mut self, step: Step) {
        // What the step's client believed and held before it (a server event has no client).
        let before =
            step.client().map(|i| (i, self.world.clients[i as usize].belief(), self.world.clients[i as usize].holds()));
        self.world.apply(step).expect("the simulator takes only enabled steps");
        self.steps_hash.add(step, self.now);
        if (self.metrics.steps as usize) < self.config.keep_steps {
            self.steps.push(step);
            self.times_us.push(self.now);
        } else if !self.steps.is_empty() {
            self.steps = Vec::new();
            self.times_us = Vec::new();
        }
        self.metrics.steps += 1;
        self.metrics.virtual_us = self.now;
        self.metrics.notifications += self.world.routed().len() as u64;
        if !self.config.measure_herd && self.judge.herd(step, &self.world).is_some() {
            // The trace tells whom it woke (its summary is its replay's, as the checker's).
            self.violated(Property::NoHerd, String::new());
        }
        if let Some(refused) = self.world.refused() {
            self.metrics.refused_replies += 1;
            if refused.children > 0 {
                let shortest = &mut self.metrics.shortest_refused_listing;
                *shortest = Some(shortest.map_or(refused.children as u64, |n| n.min(refused.children as u64)));
            }
        }
        for j in 0..self.world.routed().len() {
            let j = self.world.routed()[j];
            self.deliver_soon(j);
        }
        let Some((i, belief, held)) = before else { return };
        let i_ = i as usize;
        self.deliver_soon(i);
        let c = &self.world.clients[i_];
        let now_believes = c.belief();
        if c.link == Link::Down && !c.crashed && !self.reconnecting[i_] {
            // The library looks for a server again after a short back-off.
            let back = between(&mut self.streams.network, self.config.link(i_).max_us, self.timing.ping_interval());
            self.reconnect_at(i, self.now + back);
        }
        if self.judge.after_step(&self.world, i, held) && !matches!(belief, Belief::Suspended { .. }) {
            self.granted(i);
        }
        match (belief == Belief::Acquiring, now_believes == Belief::Acquiring) {
            (false, true) => {
                if self.acquiring == 0 {
                    self.made_progress();
                }
                self.acquiring += 1;
            }
            (true, false) => self.acquiring = self.acquiring.saturating_sub(1),
            _ => {}
        }
        for kind in self.anchors.after(i, belief, now_believes, self.now < self.config.chaos_us) {
            self.queue.push(self.now, Event::Fault(kind, i));
        }
        if now_believes == Belief::Idle && belief != Belief::Idle && self.wants_to_acquire(i) {
            self.queue.push(self.now + self.config.think_us, Event::Acquire(i));
        }
        if let Some(property) = self.judge.safety(&self.world) {
            self.violated(property, String::new());
        }
        // Last, so that the observer sees this step's counts.
        (self.observe)(&self.world, &self.metrics);
    }

    fn reconnect_at(&mut self, i: ClientId, at: Micros) {
        self.reconnecting[i as usize] = true;
        self.queue.push(at, Event::Reconnect(i));
    }

    fn made_progress(&mut self) {
        self.progress_at = self.now;
        self.refused_at_progress = self.metrics.refused_replies;
    }

    /// No acquisition for longer than `window` while clients believe they are acquiring: if
    /// some live client still waits, the run ends here. In a deadlock that is a violation (as at
    /// the run's end); otherwise it is stalled, undecided, saying why if it can.
    fn judge_stall(&mut self, window: Micros) {
        if self.world.waiting().is_empty() || !self.judge.judges(Property::EventualAcquire) {
            self.made_progress();
            return;
        }
        if self.world.deadlocked() {
            // Nothing but a fault can happen: the stronger verdict, as at the run's end.
            self.judge_the_end();
            return;
        }
        let refused = self.metrics.refused_replies - self.refused_at_progress;
        let cause = match (refused, self.metrics.shortest_refused_listing) {
            (0, _) => String::new(),
            (n, Some(children)) => format!(
                "; the lock's listing exceeds jute.maxbuffer: {n} replies refused since (the shortest a listing of \
                 {children} children), each dropping its client's connection"
            ),
            (n, None) => format!("; {n} replies refused as longer than jute.maxbuffer since"),
        };
        let detail = format!(
            "{} and none has acquired for {:.1} s of virtual time (the stall window is {:.1} s), but steps remain (no \
             deadlock): stalled{cause}",
            crate::judge::waiters(&self.world),
            self.now.saturating_sub(self.progress_at) as f64 / 1e6,
            window as f64 / 1e6
        );
        self.undecided(detail);
    }

    fn granted(&mut self, i: ClientId) {
        let i_ = i as usize;
        self.made_progress();
        self.metrics.acquisitions += 1;
        self.woken[i_] = false;
        if let Some(asked) = self.asked_at[i_].take() {
            self.metrics.latencies_us.push(self.now - asked);
        }
        if let Some(rank) = self.arrival[i_] {
            if self.granted_ranks.len() < self.arrivals as usize && !self.granted_ranks.contains(&rank) {
                self.granted_ranks.push(rank);
            }
        }
        self.queue.push(self.now, Event::Write(i));
        self.queue.push(self.now + self.config.hold_us, Event::Release(i));
    }

    /// Schedules the client's next delivery if it has mail and none is scheduled. A client cut
    /// off from the server hears of it only when its read timeout passes.
    fn deliver_soon(&mut self, j: ClientId) {
        let j_ = j as usize;
        let c = &self.world.clients[j_];
        if self.delivering[j_] || c.inbound.is_empty() || !c.runs() {
            return;
        }
        let delay = match c.link {
            Link::Partitioned if self.world.server.is_alive(c.session) => self.timing.read_timeout(),
            _ => self.latency(j),
        };
        self.delivering[j_] = true;
        self.queue.push(self.now + delay, Event::Deliver(j));
    }

    fn violated(&mut self, property: Property, detail: String) {
        self.outcome =
            SimOutcome::Violated(Violation { property, steps: self.metrics.steps as usize, at_us: self.now, detail });
    }

    fn undecided(&mut self, reason: String) {
        self.outcome = SimOutcome::Undecided(Undecided { steps: self.metrics.steps as usize, at_us: self.now, reason });
    }

    /// After the healed phase: every live waiter has acquired, and nothing is left orphaned.
    fn judge_the_end(&mut self) {
        let healed_ms = self.now.saturating_sub(self.config.chaos_us) / 1000;
        match self.judge.the_end(&self.world, healed_ms, self.now / 1000) {
            Some(Ending::Broken(broken)) => self.violated(broken.property, broken.detail),
            Some(Ending::Undecided(reason)) => self.undecided(reason),
            None => {}
        }
    }
}
