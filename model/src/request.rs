//! What a client asks of the server and what it gets back.

use crate::Listing;
use crate::{Stat, ZkError};
use serde::{Deserialize, Serialize};

/// Session ids are small numbers handed out by the server in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct SessionId(pub u32);

impl std::fmt::Display for SessionId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "s{}", self.0)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CreateMode {
    Persistent,
    Ephemeral,
    PersistentSequential,
    EphemeralSequential,
}

impl CreateMode {
    pub fn is_sequential(self) -> bool {
        matches!(self, CreateMode::PersistentSequential | CreateMode::EphemeralSequential)
    }
    pub fn is_ephemeral(self) -> bool {
        matches!(self, CreateMode::Ephemeral | CreateMode::EphemeralSequential)
    }
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Request {
    Create { path: String, data: String, mode: CreateMode },
    Delete { path: String, version: i32 },
    Exists { path: String, watch: bool },
    GetData { path: String, watch: bool },
    SetData { path: String, data: String, version: i32 },
    GetChildren { path: String, watch: bool },
}

impl Request {
    pub fn path(&self) -> &str {
        match self {
            Request::Create { path, .. }
            | Request::Delete { path, .. }
            | Request::Exists { path, .. }
            | Request::GetData { path, .. }
            | Request::SetData { path, .. }
            | Request::GetChildren { path, .. } => path,
        }
    }
    pub fn is_write(&self) -> bool {
        matches!(self, Request::Create { .. } | Request::Delete { .. } | Request::SetData { .. })
    }
    /// The short name ZooKeeper's clients use for the operation.
    pub fn op_name(&self) -> &'static str {
        match self {
            Request::Create { .. } => "create",
            Request::Delete { .. } => "delete",
            Request::Exists { .. } => "exists",
            Request::GetData { .. } => "getData",
            Request::SetData { .. } => "setData",
            Request::GetChildren { .. } => "getChildren",
        }
    }
    pub fn create(path: &str, mode: CreateMode) -> Self {
        Request::Create { path: path.to_string(), data: String::new(), mode }
    }
    pub fn delete(path: &str) -> Self {
        Request::Delete { path: path.to_string(), version: -1 }
    }
    pub fn exists(path: &str, watch: bool) -> Self {
        Request::Exists { path: path.to_string(), watch }
    }
    pub fn get_data(path: &str, watch: bool) -> Self {
        Request::GetData { path: path.to_string(), watch }
    }
    pub fn get_children(path: &str, watch: bool) -> Self {
        Request::GetChildren { path: path.to_string(), watch }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Response {
    /// The actual path (with the sequence suffix) and the new node's stat.
    Created {
        path: String,
        stat: Stat,
    },
    Deleted,
    /// `None`: the node does not exist (and a watch, if asked, waits for its creation).
    Exists(Option<Stat>),
    Data {
        data: String,
        stat: Stat,
    },
    DataSet(Stat),
    /// In the server's order, which is unspecified: recipes must sort. Shared, not copied: a
    /// listing of N children queued to N clients is one listing (see `Listing`).
    Children {
        children: Listing,
        stat: Stat,
    },
}

/// A Stat record on the wire: eight longs and ints (czxid, mzxid, ctime, mtime, version,
/// cversion, aversion, ephemeralOwner, dataLength, numChildren, pzxid).
const STAT_BYTES: usize = 68;

/// The reply header: xid, zxid and error code.
const REPLY_HEADER_BYTES: usize = 16;

impl Response {
    /// The length of the reply frame that carries this response, the number a client reads
    /// before the frame: the reply header and the response record in jute's encoding (an int
    /// length before every string, buffer and vector). A listing is `getChildren`'s record
    /// (names only, no Stat); each name counts its UTF-8 bytes.
    pub fn frame_bytes(&self) -> usize {
        let string = |s: &str| 4 + s.len();
        REPLY_HEADER_BYTES
            + match self {
                Response::Created { path, .. } => string(path),
                Response::Deleted | Response::Exists(None) => 0,
                Response::Exists(Some(_)) | Response::DataSet(_) => STAT_BYTES,
                Response::Data { data, .. } => string(data) + STAT_BYTES,
                Response::Children { children, .. } => children.wire_bytes(),
            }
    }
}

pub type ZkResult = Result<Response, ZkError>;
