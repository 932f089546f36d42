//! ZooKeeper's four-letter words, asked over the client port, and the parts of their answers the
//! live runner reads. The server must allow them (`4lw.commands.whitelist=*`). Answers name
//! sessions by their id in hex (Java's `Long.toHexString`, so a negative id is its two's
//! complement); paths are the server's, chroot included.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

const PATIENCE: Duration = Duration::from_secs(5);

/// The server's whole answer to `word`.
pub(crate) fn ask(server: &str, word: &str) -> Result<String, String> {
    let addr = server
        .to_socket_addrs()
        .map_err(|e| format!("bad server address `{server}`: {e}"))?
        .next()
        .ok_or_else(|| format!("bad server address `{server}`"))?;
    let mut stream = TcpStream::connect_timeout(&addr, PATIENCE).map_err(|e| format!("`{word}` to {server}: {e}"))?;
    stream.set_read_timeout(Some(PATIENCE)).map_err(|e| e.to_string())?;
    stream.write_all(word.as_bytes()).map_err(|e| format!("`{word}` to {server}: {e}"))?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).map_err(|e| format!("`{word}` from {server}: {e}"))?;
    if answer.contains("is not executed because it is not in the whitelist") {
        return Err(format!("{server} refuses `{word}`: start it with 4lw.commands.whitelist=*"));
    }
    Ok(answer)
}

fn session_id(hex: &str) -> Option<i64> {
    // Java prints the id as unsigned; the protocol carries it signed.
    u64::from_str_radix(hex.strip_prefix("0x")?, 16).ok().map(|id| id as i64)
}

/// `wchc`: the data and exists watches (not the child watches) of each session, by path.
pub(super) fn data_watches(wchc: &str) -> BTreeMap<i64, Vec<String>> {
    let mut out: BTreeMap<i64, Vec<String>> = BTreeMap::new();
    let mut current = None;
    for line in wchc.lines() {
        if let Some(path) = line.strip_prefix('\t') {
            if let Some(id) = current {
                out.entry(id).or_default().push(path.to_string());
            }
        } else {
            current = session_id(line.trim());
        }
    }
    out
}

/// `mntr`'s `zk_watch_count`: every watch on the server, child watches too (`wchs` in 3.8 counts
/// only the data watches).
pub(super) fn watch_count(mntr: &str) -> Option<usize> {
    mntr.lines().find_map(|line| line.strip_prefix("zk_watch_count")?.trim().parse().ok())
}

/// `dump`'s "Sessions with Ephemerals" section: each session's ephemeral nodes.
pub(super) fn ephemerals(dump: &str) -> BTreeMap<i64, Vec<String>> {
    let mut out: BTreeMap<i64, Vec<String>> = BTreeMap::new();
    let mut current = None;
    for line in dump.lines().skip_while(|l| !l.starts_with("Sessions with Ephemerals")).skip(1) {
        if let Some(path) = line.strip_prefix('\t') {
            if let Some(id) = current {
                out.entry(id).or_default().push(path.to_string());
            }
        } else if let Some(id) = line.strip_suffix(':').and_then(session_id) {
            current = Some(id);
        } else {
            break;
        }
    }
    out
}

/// `cons`: the sessions that still have a connection.
pub(super) fn connected_sessions(cons: &str) -> Vec<i64> {
    cons.lines()
        .filter_map(|line| {
            let rest = &line[line.find("sid=")? + 4..];
            session_id(&rest[..rest.find([',', ')']).unwrap_or(rest.len())])
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    // Answers a ZooKeeper 3.8.0 gave with two sessions, one chrooted at /zz.
    const WCHC: &str = "0x10000050ee60005\n\t/zz/e\n0x10000050ee60004\n\t/zz/e\n\t/zz/nope\n\n";
    const DUMP: &str = "SessionTracker dump:\nSession Sets (2)/(2):\n0 expire at Mon Nov 23 15:51:18 UTC 2026:\n2 \
        expire at Mon Nov 23 15:51:18 UTC 2026:\n\t0x10000050ee60005\n\t0x10000050ee60004\nephemeral nodes \
        dump:\nSessions with Ephemerals \
        (2):\n0x10000050ee60005:\n\t/zz/g\n0x10000050ee60004:\n\t/zz/f\n\t/zz/e\nConnections dump:\nConnections Sets \
        (2)/(3):\n2 expire at Mon Nov 23 15:51:20 UTC 2026:\n\tip: /127.0.0.1:41482 sessionId: 0x10000050ee60005\n";
    const CONS: &str = " /127.0.0.1:41518[0](queued=0,recved=1,sent=0)\n \
        /127.0.0.1:41482[1](queued=0,recved=4,sent=4,sid=0x10000050ee60005,lop=GETD,est=1795449076507,to=2000)\n\n";

    #[test]
    fn wchc_lists_paths_per_session() {
        let watches = data_watches(WCHC);
        assert_eq!(watches[&0x10000050ee60005], vec!["/zz/e"]);
        assert_eq!(watches[&0x10000050ee60004], vec!["/zz/e", "/zz/nope"]);
        assert_eq!(watches.len(), 2);
    }

    #[test]
    fn dump_ephemerals_skip_the_session_and_connection_sets() {
        let eph = ephemerals(DUMP);
        assert_eq!(eph[&0x10000050ee60005], vec!["/zz/g"]);
        assert_eq!(eph[&0x10000050ee60004], vec!["/zz/f", "/zz/e"]);
        assert_eq!(eph.len(), 2);
        assert!(ephemerals("Sessions with Ephemerals (0):\nConnections dump:\n").is_empty());
    }

    #[test]
    fn mntr_watch_count_and_cons_sessions() {
        assert_eq!(watch_count("zk_znode_count\t6\nzk_watch_count\t3\nzk_watch_bytes\t0\n"), Some(3));
        assert_eq!(watch_count("zk_znode_count\t6\n"), None);
        assert_eq!(connected_sessions(CONS), vec![0x10000050ee60005]);
    }

    #[test]
    fn negative_session_ids_round_trip() {
        assert_eq!(session_id("0xffffffffffffffff"), Some(-1));
        assert_eq!(session_id("nonsense"), None);
    }
}
