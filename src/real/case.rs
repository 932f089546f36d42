//! A divergence written out as a conformance case: where a real server answered a request
//! otherwise than the model, the run's steps up to that request become an op script in the
//! format of `conformance/cases/` (conformance/FORMAT.md), so the model's gap can be recorded
//! on a real server by itself (`scripts/record.sh`) and kept.
//!
//! The script is the model's order of the run: each step's requests as the model applied them,
//! by the session that sent them, with the connection's cuts (`disconnect`), returns
//! (`reconnect`) and expiries (`expire`) where the model's steps put them, and a new handle's
//! session opened where the recipe made it. A real server replaying the script one op at a time
//! gives the real run's answer when the difference is one of the model's; when the real run's
//! own timing made it (two sessions' requests racing), the script gives the model's answer,
//! and that says so too. A run whose steps a script cannot express (lagging reads, the
//! container reaper) writes no case.

use super::shadow::Exchange;
use crate::conformance::op_of;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use zklab_model::world::{describe_request, describe_result, Link, Note};
use zklab_model::{Recipe, RequestFault, SessionId, Step, World};

/// The script of a run that took `steps` from `start` and diverged at its last on `exchange`.
pub fn divergence_case<R: Recipe>(
    start: &World<R>,
    steps: &[Step],
    exchange: &Exchange,
    name: &str,
    run: &str,
) -> Result<Value, String> {
    if let Some(step) = steps.iter().find(|s| inexpressible(s)) {
        return Err(format!("its step `{step}` has no op in a script"));
    }
    let mut world = start.clone();
    let mut names: BTreeMap<SessionId, String> = BTreeMap::new();
    let mut name_of = |session: SessionId| -> String {
        let next = names.len();
        names.entry(session).or_insert_with(|| ((b'A' + (next % 26) as u8) as char).to_string()).clone()
    };
    let config = world.config().clone();
    let mut ops = vec![json!({"s": "admin", "op": "open"})];
    let mut parent = String::new();
    for part in config.lock_path.split('/').filter(|p| !p.is_empty()) {
        parent = format!("{parent}/{part}");
        ops.push(json!({"s": "admin", "op": "create", "path": parent, "mode": "persistent"}));
    }
    ops.push(json!({"s": "admin", "op": "close"}));
    for c in world.clients.iter() {
        ops.push(json!({"s": name_of(c.session), "op": "open", "timeout_ms": config.session_timeout_ms}));
    }
    let mut exchanged = None;
    for (k, step) in steps.iter().enumerate() {
        let i = step.client().expect("a server event has no op: refused above") as usize;
        let (session, link) = (world.clients[i].session, world.clients[i].link);
        let mut notes = Some(Vec::new());
        world.apply_logged(*step, &mut notes).map_err(|e| format!("the model refuses step {}: {e}", k + 1))?;
        let now = (world.clients[i].session, world.clients[i].link);
        let s = name_of(session);
        if link != Link::Up && now.1 == Link::Up && now.0 == session {
            ops.push(json!({"s": s, "op": "reconnect"}));
        }
        if matches!(step, Step::Expire(_)) {
            ops.push(json!({"s": s, "op": "expire"}));
        }
        if now.0 != session {
            // The recipe handled Expired: its application opened a new handle.
            ops.push(json!({"s": name_of(now.0), "op": "open", "timeout_ms": config.session_timeout_ms}));
        }
        let sender = name_of(now.0);
        let applied = notes.unwrap_or_default().into_iter().filter_map(|n| match n {
            Note::Request { request, result: Some(_) } => Some(request),
            _ => None,
        });
        for (index, request) in applied.enumerate() {
            if k + 1 == steps.len() && index == exchange.index {
                exchanged = Some(ops.len());
            }
            ops.push(op_of(&sender, &request));
        }
        if link == Link::Up && now.1 != Link::Up && now.0 == session {
            ops.push(json!({"s": s, "op": "disconnect"}));
        }
    }
    let at = exchanged.ok_or("the diverging request is not among the last step's")?;
    for s in names.values() {
        ops.push(json!({"s": s, "op": "events"}));
    }
    ops.push(json!({"op": "server_ephemerals"}));
    let about = format!(
        "Written by `zklab real` ({run}) where the real server and the model parted: op {at} ({}) was answered {} \
         by the real server and {} by the model. Record it on a real server (scripts/record.sh): if the server \
         answers it as the real run did, the model lacks this behaviour; if as the model does, the run's own \
         timing made the difference.",
        describe_request(&exchange.request),
        describe_result(&exchange.real),
        describe_result(&exchange.model),
    );
    Ok(json!({"name": name, "about": about, "ops": ops}))
}

/// A step a script has no op for.
fn inexpressible(step: &Step) -> bool {
    match step {
        Step::Lossy(fault, _, _) => matches!(fault, RequestFault::LaggingRead | RequestFault::LaggingSession),
        Step::Server(_) => true,
        Step::CatchUp(_) => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zklab_model::{ClientFault, ClientId, FaultKind, Request, Response, WorldConfig, ZkError};
    use zklab_recipes::AnyRecipe;

    fn world() -> World<AnyRecipe> {
        let recipes = (0..2).map(|_| zklab_recipes::build("standard", "/lock").unwrap()).collect();
        let mut config = WorldConfig::default();
        config.faults.0[FaultKind::Disconnect.index()] = 1;
        World::new(config, recipes)
    }

    #[test]
    fn a_divergence_becomes_a_script_the_model_runs_up_to_the_diverging_request() {
        let w = world();
        let steps = [
            Step::Acquire(0),
            Step::Fault(ClientFault::Disconnect, 0),
            Step::Reconnect(0),
            Step::Acquire(1),
            Step::Receive(1),
        ];
        let mut after = w.clone();
        for s in &steps {
            after.apply(*s).unwrap();
        }
        let request = Request::GetChildren { path: "/lock".into(), watch: false };
        let exchange = Exchange {
            client: 1 as ClientId,
            index: 0,
            request: request.clone(),
            real: Err(ZkError::NoNode),
            model: Ok(Response::Deleted),
        };
        let case = divergence_case(&w, &steps, &exchange, "real-test", "seed 1").unwrap();
        let ops = case["ops"].as_array().unwrap();
        let kinds: Vec<&str> = ops.iter().map(|o| o["op"].as_str().unwrap()).collect();
        assert_eq!(
            kinds,
            [
                "open",
                "create",
                "close",
                "open",
                "open",
                "create",
                "disconnect",
                "reconnect",
                "create",
                "get_children",
                "events",
                "events",
                "server_ephemerals"
            ]
        );
        let about = case["about"].as_str().unwrap();
        assert!(about.contains("op 9 (getChildren /lock)"), "{about}");
        assert_eq!(ops[9], op_of("B", &request));
        // The model runs the script it wrote.
        let run = crate::conformance::run_script(&case).unwrap();
        let results = run["results"].as_array().unwrap();
        assert_eq!(results.len(), ops.len());
        assert_eq!(results[9]["op"], "get_children");
    }

    #[test]
    fn a_run_with_lagging_reads_writes_no_script() {
        let w = world();
        let steps = [Step::Lossy(RequestFault::LaggingRead, zklab_model::world::Sending::Acquire, 0)];
        let exchange = Exchange {
            client: 0,
            index: 0,
            request: Request::GetChildren { path: "/lock".into(), watch: false },
            real: Err(ZkError::NoNode),
            model: Err(ZkError::NoNode),
        };
        let refused = divergence_case(&w, &steps, &exchange, "x", "seed 1").unwrap_err();
        assert!(refused.contains("lagging-read"), "{refused}");
    }
}
