//! A recipe says which properties fit it. An optimistic lock on a node's data version owns no
//! ephemeral node: the properties about a holder's own node (`zk_exclusion`, `stale_holder`,
//! `fencing_available`, `no_orphans`) say nothing of it, and `stale_holder` fails in four steps
//! whatever it does. Declared, they are reported `not applicable`, never `holds`, and
//! `assert_proven` asks for every property that does apply. A user can also narrow a run to the
//! properties they care about.

use zklab::check::{check, Status};
use zklab_model::{Belief, Ctx, EventType, Input, Property, Reach, Recipe, Request, Response, ZkError};

/// A lock held by writing one's name into the lock node's data with a conditional setData
/// (compare-and-set on the data version), and given back by clearing it. A waiter reads the
/// data with a watch and tries again when it changes. The fencing token is the data version its
/// write made, which only grows.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct VersionLock {
    lock: String,
    phase: Phase,
    /// Whether it says which properties fit it (the fix), or takes them all (the default).
    declares: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Phase {
    Idle,
    Reading,
    Writing,
    Waiting,
    Holding(i64),
    Releasing,
}

impl VersionLock {
    fn new(lock: &str, declares: bool) -> Self {
        VersionLock { lock: lock.to_string(), phase: Phase::Idle, declares }
    }

    fn read(&mut self, out: &mut Vec<Request>) {
        self.phase = Phase::Reading;
        out.push(Request::get_data(&self.lock, true));
    }
}

impl Recipe for VersionLock {
    fn name(&self) -> String {
        "version-lock".to_string()
    }

    fn handle(&mut self, ctx: &Ctx, input: Input, out: &mut Vec<Request>) {
        match (&self.phase, input) {
            (Phase::Idle, Input::Acquire) => self.read(out),
            (Phase::Reading, Input::Reply { result: Ok(Response::Data { data, stat }), .. }) if data.is_empty() => {
                self.phase = Phase::Writing;
                let data = format!("c{}", ctx.client);
                out.push(Request::SetData { path: self.lock.clone(), data, version: stat.version });
            }
            (Phase::Reading, Input::Reply { result: Ok(Response::Data { .. }), .. }) => self.phase = Phase::Waiting,
            (Phase::Writing, Input::Reply { result: Ok(Response::DataSet(stat)), .. }) => {
                self.phase = Phase::Holding(i64::from(stat.version))
            }
            (Phase::Writing, Input::Reply { result: Err(ZkError::BadVersion), .. }) => self.read(out),
            (Phase::Waiting, Input::Watch(e)) if e.kind == EventType::NodeDataChanged => self.read(out),
            (Phase::Holding(_), Input::Release) => {
                self.phase = Phase::Releasing;
                out.push(Request::SetData { path: self.lock.clone(), data: String::new(), version: -1 });
            }
            (Phase::Releasing, Input::Reply { .. }) => self.phase = Phase::Idle,
            // The watch set by a read that found the lock free fires on our own write: ignored.
            _ => {}
        }
    }

    fn belief(&self) -> Belief {
        match self.phase {
            Phase::Idle => Belief::Idle,
            Phase::Holding(token) => Belief::Holding { token },
            Phase::Releasing => Belief::Releasing,
            _ => Belief::Acquiring,
        }
    }

    fn owned_node(&self) -> Option<&str> {
        None
    }

    fn applies(&self, property: Property) -> bool {
        let about_own_node = matches!(
            property,
            Property::ZkExclusion | Property::StaleHolder | Property::FencingAvailable | Property::NoOrphans
        );
        !(self.declares && about_own_node)
    }
}

#[test]
fn a_lock_without_an_ephemeral_node_fails_stale_holder_whatever_it_does() {
    // Taking every property, the correct optimistic lock can never be proven: ZooKeeper never
    // "agrees" with a holder that owns no node.
    let checked = check(|lock| VersionLock::new(lock, false)).clients(2).explore_everything().run();
    let cx = checked.assert_violates(Property::StaleHolder);
    assert!(cx.steps.len() <= 4, "as soon as it holds: {:?}", cx.steps);
    assert_eq!(checked.status(Property::BeliefExclusion), Some(Status::Holds));
}

#[test]
fn declared_it_is_proven_on_the_properties_that_fit_and_the_rest_are_not_applicable() {
    let checked = check(|lock| VersionLock::new(lock, true)).clients(2).run();
    checked.assert_proven();
    for p in [Property::ZkExclusion, Property::StaleHolder, Property::FencingAvailable, Property::NoOrphans] {
        assert_eq!(checked.status(p), Some(Status::NotApplicable), "{p:?}");
    }
    let fit =
        [Property::FencedExclusion, Property::NoHerd, Property::EventualAcquire, Property::Reached(Reach::Handoff)];
    for p in [&[Property::BeliefExclusion][..], &fit].concat() {
        assert_eq!(checked.status(p), Some(Status::Holds), "{p:?}");
    }
}

#[test]
fn every_waiter_reads_the_lock_node_so_three_clients_herd() {
    // Declaring what fits is no way out of what does fit: a release wakes every waiter.
    let checked = check(|lock| VersionLock::new(lock, true)).clients(3).run();
    checked.assert_violates(Property::NoHerd);
}

#[test]
fn a_run_narrowed_to_some_properties_judges_those_and_every_reached_item() {
    let checked = check(|lock| VersionLock::new(lock, false))
        .clients(2)
        .properties(&[Property::BeliefExclusion, Property::EventualAcquire])
        .run();
    checked.assert_proven();
    assert_eq!(checked.status(Property::StaleHolder), Some(Status::NotApplicable));
    assert_eq!(checked.status(Property::FencedExclusion), Some(Status::NotApplicable));
    assert_eq!(
        checked.status(Property::Reached(Reach::Handoff)),
        Some(Status::Holds),
        "non-vacuity is never narrowed away"
    );
}

#[test]
fn a_run_with_nothing_to_judge_is_not_proven() {
    // A recipe that declares no property applies proves nothing, and is not allowed to pass.
    #[derive(Clone, Debug, PartialEq, Eq, Hash)]
    struct NothingApplies(VersionLock);
    impl Recipe for NothingApplies {
        fn name(&self) -> String {
            "nothing-applies".to_string()
        }
        fn handle(&mut self, ctx: &Ctx, input: Input, out: &mut Vec<Request>) {
            self.0.handle(ctx, input, out)
        }
        fn belief(&self) -> Belief {
            self.0.belief()
        }
        fn owned_node(&self) -> Option<&str> {
            None
        }
        fn applies(&self, property: Property) -> bool {
            matches!(property, Property::Reached(_))
        }
    }
    let checked = check(|lock| NothingApplies(VersionLock::new(lock, true))).clients(2).run();
    let failed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| checked.assert_proven()));
    assert!(failed.is_err(), "no property applies: nothing is proven");
}
