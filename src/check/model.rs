//! The world as a stateright model: actions are the world's enabled steps, in the world's own
//! fixed order, and the next state is the world after the step.

use super::properties;
use stateright::{Model, Property as StaterightProperty};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use zklab_model::{Property, Recipe, Step, World};

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
        next.settle();
        Some(next)
    }

    fn within_boundary(&self, _: &Self::State) -> bool {
        !self.stop.load(Ordering::Relaxed)
    }

    fn properties(&self) -> Vec<StaterightProperty<Self>> {
        properties::for_stateright(&self.properties)
    }
}
