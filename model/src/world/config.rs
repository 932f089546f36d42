//! How a world is set up: the server, the lock path, the client library behaviour, how many
//! rounds each client plays and which faults may happen how often.

use super::FaultBudget;
use crate::{ClientBehaviour, ServerConfig};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct WorldConfig {
    pub server: ServerConfig,
    /// The lock's parent node, created before the clients start.
    pub lock_path: String,
    /// The value of the lock parent's sequence counter at the start.
    pub first_sequence: i32,
    pub client_behaviour: ClientBehaviour,
    pub session_timeout_ms: u32,
    /// How many times each client acquires and releases; `UNBOUNDED_ROUNDS` (255): forever.
    pub rounds: u8,
    pub faults: FaultBudget,
    /// The Java client's `jute.maxbuffer`: a reply frame longer than this fails its connection
    /// (see `ClientBehaviour::max_reply_bytes`). Unset: no limit. The simulator sets the
    /// client's own default (`JAVA_MAX_PACKET_BYTES`), which its herds of thousands reach; the
    /// checker's worlds of a few clients never come near it, and a limit makes names' lengths
    /// matter, which renaming (symmetry) and renumbering change: with one set, neither applies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jute_maxbuffer: Option<u32>,
    /// Whether the checker may keep states with their sequence numbers and zxids renumbered
    /// (see `crate::reduce::renumber`): on, except to compare against the full graph. It takes effect
    /// only where it is sound (see `World::renumbered`).
    #[serde(default = "on", skip_serializing_if = "is_on")]
    pub renumber: bool,
}

fn on() -> bool {
    true
}

fn is_on(b: &bool) -> bool {
    *b
}

impl Default for WorldConfig {
    fn default() -> Self {
        WorldConfig {
            server: ServerConfig::default(),
            lock_path: "/lock".to_string(),
            first_sequence: 0,
            client_behaviour: ClientBehaviour::Java,
            session_timeout_ms: 4000,
            rounds: 1,
            faults: FaultBudget::none(),
            jute_maxbuffer: None,
            renumber: true,
        }
    }
}
