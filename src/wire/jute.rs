//! ZooKeeper's wire format (jute), for the requests a recipe sends and the frames a session
//! needs around them: the connect handshake, pings, SetWatches, closeSession, replies and watch
//! notifications. The real driver speaks it itself rather than through a client library, because
//! what it must know is exactly what a library hides: the order in which replies and
//! notifications arrive on one connection, the zxid in every reply's header (where the server
//! applied the request), and the moment to drop a connection between a request's reply and the
//! next frame.
//!
//! Every frame is a 4-byte big-endian length and then its payload. A request's payload is a
//! header (xid, op) and the op's record; a reply's is a header (xid, zxid, err) and, when err is
//! 0, the op's response record. A notification is a reply with xid -1 whose record is a
//! `WatcherEvent` (type, state, path).

use zklab_model::{CreateMode, EventType, Listing, Op, OpResult, Request, Response, SessionId, Stat, ZkError};

/// The reply header's xid of a watch notification.
pub const NOTIFICATION_XID: i32 = -1;
/// The xid of a ping and its reply.
pub const PING_XID: i32 = -2;
/// The xid the Java client gives SetWatches (ZooKeeper does not care, but it is recognisable).
pub const SET_WATCHES_XID: i32 = -8;

/// Op codes (`ZooDefs.OpCode`).
pub mod op {
    pub const CREATE: i32 = 1;
    pub const DELETE: i32 = 2;
    pub const EXISTS: i32 = 3;
    pub const GET_DATA: i32 = 4;
    pub const SET_DATA: i32 = 5;
    pub const SYNC: i32 = 9;
    pub const PING: i32 = 11;
    pub const CHECK: i32 = 13;
    pub const MULTI: i32 = 14;
    /// A multi's end marker, and an op of it that failed.
    pub const ERROR: i32 = -1;
    pub const GET_CHILDREN: i32 = 8;
    pub const GET_CHILDREN2: i32 = 12;
    pub const CREATE2: i32 = 15;
    pub const CHECK_WATCHES: i32 = 17;
    pub const CREATE_CONTAINER: i32 = 19;
    pub const AUTH: i32 = 100;
    pub const SET_WATCHES: i32 = 101;
    pub const SET_WATCHES2: i32 = 105;
    pub const CLOSE_SESSION: i32 = -11;
}

/// The reply header's xid of an auth packet's answer.
pub const AUTH_XID: i32 = -4;

/// A record being written.
#[derive(Default)]
pub struct Writer(Vec<u8>);

impl Writer {
    pub fn int(&mut self, v: i32) -> &mut Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    pub fn long(&mut self, v: i64) -> &mut Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    pub fn boolean(&mut self, v: bool) -> &mut Self {
        self.0.push(u8::from(v));
        self
    }
    pub fn buffer(&mut self, bytes: &[u8]) -> &mut Self {
        self.int(bytes.len() as i32);
        self.0.extend_from_slice(bytes);
        self
    }
    pub fn string(&mut self, s: &str) -> &mut Self {
        self.buffer(s.as_bytes())
    }
    pub fn strings(&mut self, list: &[String]) -> &mut Self {
        self.int(list.len() as i32);
        for s in list {
            self.string(s);
        }
        self
    }
    /// The payload with its length in front: a whole frame.
    pub fn frame(&self) -> Vec<u8> {
        let mut framed = Vec::with_capacity(self.0.len() + 4);
        framed.extend_from_slice(&(self.0.len() as i32).to_be_bytes());
        framed.extend_from_slice(&self.0);
        framed
    }
}

/// A frame that does not parse as the record it should hold.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed frame from the server: {0}")]
pub struct Malformed(pub String);

/// A record being read.
pub struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Reader { bytes, at: 0 }
    }
    fn take(&mut self, n: usize) -> Result<&'a [u8], Malformed> {
        let end = self.at.checked_add(n).filter(|e| *e <= self.bytes.len());
        let end = end.ok_or_else(|| Malformed(format!("{n} bytes wanted at offset {}", self.at)))?;
        let taken = &self.bytes[self.at..end];
        self.at = end;
        Ok(taken)
    }
    pub fn int(&mut self) -> Result<i32, Malformed> {
        Ok(i32::from_be_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }
    pub fn long(&mut self) -> Result<i64, Malformed> {
        Ok(i64::from_be_bytes(self.take(8)?.try_into().expect("8 bytes")))
    }
    pub fn boolean(&mut self) -> Result<bool, Malformed> {
        Ok(self.take(1)?[0] != 0)
    }
    /// A buffer; -1 (null) reads as empty.
    pub fn buffer(&mut self) -> Result<Vec<u8>, Malformed> {
        let n = self.int()?;
        if n < 0 {
            return Ok(Vec::new());
        }
        Ok(self.take(n as usize)?.to_vec())
    }
    pub fn string(&mut self) -> Result<String, Malformed> {
        String::from_utf8(self.buffer()?).map_err(|_| Malformed("a string that is not UTF-8".to_string()))
    }
    pub fn strings(&mut self) -> Result<Vec<String>, Malformed> {
        let n = self.int()?;
        (0..n.max(0)).map(|_| self.string()).collect()
    }
    pub fn remaining(&self) -> usize {
        self.bytes.len() - self.at
    }
}

/// ZooKeeper's stat record with the times the model does not keep, and the real session id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WireStat {
    pub czxid: i64,
    pub mzxid: i64,
    pub ctime: i64,
    pub mtime: i64,
    pub version: i32,
    pub cversion: i32,
    pub aversion: i32,
    pub ephemeral_owner: i64,
    pub data_length: i32,
    pub num_children: i32,
    pub pzxid: i64,
}

impl WireStat {
    fn read(r: &mut Reader) -> Result<WireStat, Malformed> {
        Ok(WireStat {
            czxid: r.long()?,
            mzxid: r.long()?,
            ctime: r.long()?,
            mtime: r.long()?,
            version: r.int()?,
            cversion: r.int()?,
            aversion: r.int()?,
            ephemeral_owner: r.long()?,
            data_length: r.int()?,
            num_children: r.int()?,
            pzxid: r.long()?,
        })
    }

    /// The model's stat, with real zxids and sessions put through `zxid` and `session`.
    pub fn to_model(self, zxid: &mut impl FnMut(i64) -> i64, session: &mut impl FnMut(i64) -> SessionId) -> Stat {
        Stat {
            czxid: zxid(self.czxid),
            mzxid: zxid(self.mzxid),
            pzxid: zxid(self.pzxid),
            version: self.version,
            cversion: self.cversion,
            aversion: self.aversion,
            ephemeral_owner: (self.ephemeral_owner != 0).then(|| session(self.ephemeral_owner)),
            data_length: self.data_length,
            num_children: self.num_children,
        }
    }
}

/// A response as the server sent it: the model's shape with the server's own numbers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WireResponse {
    Created { path: String, stat: WireStat },
    Deleted,
    Exists(Option<WireStat>),
    Data { data: String, stat: WireStat },
    DataSet(WireStat),
    Children { children: Vec<String>, stat: WireStat },
    Synced { path: String },
    Multi(Vec<WireOpResult>),
}

/// One op's result in a successful multi, as the server sent it. A create's is its path: 3.8
/// answers a create2 inside a multi as a plain create (ZOOKEEPER-4026), and a stat a later
/// server sends is not read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WireOpResult {
    Created { path: String },
    Deleted,
    DataSet(WireStat),
    Checked,
}

impl WireResponse {
    /// The model's response, with numbers mapped as `WireStat::to_model` says.
    pub fn to_model(&self, zxid: &mut impl FnMut(i64) -> i64, session: &mut impl FnMut(i64) -> SessionId) -> Response {
        match self {
            WireResponse::Created { path, stat } => {
                Response::Created { path: path.clone(), stat: stat.to_model(zxid, session) }
            }
            WireResponse::Deleted => Response::Deleted,
            WireResponse::Exists(stat) => Response::Exists(stat.map(|s| s.to_model(zxid, session))),
            WireResponse::Data { data, stat } => {
                Response::Data { data: data.clone(), stat: stat.to_model(zxid, session) }
            }
            WireResponse::DataSet(stat) => Response::DataSet(stat.to_model(zxid, session)),
            WireResponse::Children { children, stat } => {
                Response::Children { children: Listing::new(children.clone()), stat: stat.to_model(zxid, session) }
            }
            WireResponse::Synced { path } => Response::Synced { path: path.clone() },
            WireResponse::Multi(results) => Response::Multi(
                results
                    .iter()
                    .map(|r| match r {
                        WireOpResult::Created { path } => OpResult::Created { path: path.clone() },
                        WireOpResult::Deleted => OpResult::Deleted,
                        WireOpResult::DataSet(stat) => OpResult::DataSet(stat.to_model(zxid, session)),
                        WireOpResult::Checked => OpResult::Checked,
                    })
                    .collect(),
            ),
        }
    }

    /// The stats the response carries: one, or a multi's results' (none for a delete or sync).
    pub fn stats(&self) -> Vec<&WireStat> {
        match self {
            WireResponse::Created { stat, .. }
            | WireResponse::Data { stat, .. }
            | WireResponse::DataSet(stat)
            | WireResponse::Children { stat, .. } => vec![stat],
            WireResponse::Exists(stat) => stat.iter().collect(),
            WireResponse::Deleted | WireResponse::Synced { .. } => Vec::new(),
            WireResponse::Multi(results) => results
                .iter()
                .filter_map(|r| match r {
                    WireOpResult::DataSet(stat) => Some(stat),
                    WireOpResult::Created { .. } | WireOpResult::Deleted | WireOpResult::Checked => None,
                })
                .collect(),
        }
    }
}

/// A reply's result as the server sent it.
pub type WireResult = Result<WireResponse, ZkError>;

/// The world:anyone ACL with every permission, as recipes create their nodes.
fn open_acl(w: &mut Writer) {
    w.int(1).int(31).string("world").string("anyone");
}

/// The payload of `request` (header and record) with xid `xid`, its paths under `chroot`.
pub fn encode_request(xid: i32, request: &Request, chroot: &str) -> Writer {
    let mut w = Writer::default();
    let full = |path: &str| match path {
        "/" if !chroot.is_empty() => chroot.to_string(),
        _ => format!("{chroot}{path}"),
    };
    let flags = |mode: &CreateMode| match mode {
        CreateMode::Persistent => 0,
        CreateMode::Ephemeral => 1,
        CreateMode::PersistentSequential => 2,
        CreateMode::EphemeralSequential => 3,
        CreateMode::Container => 4,
    };
    // The Java client sends a container's create as createContainer, whose reply carries the
    // stat as create2's does.
    let create_op = |mode: &CreateMode| if mode.is_container() { op::CREATE_CONTAINER } else { op::CREATE2 };
    match request {
        Request::Create { path, data, mode } => {
            w.int(xid).int(create_op(mode)).string(&full(path)).buffer(data.as_bytes());
            open_acl(&mut w);
            w.int(flags(mode));
        }
        Request::Sync { path } => {
            w.int(xid).int(op::SYNC).string(&full(path));
        }
        // Each op behind a MultiHeader (type, done, err), then the end marker.
        Request::Multi { ops } => {
            w.int(xid).int(op::MULTI);
            for o in ops {
                match o {
                    Op::Create { path, data, mode } => {
                        w.int(create_op(mode)).boolean(false).int(-1).string(&full(path)).buffer(data.as_bytes());
                        open_acl(&mut w);
                        w.int(flags(mode));
                    }
                    Op::Delete { path, version } => {
                        w.int(op::DELETE).boolean(false).int(-1).string(&full(path)).int(*version);
                    }
                    Op::SetData { path, data, version } => {
                        w.int(op::SET_DATA).boolean(false).int(-1);
                        w.string(&full(path)).buffer(data.as_bytes()).int(*version);
                    }
                    Op::Check { path, version } => {
                        w.int(op::CHECK).boolean(false).int(-1).string(&full(path)).int(*version);
                    }
                }
            }
            w.int(op::ERROR).boolean(true).int(-1);
        }
        Request::Delete { path, version } => {
            w.int(xid).int(op::DELETE).string(&full(path)).int(*version);
        }
        Request::Exists { path, watch } => {
            w.int(xid).int(op::EXISTS).string(&full(path)).boolean(*watch);
        }
        Request::GetData { path, watch } => {
            w.int(xid).int(op::GET_DATA).string(&full(path)).boolean(*watch);
        }
        Request::SetData { path, data, version } => {
            w.int(xid).int(op::SET_DATA).string(&full(path)).buffer(data.as_bytes()).int(*version);
        }
        Request::GetChildren { path, watch } => {
            w.int(xid).int(op::GET_CHILDREN2).string(&full(path)).boolean(*watch);
        }
    }
    w
}

/// A path the server sent, with `chroot` taken off.
pub fn strip_chroot(path: &str, chroot: &str) -> String {
    match path.strip_prefix(chroot) {
        Some("") => "/".to_string(),
        Some(rest) if rest.starts_with('/') => rest.to_string(),
        _ => path.to_string(),
    }
}

/// The error a reply header's code names, or `None` for one the model does not know.
pub fn error_of(code: i32) -> Option<ZkError> {
    Some(match code {
        -4 => ZkError::ConnectionLoss,
        -8 => ZkError::BadArguments,
        -101 => ZkError::NoNode,
        -103 => ZkError::BadVersion,
        -108 => ZkError::NoChildrenForEphemerals,
        -110 => ZkError::NodeExists,
        -111 => ZkError::NotEmpty,
        -112 => ZkError::SessionExpired,
        _ => return None,
    })
}

/// The result of `request` from its reply's error code and record.
pub fn decode_result(request: &Request, err: i32, body: &mut Reader, chroot: &str) -> Result<WireResult, Malformed> {
    if err != 0 {
        // exists answers a missing node with NoNode in the header and no record.
        if err == -101 && matches!(request, Request::Exists { .. }) {
            return Ok(Ok(WireResponse::Exists(None)));
        }
        return error_of(err)
            .map(Err)
            .ok_or_else(|| Malformed(format!("error code {err}, which the model does not know")));
    }
    Ok(Ok(match request {
        Request::Create { .. } => {
            let path = strip_chroot(&body.string()?, chroot);
            WireResponse::Created { path, stat: WireStat::read(body)? }
        }
        Request::Delete { .. } => WireResponse::Deleted,
        Request::Exists { .. } => WireResponse::Exists(Some(WireStat::read(body)?)),
        Request::GetData { .. } => {
            let data = String::from_utf8_lossy(&body.buffer()?).into_owned();
            WireResponse::Data { data, stat: WireStat::read(body)? }
        }
        Request::SetData { .. } => WireResponse::DataSet(WireStat::read(body)?),
        Request::GetChildren { .. } => {
            let children = body.strings()?;
            WireResponse::Children { children, stat: WireStat::read(body)? }
        }
        Request::Sync { .. } => WireResponse::Synced { path: strip_chroot(&body.string()?, chroot) },
        Request::Multi { .. } => match decode_multi(body, chroot)? {
            Ok(results) => WireResponse::Multi(results),
            Err(code) => return error_of(code).map(Err).ok_or_else(|| Malformed(format!("multi error code {code}"))),
        },
    }))
}

/// A multi's results, or the code of the op that failed it: the ops before it answer 0, the
/// failed op its own code, the ops after it RuntimeInconsistency (-2).
fn decode_multi(body: &mut Reader, chroot: &str) -> Result<Result<Vec<WireOpResult>, i32>, Malformed> {
    let mut results = Vec::new();
    let mut failed = None;
    loop {
        let kind = body.int()?;
        let done = body.boolean()?;
        let _err = body.int()?;
        if done {
            return Ok(failed.map_or(Ok(results), Err));
        }
        results.push(match kind {
            op::CREATE => WireOpResult::Created { path: strip_chroot(&body.string()?, chroot) },
            op::CREATE2 => {
                let path = strip_chroot(&body.string()?, chroot);
                WireStat::read(body)?;
                WireOpResult::Created { path }
            }
            op::DELETE => WireOpResult::Deleted,
            op::SET_DATA => WireOpResult::DataSet(WireStat::read(body)?),
            op::CHECK => WireOpResult::Checked,
            op::ERROR => {
                let code = body.int()?;
                if code != 0 && failed.is_none() {
                    failed = Some(code);
                }
                continue;
            }
            other => return Err(Malformed(format!("multi result of op {other}"))),
        });
    }
}

/// A watch notification's record: the event, or `None` for a connection-state event (type -1),
/// which servers do not send on an open connection.
pub fn decode_notification(body: &mut Reader, chroot: &str) -> Result<Option<(EventType, String)>, Malformed> {
    let kind = body.int()?;
    let _state = body.int()?;
    let path = strip_chroot(&body.string()?, chroot);
    let kind = match kind {
        -1 => return Ok(None),
        1 => EventType::NodeCreated,
        2 => EventType::NodeDeleted,
        3 => EventType::NodeDataChanged,
        4 => EventType::NodeChildrenChanged,
        other => return Err(Malformed(format!("watch event type {other}"))),
    };
    Ok(Some((kind, path)))
}

/// The connect request: a new session (`session` 0) or a reconnect to one.
pub fn connect_request(last_zxid: i64, timeout_ms: u32, session: i64, password: &[u8]) -> Writer {
    let mut w = Writer::default();
    let password = if password.is_empty() { &[0u8; 16][..] } else { password };
    w.int(0).long(last_zxid).int(timeout_ms as i32).long(session).buffer(password).boolean(false);
    w
}

/// The server's answer to a connect: the negotiated timeout (0: the session has expired), the
/// session and its password.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Connected {
    pub timeout_ms: u32,
    pub session: i64,
    pub password: Vec<u8>,
}

pub fn decode_connected(payload: &[u8]) -> Result<Connected, Malformed> {
    let mut r = Reader::new(payload);
    let _protocol = r.int()?;
    let timeout = r.int()?;
    let session = r.long()?;
    let password = r.buffer()?;
    Ok(Connected { timeout_ms: timeout.max(0) as u32, session, password })
}

/// A header-only request: a ping or closeSession.
pub fn bare_request(xid: i32, op: i32) -> Writer {
    let mut w = Writer::default();
    w.int(xid).int(op);
    w
}

/// SetWatches: re-arms the watches a dropped connection lost, each firing at once if its node
/// changed after `relative_zxid` (the last zxid the client saw).
pub fn set_watches(relative_zxid: i64, data: &[String], exist: &[String], child: &[String], chroot: &str) -> Writer {
    let full = |list: &[String]| list.iter().map(|p| format!("{chroot}{p}")).collect::<Vec<_>>();
    let mut w = Writer::default();
    w.int(SET_WATCHES_XID).int(op::SET_WATCHES).long(relative_zxid);
    w.strings(&full(data)).strings(&full(exist)).strings(&full(child));
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_create_is_framed_as_create2_with_the_open_acl_under_the_chroot() {
        let frame = encode_request(7, &Request::create("/lock/n-", CreateMode::EphemeralSequential), "/run").frame();
        let mut r = Reader::new(&frame);
        assert_eq!(r.int().unwrap() as usize, frame.len() - 4);
        assert_eq!((r.int().unwrap(), r.int().unwrap()), (7, op::CREATE2));
        assert_eq!(r.string().unwrap(), "/run/lock/n-");
        assert_eq!(r.buffer().unwrap(), b"");
        assert_eq!((r.int().unwrap(), r.int().unwrap()), (1, 31));
        assert_eq!((r.string().unwrap(), r.string().unwrap()), ("world".to_string(), "anyone".to_string()));
        assert_eq!(r.int().unwrap(), 3);
        assert_eq!(r.remaining(), 0);
    }

    #[test]
    fn a_missing_node_is_an_answer_to_exists_and_an_error_to_the_rest() {
        let exists = Request::Exists { path: "/a".into(), watch: true };
        let get = Request::GetData { path: "/a".into(), watch: false };
        assert_eq!(decode_result(&exists, -101, &mut Reader::new(&[]), ""), Ok(Ok(WireResponse::Exists(None))));
        assert_eq!(decode_result(&get, -101, &mut Reader::new(&[]), ""), Ok(Err(ZkError::NoNode)));
        assert!(decode_result(&get, -999, &mut Reader::new(&[]), "").is_err(), "an unknown code is not guessed");
    }

    #[test]
    fn paths_come_back_without_the_chroot() {
        assert_eq!(strip_chroot("/run/lock/n-0000000001", "/run"), "/lock/n-0000000001");
        assert_eq!(strip_chroot("/run", "/run"), "/");
        assert_eq!(strip_chroot("/runner/x", "/run"), "/runner/x", "only a whole name is a prefix");
    }

    #[test]
    fn a_short_frame_is_malformed_not_a_panic() {
        let mut r = Reader::new(&[0, 0, 0, 9, b'a']);
        assert!(r.string().is_err());
    }
}
