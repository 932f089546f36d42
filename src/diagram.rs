//! A trace as a Mermaid sequence diagram (GitHub and most Markdown viewers draw it): requests
//! and replies as arrows between each client and ZooKeeper, watch notifications as async
//! arrows, writes to the protected resource, and beliefs and faults as notes.

use crate::trace::{Trace, TraceError};
use zklab_model::world::{describe_request, describe_result, Note};
use zklab_model::{Input, SessionState, Step, ZkError};

/// Renders `trace` by replaying it with the world's own record of each step.
pub fn mermaid(trace: &Trace) -> Result<String, TraceError> {
    let mut world = trace.scenario.world();
    let mut out = String::from("sequenceDiagram\n");
    for (i, recipe) in trace.scenario.recipes.iter().enumerate() {
        out.push_str(&format!("    participant c{i} as c{i} ({recipe})\n"));
    }
    out.push_str("    participant ZK as ZooKeeper\n    participant R as resource\n");
    let last = world.clients.len() - 1;
    for (n, step) in trace.steps.iter().enumerate() {
        if trace.verdict.cycle_start == Some(n) {
            out.push_str(&format!("    Note over c0,c{last}: the cycle starts here and returns to this state\n"));
        }
        let mut log = Some(Vec::new());
        world.apply_logged(*step, &mut log).map_err(|_| TraceError::NotEnabled(n, *step))?;
        // The server's own event is drawn over the server.
        let c = step.client().map_or("ZK".to_string(), |c| format!("c{c}"));
        match step {
            Step::Fault(..) | Step::Lossy(..) | Step::Server(_) => {
                line(&mut out, &format!("Note over {c}: {}. {step}", n + 1))
            }
            Step::Expire(_) => line(&mut out, &format!("Note over ZK: {}. session timeout", n + 1)),
            _ => {}
        }
        for note in log.unwrap_or_default() {
            draw(&mut out, &world, &c, &note);
        }
    }
    line(&mut out, &format!("Note over c0,c{last}: {} violated: {}", trace.verdict.property, trace.summary));
    Ok(out)
}

fn draw(out: &mut String, world: &zklab_model::World<zklab_recipes::AnyRecipe>, c: &str, note: &Note) {
    match note {
        Note::Request { request, result: Some(result) } => {
            line(out, &format!("{c}->>ZK: {}", describe_request(request)));
            line(out, &format!("ZK-->>{c}: {}", describe_result(result)));
        }
        Note::Request { request, result: None } => line(out, &format!("{c}-xZK: {}", describe_request(request))),
        Note::Notified { session, event } => {
            if let Some(to) = world.clients.iter().position(|k| k.session == *session) {
                line(out, &format!("ZK--)c{to}: {:?} {}", event.kind, event.path));
            }
        }
        Note::CatchUp(event) => line(out, &format!("ZK--){c}: catch-up {:?} {}", event.kind, event.path)),
        Note::Handled(Input::Watch(event)) => line(out, &format!("Note over {c}: handles {:?}", event.kind)),
        Note::Handled(Input::State(state)) if *state != SessionState::SyncConnected => {
            line(out, &format!("Note over {c}: {state:?}"))
        }
        Note::Handled(Input::Reply {
            request,
            result: Err(e @ (ZkError::ConnectionLoss | ZkError::SessionExpired)),
        }) => line(out, &format!("Note over {c}: {} failed with {e}", request.op_name())),
        Note::Handled(_) => {}
        Note::Write { token, mode: zklab_model::Mode::Take, .. } => {
            line(out, &format!("{c}->>R: processes item {token}"))
        }
        Note::Write { mode: zklab_model::Mode::Barrier { .. }, .. } => {
            line(out, &format!("Note over {c}: works past the barrier"))
        }
        Note::Write { token, accepted, mode } => {
            let access = match mode {
                zklab_model::Mode::Read => "read",
                zklab_model::Mode::Lease { .. } => "use",
                _ => "write",
            };
            line(out, &format!("{c}->>R: {access} with token {token}"));
            line(out, &format!("R-->>{c}: {}", if *accepted { "accepted" } else { "REFUSED (stale token)" }));
        }
        Note::Expired(session) => line(out, &format!("Note over ZK: expires {session}")),
        other => line(out, &format!("Note over {c}: {other}")),
    }
}

/// One diagram line; `;` and `#` would end or escape Mermaid text, so they never reach it.
fn line(out: &mut String, text: &str) {
    out.push_str("    ");
    out.push_str(&text.replace(';', ",").replace('#', "no."));
    out.push('\n');
}
