//! `zklab client-check`: real kazoo, go-zookeeper, node-zookeeper-client, ZooKeeper WriteLock
//! and Curator locks, unchanged, run against the served model under zklab's scheduler. Each
//! holder that does not listen never learns its session expired, and a schedule finds the exact
//! point; the schedule made smaller shows it again, from its file too. kazoo's lock heeding
//! kazoo's connection states, as kazoo's docs advise, passes the same schedules, and so does
//! Curator's mutex heeding Curator's. Needs Debian's python3-kazoo, golang-go,
//! golang-github-samuel-go-zookeeper-dev, libzookeeper-java, libcurator-recipes-java, a JDK
//! and nodejs with npm's node-zookeeper-client:
//! `cargo test --release --test real client_check` (CI's client-check-smoke and real-examples
//! stages install them and run it).

use zklab::client_check::{self, Campaign, ClientProgram, End, Faults, SavedSchedule, Setup, Task};

fn campaign(program: ClientProgram, schedules: usize) -> Campaign {
    Campaign {
        setup: Setup::new(
            program,
            2,
            Task { lock_path: "/lock".into(), session_timeout_ms: 10_000, rounds: 1, hold_ms: -1, lock_made: false },
            Faults { expire: true, ..Faults::default() },
            400,
        ),
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
    let _gate = crate::gate::enter(crate::gate::Kind::Scheduled);
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

    // Made smaller: cut where the violation shows, with the one expiry it needs, and shorter.
    let shrunk = client_check::shrink(&c.setup, &found.result, &dir, 30, |_, _, _| {}).unwrap();
    let small = &shrunk.result;
    assert_eq!(small.findings.first().map(|f| f.property), Some("belief_exclusion"));
    assert_eq!(small.schedule.iter().filter(|c| c.is_fault()).count(), 1, "{:?}", small.schedule);
    assert!(small.schedule.len() < found.result.schedule.len(), "{} choices", small.schedule.len());
    assert_eq!(small.end, End::Cut);
    assert_eq!(small.steps.len(), small.schedule.len());
    assert!(small.steps.iter().any(|s| s.contains("session expired")), "{:?}", small.steps);

    // Saved to a file and run again from it.
    let file = dir.join("saved.json");
    SavedSchedule::of(&c.setup, small, found.seed, None).write(&file).unwrap();
    let saved = SavedSchedule::load(&file).unwrap();
    assert_eq!(saved.property(), Some("belief_exclusion"));
    let from_file = client_check::replay(&saved.setup().unwrap(), &saved.schedule, &dir).unwrap();
    assert_eq!(from_file.findings.first().map(|f| f.property), Some("belief_exclusion"), "{:?}", from_file.end);
    assert_eq!(from_file.end, End::Cut, "the saved schedule ends where the violation shows");
    std::fs::remove_dir_all(&dir).ok();
}

/// Every schedule of `c` ends with both clients done, each having taken the lock, and nothing
/// violated; at least `faulted` of them had a fault (so the pass is not vacuous).
fn passes_every_schedule(c: &Campaign, name: &str, faulted: usize) {
    c.setup.program.available().unwrap_or_else(|why| panic!("{name}: {why}"));
    let dir = dir(name);
    let tried = client_check::explore(c, &dir, false, |_| {}).unwrap();
    assert_eq!(tried.len(), c.schedules);
    for t in &tried {
        assert!(t.result.findings.is_empty(), "seed {:?}: {:?}", t.seed, t.result.findings);
        assert_eq!(t.result.end, End::Done, "seed {:?}", t.seed);
        assert_eq!(t.result.tally.acquisitions, 2, "seed {:?}: both clients took the lock", t.seed);
    }
    let with_faults = tried.iter().filter(|t| t.result.schedule.iter().any(|c| c.is_fault())).count();
    assert!(with_faults >= faulted, "only {with_faults} of {} schedules had a fault", c.schedules);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_lock_heeding_kazoos_connection_states_passes_the_same_schedules() {
    let _gate = crate::gate::enter(crate::gate::Kind::Scheduled);
    passes_every_schedule(&campaign(ClientProgram::KazooListening, 20), "listening", 5);
}

/// A lock in a language zklab has no model of, run unchanged: the same expired holder is found,
/// and its schedule, made smaller, shows it again.
fn finds_the_expired_holder(program: ClientProgram, name: &str) {
    program.available().unwrap_or_else(|why| panic!("{name}: {why}"));
    let c = campaign(program, 40);
    let dir = dir(name);
    let tried = client_check::explore(&c, &dir, true, |_| {}).unwrap();
    let found = tried.iter().find(|t| !t.result.findings.is_empty()).expect("a schedule of the first 40 finds it");
    assert_eq!(found.result.findings[0].property, "belief_exclusion", "{:?}", found.result.findings);
    assert!(tried.iter().all(|t| t.result.end != End::StepBound), "every schedule ran to an end");
    let shrunk = client_check::shrink(&c.setup, &found.result, &dir, 20, |_, _, _| {}).unwrap();
    let again = client_check::replay(&c.setup, &shrunk.result.schedule, &dir).unwrap();
    assert_eq!(again.findings.first().map(|f| f.property), Some("belief_exclusion"), "{:?}", again.end);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn go_zookeepers_lock_keeps_believing_after_its_session_expired() {
    let _gate = crate::gate::enter(crate::gate::Kind::Scheduled);
    finds_the_expired_holder(ClientProgram::Go, "go");
}

#[test]
fn the_recipes_page_lock_on_node_zookeeper_client_keeps_believing_after_its_session_expired() {
    let _gate = crate::gate::enter(crate::gate::Kind::Scheduled);
    finds_the_expired_holder(ClientProgram::Node, "node");
}

#[test]
fn zookeepers_own_writelock_recipe_keeps_believing_after_its_session_expired() {
    let _gate = crate::gate::enter(crate::gate::Kind::Scheduled);
    finds_the_expired_holder(ClientProgram::WriteLock, "writelock");
}

/// ZooKeeper 3.8's WriteLock, without a fault: when its predecessor is deleted between its
/// getChildren and its exists, exists answers null and arms a watch for a create that never
/// comes, and the recipe returns without asking again. The waiter waits for ever.
#[test]
fn zookeepers_writelock_waits_for_ever_when_its_predecessor_goes_before_its_watch_is_set() {
    let _gate = crate::gate::enter(crate::gate::Kind::Scheduled);
    let mut c = campaign(ClientProgram::WriteLock, 80);
    c.setup.faults = Faults::default();
    c.setup.program.available().unwrap_or_else(|why| panic!("writelock: {why}"));
    let dir = dir("writelock-deadlock");
    let tried = client_check::explore(&c, &dir, true, |_| {}).unwrap();
    let found = tried.last().filter(|t| !t.result.findings.is_empty()).expect("a schedule of the first 80 finds it");
    assert_eq!(found.result.end, End::Stuck);
    assert_eq!(found.result.findings[0].property, "eventual_acquire", "{:?}", found.result.findings);
    assert!(found.result.schedule.iter().all(|c| !c.is_fault()), "no fault: {:?}", found.result.schedule);
    // The last thing the waiter heard: exists on its predecessor, answered null.
    let last = found.result.steps.iter().rev().find(|s| s.contains("hears exists")).unwrap();
    assert!(last.ends_with("null"), "{:?}", found.result.steps);
    let again = client_check::replay(&c.setup, &found.result.schedule, &dir).unwrap();
    assert_eq!(again.end, End::Stuck, "the schedule shows it again");
    std::fs::remove_dir_all(&dir).ok();
}

/// A campaign's runs share the client processes: after a run whose clients all finished, each
/// is told `reset` and starts over in a new session against a fresh model, and a schedule run
/// on the reused processes tells the same history as on new ones.
#[test]
fn runs_after_the_first_reuse_the_client_processes_and_tell_the_same_histories_and_server_states() {
    let _gate = crate::gate::enter(crate::gate::Kind::Scheduled);
    use client_check::strategy::{Pct, Replay};
    let c = campaign(ClientProgram::Kazoo, 0);
    let dir = dir("reuse");
    let mut runner = client_check::Runner::new(&c.setup, &dir);
    let first = runner.run(&mut Pct::new(7, 2, 3, 30, 0, 0.0)).unwrap();
    let second = runner.run(&mut Pct::new(8, 2, 3, 30, 0, 0.0)).unwrap();
    let again = runner.run(&mut Replay::new(first.schedule.clone())).unwrap();
    assert_eq!((runner.started, runner.reused), (1, 2), "one start, then two resets");
    for r in [&first, &second, &again] {
        assert_eq!(r.end, End::Done);
        assert_eq!(r.tally.acquisitions, 2, "each run's history is its own: two acquisitions, not more");
    }
    assert_eq!(client_check::parting(&first, &again), None, "the replay on reused processes tells the same story");
    let fresh = client_check::replay(&c.setup, &first.schedule, &dir).unwrap();
    assert_eq!(client_check::parting(&first, &fresh), None, "and so does one on new processes");
    // The server states it covered are the same too, though each run's kazoo names its lock
    // node with a uuid of its own: they are counted in a form without what is random.
    assert_eq!(first.server_states, again.server_states);
    assert_eq!(first.server_states, fresh.server_states);
    let distinct: std::collections::BTreeSet<_> = first.server_states.iter().collect();
    assert!(distinct.len() >= 4, "a run moves the server through its states: {distinct:?}");
    std::fs::remove_dir_all(&dir).ok();
}

/// Every built-in driver starts over in a new session on `reset`, and says it, even though
/// the fresh model of the next run gives it the id its last session had: one client alone is
/// always given the model's first session id. (Curator's driver said a session only when its
/// id was new to it, so after a reset it said nothing, and the campaign waited for it and
/// then started new JVMs for every run.)
#[test]
fn every_driver_says_its_new_session_after_a_reset_though_its_id_is_the_last_ones() {
    let _gate = crate::gate::enter(crate::gate::Kind::Scheduled);
    use client_check::strategy::Pct;
    let dir = dir("reset-ids");
    for program in
        [ClientProgram::Kazoo, ClientProgram::Curator, ClientProgram::WriteLock, ClientProgram::Go, ClientProgram::Node]
    {
        program.available().unwrap_or_else(|why| panic!("{}: {why}", program.name()));
        let task =
            Task { lock_path: "/lock".into(), session_timeout_ms: 10_000, rounds: 1, hold_ms: -1, lock_made: false };
        let setup = Setup::new(program.clone(), 1, task, Faults::default(), 400);
        let mut runner = client_check::Runner::new(&setup, &dir);
        let runs: Vec<_> = (0..3).map(|seed| runner.run(&mut Pct::new(seed, 1, 1, 20, 0, 0.0)).unwrap()).collect();
        for run in &runs {
            assert_eq!(run.end, End::Done, "{}: {:?}", program.name(), run.steps);
        }
        assert_eq!((runner.started, runner.reused), (1, 2), "{}: one start, then two resets", program.name());
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// A replay waits for a recorded request that comes late. This client waits 300 ms on a
/// timer the quiet test cannot see (a futex with a timeout, as a JVM's timed park is) before
/// its hold's request, so the scheduler takes it for done and moves on. The schedule runs c0's
/// whole round, then c1's: when c0's late request is next, c1's first request is already there
/// to be picked. A replay that took the clients' quiet as final would find its recorded
/// choice not enabled and call the run diverged; it waits for it instead, and counts the wait.
#[test]
fn a_replay_waits_for_a_request_that_comes_after_a_timer_the_quiet_test_cannot_see() {
    let _gate = crate::gate::enter(crate::gate::Kind::Scheduled);
    use client_check::strategy::Pct;
    use client_check::Choice;
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/real/late_lock.py");
    let program = ClientProgram::Command(format!("/usr/bin/python3 {}", script.display()));
    let task = |clients| {
        Setup::new(
            program.clone(),
            clients,
            // The lock's node is there, so both clients ask the same requests alone.
            Task { lock_path: "/lock".into(), session_timeout_ms: 10_000, rounds: 1, hold_ms: 300, lock_made: true },
            Faults::default(),
            400,
        )
    };
    let dir = dir("late");
    // c0's round alone, as the server sees it; then the same round for c1.
    let alone = client_check::Runner::new(&task(1), &dir).run(&mut Pct::new(1, 1, 1, 30, 0, 0.0)).unwrap();
    assert_eq!(alone.end, End::Done, "{:?}", alone.steps);
    let as_c1 = |choice: &Choice| match *choice {
        Choice::Apply(0) => Choice::Apply(1),
        Choice::Deliver(0) => Choice::Deliver(1),
        other => panic!("a round alone without faults applies and delivers: {other:?}"),
    };
    let mut schedule = alone.schedule.clone();
    schedule.extend(alone.schedule.iter().map(as_c1));

    let run = client_check::replay(&task(2), &schedule, &dir).unwrap();
    assert_eq!(run.end, End::Done, "{:?}", run.steps);
    assert_eq!(run.schedule, schedule, "every recorded choice was taken");
    assert!(run.late >= 1, "c0's hold request came after the clients looked quiet, and was waited for");
    assert!(run.findings.is_empty(), "{:?}", run.findings);
    assert_eq!(run.tally.acquisitions, 2);
    std::fs::remove_dir_all(&dir).ok();
}

/// Curator's mutex, its parents made as containers, with its driver heeding Curator's
/// connection states as Curator's docs ask: no schedule of these breaks it, and sessions were
/// expired and replies lost in them (non-vacuous).
#[test]
fn curators_mutex_heeding_its_connection_states_passes_schedules_with_expiries_and_lost_replies() {
    let _gate = crate::gate::enter(crate::gate::Kind::Scheduled);
    let mut c = campaign(ClientProgram::Curator, 12);
    c.setup.faults = Faults { expire: true, loss_after_apply: true, ..Faults::default() };
    passes_every_schedule(&c, "curator", 6);
}

/// Curator 5.4's protected create, asked again after its request was lost, runs a look-up for
/// its node inside its retry loop; the look-up's nested retry loop is the same loop
/// (`ThreadLocalRetryLoop`) and marks it complete. When the create's reply is then lost too,
/// the retry is allowed but the loop is over: the create returns null, `acquire` fails with
/// "Path cannot be null" (its NullPointerException hidden by the delete of a null path), and
/// the node it made stays in the live session. The caller asks again and waits behind its own
/// node; the other client waits behind both. Two faults on one request, no expiry; the kept
/// schedule shows it, and zklab's `curator-mutex`, which creates afresh, parts from it there.
#[test]
fn curators_mutex_waits_on_its_own_node_when_a_retried_protected_create_loses_its_reply() {
    let _gate = crate::gate::enter(crate::gate::Kind::Scheduled);
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("traces/client-check/loss-before-apply+loss-after-apply/client-check-curator-n2-eventual_acquire.json");
    let saved = SavedSchedule::load(&file).unwrap();
    let setup = saved.setup().unwrap();
    setup.program.available().unwrap_or_else(|why| panic!("curator: {why}"));
    let dir = dir("curator-null-create");
    let run = client_check::replay(&setup, &saved.schedule, &dir).unwrap();
    assert_eq!(run.end, End::Stuck, "{:?}", run.steps);
    assert_eq!(run.findings.first().map(|f| f.property), Some("eventual_acquire"), "{:?}", run.findings);
    // The first create was lost before the server, the second after it applied it.
    let faults: Vec<_> = run.schedule.iter().filter(|c| c.is_fault()).collect();
    assert_eq!(faults, [&client_check::Choice::LossBeforeApply(0), &client_check::Choice::LossAfterApply(0)]);
    // The acquire failed on the null path, and the client's next node waits on its first one.
    let story = run.story();
    assert!(story.iter().any(|(_, c, said)| *c == 0 && said == "error IllegalArgumentException"), "{story:?}");
    let watched = run.steps.iter().find(|s| s.starts_with("c0: getData -w")).expect("c0 watches a node");
    let first = run
        .steps
        .iter()
        .filter_map(|s| s.strip_prefix("c0 hears getChildren: ["))
        .map(|listed| listed.trim_end_matches(']'))
        .find(|listed| !listed.is_empty())
        .expect("c0 lists its lost create's node");
    assert!(watched.ends_with(&format!("{first} applied")), "c0 watches the node its lost create made: {watched}");
    let followed = client_check::divergence::follow(&setup, &run).expect("Curator has a model").unwrap();
    assert!(followed.divergence.is_some(), "the model does not fail its create so");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_systematic_search_runs_every_schedule_within_its_bounds_and_finds_the_expired_holder() {
    let _gate = crate::gate::enter(crate::gate::Kind::Scheduled);
    use client_check::systematic::{explore, Bounds};
    let mut c = campaign(ClientProgram::Kazoo, 0);
    let dir = dir("systematic");
    // Without faults, within one switch: every schedule is run, to the end or to the bound, and
    // kazoo's lock holds in each.
    c.setup.faults = Faults::default();
    let bounds = Bounds { switches: 1, faults: 0, cap: 500 };
    let all = explore(&c.setup, bounds, &dir, false, |_| {}).unwrap();
    assert!(all.complete, "{} runs", all.runs.len());
    assert!(all.runs.len() > 1, "more than the default schedule");
    assert!(all.runs.iter().all(|r| r.findings.is_empty()), "kazoo's lock holds without faults");
    assert!(all.runs.iter().any(|r| r.end == End::Done), "some schedule lets both clients finish");
    // With one expiry, the search reaches the holder that never learns of it.
    c.setup.faults = Faults { expire: true, ..Faults::default() };
    let bounds = Bounds { switches: 1, faults: 1, cap: 600 };
    let found = explore(&c.setup, bounds, &dir, true, |_| {}).unwrap();
    let last = found.runs.last().unwrap();
    assert_eq!(last.findings.first().map(|f| f.property), Some("belief_exclusion"), "{} runs", found.runs.len());
    std::fs::remove_dir_all(&dir).ok();
}

/// The schedules kept in traces/client-check/ (scripts/client-check-verdicts.sh) load, and each
/// names the lock, the fault kind and the property its path says.
#[test]
fn the_kept_schedules_load_and_say_what_they_break() {
    let _gate = crate::gate::enter(crate::gate::Kind::Scheduled);
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("traces/client-check");
    let mut seen = 0;
    for faults in std::fs::read_dir(&root).unwrap() {
        let faults = faults.unwrap().path();
        let kind = faults.file_name().unwrap().to_str().unwrap().to_string();
        for file in std::fs::read_dir(&faults).unwrap() {
            let file = file.unwrap().path();
            let saved = SavedSchedule::load(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            let name = file.file_stem().unwrap().to_str().unwrap();
            assert!(name.ends_with(saved.property().unwrap()), "{name}");
            if kind == "none" {
                assert_eq!(saved.faults(), 0, "{name}");
            }
            // A directory names one kind, or several joined by `+`.
            assert!(
                saved.schedule.iter().filter(|c| c.is_fault()).all(|c| kind.split('+').any(|k| match k {
                    "expire" => matches!(c, client_check::Choice::Expire(_)),
                    "loss-before-apply" => matches!(c, client_check::Choice::LossBeforeApply(_)),
                    "loss-after-apply" => matches!(c, client_check::Choice::LossAfterApply(_)),
                    "disconnect" => matches!(c, client_check::Choice::Disconnect(_)),
                    _ => false,
                })),
                "{name}: only faults of kind {kind}"
            );
            seen += 1;
        }
    }
    assert!(seen >= 10, "{seen} kept schedules");
}

/// Each schedule real kazoo ran is followed on zklab's model of kazoo's Lock (`kazoo-lock`),
/// choice by choice: under lost replies and expiries the model does what the library did, every
/// request and every acquisition, in these schedules.
#[test]
fn kazoos_lock_as_it_ran_is_followed_by_its_model_under_lost_replies_and_expiries() {
    let _gate = crate::gate::enter(crate::gate::Kind::Scheduled);
    let mut c = campaign(ClientProgram::Kazoo, 12);
    c.setup.faults = Faults { loss_after_apply: true, expire: true, ..Faults::default() };
    c.fault_chance = 0.1;
    let dir = dir("follow");
    let tried = client_check::explore(&c, &dir, false, |_| {}).unwrap();
    let mut faulted = 0;
    for t in &tried {
        let followed = client_check::divergence::follow(&c.setup, &t.result).expect("kazoo has a model").unwrap();
        assert_eq!(followed.model, "kazoo-lock");
        assert_eq!(followed.divergence, None, "seed {:?}", t.seed);
        // Not vacuous: the model took a step for most of the library's, and the faults too.
        assert!(followed.steps.len() * 3 >= t.result.schedule.len(), "seed {:?}: {:?}", t.seed, followed.steps);
        faulted += usize::from(
            followed.steps.iter().any(|s| matches!(s, zklab_model::Step::Lossy(..) | zklab_model::Step::Expire(_))),
        );
    }
    assert!(faulted >= 3, "only {faulted} followed schedules had a fault in the model");
    std::fs::remove_dir_all(&dir).ok();
}

/// kazoo 2.8's Lock never forgets it tried to create (`create_tried`): a second `acquire()` on
/// the same Lock object lists the children to look for its node before it creates one. The
/// `kazoo-lock` model starts each acquisition afresh and creates at once, and the follower
/// says so, at the second round's first request.
#[test]
fn a_second_round_of_kazoos_lock_lists_before_it_creates_where_its_model_creates_at_once() {
    let _gate = crate::gate::enter(crate::gate::Kind::Scheduled);
    let mut c = campaign(ClientProgram::Kazoo, 1);
    c.setup.faults = Faults::default();
    c.setup.task.rounds = 2;
    let dir = dir("second-round");
    let tried = client_check::explore(&c, &dir, false, |_| {}).unwrap();
    let run = &tried[0].result;
    assert_eq!(run.end, End::Done);
    let followed = client_check::divergence::follow(&c.setup, run).unwrap().unwrap();
    let d = followed.divergence.expect("the model creates where the library lists");
    assert!(!d.unplaced);
    assert!(d.library.contains("getChildren /lock applied"), "{d}");
    assert!(d.model.contains("would send create -e -s"), "{d}");
    // It is the second round's: the first acquisition was followed before it.
    assert!(followed.steps.iter().any(|s| matches!(s, zklab_model::Step::Release(_))), "{:?}", followed.steps);
    std::fs::remove_dir_all(&dir).ok();
}

/// A connection dropped at any point, with nothing in flight too (a waiter on its watch, a
/// holder between two requests): kazoo reconnects in the same session, re-arms its watch with
/// SetWatches, and its lock takes no harm. The model of it follows at least half of these
/// schedules to the end (a reply lost with the connection it cannot place: it loses a reply
/// only as a loss after apply).
#[test]
fn kazoos_lock_survives_a_connection_dropped_with_nothing_in_flight_and_its_model_follows() {
    let _gate = crate::gate::enter(crate::gate::Kind::Scheduled);
    // Faults drawn seldom land late too, where a client waits on its watch with nothing sent.
    let mut c = campaign(ClientProgram::Kazoo, 20);
    c.setup.faults = Faults { disconnect: true, ..Faults::default() };
    c.max_faults = 2;
    let dir = dir("disconnect");
    let tried = client_check::explore(&c, &dir, false, |_| {}).unwrap();
    let (mut idle_drops, mut followed_all) = (0, 0);
    for t in &tried {
        assert!(t.result.findings.is_empty(), "seed {:?}: {:?}", t.seed, t.result.findings);
        assert_eq!(t.result.end, End::Done, "seed {:?}", t.seed);
        assert_eq!(t.result.tally.acquisitions, 2, "seed {:?}", t.seed);
        let drops: Vec<&String> = t.result.steps.iter().filter(|s| s.contains("connection lost")).collect();
        assert_eq!(
            drops.len(),
            t.result.schedule.iter().filter(|c| matches!(c, client_check::Choice::Disconnect(_))).count()
        );
        idle_drops += drops.iter().filter(|s| s.ends_with("nothing in flight")).count();
        // A reply lost with the connection is a loss after apply the model cannot place
        // afterwards, and a loaded machine can part a run elsewhere too (a divergence is a
        // finding to read, not a failure); most schedules are followed to the end.
        let followed = client_check::divergence::follow(&c.setup, &t.result).unwrap().unwrap();
        followed_all += usize::from(followed.divergence.is_none());
    }
    assert!(idle_drops >= 2, "only {idle_drops} connections dropped with nothing in flight");
    assert!(followed_all * 2 >= tried.len(), "only {followed_all} of {} schedules followed", tried.len());
    std::fs::remove_dir_all(&dir).ok();
}
