//! The properties a run is judged by (`zklab_model::Property`), in the form each part of the
//! checker needs. Safety properties are checked in every reachable state; transition
//! properties on every step taken; `reached:*` properties must each hold somewhere
//! (non-vacuity); `eventual_acquire` is checked on the state graph (deadlocks and fair cycles).

use super::model::WorldModel;
use stateright::Property as StaterightProperty;
use zklab_model::{Recipe, World};

pub use zklab_model::property::{herd, Kind};
pub use zklab_model::{Property, Reach};

/// How stateright calls a property: a plain function of the model and a state.
type Evaluator<R> = fn(&WorldModel<R>, &World<R>) -> bool;

fn eval<R: Recipe, const I: usize>(model: &WorldModel<R>, world: &World<R>) -> bool {
    model.properties[I].holds(world)
}

/// The same properties in stateright's form. Its properties are plain function pointers, so
/// each predicate is reached through its index in `WorldModel::properties`.
pub fn for_stateright<R: Recipe>(properties: &[Property]) -> Vec<StaterightProperty<WorldModel<R>>> {
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
