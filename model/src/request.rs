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
    /// A persistent node the server's container manager may delete once it has had children
    /// and has none (Curator creates a lock's parents so). A client cannot tell one from a
    /// persistent node: ZooKeeper reports its ephemeral owner as 0 (conformance case 52). The
    /// model's server never reaps one on its own, so here it is a persistent node: the reaper is
    /// a world's `ReapParent` fault, which treats the lock's parent as a container whatever
    /// created it, at the moment the checker chooses.
    Container,
}

impl CreateMode {
    pub fn is_sequential(self) -> bool {
        matches!(self, CreateMode::PersistentSequential | CreateMode::EphemeralSequential)
    }
    pub fn is_ephemeral(self) -> bool {
        matches!(self, CreateMode::Ephemeral | CreateMode::EphemeralSequential)
    }
    pub fn is_container(self) -> bool {
        self == CreateMode::Container
    }
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Request {
    Create {
        path: String,
        data: String,
        mode: CreateMode,
    },
    Delete {
        path: String,
        version: i32,
    },
    Exists {
        path: String,
        watch: bool,
    },
    GetData {
        path: String,
        watch: bool,
    },
    SetData {
        path: String,
        data: String,
        version: i32,
    },
    GetChildren {
        path: String,
        watch: bool,
    },
    /// The follower the session is connected to catches up with the leader before answering:
    /// every read after the reply sees at least what was committed when the sync was sent.
    Sync {
        path: String,
    },
    /// Writes applied as one transaction: all of them or none (ZooKeeper's `multi`). The first
    /// op that fails fails the whole request with its code, and nothing changes.
    Multi {
        ops: Vec<Op>,
    },
}

/// One op of a `multi`: a write, or a check of a node's version that writes nothing.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    Create {
        path: String,
        data: String,
        mode: CreateMode,
    },
    Delete {
        path: String,
        version: i32,
    },
    SetData {
        path: String,
        data: String,
        version: i32,
    },
    /// Fails NoNode if the node is missing, BadVersion unless `version` is -1 or the node's.
    Check {
        path: String,
        version: i32,
    },
}

impl Op {
    pub fn path(&self) -> &str {
        match self {
            Op::Create { path, .. } | Op::Delete { path, .. } | Op::SetData { path, .. } | Op::Check { path, .. } => {
                path
            }
        }
    }
    /// The request this op makes alone (a check makes none).
    pub fn as_request(&self) -> Option<Request> {
        match self.clone() {
            Op::Create { path, data, mode } => Some(Request::Create { path, data, mode }),
            Op::Delete { path, version } => Some(Request::Delete { path, version }),
            Op::SetData { path, data, version } => Some(Request::SetData { path, data, version }),
            Op::Check { .. } => None,
        }
    }
    /// The short name ZooKeeper's clients use for the op.
    pub fn op_name(&self) -> &'static str {
        match self {
            Op::Create { .. } => "create",
            Op::Delete { .. } => "delete",
            Op::SetData { .. } => "setData",
            Op::Check { .. } => "check",
        }
    }
}

/// What one op of a successful `multi` did. A create's result is its path alone: ZooKeeper 3.8
/// answers a create inside a multi as a plain create, without the node's stat (ZOOKEEPER-4026),
/// so no client of it can read one.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpResult {
    Created { path: String },
    Deleted,
    DataSet(Stat),
    Checked,
}

impl Request {
    pub fn path(&self) -> &str {
        match self {
            Request::Create { path, .. }
            | Request::Delete { path, .. }
            | Request::Exists { path, .. }
            | Request::GetData { path, .. }
            | Request::SetData { path, .. }
            | Request::GetChildren { path, .. }
            | Request::Sync { path } => path,
            // ZooKeeper's multi names no path of its own; its first op's stands for it.
            Request::Multi { ops } => ops.first().map_or("/", Op::path),
        }
    }
    /// Every path the request names: a multi's every op's.
    pub fn paths(&self) -> Vec<&str> {
        match self {
            Request::Multi { ops } => ops.iter().map(Op::path).collect(),
            _ => vec![self.path()],
        }
    }
    /// The writes the request makes: itself, or a multi's ops that write.
    pub fn writes(&self) -> Vec<Request> {
        match self {
            Request::Multi { ops } => ops.iter().filter_map(Op::as_request).collect(),
            _ if self.is_write() => vec![self.clone()],
            _ => Vec::new(),
        }
    }
    /// Whether the request creates a node (a create, or a multi with one).
    pub fn creates(&self) -> bool {
        match self {
            Request::Create { .. } => true,
            Request::Multi { ops } => ops.iter().any(|op| matches!(op, Op::Create { .. })),
            _ => false,
        }
    }
    pub fn is_write(&self) -> bool {
        matches!(
            self,
            Request::Create { .. } | Request::Delete { .. } | Request::SetData { .. } | Request::Multi { .. }
        )
    }
    /// Whether the request goes through the leader, so that a lagging follower has caught up
    /// when it answers: every write, and a sync.
    pub fn via_leader(&self) -> bool {
        self.is_write() || matches!(self, Request::Sync { .. })
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
            Request::Sync { .. } => "sync",
            Request::Multi { .. } => "multi",
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
    pub fn sync(path: &str) -> Self {
        Request::Sync { path: path.to_string() }
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
    /// A sync's reply: the path it was sent with.
    Synced {
        path: String,
    },
    /// A multi's reply: each op's result, in order.
    Multi(Vec<OpResult>),
}

impl Response {
    /// The nodes a successful reply says were created: a create's, or a multi's creates'.
    pub fn created(&self) -> Vec<&str> {
        match self {
            Response::Created { path, .. } => vec![path.as_str()],
            Response::Multi(results) => results
                .iter()
                .filter_map(|r| match r {
                    OpResult::Created { path } => Some(path.as_str()),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        }
    }
}

/// A Stat record on the wire: eight longs and ints (czxid, mzxid, ctime, mtime, version,
/// cversion, aversion, ephemeralOwner, dataLength, numChildren, pzxid).
const STAT_BYTES: usize = 68;

/// A multi's per-op header: the op's type, whether it is the last, and its error code.
const MULTI_HEADER_BYTES: usize = 9;

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
                Response::Synced { path } => string(path),
                // Each result behind its MultiHeader (type, done, err), and the closing header.
                Response::Multi(results) => {
                    results
                        .iter()
                        .map(|r| {
                            MULTI_HEADER_BYTES
                                + match r {
                                    OpResult::Created { path, .. } => string(path),
                                    OpResult::DataSet(_) => STAT_BYTES,
                                    OpResult::Deleted | OpResult::Checked => 0,
                                }
                        })
                        .sum::<usize>()
                        + MULTI_HEADER_BYTES
                }
            }
    }
}

pub type ZkResult = Result<Response, ZkError>;
