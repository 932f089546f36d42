//! ZooKeeper's four-letter words on the client port, answered from the served model in the
//! formats ZooKeeper 3.8 prints (the lines tools parse: sessions as `0x` hex, paths tab-indented).
//! A connection whose first four bytes are one of these words gets its answer and is closed.

use super::codec::wire_session;
use super::served::Served;
use std::fmt::Write as _;

/// The words answered. Any other four bytes are read as the length of a ConnectRequest.
pub const WORDS: [&str; 7] = ["ruok", "srvr", "stat", "cons", "wchc", "dump", "mntr"];

/// Whether a connection's first four bytes are a four-letter word.
pub fn word(first: [u8; 4]) -> Option<&'static str> {
    WORDS.iter().copied().find(|w| w.as_bytes() == first)
}

/// The answer to `word`.
pub fn answer(served: &Served, word: &str) -> String {
    let server = served.server();
    let mut out = String::new();
    let sessions = served.open_sessions();
    match word {
        "ruok" => out.push_str("imok"),
        "srvr" | "stat" => {
            let _ = writeln!(out, "Zookeeper version: 3.8.0-zklab, served from zklab's model");
            let _ = writeln!(out, "Latency min/avg/max: 0/0.0/0");
            let _ = writeln!(out, "Received: {}", served.tally().requests.values().sum::<u64>());
            let _ = writeln!(out, "Sent: {}", served.tally().requests.values().sum::<u64>());
            let _ =
                writeln!(out, "Connections: {}", sessions.iter().filter(|(s, _)| served.conn_of(*s).is_some()).count());
            let _ = writeln!(out, "Outstanding: 0");
            let _ = writeln!(out, "Zxid: 0x{:x}", server.zxid());
            let _ = writeln!(out, "Mode: standalone");
            let _ = writeln!(out, "Node count: {}", server.tree().iter().count());
        }
        "cons" => {
            for (session, timeout) in &sessions {
                if let Some(conn) = served.conn_of(*session) {
                    let _ = writeln!(
                        out,
                        " /127.0.0.1:0[{conn}](queued=0,recved=0,sent=0,sid=0x{:x},to={timeout})",
                        wire_session(*session)
                    );
                }
            }
            out.push('\n');
        }
        // The data and exists watches of each session (ZooKeeper's `wchc` lists no child watch).
        "wchc" => {
            for (session, _) in &sessions {
                let (data, _child) = server.watches_of(*session);
                if !data.is_empty() {
                    let _ = writeln!(out, "0x{:x}", wire_session(*session));
                    for path in data {
                        let _ = writeln!(out, "\t{path}");
                    }
                }
            }
            out.push('\n');
        }
        "dump" => {
            let owners: Vec<_> = sessions
                .iter()
                .map(|(s, _)| (*s, server.tree().ephemerals_of(*s)))
                .filter(|(_, paths)| !paths.is_empty())
                .collect();
            let _ = writeln!(out, "SessionTracker dump:\nSession Sets ({0})/({0}):", sessions.len());
            let _ = writeln!(out, "ephemeral nodes dump:\nSessions with Ephemerals ({}):", owners.len());
            for (session, paths) in owners {
                let _ = writeln!(out, "0x{:x}:", wire_session(session));
                for path in paths {
                    let _ = writeln!(out, "\t{path}");
                }
            }
            let _ = writeln!(out, "Connections dump:");
        }
        "mntr" => {
            let watches: usize = sessions
                .iter()
                .map(|(s, _)| {
                    let (data, child) = server.watches_of(*s);
                    data.len() + child.len()
                })
                .sum();
            let _ = writeln!(out, "zk_version\t3.8.0-zklab");
            let _ = writeln!(out, "zk_server_state\tstandalone");
            let _ = writeln!(out, "zk_znode_count\t{}", server.tree().iter().count());
            let _ = writeln!(out, "zk_watch_count\t{watches}");
            let _ = writeln!(
                out,
                "zk_ephemerals_count\t{}",
                server.tree().iter().filter(|(_, n)| n.owner.is_some()).count()
            );
        }
        _ => {}
    }
    out
}
