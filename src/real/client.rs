//! What the driver keeps for each real client: the recipe it runs, its session and connection,
//! its requests on the wire and its queues, and the state of the faults striking it. The client
//! library (`library`), the faults (`faults`) and the lagging moves (`session_moves`) act on it.

use super::connection::{Arrival, Connection};
use std::collections::VecDeque;
use std::sync::mpsc::Receiver;
use std::time::Instant;
use zklab_model::world::Link;
use zklab_model::{ClientWatches, Input, Request, RequestFault, SessionId, WatchKind};

/// A request on the wire, waiting for its reply.
pub(super) struct Flight {
    pub(super) xid: i32,
    pub(super) request: Request,
    /// The entry that sent it, and which of its requests it is.
    pub(super) entry: u64,
    pub(super) index: usize,
    /// A loss-after-apply: its reply is read and swallowed, and the connection drops.
    pub(super) swallow: bool,
}

/// A connection about to drop, waiting for the frame that bars it.
pub(super) struct Cut {
    pub(super) why: CutKind,
    /// The entry whose barrier it is (none for a swallowed reply, which is its own).
    pub(super) entry: Option<u64>,
    /// Requests that fail with ConnectionLoss once it drops, in order.
    pub(super) lost: Vec<Request>,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum CutKind {
    /// Reconnects after a back-off.
    Drop,
    /// Stays away until its session is closed.
    Partition,
    Crash,
    /// The session moves to server `to` at once, unseen by the recipe (`session_moves`); the
    /// cut's requests go out there.
    Move {
        to: usize,
    },
}

pub(super) struct RealClient<R> {
    pub(super) recipe: R,
    /// What the recipe runs as: the driver's number for its real session.
    pub(super) session: SessionId,
    pub(super) real_session: i64,
    pub(super) password: Vec<u8>,
    pub(super) conn: Option<Connection>,
    pub(super) generation: u64,
    pub(super) server: usize,
    pub(super) link: Link,
    pub(super) crashed: bool,
    pub(super) rounds_left: u8,
    pub(super) wrote: bool,
    pub(super) in_flight: VecDeque<Flight>,
    pub(super) outbound: VecDeque<Request>,
    pub(super) inbound: VecDeque<Input>,
    pub(super) cut: Option<Cut>,
    pub(super) pings: u32,
    pub(super) last_zxid: i64,
    pub(super) last_sent: Instant,
    pub(super) watches: ClientWatches,
    /// Notifications before this reconnect's SetWatches reply are its catch-up events.
    pub(super) catching_up: bool,
    /// The reconnect whose SetWatches reply places it.
    pub(super) reconnected_entry: Option<u64>,
    /// The recipe has been handed the Disconnected of the current outage.
    pub(super) noticed_disconnect: bool,
    pub(super) reconnecting: bool,
    /// A loss planned for the client's next request.
    pub(super) armed: Option<RequestFault>,
    /// While the client is cut off (expire, crash), a second connection that holds its session
    /// open, so that the server expires it only when the driver closes it, never on its own.
    pub(super) keeper: Option<(Connection, Receiver<Arrival>)>,
    pub(super) asked_at: Option<Instant>,
    /// The process is paused (`pause`): it takes no step and sends nothing, not even a ping,
    /// until it resumes; what arrives meanwhile waits for it.
    pub(super) paused: bool,
    /// The server has closed the session (the driver expired it); a new handle opens another.
    pub(super) closed: bool,
    /// The connection is on the lagging follower, for this fault (`session_moves`).
    pub(super) lag: Option<RequestFault>,
    pub(super) on_follower: bool,
    /// A `lagging-read` step's requests after its first, sent once the session is back.
    pub(super) lag_rest: Option<(u64, Vec<Request>)>,
}

impl<R> RealClient<R> {
    /// The paths the library holds data, exist and child watches on: what SetWatches re-arms on
    /// a new connection.
    pub(super) fn watched(&self) -> (Vec<String>, Vec<String>, Vec<String>) {
        let paths = |kind: WatchKind| -> Vec<String> {
            self.watches.to_vec().into_iter().filter(|(_, k)| *k == kind).map(|(p, _)| p).collect()
        };
        (paths(WatchKind::Data), paths(WatchKind::Exist), paths(WatchKind::Child))
    }
}
