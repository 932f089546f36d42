//! The world as a stateright model: actions are the world's enabled steps, in the world's own
//! fixed order, and the next state is the world after the step.

use super::properties::Kind;
use stateright::{Model, Property as StaterightProperty};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use zklab_model::{Property, Recipe, Settle, Step, World};

pub struct WorldModel<R> {
    pub init: World<R>,
    /// The properties stateright judges (safety and reachability).
    pub properties: Vec<Property>,
    /// Set to end the run early. stateright 0.31's depth-first checker looks at its timeout
    /// only when a thread runs out of work, which on one thread is the end of the run, and it
    /// has no memory bound: a state outside the boundary has no successors, so the run drains.
    pub stop: Arc<AtomicBool>,
}

impl<R: Recipe> Model for WorldModel<R> {
    type State = World<R>;
    type Action = Step;

    fn init_states(&self) -> Vec<Self::State> {
        vec![self.init.clone()]
    }

    fn actions(&self, state: &Self::State, actions: &mut Vec<Self::Action>) {
        // Once stopped, the states still pending drain without computing their successors.
        if !self.stop.load(Ordering::Relaxed) {
            state.steps_into(actions);
        }
    }

    fn next_state(&self, state: &Self::State, step: Self::Action) -> Option<Self::State> {
        let mut next = state.clone();
        next.apply(step).ok()?;
        next.settle(Settle::Renumbering).ok();
        Some(next)
    }

    fn within_boundary(&self, _: &Self::State) -> bool {
        !self.stop.load(Ordering::Relaxed)
    }

    fn properties(&self) -> Vec<StaterightProperty<Self>> {
        for_stateright(&self.properties)
    }
}

/// How stateright calls a property: a plain function of the model and a state.
type Evaluator<R> = fn(&WorldModel<R>, &World<R>) -> bool;

fn eval<R: Recipe, const I: usize>(model: &WorldModel<R>, world: &World<R>) -> bool {
    model.properties[I].holds(world)
}

/// The same properties in stateright's form. Its properties are plain function pointers, so
/// each predicate is reached through its index in `WorldModel::properties`.
fn for_stateright<R: Recipe>(properties: &[Property]) -> Vec<StaterightProperty<WorldModel<R>>> {
    let evaluators: [Evaluator<R>; 16] = [
        eval::<R, 0>,
        eval::<R, 1>,
        eval::<R, 2>,
        eval::<R, 3>,
        eval::<R, 4>,
        eval::<R, 5>,
        eval::<R, 6>,
        eval::<R, 7>,
        eval::<R, 8>,
        eval::<R, 9>,
        eval::<R, 10>,
        eval::<R, 11>,
        eval::<R, 12>,
        eval::<R, 13>,
        eval::<R, 14>,
        eval::<R, 15>,
    ];
    assert!(properties.len() <= evaluators.len(), "more properties than evaluators");
    properties
        .iter()
        .zip(evaluators)
        .filter_map(|(p, eval)| match p.kind() {
            Kind::Safety => Some(StaterightProperty::always(p.name(), eval)),
            Kind::Reached => Some(StaterightProperty::sometimes(p.name(), eval)),
            // Judged on steps, which stateright's properties cannot see.
            Kind::Liveness | Kind::Transition => None,
        })
        .collect()
}
