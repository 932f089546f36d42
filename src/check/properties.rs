//! The properties a run is judged by (`zklab_model::Property`), in the form each part of the
//! checker needs. Safety properties are checked in every reachable state; transition
//! properties on every step taken; `reached:*` properties must each hold somewhere
//! (non-vacuity); `eventual_acquire` is checked on the state graph (deadlocks and fair cycles).

pub use zklab_model::property::{herd, Kind};
pub use zklab_model::{Property, Reach};
