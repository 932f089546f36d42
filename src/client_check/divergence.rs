//! A library's schedule run on zklab's model of the same library, and where the two part.
//!
//! Where zklab has a model of a library (`kazoo-lock` for kazoo's `Lock`, `curator-mutex` for
//! Curator's `InterProcessMutex`, `zk-write-lock` for ZooKeeper's `WriteLock`), a schedule the
//! real clients ran is followed on a model world of that recipe, choice by choice, and the first
//! place where the model cannot do what the library did is a divergence: the model is wrong
//! about the library there, or the library does something the model leaves out.
//!
//! How a choice is followed. The model's steps are coarser than the scheduler's choices: a
//! model client handles a message and sends its next request in one step, which the server
//! applies at once; a real client is handed the message, reacts, and its request waits for the
//! schedule. So the model takes a client's step lazily, when the schedule shows what it did:
//!
//! - **a request applied** (`Apply`): the model client's next request must be the same request
//!   (the same op on the same node, a sequential node known by its suffix, with the same mode
//!   and watch). It comes from the first of: a request the model already sent and the library
//!   has not (a model client sends while disconnected, and the server applies those on
//!   reconnect); handling the next message the library has been handed; the application asking
//!   for the lock; the application writing and giving the lock back. Requests outside the lock's
//!   business (`/zookeeper`, Curator's ensemble tracker), session traffic (setWatches,
//!   closeSession), a read without a watch of the client's own node that the model would not
//!   send (the built-in drivers hold for one `exists` of their node), and making
//!   sure the lock's parent exists where it does (a model may take it as given) are the
//!   library's or the application's own and are passed over, and so are their replies.
//! - **a message handed** (`Deliver`): the model client may handle one more message; it does at
//!   once if handling it sends nothing (a watch that wakes nobody, a reply that makes it the
//!   holder), or when its request shows up. What a real client learns from the connection
//!   itself (a state change, a request its library fails with connection loss or an expired
//!   session when the connection goes) the model's client is always handed.
//! - **a request lost before or after apply**: as a request applied, the model's step taken
//!   with that fault; a request passed over, lost, is the model's client's connection dropped
//!   where it stands.
//! - **a session expired**: the model's client is cut off past its session timeout, notices,
//!   and the server expires the session; the frames the server flushed first are handed, and
//!   a request sent and not yet applied is lost with the connection (as before apply).
//! - **a connection dropped** (`Disconnect`): the model's client is disconnected where it
//!   stands; what was held is lost, not handed, and a request sent and not yet applied is lost
//!   as before apply. A reply lost with it cannot be placed: the model's client receives the
//!   reply to every request it applied, unless the request was struck by a loss after apply.
//! - **a handshake answered** (`Connect`): the model's client reconnects, if its connection is
//!   down (kazoo's second handshake, with a new session after an expiry, has no step of its
//!   own in the model).
//!
//! At the end the acquisitions are compared, in order: each time a client came to believe it
//! holds, in the library's history and in the model's beliefs; and if every real client
//! finished, every model client must have too. What is compared is the lock's behaviour, not
//! the library's timing: a divergence names the choice, what the library did and what the
//! model would have done.

use super::run::{RunResult, Setup};
use super::switchboard::Choice;
use super::ClientProgram;
use std::collections::VecDeque;
use zklab_model::world::{describe_request, Link, Note, Sending};
use zklab_model::{Belief, ClientBehaviour, ClientFault, FaultBudget, FaultKind, Input, RequestFault};
use zklab_model::{Request, Step, World, WorldConfig, ZkError};
use zklab_recipes::registry::{self, AnyRecipe};

/// What a choice moved, as the library's run recorded it for following on the model.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Moved {
    /// The request an apply or a loss moved, or the one an expiry's closed connection lost,
    /// decoded (none for session traffic).
    pub request: Option<Request>,
    /// The frames the client was handed: a delivery's one, or what an expiry flushes before it
    /// closes the connection; each a reply (true) or an event (false).
    pub frames: Vec<bool>,
}

/// The model zklab has of a built-in library, and how its client library reconnects.
pub fn model_of(program: &ClientProgram) -> Option<(&'static str, ClientBehaviour)> {
    match program {
        ClientProgram::Kazoo => Some(("kazoo-lock", ClientBehaviour::Kazoo)),
        ClientProgram::Curator => Some(("curator-mutex", ClientBehaviour::Java)),
        ClientProgram::WriteLock => Some(("zk-write-lock", ClientBehaviour::Java)),
        _ => None,
    }
}

/// Where the model could not do what the library did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Divergence {
    /// The choice (1-based) at which they part; the schedule's length plus one for the end.
    pub choice: usize,
    pub client: Option<usize>,
    pub library: String,
    pub model: String,
    /// Whether the model did something else (false), or the follower cannot place the choice
    /// on the model's coarser steps (true): the model sends what a disconnected client asks on
    /// reconnecting at once, and a new session's first request in the step that learns of the
    /// expiry, so a fault on such a request has no place there.
    pub unplaced: bool,
}

impl std::fmt::Display for Divergence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let who = self.client.map_or(String::new(), |c| format!(" c{c}"));
        let how = if self.unplaced { " (cannot be placed on the model's steps)" } else { "" };
        write!(f, "choice {}{who}{how}: the library {}; the model {}", self.choice, self.library, self.model)
    }
}

/// The schedule followed on the model.
#[derive(Clone, Debug)]
pub struct Followed {
    pub model: &'static str,
    /// The model's steps, as far as it followed.
    pub steps: Vec<Step>,
    pub divergence: Option<Divergence>,
}

/// Follows `run`, a run of `setup`, on the library's model; `None` if zklab has no model of it.
pub fn follow(setup: &Setup, run: &RunResult) -> Option<Result<Followed, String>> {
    let (name, behaviour) = model_of(&setup.program)?;
    // The model counts rounds in a byte, its largest value meaning "for ever".
    let rounds = match u8::try_from(setup.task.rounds) {
        Ok(r) if r < zklab_model::UNBOUNDED_ROUNDS => r,
        _ => return Some(Err(format!("{} rounds are more than the model follows", setup.task.rounds))),
    };
    let task = &setup.task;
    let follower = Follower::new(name, behaviour, setup.clients, &task.lock_path, task.lock_made, rounds, run);
    Some(follower.map(|f| f.follow(run)))
}

struct Follower {
    model: &'static str,
    world: World<AnyRecipe>,
    lock_path: String,
    steps: Vec<Step>,
    /// Messages each client's library was handed that the model's client has not handled.
    handed: Vec<usize>,
    /// Requests each model client sent that the library's has not been seen to send.
    ahead: Vec<VecDeque<Request>>,
    /// The replies each library client has coming, oldest first: whether the model has the
    /// same reply coming (false for a request passed over: session traffic, the
    /// application's own reads).
    replies: Vec<VecDeque<bool>>,
    /// Each time a model client came to believe it holds, in order.
    acquired: Vec<usize>,
}

/// How a follower's step went wrong: a divergence whose choice the caller fills in.
type Parted = Divergence;

/// Client `c`'s library did `library` where the model did `model`.
fn parted(c: usize, library: &str, model: String) -> Divergence {
    Divergence { choice: 0, client: Some(c), library: library.to_string(), model, unplaced: false }
}

/// Client `c`'s choice cannot be placed on the model's steps (see `Divergence::unplaced`).
fn unplaced(c: usize, library: &str, model: String) -> Divergence {
    Divergence { unplaced: true, ..parted(c, library, model) }
}

impl Follower {
    fn new(
        model: &'static str,
        behaviour: ClientBehaviour,
        clients: usize,
        lock_path: &str,
        lock_made: bool,
        rounds: u8,
        run: &RunResult,
    ) -> Result<Self, String> {
        let recipes = (0..clients).map(|_| registry::build(model, lock_path)).collect::<Result<Vec<_>, _>>()?;
        // The faults the follower takes, each allowed as often as the schedule has choices: the
        // schedule's own, a request lost with an expired session's connection, a disconnect
        // for a request the model has no counterpart of.
        let mut faults = FaultBudget::none();
        let each = run.schedule.len() as u32;
        for kind in [FaultKind::LossBeforeApply, FaultKind::LossAfterApply, FaultKind::Expire, FaultKind::Disconnect] {
            faults.0[kind.index()] = each;
        }
        let config = WorldConfig {
            lock_path: lock_path.to_string(),
            client_behaviour: behaviour,
            rounds,
            faults,
            renumber: false,
            ..WorldConfig::default()
        };
        let mut world = World::new(config, recipes);
        // The model's world starts with the lock's parent made; the served one does only with
        // `lock_made`: otherwise the library makes it, and so must the model's recipe.
        if !lock_made {
            world.server.operator_delete(lock_path);
        }
        Ok(Follower {
            model,
            world,
            lock_path: lock_path.to_string(),
            steps: Vec::new(),
            handed: vec![0; clients],
            ahead: vec![VecDeque::new(); clients],
            replies: vec![VecDeque::new(); clients],
            acquired: Vec::new(),
        })
    }

    fn follow(mut self, run: &RunResult) -> Followed {
        let clients = self.handed.len();
        let mut divergence = None;
        for (k, choice) in run.schedule.iter().enumerate() {
            let moved = run.moved.get(k).cloned().unwrap_or_default();
            let said = run.steps.get(k).cloned().unwrap_or_default();
            let parted =
                self.choice(*choice, &moved, &said).and_then(|()| (0..clients).try_for_each(|c| self.settle(c)));
            if let Err(d) = parted {
                divergence = Some(Divergence { choice: k + 1, ..d });
                break;
            }
        }
        if divergence.is_none() {
            divergence = self.at_the_end(run);
        }
        Followed { model: self.model, steps: self.steps, divergence }
    }

    /// Follows one choice.
    fn choice(&mut self, choice: Choice, moved: &Moved, said: &str) -> Result<(), Parted> {
        let c = choice.client();
        match choice {
            Choice::Apply(_) => self.request(c, moved.request.as_ref(), None, said),
            Choice::LossBeforeApply(_) => {
                self.request(c, moved.request.as_ref(), Some(RequestFault::LossBeforeApply), said)
            }
            Choice::LossAfterApply(_) => {
                self.request(c, moved.request.as_ref(), Some(RequestFault::LossAfterApply), said)
            }
            Choice::Deliver(_) => self.hand(c, &moved.frames, said),
            Choice::Expire(_) => {
                self.hand(c, &moved.frames, said)?;
                // A request sent and not yet applied is lost with the connection the expiry
                // closes, as a request lost before apply.
                if let Some(lost) = &moved.request {
                    let said = format!("{said}, {} in flight", describe_request(lost));
                    self.request(c, Some(lost), Some(RequestFault::LossBeforeApply), &said)?;
                }
                self.replies[c].clear();
                self.take(c, Step::Fault(ClientFault::Expire, c as u32), said)?;
                // The model's client notices it is cut off (handling what it was handed first),
                // then the server expires the session.
                while !self.world.enabled(Step::Expire(c as u32)) {
                    if !self.receivable(c) {
                        return Err(parted(c, said, "cannot expire the session here".into()));
                    }
                    self.take(c, Step::Receive(c as u32), said)?;
                }
                self.take(c, Step::Expire(c as u32), said)
            }
            Choice::Disconnect(_) => {
                // What was held is lost, not handed. The model's client receives the reply to
                // every request it applied (only a loss after apply, struck as it sends, loses
                // one), so a reply the model has coming cannot be lost here.
                if self.replies[c].iter().any(|counted| *counted) {
                    return Err(unplaced(
                        c,
                        said,
                        "has the reply coming to a request it applied; it loses one only as a loss after apply".into(),
                    ));
                }
                // A request sent and not yet applied goes as a request lost before apply (which
                // drops the model's connection too).
                let lost = match &moved.request {
                    Some(lost) => {
                        let said = format!("{said}, {} in flight", describe_request(lost));
                        self.request(c, Some(lost), Some(RequestFault::LossBeforeApply), &said)
                    }
                    None => self.take(c, Step::Fault(ClientFault::Disconnect, c as u32), said),
                };
                self.replies[c].clear();
                lost
            }
            Choice::Connect(_) => match self.world.clients[c].link {
                Link::Down => self.take(c, Step::Reconnect(c as u32), said),
                _ => Ok(()),
            },
        }
    }

    /// The library's client `c` was handed `frames` (each a reply or an event): the model's
    /// client may handle as many, but for replies to requests passed over.
    fn hand(&mut self, c: usize, frames: &[bool], said: &str) -> Result<(), Parted> {
        for reply in frames {
            if *reply && self.replies[c].pop_front() == Some(false) {
                continue;
            }
            self.handed[c] += 1;
        }
        let waiting = self.world.clients[c].inbound.iter().filter(|i| !local(i)).count();
        if waiting < self.handed[c] {
            return Err(parted(c, &format!("was handed a message ({said})"), "has been sent nothing".into()));
        }
        Ok(())
    }

    /// The library's client `c` had `request` applied (or lost, with `fault`).
    fn request(
        &mut self,
        c: usize,
        request: Option<&Request>,
        fault: Option<RequestFault>,
        said: &str,
    ) -> Result<(), Parted> {
        // A connection lost takes the replies it had coming with it; a reply lost after apply
        // is never handed.
        match fault {
            Some(_) => self.replies[c].clear(),
            None => {
                let model_replies = request.is_some_and(|r| self.lock_business(r));
                self.replies[c].push_back(model_replies);
            }
        }
        let Some(request) = request.filter(|r| self.lock_business(r)) else { return self.passed_over(c, fault, said) };
        let wanted = shape(request);
        if let Some(sent) = self.ahead[c].pop_front() {
            return match (shape(&sent) == wanted, fault) {
                (true, None) => Ok(()),
                (true, Some(_)) => Err(unplaced(
                    c,
                    said,
                    format!("had sent {} while disconnected, applied when it reconnected", describe_request(&sent)),
                )),
                (false, _) => Err(parted(c, said, format!("sent {} next", describe_request(&sent)))),
            };
        }
        // The steps that could send it, in the order a client's work comes: a message it was
        // handed, the application asking, the application writing and releasing.
        let candidates: Vec<(Vec<Step>, Sending)> = [
            (self.receivable(c).then(|| vec![Step::Receive(c as u32)]), Sending::Receive),
            (Some(vec![Step::Acquire(c as u32)]), Sending::Acquire),
            (Some(vec![Step::Write(c as u32), Step::Release(c as u32)]), Sending::Release),
            (Some(vec![Step::Release(c as u32)]), Sending::Release),
        ]
        .into_iter()
        .filter_map(|(steps, sending)| Some((steps?, sending)))
        .collect();
        let mut would = Vec::new();
        for (steps, sending) in candidates {
            // The last step is the one that sends: the fault, if any, strikes it.
            let last = steps.len() - 1;
            let plan: Vec<Step> = steps
                .iter()
                .enumerate()
                .map(|(i, step)| match (i == last, fault) {
                    (true, Some(f)) => Step::Lossy(f, sending, c as u32),
                    _ => *step,
                })
                .collect();
            let mut trial = self.world.clone();
            let mut sent = Vec::new();
            let taken = plan.iter().all(|step| {
                let mut notes = Some(Vec::new());
                let ok = trial.apply_logged(*step, &mut notes).is_ok();
                sent.extend(requests(notes));
                ok
            });
            let Some(first) = sent.first().filter(|_| taken) else { continue };
            if shape(first) != wanted {
                would.push(describe_request(first));
                continue;
            }
            for step in plan {
                self.take(c, step, said)?;
            }
            // The one the library sent; the model's others wait for the library's.
            self.ahead[c].pop_front();
            return Ok(());
        }
        // A read without a watch of the client's own node, which the model would not send: the
        // application's own (the built-in drivers hold for one exists of their node, and go on
        // with it when the library says the lock may be lost).
        let own_read = match request {
            Request::Exists { path, watch: false } | Request::GetData { path, watch: false } => {
                let mine = Request::Exists { path: path.clone(), watch: false };
                self.world.clients[c]
                    .created
                    .iter()
                    .any(|(p, _)| shape(&Request::Exists { path: p.clone(), watch: false }) == shape(&mine))
            }
            _ => false,
        };
        if own_read {
            if let (None, Some(last)) = (fault, self.replies[c].back_mut()) {
                *last = false;
            }
            return self.passed_over(c, fault, said);
        }
        // Making sure the lock's parent exists (an exists without a watch, or a create, of it or
        // of a node above it) where it does exist changes nothing on the server: the library's
        // own, where its model takes the parent as given.
        if self.ensures_what_exists(request) {
            if let (None, Some(last)) = (fault, self.replies[c].back_mut()) {
                *last = false;
            }
            return self.passed_over(c, fault, said);
        }
        let belief = self.world.clients[c].belief();
        Err(match (would.is_empty(), fault) {
            // The model's client has a request to send only in a step a fault cannot strike (a
            // new session's first, after an expiry), or none.
            (true, Some(_)) => {
                unplaced(c, said, format!("has no request here that the fault can strike (it believes {belief:?})"))
            }
            (true, None) => parted(c, said, format!("has no request to send (it believes {belief:?})")),
            (false, _) => parted(c, said, format!("would send {}", would.join(" or "))),
        })
    }

    /// A request of client `c` the model has no counterpart of (session traffic, the
    /// application's own read) was applied, or lost with its connection (`fault`): the model's
    /// client then loses its connection where it stands.
    fn passed_over(&mut self, c: usize, fault: Option<RequestFault>, said: &str) -> Result<(), Parted> {
        match fault {
            None => Ok(()),
            Some(_) => self.take(c, Step::Fault(ClientFault::Disconnect, c as u32), said),
        }
    }

    /// Whether client `c`'s next message is one it may handle: a state event, or one its
    /// library has been handed.
    fn receivable(&self, c: usize) -> bool {
        match self.world.clients[c].inbound.front() {
            None => false,
            Some(input) if local(input) => true,
            Some(_) => self.handed[c] > 0,
        }
    }

    /// Client `c` handles what it may (see `receivable`) as long as handling it sends nothing.
    fn settle(&mut self, c: usize) -> Result<(), Parted> {
        while self.receivable(c) && self.world.enabled(Step::Receive(c as u32)) {
            let mut trial = self.world.clone();
            let mut notes = Some(Vec::new());
            if trial.apply_logged(Step::Receive(c as u32), &mut notes).is_err() {
                break;
            }
            if requests(notes).iter().any(|r| self.lock_business(r)) {
                break;
            }
            self.take(c, Step::Receive(c as u32), "")?;
        }
        Ok(())
    }

    /// Takes `step` for client `c`; the requests it sent wait in `ahead` for the library's.
    fn take(&mut self, c: usize, step: Step, said: &str) -> Result<(), Parted> {
        let handles = matches!(step, Step::Receive(_) | Step::Lossy(_, Sending::Receive, _));
        let handled_message = handles && !self.world.clients[c].inbound.front().is_some_and(local);
        // Holding again after a suspension (the same session back) is no new acquisition: a
        // real client's history says `acquired` once a hold.
        let before = self.world.clients[c].belief();
        let held = before.is_holding() || matches!(before, Belief::Suspended { .. });
        let mut notes = Some(Vec::new());
        self.world.apply_logged(step, &mut notes).map_err(|e| parted(c, said, format!("cannot follow ({e})")))?;
        if handled_message {
            self.handed[c] = self.handed[c].saturating_sub(1);
        }
        if !held && self.world.clients[c].belief().is_holding() {
            self.acquired.push(c);
        }
        self.steps.push(step);
        let sent: Vec<Request> = requests(notes).into_iter().filter(|r| self.lock_business(r)).collect();
        self.ahead[c].extend(sent);
        Ok(())
    }

    /// Whether `request` makes sure the lock's parent (or a node above it) exists, where it
    /// does: it changes nothing on the server.
    fn ensures_what_exists(&self, request: &Request) -> bool {
        let target = match request {
            Request::Exists { path, watch: false } => path,
            Request::Create { path, .. } => path,
            _ => return false,
        };
        let at_or_above = self.lock_path == *target || self.lock_path.starts_with(&format!("{target}/"));
        at_or_above && self.world.server.tree().get(target).is_some()
    }

    /// Whether `request` is the lock's business (not `/zookeeper`'s).
    fn lock_business(&self, request: &Request) -> bool {
        // A multi names no path of its own: it is the lock's business, as before.
        let path = if matches!(request, Request::Multi { .. }) { "" } else { request.path() };
        !(path == "/zookeeper" || path.starts_with("/zookeeper/")) || self.lock_path.starts_with("/zookeeper")
    }

    /// The acquisitions compared, and whether every client finished in both.
    fn at_the_end(&mut self, run: &RunResult) -> Option<Divergence> {
        let end = run.schedule.len() + 1;
        let library: Vec<usize> =
            run.story().iter().filter(|(_, _, said)| said.starts_with("acquired")).map(|(_, c, _)| *c).collect();
        let show = |v: &[usize]| v.iter().map(|c| format!("c{c}")).collect::<Vec<_>>().join(", ");
        let model = self.acquired.clone();
        if library != model {
            return Some(Divergence {
                choice: end,
                client: None,
                library: format!("acquired in the order [{}]", show(&library)),
                model: format!("in the order [{}]", show(&model)),
                unplaced: false,
            });
        }
        if run.end == super::End::Done {
            // A release whose request never reached the server (its session gone, the library
            // failed it locally) showed no choice to take the model's release at: it is taken
            // now, and so is what the model's clients learn from their connections.
            for c in 0..self.world.clients.len() {
                for step in [Step::Write(c as u32), Step::Release(c as u32)] {
                    if self.world.enabled(step) && self.take(c, step, "").is_err() {
                        break;
                    }
                }
                let _ = self.settle(c);
            }
            let unfinished: Vec<String> = self
                .world
                .clients
                .iter()
                .enumerate()
                .filter(|(_, c)| c.rounds_left > 0 || !matches!(c.belief(), Belief::Idle | Belief::Releasing))
                .map(|(i, c)| format!("c{i} believes {:?}", c.belief()))
                .collect();
            if !unfinished.is_empty() {
                return Some(Divergence {
                    choice: end,
                    client: None,
                    library: "finished every client".into(),
                    model: format!("did not: {}", unfinished.join(", ")),
                    unplaced: false,
                });
            }
        }
        None
    }
}

/// Whether a real client learns `input` from its connection rather than from a frame the
/// server sent: a state change, or a request failed by the client library itself (connection
/// loss, a session expired) when the connection went.
fn local(input: &Input) -> bool {
    match input {
        Input::State(_) => true,
        Input::Reply { result: Err(e), .. } => matches!(e, ZkError::ConnectionLoss | ZkError::SessionExpired),
        _ => false,
    }
}

/// The requests a step's notes say it sent.
fn requests(notes: Option<Vec<Note>>) -> Vec<Request> {
    notes
        .unwrap_or_default()
        .into_iter()
        .filter_map(|n| match n {
            Note::Request { request, .. } => Some(request),
            _ => None,
        })
        .collect()
}

/// A request as the comparison sees it: its description with each sequential name known by its
/// suffix alone and a sequential create's name by nothing (the prefixes are each library's and
/// each model's own: a uuid, a client number).
fn shape(request: &Request) -> String {
    let sequential_create = matches!(request, Request::Create { mode, .. } if mode.is_sequential());
    describe_request(request)
        .split(' ')
        .map(|word| match word.starts_with('/') {
            false => word.to_string(),
            true => {
                let parts: Vec<&str> = word.split('/').collect();
                let last = parts.len() - 1;
                parts
                    .iter()
                    .enumerate()
                    .map(|(i, part)| match super::server_state::suffix(part) {
                        Some(suffix) => format!("#{suffix}"),
                        None if i == last && sequential_create => "*".to_string(),
                        None => part.to_string(),
                    })
                    .collect::<Vec<_>>()
                    .join("/")
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use zklab_model::CreateMode;

    #[test]
    fn a_request_is_compared_without_the_prefixes_of_its_sequential_names() {
        let library = Request::Exists { path: "/lock/6f1c0a9e4b__lock__0000000003".into(), watch: true };
        let model = Request::Exists { path: "/lock/c1__lock__0000000003".into(), watch: true };
        assert_eq!(shape(&library), shape(&model));
        let other = Request::Exists { path: "/lock/c1__lock__0000000004".into(), watch: true };
        assert_ne!(shape(&library), shape(&other));
        let create = |p: &str| Request::create(p, CreateMode::EphemeralSequential);
        assert_eq!(shape(&create("/lock/6f1c0a9e4b__lock__")), shape(&create("/lock/c1__lock__")));
        assert_ne!(shape(&create("/lock/x")), shape(&Request::create("/lock/x", CreateMode::Ephemeral)));
    }
}
