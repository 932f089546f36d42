//! Requests, replies and inputs in words, for every report: timelines, diagrams, the explorer,
//! a real run's wire and its errors all describe them through these, so a trace reads the same
//! wherever it is shown.

use crate::recipe::Input;
use crate::request::{CreateMode, Request, Response};

/// A request in the style of ZooKeeper's shell: `create -e -s /lock/x-`, `exists -w /lock/x`.
pub fn describe_request(request: &Request) -> String {
    let watch = |w: &bool| if *w { " -w" } else { "" };
    let flags = |mode: &CreateMode| match mode {
        CreateMode::Persistent => "",
        CreateMode::Ephemeral => " -e",
        CreateMode::PersistentSequential => " -s",
        CreateMode::EphemeralSequential => " -e -s",
        CreateMode::Container => " -c",
    };
    let version = |v: &i32| if *v == -1 { String::new() } else { format!(" -v {v}") };
    match request {
        Request::Create { path, mode, .. } => format!("create{} {path}", flags(mode)),
        Request::Delete { path, version: v } => format!("delete{} {path}", version(v)),
        Request::Exists { path, watch: w } => format!("exists{} {path}", watch(w)),
        Request::GetData { path, watch: w } => format!("getData{} {path}", watch(w)),
        Request::SetData { path, .. } => format!("setData {path}"),
        Request::GetChildren { path, watch: w } => format!("getChildren{} {path}", watch(w)),
        Request::Sync { path } => format!("sync {path}"),
        Request::Multi { ops } => {
            let ops: Vec<String> = ops
                .iter()
                .map(|op| match op {
                    crate::request::Op::Create { path, mode, .. } => format!("create{} {path}", flags(mode)),
                    crate::request::Op::Delete { path, version: v } => format!("delete{} {path}", version(v)),
                    crate::request::Op::SetData { path, version: v, .. } => format!("setData{} {path}", version(v)),
                    crate::request::Op::Check { path, version: v } => format!("check{} {path}", version(v)),
                })
                .collect();
            format!("multi [{}]", ops.join("; "))
        }
    }
}

pub fn describe_result(result: &crate::ZkResult) -> String {
    match result {
        Err(e) => e.to_string(),
        Ok(Response::Created { path, .. }) => crate::path::name(path).to_string(),
        Ok(Response::Deleted) | Ok(Response::DataSet(_)) => "ok".to_string(),
        Ok(Response::Exists(None)) => "null".to_string(),
        Ok(Response::Exists(Some(_))) => "stat".to_string(),
        // The bytes, when there are any: a recipe that finds its node by its data is judged
        // on them, and a timeline that hid them would hide the bug.
        Ok(Response::Data { data, stat }) => {
            let bytes = if data.is_empty() { String::new() } else { format!(" {data:?}") };
            match stat.ephemeral_owner {
                Some(owner) => format!("data{bytes} (owner {owner})"),
                None => format!("data{bytes}"),
            }
        }
        Ok(Response::Children { children, .. }) => {
            let mut sorted = children.to_vec();
            sorted.sort();
            format!("[{}]", sorted.join(", "))
        }
        Ok(Response::Synced { .. }) => "ok".to_string(),
        Ok(Response::Multi(results)) => {
            let results: Vec<String> = results
                .iter()
                .map(|r| match r {
                    crate::request::OpResult::Created { path, .. } => crate::path::name(path).to_string(),
                    _ => "ok".to_string(),
                })
                .collect();
            format!("[{}]", results.join(", "))
        }
    }
}

pub fn describe_input(input: &Input) -> String {
    match input {
        Input::Acquire => "acquire".to_string(),
        Input::Release => "release".to_string(),
        Input::Abandon => "give up".to_string(),
        Input::Reply { request, result } => format!("<- {} = {}", request.op_name(), describe_result(result)),
        Input::Watch(event) => format!("<- event {:?} {}", event.kind, event.path),
        Input::State(state) => format!("<- state {state:?}"),
    }
}
