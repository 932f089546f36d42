//! `zklab serve`: the model behind ZooKeeper's wire protocol answers a client over TCP as the
//! real server does. Every op script of conformance/cases is run over the wire against the
//! served model (zklab's own client, the one `zk-script --server` runs against a real
//! ZooKeeper) and compared with every recording of it. The real client libraries (the Java
//! client, kazoo) are run against it by scripts/serve-conformance.sh.
#![cfg(feature = "live")]

use serde_json::Value;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use zklab::model::server::ServerConfig;
use zklab::model::ClientBehaviour;

fn load(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("conformance")
}

/// The server the recordings were made on: tick 100 ms, session timeouts 200..20000 ms.
fn recorded_config() -> ServerConfig {
    ServerConfig { tick_ms: 100, max_session_timeout_ms: Some(20_000), ..ServerConfig::default() }
}

#[test]
fn every_recorded_case_run_over_the_wire_against_the_served_model_matches_the_real_server() {
    let served = zklab::serve::start(0, recorded_config()).expect("a free port");
    let addr = served.addr().to_string();
    let mut cases: Vec<_> = std::fs::read_dir(root().join("cases")).unwrap().map(|e| e.unwrap().path()).collect();
    cases.sort();
    let mut compared = 0;
    let mut failures = Vec::new();
    for case in &cases {
        let name = case.file_name().unwrap();
        for (expected, client) in [
            (root().join("expected").join(name), zklab::conformance::DEFAULT_CLIENT),
            (root().join("expected/java").join(name), ClientBehaviour::Java),
            (root().join("expected/kazoo").join(name), ClientBehaviour::Kazoo),
        ] {
            if !expected.exists() {
                continue;
            }
            compared += 1;
            let actual = zklab::conformance::run_script_live_as(&load(case), &addr, client)
                .unwrap_or_else(|e| panic!("{}: {e}", case.display()));
            for difference in zklab::conformance::differences(&load(&expected), &actual) {
                failures.push(format!("{} ({client:?}): {difference}", name.to_string_lossy()));
            }
        }
    }
    let tally = served.stop();
    assert!(compared >= 50, "every recording is compared, {compared} were");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Non-vacuous: the cases went through the served model, every kind of request among them.
    for op in ["create", "delete", "exists", "getData", "setData", "getChildren", "sync", "multi", "closeSession"] {
        assert!(tally.requests.get(op).copied().unwrap_or(0) > 0, "no {op} was served: {tally:?}");
    }
    assert!(tally.notifications > 0 && tally.sessions > 50, "{tally:?}");
}

/// One frame: its 4-byte length and payload.
fn frame(payload: &[u8]) -> Vec<u8> {
    let mut out = (payload.len() as i32).to_be_bytes().to_vec();
    out.extend_from_slice(payload);
    out
}

fn read_frame(stream: &mut TcpStream) -> Vec<u8> {
    let mut len = [0u8; 4];
    stream.read_exact(&mut len).unwrap();
    let mut payload = vec![0u8; i32::from_be_bytes(len) as usize];
    stream.read_exact(&mut payload).unwrap();
    payload
}

/// A connect handshake by hand: (timeout, session id, password) of the answer.
fn handshake(stream: &mut TcpStream, session: i64, password: &[u8]) -> (i32, i64, Vec<u8>) {
    let mut connect = Vec::new();
    connect.extend_from_slice(&0i32.to_be_bytes());
    connect.extend_from_slice(&0i64.to_be_bytes());
    connect.extend_from_slice(&4000i32.to_be_bytes());
    connect.extend_from_slice(&session.to_be_bytes());
    connect.extend_from_slice(&(password.len() as i32).to_be_bytes());
    connect.extend_from_slice(password);
    connect.push(0);
    stream.write_all(&frame(&connect)).unwrap();
    let reply = read_frame(stream);
    let timeout = i32::from_be_bytes(reply[4..8].try_into().unwrap());
    let id = i64::from_be_bytes(reply[8..16].try_into().unwrap());
    let len = i32::from_be_bytes(reply[16..20].try_into().unwrap()) as usize;
    (timeout, id, reply[20..20 + len].to_vec())
}

#[test]
fn a_session_is_taken_over_with_its_password_and_refused_with_another() {
    let served = zklab::serve::start(0, recorded_config()).unwrap();
    let mut first = TcpStream::connect(served.addr()).unwrap();
    let (timeout, id, password) = handshake(&mut first, 0, &[0; 16]);
    assert_eq!(timeout, 4000);
    assert_ne!(id, 0);
    // A wrong password: the session is gone as far as that client is concerned (timeout 0).
    let mut stranger = TcpStream::connect(served.addr()).unwrap();
    assert_eq!(handshake(&mut stranger, id, &[7; 16]), (0, 0, vec![0; 16]));
    // The right one moves the session, and the first connection is closed.
    let mut second = TcpStream::connect(served.addr()).unwrap();
    assert_eq!(handshake(&mut second, id, &password), (4000, id, password.clone()));
    let mut rest = Vec::new();
    assert_eq!(first.read_to_end(&mut rest).unwrap_or(0), 0, "the old connection is closed");
    served.stop();
}

#[test]
fn an_op_it_does_not_serve_is_answered_unimplemented_and_the_connection_closed() {
    let served = zklab::serve::start(0, recorded_config()).unwrap();
    let mut stream = TcpStream::connect(served.addr()).unwrap();
    handshake(&mut stream, 0, &[0; 16]);
    // getACL (op 6) of "/": xid 1.
    let mut request = Vec::new();
    request.extend_from_slice(&1i32.to_be_bytes());
    request.extend_from_slice(&6i32.to_be_bytes());
    request.extend_from_slice(&1i32.to_be_bytes());
    request.push(b'/');
    stream.write_all(&frame(&request)).unwrap();
    let reply = read_frame(&mut stream);
    assert_eq!(i32::from_be_bytes(reply[0..4].try_into().unwrap()), 1, "the xid");
    assert_eq!(i32::from_be_bytes(reply[12..16].try_into().unwrap()), -6, "Unimplemented");
    let mut rest = Vec::new();
    assert_eq!(stream.read_to_end(&mut rest).unwrap_or(0), 0, "then the connection is closed");
    let tally = served.stop();
    assert_eq!(tally.unserved.get(&6), Some(&1));
}

#[test]
fn four_letter_words_answer_from_the_model() {
    let served = zklab::serve::start(0, recorded_config()).unwrap();
    let ask = |word: &str| {
        let mut stream = TcpStream::connect(served.addr()).unwrap();
        stream.write_all(word.as_bytes()).unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        answer
    };
    assert_eq!(ask("ruok"), "imok");
    assert!(ask("srvr").contains("Mode: standalone"));
    let mut client = TcpStream::connect(served.addr()).unwrap();
    let (_, id, _) = handshake(&mut client, 0, &[0; 16]);
    assert!(ask("cons").contains(&format!("sid=0x{id:x}")), "the open session is listed");
    served.stop();
}
