//! ZooKeeper's result codes, by the names the server and clients use.

use serde::{Deserialize, Serialize};

/// A failed operation's code. A failed operation changes nothing on the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, thiserror::Error)]
pub enum ZkError {
    #[error("NoNode")]
    NoNode,
    #[error("NodeExists")]
    NodeExists,
    #[error("NotEmpty")]
    NotEmpty,
    #[error("BadVersion")]
    BadVersion,
    #[error("NoChildrenForEphemerals")]
    NoChildrenForEphemerals,
    #[error("SessionExpired")]
    SessionExpired,
    /// The client lost its connection with the request outstanding: it may or may not have been
    /// applied.
    #[error("ConnectionLoss")]
    ConnectionLoss,
    /// The request was malformed (a bad path); the client library refuses it before sending.
    #[error("BadArguments")]
    BadArguments,
}
