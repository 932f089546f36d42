//! A recipe's claim to renumbering is checked as ranking uses it. Ranking ranks each kind of
//! number on its own (sequence numbers among sequence numbers, zxids among zxids), so two states
//! whose numbers compare alike within each kind are merged even where a number of one kind
//! compares otherwise with one of another. A recipe that compares its node's sequence number
//! with the node's czxid while claiming renumbering must be caught, and the run judged without
//! renumbering, with the verdicts of a run that never renumbered.

use zklab::check::{check, explore, Options, Status};
use zklab_model::{
    path, Belief, CreateMode, Ctx, EventType, Input, Recipe, Renumber, Request, Response, Rewrite, ZkError,
};

/// A sequential lock (waits on its predecessor with getData) that, oddly, takes the lock at
/// once when its node's sequence number exceeds the node's creation zxid. On a real server that
/// never happens (every create moves the zxid on, and a sequence number only on creates under
/// the lock), so the lock is correct; but the comparison crosses two kinds of number.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct CrossKindLock {
    lock: String,
    phase: Phase,
    node: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Phase {
    Idle,
    Creating,
    Listing,
    Checking(String),
    Waiting(String),
    Holding,
    Releasing,
}

impl CrossKindLock {
    fn new(lock: &str) -> Self {
        CrossKindLock { lock: lock.to_string(), phase: Phase::Idle, node: None }
    }

    fn list(&mut self, out: &mut Vec<Request>) {
        self.phase = Phase::Listing;
        out.push(Request::get_children(&self.lock, false));
    }
}

impl Recipe for CrossKindLock {
    fn name(&self) -> String {
        "cross-kind-lock".to_string()
    }

    fn handle(&mut self, _: &Ctx, input: Input, out: &mut Vec<Request>) {
        match (&self.phase, input) {
            (Phase::Idle, Input::Acquire) => {
                self.phase = Phase::Creating;
                out.push(Request::create(&format!("{}/n-", self.lock), CreateMode::EphemeralSequential));
            }
            (Phase::Creating, Input::Reply { result: Ok(Response::Created { path, stat }), .. }) => {
                let seq = path::sequence_of(path::name(&path), "n-").expect("a sequential name");
                self.node = Some(path);
                match i64::from(seq) > stat.czxid {
                    true => self.phase = Phase::Holding,
                    false => self.list(out),
                }
            }
            (Phase::Listing, Input::Reply { result: Ok(Response::Children { children, .. }), .. }) => {
                let mut children = children.to_vec();
                children.sort();
                let mine = self.node.as_deref().map(path::name).unwrap_or_default();
                match children.iter().position(|c| c == mine) {
                    Some(0) => self.phase = Phase::Holding,
                    Some(i) => {
                        let predecessor = format!("{}/{}", self.lock, children[i - 1]);
                        out.push(Request::get_data(&predecessor, true));
                        self.phase = Phase::Checking(predecessor);
                    }
                    None => self.phase = Phase::Idle,
                }
            }
            (Phase::Checking(p), Input::Reply { result: Ok(Response::Data { .. }), .. }) => {
                self.phase = Phase::Waiting(p.clone())
            }
            (Phase::Checking(_), Input::Reply { result: Err(ZkError::NoNode), .. }) => self.list(out),
            (Phase::Waiting(p), Input::Watch(e)) if &e.path == p && e.kind == EventType::NodeDeleted => self.list(out),
            (Phase::Holding, Input::Release) => {
                self.phase = Phase::Releasing;
                out.push(Request::delete(self.node.as_deref().expect("a holder has a node")));
            }
            (Phase::Releasing, Input::Reply { .. }) => {
                self.phase = Phase::Idle;
                self.node = None;
            }
            _ => {}
        }
    }

    fn belief(&self) -> Belief {
        let seq = self.node.as_deref().and_then(|n| path::sequence_of(path::name(n), "n-"));
        match self.phase {
            Phase::Idle => Belief::Idle,
            // The fencing token is the node's sequence number, as renumbering assumes.
            Phase::Holding => Belief::Holding { token: seq.map_or(0, i64::from) },
            Phase::Releasing => Belief::Releasing,
            _ => Belief::Acquiring,
        }
    }

    fn owned_node(&self) -> Option<&str> {
        self.node.as_deref()
    }

    fn waits_on_one_node(&self) -> bool {
        true
    }

    /// The claim: its numbers are its node's name and the one it watches, passed through `r`.
    fn renumbered(&self, _: zklab_model::ClientId, r: &Renumber) -> Option<Self> {
        let phase = match &self.phase {
            Phase::Checking(p) => Phase::Checking(r.path(p)),
            Phase::Waiting(p) => Phase::Waiting(r.path(p)),
            other => other.clone(),
        };
        Some(CrossKindLock { lock: self.lock.clone(), phase, node: self.node.as_deref().map(|n| r.path(n)) })
    }
}

#[test]
fn a_recipe_comparing_a_sequence_number_with_a_zxid_loses_its_renumbering() {
    let checked = check(CrossKindLock::new).clients(3).explore_everything().run();
    let refused = checked.outcome.renumbering_refused.as_deref();
    assert!(refused.is_some(), "the claim is checked with each kind moved on its own");
    checked.assert_proven();

    let never_renumbered = check(CrossKindLock::new).clients(3).world().without_renumbering();
    let exact = explore(never_renumbered, &Options { stop_at_violation: false, ..Options::default() });
    assert_eq!(checked.outcome.unique_states, exact.unique_states, "judged on the same graph");
    for v in &exact.verdicts {
        assert_eq!(v.status, Status::Holds, "{}", v.name());
        assert_eq!(checked.status(v.property), Some(v.status), "{}", v.name());
    }
}

#[test]
fn a_run_whose_numbers_grow_without_end_says_so_and_what_to_do() {
    use zklab_model::UNBOUNDED_ROUNDS;
    // Refused its renumbering, the lock's clients acquire forever and every lap makes new
    // numbers: the budget runs out, and the report says why the run could not end.
    let checked = check(CrossKindLock::new).clients(2).rounds(UNBOUNDED_ROUNDS).max_states(3_000).run();
    assert!(checked.outcome.bounded);
    let growing = checked.outcome.growing_numbers.as_ref().expect("the report says why");
    assert!(growing.kept_because.contains("refused"), "{}", growing.kept_because);
    assert!(growing.sequence >= 2 && growing.zxid > growing.sequence, "{growing:?}");
    assert!(growing.remedy.contains("Recipe::renumbered") && growing.remedy.contains("--rounds"));
    assert!(checked.to_string().contains("numbers are kept as they are"), "{checked}");

    // A lock whose numbers are renumbered (and that leaves no watch behind on a lap) has a
    // finite graph however often it is acquired.
    let mutex = |lock: &str| zklab_recipes::build("curator-mutex", lock).unwrap();
    let renumbered = check(mutex).clients(2).rounds(UNBOUNDED_ROUNDS).explore_everything().run();
    assert!(!renumbered.outcome.bounded);
    assert_eq!(renumbered.outcome.growing_numbers, None);
}
