//! What the explorer's page shows after a list of steps: the steps replayed from the start (the
//! server keeps nothing between requests, so undo is the page dropping a step), the state they
//! reach, every step enabled there, and each property's judgement by the model's own code.

use crate::html::frames::{self, ClientView, NodeView};
use crate::scenario::Scenario;
use serde::Serialize;
use zklab_model::world::{describe_input, Note};
use zklab_model::{Property, Step};

/// The explorer's answer for one position.
#[derive(Serialize)]
pub struct Position {
    /// Each step taken, as the page lists it.
    pub taken: Vec<String>,
    /// What the last step did, as the text timeline says it.
    pub notes: Vec<String>,
    /// The watch notifications the last step queued, one per client it wakes (the page draws
    /// them as a fan of arrows from the server).
    pub notified: Vec<frames::Arrow>,
    pub clients: Vec<ClientView>,
    pub nodes: Vec<NodeView>,
    /// Each safety and transition property that applies, and whether it holds here (or
    /// allowed the last step).
    pub checks: Vec<(String, bool)>,
    /// A client waits and nothing but a fault can happen (`eventual_acquire`'s deadlock).
    pub deadlock: bool,
    pub enabled: Vec<Choice>,
}

/// A step the learner can take next.
#[derive(Serialize)]
pub struct Choice {
    pub step: Step,
    /// What it does: the message a receive handles, the fault it is.
    pub text: String,
    pub fault: bool,
    /// The client it belongs to; none for the server's own event.
    pub client: Option<zklab_model::ClientId>,
}

/// Why a list of steps is not a position.
#[derive(Debug, thiserror::Error)]
#[error("step {0} ({1}) is not enabled there")]
pub struct NotAPosition(pub usize, pub Step);

/// Replays `steps` from `scenario`'s initial world.
pub fn position(scenario: &Scenario, steps: &[Step]) -> Result<Position, NotAPosition> {
    let mut world = scenario.world();
    let applicable = Property::applicable(&world);
    let mut before = None;
    let mut log = None;
    let mut taken = Vec::new();
    for (i, step) in steps.iter().enumerate() {
        let last = i + 1 == steps.len();
        if last {
            before = Some(world.clone());
            log = Some(Vec::new());
        }
        taken.push(step.to_string());
        world.apply_logged(*step, &mut log).map_err(|_| NotAPosition(i, *step))?;
    }
    let notes: Vec<Note> = log.unwrap_or_default();
    let enabled = world.steps().into_iter().map(|step| choice(&world, step)).collect();
    let before_or_now = before.as_ref().unwrap_or(&world);
    Ok(Position {
        taken,
        notes: notes.iter().map(|n| frames::note_text(n, before_or_now, &world)).collect(),
        notified: frames::notifications(&notes, before_or_now, &world, steps.len()),
        clients: frames::clients(&world),
        nodes: frames::nodes(&world),
        checks: frames::checks(&applicable, before.as_ref().zip(steps.last().copied()), &world),
        deadlock: world.deadlocked(),
        enabled,
    })
}

fn choice<R: zklab_model::Recipe>(world: &zklab_model::World<R>, step: Step) -> Choice {
    let client = step.client();
    let text = match step {
        Step::Receive(c) => match world.clients[c as usize].inbound.front() {
            Some(input) => format!("c{c} handles {}", describe_input(input)),
            None => step.to_string(),
        },
        Step::Lossy(fault, sending, c) => format!("{fault}: the request c{c} sends at its {}", sending.step(c)),
        Step::Fault(fault, c) => format!("{fault} c{c}"),
        Step::Server(event) => format!("{event} (the server)"),
        other => other.to_string(),
    };
    Choice { step, text, fault: step.is_fault(), client }
}
