//! Runs an op script against a live ZooKeeper server and answers in the model runner's format,
//! so a recording, the model and a server can be compared with one another.
//!
//! One client per session name, each connected through a [`Proxy`] of its own that `disconnect`
//! cuts and `reconnect` restores. Every watch-arming op keeps its own one-shot watcher; the
//! watchers one server notification fires become one event whose `via` names every such op, as
//! a kazoo client's recording shows. Watchers are looked at after every op, and a session's
//! `events` first makes a round trip on that session: the server sends a session its
//! notifications before the answer to any later request of it, so nothing sent before is missed.
//!
//! The `zookeeper-client` crate keeps its one-shot watchers over a cut connection and re-arms
//! them on reconnect with SetWatches, as the Java client does, but hands them no Disconnected
//! or SyncConnected. So the runner plays the library's part over a cut: it hands the state
//! events to the watchers it holds as both libraries do, and for kazoo it drops its watchers
//! (and with them the server's watches) before the cut, so that nothing is re-armed.

use super::fourlw;
use super::proxy::Proxy;
use super::sandbox::{self, ROOT};
use super::script::{
    bad, children_fields, fail, jute_maxbuffer, number, refused_while_disconnected, request, result_head, sleep_ms,
    stat_value, state_event, text, via_index, Handle,
};
use super::ScriptError;
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::net::ToSocketAddrs;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;
use zklab_model::{ClientBehaviour, CreateMode, Op, Request, Response, Stat, ZkError};
use zookeeper_client as zk;

/// How long a close or an expiry may take to be seen before the runner gives up.
const SETTLE: Duration = Duration::from_secs(5);

struct Session {
    /// `None` once closed: a closed kazoo handle refuses every request itself.
    client: Option<zk::Client>,
    id: i64,
    handle: Handle,
    timeout: Duration,
    proxy: Proxy,
    /// The `jute_maxbuffer` of the library it plays (the Java client's): the Rust client has no
    /// such limit, so the runner refuses longer replies itself.
    jute_maxbuffer: Option<u32>,
}

/// A watch one op armed, waiting for its notification.
struct Armed {
    session: String,
    via: String,
    fired: Pin<Box<dyn Future<Output = zk::WatchedEvent> + Send>>,
}

struct Live {
    server: String,
    client: ClientBehaviour,
    sessions: BTreeMap<String, Session>,
    names: HashMap<i64, String>,
    armed: Vec<Armed>,
    /// Events received and not yet read, per session name.
    inbox: BTreeMap<String, Vec<Value>>,
}

/// Runs `script` against the server at `server` (HOST:PORT) and returns
/// `{"case": name, "results": [...]}` as [`super::run_script`] does for the model. The tree is
/// cleaned first (see [`sandbox`]); every session the script leaves open is closed at the end.
pub fn run_script_live(script: &Value, server: &str) -> Result<Value, ScriptError> {
    run_script_live_as(script, server, super::DEFAULT_CLIENT)
}

/// [`run_script_live`] with `client`'s behaviour over a cut connection.
pub fn run_script_live_as(script: &Value, server: &str, client: ClientBehaviour) -> Result<Value, ScriptError> {
    // The model refuses exactly the malformed scripts this runner would: refuse them before
    // touching the server.
    super::run_script(script)?;
    let name = script["name"].as_str().unwrap_or_default().to_string();
    let ops = script["ops"].as_array().cloned().unwrap_or_default();
    check_address(server)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| ScriptError(format!("cannot start the client runtime: {e}")))?;
    runtime.block_on(async {
        let cleaner = connect(server, "", Duration::from_secs(4), None)
            .await
            .map_err(|e| ScriptError(format!("cannot reach ZooKeeper at {server}: {e}")))?;
        let prepared = sandbox::prepare(&cleaner).await;
        close(cleaner).await;
        prepared.map_err(|e| ScriptError(format!("cleaning the tree of {server}: {e}")))?;
        let mut live = Live {
            server: server.to_string(),
            client,
            sessions: BTreeMap::new(),
            names: HashMap::new(),
            armed: Vec::new(),
            inbox: BTreeMap::new(),
        };
        let mut results = Vec::with_capacity(ops.len());
        for (i, op) in ops.iter().enumerate() {
            match live.run(i, op).await {
                Ok(result) => results.push(result),
                Err(e) => {
                    live.finish().await;
                    return Err(e);
                }
            }
        }
        live.finish().await;
        Ok(json!({ "case": name, "results": results }))
    })
}

/// HOST:PORT and nothing else: the runner adds its own chroot.
fn check_address(server: &str) -> Result<(), ScriptError> {
    let bad = |why: String| ScriptError(format!("bad server address `{server}`: {why}"));
    if server.contains(['/', ',']) {
        return Err(bad("expected HOST:PORT".to_string()));
    }
    let mut addrs = server.to_socket_addrs().map_err(|e| bad(e.to_string()))?;
    addrs.next().map(|_| ()).ok_or_else(|| bad("it names no address".to_string()))
}

async fn connect(
    server: &str,
    root: &str,
    timeout: Duration,
    session: Option<zk::SessionInfo>,
) -> Result<zk::Client, zk::Error> {
    let mut connector = zk::Client::connector().with_session_timeout(timeout).with_fail_eagerly();
    if let Some(session) = session {
        connector = connector.with_session(session);
    }
    connector.connect(&format!("{server}{root}")).await
}

/// Connects a second client to `session` and closes it, on a thread of its own while this one
/// waits: the session's own client, whose connection the server drops on the takeover, would
/// otherwise reconnect at once and take the session back before it is closed. Blocking the
/// script's runtime thread is the point: that client cannot run until the session is gone.
fn take_over_and_close(server: &str, session: zk::SessionInfo, timeout: Duration) -> Result<(), String> {
    let server = server.to_string();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().map_err(|e| e.to_string())?;
        runtime.block_on(async {
            let thief = connect(&server, ROOT, timeout, Some(session)).await.map_err(|e| e.to_string())?;
            close(thief).await;
            Ok(())
        })
    })
    .join()
    .unwrap_or_else(|_| Err("the takeover thread panicked".to_string()))
}

/// Drops the last handle of a session (which closes it) and waits until the server answered.
async fn close(client: zk::Client) {
    let mut state = client.state_watcher();
    drop(client);
    reached(&mut state, zk::SessionState::is_terminated).await;
}

/// Whether the session reaches a state satisfying `wanted` within [`SETTLE`].
async fn reached(state: &mut zk::StateWatcher, wanted: impl Fn(zk::SessionState) -> bool) -> bool {
    let wait = async {
        let mut now = state.state();
        loop {
            if wanted(now) {
                return true;
            }
            if now.is_terminated() {
                return false;
            }
            now = state.changed().await;
        }
    };
    tokio::time::timeout(SETTLE, wait).await.unwrap_or(false)
}

/// The ZooKeeper name of an error, as kazoo's exceptions name them.
fn error_name(error: &zk::Error) -> String {
    use zk::Error::*;
    let name = match error {
        NoNode => "NoNode",
        NodeExists => "NodeExists",
        NotEmpty => "NotEmpty",
        BadVersion => "BadVersion",
        NoChildrenForEphemerals => "NoChildrenForEphemerals",
        SessionExpired => "SessionExpired",
        SessionMoved => "SessionMoved",
        ConnectionLoss => "ConnectionLoss",
        NoAuth => "NoAuth",
        InvalidAcl => "InvalidACL",
        BadArguments(_) => "BadArguments",
        ClientClosed => "ConnectionClosed",
        other => return format!("{other:?}").split(['(', ' ', '{']).next().unwrap_or("Unknown").to_string(),
    };
    name.to_string()
}

fn create_mode(mode: CreateMode) -> zk::CreateMode {
    match mode {
        CreateMode::Persistent => zk::CreateMode::Persistent,
        CreateMode::Ephemeral => zk::CreateMode::Ephemeral,
        CreateMode::PersistentSequential => zk::CreateMode::PersistentSequential,
        CreateMode::EphemeralSequential => zk::CreateMode::EphemeralSequential,
        CreateMode::Container => zk::CreateMode::Container,
    }
}

/// A path the server reports, as the script sees it under [`ROOT`]; `None` if outside.
fn unrooted(path: &str) -> Option<String> {
    match path.strip_prefix(ROOT)? {
        "" => Some("/".to_string()),
        rest if rest.starts_with('/') => Some(rest.to_string()),
        _ => None,
    }
}

impl Live {
    async fn run(&mut self, i: usize, op: &Value) -> Result<Value, ScriptError> {
        let kind = text(i, op, "op")?;
        let mut result = result_head(i, kind, op);
        match kind {
            "open" => self.open(i, op, &mut result).await?,
            "server_watches" => self.server_watches(&mut result)?,
            "server_ephemerals" => self.server_ephemerals(&mut result)?,
            "sleep" => {
                tokio::time::sleep(Duration::from_millis(sleep_ms(i, op)?)).await;
            }
            _ => self.session_op(i, kind, op, &mut result).await?,
        }
        self.collect();
        Ok(Value::Object(result))
    }

    async fn open(&mut self, i: usize, op: &Value, result: &mut Map<String, Value>) -> Result<(), ScriptError> {
        let name = text(i, op, "s")?.to_string();
        let asked = Duration::from_millis(number(i, op, "timeout_ms", 4000)?.max(1) as u64);
        let jute_maxbuffer = jute_maxbuffer(i, op)?;
        let proxy = Proxy::start(&self.server).await.map_err(|e| bad(i, format!("starting a proxy: {e}")))?;
        let client = connect(proxy.address(), ROOT, asked, None)
            .await
            .map_err(|e| bad(i, format!("opening session {name} on {}: {e}", self.server)))?;
        let id = client.session_id().0;
        let timeout = client.session_timeout();
        result.insert("negotiated_timeout_ms".into(), json!(timeout.as_millis() as u64));
        self.names.insert(id, name.clone());
        self.sessions
            .insert(name, Session { client: Some(client), id, handle: Handle::Open, timeout, proxy, jute_maxbuffer });
        Ok(())
    }

    async fn session_op(
        &mut self,
        i: usize,
        kind: &str,
        op: &Value,
        result: &mut Map<String, Value>,
    ) -> Result<(), ScriptError> {
        let name = text(i, op, "s")?.to_string();
        let handle = match self.sessions.get(&name) {
            Some(session) => session.handle,
            None => return Err(bad(i, format!("unknown session `{name}` (open it first)"))),
        };
        match (kind, handle) {
            ("events", _) => {
                self.flush(&name).await;
                self.collect();
                let events = self.inbox.remove(&name).unwrap_or_default();
                result.insert("events".into(), Value::Array(events));
            }
            ("state", _) => {
                result.insert("state".into(), json!(handle.state()));
            }
            ("disconnect", Handle::Open) => self.disconnect(i, &name).await?,
            ("reconnect", Handle::Disconnected) => self.reconnect(i, &name).await?,
            ("disconnect" | "reconnect", _) => {
                return Err(bad(i, format!("`{kind}` on session {name}, which is {}", handle.state())));
            }
            ("expire", Handle::Disconnected) => self.expire(i, &name)?,
            (_, Handle::Disconnected) => return Err(refused_while_disconnected(i, &name, kind)),
            (_, Handle::Closed) => fail(result, "ConnectionClosed"),
            // The libraries answer every request of an expired handle SessionExpired themselves
            // (the Rust client would refuse `delete /` first).
            (_, Handle::Expired) => fail(result, "SessionExpired"),
            ("close", Handle::Open) => self.close(&name).await,
            // A server expires only a session it no longer hears from: the connection goes
            // first (its watchers hear Disconnected), and the client learns of the expiry on
            // reconnecting, as the recorders do it.
            ("expire", Handle::Open) => {
                self.disconnect(i, &name).await?;
                self.expire(i, &name)?;
                self.reconnect(i, &name).await?;
            }
            _ => {
                let Some(request) = request(i, kind, op)? else {
                    return Err(bad(i, format!("unknown op `{kind}`")));
                };
                self.apply(i, kind, &name, request, op, result).await?;
            }
        }
        Ok(())
    }

    /// A round trip on the session: every notification the server sent it before is delivered.
    async fn flush(&self, name: &str) {
        if let Some(Session { client: Some(client), handle: Handle::Open, .. }) = self.sessions.get(name) {
            let _ = client.check_stat("/").await;
        }
    }

    /// Cuts the session's connection at its proxy and waits until both ends know it. Every
    /// watcher the library holds is handed Disconnected; kazoo then forgets its watchers, which
    /// the runner does by dropping them while still connected (the crate removes them from the
    /// server), so its reconnect re-arms nothing.
    async fn disconnect(&mut self, i: usize, name: &str) -> Result<(), ScriptError> {
        let event = state_event("Disconnected", self.held(name));
        self.inbox.entry(name.to_string()).or_default().extend(event);
        if self.client == ClientBehaviour::Kazoo {
            self.armed.retain(|a| a.session != name);
            self.flush(name).await;
        }
        let session = self.sessions.get_mut(name).expect("checked by the caller");
        let client = session.client.as_ref().expect("an open session has a client");
        let mut state = client.state_watcher();
        session.proxy.cut();
        session.handle = Handle::Disconnected;
        let id = session.id;
        if !reached(&mut state, |s| s == zk::SessionState::Disconnected).await {
            return Err(bad(i, format!("session {name} did not see its connection cut within {} s", SETTLE.as_secs())));
        }
        self.unconnected(id).await;
        Ok(())
    }

    /// Lets the session's client back in: a live session is handed SyncConnected by every
    /// watcher the library still holds, and hears what SetWatches catches up on; an expired one
    /// learns it expired.
    async fn reconnect(&mut self, i: usize, name: &str) -> Result<(), ScriptError> {
        let session = self.sessions.get_mut(name).expect("checked by the caller");
        let client = session.client.as_ref().expect("a disconnected session has a client");
        let mut state = client.state_watcher();
        session.proxy.restore();
        let back = |s: zk::SessionState| s == zk::SessionState::SyncConnected || s.is_terminated();
        if !reached(&mut state, back).await {
            return Err(bad(i, format!("session {name} did not reconnect within {} s", SETTLE.as_secs())));
        }
        let id = session.id;
        if state.state() != zk::SessionState::SyncConnected {
            session.handle = Handle::Expired;
            self.ended(name, id, "Expired").await;
            return Ok(());
        }
        session.handle = Handle::Open;
        let event = state_event("SyncConnected", self.held(name));
        self.inbox.entry(name.to_string()).or_default().extend(event);
        self.flush(name).await;
        Ok(())
    }

    /// The ops whose one-shot watchers the session holds, with their op index.
    fn held(&self, name: &str) -> Vec<(usize, String)> {
        self.armed.iter().filter(|a| a.session == name).map(|a| (via_index(&a.via), a.via.clone())).collect()
    }

    async fn close(&mut self, name: &str) {
        // A library that does not hear its own close's events (kazoo) stops listening first.
        if !self.client.hears_own_close() {
            self.collect();
            self.armed.retain(|a| a.session != name);
        }
        let session = self.sessions.get_mut(name).expect("an open session");
        let client = session.client.take().expect("an open session has a client");
        session.handle = Handle::Closed;
        let id = session.id;
        close(client).await;
        self.ended(name, id, "Closed").await;
    }

    /// Expires a disconnected session from outside: a second client takes it over with its id
    /// and password and closes it; the session's own client learns it on reconnecting.
    fn expire(&self, i: usize, name: &str) -> Result<(), ScriptError> {
        let session = &self.sessions[name];
        let client = session.client.as_ref().expect("a disconnected session has a client");
        take_over_and_close(&self.server, client.session().clone(), session.timeout)
            .map_err(|e| bad(i, format!("taking over session {name} to expire it: {e}")))
    }

    /// After a session ended: waits until the server dropped its connection (and with it the
    /// session's watches), keeps what it had received, forgets its watches, and tells it.
    async fn ended(&mut self, name: &str, id: i64, state: &str) {
        self.unconnected(id).await;
        self.collect();
        self.armed.retain(|a| a.session != name);
        self.inbox.entry(name.to_string()).or_default().push(json!({ "state": state }));
    }

    /// Waits (at most [`SETTLE`]) until the server has no connection of session `id`, and so
    /// none of its watches.
    async fn unconnected(&self, id: i64) {
        let deadline = tokio::time::Instant::now() + SETTLE;
        while tokio::time::Instant::now() < deadline {
            match fourlw::ask(&self.server, "cons") {
                Ok(cons) if fourlw::connected_sessions(&cons).contains(&id) => {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                _ => break,
            }
        }
    }

    async fn apply(
        &mut self,
        i: usize,
        kind: &str,
        name: &str,
        request: Request,
        op: &Value,
        result: &mut Map<String, Value>,
    ) -> Result<(), ScriptError> {
        let client = self.sessions[name].client.clone().expect("a session that is not closed has a client");
        let wants_stat = op["stat"].as_bool().unwrap_or(false);
        let head = result.clone();
        // What the reply was, as the model has it, for its length on the wire.
        let mut reply = None;
        let outcome: Result<Option<zk::OneshotWatcher>, zk::Error> = async {
            match request {
                Request::Create { path, data, mode } => {
                    let options = create_mode(mode).with_acls(zk::Acls::anyone_all());
                    let (stat, sequence) = client.create(&path, data.as_bytes(), &options).await?;
                    let created = if mode.is_sequential() { format!("{path}{sequence}") } else { path };
                    result.insert("created".into(), json!(created));
                    if wants_stat {
                        result.insert("stat".into(), self.stat(&stat));
                    }
                    Ok(None)
                }
                Request::Delete { path, version } => client.delete(&path, Some(version)).await.map(|()| None),
                Request::Exists { path, watch } => {
                    let (stat, watcher) = if watch {
                        let (stat, watcher) = client.check_and_watch_stat(&path).await?;
                        (stat, Some(watcher))
                    } else {
                        (client.check_stat(&path).await?, None)
                    };
                    result.insert("stat".into(), stat.map_or(Value::Null, |s| self.stat(&s)));
                    Ok(watcher)
                }
                Request::GetData { path, watch } => {
                    let (data, stat, watcher) = if watch {
                        let (data, stat, watcher) = client.get_and_watch_data(&path).await?;
                        (data, stat, Some(watcher))
                    } else {
                        let (data, stat) = client.get_data(&path).await?;
                        (data, stat, None)
                    };
                    let text = String::from_utf8_lossy(&data).to_string();
                    reply = Some(Response::Data { data: text, stat: Stat::default() });
                    result.insert("data".into(), json!(String::from_utf8_lossy(&data)));
                    result.insert("stat".into(), self.stat(&stat));
                    Ok(watcher)
                }
                Request::SetData { path, data, version } => {
                    let stat = client.set_data(&path, data.as_bytes(), Some(version)).await?;
                    result.insert("stat".into(), self.stat(&stat));
                    Ok(None)
                }
                Request::Sync { path } => client.sync(&path).await.map(|()| None),
                Request::Multi { ops } => {
                    let mut writer = client.new_multi_writer();
                    for op in &ops {
                        match op {
                            Op::Create { path, data, mode } => {
                                let options = create_mode(*mode).with_acls(zk::Acls::anyone_all());
                                writer.add_create(path, data.as_bytes(), &options)?
                            }
                            Op::Delete { path, version } => writer.add_delete(path, Some(*version))?,
                            Op::SetData { path, data, version } => {
                                writer.add_set_data(path, data.as_bytes(), Some(*version))?
                            }
                            Op::Check { path, version } => writer.add_check_version(path, *version)?,
                        }
                    }
                    let results: Vec<Value> = writer
                        .commit()
                        .await
                        .map_err(zk::Error::from)?
                        .into_iter()
                        .map(|r| match r {
                            zk::MultiWriteResult::Create { path, .. } => json!({ "created": path }),
                            zk::MultiWriteResult::SetData { stat } => json!({ "stat": self.stat(&stat) }),
                            _ => json!({}),
                        })
                        .collect();
                    result.insert("results".into(), json!(results));
                    Ok(None)
                }
                Request::GetChildren { path, watch } => {
                    let (children, stat, watcher) = if watch {
                        let (children, stat, watcher) = client.get_and_watch_children(&path).await?;
                        (children, stat, Some(watcher))
                    } else {
                        let (children, stat) = client.get_children(&path).await?;
                        (children, stat, None)
                    };
                    children_fields(&children, result);
                    if wants_stat {
                        result.insert("stat".into(), self.stat(&stat));
                    }
                    reply = Some(Response::Children { children: children.into(), stat: Stat::default() });
                    Ok(watcher)
                }
            }
        }
        .await;
        if outcome.is_ok() && reply.is_some_and(|r| self.client.refuses(self.sessions[name].jute_maxbuffer, &r)) {
            // The library refuses the reply for its length (the watch it set goes with the
            // watcher dropped here), its connection drops and it reconnects at once.
            *result = head;
            fail(result, &ZkError::ConnectionLoss.to_string());
            self.disconnect(i, name).await?;
            return self.reconnect(i, name).await;
        }
        match outcome {
            Err(e) => fail(result, &error_name(&e)),
            Ok(Some(watcher)) => self.armed.push(Armed {
                session: name.to_string(),
                via: format!("{i}:{kind}"),
                fired: Box::pin(watcher.changed()),
            }),
            Ok(None) => {}
        }
        Ok(())
    }

    /// Moves the notifications that have arrived into the sessions' inboxes, one event per
    /// session, type and path with every op whose watch it fired. A one-shot watch fires once
    /// and only an op of its session re-arms it, and watchers are looked at after every op, so
    /// two notifications for one session, type and path never meet here.
    fn collect(&mut self) {
        let mut cx = Context::from_waker(Waker::noop());
        let mut fired: Vec<(String, String, String, Vec<String>)> = Vec::new();
        self.armed.retain_mut(|armed| match armed.fired.as_mut().poll(&mut cx) {
            Poll::Pending => true,
            Poll::Ready(event) => {
                if event.event_type != zk::EventType::Session {
                    let kind = event.event_type.to_string();
                    match fired.iter_mut().find(|(s, t, p, _)| *s == armed.session && *t == kind && *p == event.path) {
                        Some((_, _, _, via)) => via.push(armed.via.clone()),
                        None => fired.push((armed.session.clone(), kind, event.path, vec![armed.via.clone()])),
                    }
                }
                false
            }
        });
        for (session, kind, path, via) in fired {
            // Watchers are armed in op order, so `via` already is.
            self.inbox.entry(session).or_default().push(json!({ "type": kind, "path": path, "via": via }));
        }
    }

    fn owner(&self, id: i64) -> Value {
        if id == 0 {
            json!(0)
        } else {
            json!(self.names.get(&id).cloned().unwrap_or_else(|| format!("{id:#x}")))
        }
    }

    fn stat(&self, stat: &zk::Stat) -> Value {
        let owner = self.owner(stat.ephemeral_owner);
        stat_value(stat.version, stat.cversion, stat.aversion, stat.data_length, stat.num_children, owner)
    }

    /// Per-session paths from a four-letter word's answer, named and under [`ROOT`].
    fn by_session(&self, raw: BTreeMap<i64, Vec<String>>) -> Map<String, Value> {
        let mut out = Map::new();
        for (id, paths) in raw {
            let mut paths: Vec<String> = paths.iter().filter_map(|p| unrooted(p)).collect();
            if paths.is_empty() {
                continue;
            }
            paths.sort();
            let name = self.names.get(&id).cloned().unwrap_or_else(|| format!("{id:#x}"));
            out.insert(name, json!(paths));
        }
        out
    }

    fn server_watches(&mut self, result: &mut Map<String, Value>) -> Result<(), ScriptError> {
        let wchc = fourlw::ask(&self.server, "wchc").map_err(ScriptError)?;
        let mntr = fourlw::ask(&self.server, "mntr").map_err(ScriptError)?;
        let total = fourlw::watch_count(&mntr)
            .ok_or_else(|| ScriptError(format!("{}: `mntr` gave no zk_watch_count", self.server)))?;
        result.insert("data_watches".into(), Value::Object(self.by_session(fourlw::data_watches(&wchc))));
        result.insert("total_watches".into(), json!(total));
        Ok(())
    }

    fn server_ephemerals(&mut self, result: &mut Map<String, Value>) -> Result<(), ScriptError> {
        let dump = fourlw::ask(&self.server, "dump").map_err(ScriptError)?;
        result.insert("ephemerals".into(), Value::Object(self.by_session(fourlw::ephemerals(&dump))));
        Ok(())
    }

    /// Closes every session still open, so the next script starts with none.
    async fn finish(&mut self) {
        self.armed.clear();
        for session in self.sessions.values_mut() {
            session.proxy.restore();
            if let Some(client) = session.client.take() {
                close(client).await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_paths_are_read_under_the_sandbox_root() {
        assert_eq!(unrooted(&format!("{ROOT}/lock/x-1")), Some("/lock/x-1".to_string()));
        assert_eq!(unrooted(ROOT), Some("/".to_string()));
        assert_eq!(unrooted(&format!("{ROOT}x/y")), None);
        assert_eq!(unrooted("/elsewhere"), None);
    }

    #[test]
    fn addresses_must_be_host_and_port() {
        assert!(check_address("127.0.0.1:2181").is_ok());
        assert!(check_address("127.0.0.1").is_err());
        assert!(check_address("127.0.0.1:2181/chroot").is_err());
        assert!(check_address("a:1,b:2").is_err());
        assert!(check_address("127.0.0.1:99999").is_err());
    }

    #[test]
    fn errors_take_zookeepers_names() {
        assert_eq!(error_name(&zk::Error::NoNode), "NoNode");
        assert_eq!(error_name(&zk::Error::ClientClosed), "ConnectionClosed");
        assert_eq!(error_name(&zk::Error::Timeout), "Timeout");
    }
}
