//! The contract between a lock recipe and whatever runs it (the checker, the simulator, a real
//! client). A recipe is sans-IO: it gets one input at a time and answers with the requests it
//! sends next. It never reads a clock or a random number, so every run of it can be replayed.

use crate::{Numbers, Property, Renamer, Renaming, Renumber, Request, SessionId, SessionState, WatchedEvent, ZkResult};
use serde::{Deserialize, Serialize};
use std::fmt::Debug;
use std::hash::Hash;

/// One thing that happens to a client.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Input {
    /// The application asks for the lock.
    Acquire,
    /// The application gives the lock back.
    Release,
    /// The application stops waiting for the lock: its acquire timed out, its task was
    /// cancelled, or it unlocked while waiting (ZooKeeper's `WriteLock.unlock()` lets it). Only
    /// handed to a recipe whose `can_abandon` says so (the `give-up` fault).
    Abandon,
    /// The reply to a request this recipe sent, with the request it answers.
    Reply { request: Request, result: ZkResult },
    /// A one-shot watch fired.
    Watch(WatchedEvent),
    /// The connection changed state (delivered to every watcher, so once to the recipe).
    State(SessionState),
}

/// A client's number in its world. Wide enough for the simulator's thousands of clients; the
/// checker explores a handful.
pub type ClientId = u32;

/// Who the recipe is running as. The session changes when an expired session is replaced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ctx {
    pub client: ClientId,
    pub session: SessionId,
}

/// What the recipe believes, which is what the application acts on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Belief {
    /// Not holding and ready to acquire.
    Idle,
    /// Waiting for the lock.
    Acquiring,
    /// Holds the lock; `token` is the fencing token to present to the protected resource.
    Holding { token: i64 },
    /// Held the lock when the connection dropped: it may be lost, so the application pauses.
    Suspended { token: i64 },
    /// Giving the lock back (the delete may still be in flight).
    Releasing,
}

impl Belief {
    pub fn is_holding(self) -> bool {
        matches!(self, Belief::Holding { .. })
    }
}

/// Which kind of hold a client asks for or holds: what a belief of holding is about. Holders
/// are compatible when they are all readers, or all lease holders and no more than the
/// smallest `max` among them; an exclusive or write holder is compatible with nobody.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// The one holder of a mutex.
    Exclusive,
    /// The write side of a read/write lock: excludes everyone, like a mutex.
    Write,
    /// The read side of a read/write lock: shared with other readers.
    Read,
    /// One of at most `max` leases of a counting semaphore.
    Lease { max: u8 },
    /// A party of a barrier of `parties`: holding is having passed it (entering is asking).
    /// Any number pass together; `barrier_waits` says none passes before `parties` entered.
    Barrier { parties: u8 },
    /// A consumer of a queue: holding is processing one item, whose token is the item's
    /// sequence number. Consumers process different items at once; `taken_at_most_once` says
    /// no item is processed twice.
    Take,
}

impl Mode {
    /// Whether `holders` may all hold at once.
    pub fn compatible(holders: &[Mode]) -> bool {
        if holders.len() <= 1 {
            return true;
        }
        if holders.iter().all(|m| matches!(m, Mode::Read | Mode::Barrier { .. } | Mode::Take)) {
            return true;
        }
        let leases: Option<Vec<u8>> =
            holders.iter().map(|m| if let Mode::Lease { max } = m { Some(*max) } else { None }).collect();
        leases.is_some_and(|maxes| maxes.iter().all(|max| holders.len() <= usize::from(*max)))
    }

    /// Whether the mode writes to the protected resource under a fencing token (readers read
    /// under one; lease holders share the resource, so one token order cannot fence them).
    pub fn is_fenced(self) -> bool {
        !matches!(self, Mode::Lease { .. } | Mode::Barrier { .. } | Mode::Take)
    }

    /// How a timeline names the mode; empty for a mutex, whose timelines predate modes.
    pub fn label(self) -> String {
        match self {
            Mode::Exclusive => String::new(),
            Mode::Write => "write".to_string(),
            Mode::Read => "read".to_string(),
            Mode::Lease { max } => format!("lease of {max}"),
            Mode::Barrier { parties } => format!("barrier of {parties}"),
            Mode::Take => "item".to_string(),
        }
    }
}

/// A recipe's `Hash` must write everything its `Eq` compares: a checker takes two states (and two
/// clients) with the same 128-bit digest for one, within the collision bound it reports.
pub trait Recipe: Clone + Debug + Eq + Hash + Send + Sync + 'static {
    /// The recipe's registry name (with its variant, if any).
    fn name(&self) -> String;
    /// Handles one input, pushing the requests to send, in order, onto `out`.
    fn handle(&mut self, ctx: &Ctx, input: Input, out: &mut Vec<Request>);
    fn belief(&self) -> Belief;
    /// The kind of hold the recipe asks for, and while holding, the kind it holds (a writer
    /// that downgrades turns from `Write` into `Read` while it holds).
    fn mode(&self) -> Mode {
        Mode::Exclusive
    }
    /// The lock node this client believes it owns, if any (for the orphan check).
    fn owned_node(&self) -> Option<&str>;
    /// Every node under the lock path this client believes it owns (a semaphore's lease and its
    /// inner lock node; a downgrading writer's write and read nodes), for the orphan check.
    fn owned_nodes(&self) -> Vec<&str> {
        self.owned_node().into_iter().collect()
    }
    /// Whether the recipe waits on one node it has listed or checked, so that the node can
    /// vanish between the listing and the watch: the delete-before-watch race must then be
    /// reached for a proof to count.
    fn waits_on_one_node(&self) -> bool {
        false
    }
    /// Whether `property` says something about this recipe, so that a run judges it. By
    /// default every property does: they are written for locks whose holders each own an
    /// ephemeral node under the lock path (a sequential-node lock, a leader election, a
    /// semaphore). A recipe outside that shape says which do not fit it, and a run reports them
    /// `not applicable`, never `holds`. An optimistic lock on a node's data version owns no
    /// ephemeral node, so `zk_exclusion`, `stale_holder`, `fencing_available` and `no_orphans`
    /// (each about a holder's own ephemeral node) say nothing of it. A property a run finds
    /// vacuous is no reason to say no: that is what the `reached:*` items are for.
    fn applies(&self, _property: Property) -> bool {
        true
    }
    /// Whether the application may ask for the lock again while the recipe answers from a local
    /// count, sending nothing (a re-entrant acquire, as Curator's `InterProcessMutex` counts
    /// them per thread). The world then enables `Step::Acquire` whatever the belief, and the
    /// acquire spends no round. A recipe bounds its own nesting by saying no.
    fn accepts_reentry(&self) -> bool {
        false
    }
    /// Whether the application may stop waiting now (the `give-up` fault hands the recipe
    /// `Input::Abandon`): a recipe that implements giving up says so where its source lets the
    /// application do it. Only asked while the client waits.
    fn can_abandon(&self) -> bool {
        false
    }
    /// For symmetry reduction, which is opt-in: this recipe's state with the clients' roles
    /// swapped as `r` says, or `None` if the recipe does not support it. A recipe may support it
    /// if it writes a client's identity only into the names of its lock nodes (renamed by
    /// `rename_name`) and never orders contenders by those identities.
    fn renamed(&self, _r: &Renamer) -> Option<Self> {
        None
    }
    /// One of the lock's child names with the clients' roles swapped as `r` says. Only called
    /// when `renamed` supports symmetry.
    fn rename_name(&self, name: &str, _r: &Renaming) -> String {
        name.to_string()
    }
    /// For renumbering (see `crate::reduce::renumber`): this recipe's state with its numbers
    /// renumbered by `r` (`client` is its client's index, for numbers private to it), or `None`
    /// if the recipe does not write it. A recipe may write it if it only compares sequence
    /// numbers, zxids and its private counters with one another (never with a constant, never
    /// near the 32-bit wrap), never reads a stat's cversion or version, and passes every such
    /// number it keeps through `r`. A recipe that does not write it is renumbered by replay
    /// instead, unless it says no (`renumbered_by_replay`).
    fn renumbered(&self, _client: ClientId, _r: &Renumber) -> Option<Self> {
        None
    }
    /// Whether, when `renumbered` says `None`, the checker may renumber this recipe by replay:
    /// a fresh copy of the recipe as it last started is handed again every input this one was
    /// handed since, with their numbers renumbered (see `crate::reduce::world::replay`). Nothing to
    /// write: it is right for a recipe that only compares sequence numbers and zxids with one
    /// another, which is checked on the explored states as a claim, as a written `renumbered`
    /// is, and refused (the run judged again without renumbering) for one that does not. A
    /// recipe that reads a number's value (a threshold, `seq == 0`) may say no to spare the
    /// checker finding that out. Replay compares the state it rebuilds with the real one as
    /// `Debug` prints them with their digits masked, so `Debug` must print the whole state
    /// (the derived one does).
    fn renumbered_by_replay(&self) -> bool {
        true
    }
    /// One of the lock's child names with its numbers renumbered: by default its sequence
    /// suffix. Only called when `renumbered` supports renumbering.
    fn renumber_name(&self, name: &str, n: &Numbers) -> String {
        n.sequential_name(name)
    }
    /// A node's data under the lock path with its numbers renumbered, or `None` if the recipe
    /// cannot say what it holds (then the state is kept as it is: see `Numbers::opaque`). By
    /// default only empty data is understood. A recipe whose data carries no sequence number
    /// or zxid (a client id) returns it unchanged. Only called when `renumbered` supports
    /// renumbering.
    fn renumber_data(&self, data: &str, _n: &Numbers) -> Option<String> {
        data.is_empty().then(String::new)
    }
    /// A fencing token this recipe handed out (see `belief`), renumbered: by default it is the
    /// sequence number of the recipe's node. Only called when `renumbered` supports
    /// renumbering.
    fn renumber_token(&self, token: i64, n: &Numbers) -> i64 {
        n.seq(token)
    }
}
