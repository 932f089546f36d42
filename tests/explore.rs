//! `zklab explore`: a position is the steps from the start replayed by the model; the learner
//! sees what each enabled step does, reaches the violation the checker's shortest trace
//! reaches, and the page is told how short the shortest way is. Served on 127.0.0.1 only.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use zklab::check::{self, Options, Status};
use zklab::explore::{goal, position};
use zklab::scenario::Scenario;
use zklab::trace::Trace;
use zklab_model::{Step, WorldConfig};

fn scenario(recipe: &str) -> Scenario {
    Scenario::new(recipe, 2, WorldConfig::default()).unwrap()
}

#[test]
fn playing_the_checkers_trace_step_by_step_reaches_its_deadlock() {
    let trace =
        Trace::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("traces/wait-on-null-n2-eventual_acquire.json"))
            .unwrap();
    for taken in 0..trace.steps.len() {
        let at = position(&trace.scenario, &trace.steps[..taken]).unwrap();
        assert!(!at.deadlock, "not stuck after {taken} steps");
        let next = trace.steps[taken];
        assert!(at.enabled.iter().any(|c| c.step == next), "the trace's next step is offered after {taken}");
        assert!(at.checks.iter().all(|(_, holds)| *holds), "no safety property breaks on the way");
    }
    let end = position(&trace.scenario, &trace.steps).unwrap();
    assert!(end.deadlock, "a client waits and nothing but a fault can happen");
    assert!(end.enabled.iter().all(|c| c.fault), "only faults are offered: {:?}", end.enabled.len());
    // A receive says what it delivers.
    let start = position(&trace.scenario, &trace.steps[..1]).unwrap();
    let receive = start.enabled.iter().find(|c| matches!(c.step, Step::Receive(0))).unwrap();
    assert!(receive.text.contains("create"), "{}", receive.text);
}

#[test]
fn a_step_that_is_not_enabled_is_refused() {
    let error = position(&scenario("standard"), &[Step::Receive(0)]).err().expect("nothing to receive yet");
    assert_eq!(error.0, 0);
}

#[test]
fn the_goal_is_the_checkers_shortest_violation_and_a_proven_world_has_none() {
    let broken = scenario("wait-on-null");
    let report = check::run(&broken, &Options::default());
    let shortest = report.properties.iter().filter(|p| p.status == Status::Violated);
    let shortest = shortest.filter_map(|p| p.trace.as_ref()).map(|t| t.steps.len()).min().unwrap();
    let found = goal(&broken, std::time::Duration::from_secs(60), None);
    assert_eq!(found.shortest, Some(shortest));
    assert!(found.property.is_some() && !found.bounded);
    let proven = goal(&scenario("standard"), std::time::Duration::from_secs(60), None);
    assert_eq!((proven.property, proven.shortest, proven.bounded), (None, None, false), "{}", proven.summary);
}

#[test]
fn a_loaded_trace_s_goal_is_the_property_it_breaks() {
    // Blind retry breaks eventual_acquire and no_orphans; each of its traces sets its own goal.
    for name in ["blind-retry-n2-eventual_acquire.json", "blind-retry-n2-no_orphans.json"] {
        let trace =
            zklab::trace::Trace::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("traces").join(name)).unwrap();
        let found = goal(&trace.scenario, std::time::Duration::from_secs(60), Some(trace.verdict.property));
        assert_eq!(found.property.as_deref(), Some(trace.verdict.property.name()), "{name}");
        assert!(found.shortest.is_some_and(|n| n <= trace.steps.len()), "{name}: {:?}", found.shortest);
    }
}

/// A running `zklab explore` and the address it printed.
struct Served(Child, String);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn serve(args: &[&str]) -> Served {
    let mut child =
        Command::new(env!("CARGO_BIN_EXE_zklab")).arg("explore").args(args).stdout(Stdio::piped()).spawn().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let url = lines.find_map(|l| l.unwrap().split_once("http://").map(|(_, rest)| rest.to_string())).unwrap();
    let address = url.split('/').next().unwrap().to_string();
    Served(child, address)
}

/// One HTTP request; the status code and the body.
fn http(address: &str, method: &str, path: &str, body: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(address).unwrap();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {address}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let code = answer.split(' ').nth(1).unwrap().parse().unwrap();
    (code, answer.split_once("\r\n\r\n").unwrap().1.to_string())
}

#[test]
fn the_server_answers_positions_and_refuses_another_worlds_trace() {
    let served = serve(&["--recipe", "wait-on-null", "--clients", "2"]);
    assert!(served.1.starts_with("127.0.0.1:"), "local only: {}", served.1);
    let (code, page) = http(&served.1, "GET", "/", "");
    assert_eq!(code, 200);
    assert!(page.contains(r#""property": "eventual_acquire""#), "the goal is on the page");
    let (code, body) = http(&served.1, "POST", "/api/position", r#"[{"acquire":0}]"#);
    assert_eq!(code, 200, "{body}");
    assert!(body.contains(r#""belief":"acquiring""#), "{body}");
    let (code, body) = http(&served.1, "POST", "/api/position", r#"[{"receive":1}]"#);
    assert_eq!((code, body.contains("not enabled")), (409, true), "{body}");
    let other =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("traces/naive-n3-no_herd.json")).unwrap();
    let (code, body) = http(&served.1, "POST", "/api/load", &other);
    assert_eq!((code, body.contains("another world")), (409, true), "{body}");
    let same = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("traces/wait-on-null-n2-eventual_acquire.json"),
    )
    .unwrap();
    let (code, body) = http(&served.1, "POST", "/api/load", &same);
    assert_eq!(code, 200, "{body}");
    assert!(body.contains(r#""property":"eventual_acquire""#), "the page's goal becomes the trace's: {body}");
    assert_eq!(http(&served.1, "GET", "/elsewhere", "").0, 404);
}

#[test]
fn bad_explore_input_is_one_line_and_exit_2() {
    for args in [
        vec!["--recipe", "nope"],
        vec!["--recipe", "standard", "--faults", "expire,expire"],
        vec!["--trace", "/no/such/trace.json"],
        vec!["--recipe", "standard", "--goal-timeout", "0"],
        // A trace names its world: flags that would describe another are refused, not ignored.
        vec!["--trace", "traces/wait-on-null-n2-eventual_acquire.json", "--clients", "5"],
        vec!["--trace", "traces/wait-on-null-n2-eventual_acquire.json", "--faults", "expire"],
        vec!["--trace", "traces/wait-on-null-n2-eventual_acquire.json", "--rounds", "3"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_zklab")).arg("explore").args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.starts_with("error: "), "{args:?}: {stderr}");
    }
}

#[test]
fn every_pitfall_is_a_level_whose_kept_trace_breaks_its_goal() {
    let pitfalls = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/pitfalls.md")).unwrap();
    let named: Vec<&str> =
        pitfalls.lines().filter_map(|l| l.strip_prefix("## ")).map(|h| h.split(':').next().unwrap()).collect();
    assert!(named.len() >= 4, "{named:?}");
    for pitfall in &named {
        assert!(zklab::explore::lessons::lesson(pitfall).is_some(), "docs/pitfalls.md's {pitfall} has no level");
    }
    for lesson in &zklab::explore::LESSONS {
        let trace = lesson.trace();
        trace.replay().unwrap_or_else(|e| panic!("{}: {e}", lesson.id));
        let kept = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(lesson.trace_file)).unwrap();
        assert_eq!(serde_json::from_str::<zklab::trace::Trace>(&kept).unwrap(), trace, "{}", lesson.id);
        let found = goal(&trace.scenario, std::time::Duration::from_secs(60), Some(trace.verdict.property));
        assert_eq!(found.property.as_deref(), Some(trace.verdict.property.name()), "{}", lesson.id);
        assert!(found.shortest.is_some_and(|n| n <= trace.steps.len()), "{}", lesson.id);
    }
}

#[test]
fn the_lessons_are_served_each_level_with_its_task_its_api_and_its_kept_trace() {
    let served = serve(&["--lessons"]);
    let (code, index) = http(&served.1, "GET", "/", "");
    assert_eq!(code, 200);
    for lesson in &zklab::explore::LESSONS {
        let base = format!("/lesson/{}/", lesson.id);
        assert!(index.contains(&format!(r#"href="{base}""#)), "the index links {base}");
        let (code, page) = http(&served.1, "GET", &base, "");
        assert_eq!(code, 200, "{base}");
        assert!(page.contains(lesson.task) && page.contains(r#""lesson": {"#), "{base}: the task is on the page");
        let (code, body) = http(&served.1, "POST", &format!("{base}api/position"), r#"[{"acquire":0}]"#);
        assert_eq!(code, 200, "{base}: {body}");
        let (code, timeline) = http(&served.1, "GET", &format!("{base}trace.html"), "");
        assert!(code == 200 && timeline.contains("violated</title>"), "{base}: the kept trace's timeline");
    }
    assert_eq!(http(&served.1, "GET", "/lesson/no-such-level/", "").0, 404);
}
