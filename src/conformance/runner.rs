//! Runs an op script against the model server, keeping the client-side bookkeeping a client
//! library keeps: sessions by name, the watches each holds (`ClientWatches`, which a reconnect
//! re-arms or forgets as its `ClientBehaviour` says), the events each session has received (and
//! which ops' watches they fired), and what a closed or expired handle answers.

use super::script::{
    bad, checked_kind, children_fields, fail, jute_maxbuffer, number, refused_while_disconnected, request, result_head,
    sleep_ms, stat_value, state_event, text, via_index, Handle,
};
use super::ScriptError;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use zklab_model::{
    ClientBehaviour, ClientWatches, Notification, OpResult, Request, Response, Server, ServerConfig, SessionId, Stat,
    WatchKind, ZkError,
};

/// The server the recordings were made against: tickTime 100 ms, session timeouts 200..20000 ms.
fn recorded_server() -> ServerConfig {
    ServerConfig {
        tick_ms: 100,
        min_session_timeout_ms: Some(200),
        max_session_timeout_ms: Some(20_000),
        ..ServerConfig::default()
    }
}

struct Session {
    id: SessionId,
    handle: Handle,
    /// The watches the library holds.
    watches: ClientWatches,
    /// The server's zxid when the connection was cut, which a Java reconnect's SetWatches
    /// compares against.
    since: i64,
    /// Its client's `jute_maxbuffer` (the Java client refuses longer replies).
    jute_maxbuffer: Option<u32>,
}

struct Runner {
    client: ClientBehaviour,
    server: Server,
    sessions: BTreeMap<String, Session>,
    names: BTreeMap<SessionId, String>,
    /// Events received and not yet read, per session name.
    inbox: BTreeMap<String, Vec<Value>>,
    /// The ops whose watches are armed, per (session, path, kind).
    armed: BTreeMap<(SessionId, String, WatchKind), Vec<String>>,
}

/// Runs `script` (an op script as JSON) with the client library whose recordings
/// conformance/expected holds ([`super::DEFAULT_CLIENT`]).
pub fn run_script(script: &Value) -> Result<Value, ScriptError> {
    run_script_as(script, super::DEFAULT_CLIENT)
}

/// Runs `script` with `client`'s behaviour over a cut connection and returns
/// `{"case": name, "results": [...]}`.
pub fn run_script_as(script: &Value, client: ClientBehaviour) -> Result<Value, ScriptError> {
    // A misspelt field (`opz`) would otherwise be ignored and the script run without it.
    let object = script.as_object().ok_or_else(|| ScriptError("a script is a JSON object".to_string()))?;
    if let Some(field) = object.keys().find(|k| !["name", "about", "ops"].contains(&k.as_str())) {
        return Err(ScriptError(format!("a script has no field `{field}` (it takes: name, about, ops)")));
    }
    let name = script["name"].as_str().ok_or_else(|| ScriptError("the script has no `name`".to_string()))?;
    let ops = script["ops"].as_array().ok_or_else(|| ScriptError("the script has no `ops` array".to_string()))?;
    let mut runner = Runner {
        client,
        server: Server::new(recorded_server()),
        sessions: BTreeMap::new(),
        names: BTreeMap::new(),
        inbox: BTreeMap::new(),
        armed: BTreeMap::new(),
    };
    let results = ops.iter().enumerate().map(|(i, op)| runner.run(i, op)).collect::<Result<Vec<_>, _>>()?;
    Ok(json!({ "case": name, "results": results }))
}

impl Runner {
    fn run(&mut self, i: usize, op: &Value) -> Result<Value, ScriptError> {
        let kind = checked_kind(i, op)?;
        let mut result = result_head(i, kind, op);
        match kind {
            "open" => self.open(i, op, &mut result)?,
            "server_watches" => self.server_watches(&mut result),
            "server_ephemerals" => self.server_ephemerals(&mut result),
            "sleep" => {
                sleep_ms(i, op)?;
            }
            "close" | "expire" | "events" | "state" | "disconnect" | "reconnect" | "create" | "delete" | "exists"
            | "get_data" | "set_data" | "get_children" | "sync" | "multi" => {
                self.session_op(i, kind, op, &mut result)?
            }
            other => return Err(bad(i, format!("unknown op `{other}`"))),
        }
        Ok(Value::Object(result))
    }

    fn open(&mut self, i: usize, op: &Value, result: &mut Map<String, Value>) -> Result<(), ScriptError> {
        let name = text(i, op, "s")?.to_string();
        if self.sessions.contains_key(&name) {
            return Err(bad(i, format!("session `{name}` is already open")));
        }
        let timeout = number(i, op, "timeout_ms", 4000)?;
        let timeout = u32::try_from(timeout).map_err(|_| bad(i, format!("bad timeout_ms {timeout}")))?;
        let jute_maxbuffer = jute_maxbuffer(i, op)?;
        let (id, negotiated) = self.server.open_session(timeout);
        let session = Session { id, handle: Handle::Open, watches: ClientWatches::default(), since: 0, jute_maxbuffer };
        self.sessions.insert(name.clone(), session);
        self.names.insert(id, name);
        result.insert("negotiated_timeout_ms".into(), json!(negotiated));
        Ok(())
    }

    fn session_op(
        &mut self,
        i: usize,
        kind: &str,
        op: &Value,
        result: &mut Map<String, Value>,
    ) -> Result<(), ScriptError> {
        let name = text(i, op, "s")?.to_string();
        let Some((id, handle)) = self.sessions.get(&name).map(|s| (s.id, s.handle)) else {
            return Err(bad(i, format!("unknown session `{name}` (open it first)")));
        };
        let request = request(i, kind, op)?;
        match (kind, handle) {
            ("events", _) => {
                let events = self.inbox.remove(&name).unwrap_or_default();
                result.insert("events".into(), Value::Array(events));
            }
            ("state", _) => {
                result.insert("state".into(), json!(handle.state()));
            }
            ("disconnect", Handle::Open) => self.disconnect(&name),
            ("reconnect", Handle::Disconnected) => self.reconnect(&name),
            ("disconnect" | "reconnect", _) => {
                return Err(bad(i, format!("`{kind}` on session {name}, which is {}", handle.state())));
            }
            // The server expires a session whose connection is cut; it learns so on reconnecting.
            ("expire", Handle::Disconnected) => {
                let notifications = self.server.expire_session(id);
                self.deliver(notifications);
            }
            (_, Handle::Disconnected) => return Err(refused_while_disconnected(i, &name, kind)),
            (_, Handle::Closed) => fail(result, "ConnectionClosed"),
            ("close" | "expire", Handle::Expired) => fail(result, &ZkError::SessionExpired.to_string()),
            // A server expires only a session it no longer hears from: the connection goes
            // first (every watcher the library holds hears Disconnected), the expiry drops the
            // session's watches and its ephemerals, and the client learns it on reconnecting.
            ("expire", Handle::Open) => {
                self.disconnect(&name);
                let notifications = self.server.expire_session(id);
                self.deliver(notifications);
                self.reconnect(&name);
            }
            ("close", Handle::Open) => {
                // A close fires the session's own watches on what it deletes (the Java client
                // hands those out, kazoo does not); whatever is left is gone with the session.
                let mut notifications = self.server.close_session(id);
                if !self.client.hears_own_close() {
                    notifications.retain(|n| n.session != id);
                }
                self.deliver(notifications);
                self.ended(&name, Handle::Closed);
            }
            // An expired handle still makes its requests: the server (the model's client-side
            // checks included) refuses them.
            (_, Handle::Open | Handle::Expired) => {
                let request = request.expect("every other op is a request");
                let outcome = self.server.apply(id, &request);
                self.deliver(outcome.notifications);
                if outcome.result.as_ref().is_ok_and(|r| self.client.refuses(self.sessions[&name].jute_maxbuffer, r)) {
                    // The client refuses the reply for its length: the request failed as far as
                    // it knows, its connection drops, and it reconnects at once.
                    fail(result, &ZkError::ConnectionLoss.to_string());
                    self.disconnect(&name);
                    self.reconnect(&name);
                    return Ok(());
                }
                if let Some(session) = self.sessions.get_mut(&name) {
                    session.watches.on_reply(&request, &outcome.result);
                }
                match outcome.result {
                    Err(e) => fail(result, &e.to_string()),
                    Ok(response) => {
                        self.arm(i, kind, id, &request, &response);
                        self.describe(op, response, result);
                    }
                }
            }
        }
        Ok(())
    }

    /// The session's connection is cut: every watcher the library holds is handed Disconnected,
    /// and the library keeps or forgets its watches as its behaviour says.
    fn disconnect(&mut self, name: &str) {
        let event = state_event("Disconnected", self.held(name));
        let session = self.sessions.get_mut(name).expect("checked by the caller");
        session.handle = Handle::Disconnected;
        session.since = self.server.zxid();
        self.client.on_disconnect(&mut self.server, session.id, &mut session.watches);
        self.forget_unheld(name);
        self.inbox.entry(name.to_string()).or_default().extend(event);
    }

    /// The connection is back: a live session's library hands its watchers SyncConnected and
    /// re-arms them (or not); an expired one learns it is expired.
    fn reconnect(&mut self, name: &str) {
        let id = self.sessions[name].id;
        if !self.server.is_alive(id) {
            self.ended(name, Handle::Expired);
            return;
        }
        let event = state_event("SyncConnected", self.held(name));
        self.inbox.entry(name.to_string()).or_default().extend(event);
        let session = self.sessions.get_mut(name).expect("checked by the caller");
        session.handle = Handle::Open;
        let events = self.client.on_reconnect(&mut self.server, id, session.since, &mut session.watches);
        self.deliver(events.into_iter().map(|event| Notification { session: id, event }).collect());
    }

    /// A session closed or expired: its watches are gone and it hears its end once.
    fn ended(&mut self, name: &str, handle: Handle) {
        let session = self.sessions.get_mut(name).expect("checked by the caller");
        session.handle = handle;
        session.watches.clear();
        self.forget_unheld(name);
        let state = if handle == Handle::Closed { "Closed" } else { "Expired" };
        self.inbox.entry(name.to_string()).or_default().push(json!({ "state": state }));
    }

    /// The ops whose watches the session's library holds, with their op index.
    fn held(&self, name: &str) -> Vec<(usize, String)> {
        let id = self.sessions[name].id;
        let ops = self.armed.iter().filter(|((s, _, _), _)| *s == id).flat_map(|(_, ops)| ops);
        ops.map(|op| (via_index(op), op.clone())).collect()
    }

    /// Drops the `via` bookkeeping of watches the session's library no longer holds.
    fn forget_unheld(&mut self, name: &str) {
        let session = &self.sessions[name];
        self.armed.retain(|(s, path, kind), _| *s != session.id || session.watches.contains(path, *kind));
    }

    /// Remembers which op armed a watch, so a later event can say which ops it fired.
    fn arm(&mut self, i: usize, kind: &str, id: SessionId, request: &Request, response: &Response) {
        let Some(watch) = WatchKind::armed_by(request, response) else { return };
        self.armed.entry((id, request.path().to_string(), watch)).or_default().push(format!("{i}:{kind}"));
    }

    fn deliver(&mut self, notifications: Vec<Notification>) {
        for n in notifications {
            if let Some(session) = self.names.get(&n.session).and_then(|name| self.sessions.get_mut(name)) {
                session.watches.on_event(&n.event);
            }
            let mut via: Vec<String> = WatchKind::consumed_by(n.event.kind)
                .iter()
                .flat_map(|k| self.armed.remove(&(n.session, n.event.path.clone(), *k)).unwrap_or_default())
                .collect();
            via.sort_by_key(|v| via_index(v));
            let name = self.names.get(&n.session).cloned().unwrap_or_else(|| n.session.to_string());
            let event = json!({ "type": format!("{:?}", n.event.kind), "path": n.event.path, "via": via });
            self.inbox.entry(name).or_default().push(event);
        }
    }

    fn describe(&self, op: &Value, response: Response, result: &mut Map<String, Value>) {
        let wants_stat = op["stat"].as_bool().unwrap_or(false);
        match response {
            Response::Created { path, stat } => {
                result.insert("created".into(), json!(path));
                if wants_stat {
                    result.insert("stat".into(), self.stat(&stat));
                }
            }
            Response::Deleted => {}
            Response::Exists(stat) => {
                result.insert("stat".into(), stat.map_or(Value::Null, |s| self.stat(&s)));
            }
            Response::Data { data, stat } => {
                result.insert("data".into(), json!(data));
                result.insert("stat".into(), self.stat(&stat));
            }
            Response::DataSet(stat) => {
                result.insert("stat".into(), self.stat(&stat));
            }
            Response::Children { children, stat } => {
                children_fields(&children, result);
                if wants_stat {
                    result.insert("stat".into(), self.stat(&stat));
                }
            }
            Response::Synced { .. } => {}
            // A create's stat is left out: ZooKeeper 3.8 answers a create in a multi with its
            // path alone (ZOOKEEPER-4026).
            Response::Multi(results) => {
                let results: Vec<Value> = results
                    .iter()
                    .map(|r| match r {
                        OpResult::Created { path, .. } => json!({ "created": path }),
                        OpResult::DataSet(stat) => json!({ "stat": self.stat(stat) }),
                        OpResult::Deleted | OpResult::Checked => json!({}),
                    })
                    .collect();
                result.insert("results".into(), json!(results));
            }
        }
    }

    fn stat(&self, stat: &Stat) -> Value {
        let owner = match stat.ephemeral_owner {
            Some(id) => json!(self.names.get(&id).cloned().unwrap_or_else(|| id.to_string())),
            None => json!(0),
        };
        stat_value(stat.version, stat.cversion, stat.aversion, stat.data_length, stat.num_children, owner)
    }

    fn server_watches(&mut self, result: &mut Map<String, Value>) {
        let mut data = Map::new();
        let mut total = 0;
        for (name, Session { id, .. }) in &self.sessions {
            let (data_paths, child_paths) = self.server.watches_of(*id);
            total += data_paths.len() + child_paths.len();
            if !data_paths.is_empty() {
                data.insert(name.clone(), json!(data_paths));
            }
        }
        result.insert("data_watches".into(), Value::Object(data));
        result.insert("total_watches".into(), json!(total));
    }

    fn server_ephemerals(&mut self, result: &mut Map<String, Value>) {
        let mut ephemerals = Map::new();
        for (name, Session { id, .. }) in &self.sessions {
            let paths = self.server.tree().ephemerals_of(*id);
            if !paths.is_empty() {
                ephemerals.insert(name.clone(), json!(paths));
            }
        }
        result.insert("ephemerals".into(), Value::Object(ephemerals));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_script_with_a_field_it_does_not_take_is_refused() {
        let ops = json!([{"s": "A", "op": "open"}]);
        assert!(run_script(&json!({"name": "x", "about": "y", "ops": ops})).is_ok());
        let refused = run_script(&json!({"name": "x", "ops": ops, "opz": 1})).unwrap_err().0;
        assert!(refused.contains("no field `opz`"), "{refused}");
        assert!(run_script(&json!([1, 2])).is_err(), "not an object");
    }
}
