//! One client of the world: its recipe, its session and connection, and the two FIFO channels
//! between it and the server.

use super::RequestFault;
use crate::cache::client::ClientCache;
use crate::recipe::{Belief, Input, Recipe};
use crate::{ClientWatches, Request, SessionId};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// The client's connection to the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Link {
    Up,
    /// Dropped; the library is reconnecting.
    Down,
    /// Cut off for longer than the session timeout: no reconnect until the server has expired
    /// the session.
    Partitioned,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Client<R> {
    pub recipe: R,
    pub session: SessionId,
    pub link: Link,
    pub paused: bool,
    pub crashed: bool,
    /// Requests queued while the connection is down (sent, and applied, on reconnect).
    pub outbound: VecDeque<Request>,
    /// Replies, watch events and state events not yet handled by the recipe (server to client:
    /// one channel, as on a real TCP connection).
    pub inbound: VecDeque<Input>,
    pub watches: ClientWatches,
    /// The server's zxid when the connection dropped, which SetWatches compares against on
    /// reconnect. The Java client sends the last zxid it saw; every watched change before the
    /// drop has already fired while connected, so both give the same catch-up events, and this
    /// one does not tell apart states by which reply a client saw last.
    pub drop_zxid: i64,
    pub rounds_left: u8,
    /// The recipe has handled the Disconnected event of the current outage.
    pub noticed_disconnect: bool,
    /// The current holder has written to the resource.
    pub wrote: bool,
    /// The current hold's position in ZooKeeper's lock order (its node's czxid); 0 when not
    /// holding.
    pub grant: i64,
    /// Every node under the lock path this client created in its current attempt, with its
    /// creation zxid (the latest, if it created one path twice): the ground truth of its place
    /// in lock order, kept because a client may come to believe it holds after its node is gone
    /// (a stale reply handled after its session expired), and a recipe may create other nodes
    /// after its lock node (a registration, a node below its own).
    pub created: Vec<(String, i64)>,
    /// A connection-loss fault waiting for the client's next request.
    pub armed: Option<RequestFault>,
    /// The connection is to a lagging follower (`lagging-session`) until it drops.
    pub lagging: bool,
    /// What the recipe was handed since it last started, for renumbering it by replay (see
    /// `replay`); not part of the client's identity.
    pub handed: super::handed::Handed<R>,
    /// What this client remembers only to be fast (its numbers, its digest, its situation's
    /// digest): never part of its identity.
    pub cache: ClientCache,
}

impl<R: std::hash::Hash> Client<R> {
    /// What the client's hash is in a world's (see `Clients`' `Hash`).
    pub fn digest(&self) -> u128 {
        *self.cache.digest.get_or_init(|| crate::cache::memo::digest(self))
    }

    /// What a checker's interner files this client at index `i` under: its digest, and which
    /// inputs its recipe was handed when the run renumbers by replay (see `replay`), so that the
    /// copy a state is handed is the same whichever thread met it first.
    pub fn interned_as(&self, i: usize) -> (usize, u128, u128) {
        (i, self.digest(), self.handed.digest())
    }

    /// The digest of what the client's recipe does next, and how it is renamed or renumbered,
    /// depends on besides the client's number: its session, its recipe's state, the input it
    /// handles next, and which of the application's inputs it can be handed (acquire, write,
    /// release, giving up: the link, whether it wrote, rounds left, a pause or crash). A
    /// checker checks a recipe's claims once per situation; memoized, a client shared between
    /// many states is digested once.
    pub fn situation(&self) -> u128 {
        *self.cache.situation.get_or_init(|| {
            let handed = (self.link, self.wrote, self.rounds_left > 0, self.paused, self.crashed);
            // A replayed recipe is renumbered from its inputs, which the claim's copies of a
            // state are made of: they are part of its situation (0 when none are kept).
            let inputs = self.handed.digest();
            crate::cache::memo::digest(&(self.session, &self.recipe, self.inbound.front(), handed, inputs))
        })
    }
}

impl<R: Recipe> Client<R> {
    pub fn new(recipe: R, session: SessionId, rounds: u8) -> Self {
        Client {
            recipe,
            session,
            link: Link::Up,
            paused: false,
            crashed: false,
            outbound: VecDeque::new(),
            inbound: VecDeque::new(),
            watches: ClientWatches::default(),
            drop_zxid: 0,
            rounds_left: rounds,
            noticed_disconnect: false,
            wrote: false,
            grant: 0,
            created: Vec::new(),
            armed: None,
            lagging: false,
            handed: Default::default(),
            cache: ClientCache::default(),
        }
    }

    pub fn belief(&self) -> Belief {
        self.recipe.belief()
    }

    /// Can take steps of its own (not crashed, not paused).
    pub fn runs(&self) -> bool {
        !self.crashed && !self.paused
    }

    /// Believes it holds the lock and is alive to act on it. A crashed process holds nothing:
    /// what its recipe last believed is gone with it. (Its node and session are ZooKeeper's,
    /// and stay until the server expires the session.)
    pub fn holds(&self) -> bool {
        !self.crashed && self.belief().is_holding()
    }

    /// Waits for the lock (a crashed client waits for nothing).
    pub fn is_waiting(&self) -> bool {
        !self.crashed && self.belief() == Belief::Acquiring
    }
}
