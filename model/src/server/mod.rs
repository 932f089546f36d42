//! The ZooKeeper server: a pure function of requests. `apply(session, request)` returns the
//! reply and the watch notifications it triggers; close and expiry are single atomic steps.

use crate::cache::memo::Memoized;
use crate::path;
use crate::request::{Op, OpResult};
use crate::tree::DataTree;
use crate::ChildrenOrder;
use crate::{EventType, Request, Response, SessionId, Stat, WatchedEvent, ZkError, ZkResult};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ServerConfig {
    /// The server's tick; by default session timeouts are clamped to [2, 20] ticks.
    pub tick_ms: u32,
    pub children_order: ChildrenOrder,
    /// How many past versions of the tree a lagging follower can serve (0: reads never lag).
    pub lag_window: u8,
    /// ZooKeeper's `minSessionTimeout` (unset: 2 ticks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_session_timeout_ms: Option<u32>,
    /// ZooKeeper's `maxSessionTimeout` (unset: 20 ticks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_session_timeout_ms: Option<u32>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            tick_ms: 100,
            children_order: ChildrenOrder::default(),
            lag_window: 0,
            min_session_timeout_ms: None,
            max_session_timeout_ms: None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum SessionStatus {
    Open,
    Closed,
    Expired,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SessionInfo {
    pub timeout_ms: u32,
    pub status: SessionStatus,
    /// The newest zxid this session has been shown; no read may show it anything older. Kept
    /// only where reads can lag (`ServerConfig::lag_window`); 0 otherwise.
    pub last_zxid: i64,
    /// `Some(z)`: attached to a follower that has applied only up to zxid `z`.
    pub view: Option<i64>,
}

/// A watch notification addressed to one session.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Notification {
    pub session: SessionId,
    pub event: WatchedEvent,
}

/// What one request did: its result, the zxid in the reply header, and the notifications.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Applied {
    pub result: ZkResult,
    pub zxid: i64,
    pub notifications: Vec<Notification>,
}

/// Which sessions watch each path.
pub type WatchTable = Memoized<BTreeMap<String, BTreeSet<SessionId>>>;

/// Every session the server knows, live or not.
pub type Sessions = Memoized<BTreeMap<SessionId, SessionInfo>>;

/// ZooKeeper's server as a recipe can observe it. Its fields are the model crate's alone: the
/// checker's reductions (`crate::reduce::server`) rename and rank them in place; everything
/// else reads and changes them through the methods here.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Server {
    pub(crate) config: ServerConfig,
    /// Shared between the states a checker keeps until a write changes it (most steps only
    /// read), and with the history a lagging follower serves.
    pub(crate) tree: Arc<DataTree>,
    pub(crate) zxid: i64,
    pub(crate) next_session: u32,
    /// Shared between states like the tree: most steps change no session and no watch.
    pub(crate) sessions: Arc<Sessions>,
    /// Watches set by getData and exists (the server keeps them in one table).
    pub(crate) data_watches: Arc<WatchTable>,
    pub(crate) child_watches: Arc<WatchTable>,
    /// Past trees, newest last, for lagging reads.
    pub(crate) history: VecDeque<(i64, Arc<DataTree>)>,
}

impl Server {
    pub fn new(config: ServerConfig) -> Self {
        Server {
            config,
            tree: Arc::default(),
            zxid: 0,
            next_session: 1,
            sessions: Arc::default(),
            data_watches: Arc::default(),
            child_watches: Arc::default(),
            history: VecDeque::new(),
        }
    }

    pub fn config(&self) -> &ServerConfig {
        &self.config
    }

    pub fn tree(&self) -> &DataTree {
        &self.tree
    }
    pub fn zxid(&self) -> i64 {
        self.zxid
    }
    pub fn session(&self, id: SessionId) -> Option<&SessionInfo> {
        self.sessions.get(&id)
    }
    pub fn is_alive(&self, id: SessionId) -> bool {
        self.session(id).is_some_and(|s| s.status == SessionStatus::Open)
    }

    /// The timeout a session gets for the one it asks: clamped to the server's [min, max].
    pub fn negotiate_timeout(&self, requested_timeout_ms: u32) -> u32 {
        let tick = self.config.tick_ms;
        let min = self.config.min_session_timeout_ms.unwrap_or(tick.saturating_mul(2));
        let max = self.config.max_session_timeout_ms.unwrap_or(tick.saturating_mul(20)).max(min);
        requested_timeout_ms.clamp(min, max)
    }

    /// A client reconnecting to `session` asks for a timeout again, and gets it negotiated as at
    /// the session's start (ZooKeeper's `revalidateSession`). Returns the new timeout.
    pub fn renegotiate(&mut self, session: SessionId, requested_timeout_ms: u32) -> u32 {
        let timeout_ms = self.negotiate_timeout(requested_timeout_ms);
        if let Some(info) = Arc::make_mut(&mut self.sessions).get_mut(&session) {
            info.timeout_ms = timeout_ms;
        }
        timeout_ms
    }

    /// Opens a session; the timeout is clamped to the server's [min, max] as it negotiates it.
    pub fn open_session(&mut self, requested_timeout_ms: u32) -> (SessionId, u32) {
        let timeout_ms = self.negotiate_timeout(requested_timeout_ms);
        let id = SessionId(self.next_session);
        self.next_session += 1;
        // Only lagging reads need what a session has seen (see `apply`): without them, when a
        // session was opened would tell apart states that no recipe can tell apart.
        let last_zxid = if self.config.lag_window > 0 { self.zxid } else { 0 };
        Arc::make_mut(&mut self.sessions)
            .insert(id, SessionInfo { timeout_ms, status: SessionStatus::Open, last_zxid, view: None });
        (id, timeout_ms)
    }

    /// Starts the sequence counter of an existing node at `next` (to put a scenario near the
    /// 32-bit wrap without two billion creates).
    pub fn set_sequence_counter(&mut self, parent: &str, next: i32) -> Result<(), ZkError> {
        Arc::make_mut(&mut self.tree).get_mut(parent).ok_or(ZkError::NoNode)?.next_seq = next;
        Ok(())
    }

    /// Applies one request from `session`.
    pub fn apply(&mut self, session: SessionId, request: &Request) -> Applied {
        let mut notifications = Vec::new();
        let result = self.execute(session, request, &mut notifications);
        // A lagging follower answers every read, a failed one too, from where it has got to. A
        // write goes through the leader and is answered once the follower has applied it, so the
        // follower has caught up and the session reads its own writes; a sync is answered once
        // the follower has caught up with the leader, so the same holds after it.
        let zxid = match self.sessions.get(&session).and_then(|s| s.view) {
            Some(view) if !request.via_leader() => view,
            _ => self.zxid,
        };
        if request.via_leader() {
            self.catch_up(session);
        }
        // Only lagging reads need what each session has seen; tracking it otherwise would tell
        // apart states that no recipe can tell apart.
        if self.config.lag_window > 0 {
            if let Some(info) = Arc::make_mut(&mut self.sessions).get_mut(&session) {
                info.last_zxid = info.last_zxid.max(zxid);
            }
        }
        Applied { result, zxid, notifications }
    }

    /// Which op of a multi from `session` fails it, and its code: `None` if the multi succeeds.
    /// The model's reply is the code alone, as a recipe sees it; ZooKeeper's wire reply also
    /// says which op failed, so a server speaking the wire asks here. The first op whose prefix
    /// of the multi fails is the one: a multi fails with its first failing op's code.
    pub fn failing_op(&self, session: SessionId, ops: &[Op]) -> Option<(usize, ZkError)> {
        (1..=ops.len()).find_map(|n| {
            let prefix = Request::Multi { ops: ops[..n].to_vec() };
            self.clone().apply(session, &prefix).result.err().map(|error| (n - 1, error))
        })
    }

    fn execute(&mut self, session: SessionId, request: &Request, out: &mut Vec<Notification>) -> ZkResult {
        match request {
            Request::Multi { ops } => {
                for op in ops {
                    let sequential = matches!(op, Op::Create { mode, .. } if mode.is_sequential());
                    path::validate(op.path(), sequential).map_err(|_| ZkError::BadArguments)?;
                }
            }
            _ => {
                let sequential = matches!(request, Request::Create { mode, .. } if mode.is_sequential());
                path::validate(request.path(), sequential).map_err(|_| ZkError::BadArguments)?;
            }
        }
        // An expired handle fails every request it sends (the Java client sends even
        // `delete /` to the server, so that too fails SessionExpired: case 43).
        if !self.is_alive(session) {
            return Err(ZkError::SessionExpired);
        }
        if matches!(request, Request::Delete { path, .. } if path == "/") {
            return Err(ZkError::BadArguments);
        }
        match request {
            Request::Create { path, data, mode } => {
                self.create(session, path, data, *mode, None, out).map(|(path, stat)| Response::Created { path, stat })
            }
            Request::Delete { path, version } => self.delete(path, *version, None, out).map(|()| Response::Deleted),
            Request::SetData { path, data, version } => {
                self.set_data(path, data, *version, None, out).map(Response::DataSet)
            }
            // Sent through the leader: `apply` catches the session's follower up.
            Request::Sync { path } => Ok(Response::Synced { path: path.clone() }),
            Request::Multi { ops } => self.multi(session, ops, out),
            Request::Exists { path, watch } => Ok(self.read(session, path, *watch, Read::Exists, out)),
            Request::GetData { path, watch } => self.read_existing(session, path, *watch, Read::Data, out),
            Request::GetChildren { path, watch } => self.read_existing(session, path, *watch, Read::Children, out),
        }
    }

    /// A multi: its ops applied in order to a copy of the server under one zxid, kept only if
    /// every op succeeds. A failed multi changes nothing and fires nothing, like a failed op.
    fn multi(&mut self, session: SessionId, ops: &[Op], out: &mut Vec<Notification>) -> ZkResult {
        if ops.iter().any(|op| matches!(op, Op::Delete { path, .. } if path == "/")) {
            return Err(ZkError::BadArguments);
        }
        let mut trial = self.clone();
        let mut fired = Vec::new();
        let zxid = trial.next_zxid();
        let mut results = Vec::with_capacity(ops.len());
        for op in ops {
            let z = Some(zxid);
            results.push(match op {
                Op::Create { path, data, mode } => trial
                    .create(session, path, data, *mode, z, &mut fired)
                    .map(|(path, _)| OpResult::Created { path })?,
                Op::Delete { path, version } => {
                    trial.delete(path, *version, z, &mut fired).map(|()| OpResult::Deleted)?
                }
                Op::SetData { path, data, version } => {
                    trial.set_data(path, data, *version, z, &mut fired).map(OpResult::DataSet)?
                }
                Op::Check { path, version } => {
                    let node = trial.tree.get(path).ok_or(ZkError::NoNode)?;
                    if *version != -1 && *version != node.version {
                        return Err(ZkError::BadVersion);
                    }
                    OpResult::Checked
                }
            });
        }
        *self = trial;
        out.extend(fired);
        Ok(Response::Multi(results))
    }

    /// The zxid a write takes: a multi's own for each of its ops, else the next.
    fn zxid_for(&mut self, fixed: Option<i64>) -> i64 {
        fixed.unwrap_or_else(|| self.next_zxid())
    }

    fn create(
        &mut self,
        session: SessionId,
        path: &str,
        data: &str,
        mode: crate::CreateMode,
        fixed_zxid: Option<i64>,
        out: &mut Vec<Notification>,
    ) -> Result<(String, Stat), ZkError> {
        let (sequential, ephemeral) = (mode.is_sequential(), mode.is_ephemeral());
        let parent_path = path::parent(path);
        let parent = self.tree.get(parent_path).ok_or(ZkError::NoNode)?;
        let actual =
            if sequential { format!("{path}{}", path::sequence_suffix(parent.next_seq)) } else { path.to_string() };
        if actual == "/" || self.tree.get(&actual).is_some() {
            return Err(ZkError::NodeExists);
        }
        if parent.owner.is_some() {
            return Err(ZkError::NoChildrenForEphemerals);
        }
        let parent_path = parent_path.to_string();
        let zxid = self.zxid_for(fixed_zxid);
        Arc::make_mut(&mut self.tree).insert(actual.clone(), data.to_string(), zxid, ephemeral.then_some(session), 0);
        trigger(&mut self.data_watches, &actual, EventType::NodeCreated, &BTreeSet::new(), out);
        trigger(&mut self.child_watches, &parent_path, EventType::NodeChildrenChanged, &BTreeSet::new(), out);
        let stat = self.tree.get(&actual).map(|n| n.stat()).expect("just inserted");
        Ok((actual, stat))
    }

    fn delete(
        &mut self,
        path: &str,
        version: i32,
        fixed_zxid: Option<i64>,
        out: &mut Vec<Notification>,
    ) -> Result<(), ZkError> {
        let node = self.tree.get(path).ok_or(ZkError::NoNode)?;
        if version != -1 && version != node.version {
            return Err(ZkError::BadVersion);
        }
        if node.num_children > 0 {
            return Err(ZkError::NotEmpty);
        }
        let zxid = self.zxid_for(fixed_zxid);
        self.remove_node(path, zxid, out);
        Ok(())
    }

    fn remove_node(&mut self, path: &str, zxid: i64, out: &mut Vec<Notification>) {
        Arc::make_mut(&mut self.tree).remove(path, zxid);
        let told = trigger(&mut self.data_watches, path, EventType::NodeDeleted, &BTreeSet::new(), out);
        trigger(&mut self.child_watches, path, EventType::NodeDeleted, &told, out);
        trigger(&mut self.child_watches, path::parent(path), EventType::NodeChildrenChanged, &BTreeSet::new(), out);
    }

    fn set_data(
        &mut self,
        path: &str,
        data: &str,
        version: i32,
        fixed_zxid: Option<i64>,
        out: &mut Vec<Notification>,
    ) -> Result<Stat, ZkError> {
        let node = self.tree.get(path).ok_or(ZkError::NoNode)?;
        if version != -1 && version != node.version {
            return Err(ZkError::BadVersion);
        }
        let zxid = self.zxid_for(fixed_zxid);
        let node = Arc::make_mut(&mut self.tree).get_mut(path).expect("checked above");
        node.data = data.to_string();
        node.version += 1;
        node.mzxid = zxid;
        let stat = node.stat();
        trigger(&mut self.data_watches, path, EventType::NodeDataChanged, &BTreeSet::new(), out);
        Ok(stat)
    }

    /// getData and getChildren on a missing node fail NoNode and arm nothing.
    fn read_existing(
        &mut self,
        session: SessionId,
        path: &str,
        watch: bool,
        kind: Read,
        out: &mut Vec<Notification>,
    ) -> ZkResult {
        if self.view_tree(session).get(path).is_none() {
            return Err(ZkError::NoNode);
        }
        Ok(self.read(session, path, watch, kind, out))
    }

    fn read(
        &mut self,
        session: SessionId,
        path: &str,
        watch: bool,
        kind: Read,
        out: &mut Vec<Notification>,
    ) -> Response {
        let tree = self.view_tree(session);
        let node = tree.get(path);
        let response = match kind {
            Read::Exists => Response::Exists(node.map(|n| n.stat())),
            Read::Data => {
                let node = node.expect("checked by read_existing");
                Response::Data { data: node.data.clone(), stat: node.stat() }
            }
            Read::Children => {
                let stat = node.expect("checked by read_existing").stat();
                Response::Children { children: tree.listing(path, self.config.children_order), stat }
            }
        };
        if watch {
            let armed = match (kind, node.is_some()) {
                (Read::Children, _) => WatchKind::Child,
                (_, true) => WatchKind::Data,
                (_, false) => WatchKind::Exist,
            };
            match self.sessions.get(&session).and_then(|s| s.view) {
                // A follower registers the watch on its own stale tree and fires it as soon as it
                // applies the newer transactions: the same rule as a reconnect's SetWatches.
                Some(view) => {
                    for event in self.set_watches(session, view, &[(path.to_string(), armed)]) {
                        out.push(Notification { session, event });
                    }
                }
                None => {
                    let table =
                        if armed == WatchKind::Child { &mut self.child_watches } else { &mut self.data_watches };
                    Arc::make_mut(table).entry(path.to_string()).or_default().insert(session);
                }
            }
        }
        response
    }

    fn view_tree(&self, session: SessionId) -> &DataTree {
        match self.sessions.get(&session).and_then(|s| s.view) {
            Some(view) => self.history.iter().find(|(z, _)| *z == view).map(|(_, t)| t).unwrap_or(&self.tree),
            None => &self.tree,
        }
    }

    fn next_zxid(&mut self) -> i64 {
        if self.config.lag_window > 0 {
            self.history.push_back((self.zxid, self.tree.clone()));
            while self.history.len() > usize::from(self.config.lag_window) {
                self.history.pop_front();
            }
        }
        self.zxid += 1;
        self.zxid
    }

    /// Attaches `session` to a follower that lags as far behind as the lag window and the
    /// session's own history allow: never older than what the session has already seen.
    /// Returns the zxid its reads now see.
    pub fn attach_lagging(&mut self, session: SessionId) -> Option<i64> {
        let view = self.lag_view(session)?;
        Arc::make_mut(&mut self.sessions).get_mut(&session)?.view = Some(view);
        Some(view)
    }

    /// The zxid a lagging follower would show `session`: the oldest state in the lag window that
    /// is not older than what the session has seen. `None`: no state in the window qualifies.
    pub fn lag_view(&self, session: SessionId) -> Option<i64> {
        let info = self.sessions.get(&session)?;
        self.history.iter().map(|(z, _)| *z).find(|z| *z >= info.last_zxid)
    }

    /// `session` belongs to a new client handle, which has seen nothing yet: a follower may show
    /// it any state in the lag window (the old handle's zxid died with it).
    pub fn forget_seen(&mut self, session: SessionId) {
        if let Some(info) = Arc::make_mut(&mut self.sessions).get_mut(&session) {
            info.last_zxid = 0;
        }
    }

    /// How many past states a lagging follower could show.
    pub fn history_len(&self) -> usize {
        self.history.len()
    }

    /// The follower has caught up with the leader: reads by `session` see the latest tree again.
    pub fn catch_up(&mut self, session: SessionId) {
        // Every write catches up: only a lagging session is written to.
        if self.sessions.get(&session).is_some_and(|info| info.view.is_some()) {
            if let Some(info) = Arc::make_mut(&mut self.sessions).get_mut(&session) {
                info.view = None;
            }
        }
    }

    /// Closes a session: one atomic step that deletes all its ephemerals and drops its watches.
    /// Its connection is still open while the server applies the close, so the session's own
    /// watches on what the close deletes fire to it first (measured on ZooKeeper 3.8.0).
    pub fn close_session(&mut self, session: SessionId) -> Vec<Notification> {
        self.end_session(session, SessionStatus::Closed)
    }

    /// Expires a session (the server's decision; the client learns of it later).
    pub fn expire_session(&mut self, session: SessionId) -> Vec<Notification> {
        self.end_session(session, SessionStatus::Expired)
    }

    fn end_session(&mut self, session: SessionId, status: SessionStatus) -> Vec<Notification> {
        let mut out = Vec::new();
        if !self.is_alive(session) {
            return out;
        }
        // The server expires a session it has not heard from: its connection, and with it every
        // watch of the session, is gone before the ephemerals are.
        if status == SessionStatus::Expired {
            self.drop_watches(session);
        }
        let zxid = self.next_zxid();
        for path in self.tree.ephemerals_of(session) {
            self.remove_node(&path, zxid, &mut out);
        }
        self.drop_watches(session);
        let info = Arc::make_mut(&mut self.sessions).get_mut(&session).expect("alive above");
        info.status = status;
        info.view = None;
        out
    }

    /// Forgets every watch of `session`, as the server does when its connection goes away.
    pub fn drop_watches(&mut self, session: SessionId) {
        for table in [&mut self.data_watches, &mut self.child_watches] {
            if table.values().any(|sessions| sessions.contains(&session)) {
                Arc::make_mut(table).retain(|_, sessions| {
                    sessions.remove(&session);
                    !sessions.is_empty()
                });
            }
        }
    }

    /// Java's SetWatches on reconnect: re-arms each watch unless what it waits for happened
    /// after `relative_zxid`, in which case the catch-up event is returned instead.
    pub fn set_watches(
        &mut self,
        session: SessionId,
        relative_zxid: i64,
        watches: &[(String, WatchKind)],
    ) -> Vec<WatchedEvent> {
        let mut events = Vec::new();
        if !self.is_alive(session) {
            // An ended session cannot reconnect: it re-arms nothing and hears nothing.
            return events;
        }
        for (path, kind) in watches {
            let node = self.tree.get(path);
            let fired = match (kind, node) {
                (WatchKind::Data, None) | (WatchKind::Child, None) => Some(EventType::NodeDeleted),
                (WatchKind::Data, Some(n)) if n.mzxid > relative_zxid => Some(EventType::NodeDataChanged),
                (WatchKind::Exist, Some(_)) => Some(EventType::NodeCreated),
                (WatchKind::Child, Some(n)) if n.pzxid > relative_zxid => Some(EventType::NodeChildrenChanged),
                _ => None,
            };
            match fired {
                Some(kind) => events.push(WatchedEvent { kind, path: path.clone() }),
                None => {
                    let table =
                        if *kind == WatchKind::Child { &mut self.child_watches } else { &mut self.data_watches };
                    Arc::make_mut(table).entry(path.clone()).or_default().insert(session);
                }
            }
        }
        events
    }

    /// The oldest zxid that re-arming watches (`set_watches`) cannot tell apart from `zxid` on
    /// this tree: the newest mzxid or pzxid in the tree at or below it. SetWatches only asks
    /// whether a node changed after the client's zxid, and every later change gets a newer zxid,
    /// so a world can keep this instead of the exact zxid and merge states no client can tell
    /// apart.
    pub fn watch_equivalent_zxid(&self, zxid: i64) -> i64 {
        self.tree.iter().flat_map(|(_, n)| [n.mzxid, n.pzxid]).filter(|z| *z <= zxid).max().unwrap_or(0)
    }

    /// Whether the container manager would delete `path`: it has had children and has none.
    pub fn reapable(&self, path: &str) -> bool {
        path != "/" && self.tree.get(path).is_some_and(|n| n.cversion > 0 && n.num_children == 0)
    }

    /// The container manager deletes the empty container `path` (a delete like any other, with
    /// its notifications); nothing happens if it is not reapable.
    pub fn reap_container(&mut self, path: &str) -> Vec<Notification> {
        let mut out = Vec::new();
        if self.reapable(path) {
            let zxid = self.next_zxid();
            self.remove_node(path, zxid, &mut out);
        }
        out
    }

    /// The child of `parent` created first (the smallest czxid) that has no children of its
    /// own: in a lock, the node that has been in line longest, which an operator clearing a
    /// lock that looks stuck deletes.
    pub fn oldest_child(&self, parent: &str) -> Option<String> {
        self.tree
            .children(parent)
            .into_iter()
            .map(|name| path::join(parent, &name))
            .filter_map(|p| self.tree.get(&p).filter(|n| n.num_children == 0).map(|n| (n.czxid, p)))
            .min()
            .map(|(_, p)| p)
    }

    /// A delete of `path` by no session of the run's (an operator's): a delete like any other,
    /// with its notifications; nothing happens if the node is gone or has children.
    pub fn operator_delete(&mut self, path: &str) -> Vec<Notification> {
        let mut out = Vec::new();
        if path != "/" && self.tree.get(path).is_some_and(|n| n.num_children == 0) {
            let zxid = self.next_zxid();
            self.remove_node(path, zxid, &mut out);
        }
        out
    }

    /// Paths with a data or exist watch of `session`, and paths with its child watches.
    pub fn watches_of(&self, session: SessionId) -> (Vec<String>, Vec<String>) {
        let of = |t: &WatchTable| t.iter().filter(|(_, s)| s.contains(&session)).map(|(p, _)| p.clone()).collect();
        (of(&self.data_watches), of(&self.child_watches))
    }

    /// Every session with a data/exist watch on `path` (for tests and the checker's races).
    pub fn data_watchers(&self, path: &str) -> Vec<SessionId> {
        self.data_watches.get(path).map(|s| s.iter().copied().collect()).unwrap_or_default()
    }

    /// Sessions in id order with their status.
    pub fn sessions(&self) -> impl Iterator<Item = (&SessionId, &SessionInfo)> {
        self.sessions.iter()
    }

    pub fn stat(&self, path: &str) -> Option<Stat> {
        self.tree.get(path).map(|n| n.stat())
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Read {
    Exists,
    Data,
    Children,
}

/// What kind of watch a client holds, which decides how a reconnect re-arms it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum WatchKind {
    /// getData, or exists on a node that existed.
    Data,
    /// exists on a missing node: waits for NodeCreated.
    Exist,
    Child,
}

impl WatchKind {
    /// The watch a successful read arms, if it asked for one: exists on a missing node waits
    /// for its creation, exists on a present node and getData watch its data.
    pub fn armed_by(request: &Request, response: &Response) -> Option<WatchKind> {
        match (request, response) {
            (Request::GetChildren { watch: true, .. }, _) => Some(WatchKind::Child),
            (Request::GetData { watch: true, .. }, _) => Some(WatchKind::Data),
            (Request::Exists { watch: true, .. }, Response::Exists(Some(_))) => Some(WatchKind::Data),
            (Request::Exists { watch: true, .. }, Response::Exists(None)) => Some(WatchKind::Exist),
            _ => None,
        }
    }

    /// The kinds of watch on a path that an event on that path fires (and so removes).
    pub fn consumed_by(event: EventType) -> &'static [WatchKind] {
        match event {
            EventType::NodeCreated | EventType::NodeDataChanged => &[WatchKind::Data, WatchKind::Exist],
            EventType::NodeChildrenChanged => &[WatchKind::Child],
            EventType::NodeDeleted => &[WatchKind::Data, WatchKind::Exist, WatchKind::Child],
        }
    }
}

/// Fires and removes the one-shot watches on `path`, one notification per session; sessions in
/// `skip` were already told about this node by the same event.
fn trigger(
    table: &mut Arc<WatchTable>,
    path: &str,
    kind: EventType,
    skip: &BTreeSet<SessionId>,
    out: &mut Vec<Notification>,
) -> BTreeSet<SessionId> {
    if !table.contains_key(path) {
        return BTreeSet::new();
    }
    let sessions = Arc::make_mut(table).remove(path).unwrap_or_default();
    for session in &sessions {
        if !skip.contains(session) {
            out.push(Notification { session: *session, event: WatchedEvent { kind, path: path.to_string() } });
        }
    }
    sessions
}
