//! Renumbering by replay: a recipe that writes no renumbering of its own is renumbered by
//! handing a fresh copy its inputs again with ranked numbers (`zklab_model::reduce::world::replay`).
//! A leader latch that volunteers again and again makes new sequence numbers and zxids
//! forever: kept as they are, its graph has no end; renumbered by replay, it is proven, on the
//! very graph a written renumbering gives. A latch that reads a number's value has the claim
//! refused and is judged without renumbering.

use zklab::check::{check, explore, Options, Status};
use zklab_model::{
    path, Belief, ClientId, CreateMode, Ctx, EventType, FaultKind, Input, Mode, Recipe, Renamer, Renumber, Request,
    Response, Rewrite, SessionState, ZkError, UNBOUNDED_ROUNDS,
};
use zklab_recipes::AnyRecipe;

/// A leader latch: volunteers with an ephemeral-sequential node, leads while its node is the
/// lowest, otherwise watches its predecessor with getData; steps down by deleting its node,
/// and volunteers again with a new node after its session expires. It writes no renumbering.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Latch {
    lock: String,
    phase: Phase,
    node: Option<String>,
    /// Leads at once when its node is numbered 0, without listing (a reading of a number's
    /// value, which renumbering cannot keep).
    zero_leads: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Phase {
    Idle,
    Creating,
    Listing,
    Checking(String),
    Waiting(String),
    Leading,
    SteppingDown,
}

impl Latch {
    fn new(lock: &str) -> Self {
        Latch { lock: lock.to_string(), phase: Phase::Idle, node: None, zero_leads: false }
    }

    fn reading_zero(lock: &str) -> Self {
        Latch { zero_leads: true, ..Latch::new(lock) }
    }

    fn volunteer(&mut self, out: &mut Vec<Request>) {
        self.phase = Phase::Creating;
        self.node = None;
        out.push(Request::create(&format!("{}/n-", self.lock), CreateMode::EphemeralSequential));
    }

    fn list(&mut self, out: &mut Vec<Request>) {
        self.phase = Phase::Listing;
        out.push(Request::get_children(&self.lock, false));
    }

    fn seq(&self) -> Option<i32> {
        self.node.as_deref().and_then(|n| path::sequence_of(path::name(n), "n-"))
    }
}

impl Recipe for Latch {
    fn name(&self) -> String {
        "latch".to_string()
    }

    fn handle(&mut self, _: &Ctx, input: Input, out: &mut Vec<Request>) {
        match (&self.phase, input) {
            (Phase::Idle, Input::Acquire) => self.volunteer(out),
            (_, Input::State(SessionState::Expired)) if self.phase != Phase::Idle => self.volunteer(out),
            (Phase::Creating, Input::Reply { result: Ok(Response::Created { path, .. }), .. }) => {
                self.node = Some(path);
                match self.zero_leads && self.seq() == Some(0) {
                    true => self.phase = Phase::Leading,
                    false => self.list(out),
                }
            }
            (Phase::Listing, Input::Reply { result: Ok(Response::Children { children, .. }), .. }) => {
                let mut children = children.to_vec();
                children.sort();
                let mine = self.node.as_deref().map(path::name).unwrap_or_default();
                match children.iter().position(|c| c == mine) {
                    Some(0) => self.phase = Phase::Leading,
                    Some(i) => {
                        let predecessor = path::join(&self.lock, &children[i - 1]);
                        out.push(Request::get_data(&predecessor, true));
                        self.phase = Phase::Checking(predecessor);
                    }
                    None => self.volunteer(out),
                }
            }
            (Phase::Checking(p), Input::Reply { result: Ok(Response::Data { .. }), .. }) => {
                self.phase = Phase::Waiting(p.clone())
            }
            (Phase::Checking(_), Input::Reply { result: Err(ZkError::NoNode), .. }) => self.list(out),
            (Phase::Waiting(p), Input::Watch(e)) if &e.path == p && e.kind == EventType::NodeDeleted => self.list(out),
            (Phase::Leading, Input::Release) => {
                self.phase = Phase::SteppingDown;
                out.push(Request::delete(self.node.as_deref().expect("a leader has a node")));
            }
            (Phase::SteppingDown, Input::Reply { .. }) => {
                self.phase = Phase::Idle;
                self.node = None;
            }
            _ => {}
        }
    }

    fn belief(&self) -> Belief {
        match self.phase {
            Phase::Idle => Belief::Idle,
            Phase::Leading => Belief::Holding { token: self.seq().map_or(0, i64::from) },
            Phase::SteppingDown => Belief::Releasing,
            _ => Belief::Acquiring,
        }
    }

    fn owned_node(&self) -> Option<&str> {
        self.node.as_deref()
    }

    fn waits_on_one_node(&self) -> bool {
        true
    }

    /// Supported: its names carry no client's identity, and contenders are ordered by sequence
    /// number alone.
    fn renamed(&self, _: &Renamer) -> Option<Self> {
        Some(self.clone())
    }
}

/// The latch with its renumbering written by hand (its numbers are its node's name and the
/// one it watches), or saying no to renumbering by replay.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Told {
    Written(Latch),
    SaysNo(Latch),
}

impl Told {
    fn latch(&self) -> &Latch {
        match self {
            Told::Written(l) | Told::SaysNo(l) => l,
        }
    }
}

impl Recipe for Told {
    fn name(&self) -> String {
        match self {
            Told::Written(_) => "latch-written".to_string(),
            Told::SaysNo(_) => "latch-says-no".to_string(),
        }
    }
    fn handle(&mut self, ctx: &Ctx, input: Input, out: &mut Vec<Request>) {
        match self {
            Told::Written(l) | Told::SaysNo(l) => l.handle(ctx, input, out),
        }
    }
    fn belief(&self) -> Belief {
        self.latch().belief()
    }
    fn owned_node(&self) -> Option<&str> {
        self.latch().owned_node()
    }
    fn waits_on_one_node(&self) -> bool {
        true
    }
    fn renumbered(&self, _: ClientId, r: &Renumber) -> Option<Self> {
        let Told::Written(latch) = self else { return None };
        let phase = match &latch.phase {
            Phase::Checking(p) => Phase::Checking(r.path(p)),
            Phase::Waiting(p) => Phase::Waiting(r.path(p)),
            other => other.clone(),
        };
        let node = latch.node.as_deref().map(|n| r.path(n));
        Some(Told::Written(Latch { phase, node, ..latch.clone() }))
    }
    fn renumbered_by_replay(&self) -> bool {
        matches!(self, Told::Written(_))
    }
}

/// A catalogue recipe with its written renumbering taken away.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Unwritten(AnyRecipe);

impl Recipe for Unwritten {
    fn name(&self) -> String {
        format!("unwritten-{}", self.0.name())
    }
    fn handle(&mut self, ctx: &Ctx, input: Input, out: &mut Vec<Request>) {
        self.0.handle(ctx, input, out)
    }
    fn belief(&self) -> Belief {
        self.0.belief()
    }
    fn mode(&self) -> Mode {
        self.0.mode()
    }
    fn owned_node(&self) -> Option<&str> {
        self.0.owned_node()
    }
    fn owned_nodes(&self) -> Vec<&str> {
        self.0.owned_nodes()
    }
    fn waits_on_one_node(&self) -> bool {
        self.0.waits_on_one_node()
    }
    fn accepts_reentry(&self) -> bool {
        self.0.accepts_reentry()
    }
    fn can_abandon(&self) -> bool {
        self.0.can_abandon()
    }
}

#[test]
fn a_latch_that_volunteers_forever_is_renumbered_by_replay_and_proven() {
    // (It leads on without watching its session, so a fault that expires one would show two
    // leaders: the test keeps to the graph the numbers make.)
    for (clients, faults) in [(2, &[][..]), (3, &[][..])] {
        let replayed =
            check(Latch::new).clients(clients).faults(faults).rounds(UNBOUNDED_ROUNDS).explore_everything().run();
        assert!(!replayed.outcome.bounded, "the graph ends");
        assert!(replayed.outcome.renumbered_by_replay);
        assert_eq!(replayed.outcome.renumbering_refused, None);
        assert_eq!(replayed.outcome.growing_numbers, None);
        replayed.assert_proven();
        assert!(replayed.to_string().contains("renumbered by replay"), "{replayed}");

        // Written by hand, the renumbering gives the very same graph.
        let written = check(|lock: &str| Told::Written(Latch::new(lock)))
            .clients(clients)
            .faults(faults)
            .rounds(UNBOUNDED_ROUNDS)
            .explore_everything()
            .run();
        assert!(!written.outcome.renumbered_by_replay);
        assert_eq!(written.outcome.unique_states, replayed.outcome.unique_states);
        assert_eq!(written.outcome.total_states, replayed.outcome.total_states);

        // Kept as they are, the numbers never stop growing: the renumbering is what ends it.
        let budget = replayed.outcome.unique_states * 4;
        let kept = check(Latch::new).clients(clients).faults(faults).rounds(UNBOUNDED_ROUNDS).world();
        let kept = explore(kept.without_renumbering(), &Options { max_states: budget, ..Options::default() });
        assert!(kept.bounded, "{} states and counting", kept.unique_states);
    }
}

#[test]
fn replayed_and_written_renumberings_count_alike_and_agree() {
    // Curator's and kazoo's names carry a number the recipe makes itself (a uuid), which a
    // written renumbering ranks and replay cannot reach: those agree on every verdict, with as
    // many states or more. The others make no number of their own and count alike.
    let own_numbers = ["curator-mutex", "leader-latch", "kazoo-lock"];
    for name in ["standard", "leader-election", "timeout-lock", "curator-mutex", "leader-latch", "kazoo-lock"] {
        for faults in [&[FaultKind::LossAfterApply][..], &[FaultKind::Expire][..]] {
            let written = check(move |lock: &str| zklab_recipes::build(name, lock).unwrap())
                .clients(2)
                .faults(faults)
                .explore_everything()
                .run();
            let replayed = check(move |lock: &str| Unwritten(zklab_recipes::build(name, lock).unwrap()))
                .clients(2)
                .faults(faults)
                .explore_everything()
                .run();
            assert!(replayed.outcome.renumbered_by_replay, "{name}");
            assert_eq!(replayed.outcome.renumbering_refused, None, "{name} {faults:?}");
            match own_numbers.contains(&name) {
                true => assert!(replayed.outcome.unique_states >= written.outcome.unique_states, "{name} {faults:?}"),
                false => assert_eq!(replayed.outcome.unique_states, written.outcome.unique_states, "{name} {faults:?}"),
            }
            for v in &written.outcome.verdicts {
                assert_eq!(replayed.status(v.property), Some(v.status), "{name} {faults:?} {}", v.name());
            }
        }
    }
}

#[test]
fn a_latch_that_reads_a_numbers_value_is_refused_replay_and_judged_without_it() {
    let refused = check(Latch::reading_zero).clients(2).rounds(2).explore_everything().run();
    let why = refused.outcome.renumbering_refused.as_deref().expect("the claim is checked and fails");
    assert!(why.contains("renumbered") || why.contains("without gaps"), "{why}");
    assert!(!refused.outcome.renumbered_by_replay);

    let kept = check(Latch::reading_zero).clients(2).rounds(2).world().without_renumbering();
    let exact = explore(kept, &Options { stop_at_violation: false, ..Options::default() });
    assert_eq!(refused.outcome.unique_states, exact.unique_states, "judged on the graph without renumbering");
    for v in &exact.verdicts {
        assert_eq!(refused.status(v.property), Some(v.status), "{}", v.name());
    }
    assert!(exact.verdicts.iter().any(|v| v.status == Status::Holds));
}

#[test]
fn a_recipe_that_says_no_to_replay_keeps_its_numbers_and_the_report_says_why() {
    let kept =
        check(|lock: &str| Told::SaysNo(Latch::new(lock))).clients(2).rounds(UNBOUNDED_ROUNDS).max_states(3_000).run();
    assert!(kept.outcome.bounded && !kept.outcome.renumbered_by_replay);
    let growing = kept.outcome.growing_numbers.as_ref().expect("the report says why the run could not end");
    assert!(growing.kept_because.contains("says no to renumbering by replay"), "{}", growing.kept_because);
    assert!(growing.sequence >= 4, "the numbers grew past one round of two clients: {growing:?}");
}

#[test]
fn symmetry_is_not_combined_with_replay_and_comes_back_when_replay_is_refused() {
    // Renaming a replayed client renames its inputs, and replay would rebuild it as the client
    // it was renamed to: the run keeps every state apart, and says so.
    let replayed = check(Latch::new).clients(3).rounds(2).symmetry().explore_everything().run();
    assert!(replayed.outcome.renumbered_by_replay && !replayed.outcome.symmetric);
    assert!(replayed.to_string().contains("--symmetry is not combined with it"), "{replayed}");
    let apart = check(Latch::new).clients(3).rounds(2).explore_everything().run();
    assert_eq!(replayed.outcome.unique_states, apart.outcome.unique_states);

    // Refused replay, the latch is judged without renumbering, and then with symmetry.
    let refused = check(Latch::reading_zero).clients(3).rounds(2).symmetry().explore_everything().run();
    assert!(refused.outcome.renumbering_refused.is_some() && refused.outcome.symmetric);
    let exact = check(Latch::reading_zero).clients(3).rounds(2).world().without_renumbering();
    let exact = explore(exact, &Options { stop_at_violation: false, ..Options::default() });
    assert!(refused.outcome.unique_states < exact.unique_states, "one state per class");
    for v in &exact.verdicts {
        assert_eq!(refused.status(v.property), Some(v.status), "{}", v.name());
    }
}
