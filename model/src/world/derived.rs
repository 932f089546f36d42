//! What a world carries beside its state: fixed for a run, derived from the state, or left by
//! the last step for whoever drives the world. None of it is part of the state, so a `Derived`
//! hashes to nothing and equals every other, and `World` derives `Hash` and `Eq` over all of
//! its fields: a field added to `World` is part of the state unless it is added here instead.

use super::{StepOutputs, WorldConfig};
use crate::recipe::ClientId;
use crate::SessionId;
use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

#[derive(Clone, Debug)]
pub(crate) struct Derived {
    /// Shared, and never changes within a run.
    pub(crate) config: Arc<WorldConfig>,
    /// The session opened for client 0 (client `i` got the `i`-th after it). Fixed for a run.
    pub(crate) first_session: SessionId,
    /// The clients may be renamed into one another (see `symmetry`). Fixed for a run, unless
    /// replay finds a recipe that renumbers by hand (`keep_inputs_for_replay`).
    pub(crate) interchangeable: bool,
    /// Every client runs the same recipe (by name), which renumbering needs. Fixed for a run.
    pub(crate) one_recipe: bool,
    /// Which client each live handle's session belongs to: derived from the clients; it spares
    /// routing a walk over thousands of clients.
    pub(crate) by_session: Arc<BTreeMap<SessionId, ClientId>>,
    /// What the last step left beside the state (see `StepOutputs`).
    pub(crate) outputs: StepOutputs,
    /// The client whose step is being taken (none for a server event), which `StepOutputs` tells
    /// other clients' notifications apart from.
    pub(crate) acting: Option<ClientId>,
}

impl Hash for Derived {
    fn hash<H: Hasher>(&self, _: &mut H) {}
}

impl PartialEq for Derived {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for Derived {}
