//! Runs an op script against the model server, keeping the client-side bookkeeping a kazoo
//! client keeps: sessions by name, the events each session has received (and which ops' watches
//! they fired), and what a closed or expired handle answers.

use super::script::{bad, children_fields, fail, number, request, result_head, stat_value, text, Handle};
use super::ScriptError;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use zklab_model::{Request, Response, Server, ServerConfig, SessionId, Stat, WatchKind, ZkError};

/// The server the recordings were made against: tickTime 100 ms, session timeouts 200..20000 ms.
fn recorded_server() -> ServerConfig {
    ServerConfig {
        tick_ms: 100,
        min_session_timeout_ms: Some(200),
        max_session_timeout_ms: Some(20_000),
        ..ServerConfig::default()
    }
}

struct Runner {
    server: Server,
    sessions: BTreeMap<String, (SessionId, Handle)>,
    names: BTreeMap<SessionId, String>,
    /// Events received and not yet read, per session name.
    inbox: BTreeMap<String, Vec<Value>>,
    /// The ops whose watches are armed, per (session, path, kind).
    armed: BTreeMap<(SessionId, String, WatchKind), Vec<String>>,
}

/// Runs `script` (an op script as JSON) and returns `{"case": name, "results": [...]}`.
pub fn run_script(script: &Value) -> Result<Value, ScriptError> {
    let name = script["name"].as_str().ok_or_else(|| ScriptError("the script has no `name`".to_string()))?;
    let ops = script["ops"].as_array().ok_or_else(|| ScriptError("the script has no `ops` array".to_string()))?;
    let mut runner = Runner {
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
        let kind = text(i, op, "op")?;
        let mut result = result_head(i, kind, op);
        match kind {
            "open" => self.open(i, op, &mut result)?,
            "server_watches" => self.server_watches(&mut result),
            "server_ephemerals" => self.server_ephemerals(&mut result),
            "sleep" => {
                number(i, op, "ms", 0)?;
            }
            "close" | "expire" | "events" | "state" | "create" | "delete" | "exists" | "get_data" | "set_data"
            | "get_children" => self.session_op(i, kind, op, &mut result)?,
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
        let (id, negotiated) = self.server.open_session(timeout);
        self.sessions.insert(name.clone(), (id, Handle::Open));
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
        let Some(&(id, handle)) = self.sessions.get(&name) else {
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
            (_, Handle::Closed) => fail(result, "ConnectionClosed"),
            ("close" | "expire", Handle::Expired) => fail(result, &ZkError::SessionExpired.to_string()),
            ("close", Handle::Open) | ("expire", Handle::Open) => {
                let notifications =
                    if kind == "close" { self.server.close_session(id) } else { self.server.expire_session(id) };
                let (handle, state) =
                    if kind == "close" { (Handle::Closed, "Closed") } else { (Handle::Expired, "Expired") };
                self.sessions.insert(name.clone(), (id, handle));
                // A close fires the session's own watches on what it deletes (an expiry has
                // dropped them already); whatever is left is gone with the session.
                self.deliver(notifications);
                self.armed.retain(|(s, _, _), _| *s != id);
                self.inbox.entry(name).or_default().push(json!({ "state": state }));
            }
            // An expired handle still makes its requests: the server (the model's client-side
            // checks included) refuses them.
            (_, Handle::Open | Handle::Expired) => {
                let request = request.expect("every other op is a request");
                let outcome = self.server.apply(id, &request);
                self.deliver(outcome.notifications);
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

    /// Remembers which op armed a watch, so a later event can say which ops it fired.
    fn arm(&mut self, i: usize, kind: &str, id: SessionId, request: &Request, response: &Response) {
        let Some(watch) = WatchKind::armed_by(request, response) else { return };
        self.armed.entry((id, request.path().to_string(), watch)).or_default().push(format!("{i}:{kind}"));
    }

    fn deliver(&mut self, notifications: Vec<zklab_model::Notification>) {
        for n in notifications {
            let mut via: Vec<String> = WatchKind::consumed_by(n.event.kind)
                .iter()
                .flat_map(|k| self.armed.remove(&(n.session, n.event.path.clone(), *k)).unwrap_or_default())
                .collect();
            via.sort_by_key(|v| v.split(':').next().and_then(|i| i.parse::<usize>().ok()));
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
                children_fields(children, result);
                if wants_stat {
                    result.insert("stat".into(), self.stat(&stat));
                }
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
        for (name, (id, _)) in &self.sessions {
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
        for (name, (id, _)) in &self.sessions {
            let paths = self.server.tree().ephemerals_of(*id);
            if !paths.is_empty() {
                ephemerals.insert(name.clone(), json!(paths));
            }
        }
        result.insert("ephemerals".into(), Value::Object(ephemerals));
    }
}
