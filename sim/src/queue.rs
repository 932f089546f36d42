//! The event queue: events in virtual-time order, ties in the order they were scheduled, so the
//! order never depends on anything but the run's own history.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use zklab_model::{ClientId, FaultKind};

/// Virtual time, in microseconds since the run began.
pub type Micros = u64;

/// Something that happens to one client at a moment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Event {
    /// The application asks for the lock.
    Acquire(ClientId),
    /// The next message in the client's inbound channel reaches the recipe.
    Deliver(ClientId),
    /// The holder uses the protected resource.
    Write(ClientId),
    /// The holder is done.
    Release(ClientId),
    /// The client library tries to reconnect.
    Reconnect(ClientId),
    /// The server's session tracker expires the client's session.
    ServerExpire(ClientId),
    /// A paused process runs again.
    Resume(ClientId),
    /// The lagging follower the client is connected to catches up.
    CatchUp(ClientId),
    /// A timed fault strikes.
    Fault(FaultKind, ClientId),
}

#[derive(Default)]
pub struct EventQueue {
    heap: BinaryHeap<Reverse<(Micros, u64, Event)>>,
    scheduled: u64,
}

impl EventQueue {
    pub fn push(&mut self, at: Micros, event: Event) {
        self.heap.push(Reverse((at, self.scheduled, event)));
        self.scheduled += 1;
    }

    pub fn pop(&mut self) -> Option<(Micros, Event)> {
        self.heap.pop().map(|Reverse((at, _, event))| (at, event))
    }
}
