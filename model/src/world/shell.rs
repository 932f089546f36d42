//! A state without its clients, for keeping many states compactly. A checker's frontier holds
//! hundreds of thousands of states, and a world's own fields (the server with its shared tree,
//! the fault counts, the resource, the coverage) are a few hundred bytes while only a few
//! thousand distinct combinations of them occur in a run: the checker keeps each combination
//! once, as a shell, and each state as a pointer to its shell beside its clients (themselves
//! shared pointers).
//!
//! A shell's identity is its state's, minus the clients, plus which client each session belongs
//! to: that index is derived from the clients, so two shells taken from states with different
//! clients may differ in it while their states' other fields are equal. What the last step
//! left beside the state (`StepOutputs`) is not part of it and is left behind.

use super::{Clients, StepOutputs, World};
use crate::recipe::Recipe;
use std::hash::{Hash, Hasher};

/// A world without its clients (see the module).
#[derive(Clone, Debug)]
pub struct Shell<R>(World<R>);

impl<R: Recipe> World<R> {
    /// This state as its shell and its clients: `Shell::with` puts them back together.
    pub fn into_shell(mut self) -> (Shell<R>, Clients<R>) {
        let clients = std::mem::take(&mut self.clients);
        self.derived.outputs = StepOutputs::default();
        (Shell(self), clients)
    }
}

impl<R: Recipe> Shell<R> {
    /// The state this shell was taken from, given the clients it was taken with (or equal ones).
    pub fn with(&self, clients: Clients<R>) -> World<R> {
        debug_assert_eq!(
            World::<R>::index_sessions(&clients),
            self.0.derived.by_session,
            "the clients it was taken with"
        );
        World { clients, ..self.0.clone() }
    }

    /// The state a step led to, given as this shell (the step's own) and its clients, with what
    /// the step left beside it (`World::step_outputs`): the world `apply` made, put back together from
    /// its parts.
    pub fn after_step(&self, clients: Clients<R>, outputs: &StepOutputs) -> World<R> {
        let mut world = self.with(clients);
        world.derived.outputs = outputs.clone();
        world
    }
}

impl<R: Hash> Hash for Shell<R> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.hash(state);
        self.0.derived.by_session.hash(state);
    }
}

impl<R: PartialEq> PartialEq for Shell<R> {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0 && self.0.derived.by_session == other.0.derived.by_session
    }
}

impl<R: Eq> Eq for Shell<R> {}
