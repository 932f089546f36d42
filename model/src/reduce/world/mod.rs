//! The world's side of the checker's reductions (see `crate::reduce`): partial order (a client's
//! invisible step taken alone), symmetry (a state's class representative), renumbering (a
//! state settled with its numbers ranked), dead watches forgotten, and renumbering by replay
//! for recipes that do not renumber themselves. `World::apply` and `World::steps`, ZooKeeper's
//! side, never call them.

pub(super) mod dead_watches;
pub(super) mod partial_order;
pub(super) mod renumber;
pub mod replay;
pub(super) mod symmetry;
