//! Each choice of a schedule in words, read from what the switchboard holds just before it is
//! taken: the request the server applies (or loses), the frame a client is handed. A saved
//! schedule carries these lines, so a violation reads as a story without running it again.
//! Requests and results are worded by model/'s describers, as on every other timeline.

use super::switchboard::{Choice, Switchboard};
use crate::serve::codec::{self, FromClient, ToClient};
use crate::wire::jute::op;
use zklab_model::world::{describe_request, describe_result};

/// What taking `choice` now does, in a line: `c0: create -e -s /lock/x- applied`.
pub fn choice(board: &Switchboard, choice: Choice) -> String {
    let c = choice.client();
    let request = || board.held_request(c).map_or_else(|| "nothing held".to_string(), request);
    match choice {
        Choice::Apply(_) => format!("c{c}: {} applied", request()),
        Choice::LossBeforeApply(_) => format!("c{c}: connection lost before {} reached the server", request()),
        Choice::LossAfterApply(_) => {
            format!("c{c}: {} applied, then the connection lost before its reply", request())
        }
        Choice::Expire(_) => {
            // The server closes the connection: what it had sent reaches the client first.
            let flushed: Vec<String> = board.held_frames(c).map(frame).collect();
            match flushed.is_empty() {
                true => format!("c{c}: session expired by the server"),
                false => format!(
                    "c{c}: session expired by the server; before its connection closes it hears {}",
                    flushed.join(", ")
                ),
            }
        }
        Choice::Disconnect(_) => {
            // Whatever was held either way is lost with the connection.
            let lost: Vec<String> = board
                .held_request(c)
                .map(|_| format!("{} unapplied", request()))
                .into_iter()
                .chain(board.held_frames(c).map(|m| format!("{} unheard", frame(m))))
                .collect();
            match lost.is_empty() {
                true => format!("c{c}: connection lost, nothing in flight"),
                false => format!("c{c}: connection lost with {}", lost.join(", ")),
            }
        }
        Choice::Connect(_) => format!("c{c}: handshake answered"),
        Choice::Deliver(_) => {
            format!("c{c} hears {}", board.held_frame(c).map_or_else(|| "nothing".to_string(), frame))
        }
    }
}

/// What taking `choice` now moves, for following it on a model (`divergence`): the request
/// an apply or a loss moves, decoded, and the frames a delivery hands or an expiry flushes.
pub fn moved(board: &Switchboard, choice: Choice) -> super::divergence::Moved {
    let c = choice.client();
    let request = match choice {
        Choice::Apply(_)
        | Choice::LossBeforeApply(_)
        | Choice::LossAfterApply(_)
        | Choice::Expire(_)
        | Choice::Disconnect(_) => match board.held_request(c).map(codec::decode_request) {
            Some(Ok(FromClient::Request { request, .. })) => Some(request),
            _ => None,
        },
        _ => None,
    };
    let is_reply = |m: &ToClient| !matches!(m, ToClient::Notification(_));
    let frames = match choice {
        Choice::Expire(_) => board.held_frames(c).map(is_reply).collect(),
        Choice::Deliver(_) => board.held_frame(c).map(is_reply).into_iter().collect(),
        _ => Vec::new(),
    };
    super::divergence::Moved { request, frames }
}

/// A request as a client sent it.
fn request(payload: &[u8]) -> String {
    match codec::decode_request(payload) {
        Ok(FromClient::Request { request, .. }) => describe_request(&request),
        Ok(FromClient::Close { .. }) => "closeSession".into(),
        Ok(FromClient::SetWatches { .. }) => "setWatches".into(),
        Ok(FromClient::CheckWatches { path, .. }) => format!("checkWatches {path}"),
        Ok(FromClient::Auth) => "auth".into(),
        Ok(FromClient::Ping) => "ping".into(),
        Ok(FromClient::Connect(_)) => "connect".into(),
        Ok(FromClient::Unserved { code, .. }) => format!("op {code} (not served)"),
        Ok(FromClient::Undecodable { code, why, .. }) => format!("op {code} ({why})"),
        Err(_) => "an undecodable request".into(),
    }
}

/// A frame the server sent.
fn frame(message: &ToClient) -> String {
    match message {
        ToClient::Reply { code, result, .. } => format!("{}: {}", name(*code), describe_result(result)),
        ToClient::MultiFailed { failed, error, .. } => format!("multi: op {failed} failed, {error}"),
        ToClient::Bare { err: 0, .. } => "ok".into(),
        ToClient::Bare { err, .. } => format!("error {err}"),
        ToClient::Notification(event) => format!("{:?} {}", event.kind, event.path),
        ToClient::Connected { timeout_ms: 0, .. } => "its session is gone".into(),
        ToClient::Connected { .. } => "connected".into(),
        ToClient::Pong { .. } => "pong".into(),
    }
}

/// The wire op a reply answers, by name.
fn name(code: i32) -> &'static str {
    match code {
        op::CREATE | op::CREATE2 | op::CREATE_CONTAINER => "create",
        op::DELETE => "delete",
        op::EXISTS => "exists",
        op::GET_DATA => "getData",
        op::SET_DATA => "setData",
        op::GET_CHILDREN | op::GET_CHILDREN2 => "getChildren",
        op::SYNC => "sync",
        op::MULTI => "multi",
        op::CHECK_WATCHES => "checkWatches",
        _ => "reply",
    }
}
