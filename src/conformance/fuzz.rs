//! Random op scripts for differential fuzzing (see `differential`): two or three sessions
//! working on a handful of paths, so creates, deletes and watches keep meeting the same nodes.
//! Only ops both runners support are made, and ending a session is rare so that most scripts
//! keep their sessions long enough to be interesting.

use proptest::prelude::*;
use serde_json::{json, Value};

/// Nodes the reads, deletes and setData go to: the parents, their plain children and the first
/// sequential names the creates below make.
const NODES: &[&str] = &[
    "/",
    "/a",
    "/b",
    "/a/b",
    "/a/c",
    "/a/b/c",
    "/a/x-0000000000",
    "/a/x-0000000001",
    "/a/x-0000000002",
    "/a/x-0000000003",
    "/x-0000000001",
    "/x-0000000002",
];

/// Plain create paths (one of them a name a sequential create also makes) and sequential
/// prefixes. Never the root: creating it is refused client-side by some clients and sent by
/// others (docs/conformance.md).
const PLAIN: &[&str] = &["/a", "/b", "/a/b", "/a/c", "/a/b/c", "/a/x-0000000001"];
const PREFIXES: &[&str] = &["/a/x-", "/x-", "/a/b/x-"];

const MODES: &[&str] = &["persistent", "ephemeral", "persistent_sequential", "ephemeral_sequential", "container"];
const DATA: &[&str] = &["", "x", "yy"];

/// One generated op; `s` is a session index, taken modulo the script's session count.
#[derive(Clone, Debug)]
pub enum FuzzOp {
    Create { s: usize, mode: usize, path: usize, data: usize },
    Delete { s: usize, node: usize, version: Option<i32> },
    Exists { s: usize, node: usize, watch: bool },
    GetData { s: usize, node: usize, watch: bool },
    GetChildren { s: usize, node: usize, watch: bool },
    SetData { s: usize, node: usize, data: usize, version: Option<i32> },
    Events { s: usize },
    State { s: usize },
    Close { s: usize },
    Expire { s: usize },
    ServerWatches,
    ServerEphemerals,
}

/// A generated script: its sessions' requested timeouts and its ops.
#[derive(Clone, Debug)]
pub struct FuzzScript {
    pub timeouts: Vec<u32>,
    pub ops: Vec<FuzzOp>,
}

fn session_name(s: usize) -> String {
    ((b'A' + s as u8) as char).to_string()
}

impl FuzzScript {
    /// The op script (conformance/FORMAT.md): open every session, the ops, then every session's
    /// `events` and the server's ephemerals, so a notification or a node that differs shows.
    pub fn to_json(&self, name: &str, about: &str) -> Value {
        let n = self.timeouts.len();
        let s = |i: usize| json!(session_name(i % n));
        let version = |v: &Option<i32>| v.unwrap_or(-1);
        let mut ops: Vec<Value> =
            self.timeouts.iter().enumerate().map(|(i, t)| json!({"s": s(i), "op": "open", "timeout_ms": t})).collect();
        for op in &self.ops {
            ops.push(match op {
                FuzzOp::Create { s: i, mode, path, data } => {
                    let mode = MODES[*mode % MODES.len()];
                    let path = if mode.ends_with("sequential") {
                        PREFIXES[*path % PREFIXES.len()]
                    } else {
                        PLAIN[*path % PLAIN.len()]
                    };
                    json!({"s": s(*i), "op": "create", "path": path, "mode": mode, "data": DATA[*data % DATA.len()]})
                }
                FuzzOp::Delete { s: i, node, version: v } => {
                    json!({"s": s(*i), "op": "delete", "path": NODES[*node % NODES.len()], "version": version(v)})
                }
                FuzzOp::Exists { s: i, node, watch } => {
                    json!({"s": s(*i), "op": "exists", "path": NODES[*node % NODES.len()], "watch": watch})
                }
                FuzzOp::GetData { s: i, node, watch } => {
                    json!({"s": s(*i), "op": "get_data", "path": NODES[*node % NODES.len()], "watch": watch})
                }
                FuzzOp::GetChildren { s: i, node, watch } => json!({
                    "s": s(*i), "op": "get_children", "path": NODES[*node % NODES.len()], "watch": watch, "stat": true
                }),
                FuzzOp::SetData { s: i, node, data, version: v } => json!({
                    "s": s(*i), "op": "set_data", "path": NODES[*node % NODES.len()],
                    "data": DATA[*data % DATA.len()], "version": version(v)
                }),
                FuzzOp::Events { s: i } => json!({"s": s(*i), "op": "events"}),
                FuzzOp::State { s: i } => json!({"s": s(*i), "op": "state"}),
                FuzzOp::Close { s: i } => json!({"s": s(*i), "op": "close"}),
                FuzzOp::Expire { s: i } => json!({"s": s(*i), "op": "expire"}),
                FuzzOp::ServerWatches => json!({"op": "server_watches"}),
                FuzzOp::ServerEphemerals => json!({"op": "server_ephemerals"}),
            });
        }
        ops.extend((0..n).map(|i| json!({"s": s(i), "op": "events"})));
        ops.push(json!({"op": "server_ephemerals"}));
        json!({"name": name, "about": about, "ops": ops})
    }
}

fn op() -> impl Strategy<Value = FuzzOp> {
    let s = 0..3usize;
    let node = 0..NODES.len();
    let version = prop_oneof![3 => Just(None), 2 => (0..3i32).prop_map(Some)];
    prop_oneof![
        8 => (s.clone(), 0..MODES.len(), 0..PLAIN.len().max(PREFIXES.len()), 0..DATA.len())
            .prop_map(|(s, mode, path, data)| FuzzOp::Create { s, mode, path, data }),
        3 => (s.clone(), node.clone(), version.clone())
            .prop_map(|(s, node, version)| FuzzOp::Delete { s, node, version }),
        3 => (s.clone(), node.clone(), any::<bool>()).prop_map(|(s, node, watch)| FuzzOp::Exists { s, node, watch }),
        3 => (s.clone(), node.clone(), any::<bool>()).prop_map(|(s, node, watch)| FuzzOp::GetData { s, node, watch }),
        3 => (s.clone(), node.clone(), any::<bool>())
            .prop_map(|(s, node, watch)| FuzzOp::GetChildren { s, node, watch }),
        3 => (s.clone(), node, 0..DATA.len(), version)
            .prop_map(|(s, node, data, version)| FuzzOp::SetData { s, node, data, version }),
        2 => s.clone().prop_map(|s| FuzzOp::Events { s }),
        1 => s.clone().prop_map(|s| FuzzOp::State { s }),
        1 => Just(FuzzOp::ServerWatches),
        1 => Just(FuzzOp::ServerEphemerals),
        // Rare: an ended session makes the rest of its ops refusals.
        1 => prop_oneof![s.clone().prop_map(|s| FuzzOp::Close { s }), s.prop_map(|s| FuzzOp::Expire { s })],
    ]
}

/// Scripts of 2 or 3 sessions and 1 to `max_ops` ops. Timeouts stay well above the time a
/// script takes (a short one could expire for real on a busy machine); 30000 is clamped.
pub fn scripts(max_ops: usize) -> impl Strategy<Value = FuzzScript> {
    let timeouts = prop::collection::vec(prop_oneof![4 => Just(4000u32), 1 => Just(30_000u32)], 2..=3);
    (timeouts, prop::collection::vec(op(), 1..=max_ops.max(1))).prop_map(|(timeouts, ops)| FuzzScript { timeouts, ops })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::strategy::ValueTree;
    use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

    #[test]
    fn every_generated_script_is_well_formed_and_runs_on_the_model() {
        let mut runner = TestRunner::new_with_rng(
            Config { cases: 300, failure_persistence: None, ..Config::default() },
            TestRng::from_seed(RngAlgorithm::ChaCha, &[7; 32]),
        );
        let mut kinds = std::collections::BTreeSet::new();
        runner
            .run(&scripts(20), |script| {
                let json = script.to_json("fuzz", "generated");
                let results = crate::conformance::run_script(&json).map_err(|e| TestCaseError::fail(e.0))?;
                prop_assert_eq!(results["results"].as_array().map(Vec::len), json["ops"].as_array().map(Vec::len));
                Ok(())
            })
            .unwrap();
        for _ in 0..300 {
            let script = scripts(20).new_tree(&mut runner).unwrap().current();
            for op in script.to_json("fuzz", "")["ops"].as_array().unwrap() {
                kinds.insert(op["op"].as_str().unwrap().to_string());
                if let Some(mode) = op["mode"].as_str() {
                    kinds.insert(mode.to_string());
                }
            }
        }
        let all = [
            "open",
            "create",
            "delete",
            "exists",
            "get_data",
            "get_children",
            "set_data",
            "events",
            "state",
            "close",
            "expire",
            "server_watches",
            "server_ephemerals",
            "persistent",
            "ephemeral",
            "persistent_sequential",
            "ephemeral_sequential",
        ];
        for kind in all {
            assert!(kinds.contains(kind), "no `{kind}` in 300 scripts");
        }
    }

    #[test]
    fn sessions_are_named_in_order_and_every_session_reads_its_events_at_the_end() {
        let script =
            FuzzScript { timeouts: vec![4000, 30_000], ops: vec![FuzzOp::Create { s: 3, mode: 2, path: 1, data: 1 }] };
        let json = script.to_json("x", "y");
        let ops = json["ops"].as_array().unwrap();
        assert_eq!(ops[1], json!({"s": "B", "op": "open", "timeout_ms": 30000}));
        assert_eq!(
            ops[2],
            json!({"s": "B", "op": "create", "path": "/x-", "mode": "persistent_sequential", "data": "x"})
        );
        assert_eq!(ops[3], json!({"s": "A", "op": "events"}));
        assert_eq!(ops[4], json!({"s": "B", "op": "events"}));
        assert_eq!(ops[5], json!({"op": "server_ephemerals"}));
    }
}
