//! `zklab client-check`: real kazoo, unchanged, run against the served model under zklab's
//! scheduler. Its Lock's holder never learns its session expired, and a schedule finds the
//! exact point; the same lock heeding kazoo's connection states, as kazoo's docs advise, passes
//! the same schedules. Needs Debian's python3-kazoo: `cargo test --release --features
//! real-server --test client_check` (CI's real-examples stage runs it).
#![cfg(feature = "real-server")]

use std::time::Duration;
use zklab::client_check::{self, Campaign, ClientProgram, End, Faults, Setup, Task};

fn campaign(program: ClientProgram, schedules: usize) -> Campaign {
    Campaign {
        setup: Setup {
            program,
            clients: 2,
            task: Task { lock_path: "/lock".into(), session_timeout_ms: 10_000, rounds: 1, hold_ms: -1 },
            faults: Faults { expire: true, ..Faults::default() },
            max_steps: 400,
            stuck_after: Duration::from_millis(1000),
            connect_within: Duration::from_secs(20),
        },
        schedules,
        seed: 1,
        depth: 3,
        max_faults: 1,
        fault_chance: 0.05,
        replays: 0,
    }
}

fn dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("zklab-test-client-check-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn kazoos_holder_that_never_learns_of_its_expiry_is_found_at_its_exact_point_and_replays() {
    let c = campaign(ClientProgram::Kazoo, 40);
    let dir = dir("kazoo");
    let tried = client_check::explore(&c, &dir, true, |_| {}).unwrap();
    let found = tried.iter().find(|t| !t.result.findings.is_empty()).expect("a schedule of the first 40 finds it");
    assert_eq!(found.result.findings[0].property, "belief_exclusion", "{:?}", found.result.findings);
    let expiry = found.result.schedule.iter().position(|c| matches!(c, client_check::Choice::Expire(_)));
    assert!(expiry.is_some(), "the expiry is in the schedule: {:?}", found.result.schedule);
    // Its schedule, run again, shows the violation again.
    let again = client_check::replay(&c.setup, &found.result.schedule, &dir).unwrap();
    assert_eq!(again.findings.first().map(|f| f.property), Some("belief_exclusion"), "{:?}", again.end);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_lock_heeding_kazoos_connection_states_passes_the_same_schedules() {
    let c = campaign(ClientProgram::KazooListening, 20);
    let dir = dir("listening");
    let tried = client_check::explore(&c, &dir, false, |_| {}).unwrap();
    assert_eq!(tried.len(), 20);
    for t in &tried {
        assert!(t.result.findings.is_empty(), "seed {}: {:?}", t.seed, t.result.findings);
        assert_eq!(t.result.end, End::Done, "seed {}", t.seed);
        assert_eq!(t.result.tally.acquisitions, 2, "seed {}: both clients took the lock", t.seed);
    }
    // Non-vacuous: sessions were expired in these schedules, and the holders heard of it.
    let expired = tried.iter().filter(|t| t.result.schedule.iter().any(|c| c.is_fault())).count();
    assert!(expired >= 5, "only {expired} of 20 schedules expired a session");
    std::fs::remove_dir_all(&dir).ok();
}
