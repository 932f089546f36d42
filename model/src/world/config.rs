//! How a world is set up: the server, the lock path, the client library behaviour, how many
//! rounds each client plays and which faults may happen how often.

use crate::{ClientBehaviour, ServerConfig};
use serde::{Deserialize, Serialize};
use std::fmt;

/// The fault vocabulary. Each is bounded per run by its own budget and can be switched off.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FaultKind {
    /// The connection drops with a request sent but not yet applied.
    LossBeforeApply,
    /// The server applies a request, then the connection drops before the reply arrives.
    LossAfterApply,
    /// The connection drops; the client reconnects within the session timeout.
    Disconnect,
    /// The client is cut off past its session timeout: the server expires the session, and the
    /// client learns of it when it reconnects.
    Expire,
    /// The client process dies; its session lingers until the server expires it.
    Crash,
    /// The client process stops (a GC pause) and later resumes, acting on what it believed.
    Pause,
    /// A read is answered by a follower that lags behind the leader: it sees an older state,
    /// though never older than what its session has already seen (a new session, after an
    /// expiry, has seen nothing).
    LaggingRead,
    /// The follower the client is connected to falls behind the leader and stays behind until
    /// it catches up (`Step::CatchUp`, a fair step) or the connection drops: the read the step
    /// sends and every read after it on this connection see the state just before the latest
    /// write, though never older than what the session has seen (its own writes included). Struck
    /// at a step that reads first; the new handle after an expiry is one, and its first listing is
    /// what CURATOR-498 and CURATOR-696 see stale.
    LaggingSession,
    /// The lock's parent is a container (as Curator creates it) and the server's container
    /// manager deletes it once it has had children and has none left.
    ReapParent,
    /// The application stops waiting for the lock (a timeout, a cancelled task, an unlock
    /// while waiting): the recipe is handed `Input::Abandon`. Not a failure of ZooKeeper, but an
    /// event from outside the recipe, bounded like one; only recipes that can give up take it.
    GiveUp,
}

impl FaultKind {
    /// How many kinds there are.
    pub const COUNT: usize = 10;

    pub const ALL: [FaultKind; FaultKind::COUNT] = [
        FaultKind::LossBeforeApply,
        FaultKind::LossAfterApply,
        FaultKind::Disconnect,
        FaultKind::Expire,
        FaultKind::Crash,
        FaultKind::Pause,
        FaultKind::LaggingRead,
        FaultKind::ReapParent,
        FaultKind::GiveUp,
        FaultKind::LaggingSession,
    ];

    pub fn name(self) -> &'static str {
        match self {
            FaultKind::LossBeforeApply => "loss-before-apply",
            FaultKind::LossAfterApply => "loss-after-apply",
            FaultKind::Disconnect => "disconnect",
            FaultKind::Expire => "expire",
            FaultKind::Crash => "crash",
            FaultKind::Pause => "pause",
            FaultKind::LaggingRead => "lagging-read",
            FaultKind::ReapParent => "reap-parent",
            FaultKind::GiveUp => "give-up",
            FaultKind::LaggingSession => "lagging-session",
        }
    }

    /// Connection loss and lagging reads strike the request a step sends (taken as
    /// `Step::Lossy`).
    pub fn strikes_a_request(self) -> bool {
        matches!(
            self,
            FaultKind::LossBeforeApply | FaultKind::LossAfterApply | FaultKind::LaggingRead | FaultKind::LaggingSession
        )
    }

    /// A lagging follower answers reads (a single read, or a whole connection's).
    pub fn lags(self) -> bool {
        matches!(self, FaultKind::LaggingRead | FaultKind::LaggingSession)
    }

    pub fn index(self) -> usize {
        FaultKind::ALL.iter().position(|k| *k == self).expect("listed")
    }

    pub fn parse(name: &str) -> Option<FaultKind> {
        FaultKind::ALL.into_iter().find(|k| k.name() == name)
    }
}

impl fmt::Display for FaultKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How many times each fault may happen in one run (0: never), in `FaultKind::ALL` order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct FaultBudget(pub [u32; FaultKind::COUNT]);

/// How many kinds the first traces listed; every budget lists at least these.
const FIRST_KINDS: usize = 8;

/// Written up to its last allowed kind, and at least the first kinds: a kind added later is
/// listed last, so a budget that does not allow it is written as before, and a trace stays
/// byte for byte what it was.
impl Serialize for FaultBudget {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let used = self.0.iter().rposition(|n| *n > 0).map_or(0, |last| last + 1);
        self.0[..used.max(FIRST_KINDS)].serialize(serializer)
    }
}

/// A budget written before a fault kind existed lists fewer kinds: the missing ones are 0, so
/// older traces still load.
impl<'de> Deserialize<'de> for FaultBudget {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let counts = Vec::<u32>::deserialize(deserializer)?;
        if counts.len() > FaultKind::COUNT {
            return Err(serde::de::Error::invalid_length(counts.len(), &"at most one count per fault kind"));
        }
        let mut budget = [0; FaultKind::COUNT];
        budget[..counts.len()].copy_from_slice(&counts);
        Ok(FaultBudget(budget))
    }
}

impl FaultBudget {
    pub fn none() -> Self {
        FaultBudget([0; FaultKind::COUNT])
    }
    /// Each of `kinds` once.
    pub fn once(kinds: &[FaultKind]) -> Self {
        let mut budget = FaultBudget::none();
        for kind in kinds {
            budget.0[kind.index()] = 1;
        }
        budget
    }
    pub fn get(&self, kind: FaultKind) -> u32 {
        self.0[kind.index()]
    }
    pub fn enabled(&self) -> Vec<FaultKind> {
        FaultKind::ALL.into_iter().filter(|k| self.get(*k) > 0).collect()
    }
}

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
    /// (see `crate::renumber`): on, except to compare against the full graph. It takes effect
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
