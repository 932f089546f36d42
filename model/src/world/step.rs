//! The steps a world can take. A trace is a config plus a list of these.

use super::{ClientFault, Fault, FaultKind, RequestFault, ServerEvent};
use crate::recipe::ClientId;
use serde::{Deserialize, Serialize};
use std::fmt;

/// One atomic step. The number is the client it concerns; a server event concerns none.
/// Written as it was before faults were typed (`StepAsWritten`), so traces read the same.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(into = "StepAsWritten", try_from = "StepAsWritten")]
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
    /// A fault strikes the client (see `world::faults`).
    Fault(ClientFault, ClientId),
    /// The client takes a step that sends a request, and a fault strikes the request: the
    /// connection drops before the server applies it or after (losing the reply), or a lagging
    /// follower answers it. The only moments those faults change anything.
    Lossy(RequestFault, Sending, ClientId),
    /// The server's own event, on no client's behalf.
    Server(ServerEvent),
}

/// How a step is written in a trace: every fault as `fault` (a server event under client 0)
/// but those that strike a request, as `lossy`.
#[derive(Clone, Copy, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
enum StepAsWritten {
    Acquire(ClientId),
    Write(ClientId),
    Release(ClientId),
    Receive(ClientId),
    Reconnect(ClientId),
    Expire(ClientId),
    Resume(ClientId),
    CatchUp(ClientId),
    Fault(FaultKind, ClientId),
    Lossy(FaultKind, Sending, ClientId),
}

impl From<Step> for StepAsWritten {
    fn from(step: Step) -> Self {
        match step {
            Step::Acquire(c) => StepAsWritten::Acquire(c),
            Step::Write(c) => StepAsWritten::Write(c),
            Step::Release(c) => StepAsWritten::Release(c),
            Step::Receive(c) => StepAsWritten::Receive(c),
            Step::Reconnect(c) => StepAsWritten::Reconnect(c),
            Step::Expire(c) => StepAsWritten::Expire(c),
            Step::Resume(c) => StepAsWritten::Resume(c),
            Step::CatchUp(c) => StepAsWritten::CatchUp(c),
            Step::Fault(fault, c) => StepAsWritten::Fault(fault.kind(), c),
            Step::Lossy(fault, sending, c) => StepAsWritten::Lossy(fault.kind(), sending, c),
            Step::Server(event) => StepAsWritten::Fault(event.kind(), 0),
        }
    }
}

impl TryFrom<StepAsWritten> for Step {
    type Error = String;

    fn try_from(step: StepAsWritten) -> Result<Self, String> {
        Ok(match step {
            StepAsWritten::Acquire(c) => Step::Acquire(c),
            StepAsWritten::Write(c) => Step::Write(c),
            StepAsWritten::Release(c) => Step::Release(c),
            StepAsWritten::Receive(c) => Step::Receive(c),
            StepAsWritten::Reconnect(c) => Step::Reconnect(c),
            StepAsWritten::Expire(c) => Step::Expire(c),
            StepAsWritten::Resume(c) => Step::Resume(c),
            StepAsWritten::CatchUp(c) => Step::CatchUp(c),
            StepAsWritten::Fault(kind, c) => match kind.typed() {
                Fault::Client(fault) => Step::Fault(fault, c),
                Fault::Server(event) if c == 0 => Step::Server(event),
                Fault::Server(event) => {
                    return Err(format!("{event} is the server's: written under client 0, not {c}"))
                }
                Fault::Request(fault) => return Err(format!("{fault} strikes a request: written as `lossy`")),
            },
            StepAsWritten::Lossy(kind, sending, c) => match kind.typed() {
                Fault::Request(fault) => Step::Lossy(fault, sending, c),
                _ => return Err(format!("{kind} does not strike a request: written as `fault`")),
            },
        })
    }
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
            Sending::GiveUp => Step::Fault(ClientFault::GiveUp, client),
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

    /// The client the step concerns; none for a server event.
    pub fn client(self) -> Option<ClientId> {
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
            | Step::Lossy(_, _, c) => Some(c),
            Step::Server(_) => None,
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
            Step::Fault(fault, _) => Step::Fault(fault, to),
            Step::Lossy(fault, sending, _) => Step::Lossy(fault, sending, to),
            // The server's own event concerns no client.
            Step::Server(event) => Step::Server(event),
        }
    }

    /// The same step taken by the client `rename` maps its client to (a server event is
    /// left as it is).
    pub fn renamed_by(self, rename: impl FnOnce(ClientId) -> ClientId) -> Step {
        match self.client() {
            Some(c) => self.for_client(rename(c)),
            None => self,
        }
    }

    /// The kind of fault the step is, if it is one.
    pub fn fault_kind(self) -> Option<FaultKind> {
        match self {
            Step::Lossy(fault, ..) => Some(fault.kind()),
            Step::Fault(fault, _) => Some(fault.kind()),
            Step::Server(event) => Some(event.kind()),
            _ => None,
        }
    }

    pub fn is_fault(self) -> bool {
        matches!(self, Step::Fault(..) | Step::Lossy(..) | Step::Server(..))
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
            Step::Fault(fault, _) => (8, fault.kind().index(), 0),
            Step::Lossy(fault, sending, _) => (9, fault.kind().index(), sending as usize),
            Step::Server(event) => (10, event.kind().index(), 0),
        };
        let client = self.client().unwrap_or(0);
        debug_assert!(client < 1 << 16, "a checked world has fewer clients");
        client | (tag << 16) | ((kind as u32) << 20) | ((sending as u32) << 24)
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
            8 => match kind.typed() {
                Fault::Client(fault) => Step::Fault(fault, client),
                _ => unreachable!("packed from a client fault"),
            },
            9 => match kind.typed() {
                Fault::Request(fault) => Step::Lossy(fault, Sending::ALL[(bits >> 24 & 0x7) as usize], client),
                _ => unreachable!("packed from a request fault"),
            },
            _ => match kind.typed() {
                Fault::Server(event) => Step::Server(event),
                _ => unreachable!("packed from a server event"),
            },
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
            Step::Fault(fault, c) => write!(f, "FAULT {fault} c{c}"),
            Step::Server(event) => write!(f, "FAULT {event}"),
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
            steps.extend(ClientFault::ALL.map(|fault| Step::Fault(fault, client)));
            for fault in RequestFault::ALL {
                steps.extend(Sending::ALL.map(|sending| Step::Lossy(fault, sending, client)));
            }
        }
        steps.extend(ServerEvent::ALL.map(Step::Server));
        let packed: std::collections::BTreeSet<u32> = steps.iter().map(|s| s.packed()).collect();
        assert_eq!(packed.len(), steps.len(), "no two steps pack alike");
        for step in steps {
            assert_eq!(Step::unpacked(step.packed()), step);
        }
    }

    #[test]
    fn every_step_is_written_as_it_was_before_faults_were_typed() {
        let written = |step: Step| serde_json::to_string(&step).unwrap();
        assert_eq!(written(Step::Fault(ClientFault::Expire, 1)), r#"{"fault":["expire",1]}"#);
        assert_eq!(
            written(Step::Lossy(RequestFault::LossAfterApply, Sending::Acquire, 0)),
            r#"{"lossy":["loss-after-apply","acquire",0]}"#
        );
        assert_eq!(written(Step::Server(ServerEvent::ReapParent)), r#"{"fault":["reap-parent",0]}"#);
        let read = |text: &str| serde_json::from_str::<Step>(text).map_err(|e| e.to_string());
        assert_eq!(read(r#"{"fault":["reap-parent",0]}"#), Ok(Step::Server(ServerEvent::ReapParent)));
        assert_eq!(read(r#"{"catch-up":2}"#), Ok(Step::CatchUp(2)));
        let refused = [
            (r#"{"fault":["loss-after-apply",0]}"#, "strikes a request"),
            (r#"{"lossy":["expire","acquire",0]}"#, "does not strike a request"),
            (r#"{"fault":["reap-parent",1]}"#, "the server's"),
        ];
        for (text, why) in refused {
            let error = read(text).expect_err(text);
            assert!(error.contains(why), "{text}: {error}");
        }
    }
}
