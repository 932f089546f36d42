//! Judging a real client library's run from its history, as Jepsen judges a lock: what each
//! client said it did (asked, acquired, wrote, released), stamped by the client itself as it did
//! it on the machine's one monotonic clock (`clock`), and what was left on the server. No model
//! world follows a library's run (its state machine is its own), so the checks are the properties'
//! meanings applied to the history:
//! - `belief_exclusion`: no two clients believe they hold the lock at once (a client believes
//!   from the moment it says `acquired` to the moment it says `releasing`, just before it calls
//!   release, or dies: `released`, when release returns, comes after the delete, which can
//!   already have let the next client in);
//! - `fenced_exclusion`: the fenced resource (which accepts a write only with a token no lower
//!   than every token it accepted before) never accepts writes of two holds interleaved; the
//!   writes it rejects are stale holders that fencing stopped;
//! - `eventual_acquire` is never broken by a history: a client that had not taken all its rounds
//!   by the deadline may only have been slow (a history shows no deadlock), so it is listed in
//!   `Tally::unfinished` and the run is unknown, not violated;
//! - `no_orphans`: once every client is done, no lock node is left.

use std::collections::BTreeMap;

/// What a client said, or what happened to its process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Said {
    Session(i64, Vec<u8>),
    Acquiring,
    Acquired(u64),
    Write(u64),
    /// About to call release: the holder stops believing here, before its delete is sent.
    Releasing,
    Released,
    /// The library says the connection is suspended or lost: a holder that heeds it stops
    /// believing it holds, until its session (the one it acquired in) is back.
    Suspended,
    Error(String),
    Done,
    /// The process was killed (`crash`).
    Died,
}

impl Said {
    /// A line of the client protocol (scripts/real-clients/): the `CLOCK_MONOTONIC` nanoseconds
    /// at which the client acted, then what it did; `None` for a line it does not know (a
    /// library's own chatter on stdout).
    pub fn parse_stamped(line: &str) -> Option<(u64, Said)> {
        let (stamp, rest) = line.split_once(' ')?;
        Some((stamp.parse().ok()?, Said::parse(rest)?))
    }

    /// What it says, in the protocol's words (`acquired 3`, `error ConnectionLoss`).
    pub fn words(&self) -> String {
        match self {
            Said::Session(id, _) => format!("session {id:x}"),
            Said::Acquiring => "acquiring".into(),
            Said::Acquired(token) => format!("acquired {token}"),
            Said::Write(token) => format!("write {token}"),
            Said::Releasing => "releasing".into(),
            Said::Released => "released".into(),
            Said::Suspended => "suspended".into(),
            Said::Error(name) => format!("error {name}"),
            Said::Done => "done".into(),
            Said::Died => "died".into(),
        }
    }

    /// What a line says, after its stamp.
    pub fn parse(line: &str) -> Option<Said> {
        let mut words = line.split_whitespace();
        let said = match words.next()? {
            "session" => {
                let id = i64::from_str_radix(words.next()?, 16).ok()?;
                let hex = words.next().unwrap_or("");
                let password = (0..hex.len() / 2).filter_map(|k| u8::from_str_radix(&hex[2 * k..2 * k + 2], 16).ok());
                Said::Session(id, password.collect())
            }
            "acquiring" => Said::Acquiring,
            "acquired" => Said::Acquired(words.next()?.parse().ok()?),
            "write" => Said::Write(words.next()?.parse().ok()?),
            "releasing" => Said::Releasing,
            "released" => Said::Released,
            "suspended" => Said::Suspended,
            "error" => Said::Error(words.collect::<Vec<_>>().join(" ")),
            "done" => Said::Done,
            _ => return None,
        };
        Some(said)
    }
}

/// One entry of the history: when (µs since the run began), who, what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    pub at_us: u64,
    pub client: usize,
    pub said: Said,
}

/// A property the history breaks, with what shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub property: &'static str,
    pub detail: String,
}

/// What the history shows, beside what it breaks.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Tally {
    pub acquisitions: usize,
    /// Writes the fenced resource accepted and rejected (a rejected one is a stale holder's).
    pub accepted_writes: usize,
    pub rejected_writes: usize,
    pub errors: usize,
    /// Clients alive at the deadline that had not taken all their rounds: the run is then
    /// undecided (slow and stuck look alike in a history).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unfinished: Vec<String>,
}

/// Judges `events` of `clients` clients in the order of their stamps (the order they were heard
/// in for equal stamps); `left` is the lock's children once every client was done (`None`: not
/// every client got there).
pub fn judge(events: &[Event], clients: usize, left: Option<&[String]>) -> (Vec<Finding>, Tally) {
    let mut events = events.to_vec();
    events.sort_by_key(|e| e.at_us);
    let mut findings = Vec::new();
    let mut tally = Tally::default();
    let mut holding: BTreeMap<usize, (u64, u64)> = BTreeMap::new();
    // Each client's session, and the hold it acquired in its session: (token, session).
    let mut sessions: BTreeMap<usize, i64> = BTreeMap::new();
    let mut holds: BTreeMap<usize, (u64, Option<i64>)> = BTreeMap::new();
    let mut highest: Option<(u64, usize)> = None;
    let mut last_writer: Option<(usize, u64)> = None;
    let mut finished = vec![false; clients];
    for e in &events {
        match &e.said {
            Said::Acquired(token) => {
                tally.acquisitions += 1;
                if let Some((other, (since, t))) = holding.iter().find(|(c, _)| **c != e.client) {
                    if !findings.iter().any(|f: &Finding| f.property == "belief_exclusion") {
                        findings.push(Finding {
                            property: "belief_exclusion",
                            detail: format!(
                                "c{} acquired (token {token}) at {:.1} ms while c{other} believed it held \
                                 (token {t}, since {:.1} ms)",
                                e.client,
                                e.at_us as f64 / 1000.0,
                                *since as f64 / 1000.0
                            ),
                        });
                    }
                }
                holding.insert(e.client, (e.at_us, *token));
                holds.insert(e.client, (*token, sessions.get(&e.client).copied()));
            }
            Said::Releasing | Said::Released | Said::Died => {
                holding.remove(&e.client);
                holds.remove(&e.client);
            }
            Said::Suspended => {
                holding.remove(&e.client);
            }
            Said::Write(token) => match highest {
                Some((top, _)) if *token < top => tally.rejected_writes += 1,
                _ => {
                    tally.accepted_writes += 1;
                    highest = Some((*token, e.client));
                    if let Some((writer, t)) = last_writer.filter(|(w, t)| *w != e.client && *t == *token) {
                        findings.push(Finding {
                            property: "fenced_exclusion",
                            detail: format!("c{writer} and c{} both wrote with token {t}", e.client),
                        });
                    }
                    last_writer = Some((e.client, *token));
                }
            },
            Said::Error(_) => tally.errors += 1,
            Said::Done => finished[e.client] = true,
            Said::Session(id, _) => {
                sessions.insert(e.client, *id);
                // Back in the session it acquired in: the hold is believed again.
                if let Some((token, Some(_))) = holds.get(&e.client).filter(|(_, s)| *s == Some(*id)) {
                    holding.entry(e.client).or_insert((e.at_us, *token));
                }
            }
            Said::Acquiring => {}
        }
    }
    let died: Vec<usize> = events.iter().filter(|e| e.said == Said::Died).map(|e| e.client).collect();
    let stuck: Vec<String> =
        (0..clients).filter(|c| !finished[*c] && !died.contains(c)).map(|c| format!("c{c}")).collect();
    tally.unfinished = stuck;
    if let Some(left) = left.filter(|l| !l.is_empty()) {
        findings.push(Finding { property: "no_orphans", detail: format!("left under the lock: {}", left.join(", ")) });
    }
    (findings, tally)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(at_us: u64, client: usize, said: Said) -> Event {
        Event { at_us, client, said }
    }

    #[test]
    fn a_clean_history_breaks_nothing() {
        let events = [
            e(1, 0, Said::Acquiring),
            e(2, 1, Said::Acquiring),
            e(3, 0, Said::Acquired(0)),
            e(4, 0, Said::Write(0)),
            e(5, 0, Said::Released),
            e(6, 1, Said::Acquired(1)),
            e(7, 1, Said::Write(1)),
            e(8, 1, Said::Released),
            e(9, 0, Said::Done),
            e(9, 1, Said::Done),
        ];
        let (findings, tally) = judge(&events, 2, Some(&[]));
        assert!(findings.is_empty(), "{findings:?}");
        assert_eq!((tally.acquisitions, tally.accepted_writes, tally.rejected_writes), (2, 2, 0));
    }

    #[test]
    fn a_release_that_returns_after_the_next_client_acquired_breaks_nothing() {
        // c0's delete lets c1 in, and c1 says `acquired` before c0's release returns; c0's
        // `releasing` line is heard last of all, but its stamp is before c1's `acquired`.
        let events =
            [e(1, 0, Said::Acquired(0)), e(4, 1, Said::Acquired(1)), e(5, 0, Said::Released), e(3, 0, Said::Releasing)];
        let (findings, _) = judge(&events, 2, None);
        assert!(findings.iter().all(|f| f.property != "belief_exclusion"), "{findings:?}");
        // Had c0 said `releasing` only after c1 acquired, the two would have overlapped.
        let mut late = events.clone();
        late[3] = e(5, 0, Said::Releasing);
        let (findings, _) = judge(&late, 2, None);
        assert_eq!(findings.first().map(|f| f.property), Some("belief_exclusion"), "{findings:?}");
    }

    #[test]
    fn a_holder_unaware_of_its_expiry_breaks_belief_exclusion_and_fencing_stops_its_write() {
        // c0 holds token 0 and its session expires unnoticed; c1 acquires token 1 and writes;
        // c0 then writes with its stale token.
        let events = [
            e(1, 0, Said::Acquired(0)),
            e(5, 1, Said::Acquired(1)),
            e(6, 1, Said::Write(1)),
            e(7, 0, Said::Write(0)),
            e(8, 0, Said::Released),
            e(9, 1, Said::Released),
            e(10, 0, Said::Done),
            e(10, 1, Said::Done),
        ];
        let (findings, tally) = judge(&events, 2, Some(&[]));
        assert_eq!(findings.iter().map(|f| f.property).collect::<Vec<_>>(), ["belief_exclusion"]);
        assert!(findings[0].detail.starts_with("c1 acquired (token 1)"), "{}", findings[0].detail);
        assert_eq!(tally.rejected_writes, 1);
    }

    #[test]
    fn a_holder_that_heeds_suspension_stops_believing_until_its_session_is_back() {
        let events = [
            e(0, 0, Said::Session(5, vec![])),
            e(1, 0, Said::Acquired(0)),
            e(2, 0, Said::Suspended),
            e(3, 1, Said::Acquired(1)),
            e(4, 1, Said::Released),
            e(5, 0, Said::Session(5, vec![])),
            e(6, 1, Said::Acquired(2)),
        ];
        let (findings, _) = judge(&events[..5], 2, None);
        assert!(findings.iter().all(|f| f.property != "belief_exclusion"), "{findings:?}");
        let (findings, _) = judge(&events, 2, None);
        assert!(findings.iter().any(|f| f.property == "belief_exclusion"), "{findings:?}");
        // A new session does not bring the hold back.
        let mut other = events.to_vec();
        other[5] = e(5, 0, Said::Session(6, vec![]));
        let (findings, _) = judge(&other, 2, None);
        assert!(findings.iter().all(|f| f.property != "belief_exclusion"), "{findings:?}");
    }

    #[test]
    fn a_client_that_never_finishes_is_undecided_and_a_node_left_behind_is_found() {
        let events =
            [e(1, 0, Said::Acquired(0)), e(2, 0, Said::Released), e(3, 0, Said::Done), e(4, 1, Said::Acquiring)];
        let left = ["x-0000000001".to_string()];
        let (findings, tally) = judge(&events, 2, Some(&left));
        // A history shows no deadlock: c1 may only have been slow, so it breaks nothing.
        assert_eq!(findings.iter().map(|f| f.property).collect::<Vec<_>>(), ["no_orphans"]);
        assert_eq!(tally.unfinished, ["c1"]);
    }

    #[test]
    fn the_client_protocol_reads_back() {
        assert_eq!(Said::parse("session 1a2b 00ff"), Some(Said::Session(0x1a2b, vec![0, 255])));
        assert_eq!(Said::parse("acquired 7"), Some(Said::Acquired(7)));
        assert_eq!(Said::parse("error ConnectionLoss"), Some(Said::Error("ConnectionLoss".into())));
        assert_eq!(Said::parse("SLF4J: whatever"), None);
        assert_eq!(Said::parse_stamped("123456789 releasing"), Some((123456789, Said::Releasing)));
        assert_eq!(Said::parse_stamped("releasing now"), None);
    }
}
