//! One test per ZooKeeper rule the model must reproduce (DESIGN.md, "ZooKeeper semantics the model
//! must reproduce"). Where a recorded case in shared/conformance covers a rule, the numbers here
//! are the ones a real ZooKeeper 3.8 answered (the case is named in the test's comment).

use std::collections::BTreeSet;
use zklab_model::path::{self, PathError};
use zklab_model::world::{Link, Sending};
use zklab_model::{
    Belief, ChildrenOrder, ClientBehaviour, ClientFault, CreateMode, Ctx, EventType, FaultBudget, FaultKind, Input,
    Notification, Recipe, RefusedReply, Request, RequestFault, Response, Server, ServerConfig, SessionId, SessionState,
    SessionStatus, Stat, Step, WatchKind, WatchedEvent, World, WorldConfig, ZkError, JAVA_MAX_PACKET_BYTES,
};

use CreateMode::{Ephemeral, EphemeralSequential, Persistent, PersistentSequential};
use EventType::{NodeChildrenChanged, NodeCreated, NodeDataChanged, NodeDeleted};

// ---------------------------------------------------------------------------------------------
// Helpers

fn server_with(config: ServerConfig) -> Server {
    Server::new(config)
}

fn server() -> Server {
    server_with(ServerConfig { children_order: ChildrenOrder::Sorted, ..ServerConfig::default() })
}

fn lagging(window: u8) -> Server {
    server_with(ServerConfig { children_order: ChildrenOrder::Sorted, lag_window: window, ..ServerConfig::default() })
}

fn open(zk: &mut Server) -> SessionId {
    zk.open_session(4000).0
}

/// Applies a request that must succeed; returns its reply and notifications.
fn run(zk: &mut Server, s: SessionId, request: Request) -> (Response, Vec<Notification>) {
    let outcome = zk.apply(s, &request);
    match outcome.result {
        Ok(response) => (response, outcome.notifications),
        Err(e) => panic!("{request:?} by {s} failed with {e}"),
    }
}

fn ok(zk: &mut Server, s: SessionId, request: Request) -> Response {
    run(zk, s, request).0
}

/// Applies a request that must fail, and checks that the failure changed nothing at all.
fn fails(zk: &mut Server, s: SessionId, request: Request) -> ZkError {
    let before = zk.clone();
    let outcome = zk.apply(s, &request);
    let Err(e) = outcome.result else { panic!("{request:?} by {s} succeeded: {:?}", outcome.result) };
    assert!(outcome.notifications.is_empty(), "failed {request:?} fired {:?}", outcome.notifications);
    assert!(*zk == before, "failed {request:?} ({e}) changed the server");
    e
}

fn create_data(zk: &mut Server, s: SessionId, path: &str, data: &str, mode: CreateMode) -> String {
    match ok(zk, s, Request::Create { path: path.to_string(), data: data.to_string(), mode }) {
        Response::Created { path, .. } => path,
        other => panic!("create answered {other:?}"),
    }
}

fn create(zk: &mut Server, s: SessionId, path: &str, mode: CreateMode) -> String {
    create_data(zk, s, path, "", mode)
}

fn set_data(path: &str, data: &str, version: i32) -> Request {
    Request::SetData { path: path.to_string(), data: data.to_string(), version }
}

fn delete_v(path: &str, version: i32) -> Request {
    Request::Delete { path: path.to_string(), version }
}

fn stat(zk: &Server, path: &str) -> Stat {
    zk.stat(path).unwrap_or_else(|| panic!("{path} does not exist"))
}

fn children(zk: &mut Server, s: SessionId, path: &str) -> Vec<String> {
    match ok(zk, s, Request::get_children(path, false)) {
        Response::Children { children, .. } => {
            let mut children = children.to_vec();
            children.sort();
            children
        }
        other => panic!("getChildren answered {other:?}"),
    }
}

fn strings(names: &[&str]) -> Vec<String> {
    names.iter().map(|n| n.to_string()).collect()
}

fn ev(kind: EventType, path: &str) -> WatchedEvent {
    WatchedEvent { kind, path: path.to_string() }
}

/// The events addressed to `s`, in order.
fn events_of(notifications: &[Notification], s: SessionId) -> Vec<WatchedEvent> {
    notifications.iter().filter(|n| n.session == s).map(|n| n.event.clone()).collect()
}

/// All notifications as a sorted list (for events of one atomic step, whose order is unspecified).
fn sorted(notifications: &[Notification]) -> Vec<(SessionId, EventType, String)> {
    let mut all: Vec<_> = notifications.iter().map(|n| (n.session, n.event.kind, n.event.path.clone())).collect();
    all.sort();
    all
}

fn no_watches(zk: &Server, s: SessionId) -> bool {
    zk.watches_of(s) == (vec![], vec![])
}

// ---------------------------------------------------------------------------------------------
// Sequential names and the per-parent counter

#[test]
fn sequential_name_is_prefix_plus_ten_digit_zero_padded_counter() {
    // 01-seq-format
    let mut zk = server();
    let a = open(&mut zk);
    let b = open(&mut zk);
    create(&mut zk, a, "/lock", Persistent);
    let response =
        ok(&mut zk, a, Request::Create { path: "/lock/x-".into(), data: "a0".into(), mode: EphemeralSequential });
    let Response::Created { path, stat: st } = response else { panic!("{response:?}") };
    assert_eq!(path, "/lock/x-0000000000");
    assert_eq!((st.version, st.cversion, st.aversion), (0, 0, 0));
    assert_eq!((st.data_length, st.num_children, st.ephemeral_owner), (2, 0, Some(a)));
    assert_eq!(create_data(&mut zk, b, "/lock/x-", "b1", EphemeralSequential), "/lock/x-0000000001");
    assert_eq!(create_data(&mut zk, a, "/lock/x-", "a2", PersistentSequential), "/lock/x-0000000002");
    // The prefix may be empty.
    assert_eq!(create(&mut zk, b, "/lock/", PersistentSequential), "/lock/0000000003");
    assert_eq!(create(&mut zk, b, "/lock/x", Persistent), "/lock/x");
    let Response::Data { data, stat: st } = ok(&mut zk, a, Request::get_data("/lock/x-0000000000", false)) else {
        panic!()
    };
    assert_eq!((data.as_str(), st.data_length, st.ephemeral_owner), ("a0", 2, Some(a)));
    let Response::Data { data, stat: st } = ok(&mut zk, a, Request::get_data("/lock/x-0000000002", false)) else {
        panic!()
    };
    assert_eq!((data.as_str(), st.ephemeral_owner), ("a2", None));
    assert_eq!(
        children(&mut zk, a, "/lock"),
        strings(&["0000000003", "x", "x-0000000000", "x-0000000001", "x-0000000002"])
    );
    assert_eq!((stat_of_children(&mut zk, a, "/lock").cversion, stat(&zk, "/lock").num_children), (5, 5));
    // The root has a counter too, advanced by the plain create of /lock.
    assert_eq!(create(&mut zk, a, "/top-", PersistentSequential), "/top-0000000001");
    assert_eq!(children(&mut zk, a, "/"), strings(&["lock", "top-0000000001"]));
    let root = stat(&zk, "/");
    assert_eq!((root.cversion, root.num_children), (2, 2));
}

fn stat_of_children(zk: &mut Server, s: SessionId, path: &str) -> Stat {
    match ok(zk, s, Request::get_children(path, false)) {
        Response::Children { stat, .. } => stat,
        other => panic!("{other:?}"),
    }
}

#[test]
fn sequential_counter_is_one_per_parent_shared_by_prefixes_modes_and_sessions() {
    // 03-seq-prefixes, with the sessions and modes mixed.
    let mut zk = server();
    let a = open(&mut zk);
    let b = open(&mut zk);
    create(&mut zk, a, "/p", Persistent);
    create(&mut zk, a, "/q", Persistent);
    assert_eq!(create(&mut zk, a, "/p/read-", EphemeralSequential), "/p/read-0000000000");
    assert_eq!(create(&mut zk, b, "/p/write-", PersistentSequential), "/p/write-0000000001");
    assert_eq!(create(&mut zk, a, "/q/write-", EphemeralSequential), "/q/write-0000000000");
    assert_eq!(create(&mut zk, b, "/p/read-", EphemeralSequential), "/p/read-0000000002");
    assert_eq!(create(&mut zk, a, "/p/a-b-", PersistentSequential), "/p/a-b-0000000003");
    assert_eq!(create(&mut zk, b, "/q/read-", EphemeralSequential), "/q/read-0000000001");
    assert_eq!(
        children(&mut zk, a, "/p"),
        strings(&["a-b-0000000003", "read-0000000000", "read-0000000002", "write-0000000001"])
    );
    assert_eq!(children(&mut zk, a, "/q"), strings(&["read-0000000001", "write-0000000000"]));
    assert_eq!((stat(&zk, "/p").cversion, stat(&zk, "/p").num_children), (4, 4));
    assert_eq!((stat(&zk, "/q").cversion, stat(&zk, "/q").num_children), (2, 2));
}

#[test]
fn plain_child_creates_advance_the_counter() {
    // 12-children-order
    let mut zk = server();
    let a = open(&mut zk);
    create(&mut zk, a, "/o", Persistent);
    for name in ["/o/b", "/o/a", "/o/c"] {
        create(&mut zk, a, name, Persistent);
    }
    for n in 3..=14 {
        assert_eq!(create(&mut zk, a, "/o/x-", EphemeralSequential), format!("/o/x-{n:010}"));
    }
    // A plain create between two sequential ones moves the counter as well.
    create(&mut zk, a, "/o/d", Ephemeral);
    assert_eq!(create(&mut zk, a, "/o/x-", EphemeralSequential), "/o/x-0000000016");
}

#[test]
fn deletes_and_failed_creates_do_not_advance_the_counter() {
    // 14-lock-race: x-0, x-1, delete x-0, then the next name is x-2.
    let mut zk = server();
    let a = open(&mut zk);
    let b = open(&mut zk);
    let gone = open(&mut zk);
    zk.close_session(gone);
    create(&mut zk, a, "/lock", Persistent);
    assert_eq!(create(&mut zk, a, "/lock/x-", EphemeralSequential), "/lock/x-0000000000");
    assert_eq!(create(&mut zk, b, "/lock/x-", EphemeralSequential), "/lock/x-0000000001");
    ok(&mut zk, a, Request::delete("/lock/x-0000000000"));
    assert_eq!(create(&mut zk, a, "/lock/x-", EphemeralSequential), "/lock/x-0000000002");
    create(&mut zk, a, "/lock/plain", Persistent); // counter 4
    ok(&mut zk, a, Request::delete("/lock/plain"));
    // Every kind of failed create under /lock.
    assert_eq!(fails(&mut zk, a, Request::create("/lock/x-0000000001", Persistent)), ZkError::NodeExists);
    assert_eq!(fails(&mut zk, gone, Request::create("/lock/x-", EphemeralSequential)), ZkError::SessionExpired);
    assert_eq!(fails(&mut zk, a, Request::create("/lock/x\u{1}-", EphemeralSequential)), ZkError::BadArguments);
    assert_eq!(fails(&mut zk, a, Request::create("/lock/", Persistent)), ZkError::BadArguments);
    assert_eq!(create(&mut zk, b, "/lock/x-", EphemeralSequential), "/lock/x-0000000004");
}

#[test]
fn new_incarnation_of_parent_restarts_counter_at_zero() {
    let mut zk = server();
    let a = open(&mut zk);
    create(&mut zk, a, "/p", Persistent);
    create(&mut zk, a, "/other", Persistent);
    assert_eq!(create(&mut zk, a, "/p/x-", EphemeralSequential), "/p/x-0000000000");
    assert_eq!(create(&mut zk, a, "/p/x-", PersistentSequential), "/p/x-0000000001");
    assert_eq!(create(&mut zk, a, "/other/x-", PersistentSequential), "/other/x-0000000000");
    let first_czxid = stat(&zk, "/p").czxid;
    ok(&mut zk, a, Request::delete("/p/x-0000000000"));
    ok(&mut zk, a, Request::delete("/p/x-0000000001"));
    ok(&mut zk, a, Request::delete("/p"));
    create(&mut zk, a, "/p", Persistent);
    assert!(stat(&zk, "/p").czxid > first_czxid, "a new incarnation has a newer czxid");
    assert_eq!(create(&mut zk, a, "/p/x-", EphemeralSequential), "/p/x-0000000000");
    // Other parents keep their counters.
    assert_eq!(create(&mut zk, a, "/other/x-", PersistentSequential), "/other/x-0000000001");
}

#[test]
fn sequence_counter_wraps_to_i32_min() {
    let mut zk = server();
    let a = open(&mut zk);
    create(&mut zk, a, "/lock", Persistent);
    zk.set_sequence_counter("/lock", i32::MAX - 1).unwrap();
    assert_eq!(create(&mut zk, a, "/lock/lock-", EphemeralSequential), "/lock/lock-2147483646");
    assert_eq!(create(&mut zk, a, "/lock/lock-", EphemeralSequential), "/lock/lock-2147483647");
    assert_eq!(create(&mut zk, a, "/lock/lock-", EphemeralSequential), "/lock/lock--2147483648");
    assert_eq!(create(&mut zk, a, "/lock/lock-", EphemeralSequential), "/lock/lock--2147483647");
    assert_eq!(path::sequence_of("lock--2147483648", "lock-"), Some(i32::MIN));
    assert_eq!(path::sequence_of("lock-2147483647", "lock-"), Some(i32::MAX));
    assert_eq!(zk.set_sequence_counter("/missing", 0), Err(ZkError::NoNode));
}

#[test]
fn negative_counter_formats_like_java_percent_010d() {
    let mut zk = server();
    let a = open(&mut zk);
    create(&mut zk, a, "/lock", Persistent);
    zk.set_sequence_counter("/lock", -5).unwrap();
    assert_eq!(create(&mut zk, a, "/lock/x-", EphemeralSequential), "/lock/x--000000005");
    assert_eq!(create(&mut zk, a, "/lock/", EphemeralSequential), "/lock/-000000004");
    assert_eq!(path::sequence_suffix(-5), "-000000005");
    assert_eq!(path::sequence_suffix(0), "0000000000");
    assert_eq!(path::sequence_suffix(7), "0000000007");
    assert_eq!(path::sequence_suffix(-1), "-000000001");
    assert_eq!(path::sequence_suffix(i32::MAX), "2147483647");
    assert_eq!(path::sequence_suffix(i32::MIN), "-2147483648");
}

#[test]
fn sequential_name_collision_fails_node_exists_and_consumes_nothing() {
    let mut zk = server();
    let a = open(&mut zk);
    create(&mut zk, a, "/lock", Persistent);
    // A plain child named like the next sequential name (it also moves the counter to 1).
    create(&mut zk, a, "/lock/x-0000000001", Persistent);
    assert_eq!(fails(&mut zk, a, Request::create("/lock/x-", EphemeralSequential)), ZkError::NodeExists);
    assert_eq!(fails(&mut zk, a, Request::create("/lock/x-", PersistentSequential)), ZkError::NodeExists);
    // The collision consumed nothing: the next create, under another prefix, gets 1.
    assert_eq!(create(&mut zk, a, "/lock/y-", EphemeralSequential), "/lock/y-0000000001");
    assert_eq!(create(&mut zk, a, "/lock/x-", EphemeralSequential), "/lock/x-0000000002");
}

#[test]
fn cversion_moves_on_deletes_but_is_not_the_counter() {
    // 14-lock-race and 11-versions
    let mut zk = server();
    let a = open(&mut zk);
    create(&mut zk, a, "/lock", Persistent);
    create(&mut zk, a, "/lock/x-", EphemeralSequential);
    create(&mut zk, a, "/lock/x-", EphemeralSequential);
    assert_eq!(stat(&zk, "/lock").cversion, 2);
    ok(&mut zk, a, Request::delete("/lock/x-0000000000"));
    let after_delete = stat(&zk, "/lock");
    assert_eq!((after_delete.cversion, after_delete.num_children), (3, 1));
    assert_eq!(create(&mut zk, a, "/lock/x-", EphemeralSequential), "/lock/x-0000000002");
    assert_eq!(stat(&zk, "/lock").cversion, 4);
    // Closing a session deletes its ephemerals and moves cversion once per node (05: 7).
    let b = open(&mut zk);
    create(&mut zk, b, "/lock/x-", EphemeralSequential);
    create(&mut zk, b, "/lock/x-", EphemeralSequential);
    zk.close_session(b);
    assert_eq!(stat(&zk, "/lock").cversion, 8);
    assert_eq!(create(&mut zk, a, "/lock/x-", EphemeralSequential), "/lock/x-0000000005");
}

// ---------------------------------------------------------------------------------------------
// Stats

#[test]
fn set_data_bumps_version_even_with_unchanged_data() {
    // 11-versions, op by op.
    let mut zk = server();
    let a = open(&mut zk);
    let Response::Created { stat: s, .. } =
        ok(&mut zk, a, Request::Create { path: "/v".into(), data: "abc".into(), mode: Persistent })
    else {
        panic!()
    };
    assert_eq!((s.version, s.cversion, s.data_length, s.num_children), (0, 0, 3, 0));
    let data_set = |r: Response| match r {
        Response::DataSet(stat) => stat,
        other => panic!("{other:?}"),
    };
    let s = data_set(ok(&mut zk, a, set_data("/v", "abc", -1)));
    assert_eq!((s.version, s.data_length), (1, 3), "same data still bumps the version");
    let s = data_set(ok(&mut zk, a, set_data("/v", "", 1)));
    assert_eq!((s.version, s.data_length), (2, 0));
    let s = data_set(ok(&mut zk, a, set_data("/v", "hello", -1)));
    assert_eq!((s.version, s.data_length), (3, 5));
    assert_eq!(fails(&mut zk, a, set_data("/v", "z", 2)), ZkError::BadVersion);
    let Response::Data { data, stat: s } = ok(&mut zk, a, Request::get_data("/v", false)) else { panic!() };
    assert_eq!((data.as_str(), s.version, s.data_length), ("hello", 3, 5));
    create(&mut zk, a, "/v/a", Persistent);
    create(&mut zk, a, "/v/b", Persistent);
    let v = stat(&zk, "/v");
    assert_eq!((v.cversion, v.num_children, v.version), (2, 2, 3));
    let s = data_set(ok(&mut zk, a, set_data("/v/a", "child", -1)));
    assert_eq!((s.version, s.data_length), (1, 5));
    assert_eq!(stat(&zk, "/v"), v, "a child's setData leaves the parent's stat alone");
    ok(&mut zk, a, delete_v("/v/a", 1));
    let v = stat(&zk, "/v");
    assert_eq!((v.cversion, v.num_children, v.version), (3, 1, 3));
    ok(&mut zk, a, delete_v("/v/b", 0));
    ok(&mut zk, a, delete_v("/v", 3));
    create(&mut zk, a, "/v", Persistent);
    let v = stat(&zk, "/v");
    assert_eq!((v.version, v.cversion, v.data_length, v.num_children), (0, 0, 0, 0));
}

#[test]
fn stat_zxids_owner_and_reply_zxid() {
    let mut zk = server();
    let a = open(&mut zk);
    assert_eq!(zk.zxid(), 0);
    let outcome = zk.apply(a, &Request::create("/p", Persistent));
    assert_eq!(outcome.zxid, 1);
    let p = stat(&zk, "/p");
    assert_eq!((p.czxid, p.mzxid, p.pzxid, p.ephemeral_owner), (1, 1, 1, None));
    ok(&mut zk, a, set_data("/p", "x", -1));
    let p = stat(&zk, "/p");
    assert_eq!((p.czxid, p.mzxid, p.pzxid), (1, 2, 1));
    create(&mut zk, a, "/p/c", Ephemeral);
    let p = stat(&zk, "/p");
    assert_eq!((p.czxid, p.mzxid, p.pzxid), (1, 2, 3), "a child create moves pzxid only");
    let c = stat(&zk, "/p/c");
    assert_eq!((c.czxid, c.mzxid, c.pzxid, c.ephemeral_owner), (3, 3, 3, Some(a)));
    ok(&mut zk, a, set_data("/p/c", "y", -1));
    assert_eq!(stat(&zk, "/p").pzxid, 3, "a child's setData is not a child change");
    ok(&mut zk, a, Request::delete("/p/c"));
    let p = stat(&zk, "/p");
    assert_eq!((p.mzxid, p.pzxid, p.cversion, p.num_children), (2, 5, 2, 0));
    // Reads and failures do not advance the zxid; a read's reply carries the current one.
    let read = zk.apply(a, &Request::exists("/p", false));
    assert_eq!((read.zxid, zk.zxid()), (5, 5));
    fails(&mut zk, a, Request::create("/p", Persistent));
    assert_eq!(zk.zxid(), 5);
    // A re-created node gets a newer czxid (what makes czxid a fencing token).
    create(&mut zk, a, "/p/c", Ephemeral);
    assert_eq!(stat(&zk, "/p/c").czxid, 6);
}

// ---------------------------------------------------------------------------------------------
// Error codes; a failed op changes nothing

#[test]
fn error_no_node_for_missing_parent_and_missing_node() {
    // 10-errors
    let mut zk = server();
    let a = open(&mut zk);
    create(&mut zk, a, "/p", Persistent);
    assert_eq!(fails(&mut zk, a, Request::create("/missing/child", Persistent)), ZkError::NoNode);
    assert_eq!(fails(&mut zk, a, Request::create("/missing/c-", EphemeralSequential)), ZkError::NoNode);
    assert_eq!(fails(&mut zk, a, Request::delete("/p/nope")), ZkError::NoNode);
    assert_eq!(fails(&mut zk, a, set_data("/nope", "x", -1)), ZkError::NoNode);
    assert_eq!(fails(&mut zk, a, Request::get_data("/nope", false)), ZkError::NoNode);
    assert_eq!(fails(&mut zk, a, Request::get_children("/nope", false)), ZkError::NoNode);
    assert_eq!(ok(&mut zk, a, Request::exists("/nope", false)), Response::Exists(None));
}

#[test]
fn error_node_exists() {
    // 10-errors
    let mut zk = server();
    let a = open(&mut zk);
    create(&mut zk, a, "/p", Persistent);
    create(&mut zk, a, "/e", Ephemeral);
    assert_eq!(fails(&mut zk, a, Request::create("/p", Persistent)), ZkError::NodeExists);
    assert_eq!(fails(&mut zk, a, Request::create("/p", Ephemeral)), ZkError::NodeExists);
    assert_eq!(fails(&mut zk, a, Request::create("/e", Persistent)), ZkError::NodeExists);
    assert_eq!(fails(&mut zk, a, Request::create("/", Persistent)), ZkError::NodeExists);
}

#[test]
fn error_not_empty() {
    let mut zk = server();
    let a = open(&mut zk);
    create(&mut zk, a, "/p", Persistent);
    create(&mut zk, a, "/p/c", Ephemeral);
    assert_eq!(fails(&mut zk, a, Request::delete("/p")), ZkError::NotEmpty);
    assert_eq!(fails(&mut zk, a, delete_v("/p", 0)), ZkError::NotEmpty);
    ok(&mut zk, a, Request::delete("/p/c"));
    ok(&mut zk, a, Request::delete("/p"));
}

#[test]
fn error_bad_version_and_minus_one_matches_any() {
    // 10-errors and 11-versions
    let mut zk = server();
    let a = open(&mut zk);
    create(&mut zk, a, "/p", Persistent);
    create(&mut zk, a, "/p/c", Persistent);
    assert_eq!(fails(&mut zk, a, delete_v("/p/c", 3)), ZkError::BadVersion);
    assert_eq!(fails(&mut zk, a, set_data("/p/c", "x", 7)), ZkError::BadVersion);
    assert_eq!(fails(&mut zk, a, set_data("/p/c", "x", 1)), ZkError::BadVersion);
    ok(&mut zk, a, set_data("/p/c", "x", 0));
    ok(&mut zk, a, set_data("/p/c", "x", -1));
    ok(&mut zk, a, set_data("/p/c", "x", -1));
    assert_eq!(stat(&zk, "/p/c").version, 3);
    assert_eq!(fails(&mut zk, a, delete_v("/p/c", 0)), ZkError::BadVersion);
    ok(&mut zk, a, delete_v("/p/c", -1));
    ok(&mut zk, a, delete_v("/p", 0));
}

#[test]
fn error_no_children_for_ephemerals() {
    // 10-errors
    let mut zk = server();
    let a = open(&mut zk);
    let b = open(&mut zk);
    create(&mut zk, a, "/eph", Ephemeral);
    for mode in [Persistent, Ephemeral, PersistentSequential, EphemeralSequential] {
        let path = if mode.is_sequential() { "/eph/c-" } else { "/eph/child" };
        assert_eq!(fails(&mut zk, a, Request::create(path, mode)), ZkError::NoChildrenForEphemerals);
        assert_eq!(fails(&mut zk, b, Request::create(path, mode)), ZkError::NoChildrenForEphemerals);
    }
    let Response::Children { children, stat } = ok(&mut zk, a, Request::get_children("/eph", false)) else { panic!() };
    assert!(children.is_empty());
    assert_eq!((stat.ephemeral_owner, stat.cversion, stat.num_children), (Some(a), 0, 0));
}

fn every_request(path: &str) -> Vec<Request> {
    vec![
        Request::create(path, Persistent),
        Request::create(path, Ephemeral),
        Request::create(path, PersistentSequential),
        Request::create(path, EphemeralSequential),
        Request::delete(path),
        set_data(path, "x", -1),
        Request::exists(path, true),
        Request::get_data(path, true),
        Request::get_children(path, true),
    ]
}

#[test]
fn error_session_expired_for_ops_on_closed_or_expired_sessions() {
    let mut zk = server();
    let a = open(&mut zk);
    let closed = open(&mut zk);
    let expired = open(&mut zk);
    create(&mut zk, a, "/p", Persistent);
    zk.close_session(closed);
    zk.expire_session(expired);
    assert_eq!(zk.session(closed).unwrap().status, SessionStatus::Closed);
    assert_eq!(zk.session(expired).unwrap().status, SessionStatus::Expired);
    let never_opened = SessionId(99);
    for s in [closed, expired, never_opened] {
        for path in ["/p", "/q", "/p/c"] {
            for request in every_request(path) {
                assert_eq!(fails(&mut zk, s, request.clone()), ZkError::SessionExpired, "{request:?} by {s}");
            }
        }
        assert!(no_watches(&zk, s));
    }
}

#[test]
fn error_bad_arguments_for_bad_paths() {
    let mut zk = server();
    let a = open(&mut zk);
    create(&mut zk, a, "/p", Persistent);
    for bad in ["", "p", "p/c", "/p/", "//p", "/p//c", "/p/./c", "/p/../c", "/.", "/..", "/p/\u{0}", "/p\u{1f}"] {
        for request in every_request(bad) {
            let sequential = matches!(request, Request::Create { mode, .. } if mode.is_sequential());
            if sequential && ["/p/", "/.", "/.."].contains(&bad) {
                continue; // good sequential prefixes: the name gets digits appended
            }
            assert_eq!(fails(&mut zk, a, request.clone()), ZkError::BadArguments, "{request:?}");
        }
    }
    // `/lock/` is a prefix for a sequential create only; the root cannot be deleted.
    assert_eq!(fails(&mut zk, a, Request::create("/p/", Persistent)), ZkError::BadArguments);
    assert_eq!(fails(&mut zk, a, Request::create("/p/", Ephemeral)), ZkError::BadArguments);
    assert_eq!(fails(&mut zk, a, Request::create("/p//", PersistentSequential)), ZkError::BadArguments);
    assert_eq!(fails(&mut zk, a, Request::delete("/")), ZkError::BadArguments);
}

#[test]
fn an_ended_session_fails_every_request_session_expired_deleting_the_root_too() {
    // The Java client sends `delete /` to the server like any request, so an expired handle
    // fails it SessionExpired (recorded with the real libraries: conformance case 43); a live
    // session is refused BadArguments.
    let mut zk = server();
    let a = open(&mut zk);
    let b = open(&mut zk);
    zk.expire_session(a);
    assert_eq!(fails(&mut zk, a, Request::delete("/")), ZkError::SessionExpired);
    assert_eq!(fails(&mut zk, a, Request::delete("/p")), ZkError::SessionExpired);
    assert_eq!(fails(&mut zk, b, Request::delete("/")), ZkError::BadArguments);
}

#[test]
fn failed_op_changes_nothing() {
    // A busy server with watches armed, ephemerals and a counter in use; every failure below
    // must leave it exactly as it was (`fails` compares the whole Server) and fire nothing.
    let mut zk = server();
    let a = open(&mut zk);
    let b = open(&mut zk);
    let dead = open(&mut zk);
    create(&mut zk, a, "/lock", Persistent);
    create(&mut zk, a, "/lock/x-", EphemeralSequential);
    create(&mut zk, b, "/lock/x-", EphemeralSequential);
    create(&mut zk, a, "/lock/x-0000000003", Persistent);
    create(&mut zk, b, "/eph", Ephemeral);
    ok(&mut zk, b, Request::get_children("/lock", true));
    ok(&mut zk, b, Request::exists("/lock/x-0000000000", true));
    ok(&mut zk, b, Request::exists("/missing", true));
    ok(&mut zk, a, Request::get_data("/eph", true));
    zk.expire_session(dead);
    let failures = [
        (a, Request::create("/lock", Persistent)),
        (a, Request::create("/lock/x-", EphemeralSequential)),
        (a, Request::create("/missing/x-", EphemeralSequential)),
        (a, Request::create("/eph/c", Persistent)),
        (a, Request::create("/lock/x-\u{7f}", Persistent)),
        (a, Request::delete("/lock")),
        (a, Request::delete("/missing")),
        (a, delete_v("/lock/x-0000000000", 4)),
        (b, set_data("/eph", "x", 9)),
        (b, set_data("/missing", "x", -1)),
        (b, Request::get_data("/missing", true)),
        (b, Request::get_children("/missing", true)),
        (dead, Request::create("/lock/x-", EphemeralSequential)),
        (dead, Request::exists("/lock", true)),
        (dead, Request::delete("/eph")),
    ];
    for (s, request) in failures {
        fails(&mut zk, s, request);
    }
    // Ending a session that is already over is a no-op too.
    let before = zk.clone();
    assert!(zk.close_session(dead).is_empty());
    assert!(zk.expire_session(dead).is_empty());
    assert!(zk == before);
}

// ---------------------------------------------------------------------------------------------
// Children order

#[test]
fn children_order_is_unspecified_but_always_the_same_set() {
    let orders = [
        ChildrenOrder::Sorted,
        ChildrenOrder::Reversed,
        ChildrenOrder::Scrambled(1),
        ChildrenOrder::Scrambled(2),
        ChildrenOrder::Scrambled(0xdead_beef),
    ];
    let mut lists = Vec::new();
    for order in orders {
        let mut zk = server_with(ServerConfig { children_order: order, ..ServerConfig::default() });
        let a = open(&mut zk);
        create(&mut zk, a, "/o", Persistent);
        for name in ["/o/b", "/o/a", "/o/c"] {
            create(&mut zk, a, name, Persistent);
        }
        for _ in 0..12 {
            create(&mut zk, a, "/o/x-", EphemeralSequential);
        }
        let Response::Children { children, .. } = ok(&mut zk, a, Request::get_children("/o", false)) else { panic!() };
        lists.push(children.to_vec());
    }
    let mut expected = strings(&["a", "b", "c"]);
    expected.extend((3..15).map(|n| format!("x-{n:010}")));
    for list in &lists {
        let mut set = list.clone();
        set.sort();
        assert_eq!(set, expected, "every order hands out the same children");
    }
    assert_eq!(lists[0], expected, "Sorted is sorted");
    let mut reversed = expected.clone();
    reversed.reverse();
    assert_eq!(lists[1], reversed, "Reversed is reversed");
    for scrambled in &lists[2..] {
        assert_ne!(*scrambled, expected, "a scrambled order is not sorted");
        assert_ne!(*scrambled, reversed, "a scrambled order is not reversed");
    }
    assert_ne!(lists[2], lists[3], "the seed chooses the permutation");
    // The same seed always gives the same order (runs replay).
    assert_eq!(ChildrenOrder::Scrambled(1).arrange(expected.clone()), lists[2]);
    assert_eq!(ChildrenOrder::default(), ChildrenOrder::Reversed, "by default the order is not sorted");
}

// ---------------------------------------------------------------------------------------------
// Ephemerals, close and expiry

/// 05-ephemeral-close, with a child watch on the root added (/e lives there).
fn close_scenario(end: impl FnOnce(&mut Server, SessionId) -> Vec<Notification>, status: SessionStatus) {
    let mut zk = server();
    let a = open(&mut zk);
    let b = open(&mut zk);
    create(&mut zk, b, "/lock", Persistent);
    for _ in 0..3 {
        create(&mut zk, a, "/lock/x-", EphemeralSequential);
    }
    create_data(&mut zk, a, "/e", "mine", Ephemeral);
    create(&mut zk, b, "/lock/x-", EphemeralSequential);
    assert_eq!(
        zk.tree().ephemerals_of(a),
        strings(&["/e", "/lock/x-0000000000", "/lock/x-0000000001", "/lock/x-0000000002"])
    );
    ok(&mut zk, b, Request::exists("/e", true));
    ok(&mut zk, b, Request::exists("/lock/x-0000000000", true));
    ok(&mut zk, b, Request::get_data("/lock/x-0000000001", true));
    ok(&mut zk, b, Request::exists("/lock/x-0000000002", true));
    ok(&mut zk, b, Request::get_children("/lock", true));
    ok(&mut zk, b, Request::get_children("/", true));
    let zxid = zk.zxid();
    let notifications = end(&mut zk, a);
    assert_eq!(
        sorted(&notifications),
        vec![
            (b, NodeDeleted, "/e".to_string()),
            (b, NodeDeleted, "/lock/x-0000000000".to_string()),
            (b, NodeDeleted, "/lock/x-0000000001".to_string()),
            (b, NodeDeleted, "/lock/x-0000000002".to_string()),
            (b, NodeChildrenChanged, "/".to_string()),
            (b, NodeChildrenChanged, "/lock".to_string()),
        ]
        .into_iter()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect::<Vec<_>>(),
        "one NodeDeleted per watched node and exactly one NodeChildrenChanged per watched parent"
    );
    assert_eq!(zk.zxid(), zxid + 1, "the session's end is one atomic step");
    assert_eq!((stat(&zk, "/lock").pzxid, stat(&zk, "/").pzxid), (zxid + 1, zxid + 1));
    assert!(zk.tree().ephemerals_of(a).is_empty());
    assert_eq!(zk.tree().ephemerals_of(b), strings(&["/lock/x-0000000003"]));
    assert_eq!(ok(&mut zk, b, Request::exists("/e", false)), Response::Exists(None));
    assert_eq!(children(&mut zk, b, "/lock"), strings(&["x-0000000003"]));
    let lock = stat(&zk, "/lock");
    assert_eq!((lock.cversion, lock.num_children), (7, 1));
    assert!(!zk.is_alive(a));
    assert_eq!(zk.session(a).unwrap().status, status);
    assert!(no_watches(&zk, b), "every watch of b fired");
    assert_eq!(fails(&mut zk, a, Request::create("/after-close", Persistent)), ZkError::SessionExpired);
}

#[test]
fn close_deletes_ephemerals_atomically_with_one_children_changed_per_parent() {
    close_scenario(|zk, s| zk.close_session(s), SessionStatus::Closed);
}

#[test]
fn expiry_deletes_ephemerals_atomically_with_one_children_changed_per_parent() {
    close_scenario(|zk, s| zk.expire_session(s), SessionStatus::Expired);
}

/// A session with watches on its own ephemerals (and their parent) and on a node still to come.
fn watching_own_ephemerals() -> (Server, SessionId, SessionId) {
    let mut zk = server();
    let a = open(&mut zk);
    let b = open(&mut zk);
    create(&mut zk, a, "/lock", Persistent);
    create(&mut zk, a, "/lock/x-", EphemeralSequential);
    ok(&mut zk, a, Request::exists("/lock/x-0000000000", true));
    ok(&mut zk, a, Request::get_data("/lock/x-0000000000", true));
    ok(&mut zk, a, Request::get_children("/lock", true));
    ok(&mut zk, a, Request::get_children("/lock/x-0000000000", true));
    ok(&mut zk, a, Request::exists("/later", true));
    ok(&mut zk, b, Request::get_children("/lock", true));
    (zk, a, b)
}

#[test]
fn closing_session_hears_its_own_watches_on_what_the_close_deletes() {
    // 33-close-own-ephemeral-watch: the connection is open while the server applies the close.
    let (mut zk, a, b) = watching_own_ephemerals();
    let notifications = zk.close_session(a);
    assert_eq!(
        events_of(&notifications, a),
        vec![ev(NodeDeleted, "/lock/x-0000000000"), ev(NodeChildrenChanged, "/lock")],
        "one NodeDeleted for its data and child watches on the node, one NodeChildrenChanged"
    );
    assert_eq!(events_of(&notifications, b), vec![ev(NodeChildrenChanged, "/lock")]);
    assert!(no_watches(&zk, a), "the rest of its watches go with the session");
    let (_, later) = run(&mut zk, b, Request::create("/later", Persistent));
    assert!(later.is_empty(), "a dropped exist watch does not fire: {later:?}");
}

#[test]
fn expired_session_own_watches_are_dropped_before_its_ephemerals_go() {
    // 32-expire-drops-watches: the server expires a session whose connection is gone.
    let (mut zk, a, b) = watching_own_ephemerals();
    let notifications = zk.expire_session(a);
    assert!(events_of(&notifications, a).is_empty(), "the expired session gets nothing: {notifications:?}");
    assert_eq!(events_of(&notifications, b), vec![ev(NodeChildrenChanged, "/lock")]);
    assert!(no_watches(&zk, a));
    let (_, later) = run(&mut zk, b, Request::create("/later", Persistent));
    assert!(later.is_empty(), "a dropped exist watch does not fire: {later:?}");
}

#[test]
fn ending_a_session_that_owns_nothing_still_drops_its_watches() {
    let mut zk = server();
    let a = open(&mut zk);
    let b = open(&mut zk);
    create(&mut zk, b, "/p", Persistent);
    ok(&mut zk, a, Request::get_data("/p", true));
    assert!(zk.expire_session(a).is_empty());
    assert!(no_watches(&zk, a));
    let (_, fired) = run(&mut zk, b, set_data("/p", "x", -1));
    assert!(fired.is_empty());
}

// ---------------------------------------------------------------------------------------------
// Watches

#[test]
fn exists_on_missing_node_arms_watch_that_fires_node_created_even_for_creator() {
    // 07-exists-watch-create
    let mut zk = server();
    let a = open(&mut zk);
    let b = open(&mut zk);
    assert_eq!(ok(&mut zk, a, Request::exists("/n", true)), Response::Exists(None));
    assert_eq!(zk.watches_of(a), (strings(&["/n"]), vec![]));
    let (_, fired) = run(&mut zk, b, Request::Create { path: "/n".into(), data: "v0".into(), mode: Persistent });
    assert_eq!(sorted(&fired), vec![(a, NodeCreated, "/n".to_string())]);
    // exists on a present node arms a data watch: NodeDataChanged, then NodeDeleted.
    ok(&mut zk, a, Request::exists("/n", true));
    let (_, fired) = run(&mut zk, b, set_data("/n", "v1", -1));
    assert_eq!(sorted(&fired), vec![(a, NodeDataChanged, "/n".to_string())]);
    ok(&mut zk, a, Request::exists("/n", true));
    let (_, fired) = run(&mut zk, b, Request::delete("/n"));
    assert_eq!(sorted(&fired), vec![(a, NodeDeleted, "/n".to_string())]);
    // The creator's own create fires its exist watch.
    ok(&mut zk, a, Request::exists("/n", true));
    let (_, fired) = run(&mut zk, a, Request::create("/n", Ephemeral));
    assert_eq!(sorted(&fired), vec![(a, NodeCreated, "/n".to_string())]);
    // A sequential create fires the exist watch on the name it got.
    create(&mut zk, a, "/q", Persistent);
    ok(&mut zk, b, Request::exists("/q/s-0000000000", true));
    let (_, fired) = run(&mut zk, a, Request::create("/q/s-", EphemeralSequential));
    assert_eq!(sorted(&fired), vec![(b, NodeCreated, "/q/s-0000000000".to_string())]);
}

#[test]
fn get_data_and_get_children_on_missing_node_fail_no_node_and_arm_nothing() {
    // 07-exists-watch-create
    let mut zk = server();
    let a = open(&mut zk);
    let b = open(&mut zk);
    assert_eq!(fails(&mut zk, a, Request::get_data("/m", true)), ZkError::NoNode);
    assert_eq!(fails(&mut zk, a, Request::get_children("/m", true)), ZkError::NoNode);
    assert!(no_watches(&zk, a));
    assert!(zk.data_watchers("/m").is_empty());
    let (_, fired) = run(&mut zk, b, Request::create("/m", Persistent));
    assert!(fired.is_empty());
    let (_, fired) = run(&mut zk, b, Request::create("/m/c", Persistent));
    assert!(fired.is_empty());
}

#[test]
fn watches_are_one_shot() {
    // 08-one-shot
    let mut zk = server();
    let a = open(&mut zk);
    let b = open(&mut zk);
    create_data(&mut zk, b, "/d", "0", Persistent);
    ok(&mut zk, a, Request::get_data("/d", true));
    let (_, first) = run(&mut zk, b, set_data("/d", "1", -1));
    let (_, second) = run(&mut zk, b, set_data("/d", "2", -1));
    assert_eq!(events_of(&first, a), vec![ev(NodeDataChanged, "/d")]);
    assert!(second.is_empty(), "the second change fires nothing: {second:?}");
    // Child watches too.
    ok(&mut zk, a, Request::get_children("/d", true));
    let (_, first) = run(&mut zk, b, Request::create("/d/c1", Persistent));
    let (_, second) = run(&mut zk, b, Request::create("/d/c2", Persistent));
    assert_eq!(events_of(&first, a), vec![ev(NodeChildrenChanged, "/d")]);
    assert!(second.is_empty());
    // Exist watches too.
    ok(&mut zk, a, Request::exists("/n", true));
    let (_, first) = run(&mut zk, b, Request::create("/n", Persistent));
    ok(&mut zk, b, Request::delete("/n"));
    let (_, second) = run(&mut zk, b, Request::create("/n", Persistent));
    assert_eq!(events_of(&first, a), vec![ev(NodeCreated, "/n")]);
    assert!(second.is_empty());
    assert!(no_watches(&zk, a));
}

#[test]
fn data_watches_ignore_child_changes_and_child_watches_ignore_data_changes() {
    // 08-one-shot, ops 7 to 22
    let mut zk = server();
    let a = open(&mut zk);
    let b = open(&mut zk);
    create_data(&mut zk, b, "/d", "2", Persistent);
    ok(&mut zk, a, Request::get_data("/d", true));
    ok(&mut zk, a, Request::get_children("/d", true));
    let (_, fired) = run(&mut zk, b, Request::create("/d/c1", Persistent));
    assert_eq!(sorted(&fired), vec![(a, NodeChildrenChanged, "/d".to_string())], "the data watch stays");
    let (_, fired) = run(&mut zk, b, set_data("/d/c1", "x", -1));
    assert!(fired.is_empty(), "a child's data is not the parent's data");
    let (_, fired) = run(&mut zk, b, Request::create("/d/c2", Persistent));
    assert!(fired.is_empty());
    let (_, fired) = run(&mut zk, b, set_data("/d", "3", -1));
    assert_eq!(sorted(&fired), vec![(a, NodeDataChanged, "/d".to_string())]);
    ok(&mut zk, a, Request::get_children("/d", true));
    let (_, fired) = run(&mut zk, b, set_data("/d", "4", -1));
    assert!(fired.is_empty(), "a child watch ignores the node's data");
    let (_, fired) = run(&mut zk, b, set_data("/d/c1", "y", -1));
    assert!(fired.is_empty(), "a child watch ignores the children's data");
    let (_, fired) = run(&mut zk, b, Request::delete("/d/c1"));
    assert_eq!(sorted(&fired), vec![(a, NodeChildrenChanged, "/d".to_string())]);
    let (_, fired) = run(&mut zk, b, Request::delete("/d/c2"));
    assert!(fired.is_empty());
    // A data watch on a child ignores its own children; a child watch on the parent ignores a
    // grandchild.
    create(&mut zk, b, "/d/c", Persistent);
    ok(&mut zk, a, Request::get_data("/d/c", true));
    ok(&mut zk, a, Request::get_children("/d", true));
    let (_, fired) = run(&mut zk, b, Request::create("/d/c/g", Persistent));
    assert!(fired.is_empty(), "{fired:?}");
}

#[test]
fn child_watch_on_a_deleted_node_fires_node_deleted() {
    let mut zk = server();
    let a = open(&mut zk);
    let b = open(&mut zk);
    create(&mut zk, b, "/d", Persistent);
    create(&mut zk, b, "/d/c", Persistent);
    ok(&mut zk, a, Request::get_children("/d", true));
    ok(&mut zk, a, Request::get_children("/d/c", true));
    let (_, fired) = run(&mut zk, b, Request::delete("/d/c"));
    assert_eq!(
        sorted(&fired),
        vec![(a, NodeDeleted, "/d/c".to_string()), (a, NodeChildrenChanged, "/d".to_string())]
            .into_iter()
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect::<Vec<_>>()
    );
    ok(&mut zk, a, Request::get_children("/d", true));
    let (_, fired) = run(&mut zk, b, Request::delete("/d"));
    assert_eq!(sorted(&fired), vec![(a, NodeDeleted, "/d".to_string())]);
    assert!(no_watches(&zk, a));
}

#[test]
fn one_notification_per_node_per_session_even_with_several_watches() {
    let mut zk = server();
    let a = open(&mut zk);
    let b = open(&mut zk);
    let c = open(&mut zk);
    create(&mut zk, c, "/n", Persistent);
    for s in [a, b] {
        ok(&mut zk, s, Request::exists("/n", true));
        ok(&mut zk, s, Request::get_data("/n", true));
    }
    ok(&mut zk, a, Request::get_children("/n", true));
    let (_, fired) = run(&mut zk, c, set_data("/n", "x", -1));
    assert_eq!(sorted(&fired), vec![(a, NodeDataChanged, "/n".to_string()), (b, NodeDataChanged, "/n".to_string())]);
    for s in [a, b] {
        ok(&mut zk, s, Request::exists("/n", true));
        ok(&mut zk, s, Request::get_data("/n", true));
        ok(&mut zk, s, Request::get_children("/n", true));
    }
    let (_, fired) = run(&mut zk, c, Request::delete("/n"));
    assert_eq!(sorted(&fired), vec![(a, NodeDeleted, "/n".to_string()), (b, NodeDeleted, "/n".to_string())]);
    assert!(no_watches(&zk, a) && no_watches(&zk, b));
}

#[test]
fn watch_on_already_deleted_predecessor_never_fires() {
    // 14-lock-race
    let mut zk = server();
    let a = open(&mut zk);
    let b = open(&mut zk);
    create(&mut zk, a, "/lock", Persistent);
    create(&mut zk, a, "/lock/x-", EphemeralSequential);
    create(&mut zk, b, "/lock/x-", EphemeralSequential);
    assert_eq!(children(&mut zk, b, "/lock"), strings(&["x-0000000000", "x-0000000001"]));
    ok(&mut zk, a, Request::delete("/lock/x-0000000000"));
    assert_eq!(ok(&mut zk, b, Request::exists("/lock/x-0000000000", true)), Response::Exists(None));
    assert_eq!(zk.data_watchers("/lock/x-0000000000"), vec![b]);
    // Re-creating with the same prefix gets a new number, so the dangling watch never fires.
    let (response, fired) = run(&mut zk, a, Request::create("/lock/x-", EphemeralSequential));
    assert!(matches!(response, Response::Created { ref path, .. } if path == "/lock/x-0000000002"));
    assert!(fired.is_empty());
    assert!(zk.close_session(a).is_empty());
    assert_eq!(children(&mut zk, b, "/lock"), strings(&["x-0000000001"]));
    assert_eq!(zk.data_watchers("/lock/x-0000000000"), vec![b], "the watch stays registered, dangling");
}

#[test]
fn predecessor_watches_wake_only_the_successor() {
    // 17-recipe-predecessor
    let mut zk = server();
    let a = open(&mut zk);
    let b = open(&mut zk);
    let c = open(&mut zk);
    create(&mut zk, a, "/lock", Persistent);
    for s in [a, b, c] {
        create(&mut zk, s, "/lock/lock-", EphemeralSequential);
    }
    let Response::Exists(Some(st)) = ok(&mut zk, b, Request::exists("/lock/lock-0000000000", true)) else { panic!() };
    assert_eq!(st.ephemeral_owner, Some(a));
    ok(&mut zk, c, Request::exists("/lock/lock-0000000001", true));
    let fired = zk.close_session(b);
    assert_eq!(sorted(&fired), vec![(c, NodeDeleted, "/lock/lock-0000000001".to_string())]);
    assert_eq!(children(&mut zk, c, "/lock"), strings(&["lock-0000000000", "lock-0000000002"]));
    ok(&mut zk, c, Request::exists("/lock/lock-0000000000", true));
    let (_, fired) = run(&mut zk, a, Request::delete("/lock/lock-0000000000"));
    assert_eq!(sorted(&fired), vec![(c, NodeDeleted, "/lock/lock-0000000000".to_string())]);
    assert_eq!(children(&mut zk, c, "/lock"), strings(&["lock-0000000002"]));
}

// ---------------------------------------------------------------------------------------------
// Sessions

#[test]
fn session_timeout_clamped_to_two_to_twenty_ticks() {
    let mut zk = server(); // tick 100 ms
    assert_eq!(zk.config().tick_ms, 100);
    for (asked, got) in
        [(0, 200), (1, 200), (199, 200), (200, 200), (1500, 1500), (2000, 2000), (4000, 2000), (u32::MAX, 2000)]
    {
        let (s, negotiated) = zk.open_session(asked);
        assert_eq!(negotiated, got, "asked {asked}");
        assert_eq!(zk.session(s).unwrap().timeout_ms, got);
        assert!(zk.is_alive(s));
    }
    let mut zk = server_with(ServerConfig { tick_ms: 1000, ..ServerConfig::default() });
    assert_eq!(zk.open_session(4000).1, 4000);
    assert_eq!(zk.open_session(1000).1, 2000);
    assert_eq!(zk.open_session(60_000).1, 20_000);
    // Sessions get distinct ids in order.
    let (x, _) = zk.open_session(4000);
    let (y, _) = zk.open_session(4000);
    assert!(x < y);
}

// ---------------------------------------------------------------------------------------------
// Java's SetWatches on reconnect

/// A server where `a` is disconnected (its watches dropped) while `w` changes things; returns the
/// zxid `a` had seen.
fn set_watches_setup() -> (Server, SessionId, SessionId, i64) {
    let mut zk = server();
    let a = open(&mut zk);
    let w = open(&mut zk);
    for p in ["/d", "/gone", "/p", "/same", "/gone-parent"] {
        create(&mut zk, w, p, Persistent);
    }
    create(&mut zk, w, "/same/c", Persistent);
    ok(&mut zk, a, Request::get_data("/d", true));
    zk.drop_watches(a);
    assert!(no_watches(&zk, a));
    let seen = zk.zxid();
    ok(&mut zk, w, set_data("/d", "changed", -1));
    ok(&mut zk, w, Request::delete("/gone"));
    ok(&mut zk, w, Request::delete("/gone-parent"));
    create(&mut zk, w, "/p/c", Persistent);
    create(&mut zk, w, "/new", Persistent);
    ok(&mut zk, w, set_data("/same/c", "child data is not /same's", -1));
    (zk, a, w, seen)
}

#[test]
fn set_watches_fires_node_deleted_for_a_gone_node() {
    let (mut zk, a, _, seen) = set_watches_setup();
    let events =
        zk.set_watches(a, seen, &[("/gone".into(), WatchKind::Data), ("/gone-parent".into(), WatchKind::Child)]);
    assert_eq!(events, vec![ev(NodeDeleted, "/gone"), ev(NodeDeleted, "/gone-parent")]);
    assert!(no_watches(&zk, a), "a watch that caught up is not re-armed");
}

#[test]
fn set_watches_fires_node_data_changed_when_mzxid_is_newer() {
    let (mut zk, a, _, seen) = set_watches_setup();
    assert_eq!(zk.set_watches(a, seen, &[("/d".into(), WatchKind::Data)]), vec![ev(NodeDataChanged, "/d")]);
    assert!(no_watches(&zk, a));
    // With the newest zxid as the relative zxid nothing changed since: re-armed.
    let now = zk.stat("/d").unwrap().mzxid;
    assert!(zk.set_watches(a, now, &[("/d".into(), WatchKind::Data)]).is_empty());
    assert_eq!(zk.watches_of(a), (strings(&["/d"]), vec![]));
}

#[test]
fn set_watches_fires_node_created_for_an_exist_watch_on_a_now_existing_node() {
    let (mut zk, a, _, seen) = set_watches_setup();
    let events = zk.set_watches(a, seen, &[("/new".into(), WatchKind::Exist), ("/d".into(), WatchKind::Exist)]);
    assert_eq!(events, vec![ev(NodeCreated, "/new"), ev(NodeCreated, "/d")]);
    assert!(no_watches(&zk, a));
}

#[test]
fn set_watches_fires_node_children_changed_when_pzxid_is_newer() {
    let (mut zk, a, _, seen) = set_watches_setup();
    let events = zk.set_watches(a, seen, &[("/p".into(), WatchKind::Child), ("/".into(), WatchKind::Child)]);
    assert_eq!(events, vec![ev(NodeChildrenChanged, "/p"), ev(NodeChildrenChanged, "/")]);
    assert!(no_watches(&zk, a));
}

#[test]
fn set_watches_re_arms_watches_whose_event_has_not_happened() {
    let (mut zk, a, w, seen) = set_watches_setup();
    let watches = [
        ("/same".to_string(), WatchKind::Data),
        ("/same".to_string(), WatchKind::Child),
        ("/later".to_string(), WatchKind::Exist),
    ];
    assert!(zk.set_watches(a, seen, &watches).is_empty());
    assert_eq!(zk.watches_of(a), (strings(&["/later", "/same"]), strings(&["/same"])));
    let (_, fired) = run(&mut zk, w, set_data("/same", "x", -1));
    assert_eq!(events_of(&fired, a), vec![ev(NodeDataChanged, "/same")]);
    let (_, fired) = run(&mut zk, w, Request::create("/same/d", Persistent));
    assert_eq!(events_of(&fired, a), vec![ev(NodeChildrenChanged, "/same")]);
    let (_, fired) = run(&mut zk, w, Request::create("/later", Persistent));
    assert_eq!(events_of(&fired, a), vec![ev(NodeCreated, "/later")]);
    assert!(no_watches(&zk, a));
}

#[test]
fn set_watches_on_an_ended_session_arms_nothing() {
    let (mut zk, a, w, seen) = set_watches_setup();
    zk.expire_session(a);
    let before = zk.clone();
    let events = zk.set_watches(a, seen, &[("/d".into(), WatchKind::Data), ("/same".into(), WatchKind::Data)]);
    assert!(events.is_empty(), "a dead session hears nothing: {events:?}");
    assert!(zk == before && no_watches(&zk, a));
    let (_, fired) = run(&mut zk, w, set_data("/same", "x", -1));
    assert!(fired.is_empty(), "no notification for a dead session: {fired:?}");
}

// ---------------------------------------------------------------------------------------------
// Lagging reads

#[test]
fn lagging_reads_see_an_older_tree() {
    let mut zk = lagging(3);
    let r = open(&mut zk);
    let w = open(&mut zk);
    create(&mut zk, w, "/x", Persistent);
    create(&mut zk, w, "/y", Persistent);
    assert_eq!(zk.attach_lagging(r), Some(0));
    let outcome = zk.apply(r, &Request::exists("/x", false));
    assert_eq!((outcome.result, outcome.zxid), (Ok(Response::Exists(None)), 0));
    assert_eq!(fails(&mut zk, r, Request::get_data("/x", false)), ZkError::NoNode);
    assert!(children(&mut zk, r, "/").is_empty());
    // The writer reads the leader's tree.
    assert_eq!(children(&mut zk, w, "/"), strings(&["x", "y"]));
    zk.catch_up(r);
    assert_eq!(children(&mut zk, r, "/"), strings(&["x", "y"]));
    assert_eq!(zk.apply(r, &Request::exists("/y", false)).zxid, zk.zxid());
    // A server without a lag window never lags.
    let mut zk = server();
    let r = open(&mut zk);
    create(&mut zk, r, "/x", Persistent);
    assert_eq!(zk.attach_lagging(r), None);
}

#[test]
fn a_sync_catches_a_lagging_session_up_and_no_later_read_is_older() {
    let mut zk = lagging(3);
    let r = open(&mut zk);
    let w = open(&mut zk);
    create(&mut zk, w, "/x", Persistent);
    assert_eq!(zk.attach_lagging(r), Some(0));
    assert!(children(&mut zk, r, "/").is_empty(), "lagging: /x not yet there");
    assert_eq!(ok(&mut zk, r, Request::sync("/")), Response::Synced { path: "/".into() });
    assert_eq!(children(&mut zk, r, "/"), strings(&["x"]), "after the sync the follower has caught up");
    // The follower may fall behind again, but never behind what the sync showed.
    assert_eq!(zk.attach_lagging(r), None, "no state in the window is as new as the sync");
    create(&mut zk, w, "/y", Persistent);
    let view = zk.attach_lagging(r).expect("the write after the sync can lag");
    assert!(view >= stat(&zk, "/x").czxid, "never older than the sync");
    assert_eq!(children(&mut zk, r, "/"), strings(&["x"]));
}

#[test]
fn a_multi_applies_all_its_ops_under_one_zxid_or_none() {
    // conformance/cases/49-multi.json records the same on ZooKeeper 3.8.
    let mut zk = server();
    let s = open(&mut zk);
    create(&mut zk, s, "/m", Persistent);
    let multi = |ops: Vec<zklab_model::Op>| Request::Multi { ops };
    let create_op = |path: &str, mode| zklab_model::Op::Create { path: path.into(), data: String::new(), mode };
    let before = zk.clone();
    let failed = fails(&mut zk, s, multi(vec![create_op("/m/a", Persistent), create_op("/m/gone/b", Persistent)]));
    assert_eq!(failed, ZkError::NoNode);
    assert_eq!(zk, before, "a failed multi changes nothing, not even the sequence counter");
    let Response::Multi(results) =
        ok(&mut zk, s, multi(vec![create_op("/m/q-", PersistentSequential), create_op("/m/q-", EphemeralSequential)]))
    else {
        panic!("a multi's reply")
    };
    let created: Vec<String> = results
        .iter()
        .map(|r| match r {
            zklab_model::OpResult::Created { path } => path.clone(),
            other => panic!("a create's result, not {other:?}"),
        })
        .collect();
    assert_eq!(created, strings(&["/m/q-0000000000", "/m/q-0000000001"]));
    let czxids = [stat(&zk, &created[0]).czxid, stat(&zk, &created[1]).czxid];
    assert_eq!(czxids, [zk.zxid(), zk.zxid()], "one transaction, one zxid");
    let check = |version| zklab_model::Op::Check { path: "/m".into(), version };
    assert_eq!(fails(&mut zk, s, multi(vec![check(7)])), ZkError::BadVersion);
    assert!(matches!(ok(&mut zk, s, multi(vec![check(0)])), Response::Multi(_)));
}

#[test]
fn an_operator_deletes_the_oldest_child_and_its_owner_lives_on() {
    let mut zk = server();
    let a = open(&mut zk);
    let b = open(&mut zk);
    create(&mut zk, a, "/lock", Persistent);
    let first = create(&mut zk, a, "/lock/n-", EphemeralSequential);
    create(&mut zk, b, "/lock/n-", EphemeralSequential);
    assert_eq!(zk.oldest_child("/lock").as_deref(), Some(first.as_str()));
    ok(&mut zk, a, Request::exists(&first, true));
    let fired = zk.operator_delete(&first);
    assert_eq!(events_of(&fired, a), vec![ev(NodeDeleted, &first)]);
    assert!(zk.is_alive(a), "the owner's session lives on");
    assert_eq!(children(&mut zk, a, "/lock").len(), 1);
}

#[test]
fn when_a_session_was_opened_is_kept_only_where_reads_can_lag() {
    // Two servers that differ only in whether the second session was opened before or after a
    // write: without a lagging follower nothing can tell them apart, so they are one state.
    let opened_late_or_early = |config: ServerConfig| {
        let (mut late, mut early) = (server_with(config), server_with(config));
        let w = open(&mut late);
        create(&mut late, w, "/x", Persistent);
        open(&mut late);
        let w = open(&mut early);
        open(&mut early);
        create(&mut early, w, "/x", Persistent);
        (late, early)
    };
    let (late, early) = opened_late_or_early(ServerConfig::default());
    assert_eq!(late, early);
    // Where reads lag, the late session has seen the write, and no read may show it less.
    let (late, early) = opened_late_or_early(*lagging(1).config());
    assert_ne!(late, early);
    assert_eq!(late.session(SessionId(2)).map(|s| s.last_zxid), Some(1));
}

#[test]
fn lagging_read_is_never_older_than_the_sessions_last_seen_zxid() {
    let mut zk = lagging(3);
    let r = open(&mut zk);
    let w = open(&mut zk);
    create(&mut zk, w, "/x", Persistent); // 1
    assert_eq!(zk.apply(r, &Request::exists("/x", false)).zxid, 1);
    create(&mut zk, w, "/y", Persistent); // 2
    create(&mut zk, w, "/z", Persistent); // 3
    let view = zk.attach_lagging(r).expect("the window holds zxids 0..=2");
    assert!(view >= 1, "never older than what r has seen: {view}");
    assert_eq!(view, 1, "but as old as that");
    assert_eq!(children(&mut zk, r, "/"), strings(&["x"]));
    // The writer has seen zxid 3, which no follower in the window has: it is not attached.
    assert_eq!(zk.attach_lagging(w), None);
    assert_eq!(children(&mut zk, w, "/"), strings(&["x", "y", "z"]));
}

#[test]
fn another_session_can_read_older_than_what_the_writer_has_seen() {
    let mut zk = lagging(2);
    let r = open(&mut zk);
    let w = open(&mut zk);
    create(&mut zk, w, "/lock", Persistent); // 1
    assert_eq!(ok(&mut zk, r, Request::exists("/lock", false)), Response::Exists(Some(stat(&zk, "/lock"))));
    let mine = create(&mut zk, w, "/lock/x-", EphemeralSequential); // 2
    assert_eq!(zk.session(w).unwrap().last_zxid, 2);
    assert_eq!(zk.attach_lagging(r), Some(1));
    assert!(children(&mut zk, r, "/lock").is_empty(), "r does not see {mine} yet");
}

#[test]
fn lagging_session_reads_its_own_writes() {
    let mut zk = lagging(3);
    let r = open(&mut zk);
    let w = open(&mut zk);
    create(&mut zk, w, "/lock", Persistent);
    create(&mut zk, w, "/other", Persistent);
    assert_eq!(zk.attach_lagging(r), Some(0));
    let outcome = zk.apply(r, &Request::create("/lock/x-", EphemeralSequential));
    assert!(outcome.result.is_ok());
    assert_eq!(outcome.zxid, 3);
    // The write's reply carried zxid 3: no later read may show r anything older.
    let read = zk.apply(r, &Request::get_children("/lock", false));
    assert!(read.zxid >= 3, "a read after a write went back to zxid {}", read.zxid);
    let Ok(Response::Children { children, .. }) = read.result else { panic!("{:?}", read.result) };
    assert_eq!(children.to_vec(), strings(&["x-0000000000"]), "r must see its own node");
}

#[test]
fn lagging_session_reply_zxids_never_go_backwards() {
    let mut zk = lagging(4);
    let r = open(&mut zk);
    let w = open(&mut zk);
    create(&mut zk, w, "/x", Persistent);
    create(&mut zk, w, "/y", Persistent);
    assert_eq!(zk.attach_lagging(r), Some(0));
    let mut newest = 0;
    let requests = [
        Request::exists("/x", false),
        Request::get_data("/x", false),     // NoNode on the follower
        Request::get_children("/y", false), // NoNode on the follower
        Request::exists("/y", false),
        Request::create("/x", Persistent), // NodeExists on the leader
        Request::exists("/x", false),
        Request::create("/z", Persistent),
        Request::get_data("/z", false),
    ];
    for request in requests {
        let outcome = zk.apply(r, &request);
        assert!(outcome.zxid >= newest, "{request:?} answered zxid {} after {newest}", outcome.zxid);
        newest = outcome.zxid;
        let floor = zk.session(r).unwrap().last_zxid;
        let view = zk.session(r).unwrap().view;
        assert!(view.is_none_or(|v| v >= floor), "r now reads at {view:?}, older than the {floor} it has seen");
    }
}

#[test]
fn watch_armed_on_a_stale_read_fires_at_once_if_the_node_changed_since() {
    let mut zk = lagging(4);
    let w = open(&mut zk);
    create_data(&mut zk, w, "/d", "0", Persistent); // 1
    create(&mut zk, w, "/u", Persistent); // 2
    let r = open(&mut zk);
    ok(&mut zk, w, set_data("/d", "1", -1)); // 3
    create(&mut zk, w, "/d/c", Persistent); // 4
    create(&mut zk, w, "/n", Persistent); // 5
    assert_eq!(zk.attach_lagging(r), Some(2));
    let (response, fired) = run(&mut zk, r, Request::get_data("/d", true));
    let Response::Data { data, stat } = response else { panic!() };
    assert_eq!((data.as_str(), stat.version), ("0", 0), "the stale value");
    assert_eq!(sorted(&fired), vec![(r, NodeDataChanged, "/d".to_string())]);
    let (response, fired) = run(&mut zk, r, Request::get_children("/d", true));
    assert!(matches!(response, Response::Children { ref children, .. } if children.is_empty()));
    assert_eq!(sorted(&fired), vec![(r, NodeChildrenChanged, "/d".to_string())]);
    let (response, fired) = run(&mut zk, r, Request::exists("/n", true));
    assert_eq!(response, Response::Exists(None));
    assert_eq!(sorted(&fired), vec![(r, NodeCreated, "/n".to_string())]);
    assert!(no_watches(&zk, r), "the watches that fired at once are not armed");
    // An unchanged node arms an ordinary watch.
    let (_, fired) = run(&mut zk, r, Request::get_data("/u", true));
    assert!(fired.is_empty());
    assert_eq!(zk.watches_of(r), (strings(&["/u"]), vec![]));
    let (_, fired) = run(&mut zk, w, set_data("/u", "x", -1));
    assert_eq!(sorted(&fired), vec![(r, NodeDataChanged, "/u".to_string())]);
}

// ---------------------------------------------------------------------------------------------
// Paths

#[test]
fn path_validate_accepts_absolute_paths_and_the_root() {
    for good in ["/", "/a", "/a/b", "/lock/x-0000000001", "/a.b", "/..a", "/a..", "/...", "/.a/b.", "/a b", "/ü"] {
        assert_eq!(path::validate(good, false), Ok(()), "{good:?}");
    }
}

#[test]
fn path_validate_rejects_bad_paths() {
    use PathError::*;
    assert_eq!(path::validate("", false), Err(Empty));
    assert!(matches!(path::validate("a", false), Err(NotAbsolute(_))));
    assert!(matches!(path::validate("a/b", false), Err(NotAbsolute(_))));
    assert!(matches!(path::validate("/a/", false), Err(TrailingSlash(_))));
    assert_eq!(path::validate("//a", false), Err(EmptySegment("//a".into(), 1)));
    assert_eq!(path::validate("/a//b", false), Err(EmptySegment("/a//b".into(), 3)));
    assert_eq!(path::validate("/a/./b", false), Err(Relative("/a/./b".into(), 3)));
    assert!(matches!(path::validate("/a/../b", false), Err(Relative(..))));
    assert!(matches!(path::validate("/.", false), Err(Relative(..))));
    assert!(matches!(path::validate("/..", false), Err(Relative(..))));
    assert!(matches!(path::validate("/a/..", false), Err(Relative(..))));
    for bad in ["/a\u{0}", "/\u{1}", "/a\u{1f}b", "/\u{7f}", "/x\u{80}", "/\u{e000}", "/\u{fff5}"] {
        assert!(matches!(path::validate(bad, false), Err(InvalidChar(..))), "{bad:?}");
    }
    assert_eq!(path::validate("/ab\u{1}", false), Err(InvalidChar("/ab\u{1}".into(), 3)));
}

#[test]
fn path_validate_sequential_accepts_an_empty_prefix() {
    assert_eq!(path::validate("/lock/", true), Ok(()));
    assert_eq!(path::validate("/", true), Ok(()));
    assert_eq!(path::validate("/lock/x-", true), Ok(()));
    assert!(matches!(path::validate("/lock/", false), Err(PathError::TrailingSlash(_))));
    // Errors name the path as given, without the digit appended for the check.
    assert_eq!(path::validate("/lock//", true), Err(PathError::EmptySegment("/lock//".into(), 6)));
    assert_eq!(path::validate("", true), Err(PathError::NotAbsolute(String::new())));
    assert!(matches!(path::validate("lock/", true), Err(PathError::NotAbsolute(p)) if p == "lock/"));
    assert!(matches!(path::validate("/a/./", true), Err(PathError::Relative(..))));
}

#[test]
fn path_sequence_of_reads_the_counter_given_the_prefix() {
    assert_eq!(path::sequence_of("x-0000000007", "x-"), Some(7));
    assert_eq!(path::sequence_of("0000000003", ""), Some(3));
    assert_eq!(path::sequence_of("lock-2147483647", "lock-"), Some(i32::MAX));
    assert_eq!(path::sequence_of("lock--2147483648", "lock-"), Some(i32::MIN));
    assert_eq!(path::sequence_of("x--000000005", "x-"), Some(-5));
    assert_eq!(path::sequence_of("-000000005", ""), Some(-5));
    // Only the prefix says where the counter starts.
    assert_eq!(path::sequence_of("x-1000000000", "x-"), Some(1_000_000_000));
    assert_eq!(path::sequence_of("x-1000000000", "x"), Some(-1_000_000_000));
    assert_eq!(path::sequence_of("a-b-0000000003", "a-b-"), Some(3));
    // Not a sequential name for that prefix.
    for (name, prefix) in [
        ("x-000000007", "x-"),
        ("x-00000000007", "x-"),
        ("x-000000000a", "x-"),
        ("y-0000000007", "x-"),
        ("x-", "x-"),
        ("x", "x-"),
        ("x-+000000007", "x-"),
        ("x-2147483648", "x-"),
        ("x--2147483649", "x-"),
    ] {
        assert_eq!(path::sequence_of(name, prefix), None, "{name:?} with prefix {prefix:?}");
    }
    // Round trip through the suffix format.
    for n in [0, 1, 9, 10, 999_999_999, i32::MAX, -1, -5, -999_999_999, i32::MIN] {
        assert_eq!(path::sequence_of(&format!("p-{}", path::sequence_suffix(n)), "p-"), Some(n));
    }
    assert_eq!(path::parent("/lock/x-1"), "/lock");
    assert_eq!(path::parent("/lock"), "/");
    assert_eq!(path::name("/lock/x-1"), "x-1");
    assert_eq!(path::join("/", "a"), "/a");
    assert_eq!(path::join("/a", "b"), "/a/b");
}

// ---------------------------------------------------------------------------------------------
// The client library in the world

/// A recipe that sends a fixed script on Acquire and records every input it is given.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Probe {
    script: Vec<Request>,
    seen: Vec<Input>,
    belief: Belief,
}

impl Probe {
    fn new(script: Vec<Request>) -> Self {
        Probe { script, seen: Vec::new(), belief: Belief::Idle }
    }
}

impl Recipe for Probe {
    fn name(&self) -> String {
        "probe".to_string()
    }
    fn handle(&mut self, _ctx: &Ctx, input: Input, out: &mut Vec<Request>) {
        if input == Input::Acquire {
            self.belief = Belief::Acquiring;
            out.extend(self.script.iter().cloned());
        }
        self.seen.push(input);
    }
    fn belief(&self) -> Belief {
        self.belief
    }
    fn owned_node(&self) -> Option<&str> {
        None
    }
}

fn world(behaviour: ClientBehaviour, faults: &[FaultKind], scripts: Vec<Vec<Request>>) -> World<Probe> {
    let config =
        WorldConfig { client_behaviour: behaviour, faults: FaultBudget::once(faults), ..WorldConfig::default() };
    World::new(config, scripts.into_iter().map(Probe::new).collect())
}

fn step(world: &mut World<Probe>, step: Step) {
    assert!(world.steps().contains(&step), "{step} is not among the enabled steps {:?}", world.steps());
    world.apply(step).unwrap_or_else(|e| panic!("{e}"));
}

/// Lets client `i` handle everything it has received (requests go out as the recipe sends them).
fn settle(world: &mut World<Probe>, i: zklab_model::ClientId) {
    while world.enabled(Step::Receive(i)) {
        step(world, Step::Receive(i));
    }
}

fn seen(world: &World<Probe>, i: usize) -> &[Input] {
    &world.clients[i].recipe.seen
}

fn lost(request: Request) -> Input {
    Input::Reply { request, result: Err(ZkError::ConnectionLoss) }
}

/// The admin's view of the world's server: a session of its own for arranging nodes.
fn admin(world: &mut World<Probe>) -> SessionId {
    world.server.open_session(4000).0
}

#[test]
fn world_connection_loss_before_apply_never_applies_the_request() {
    let create = Request::create("/lock/x-", EphemeralSequential);
    let check = Request::exists("/lock", false);
    let mut w = world(ClientBehaviour::Java, &[FaultKind::LossBeforeApply], vec![vec![create.clone(), check.clone()]]);
    // The fault is a lossy version of a step that sends: here the acquire's first request.
    assert!(!w.enabled(Step::Lossy(RequestFault::LossBeforeApply, Sending::Receive, 0)), "nothing to receive");
    let zxid = w.server.zxid();
    step(&mut w, Step::Lossy(RequestFault::LossBeforeApply, Sending::Acquire, 0));
    assert!(!w.enabled(Step::Lossy(RequestFault::LossBeforeApply, Sending::Reconnect, 0)), "the budget is spent");
    assert_eq!(w.server.zxid(), zxid, "the server never saw the request");
    assert!(w.server.tree().children("/lock").is_empty());
    assert_eq!(w.clients[0].link, Link::Down);
    assert!(w.fault_happened(FaultKind::LossBeforeApply));
    settle(&mut w, 0);
    assert_eq!(
        seen(&w, 0),
        [Input::Acquire, lost(create), lost(check), Input::State(SessionState::Disconnected)],
        "ConnectionLoss for every outstanding request, then Disconnected"
    );
    step(&mut w, Step::Reconnect(0));
    settle(&mut w, 0);
    assert_eq!(seen(&w, 0).last(), Some(&Input::State(SessionState::SyncConnected)));
    assert!(w.server.is_alive(w.clients[0].session), "the session survived");
    assert!(w.server.tree().children("/lock").is_empty());
}

#[test]
fn world_connection_loss_after_apply_applies_the_request_and_loses_the_reply() {
    let create = Request::create("/lock/x-", EphemeralSequential);
    let check = Request::exists("/lock", false);
    let mut w = world(ClientBehaviour::Java, &[FaultKind::LossAfterApply], vec![vec![create.clone(), check.clone()]]);
    let zxid = w.server.zxid();
    step(&mut w, Step::Lossy(RequestFault::LossAfterApply, Sending::Acquire, 0));
    let session = w.clients[0].session;
    assert_eq!(w.server.zxid(), zxid + 1, "the create, and only the create, was applied");
    assert_eq!(w.server.tree().ephemerals_of(session), strings(&["/lock/x-0000000000"]));
    assert_eq!(w.clients[0].link, Link::Down);
    assert!(w.fault_happened(FaultKind::LossAfterApply));
    settle(&mut w, 0);
    assert_eq!(
        seen(&w, 0),
        [Input::Acquire, lost(create), lost(check), Input::State(SessionState::Disconnected)],
        "the outcome is unknown to the client"
    );
    step(&mut w, Step::Reconnect(0));
    assert_eq!(w.server.tree().ephemerals_of(session), strings(&["/lock/x-0000000000"]), "and the node stays");
}

#[test]
fn world_a_reply_longer_than_jute_maxbuffer_drops_the_java_clients_connection() {
    // Three children `x-0000000000`..: the listing's frame is the reply header (16 bytes), the
    // vector's length (4) and three names of 4 + 12 bytes: 68 bytes. The Java client refuses a
    // frame longer than its jute.maxbuffer; kazoo reads any length.
    let list = Request::get_children("/lock", true);
    // Its reply is the header alone (a Stat would be 68 bytes more: over these limits too).
    let after = Request::exists("/gone", false);
    for (behaviour, limit, refused) in
        [(ClientBehaviour::Java, 67, true), (ClientBehaviour::Java, 68, false), (ClientBehaviour::Kazoo, 67, false)]
    {
        let what = format!("{behaviour:?} with jute.maxbuffer {limit}");
        let config = WorldConfig { client_behaviour: behaviour, jute_maxbuffer: Some(limit), ..WorldConfig::default() };
        let mut w = World::new(config, vec![Probe::new(vec![list.clone(), after.clone()])]);
        let adm = admin(&mut w);
        for _ in 0..3 {
            assert!(w.server.apply(adm, &Request::create("/lock/x-", PersistentSequential)).result.is_ok());
        }
        step(&mut w, Step::Acquire(0));
        if !refused {
            assert_eq!(w.refused(), None, "{what}");
            settle(&mut w, 0);
            let Input::Reply { result: Ok(Response::Children { children, .. }), .. } = &seen(&w, 0)[1] else {
                panic!("{what}: {:?}", seen(&w, 0))
            };
            assert_eq!(children.len(), 3, "{what}");
            continue;
        }
        assert_eq!(w.refused(), Some(RefusedReply { client: 0, frame_bytes: 68, children: 3 }), "{what}");
        assert_eq!(w.clients[0].link, Link::Down, "{what}: not a fault, yet the connection is gone");
        assert!(!w.fault_happened(FaultKind::LossAfterApply));
        settle(&mut w, 0);
        assert_eq!(
            seen(&w, 0),
            [Input::Acquire, lost(list.clone()), lost(after.clone()), Input::State(SessionState::Disconnected)],
            "{what}: the read was applied, its reply never reached the recipe"
        );
        // The server armed the child watch on the connection that dropped, and the client never
        // registered it: nothing fires after the reconnect.
        step(&mut w, Step::Reconnect(0));
        let created = w.server.apply(adm, &Request::create("/lock/x-", PersistentSequential));
        assert!(created.notifications.is_empty(), "{what}: {:?}", created.notifications);
    }
    assert_eq!(JAVA_MAX_PACKET_BYTES, 1_048_575, "ZKClientConfig.CLIENT_MAX_PACKET_LENGTH_DEFAULT in 3.8");
    assert_eq!(ClientBehaviour::Java.max_reply_bytes(None), None, "a world sets no limit unless asked");
}

#[test]
fn a_long_listing_is_shared_until_the_children_change() {
    let mut zk = server();
    let (a, _) = zk.open_session(4000);
    let (b, _) = zk.open_session(4000);
    create(&mut zk, a, "/q", Persistent);
    for _ in 0..zklab_model::tree::SHARED_LISTING {
        create(&mut zk, a, "/q/n-", EphemeralSequential);
    }
    let listing = |zk: &mut Server, s| match ok(zk, s, Request::get_children("/q", true)) {
        Response::Children { children, .. } => children,
        other => panic!("getChildren answered {other:?}"),
    };
    let (first, second) = (listing(&mut zk, a), listing(&mut zk, b));
    assert!(first.shares(&second), "two readers of the same children share one listing");
    create(&mut zk, b, "/q/n-", EphemeralSequential);
    let third = listing(&mut zk, a);
    assert!(!first.shares(&third), "a change makes a new listing");
    assert_eq!(third.len(), first.len() + 1);
    assert_eq!(first.len(), zklab_model::tree::SHARED_LISTING, "what was handed out earlier stays as it was");
}

#[test]
fn a_frame_counts_every_string_with_its_length() {
    let stat = Stat::default();
    let listing = |names: &[&str]| Response::Children { children: strings(names).into(), stat };
    assert_eq!(listing(&[]).frame_bytes(), 16 + 4);
    assert_eq!(listing(&["a", "bb"]).frame_bytes(), 16 + 4 + (4 + 1) + (4 + 2));
    assert_eq!(listing(&["\u{e9}"]).frame_bytes(), 16 + 4 + 4 + 2, "UTF-8 bytes, not chars");
    assert_eq!(Response::Data { data: "xyz".into(), stat }.frame_bytes(), 16 + 4 + 3 + 68);
    assert_eq!(Response::Exists(None).frame_bytes(), 16);
    assert_eq!(Response::Created { path: "/a".into(), stat }.frame_bytes(), 16 + 4 + 2);
}

/// Client 0 watches three things, disconnects, and `admin` changes all of them meanwhile; one
/// more watched node stays unchanged.
fn disconnected_with_changes(behaviour: ClientBehaviour) -> (World<Probe>, SessionId) {
    let script = vec![
        Request::exists("/lock/w", true),
        Request::get_data("/lock/d", true),
        Request::get_data("/lock/u", true),
        Request::get_children("/lock", true),
    ];
    let mut w = world(behaviour, &[FaultKind::Disconnect], vec![script]);
    let adm = admin(&mut w);
    for p in ["/lock/d", "/lock/u"] {
        assert!(w.server.apply(adm, &Request::create(p, Persistent)).result.is_ok());
    }
    step(&mut w, Step::Acquire(0));
    settle(&mut w, 0);
    let session = w.clients[0].session;
    assert_eq!(w.server.watches_of(session), (strings(&["/lock/d", "/lock/u", "/lock/w"]), strings(&["/lock"])));
    step(&mut w, Step::Fault(ClientFault::Disconnect, 0));
    assert!(w.server.watches_of(session) == (vec![], vec![]), "the server forgets the connection's watches");
    settle(&mut w, 0);
    assert_eq!(seen(&w, 0).last(), Some(&Input::State(SessionState::Disconnected)));
    assert!(w.server.apply(adm, &Request::create("/lock/w", Persistent)).result.is_ok());
    assert!(w.server.apply(adm, &set_data("/lock/d", "new", -1)).result.is_ok());
    // No events arrive while disconnected.
    assert!(w.clients[0].inbound.is_empty());
    assert!(!w.enabled(Step::Receive(0)));
    (w, adm)
}

#[test]
fn world_java_client_re_arms_watches_on_reconnect_with_catch_up_events() {
    let (mut w, adm) = disconnected_with_changes(ClientBehaviour::Java);
    let before = seen(&w, 0).len();
    step(&mut w, Step::Reconnect(0));
    settle(&mut w, 0);
    let after = &seen(&w, 0)[before..];
    assert_eq!(after[0], Input::State(SessionState::SyncConnected));
    let events: BTreeSet<WatchedEvent> = after[1..]
        .iter()
        .map(|input| match input {
            Input::Watch(event) => event.clone(),
            other => panic!("expected only catch-up events after SyncConnected, got {other:?}"),
        })
        .collect();
    let expected: BTreeSet<WatchedEvent> =
        [ev(NodeCreated, "/lock/w"), ev(NodeDataChanged, "/lock/d"), ev(NodeChildrenChanged, "/lock")]
            .into_iter()
            .collect();
    assert_eq!((after.len() - 1, events), (3, expected));
    // The unchanged node's watch is armed again, on the server and in the library.
    let session = w.clients[0].session;
    assert_eq!(w.server.watches_of(session), (strings(&["/lock/u"]), vec![]));
    assert_eq!(w.clients[0].watches.to_vec(), vec![("/lock/u".to_string(), WatchKind::Data)]);
    let outcome = w.server.apply(adm, &set_data("/lock/u", "x", -1));
    assert_eq!(sorted(&outcome.notifications), vec![(session, NodeDataChanged, "/lock/u".to_string())]);
}

#[test]
fn world_java_client_receives_events_of_re_armed_watches() {
    let script = vec![Request::get_data("/lock/u", true)];
    let mut w =
        world(ClientBehaviour::Java, &[FaultKind::Disconnect], vec![script, vec![set_data("/lock/u", "x", -1)]]);
    let adm = admin(&mut w);
    assert!(w.server.apply(adm, &Request::create("/lock/u", Persistent)).result.is_ok());
    step(&mut w, Step::Acquire(0));
    settle(&mut w, 0);
    step(&mut w, Step::Fault(ClientFault::Disconnect, 0));
    settle(&mut w, 0);
    step(&mut w, Step::Reconnect(0));
    settle(&mut w, 0);
    step(&mut w, Step::Acquire(1));
    settle(&mut w, 1);
    settle(&mut w, 0);
    assert_eq!(seen(&w, 0).last(), Some(&Input::Watch(ev(NodeDataChanged, "/lock/u"))));
}

#[test]
fn world_kazoo_client_drops_watches_and_only_gets_sync_connected() {
    let (mut w, _) = disconnected_with_changes(ClientBehaviour::Kazoo);
    assert!(w.clients[0].watches.is_empty(), "kazoo forgets its watches on disconnect");
    let before = seen(&w, 0).len();
    step(&mut w, Step::Reconnect(0));
    settle(&mut w, 0);
    assert_eq!(&seen(&w, 0)[before..], [Input::State(SessionState::SyncConnected)]);
    let session = w.clients[0].session;
    assert!(w.server.watches_of(session) == (vec![], vec![]));
}

#[test]
/// Both libraries: the connection goes first (Disconnected), the server expires the session
/// later, and the client hears Expired only on reconnecting.
fn world_session_expiry_is_learned_only_on_reconnect() {
    for behaviour in [ClientBehaviour::Java, ClientBehaviour::Kazoo] {
        expiry_is_learned_only_on_reconnect(behaviour);
    }
}

fn expiry_is_learned_only_on_reconnect(behaviour: ClientBehaviour) {
    let create = Request::create("/lock/x-", EphemeralSequential);
    let watch = Request::exists("/lock/x-0000000000", true);
    let mut w = world(behaviour, &[FaultKind::Expire], vec![vec![create], vec![watch]]);
    step(&mut w, Step::Acquire(0));
    settle(&mut w, 0);
    step(&mut w, Step::Acquire(1));
    settle(&mut w, 1);
    let old = w.clients[0].session;
    step(&mut w, Step::Fault(ClientFault::Expire, 0));
    assert_eq!(w.clients[0].link, Link::Partitioned);
    assert!(w.server.is_alive(old), "the server has not decided yet");
    assert!(!w.enabled(Step::Reconnect(0)), "cut off: no reconnect before the server expires it");
    assert!(!w.enabled(Step::Expire(0)), "not before the client noticed the disconnect");
    step(&mut w, Step::Receive(0));
    assert_eq!(seen(&w, 0).last(), Some(&Input::State(SessionState::Disconnected)));
    step(&mut w, Step::Expire(0));
    assert!(!w.server.is_alive(old));
    assert!(w.server.tree().children("/lock").is_empty(), "the session's ephemerals are gone");
    // The watcher hears of it; the expired client does not, yet.
    assert_eq!(w.clients[1].inbound.back(), Some(&Input::Watch(ev(NodeDeleted, "/lock/x-0000000000"))));
    assert!(w.clients[0].inbound.is_empty());
    assert!(!seen(&w, 0).contains(&Input::State(SessionState::Expired)));
    step(&mut w, Step::Reconnect(0));
    step(&mut w, Step::Receive(0));
    assert_eq!(seen(&w, 0).last(), Some(&Input::State(SessionState::Expired)));
    let new = w.clients[0].session;
    assert_ne!(new, old, "the application made a new handle");
    assert!(w.server.is_alive(new));
    assert_eq!(w.clients[0].link, Link::Up);
}

#[test]
fn world_crash_then_expire_deletes_the_crashed_clients_ephemerals() {
    let create = Request::create("/lock/x-", EphemeralSequential);
    let watch = Request::exists("/lock/x-0000000000", true);
    let mut w = world(
        ClientBehaviour::Java,
        &[FaultKind::Crash],
        vec![vec![create, Request::get_children("/lock", true)], vec![watch]],
    );
    step(&mut w, Step::Acquire(0));
    settle(&mut w, 0);
    step(&mut w, Step::Acquire(1));
    settle(&mut w, 1);
    let session = w.clients[0].session;
    step(&mut w, Step::Fault(ClientFault::Crash, 0));
    assert!(w.server.watches_of(session) == (vec![], vec![]), "a dead process's connection watches nothing");
    assert!(w.server.is_alive(session), "the session lingers until the server expires it");
    assert_eq!(w.server.tree().ephemerals_of(session), strings(&["/lock/x-0000000000"]));
    for s in [Step::Receive(0), Step::Reconnect(0), Step::Acquire(0), Step::Fault(ClientFault::Crash, 0)] {
        assert!(!w.enabled(s), "a crashed client does not {s}");
    }
    step(&mut w, Step::Expire(0));
    assert!(!w.server.is_alive(session));
    assert!(w.server.tree().ephemerals_of(session).is_empty());
    assert!(w.clients[0].inbound.is_empty(), "nothing reaches a crashed client");
    assert_eq!(w.clients[1].inbound.back(), Some(&Input::Watch(ev(NodeDeleted, "/lock/x-0000000000"))));
    assert!(!w.enabled(Step::Expire(0)), "a session expires once");
}

/// A container is reaped only once it has had children and has none left, like any delete:
/// its watchers hear NodeDeleted, and a create under it then fails NoNode.
#[test]
fn container_reaped_only_after_it_had_children_and_has_none() {
    let mut zk = server();
    let a = open(&mut zk);
    create(&mut zk, a, "/lock", CreateMode::Persistent);
    assert!(!zk.reapable("/lock"), "never had a child");
    assert!(zk.reap_container("/lock").is_empty() && zk.tree().get("/lock").is_some());
    let child = create(&mut zk, a, "/lock/x-", CreateMode::EphemeralSequential);
    assert!(!zk.reapable("/lock"), "has a child");
    ok(&mut zk, a, Request::delete(&child));
    ok(&mut zk, a, Request::exists("/lock", true));
    assert!(zk.reapable("/lock"));
    let zxid = zk.zxid();
    let told = zk.reap_container("/lock");
    assert!(zk.tree().get("/lock").is_none());
    assert_eq!(zk.zxid(), zxid + 1, "a reap is a transaction");
    assert_eq!(told.len(), 1);
    assert_eq!(told[0].event.kind, EventType::NodeDeleted);
    assert_eq!(fails(&mut zk, a, Request::create("/lock/x-", CreateMode::EphemeralSequential)), ZkError::NoNode);
    assert!(!zk.reapable("/"), "the root is never reaped");
}

/// A timeline shows a getData reply's bytes: a recipe that finds its node by its data (or, as
/// the revocable lock, reads "unlock" in it) is judged on them.
#[test]
fn a_data_reply_is_described_with_its_bytes() {
    let mut zk = server();
    let s = open(&mut zk);
    let node = create_data(&mut zk, s, "/lock-n-", "unlock", EphemeralSequential);
    let data = Ok(ok(&mut zk, s, Request::GetData { path: node, watch: false }));
    let owner = format!("(owner {s})");
    assert_eq!(zklab_model::world::describe_result(&data), format!("data \"unlock\" {owner}"));
    let plain = create_data(&mut zk, s, "/plain", "", Persistent);
    let empty = Ok(ok(&mut zk, s, Request::GetData { path: plain, watch: false }));
    assert_eq!(zklab_model::world::describe_result(&empty), "data");
}
