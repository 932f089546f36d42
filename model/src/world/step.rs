//! The steps a world can take. A trace is a config plus a list of these.

use super::FaultKind;
use crate::recipe::ClientId;
use serde::{Deserialize, Serialize};
use std::fmt;

/// One atomic step. The number is the client it concerns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Step {
    /// The application asks for the lock.
    Acquire(ClientId),
    /// The holder writes to the protected resource with its fencing token.
    Write(ClientId),
    /// The holder gives the lock back.
    Release(ClientId),
    /// The client handles the next message from the server (reply, watch event, state change).
    Receive(ClientId),
    /// The client library reconnects, learning whether its session survived.
    Reconnect(ClientId),
    /// The server expires a session it has not heard from (after a partition, pause or crash).
    Expire(ClientId),
    /// A paused process resumes.
    Resume(ClientId),
    /// The lagging follower the client's connection is on catches up with the leader (see
    /// `FaultKind::LaggingSession`): not a fault, so every fair run takes it eventually.
    CatchUp(ClientId),
    /// An injected fault.
    Fault(FaultKind, ClientId),
    /// The client takes a step that sends a request, and the connection drops before the
    /// server applies it or after (losing the reply): the only moments a connection-loss fault
    /// changes anything.
    Lossy(FaultKind, Sending, ClientId),
}

/// The steps that can send a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Sending {
    Acquire,
    Release,
    Receive,
    Reconnect,
    /// The application gives up (the `give-up` fault), and its recipe deletes its node.
    GiveUp,
}

impl Sending {
    pub const ALL: [Sending; 5] =
        [Sending::Acquire, Sending::Release, Sending::Receive, Sending::Reconnect, Sending::GiveUp];

    /// The plain step this one is a lossy version of.
    pub fn step(self, client: ClientId) -> Step {
        match self {
            Sending::Acquire => Step::Acquire(client),
            Sending::Release => Step::Release(client),
            Sending::Receive => Step::Receive(client),
            Sending::Reconnect => Step::Reconnect(client),
            Sending::GiveUp => Step::Fault(FaultKind::GiveUp, client),
        }
    }
}

impl Step {
    /// Every step of client `i` that is not a fault, in the order the world lists them.
    pub fn of_client(i: ClientId) -> [Step; 8] {
        [
            Step::Acquire(i),
            Step::Write(i),
            Step::Release(i),
            Step::Receive(i),
            Step::Reconnect(i),
            Step::Expire(i),
            Step::Resume(i),
            Step::CatchUp(i),
        ]
    }

    pub fn client(self) -> ClientId {
        match self {
            Step::Acquire(c)
            | Step::Write(c)
            | Step::Release(c)
            | Step::Receive(c)
            | Step::Reconnect(c)
            | Step::Expire(c)
            | Step::Resume(c)
            | Step::CatchUp(c)
            | Step::Fault(_, c)
            | Step::Lossy(_, _, c) => c,
        }
    }
    /// The same step taken by client `to` instead.
    pub fn for_client(self, to: ClientId) -> Step {
        match self {
            Step::Acquire(_) => Step::Acquire(to),
            Step::Write(_) => Step::Write(to),
            Step::Release(_) => Step::Release(to),
            Step::Receive(_) => Step::Receive(to),
            Step::Reconnect(_) => Step::Reconnect(to),
            Step::Expire(_) => Step::Expire(to),
            Step::Resume(_) => Step::Resume(to),
            Step::CatchUp(_) => Step::CatchUp(to),
            // The server's own event stays where it is listed.
            Step::Fault(FaultKind::ReapParent, c) => Step::Fault(FaultKind::ReapParent, c),
            Step::Fault(kind, _) => Step::Fault(kind, to),
            Step::Lossy(kind, sending, _) => Step::Lossy(kind, sending, to),
        }
    }

    pub fn is_fault(self) -> bool {
        matches!(self, Step::Fault(..) | Step::Lossy(..))
    }

    /// The step in 32 bits, for a checker that keeps one per transition: the client in the low
    /// 16 (a checked world has a handful), then which step, its fault and its sending step.
    pub fn packed(self) -> u32 {
        let (tag, kind, sending) = match self {
            Step::Acquire(_) => (0, 0, 0),
            Step::Write(_) => (1, 0, 0),
            Step::Release(_) => (2, 0, 0),
            Step::Receive(_) => (3, 0, 0),
            Step::Reconnect(_) => (4, 0, 0),
            Step::Expire(_) => (5, 0, 0),
            Step::Resume(_) => (6, 0, 0),
            Step::CatchUp(_) => (7, 0, 0),
            Step::Fault(kind, _) => (8, kind.index(), 0),
            Step::Lossy(kind, sending, _) => (9, kind.index(), sending as usize),
        };
        debug_assert!(self.client() < 1 << 16, "a checked world has fewer clients");
        self.client() | (tag << 16) | ((kind as u32) << 20) | ((sending as u32) << 24)
    }

    /// The step `packed` gave these bits for.
    pub fn unpacked(bits: u32) -> Step {
        let client = bits & 0xffff;
        let kind = FaultKind::ALL[(bits >> 20 & 0xf) as usize];
        match bits >> 16 & 0xf {
            0 => Step::Acquire(client),
            1 => Step::Write(client),
            2 => Step::Release(client),
            3 => Step::Receive(client),
            4 => Step::Reconnect(client),
            5 => Step::Expire(client),
            6 => Step::Resume(client),
            7 => Step::CatchUp(client),
            8 => Step::Fault(kind, client),
            _ => Step::Lossy(kind, Sending::ALL[(bits >> 24 & 0x7) as usize], client),
        }
    }
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Step::Acquire(c) => write!(f, "acquire c{c}"),
            Step::Write(c) => write!(f, "write c{c}"),
            Step::Release(c) => write!(f, "release c{c}"),
            Step::Receive(c) => write!(f, "receive c{c}"),
            Step::Reconnect(c) => write!(f, "reconnect c{c}"),
            Step::Expire(c) => write!(f, "expire c{c}"),
            Step::Resume(c) => write!(f, "resume c{c}"),
            Step::CatchUp(c) => write!(f, "catch-up c{c}"),
            Step::Fault(kind, c) => write!(f, "FAULT {kind} c{c}"),
            Step::Lossy(kind, sending, c) => {
                let on = match sending {
                    Sending::Acquire => "acquire",
                    Sending::Release => "release",
                    Sending::Receive => "receive",
                    Sending::Reconnect => "reconnect",
                    Sending::GiveUp => "give-up",
                };
                write!(f, "FAULT {kind} on {on} c{c}")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_step_packs_into_32_bits_and_back() {
        let mut steps = Vec::new();
        for client in [0, 1, 7, 65_535] {
            steps.extend(Step::of_client(client));
            for kind in FaultKind::ALL {
                steps.push(Step::Fault(kind, client));
                steps.extend(Sending::ALL.map(|sending| Step::Lossy(kind, sending, client)));
            }
        }
        let packed: std::collections::BTreeSet<u32> = steps.iter().map(|s| s.packed()).collect();
        assert_eq!(packed.len(), steps.len(), "no two steps pack alike");
        for step in steps {
            assert_eq!(Step::unpacked(step.packed()), step);
        }
    }
}
