//! Reading an op script's fields, shared by the model runner and the live runner so both accept
//! and refuse exactly the same scripts.

use super::ScriptError;
use serde_json::{json, Map, Value};
use zklab_model::{path, CreateMode, Op, Request};

pub(super) fn bad(i: usize, what: impl std::fmt::Display) -> ScriptError {
    ScriptError(format!("op {i}: {what}"))
}

pub(super) fn text<'a>(i: usize, op: &'a Value, field: &str) -> Result<&'a str, ScriptError> {
    op[field].as_str().ok_or_else(|| bad(i, format!("missing string field `{field}`")))
}

pub(super) fn flag(i: usize, op: &Value, field: &str) -> Result<bool, ScriptError> {
    match &op[field] {
        Value::Null => Ok(false),
        Value::Bool(b) => Ok(*b),
        other => Err(bad(i, format!("`{field}` must be true or false, got {other}"))),
    }
}

pub(super) fn number(i: usize, op: &Value, field: &str, default: i64) -> Result<i64, ScriptError> {
    match &op[field] {
        Value::Null => Ok(default),
        value => value.as_i64().ok_or_else(|| bad(i, format!("`{field}` must be an integer, got {value}"))),
    }
}

/// The fields op `kind` may carry besides `op`, or `None` for an op this format does not know.
fn fields_of(kind: &str) -> Option<&'static [&'static str]> {
    Some(match kind {
        "open" => &["s", "timeout_ms", "jute_maxbuffer"],
        "sleep" => &["ms"],
        "server_watches" | "server_ephemerals" => &[],
        "close" | "expire" | "events" | "state" | "disconnect" | "reconnect" => &["s"],
        "create" => &["s", "path", "data", "mode", "stat"],
        "delete" => &["s", "path", "version"],
        "exists" | "get_data" => &["s", "path", "watch"],
        "set_data" => &["s", "path", "data", "version"],
        "get_children" => &["s", "path", "watch", "stat"],
        "sync" => &["s", "path"],
        "multi" => &["s", "ops"],
        _ => return None,
    })
}

/// Op `i` is an object naming a known op, with no field its op does not read: a misspelt
/// field (`watchh`) would otherwise be ignored and the op run without it. Returns the op's kind.
pub(super) fn checked_kind(i: usize, op: &Value) -> Result<&str, ScriptError> {
    let object = op.as_object().ok_or_else(|| bad(i, format!("an op is an object, got {op}")))?;
    let kind = text(i, op, "op")?;
    let allowed = fields_of(kind).ok_or_else(|| bad(i, format!("unknown op `{kind}`")))?;
    match object.keys().find(|k| *k != "op" && !allowed.contains(&k.as_str())) {
        Some(field) => Err(bad(i, format!("`{kind}` has no field `{field}` (it takes: {})", allowed.join(", ")))),
        None => Ok(kind),
    }
}

/// A `sleep` op's milliseconds: from 0 to an hour.
pub(super) fn sleep_ms(i: usize, op: &Value) -> Result<u64, ScriptError> {
    let ms = number(i, op, "ms", 0)?;
    u64::try_from(ms)
        .ok()
        .filter(|ms| *ms <= 3_600_000)
        .ok_or_else(|| bad(i, format!("`ms` must be 0 to 3600000, got {ms}")))
}

/// The most data a request may carry: ZooKeeper refuses a packet over `jute.maxbuffer` (1 MiB
/// by default).
const MAX_DATA: usize = 1024 * 1024;

/// An op's `data`: a string (absent: empty) of at most `MAX_DATA` bytes.
fn data(i: usize, op: &Value) -> Result<String, ScriptError> {
    let data = match &op["data"] {
        Value::Null => String::new(),
        Value::String(text) => text.clone(),
        other => return Err(bad(i, format!("`data` must be a string, got {other}"))),
    };
    match data.len() > MAX_DATA {
        true => Err(bad(
            i,
            format!("`data` of {} bytes: ZooKeeper refuses more than {MAX_DATA} (jute.maxbuffer)", data.len()),
        )),
        false => Ok(data),
    }
}

/// The fields every result carries: `i`, `op`, `ok`, and the op's `s` and `path` where given.
pub(super) fn result_head(i: usize, kind: &str, op: &Value) -> Map<String, Value> {
    let mut result = Map::new();
    result.insert("i".into(), json!(i));
    result.insert("op".into(), json!(kind));
    result.insert("ok".into(), json!(true));
    if let Some(s) = op.get("s") {
        result.insert("s".into(), s.clone());
    }
    if let Some(p) = op.get("path") {
        result.insert("path".into(), p.clone());
    }
    result
}

pub(super) fn fail(result: &mut Map<String, Value>, error: &str) {
    result.insert("ok".into(), json!(false));
    result.insert("err".into(), json!(error));
}

/// The request an op makes, checking its fields (and its path, as the client library does);
/// `None` for ops that are not requests.
pub(super) fn request(i: usize, kind: &str, op: &Value) -> Result<Option<Request>, ScriptError> {
    let version = || number(i, op, "version", -1).and_then(|v| i32::try_from(v).map_err(|_| bad(i, "bad version")));
    let request = match kind {
        "create" => {
            let mode = match op["mode"].as_str().unwrap_or("persistent") {
                "persistent" => CreateMode::Persistent,
                "ephemeral" => CreateMode::Ephemeral,
                "persistent_sequential" => CreateMode::PersistentSequential,
                "ephemeral_sequential" => CreateMode::EphemeralSequential,
                "container" => CreateMode::Container,
                other => return Err(bad(i, format!("unknown create mode `{other}`"))),
            };
            Request::Create { path: text(i, op, "path")?.to_string(), data: data(i, op)?, mode }
        }
        "delete" => Request::Delete { path: text(i, op, "path")?.to_string(), version: version()? },
        "exists" => Request::Exists { path: text(i, op, "path")?.to_string(), watch: flag(i, op, "watch")? },
        "get_data" => Request::GetData { path: text(i, op, "path")?.to_string(), watch: flag(i, op, "watch")? },
        "set_data" => {
            Request::SetData { path: text(i, op, "path")?.to_string(), data: data(i, op)?, version: version()? }
        }
        "get_children" => Request::GetChildren { path: text(i, op, "path")?.to_string(), watch: flag(i, op, "watch")? },
        "sync" => Request::Sync { path: text(i, op, "path")?.to_string() },
        "multi" => {
            let Some(ops) = op["ops"].as_array() else { return Err(bad(i, "`multi` needs `ops`, a list of ops")) };
            let ops = ops
                .iter()
                .map(|sub| {
                    let kind = sub["op"].as_str().unwrap_or("");
                    let fields = ["op", "path", "data", "mode", "version"];
                    if let Some(field) = sub.as_object().and_then(|o| o.keys().find(|k| !fields.contains(&k.as_str())))
                    {
                        return Err(bad(i, format!("a multi's op has no field `{field}`")));
                    }
                    match request(i, kind, sub)? {
                        Some(Request::Create { path, data, mode }) => Ok(Op::Create { path, data, mode }),
                        Some(Request::Delete { path, version }) => Ok(Op::Delete { path, version }),
                        Some(Request::SetData { path, data, version }) => Ok(Op::SetData { path, data, version }),
                        None if kind == "check" => Ok(Op::Check {
                            path: text(i, sub, "path")?.to_string(),
                            version: number(i, sub, "version", -1)
                                .and_then(|v| i32::try_from(v).map_err(|_| bad(i, "bad version")))?,
                        }),
                        _ => Err(bad(i, format!("a multi's op is create, delete, set_data or check, not `{kind}`"))),
                    }
                })
                .collect::<Result<Vec<Op>, ScriptError>>()?;
            Request::Multi { ops }
        }
        _ => return Ok(None),
    };
    for (path, sequential) in paths_of(&request) {
        path::validate(path, sequential).map_err(|e| bad(i, format!("bad path: {e}")))?;
    }
    Ok(Some(request))
}

/// Each path a request names, and whether a sequential create names it.
fn paths_of(request: &Request) -> Vec<(&str, bool)> {
    match request {
        Request::Multi { ops } => {
            ops.iter().map(|op| (op.path(), matches!(op, Op::Create { mode, .. } if mode.is_sequential()))).collect()
        }
        _ => vec![(request.path(), matches!(request, Request::Create { mode, .. } if mode.is_sequential()))],
    }
}

/// The op that makes `request` as session `s`: what `request` reads, written back (a real
/// run's divergence is written as a script with it).
pub fn op_of(s: &str, request: &Request) -> Value {
    let mode_name = |mode: &CreateMode| match mode {
        CreateMode::Persistent => "persistent",
        CreateMode::Ephemeral => "ephemeral",
        CreateMode::PersistentSequential => "persistent_sequential",
        CreateMode::EphemeralSequential => "ephemeral_sequential",
        CreateMode::Container => "container",
    };
    match request {
        Request::Create { path, data, mode } => {
            json!({"s": s, "op": "create", "path": path, "data": data, "mode": mode_name(mode)})
        }
        Request::Sync { path } => json!({"s": s, "op": "sync", "path": path}),
        Request::Multi { ops } => {
            let ops: Vec<Value> = ops
                .iter()
                .map(|op| match op {
                    Op::Create { path, data, mode } => {
                        json!({"op": "create", "path": path, "data": data, "mode": mode_name(mode)})
                    }
                    Op::Delete { path, version } => json!({"op": "delete", "path": path, "version": version}),
                    Op::SetData { path, data, version } => {
                        json!({"op": "set_data", "path": path, "data": data, "version": version})
                    }
                    Op::Check { path, version } => json!({"op": "check", "path": path, "version": version}),
                })
                .collect();
            json!({"s": s, "op": "multi", "ops": ops})
        }
        Request::Delete { path, version } => json!({"s": s, "op": "delete", "path": path, "version": version}),
        Request::Exists { path, watch } => json!({"s": s, "op": "exists", "path": path, "watch": watch}),
        Request::GetData { path, watch } => json!({"s": s, "op": "get_data", "path": path, "watch": watch}),
        Request::SetData { path, data, version } => {
            json!({"s": s, "op": "set_data", "path": path, "data": data, "version": version})
        }
        Request::GetChildren { path, watch } => json!({"s": s, "op": "get_children", "path": path, "watch": watch}),
    }
}

/// A stat as the result format shows it, the owner already named.
pub(super) fn stat_value(
    version: i32,
    cversion: i32,
    aversion: i32,
    data_length: i32,
    num_children: i32,
    owner: Value,
) -> Value {
    json!({
        "aversion": aversion,
        "cversion": cversion,
        "dataLength": data_length,
        "ephemeralOwner": owner,
        "numChildren": num_children,
        "version": version,
    })
}

/// `children` (sorted), `raw` (the server's order) and whether that order was already sorted.
pub(super) fn children_fields(children: &[String], result: &mut Map<String, Value>) {
    let mut sorted = children.to_vec();
    sorted.sort();
    result.insert("raw_sorted".into(), json!(sorted == children));
    result.insert("raw".into(), json!(children));
    result.insert("children".into(), json!(sorted));
}

/// The `jute_maxbuffer` an `open` op gives its session's client: a positive int.
pub(super) fn jute_maxbuffer(i: usize, op: &Value) -> Result<Option<u32>, ScriptError> {
    match op.get("jute_maxbuffer") {
        None => Ok(None),
        Some(v) => match v.as_u64().and_then(|n| u32::try_from(n).ok()).filter(|n| (1..=i32::MAX as u32).contains(n)) {
            Some(n) => Ok(Some(n)),
            None => Err(bad(i, format!("jute_maxbuffer must be between 1 and {} bytes, got {v}", i32::MAX))),
        },
    }
}

/// What a session's client handle is, as a script's `state` op names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Handle {
    Open,
    /// The connection is cut (`disconnect`); the session may live on at the server.
    Disconnected,
    Closed,
    Expired,
}

impl Handle {
    pub(super) fn state(self) -> &'static str {
        match self {
            Handle::Open => "connected",
            Handle::Disconnected => "disconnected",
            Handle::Closed => "closed",
            Handle::Expired => "expired",
        }
    }
}

/// The state event a library hands every watcher it still holds when its connection drops or
/// comes back; `None` when it holds none.
pub(super) fn state_event(state: &str, mut via: Vec<(usize, String)>) -> Option<Value> {
    via.sort();
    via.dedup();
    let via: Vec<String> = via.into_iter().map(|(_, v)| v).collect();
    (!via.is_empty()).then(|| json!({ "type": "None", "state": state, "via": via }))
}

/// A `via` entry's op index (`"12:get_data"` is 12), to keep `via` in op order.
pub(super) fn via_index(via: &str) -> usize {
    via.split(':').next().and_then(|i| i.parse().ok()).unwrap_or(usize::MAX)
}

/// Why an op cannot run on a session whose connection is cut: the libraries differ (Java and
/// kazoo queue the request until the connection is back, the Rust client fails it at once), so
/// scripts reconnect first.
pub(super) fn refused_while_disconnected(i: usize, name: &str, kind: &str) -> ScriptError {
    bad(i, format!("`{kind}` on session {name} while it is disconnected (reconnect it first)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_op_written_from_a_request_reads_back_as_that_request() {
        let requests = [
            Request::Create { path: "/lock/c-".into(), data: "x".into(), mode: CreateMode::EphemeralSequential },
            Request::Create { path: "/a".into(), data: String::new(), mode: CreateMode::Persistent },
            Request::Delete { path: "/a".into(), version: 3 },
            Request::Exists { path: "/a".into(), watch: true },
            Request::GetData { path: "/a".into(), watch: false },
            Request::SetData { path: "/a".into(), data: "y".into(), version: -1 },
            Request::GetChildren { path: "/lock".into(), watch: true },
        ];
        for r in requests {
            let op = op_of("A", &r);
            let kind = checked_kind(0, &op).unwrap();
            assert_eq!(request(0, kind, &op).unwrap(), Some(r.clone()), "{op}");
            assert_eq!(op["s"], "A");
        }
    }
}
