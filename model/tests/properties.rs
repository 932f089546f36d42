//! Random operation sequences from three sessions against `Server`, checked after every operation
//! against the invariants of DESIGN.md and a small reference model of the one-shot watch tables.

use proptest::prelude::*;
use proptest::sample::Index;
use std::collections::{BTreeMap, BTreeSet};
use zklab_model::path;
use zklab_model::{
    ChildrenOrder, CreateMode, EventType, Notification, Request, Response, Server, ServerConfig, SessionId, WatchKind,
    WatchedEvent, ZkError,
};

/// Paths that may or may not exist (sequential names included), and a few bad ones.
const FIXED: &[&str] = &[
    "/",
    "/a",
    "/b",
    "/a/a",
    "/a/e",
    "/a/x-0000000000",
    "/a/x-0000000001",
    "/a/0000000002",
    "/b/lock-0000000000",
    "/b/lock-0000000001",
    "/b/lock-0000000002",
    "/a/a/b",
    "/missing",
    "/a/",
    "rel",
];
/// Child names to create; `x-`, `lock-` and the empty name are sequential prefixes.
const NAMES: &[&str] = &["a", "b", "e", "x-", "lock-", ""];
const DATA: &[&str] = &["", "d", "dd"];
const SESSIONS: usize = 3;

/// A path chosen either among the nodes that exist when the op runs, or from `FIXED`.
#[derive(Clone, Debug)]
enum Sel {
    Existing(Index),
    Fixed(usize),
}

#[derive(Clone, Debug)]
enum Op {
    Create {
        s: usize,
        parent: Sel,
        name: usize,
        data: usize,
        mode: CreateMode,
    },
    Delete {
        s: usize,
        path: Sel,
        version: i32,
    },
    SetData {
        s: usize,
        path: Sel,
        data: usize,
        version: i32,
    },
    Exists {
        s: usize,
        path: Sel,
        watch: bool,
    },
    GetData {
        s: usize,
        path: Sel,
        watch: bool,
    },
    GetChildren {
        s: usize,
        path: Sel,
        watch: bool,
    },
    Close {
        s: usize,
    },
    Expire {
        s: usize,
    },
    /// The connection drops: the server forgets the session's watches.
    DropWatches {
        s: usize,
    },
    /// Java's reconnect: re-arm watches relative to a zxid `back` steps behind the newest.
    SetWatches {
        s: usize,
        back: i64,
        watches: Vec<(Sel, WatchKind)>,
    },
    /// Replaces a session that has ended with a new one.
    Reopen {
        s: usize,
    },
}

fn sel() -> impl Strategy<Value = Sel> {
    prop_oneof![3 => any::<Index>().prop_map(Sel::Existing), 1 => (0..FIXED.len()).prop_map(Sel::Fixed)]
}

fn mode() -> impl Strategy<Value = CreateMode> {
    prop_oneof![
        Just(CreateMode::Persistent),
        Just(CreateMode::Ephemeral),
        Just(CreateMode::PersistentSequential),
        Just(CreateMode::EphemeralSequential),
    ]
}

fn version() -> impl Strategy<Value = i32> {
    prop_oneof![3 => Just(-1), 2 => 0..3i32]
}

fn kind() -> impl Strategy<Value = WatchKind> {
    prop_oneof![Just(WatchKind::Data), Just(WatchKind::Exist), Just(WatchKind::Child)]
}

fn op() -> impl Strategy<Value = Op> {
    let s = 0..SESSIONS;
    prop_oneof![
        8 => (s.clone(), sel(), 0..NAMES.len(), 0..DATA.len(), mode())
            .prop_map(|(s, parent, name, data, mode)| Op::Create { s, parent, name, data, mode }),
        3 => (s.clone(), sel(), version()).prop_map(|(s, path, version)| Op::Delete { s, path, version }),
        2 => (s.clone(), sel(), 0..DATA.len(), version())
            .prop_map(|(s, path, data, version)| Op::SetData { s, path, data, version }),
        3 => (s.clone(), sel(), prop::bool::weighted(0.8)).prop_map(|(s, path, watch)| Op::Exists { s, path, watch }),
        2 => (s.clone(), sel(), prop::bool::weighted(0.8)).prop_map(|(s, path, watch)| Op::GetData { s, path, watch }),
        2 => (s.clone(), sel(), prop::bool::weighted(0.8))
            .prop_map(|(s, path, watch)| Op::GetChildren { s, path, watch }),
        1 => s.clone().prop_map(|s| Op::Close { s }),
        1 => s.clone().prop_map(|s| Op::Expire { s }),
        1 => s.clone().prop_map(|s| Op::DropWatches { s }),
        1 => (s.clone(), 0..6i64, prop::collection::vec((sel(), kind()), 0..4))
            .prop_map(|(s, back, watches)| Op::SetWatches { s, back, watches }),
        1 => s.prop_map(|s| Op::Reopen { s }),
    ]
}

/// Which server-side table a watch lives in: getData and exists share one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Table {
    Data,
    Child,
}

fn table(kind: WatchKind) -> Table {
    match kind {
        WatchKind::Data | WatchKind::Exist => Table::Data,
        WatchKind::Child => Table::Child,
    }
}

type Event = (SessionId, EventType, String);

struct Harness {
    zk: Server,
    slots: [SessionId; SESSIONS],
    /// Armed watches of the reference model: each arm has an id.
    armed: BTreeMap<(SessionId, String, Table), BTreeSet<u64>>,
    next_arm: u64,
    /// How many notifications each arm produced (a one-shot watch: at most one).
    fired: BTreeMap<u64, u32>,
    /// Successful child creates per parent incarnation (path, czxid): what the counter must be.
    creates: BTreeMap<(String, i64), i32>,
    /// The last sequence number handed out per parent incarnation.
    last_seq: BTreeMap<(String, i64), i32>,
    /// What the run reached, for the non-vacuity test.
    reached: Reached,
}

#[derive(Clone, Copy, Debug, Default)]
struct Reached {
    sequential_creates: u32,
    notifications: u32,
    catch_up_events: u32,
    ends_with_ephemerals: u32,
}

impl Harness {
    fn new() -> Self {
        let mut zk =
            Server::new(ServerConfig { children_order: ChildrenOrder::Scrambled(7), ..ServerConfig::default() });
        let slots = [(); SESSIONS].map(|_| zk.open_session(4000).0);
        Harness {
            zk,
            slots,
            armed: BTreeMap::new(),
            next_arm: 0,
            fired: BTreeMap::new(),
            creates: BTreeMap::new(),
            last_seq: BTreeMap::new(),
            reached: Reached::default(),
        }
    }

    fn resolve(&self, sel: &Sel) -> String {
        match sel {
            Sel::Existing(index) => {
                let paths: Vec<&String> = self.zk.tree().iter().map(|(p, _)| p).collect();
                index.get(&paths).to_string()
            }
            Sel::Fixed(i) => FIXED[*i].to_string(),
        }
    }

    fn arm(&mut self, s: SessionId, path: &str, table: Table) {
        let id = self.next_arm;
        self.next_arm += 1;
        self.armed.entry((s, path.to_string(), table)).or_default().insert(id);
        self.fired.insert(id, 0);
    }

    /// Fires the reference model's watches of `tables` on `path`: one event per session.
    fn fire(&mut self, tables: &[Table], path: &str, kind: EventType, expected: &mut Vec<Event>) {
        let sessions: BTreeSet<SessionId> =
            self.armed.keys().filter(|(_, p, t)| p == path && tables.contains(t)).map(|(s, _, _)| *s).collect();
        for s in sessions {
            for t in tables {
                for id in self.armed.remove(&(s, path.to_string(), *t)).unwrap_or_default() {
                    let count = self.fired.get_mut(&id).expect("known arm");
                    *count += 1;
                    assert_eq!(*count, 1, "arm {id} of {s} on {path} fired twice");
                }
            }
            expected.push((s, kind, path.to_string()));
        }
    }

    fn deleted(&mut self, path: &str, expected: &mut Vec<Event>) {
        self.fire(&[Table::Data, Table::Child], path, EventType::NodeDeleted, expected);
        self.fire(&[Table::Child], path::parent(path), EventType::NodeChildrenChanged, expected);
    }

    fn forget(&mut self, s: SessionId) {
        self.armed.retain(|(session, _, _), _| *session != s);
    }

    fn check_notifications(&mut self, what: &str, actual: &[Notification], mut expected: Vec<Event>) {
        let mut got: Vec<Event> = actual.iter().map(|n| (n.session, n.event.kind, n.event.path.clone())).collect();
        let pairs: BTreeSet<(SessionId, &str)> = actual.iter().map(|n| (n.session, n.event.path.as_str())).collect();
        assert_eq!(pairs.len(), actual.len(), "{what}: more than one notification per node per session: {actual:?}");
        for n in actual {
            assert!(self.zk.session(n.session).is_some(), "{what}: notification for unknown session {}", n.session);
        }
        got.sort();
        expected.sort();
        self.reached.notifications += actual.len() as u32;
        assert_eq!(got, expected, "{what}: notifications");
    }

    fn request(&mut self, s: SessionId, request: Request) {
        let before = self.zk.clone();
        let was_alive = before.is_alive(s);
        let outcome = self.zk.apply(s, &request);
        let what = format!("{request:?} by {s}");
        let response = match outcome.result {
            Err(e) => {
                assert!(self.zk == before, "{what} failed with {e} but changed the server");
                assert!(
                    outcome.notifications.is_empty(),
                    "{what} failed with {e} but fired {:?}",
                    outcome.notifications
                );
                if !was_alive {
                    assert!(e == ZkError::SessionExpired || e == ZkError::BadArguments, "{what}: {e}");
                }
                return;
            }
            Ok(response) => response,
        };
        assert!(was_alive, "{what} succeeded for an ended session");
        let mut expected = Vec::new();
        match (&request, &response) {
            (Request::Create { path: asked, mode, .. }, Response::Created { path: actual, stat }) => {
                let parent = path::parent(actual).to_string();
                let incarnation = (parent.clone(), self.zk.stat(&parent).expect("parent exists").czxid);
                let count = self.creates.get(&incarnation).copied().unwrap_or(0);
                if mode.is_sequential() {
                    let prefix = path::name(asked);
                    let seq = path::sequence_of(path::name(actual), prefix)
                        .unwrap_or_else(|| panic!("{what}: {actual} is not {asked} + a 10-digit counter"));
                    assert_eq!(*actual, format!("{asked}{}", path::sequence_suffix(seq)), "{what}");
                    assert_eq!(seq, count, "{what}: the counter is the number of child creates so far");
                    if let Some(last) = self.last_seq.get(&incarnation) {
                        assert!(seq > *last, "{what}: sequence {seq} after {last}");
                    }
                    self.last_seq.insert(incarnation.clone(), seq);
                    self.reached.sequential_creates += 1;
                } else {
                    assert_eq!(actual, asked, "{what}");
                }
                *self.creates.entry(incarnation).or_default() += 1;
                assert_eq!(stat.ephemeral_owner, mode.is_ephemeral().then_some(s), "{what}");
                assert_eq!((stat.version, stat.cversion, stat.num_children), (0, 0, 0), "{what}");
                assert_eq!(stat.czxid, self.zk.zxid(), "{what}");
                self.fire(&[Table::Data], actual, EventType::NodeCreated, &mut expected);
                self.fire(&[Table::Child], &parent, EventType::NodeChildrenChanged, &mut expected);
            }
            (Request::Delete { path, version }, Response::Deleted) => {
                let old = before.stat(path).expect("deleted an existing node");
                assert!(*version == -1 || *version == old.version, "{what}: deleted at version {}", old.version);
                assert_eq!(old.num_children, 0, "{what}: deleted a node with children");
                self.deleted(path, &mut expected);
            }
            (Request::SetData { path, data, version }, Response::DataSet(stat)) => {
                let old = before.stat(path).expect("set an existing node");
                assert!(*version == -1 || *version == old.version, "{what}");
                assert_eq!((stat.version, stat.data_length), (old.version + 1, data.len() as i32), "{what}");
                self.fire(&[Table::Data], path, EventType::NodeDataChanged, &mut expected);
            }
            (Request::Exists { path, watch }, Response::Exists(stat)) => {
                assert_eq!(*stat, before.stat(path), "{what}");
                if *watch {
                    self.arm(s, path, Table::Data);
                }
            }
            (Request::GetData { path, watch }, Response::Data { data, stat }) => {
                assert_eq!(Some(*stat), before.stat(path), "{what}");
                assert_eq!(before.tree().get(path).map(|n| &n.data), Some(data), "{what}");
                if *watch {
                    self.arm(s, path, Table::Data);
                }
            }
            (Request::GetChildren { path, watch }, Response::Children { children, stat }) => {
                let mut sorted = children.to_vec();
                sorted.sort();
                assert_eq!(sorted, before.tree().children(path), "{what}");
                assert_eq!(Some(*stat), before.stat(path), "{what}");
                if *watch {
                    self.arm(s, path, Table::Child);
                }
            }
            _ => panic!("{what} answered {response:?}"),
        }
        if request.is_write() {
            assert_eq!(self.zk.zxid(), before.zxid() + 1, "{what}: a write is one transaction");
        } else {
            assert_eq!(self.zk.tree(), before.tree(), "{what}: a read changed the tree");
        }
        self.check_notifications(&what, &outcome.notifications, expected);
    }

    fn end(&mut self, s: SessionId, expire: bool) {
        let before = self.zk.clone();
        let notifications = if expire { self.zk.expire_session(s) } else { self.zk.close_session(s) };
        let what = format!("{} {s}", if expire { "expire" } else { "close" });
        if !before.is_alive(s) {
            assert!(self.zk == before, "{what}: ending an ended session changed the server");
            assert!(notifications.is_empty(), "{what}");
            return;
        }
        assert!(!self.zk.is_alive(s), "{what}");
        assert_eq!(self.zk.zxid(), before.zxid() + 1, "{what}: one atomic step");
        // An expiring session's watches are gone first; a closing one's fire on what it deletes.
        if expire {
            self.forget(s);
        }
        let mut expected = Vec::new();
        for path in before.tree().ephemerals_of(s) {
            assert!(self.zk.tree().get(&path).is_none(), "{what}: {path} outlived its session");
            self.deleted(&path, &mut expected);
        }
        self.forget(s);
        if expire {
            assert!(
                expected.iter().all(|(session, _, _)| *session != s),
                "reference: the expired session hears nothing"
            );
        }
        if !before.tree().ephemerals_of(s).is_empty() {
            self.reached.ends_with_ephemerals += 1;
        }
        self.check_notifications(&what, &notifications, expected);
    }

    fn set_watches(&mut self, s: SessionId, back: i64, watches: &[(Sel, WatchKind)]) {
        let relative = (self.zk.zxid() - back).max(0);
        let watches: Vec<(String, WatchKind)> = watches
            .iter()
            .map(|(sel, kind)| (self.resolve(sel), *kind))
            .filter(|(p, _)| path::validate(p, false).is_ok())
            .collect();
        let before = self.zk.clone();
        let events = self.zk.set_watches(s, relative, &watches);
        let what = format!("set_watches {s} relative to {relative}: {watches:?}");
        let mut expected = Vec::new();
        if before.is_alive(s) {
            for (path, kind) in &watches {
                let node = before.tree().get(path);
                let event = match (kind, node) {
                    (WatchKind::Data | WatchKind::Child, None) => Some(EventType::NodeDeleted),
                    (WatchKind::Data, Some(n)) if n.mzxid > relative => Some(EventType::NodeDataChanged),
                    (WatchKind::Exist, Some(_)) => Some(EventType::NodeCreated),
                    (WatchKind::Child, Some(n)) if n.pzxid > relative => Some(EventType::NodeChildrenChanged),
                    _ => None,
                };
                match event {
                    Some(kind) => expected.push(WatchedEvent { kind, path: path.clone() }),
                    None => self.arm(s, path, table(*kind)),
                }
            }
        } else {
            assert!(self.zk == before, "{what}: changed the server for an ended session");
        }
        assert_eq!(self.zk.tree(), before.tree(), "{what}");
        assert_eq!(events, expected, "{what}");
        // The world keeps a disconnected client's zxid only as exact as this; it must re-arm
        // exactly the same.
        let equivalent = before.watch_equivalent_zxid(relative);
        assert!(equivalent <= relative, "{what}: equivalent zxid {equivalent}");
        let mut twin = before.clone();
        assert_eq!(twin.set_watches(s, equivalent, &watches), events, "{what} relative to {equivalent} instead");
        assert!(twin == self.zk, "{what}: relative to {equivalent} leaves another server");
        self.reached.catch_up_events += events.len() as u32;
    }

    fn run(&mut self, op: &Op) {
        match op {
            Op::Create { s, parent, name, data, mode } => {
                let parent = self.resolve(parent);
                let path = path::join(&parent, NAMES[*name]);
                let request = Request::Create { path, data: DATA[*data].to_string(), mode: *mode };
                self.request(self.slots[*s], request);
            }
            Op::Delete { s, path, version } => {
                let request = Request::Delete { path: self.resolve(path), version: *version };
                self.request(self.slots[*s], request);
            }
            Op::SetData { s, path, data, version } => {
                let request =
                    Request::SetData { path: self.resolve(path), data: DATA[*data].to_string(), version: *version };
                self.request(self.slots[*s], request);
            }
            Op::Exists { s, path, watch } => {
                let request = Request::exists(&self.resolve(path), *watch);
                self.request(self.slots[*s], request);
            }
            Op::GetData { s, path, watch } => {
                let request = Request::get_data(&self.resolve(path), *watch);
                self.request(self.slots[*s], request);
            }
            Op::GetChildren { s, path, watch } => {
                let request = Request::get_children(&self.resolve(path), *watch);
                self.request(self.slots[*s], request);
            }
            Op::Close { s } => self.end(self.slots[*s], false),
            Op::Expire { s } => self.end(self.slots[*s], true),
            Op::DropWatches { s } => {
                let session = self.slots[*s];
                let before = self.zk.clone();
                self.zk.drop_watches(session);
                self.forget(session);
                assert_eq!(self.zk.tree(), before.tree());
            }
            Op::SetWatches { s, back, watches } => self.set_watches(self.slots[*s], *back, watches),
            Op::Reopen { s } => {
                if !self.zk.is_alive(self.slots[*s]) {
                    self.slots[*s] = self.zk.open_session(4000).0;
                }
            }
        }
    }

    /// The invariants that hold between any two operations.
    fn check(&self, after: &Op) {
        let tree = self.zk.tree();
        for (path, node) in tree.iter() {
            if path != "/" {
                let parent = tree.get(path::parent(path));
                assert!(parent.is_some(), "after {after:?}: {path} has no parent");
                assert!(parent.unwrap().owner.is_none(), "after {after:?}: {path} is the child of an ephemeral");
                assert_eq!(path::validate(path, false), Ok(()), "after {after:?}: a bad path exists");
            }
            if let Some(owner) = node.owner {
                assert!(self.zk.is_alive(owner), "after {after:?}: ephemeral {path} outlived its session {owner}");
                assert_eq!(node.num_children, 0, "after {after:?}: ephemeral {path} has children");
            }
            assert_eq!(node.num_children as usize, tree.children(path).len(), "after {after:?}: numChildren of {path}");
            assert!(node.czxid <= node.mzxid && node.czxid <= node.pzxid, "after {after:?}: zxids of {path}");
            assert!(node.mzxid <= self.zk.zxid() && node.pzxid <= self.zk.zxid(), "after {after:?}: {path}");
        }
        // The server's watch tables are exactly the reference model's armed watches.
        for (s, _) in self.zk.sessions() {
            let of = |t: Table| -> Vec<String> {
                self.armed.keys().filter(|(x, _, tt)| x == s && *tt == t).map(|(_, p, _)| p.clone()).collect()
            };
            assert_eq!(self.zk.watches_of(*s), (of(Table::Data), of(Table::Child)), "after {after:?}: watches of {s}");
            if !self.zk.is_alive(*s) {
                assert_eq!(self.zk.watches_of(*s), (vec![], vec![]), "after {after:?}: an ended session {s} watches");
                assert!(tree.ephemerals_of(*s).is_empty(), "after {after:?}");
            }
        }
        assert!(self.fired.values().all(|n| *n <= 1), "a watch fired more than once");
    }
}

proptest! {
    // No regression files: a failure prints its minimal op sequence, which belongs in a test.
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn server_invariants_hold_after_every_op(ops in prop::collection::vec(op(), 1..100)) {
        let mut harness = Harness::new();
        for op in &ops {
            harness.run(op);
            harness.check(op);
        }
    }
}

/// The generator reaches what the properties are about (a property that is never exercised
/// proves nothing): sequential creates, fired watches, ephemerals deleted by a session's end.
#[test]
fn the_generator_reaches_the_interesting_cases() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let mut total = Reached::default();
    for _ in 0..64 {
        let ops = prop::collection::vec(op(), 1..80).new_tree(&mut runner).unwrap().current();
        let mut harness = Harness::new();
        for op in &ops {
            harness.run(op);
            harness.check(op);
        }
        let r = harness.reached;
        total.sequential_creates += r.sequential_creates;
        total.notifications += r.notifications;
        total.catch_up_events += r.catch_up_events;
        total.ends_with_ephemerals += r.ends_with_ephemerals;
    }
    assert!(total.sequential_creates > 100, "{total:?}");
    assert!(total.notifications > 50, "{total:?}");
    assert!(total.catch_up_events > 10, "{total:?}");
    assert!(total.ends_with_ephemerals > 10, "{total:?}");
}
