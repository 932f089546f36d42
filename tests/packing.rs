//! The checker's frontier keeps each state as a shell shared between states plus its clients
//! (`zklab_model::world::Shell`). A state put back together must be the state taken apart:
//! equal, and behaving the same on every step, including where a notification is routed by
//! session to a client that has changed sessions since the shell was first met.

use crate::common;
use common::reachable;
use zklab::scenario::Scenario;
use zklab_model::{FaultBudget, FaultKind, World, WorldConfig};
use zklab_recipes::AnyRecipe;

fn world(recipe: &str, clients: usize, faults: &[FaultKind]) -> World<AnyRecipe> {
    let config = WorldConfig { faults: FaultBudget::once(faults), ..WorldConfig::default() };
    Scenario::new(recipe, clients, config).unwrap().world()
}

#[test]
fn a_state_taken_apart_and_put_back_together_is_the_same_state() {
    let faults = [FaultKind::Expire, FaultKind::LossAfterApply, FaultKind::Crash, FaultKind::Disconnect];
    let states = reachable(world("standard", 3, &faults), 4_000);
    assert!(states.len() >= 4_000, "enough states: {}", states.len());
    let mut renewed_sessions = 0;
    for state in &states {
        let (shell, clients) = state.clone().into_shell();
        let back = shell.with(clients.clone());
        assert_eq!(&back, state);
        assert_eq!(back.clone().into_shell().0, shell, "the same shell, session index included");
        renewed_sessions += usize::from(
            state.coverage.expired && state.clients.iter().any(|c| c.session != states[0].clients[0].session),
        );
        for step in state.steps() {
            let (mut a, mut b) = (state.clone(), back.clone());
            a.apply(step).unwrap();
            b.apply(step).unwrap();
            assert_eq!(a, b, "step {step}");
            assert_eq!(a.routed(), b.routed(), "step {step} routes its notifications to the same clients");
        }
    }
    assert!(renewed_sessions > 0, "some states have a client on a new session after an expiry");
}
