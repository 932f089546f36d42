//! A znode's stat, as a read or write reply reports it.

use crate::SessionId;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Stat {
    /// zxid of the create: a fencing token that stays monotonic across parent re-creation.
    pub czxid: i64,
    pub mzxid: i64,
    /// zxid of the last child create or delete (what Java's SetWatches compares on reconnect).
    pub pzxid: i64,
    pub version: i32,
    /// Moves on child creates and deletes; it is not the sequence counter.
    pub cversion: i32,
    pub aversion: i32,
    pub ephemeral_owner: Option<SessionId>,
    pub data_length: i32,
    pub num_children: i32,
}
