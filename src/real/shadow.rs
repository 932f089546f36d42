//! The model world kept in step with a real run, so the real run is judged by the same
//! property code as the checker and the simulator, and its steps form an ordinary trace.
//!
//! Each thing that happens to a real client is a `ShadowStep`: the model step it is (`Acquire`,
//! `Receive`, `Fault(Disconnect)`, `Lossy(LossAfterApply, Acquire)`, ...), the input its recipe
//! was handed, the requests it sent and where the server applied each. The model applies a
//! request the moment its step sends it; the real server applies it a little later, in an order
//! of its own. So the shadow takes a client's steps in the client's order, and every step that
//! reaches the server at the place the server gave it: a write at its zxid, a read (or a
//! connection's cut, barred by a ping) after the last write the server had applied when it
//! answered (the zxid in the reply's header). A step whose place is not known yet (a reply on
//! its way) waits, and so does every step that might have to come after it. Among the steps
//! that may go next, the one that happened first in real time goes first.
//!
//! After each step the shadow checks that the model did what the real run did: the same
//! requests with the same results, the same input handed, the same belief (numbers aside: see
//! `unify`). Where it did not, the run has found a behaviour the model does not have, and the
//! shadow stops there (`Diverged`): what it judged up to then stands, the rest is unknown.

use super::unify::Unify;
use std::collections::VecDeque;
use zklab_model::world::Note;
use zklab_model::{Belief, ClientId, Input, Recipe, Request, SessionId, Step, World, ZkResult};
use zklab_sim::{Broken, Ending, Judge};

/// Where the server put something, in its order of applying: after the write with this zxid;
/// a write comes before the reads that saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Place {
    pub zxid: i64,
    /// A read (or a barrier) that saw the write `zxid`, as opposed to that write itself.
    pub read: bool,
}

impl Place {
    pub fn write(zxid: i64) -> Place {
        Place { zxid, read: false }
    }
    pub fn read(zxid: i64) -> Place {
        Place { zxid, read: true }
    }
}

/// Where a request (or a barrier) landed, or that it is still on its way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Landing {
    /// Sent; no reply yet. The server cannot put it before `floor`: what it had already
    /// applied when the request was sent, as far as the sender knew.
    InFlight {
        floor: Place,
    },
    At(Place),
    /// Never reached the server (lost before it was applied).
    Nowhere,
}

/// A request one step sent, and what became of it.
#[derive(Clone, Debug)]
pub struct Sent {
    pub request: Request,
    pub landing: Landing,
    /// The reply, as the real recipe was handed it or would have been (a reply the fault
    /// swallowed is still known to the driver).
    pub result: Option<ZkResult>,
}

/// One step of one real client.
#[derive(Clone, Debug)]
pub struct ShadowStep {
    pub at_us: u64,
    pub step: Step,
    /// For a `Receive`: what the real recipe was handed.
    pub input: Option<Input>,
    pub sent: Vec<Sent>,
    /// A step that reaches the server without a request of its own: a cut's barrier, a
    /// session's close, a reconnect's SetWatches.
    pub barrier: Option<Landing>,
    /// What the real recipe believed after it.
    pub belief: Belief,
}

impl ShadowStep {
    pub fn new(at_us: u64, step: Step, belief: Belief) -> ShadowStep {
        ShadowStep { at_us, step, input: None, sent: Vec::new(), barrier: None, belief }
    }

    fn landings(&self) -> impl Iterator<Item = Landing> + '_ {
        self.sent.iter().map(|s| s.landing).chain(self.barrier)
    }

    /// Where the step goes in the server's order: at the last place it reached (the model
    /// applies a step's requests together; a real server may apply another session's request
    /// between two of them, and what that changed shows in the results compared). While a
    /// request is on its way this is a bound from below; `None` for a step that does not reach
    /// the server.
    fn key(&self) -> Option<Place> {
        self.landings()
            .filter_map(|l| match l {
                Landing::InFlight { floor } => Some(floor),
                Landing::At(p) => Some(p),
                Landing::Nowhere => None,
            })
            .max()
    }

    fn known(&self) -> bool {
        self.landings().all(|l| !matches!(l, Landing::InFlight { .. }))
    }
}

/// A request the real server answered otherwise than the model: the run's last step (the one
/// that diverged) sent it as its `index`-th request that reached the server.
#[derive(Clone, Debug)]
pub struct Exchange {
    pub client: ClientId,
    pub index: usize,
    pub request: Request,
    pub real: ZkResult,
    pub model: ZkResult,
}

/// The first step of a run that woke two or more waiters of an exclusive lock (`no_herd`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Herd {
    /// Steps taken up to and including it.
    pub steps: usize,
    pub at_us: u64,
    pub woken: Vec<ClientId>,
}

/// How the shadow stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Standing {
    Agrees,
    Broke {
        broken: Broken,
        at_us: u64,
    },
    /// The run ended with a client still waiting while the model world could still move (no
    /// deadlock): a slow lock and a stuck one look alike here, so there is no verdict.
    Undecided {
        why: String,
        at_us: u64,
    },
    /// The model could not follow the real run from this step on.
    Diverged {
        client: ClientId,
        step: Step,
        at_us: u64,
        why: String,
    },
}

pub struct Shadow<R> {
    pub world: World<R>,
    judge: Judge,
    unify: Unify,
    /// Every client's entries not yet taken, oldest first.
    pending: Vec<VecDeque<ShadowStep>>,
    /// How many of each client's entries were taken.
    steps_of: Vec<u64>,
    /// The furthest place taken, and by whose step.
    frontier: Option<(Place, ClientId, Step)>,
    pub steps: Vec<Step>,
    pub times_us: Vec<u64>,
    /// The first herd, if a step woke one (`Herd`).
    pub herd: Option<Herd>,
    pub standing: Standing,
    /// Whether each step is judged (off when steering through a trace, whose own verdict is
    /// checked on the steps once all happened).
    pub judging: bool,
    /// Where the run diverged on an answer, the exchange (`case` writes it as a script).
    pub exchange: Option<Exchange>,
}

impl<R: Recipe> Shadow<R> {
    pub fn new(world: World<R>, unify: Unify) -> Self {
        let n = world.clients.len();
        Shadow {
            judge: Judge::new(&world),
            world,
            unify,
            pending: vec![VecDeque::new(); n],
            steps_of: vec![0; n],
            frontier: None,
            steps: Vec::new(),
            times_us: Vec::new(),
            herd: None,
            standing: Standing::Agrees,
            judging: true,
            exchange: None,
        }
    }

    /// The model session client `i` runs as now.
    pub fn session(&self, i: usize) -> SessionId {
        self.world.clients[i].session
    }

    pub fn unify(&mut self) -> &mut Unify {
        &mut self.unify
    }

    /// Records a step of client `i`; returns its index among the client's entries not yet
    /// taken, for `entry_mut`.
    pub fn push(&mut self, i: usize, entry: ShadowStep) -> u64 {
        self.pending[i].push_back(entry);
        self.steps_of[i] + self.pending[i].len() as u64 - 1
    }

    /// An entry recorded earlier, by the number `push` gave it (`None` once taken).
    pub fn entry_mut(&mut self, i: usize, number: u64) -> Option<&mut ShadowStep> {
        let offset = number.checked_sub(self.steps_of[i])?;
        self.pending[i].get_mut(offset as usize)
    }

    /// Takes every step that may be taken now, oldest first, leaving the ones younger than
    /// `margin_us` at `now_us` (a read on a follower may still come in behind them).
    pub fn advance(&mut self, now_us: u64, margin_us: u64) {
        while self.standing == Standing::Agrees {
            let Some(i) = self.next_step(now_us, margin_us) else { return };
            let entry = self.pending[i].pop_front().expect("chosen from the pending");
            self.steps_of[i] += 1;
            self.take(i, entry);
        }
    }

    /// The run's end, judged as the simulator judges its end.
    pub fn judge_the_end(&self, healed_ms: u64, now_ms: u64) -> Option<Ending> {
        self.judge.the_end(&self.world, healed_ms, now_ms)
    }

    /// Something the model would still hand a client whose real counterpart never got it (a
    /// notification the real server never sent): a real run that ends there stopped short of
    /// the model, so its end cannot be judged (a waiter the model would still wake is no
    /// waiter stuck). Marks the run diverged; whether it did.
    pub fn unfinished(&mut self, at_us: u64) -> bool {
        if self.standing != Standing::Agrees {
            return false;
        }
        let left = self.world.clients.iter().enumerate().find_map(|(i, c)| {
            c.inbound.front().filter(|_| c.runs()).map(|input| (i, zklab_model::world::describe_input(input)))
        });
        let Some((i, input)) = left else { return false };
        let why =
            format!("the run ended with `{input}` still to hand to c{i} in the model; the real client never got it");
        self.standing = Standing::Diverged { client: i as ClientId, step: Step::Receive(i as ClientId), at_us, why };
        true
    }

    /// Whether entries are still waiting to be taken.
    pub fn waiting(&self) -> bool {
        self.pending.iter().any(|p| !p.is_empty())
    }

    /// Says why the remaining entries cannot be taken (the real run is over): the model never
    /// enabled the first one.
    pub fn stuck(&mut self) {
        if self.standing != Standing::Agrees {
            return;
        }
        if let Some((i, e)) = self.pending.iter().enumerate().find_map(|(i, p)| p.front().map(|e| (i, e))) {
            let why = match e.known() {
                true => "the model cannot take this step here".to_string(),
                false => "a request's reply never came".to_string(),
            };
            self.standing = Standing::Diverged { client: i as ClientId, step: e.step, at_us: e.at_us, why };
        }
    }

    /// The client whose next entry goes next: enabled, its places known, nothing that might
    /// come before it still pending, the oldest such.
    fn next_step(&self, now_us: u64, margin_us: u64) -> Option<usize> {
        let mut best: Option<(u64, usize)> = None;
        for (i, pending) in self.pending.iter().enumerate() {
            let Some(e) = pending.front() else { continue };
            if e.at_us.saturating_add(margin_us) > now_us || !e.known() || !self.world.enabled(e.step) {
                continue;
            }
            if let Some(place) = e.key() {
                let before = |(j, p): (usize, &VecDeque<ShadowStep>)| {
                    j != i && p.iter().any(|other| other.key().is_some_and(|q| q < place))
                };
                if self.pending.iter().enumerate().any(before) {
                    continue;
                }
            }
            if best.is_none_or(|(at, _)| e.at_us < at) {
                best = Some((e.at_us, i));
            }
        }
        best.map(|(_, i)| i)
    }

    fn take(&mut self, i: usize, entry: ShadowStep) {
        let diverge =
            |why: String| Standing::Diverged { client: i as ClientId, step: entry.step, at_us: entry.at_us, why };
        if let (Some(key), Some((frontier, by, step))) = (entry.key(), self.frontier) {
            if key < frontier {
                self.standing = diverge(format!(
                    "the server placed it ({:?}) at {key:?}, behind {frontier:?} of c{by}'s step {step} already taken: \
                        a read older than the model allows",
                    entry.sent
                ));
                return;
            }
        }
        if let Some(key) = entry.key() {
            if self.frontier.is_none_or(|(f, _, _)| key > f) {
                self.frontier = Some((key, i as ClientId, entry.step));
            }
        }
        let expected = match entry.step {
            Step::Receive(_) | Step::Lossy(_, zklab_model::world::Sending::Receive, _) => {
                self.world.clients[i].inbound.front().cloned()
            }
            _ => None,
        };
        let held = self.world.clients[i].holds();
        let mut notes = Some(Vec::new());
        if let Err(e) = self.world.apply_logged(entry.step, &mut notes) {
            self.standing = diverge(e.to_string());
            return;
        }
        self.steps.push(entry.step);
        // The model's order is the server's (by zxid), which a client's clock may have seen a
        // little out of order: a step is drawn no earlier than the one it follows, so a trace's
        // times only move forward.
        let at_us = self.times_us.last().map_or(entry.at_us, |&last| entry.at_us.max(last));
        self.times_us.push(at_us);
        if let Err(why) = self.compare(i, &entry, expected, notes.unwrap_or_default()) {
            self.standing = diverge(why);
            return;
        }
        self.judge.after_step(&self.world, i as ClientId, held);
        if !self.judging {
            return;
        }
        if let Some(property) = self.judge.safety(&self.world) {
            let broken = Broken { property, detail: String::new() };
            self.standing = Standing::Broke { broken, at_us: entry.at_us };
        }
        if self.herd.is_none() {
            // Judged from the notifications the step queued, as the simulator judges it; the
            // run goes on (its figures are the herd's), and the herd is its verdict at the end.
            if let Some(woken) = self.judge.herd(entry.step, &self.world) {
                self.herd = Some(Herd { steps: self.steps.len(), at_us, woken });
            }
        }
    }

    /// Whether the model's step did what the real one did.
    fn compare(
        &mut self,
        i: usize,
        entry: &ShadowStep,
        expected: Option<Input>,
        notes: Vec<Note>,
    ) -> Result<(), String> {
        if let (Some(real), Some(model)) = (&entry.input, &expected) {
            self.unify.input(real, model)?;
        }
        let model_requests: Vec<(Request, Option<ZkResult>)> = notes
            .into_iter()
            .filter_map(|n| match n {
                Note::Request { request, result } => Some((request, result)),
                _ => None,
            })
            .collect();
        let reached: Vec<&Sent> = entry.sent.iter().filter(|s| s.landing != Landing::Nowhere).collect();
        let model_reached: Vec<&(Request, Option<ZkResult>)> =
            model_requests.iter().filter(|(_, result)| result.is_some()).collect();
        if reached.len() != model_reached.len() {
            return Err(format!(
                "the real recipe's step reached the server with {} request(s), the model's with {}",
                reached.len(),
                model_reached.len()
            ));
        }
        for (index, (real, (request, result))) in reached.iter().zip(model_reached).enumerate() {
            if real.request != *request {
                return Err(format!("the real recipe sent {:?}, the model's {request:?}", real.request));
            }
            if let (Some(real), Some(model)) = (&real.result, result) {
                if let Err(why) = self.unify.result(real, model) {
                    let (real, model) = (real.clone(), model.clone());
                    let client = i as ClientId;
                    self.exchange = Some(Exchange { client, index, request: request.clone(), real, model });
                    return Err(why);
                }
            }
        }
        self.unify.belief(entry.belief, self.world.clients[i].belief())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zklab_model::world::Note;
    use zklab_model::{Response, WorldConfig};
    use zklab_recipes::AnyRecipe;

    fn world() -> World<AnyRecipe> {
        let recipes = (0..2).map(|_| zklab_recipes::build("standard", "/lock").unwrap()).collect();
        World::new(WorldConfig::default(), recipes)
    }

    /// What the server answers `steps` applied in this order, with real zxids 100 above the
    /// model's: the results the real run would have seen.
    fn answers(steps: &[Step]) -> Vec<ZkResult> {
        let mut w = world();
        let mut out = Vec::new();
        for step in steps {
            let mut notes = Some(Vec::new());
            w.apply_logged(*step, &mut notes).unwrap();
            for note in notes.unwrap() {
                if let Note::Request { result: Some(Ok(Response::Created { path, mut stat })), .. } = note {
                    (stat.czxid, stat.mzxid, stat.pzxid) = (stat.czxid + 100, stat.mzxid + 100, stat.pzxid + 100);
                    out.push(Ok(Response::Created { path, stat }));
                }
            }
        }
        out
    }

    fn acquire(client: usize, at_us: u64, landing: Landing, result: Option<ZkResult>) -> ShadowStep {
        let session = world().clients[client].session;
        let request = zklab_recipes::build("standard", "/lock").map(|mut r: AnyRecipe| {
            let mut out = Vec::new();
            r.handle(&zklab_model::Ctx { client: client as ClientId, session }, Input::Acquire, &mut out);
            out.remove(0)
        });
        let mut e = ShadowStep::new(at_us, Step::Acquire(client as ClientId), Belief::Acquiring);
        e.sent.push(Sent { request: request.unwrap(), landing, result });
        e
    }

    #[test]
    fn steps_are_taken_in_the_servers_order_and_wait_for_replies_on_their_way() {
        // The server applied c1's create (zxid 102) before c0's (103), though c0 sent first.
        let results = answers(&[Step::Acquire(1), Step::Acquire(0)]);
        let mut shadow = Shadow::new(world(), Unify::default());
        let c0 = shadow.push(0, acquire(0, 10, Landing::InFlight { floor: Place::read(101) }, None));
        shadow.push(1, acquire(1, 20, Landing::At(Place::write(102)), Some(results[0].clone())));
        shadow.advance(1_000, 0);
        assert!(shadow.steps.is_empty(), "c0's create may still land before c1's: nothing is taken");

        let e = shadow.entry_mut(0, c0).unwrap();
        e.sent[0].landing = Landing::At(Place::write(103));
        e.sent[0].result = Some(results[1].clone());
        shadow.advance(1_000, 0);
        assert_eq!(shadow.standing, Standing::Agrees);
        assert_eq!(
            shadow.steps,
            vec![Step::Acquire(1), Step::Acquire(0)],
            "in the server's order, not the sending order"
        );
    }

    #[test]
    fn an_answer_the_model_would_not_give_is_a_divergence_not_a_pass() {
        // The real server (supposedly) named c0's node 7 where the model names it 0.
        let mut results = answers(&[Step::Acquire(0)]);
        if let Ok(Response::Created { path, .. }) = &mut results[0] {
            *path = path.replace("0000000000", "0000000007");
        }
        let mut shadow = Shadow::new(world(), Unify::default());
        shadow.push(0, acquire(0, 10, Landing::At(Place::write(101)), Some(results[0].clone())));
        shadow.advance(1_000, 0);
        assert!(matches!(shadow.standing, Standing::Diverged { client: 0, .. }), "{:?}", shadow.standing);
    }
}
