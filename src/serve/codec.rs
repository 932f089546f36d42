//! ZooKeeper's wire format in the server's direction: a client's frame read as what it asks
//! (`FromClient`), and what the server answers (`ToClient`) written as a frame. Nothing here
//! decides anything: `Served` does, through the model.
//!
//! A frame is a 4-byte big-endian length and its payload. A connection's first frame is the
//! ConnectRequest (no header); every later one is a request header (xid, op code) and the op's
//! record. Replies are a header (xid, zxid, err) and, when err is 0, the op's response record.

use crate::wire::jute::{self, op, Malformed, Reader, Writer};
use zklab_model::{
    CreateMode, EventType, Op, OpResult, Request, Response, SessionId, Stat, WatchedEvent, ZkError, ZkResult,
};

/// The ZooKeeper client library's ConnectRequest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Connect {
    pub last_zxid: i64,
    pub timeout_ms: i32,
    /// 0: a new session; else the session the client reconnects to.
    pub session: i64,
    pub password: Vec<u8>,
    /// Whether the client sent the readOnly flag (3.4 and later clients do; it is echoed back).
    pub read_only: Option<bool>,
}

/// Watches a reconnecting client re-arms (SetWatches, or SetWatches2 with its persistent ones).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rearm {
    pub relative_zxid: i64,
    pub data: Vec<String>,
    pub exist: Vec<String>,
    pub child: Vec<String>,
    /// SetWatches2's persistent and persistent-recursive watches, which the model does not keep.
    pub persistent: usize,
}

/// What one frame from a client asks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FromClient {
    Connect(Connect),
    Ping,
    /// closeSession: the session ends now, its ephemerals with it.
    Close {
        xid: i32,
    },
    SetWatches {
        xid: i32,
        rearm: Rearm,
    },
    /// An auth packet (addAuthInfo): acknowledged, and changes nothing, as the model keeps no ACLs.
    Auth,
    /// An op the model serves. `code` is the wire op, which says how the reply is written
    /// (create or create2, getChildren or getChildren2).
    Request {
        xid: i32,
        code: i32,
        request: Request,
    },
    /// checkWatches: does the session still have this watch (Curator asks as it releases a lock).
    CheckWatches {
        xid: i32,
        path: String,
        kind: Watched,
    },
    /// An op the model does not serve: answered Unimplemented, and the connection closed.
    Unserved {
        xid: i32,
        code: i32,
    },
    /// A request whose data is not UTF-8, which the model cannot hold: answered BadArguments.
    Undecodable {
        xid: i32,
        code: i32,
        why: String,
    },
}

/// The kind of watch checkWatches asks about (ZooKeeper's `WatcherType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Watched {
    Children,
    Data,
    Any,
}

/// What the server sends one connection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToClient {
    /// The ConnectResponse: a timeout of 0 says the session is gone (expired, closed, unknown).
    Connected {
        timeout_ms: i32,
        session: i64,
        password: Vec<u8>,
        read_only: Option<bool>,
    },
    Pong {
        zxid: i64,
    },
    /// A reply to a request the model served, written as the wire op `code` answers.
    Reply {
        xid: i32,
        zxid: i64,
        code: i32,
        result: ZkResult,
    },
    /// A multi that failed at op `failed` of `ops` with `error`.
    MultiFailed {
        xid: i32,
        zxid: i64,
        ops: usize,
        failed: usize,
        error: ZkError,
    },
    /// A reply with no record: closeSession's, SetWatches', auth's, or an error code alone.
    Bare {
        xid: i32,
        zxid: i64,
        err: i32,
    },
    Notification(WatchedEvent),
}

/// The id a session has on the wire: ZooKeeper puts the server's id in the top byte (here 1)
/// and numbers sessions below it.
pub fn wire_session(id: SessionId) -> i64 {
    SESSION_BASE | i64::from(id.0)
}

/// The model's session a wire id names, if it is one this server handed out.
pub fn model_session(wire: i64) -> Option<SessionId> {
    (wire & !0xffff_ffff == SESSION_BASE).then_some(SessionId((wire & 0xffff_ffff) as u32))
}

const SESSION_BASE: i64 = 1 << 56;

/// ZooKeeper's error codes (`KeeperException.Code`).
pub mod code {
    pub const OK: i32 = 0;
    pub const RUNTIME_INCONSISTENCY: i32 = -2;
    pub const UNIMPLEMENTED: i32 = -6;
    pub const NO_WATCHER: i32 = -121;
    pub const BAD_ARGUMENTS: i32 = -8;
    pub const NO_NODE: i32 = -101;
    pub const BAD_VERSION: i32 = -103;
    pub const NO_CHILDREN_FOR_EPHEMERALS: i32 = -108;
    pub const NODE_EXISTS: i32 = -110;
    pub const NOT_EMPTY: i32 = -111;
    pub const SESSION_EXPIRED: i32 = -112;
}

/// The code a server sends for `error`. A ConnectionLoss is never sent: it is what a client
/// concludes when its connection goes.
pub fn code_of(error: ZkError) -> i32 {
    match error {
        ZkError::NoNode => code::NO_NODE,
        ZkError::NodeExists => code::NODE_EXISTS,
        ZkError::NotEmpty => code::NOT_EMPTY,
        ZkError::BadVersion => code::BAD_VERSION,
        ZkError::NoChildrenForEphemerals => code::NO_CHILDREN_FOR_EPHEMERALS,
        ZkError::SessionExpired => code::SESSION_EXPIRED,
        ZkError::BadArguments | ZkError::ConnectionLoss => code::BAD_ARGUMENTS,
    }
}

/// The longest frame a client may send: ZooKeeper's default jute.maxbuffer (1 MiB) and room
/// for a header. A longer one ends its connection, as on ZooKeeper.
pub const MAX_FRAME: usize = 0xfffff + 1024;

/// The payload of one frame from a client whose 4-byte length `head` was read already; `None`
/// at the end of the connection or for a length no client may send.
pub fn read_payload(stream: &mut impl std::io::Read, head: [u8; 4]) -> Option<Vec<u8>> {
    let len = usize::try_from(i32::from_be_bytes(head)).ok().filter(|len| *len <= MAX_FRAME)?;
    let mut payload = vec![0u8; len];
    stream.read_exact(&mut payload).ok()?;
    Some(payload)
}

/// The connection's first frame: the ConnectRequest.
pub fn decode_connect(payload: &[u8]) -> Result<Connect, Malformed> {
    let mut r = Reader::new(payload);
    let _protocol = r.int()?;
    let last_zxid = r.long()?;
    let timeout_ms = r.int()?;
    let session = r.long()?;
    let password = r.buffer()?;
    // Clients before 3.4 send no readOnly flag; the server answers them without one.
    let read_only = if r.remaining() > 0 { Some(r.boolean()?) } else { None };
    Ok(Connect { last_zxid, timeout_ms, session, password, read_only })
}

/// Every later frame: a request header and its record.
pub fn decode_request(payload: &[u8]) -> Result<FromClient, Malformed> {
    let mut r = Reader::new(payload);
    let xid = r.int()?;
    let code = r.int()?;
    let request = match code {
        op::PING => return Ok(FromClient::Ping),
        op::CLOSE_SESSION => return Ok(FromClient::Close { xid }),
        op::AUTH => return Ok(FromClient::Auth),
        op::SET_WATCHES | op::SET_WATCHES2 => {
            let mut rearm = Rearm {
                relative_zxid: r.long()?,
                data: r.strings()?,
                exist: r.strings()?,
                child: r.strings()?,
                persistent: 0,
            };
            if code == op::SET_WATCHES2 {
                rearm.persistent = r.strings()?.len() + r.strings()?.len();
            }
            return Ok(FromClient::SetWatches { xid, rearm });
        }
        op::CREATE | op::CREATE2 | op::CREATE_CONTAINER => match create(&mut r)? {
            Ok((path, data, mode)) => Request::Create { path, data, mode },
            Err(Unread::Data(why)) => return Ok(FromClient::Undecodable { xid, code, why }),
            Err(Unread::Op) => return Ok(FromClient::Unserved { xid, code }),
        },
        op::DELETE => Request::Delete { path: r.string()?, version: r.int()? },
        op::EXISTS => Request::Exists { path: r.string()?, watch: r.boolean()? },
        op::GET_DATA => Request::GetData { path: r.string()?, watch: r.boolean()? },
        op::SET_DATA => {
            let path = r.string()?;
            match utf8(r.buffer()?) {
                Ok(data) => Request::SetData { path, data, version: r.int()? },
                Err(why) => return Ok(FromClient::Undecodable { xid, code, why }),
            }
        }
        op::GET_CHILDREN | op::GET_CHILDREN2 => Request::GetChildren { path: r.string()?, watch: r.boolean()? },
        op::SYNC => Request::Sync { path: r.string()? },
        op::CHECK_WATCHES => {
            let path = r.string()?;
            let kind = match r.int()? {
                1 => Watched::Children,
                2 => Watched::Data,
                _ => Watched::Any,
            };
            return Ok(FromClient::CheckWatches { xid, path, kind });
        }
        op::MULTI => match multi(&mut r)? {
            Ok(ops) => Request::Multi { ops },
            Err(Unread::Data(why)) => return Ok(FromClient::Undecodable { xid, code, why }),
            Err(Unread::Op) => return Ok(FromClient::Unserved { xid, code }),
        },
        _ => return Ok(FromClient::Unserved { xid, code }),
    };
    Ok(FromClient::Request { xid, code, request })
}

fn utf8(bytes: Vec<u8>) -> Result<String, String> {
    String::from_utf8(bytes).map_err(|_| "data that is not UTF-8, which the model does not hold".to_string())
}

/// A CreateRequest's path, data and mode; its ACL is read and dropped (the model keeps none).
/// The mode is the flags' (as ZooKeeper's server reads it); the op code decides only the reply's
/// shape (createContainer's carries the stat). TTL nodes (flags 5 and 6) are not served: a
/// ZooKeeper 3.8 server with its default settings answers them Unimplemented too.
fn create(r: &mut Reader) -> Result<Result<(String, String, CreateMode), Unread>, Malformed> {
    let path = r.string()?;
    let data = r.buffer()?;
    for _ in 0..r.int()?.max(0) {
        let (_perms, _scheme, _id) = (r.int()?, r.string()?, r.string()?);
    }
    let flags = r.int()?;
    let mode = match flags {
        0 => CreateMode::Persistent,
        1 => CreateMode::Ephemeral,
        2 => CreateMode::PersistentSequential,
        3 => CreateMode::EphemeralSequential,
        4 => CreateMode::Container,
        _ => return Ok(Err(Unread::Op)),
    };
    Ok(utf8(data).map(|data| (path, data, mode)).map_err(Unread::Data))
}

/// Why a multi's op could not be read as the model's.
enum Unread {
    Data(String),
    Op,
}

fn multi(r: &mut Reader) -> Result<Result<Vec<Op>, Unread>, Malformed> {
    let mut ops = Vec::new();
    loop {
        let kind = r.int()?;
        let done = r.boolean()?;
        let _err = r.int()?;
        if done {
            return Ok(Ok(ops));
        }
        ops.push(match kind {
            // ZooKeeper 3.8.0 answers a create2 inside a multi as a plain create, its path
            // alone (ZOOKEEPER-4026, recorded in conformance case 49); so does the model.
            op::CREATE | op::CREATE2 => match create(r)? {
                Ok((path, data, mode)) => Op::Create { path, data, mode },
                Err(unread) => return Ok(Err(unread)),
            },
            op::DELETE => Op::Delete { path: r.string()?, version: r.int()? },
            op::SET_DATA => {
                let path = r.string()?;
                match utf8(r.buffer()?) {
                    Ok(data) => Op::SetData { path, data, version: r.int()? },
                    Err(why) => return Ok(Err(Unread::Data(why))),
                }
            }
            op::CHECK => Op::Check { path: r.string()?, version: r.int()? },
            _ => return Ok(Err(Unread::Op)),
        });
    }
}

/// The frame that carries `message`.
pub fn encode(message: &ToClient) -> Vec<u8> {
    let mut w = Writer::default();
    match message {
        ToClient::Connected { timeout_ms, session, password, read_only } => {
            w.int(0).int(*timeout_ms).long(*session).buffer(password);
            if let Some(flag) = read_only {
                w.boolean(*flag);
            }
        }
        ToClient::Pong { zxid } => {
            w.int(jute::PING_XID).long(*zxid).int(code::OK);
        }
        ToClient::Bare { xid, zxid, err } => {
            w.int(*xid).long(*zxid).int(*err);
        }
        ToClient::Notification(event) => {
            let kind = match event.kind {
                EventType::NodeCreated => 1,
                EventType::NodeDeleted => 2,
                EventType::NodeDataChanged => 3,
                EventType::NodeChildrenChanged => 4,
            };
            // The state is SyncConnected (3): a server sends events only on a live connection.
            w.int(jute::NOTIFICATION_XID).long(-1).int(code::OK).int(kind).int(3).string(&event.path);
        }
        ToClient::Reply { xid, zxid, code, result } => reply(&mut w, *xid, *zxid, *code, result),
        ToClient::MultiFailed { xid, zxid, ops, failed, error } => {
            failed_multi(&mut w, *xid, *zxid, *ops, *failed, *error)
        }
    }
    w.frame()
}

fn reply(w: &mut Writer, xid: i32, zxid: i64, wire_op: i32, result: &ZkResult) {
    let response = match result {
        // exists answers a missing node with NoNode in the header, as ZooKeeper does.
        Ok(Response::Exists(None)) => {
            w.int(xid).long(zxid).int(code::NO_NODE);
            return;
        }
        Ok(ok) => ok,
        Err(error) => {
            w.int(xid).long(zxid).int(code_of(*error));
            return;
        }
    };
    w.int(xid).long(zxid).int(code::OK);
    let stat = write_stat;
    match response {
        Response::Created { path, stat: s } => {
            w.string(path);
            if wire_op != op::CREATE {
                stat(w, s);
            }
        }
        Response::Deleted => {}
        Response::Exists(Some(s)) | Response::DataSet(s) => stat(w, s),
        Response::Exists(None) => unreachable!("answered above"),
        Response::Data { data, stat: s } => {
            w.buffer(data.as_bytes());
            stat(w, s);
        }
        Response::Children { children, stat: s } => {
            w.strings(&children.iter().cloned().collect::<Vec<_>>());
            if wire_op == op::GET_CHILDREN2 {
                stat(w, s);
            }
        }
        Response::Synced { path } => {
            w.string(path);
        }
        // Each result behind a MultiHeader (its op, not done, no error), then the end marker. A
        // create's result is its path alone, as 3.8 answers a create2 inside a multi
        // (ZOOKEEPER-4026).
        Response::Multi(results) => {
            for result in results {
                match result {
                    OpResult::Created { path } => {
                        w.int(op::CREATE).boolean(false).int(code::OK).string(path);
                    }
                    OpResult::Deleted => {
                        w.int(op::DELETE).boolean(false).int(code::OK);
                    }
                    OpResult::DataSet(s) => {
                        w.int(op::SET_DATA).boolean(false).int(code::OK);
                        stat(w, s);
                    }
                    OpResult::Checked => {
                        w.int(op::CHECK).boolean(false).int(code::OK);
                    }
                }
            }
            w.int(op::ERROR).boolean(true).int(-1);
        }
    }
}

/// A failed multi's reply: a header with no error (ZooKeeper 3.8's), and a record with an
/// ErrorResult per op: 0 for the ops before the failed one, its code, RuntimeInconsistency for
/// the ops after it.
fn failed_multi(w: &mut Writer, xid: i32, zxid: i64, ops: usize, failed: usize, error: ZkError) {
    w.int(xid).long(zxid).int(code::OK);
    for i in 0..ops {
        let err = match i.cmp(&failed) {
            std::cmp::Ordering::Less => code::OK,
            std::cmp::Ordering::Equal => code_of(error),
            std::cmp::Ordering::Greater => code::RUNTIME_INCONSISTENCY,
        };
        w.int(op::ERROR).boolean(false).int(err).int(err);
    }
    w.int(op::ERROR).boolean(true).int(-1);
}

/// ZooKeeper's Stat record. The model keeps no clock, so ctime and mtime are 0.
fn write_stat(w: &mut Writer, s: &Stat) {
    w.long(s.czxid).long(s.mzxid).long(0).long(0);
    w.int(s.version).int(s.cversion).int(s.aversion).long(s.ephemeral_owner.map_or(0, wire_session));
    w.int(s.data_length).int(s.num_children).long(s.pzxid);
}

#[cfg(test)]
mod tests {
    use super::*;
    use zklab_model::{Listing, SessionId};

    fn requests() -> Vec<Request> {
        vec![
            Request::create("/lock/n-", CreateMode::EphemeralSequential),
            Request::Create { path: "/a".into(), data: "héllo".into(), mode: CreateMode::Persistent },
            Request::Delete { path: "/a".into(), version: 3 },
            Request::exists("/a", true),
            Request::get_data("/a", false),
            Request::SetData { path: "/a".into(), data: "x".into(), version: -1 },
            Request::get_children("/lock", true),
            Request::sync("/"),
            Request::Multi {
                ops: vec![
                    Op::Create { path: "/m/a".into(), data: String::new(), mode: CreateMode::Persistent },
                    Op::Check { path: "/m".into(), version: 1 },
                    Op::SetData { path: "/m".into(), data: "d".into(), version: 0 },
                    Op::Delete { path: "/m/b".into(), version: -1 },
                ],
            },
        ]
    }

    /// What the client side of the wire (src/wire) sends is read back as the request it was.
    #[test]
    fn every_request_the_client_side_writes_is_read_as_itself() {
        for (xid, request) in (1..).zip(requests()) {
            let frame = jute::encode_request(xid, &request, "").frame();
            match decode_request(&frame[4..]) {
                Ok(FromClient::Request { xid: x, request: r, .. }) => assert_eq!((x, r), (xid, request)),
                other => panic!("{request:?} read as {other:?}"),
            }
        }
    }

    /// What the server writes is read by the client side as the model's answer, numbers and all.
    #[test]
    fn every_reply_is_read_by_the_client_side_as_the_models() {
        let stat = Stat {
            czxid: 5,
            mzxid: 6,
            pzxid: 7,
            version: 1,
            cversion: 2,
            aversion: 0,
            ephemeral_owner: Some(SessionId(3)),
            data_length: 1,
            num_children: 0,
        };
        // ZooKeeper reports a container's ephemeral owner as 0, like a persistent node's.
        let container = Stat { ephemeral_owner: None, ..stat };
        let cases: Vec<(Request, i32, ZkResult)> = vec![
            (
                Request::create("/a", CreateMode::Ephemeral),
                op::CREATE2,
                Ok(Response::Created { path: "/a".into(), stat }),
            ),
            (
                Request::create("/c", CreateMode::Container),
                op::CREATE_CONTAINER,
                Ok(Response::Created { path: "/c".into(), stat: container }),
            ),
            (Request::exists("/a", false), op::EXISTS, Ok(Response::Exists(Some(stat)))),
            (Request::exists("/a", false), op::EXISTS, Ok(Response::Exists(None))),
            (Request::get_data("/a", false), op::GET_DATA, Ok(Response::Data { data: "d".into(), stat })),
            (
                Request::get_children("/", false),
                op::GET_CHILDREN2,
                Ok(Response::Children { children: Listing::new(vec!["a".into(), "b".into()]), stat }),
            ),
            (Request::sync("/a"), op::SYNC, Ok(Response::Synced { path: "/a".into() })),
            (Request::delete("/a"), op::DELETE, Err(ZkError::NotEmpty)),
            (
                Request::Multi { ops: vec![] },
                op::MULTI,
                Ok(Response::Multi(vec![OpResult::Created { path: "/m/a".into() }, OpResult::DataSet(stat)])),
            ),
        ];
        for (request, code, result) in cases {
            let frame = encode(&ToClient::Reply { xid: 9, zxid: 42, code, result: result.clone() });
            let mut r = Reader::new(&frame[4..]);
            assert_eq!((r.int().unwrap(), r.long().unwrap()), (9, 42));
            let err = r.int().unwrap();
            let read = jute::decode_result(&request, err, &mut r, "").unwrap();
            let read = read.map(|w| w.to_model(&mut |z| z, &mut |s| model_session(s).unwrap()));
            assert_eq!(read, result, "{request:?}");
            assert_eq!(r.remaining(), 0, "{request:?}: nothing left unread");
        }
    }

    #[test]
    fn a_failed_multi_names_its_failed_op_under_a_header_without_error() {
        let frame = encode(&ToClient::MultiFailed { xid: 4, zxid: 8, ops: 3, failed: 1, error: ZkError::NodeExists });
        let mut r = Reader::new(&frame[4..]);
        assert_eq!((r.int().unwrap(), r.long().unwrap(), r.int().unwrap()), (4, 8, 0));
        let request = Request::Multi { ops: vec![] };
        assert_eq!(jute::decode_result(&request, 0, &mut r, "").unwrap(), Err(ZkError::NodeExists));
    }

    #[test]
    fn a_container_is_created_by_its_flags() {
        let mut w = Writer::default();
        w.int(3).int(op::CREATE_CONTAINER).string("/c").buffer(b"").int(0).int(4);
        let want = Request::Create { path: "/c".into(), data: String::new(), mode: CreateMode::Container };
        assert_eq!(
            decode_request(&w.frame()[4..]),
            Ok(FromClient::Request { xid: 3, code: op::CREATE_CONTAINER, request: want })
        );
        // Its reply, path and stat, is read back in every_reply_is_read_by_the_client_side_as_the_models.
    }

    #[test]
    fn ops_it_does_not_serve_are_named_not_guessed() {
        let mut w = Writer::default();
        // A TTL node (flags 5): the model has none.
        w.int(3).int(op::CREATE).string("/c").buffer(b"").int(0).int(5);
        assert_eq!(decode_request(&w.frame()[4..]), Ok(FromClient::Unserved { xid: 3, code: op::CREATE }));
        let mut w = Writer::default();
        w.int(5).int(op::SET_DATA).string("/a").buffer(&[0xff, 0xfe]).int(-1);
        assert!(matches!(decode_request(&w.frame()[4..]), Ok(FromClient::Undecodable { xid: 5, .. })));
        assert!(decode_request(&[0, 0]).is_err(), "a short frame is malformed, not a panic");
        assert_eq!(model_session(wire_session(SessionId(7))), Some(SessionId(7)));
        assert_eq!(model_session(0x1234), None);
    }
}
