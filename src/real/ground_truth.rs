//! The committed transaction log as ground truth beside the model world: after a run on servers
//! started here, ZooKeeper's own `TxnLogToolkit` (in its jar) dumps every transaction the
//! ensemble committed, with its zxid and session, and the run's writes in it must be the model
//! world's writes, one for one and in the same order: each create (of the same node, by the
//! session that stands for the same model session throughout), delete, setData, and each
//! session's close with the ephemeral nodes it deleted.
//!
//! The shadow learns where the server applied each request from the replies' headers; the log
//! is what the ensemble agreed on, read afterwards by the server's own code. A write the driver
//! never saw answered, a close that deleted other nodes than the model's expiry, or two writes
//! the log orders otherwise would all show here, whatever the replies said. Failed writes (the
//! log's error transactions) and sessions' creation take a zxid on a real server but change no
//! node, and are no write of the model's: both are left out, as are the run's own set-up and
//! clean-up.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use zklab_model::world::Note;
use zklab_model::{Recipe, Request, Response, SessionId, Step, World};

/// One write, as the model and the log both say it: the kind, the node (for a close, the nodes
/// it deleted, sorted), and the session (for creates and closes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Write<S> {
    Create { path: String, session: S },
    Delete { path: String },
    SetData { path: String },
    Close { session: S, deleted: Vec<String> },
}

/// The model world's writes when `steps` are taken from `start`, in order.
pub fn model_writes<R: Recipe>(start: &World<R>, steps: &[Step]) -> Result<Vec<Write<SessionId>>, String> {
    let mut world = start.clone();
    let mut writes = Vec::new();
    for (k, step) in steps.iter().enumerate() {
        let Some(i) = step.client().map(|c| c as usize) else {
            return Err(format!("step {} is the server's own ({step}): a real run has none", k + 1));
        };
        let before = world.clients[i].session;
        let ephemerals = world.server.tree().ephemerals_of(before);
        let mut notes = Some(Vec::new());
        world.apply_logged(*step, &mut notes).map_err(|e| format!("the model refuses step {}: {e}", k + 1))?;
        if matches!(step, Step::Expire(_)) {
            let mut deleted = ephemerals;
            deleted.sort();
            writes.push(Write::Close { session: before, deleted });
        }
        let session = world.clients[i].session;
        for note in notes.unwrap_or_default() {
            let Note::Request { request, result: Some(Ok(response)) } = note else { continue };
            match (request, response) {
                // How the tool prints a multi's transactions is not read yet: such a run's log is
                // reported unread, never as disagreeing with the model.
                (Request::Multi { .. }, _) => {
                    return Err(format!("step {} commits a multi, which is not compared with the log", k + 1))
                }
                (_, Response::Created { path, .. }) => writes.push(Write::Create { path, session }),
                (Request::Delete { path, .. }, _) => writes.push(Write::Delete { path }),
                (Request::SetData { path, .. }, _) => writes.push(Write::SetData { path }),
                _ => {}
            }
        }
    }
    Ok(writes)
}

/// A transaction as `TxnLogToolkit` prints it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Txn {
    pub session: i64,
    pub zxid: i64,
    pub kind: String,
    /// What follows the kind: the path and fields of a create, `'path` of a delete, `v{'a,'b}`
    /// of a close.
    pub rest: String,
}

/// Dumps the transaction logs in `data_dir` (`version-2/log.*`) with ZooKeeper's own tool.
pub fn committed(classpath: &str, data_dir: &Path) -> Result<Vec<Txn>, String> {
    let logs = data_dir.join("version-2");
    let mut files: Vec<_> = std::fs::read_dir(&logs)
        .map_err(|e| format!("cannot read {}: {e}", logs.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("log.")))
        .collect();
    files.sort();
    let mut txns = Vec::new();
    for file in files {
        let out = super::children::spawn(
            Command::new("java")
                .args(["-cp", classpath, "org.apache.zookeeper.server.persistence.TxnLogToolkit"])
                .arg(&file)
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped()),
        )
        .and_then(|child| child.wait_with_output())
        .map_err(|e| format!("cannot run TxnLogToolkit: {e}"))?;
        if !out.status.success() {
            // The JVM's logging banner (SLF4J's) is no reason: the tool's own last line is.
            let stderr = String::from_utf8_lossy(&out.stderr);
            let tail = stderr.lines().rev().find(|l| !l.trim().is_empty() && !l.starts_with("SLF4J")).unwrap_or("");
            return Err(format!("TxnLogToolkit failed on {}: {tail}", file.display()));
        }
        txns.extend(parse(&String::from_utf8_lossy(&out.stdout)));
    }
    txns.sort_by_key(|t| t.zxid);
    Ok(txns)
}

/// The tool's lines: `<date> session 0x.. cxid 0x.. zxid 0x.. <kind> <rest>`, a record's ACL
/// spilling onto the next line.
pub fn parse(dump: &str) -> Vec<Txn> {
    let hex = |s: &str| i64::from_str_radix(s.trim_start_matches("0x"), 16).ok();
    let mut txns = Vec::new();
    for line in dump.lines() {
        let Some(at) = line.find(" session 0x") else { continue };
        let mut words = line[at..].split_whitespace();
        let fields = (|| {
            let session = hex(words.nth(1)?)?;
            let zxid = hex(words.nth(3)?)?;
            let kind = words.next()?.to_string();
            Some((session, zxid, kind, words.collect::<Vec<_>>().join(" ")))
        })();
        if let Some((session, zxid, kind, rest)) = fields {
            txns.push(Txn { session, zxid, kind, rest });
        }
    }
    txns
}

/// The run's writes in the log: transactions after `after` up to `through`, on nodes under
/// `chroot` (which is taken off their paths), and the closes of sessions other than `skip`.
pub fn real_writes(txns: &[Txn], after: i64, through: i64, chroot: &str, skip: &[i64]) -> Vec<(i64, Write<i64>)> {
    let inside = |path: &str| -> Option<String> {
        let path = path.trim_start_matches('\'');
        path.strip_prefix(chroot).filter(|p| p.starts_with('/')).map(str::to_string)
    };
    let mut writes = Vec::new();
    for t in txns.iter().filter(|t| t.zxid > after && t.zxid <= through) {
        let first = t.rest.split(',').next().unwrap_or("");
        let write = match t.kind.as_str() {
            "create" | "create2" | "createContainer" | "createTTL" => {
                inside(first).map(|path| Write::Create { path, session: t.session })
            }
            "delete" | "deleteContainer" => inside(first).map(|path| Write::Delete { path }),
            "setData" => inside(first).map(|path| Write::SetData { path }),
            "closeSession" if !skip.contains(&t.session) => {
                let list = t.rest.trim_start_matches("v{").trim_end_matches('}');
                let mut deleted: Vec<String> = list.split(',').filter_map(inside).collect();
                deleted.sort();
                Some(Write::Close { session: t.session, deleted })
            }
            _ => None,
        };
        writes.extend(write.map(|w| (t.zxid, w)));
    }
    writes
}

/// Whether the log's writes are the model's, one for one and in order, each real session
/// standing for one model session throughout. `Ok(n)`: the `n` writes agree.
pub fn agree(model: &[Write<SessionId>], real: &[(i64, Write<i64>)]) -> Result<usize, String> {
    let mut stands: BTreeMap<i64, SessionId> = BTreeMap::new();
    let mut same_session = |real: i64, model: SessionId| -> bool {
        let taken = stands.values().any(|m| *m == model);
        match stands.get(&real) {
            Some(m) => *m == model,
            None if taken => false,
            None => {
                stands.insert(real, model);
                true
            }
        }
    };
    for (k, (m, (zxid, r))) in model.iter().zip(real).enumerate() {
        let same = match (m, r) {
            (Write::Create { path, session }, Write::Create { path: p, session: s }) => {
                path == p && same_session(*s, *session)
            }
            (Write::Delete { path }, Write::Delete { path: p })
            | (Write::SetData { path }, Write::SetData { path: p }) => path == p,
            (Write::Close { session, deleted }, Write::Close { session: s, deleted: d }) => {
                deleted == d && same_session(*s, *session)
            }
            _ => false,
        };
        if !same {
            return Err(format!("the log's write {} (zxid {zxid:#x}: {r:?}) is the model's {m:?}", k + 1));
        }
    }
    match model.len().cmp(&real.len()) {
        std::cmp::Ordering::Equal => Ok(model.len()),
        std::cmp::Ordering::Less => {
            let (zxid, w) = &real[model.len()];
            Err(format!("the log has a write the model has not: zxid {zxid:#x}: {w:?}"))
        }
        std::cmp::Ordering::Greater => Err(format!("the model has a write the log has not: {:?}", model[real.len()])),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DUMP: &str = "ZooKeeper Transactional Log File with dbid 0 txnlog format version 2
11/26/26, 10:48:52 AM UTC session 0x1000028b5210000 cxid 0x0 zxid 0x1 createSession 10000
11/26/26, 10:48:52 AM UTC session 0x1000028b5210000 cxid 0x3 zxid 0x3 create /r/lock,,[31,s{'world,'anyone}
],false,1
11/26/26, 10:48:52 AM UTC session 0x1000028b5210000 cxid 0x4 zxid 0x4 create /r/lock/x-0000000000,,[31,s{'world,'anyone}
],true,1
11/26/26, 10:48:52 AM UTC session 0x1000028b5210001 cxid 0x1 zxid 0x5 create /r/lock/x-0000000001,,[31,s{'world,'anyone}
],true,2
11/26/26, 10:48:52 AM UTC session 0x1000028b5210001 cxid 0x2 zxid 0x6 error -110
11/26/26, 10:48:52 AM UTC session 0x1000028b5210000 cxid 0x5 zxid 0x7 delete '/r/lock/x-0000000000
11/26/26, 10:48:52 AM UTC session 0x1000028b5210001 cxid 0x3 zxid 0x8 closeSession v{'/r/lock/x-0000000001}
EOF reached after 8 txns.
";

    #[test]
    fn the_tools_dump_reads_as_the_runs_writes() {
        let txns = parse(DUMP);
        assert_eq!(txns.len(), 7);
        assert_eq!(
            txns[2],
            Txn { session: 0x1000028b5210000, zxid: 4, kind: "create".into(), rest: txns[2].rest.clone() }
        );
        let real = real_writes(&txns, 3, 8, "/r", &[]);
        let (a, b) = (0x1000028b5210000, 0x1000028b5210001);
        assert_eq!(
            real.into_iter().map(|(_, w)| w).collect::<Vec<_>>(),
            vec![
                Write::Create { path: "/lock/x-0000000000".into(), session: a },
                Write::Create { path: "/lock/x-0000000001".into(), session: b },
                Write::Delete { path: "/lock/x-0000000000".into() },
                Write::Close { session: b, deleted: vec!["/lock/x-0000000001".into()] },
            ]
        );
    }

    #[test]
    fn a_write_in_another_order_or_by_another_session_disagrees() {
        let real = real_writes(&parse(DUMP), 3, 8, "/r", &[]);
        let (a, b) = (SessionId(2), SessionId(3));
        let model = vec![
            Write::Create { path: "/lock/x-0000000000".into(), session: a },
            Write::Create { path: "/lock/x-0000000001".into(), session: b },
            Write::Delete { path: "/lock/x-0000000000".into() },
            Write::Close { session: b, deleted: vec!["/lock/x-0000000001".into()] },
        ];
        assert_eq!(agree(&model, &real), Ok(4));
        let mut swapped = model.clone();
        swapped.swap(0, 1);
        assert!(agree(&swapped, &real).is_err());
        let mut other = model.clone();
        other[3] = Write::Close { session: a, deleted: vec!["/lock/x-0000000001".into()] };
        assert!(agree(&other, &real).unwrap_err().contains("write 4"));
        assert!(agree(&model[..3], &real).unwrap_err().contains("the log has a write the model has not"));
    }
}
