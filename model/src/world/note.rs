//! What a step did, as the world records it for timelines and diagrams. The text of each note is
//! what the text timeline shows; the structure is what a diagram draws arrows from.

use super::{describe_input, describe_request, describe_result};
use crate::recipe::{Belief, Input, Mode};
use crate::{Request, SessionId, WatchedEvent, ZkResult};
use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Note {
    /// The client sent a request; the server's answer, unless the request was lost first.
    Request { request: Request, result: Option<ZkResult> },
    /// The server queued a watch notification for a session.
    Notified { session: SessionId, event: WatchedEvent },
    /// The server answered a reconnect's SetWatches with a catch-up event.
    CatchUp(WatchedEvent),
    /// The client handled a reply, an event or a state change.
    Handled(Input),
    /// The client's belief, or the mode it holds in, changed.
    Belief(Belief, Mode),
    /// The holder used the protected resource: a write, a read (a reader), or unfenced use (a
    /// lease holder, where `accepted` is always true).
    Write { token: i64, accepted: bool, mode: Mode },
    /// The server expired a session.
    Expired(SessionId),
    /// A connection, process or session event at the client.
    Client(String),
}

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Note::Request { request, result: Some(result) } => {
                write!(f, "-> {} = {}", describe_request(request), describe_result(result))
            }
            Note::Request { request, result: None } => write!(f, "-> {}", describe_request(request)),
            Note::Notified { session, event } => {
                write!(f, "   event {:?} {} queued for {session}", event.kind, event.path)
            }
            Note::CatchUp(event) => write!(f, "catch-up event {:?} {}", event.kind, event.path),
            Note::Handled(input) => f.write_str(&describe_input(input)),
            Note::Belief(Belief::Holding { token }, mode) => write!(f, "now HOLDING{} (token {token})", spaced(*mode)),
            Note::Belief(Belief::Suspended { token }, mode) => {
                write!(f, "now suspended{} (token {token})", spaced(*mode))
            }
            Note::Belief(other, _) => write!(f, "now {other:?}"),
            Note::Write { token, mode: Mode::Lease { max }, .. } => {
                write!(f, "uses the resource (one of {max} leases, token {token})")
            }
            Note::Write { token, mode: Mode::Take, .. } => write!(f, "processes item {token}"),
            Note::Write { mode: Mode::Barrier { .. }, .. } => f.write_str("works past the barrier"),
            Note::Write { token, accepted, mode: Mode::Read } => {
                write!(f, "resource {} read with token {token}", if *accepted { "serves" } else { "REFUSES stale" })
            }
            Note::Write { token, accepted, .. } => {
                write!(f, "resource {} token {token}", if *accepted { "accepts" } else { "REFUSES stale" })
            }
            Note::Expired(session) => write!(f, "server expires {session}"),
            Note::Client(text) => f.write_str(text),
        }
    }
}

/// The mode's label with a leading space, or nothing for a mutex.
fn spaced(mode: Mode) -> String {
    match mode.label() {
        label if label.is_empty() => label,
        label => format!(" {label}"),
    }
}
