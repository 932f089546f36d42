//! What a step leaves beside the state it leads to: facts about the step itself that whoever
//! drives the world reads (the simulator schedules deliveries to the clients it notified, the
//! checker judges the herd and the delete-before-watch race on steps, settling refuses after a
//! step that could revive a forgotten watch). None of it is part of the state: two steps into
//! one state may leave different things.

use super::RefusedReply;
use crate::recipe::ClientId;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StepOutputs {
    /// The clients the step queued a watch notification for, in the order it queued them.
    pub(crate) routed: Vec<ClientId>,
    /// The reply the step's client refused for its length, if any.
    pub(crate) refused: Option<RefusedReply>,
    /// Why the step could make a forgotten dead watch's name again, if it could (see
    /// `reduce::dead_watches`).
    pub(crate) revived: Option<String>,
    /// The step met the delete-before-watch race (see `World::predecessor_went`).
    pub(crate) predecessor_went: bool,
    /// The step addressed a watch notification to a client other than its own, delivered or
    /// not: whether it was delivered depends on that client's connection, so what the step did
    /// depends on more than its own client and the server.
    pub(crate) notified_another: bool,
}

impl StepOutputs {
    /// Why the step could make a forgotten dead watch's name again, if it could.
    pub fn revived(&self) -> Option<&str> {
        self.revived.as_deref()
    }

    /// Whether the step addressed a watch notification to a client other than its own (see
    /// the field).
    pub fn notified_another(&self) -> bool {
        self.notified_another
    }
}
