//! The HTML timeline (`zklab replay --html`): one self-contained page per trace, the same bytes
//! for the same trace, with a frame per state, the messages as arrows, the violation marked where
//! it happens, and virtual time on the axis of a simulated run's trace.

use serde_json::Value;
use std::path::Path;
use zklab::trace::Trace;

fn trace(name: &str) -> Trace {
    Trace::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("traces").join(name)).unwrap()
}

/// The page's data, as its script reads it.
fn page_data(html: &str) -> Value {
    let start = html.find(r#"<script id="page" type="application/json">"#).expect("the data block");
    let json = &html[start..].split_once('>').unwrap().1;
    let json = json.split_once("</script>").unwrap().0;
    serde_json::from_str(json).expect("the data is JSON")
}

#[test]
fn a_page_needs_nothing_from_the_network_and_is_the_same_every_time() {
    let trace = trace("wait-on-null-n2-eventual_acquire.json");
    let html = zklab::html::render(&trace).unwrap();
    assert_eq!(html, zklab::html::render(&trace).unwrap(), "deterministic");
    for external in ["src=", "href=", "@import", "url(http", "fetch("] {
        assert!(!html.contains(external), "the page loads nothing: found {external}");
    }
    // The one URL is SVG's namespace name, which nothing fetches.
    let urls: Vec<&str> = html.match_indices("http").map(|(at, _)| &html[at..at + 26]).collect();
    assert!(urls.iter().all(|u| u.starts_with("http://www.w3.org/2000/svg")), "{urls:?}");
}

#[test]
fn the_wait_on_null_page_shows_the_watch_on_a_deleted_node_and_the_stuck_waiter() {
    let trace = trace("wait-on-null-n2-eventual_acquire.json");
    let data = page_data(&zklab::html::render(&trace).unwrap());
    let frames = data["frames"].as_array().unwrap();
    assert_eq!(frames.len(), trace.steps.len() + 1, "the initial state and one frame per step");
    assert_eq!(data["property"], "eventual_acquire");
    let last = frames.last().unwrap();
    assert_eq!(last["violation"], true, "a deadlock is shown at its last state");
    assert!(frames[..frames.len() - 1].iter().all(|f| f["violation"] == false));
    assert_eq!(last["clients"][1]["belief"], "acquiring", "c1 still waits");
    // c1's exist watch is on c0's node, which is gone: the page lists it as a watched path with
    // no node.
    let nodes = last["nodes"].as_array().unwrap();
    let watched = nodes.iter().find(|n| n["watched_by"].as_array().unwrap().iter().any(|c| c == "c1")).unwrap();
    assert_eq!(watched["absent"], true, "{watched}");
    assert!(watched["path"].as_str().unwrap().contains("c0-"), "{watched}");
    // Every request is an arrow to the server, every reply one from it to where it was handled.
    let arrows: Vec<&Value> = frames.iter().flat_map(|f| f["arrows"].as_array().unwrap()).collect();
    let count = |kind: &str| arrows.iter().filter(|a| a["kind"] == kind).count();
    assert!(count("request") >= 5 && count("reply") >= 5, "{arrows:?}");
    for reply in arrows.iter().filter(|a| a["kind"] == "reply") {
        assert_eq!(reply["from"][0], 0, "a reply leaves the server");
        assert!(reply["from"][1].as_u64() <= reply["to"][1].as_u64(), "and arrives no earlier: {reply}");
    }
}

#[test]
fn a_safety_violation_is_judged_violated_only_at_its_last_frame() {
    let trace = trace("curator-mutex-498-n2-belief_exclusion.json");
    let data = page_data(&zklab::html::render(&trace).unwrap());
    let judged = |frame: &Value| {
        let checks = frame["checks"].as_array().unwrap();
        checks.iter().find(|c| c[0] == "belief_exclusion").map(|c| c[1].as_bool().unwrap()).unwrap()
    };
    let frames = data["frames"].as_array().unwrap();
    assert!(!judged(frames.last().unwrap()), "the model's judge says violated at the end");
    assert!(frames[..frames.len() - 1].iter().all(judged), "and holds before");
    let faults: Vec<&str> = frames.iter().filter_map(|f| f["fault"].as_str()).collect();
    let expire = "cut off past the session timeout";
    assert!(faults.contains(&"lagging-session") && faults.contains(&expire), "faults are marked: {faults:?}");
}

#[test]
fn a_liveness_lasso_marks_its_cycle() {
    let trace = trace("leader-latch-644-n2-eventual_acquire.json");
    let start = trace.verdict.cycle_start.expect("a lasso");
    let data = page_data(&zklab::html::render(&trace).unwrap());
    assert_eq!(data["cycle_start"], start);
    let frames = data["frames"].as_array().unwrap();
    for (i, frame) in frames.iter().enumerate() {
        assert_eq!(frame["violation"], i > start, "frame {i}: the cycle is frames {} to the end", start + 1);
    }
}

#[test]
fn a_simulated_runs_page_has_virtual_time_on_its_axis() {
    let trace = trace("sim/sched-wait-on-null-n3-eventual_acquire-trace.json");
    assert_eq!(trace.times_us.len(), trace.steps.len(), "the simulator records each step's time");
    let data = page_data(&zklab::html::render(&trace).unwrap());
    assert_eq!(data["timed"], true);
    let times: Vec<u64> =
        data["frames"].as_array().unwrap()[1..].iter().map(|f| f["time_us"].as_u64().unwrap()).collect();
    assert_eq!(times, trace.times_us);
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "time runs forward");
    // A checker's trace has no time.
    let checked = page_data(&zklab::html::render(&self::trace("wait-on-null-n2-eventual_acquire.json")).unwrap());
    assert_eq!(checked["timed"], false);
}

#[test]
fn a_trace_too_large_for_a_page_is_refused_with_what_to_use_instead() {
    let mut big = trace("wait-on-null-n2-eventual_acquire.json");
    big.steps = vec![big.steps[0]; zklab::html::MAX_STEPS + 1];
    let error = zklab::html::render(&big).unwrap_err().to_string();
    assert!(error.contains("too many for a page") && error.contains("replay --show"), "{error}");
}

#[test]
fn a_release_that_wakes_the_queue_is_drawn_as_a_fan_to_the_clients_it_wakes() {
    let trace = trace("naive-n3-no_herd.json");
    let data = page_data(&zklab::html::render(&trace).unwrap());
    let last = data["frames"].as_array().unwrap().last().unwrap().clone();
    let frame = trace.steps.len() as u64;
    let fan: Vec<u64> = (last["arrows"].as_array().unwrap().iter())
        .filter(|a| a["kind"] == "event")
        .inspect(|a| assert_eq!((a["from"][0].as_u64(), a["from"][1].as_u64()), (Some(0), Some(frame)), "{a}"))
        .map(|a| a["to"][0].as_u64().unwrap())
        .collect();
    assert_eq!(fan, vec![2, 3], "one arrow from the server to c1 and one to c2, at the release: {last}");
    let notes: Vec<&str> = last["notes"].as_array().unwrap().iter().map(|n| n.as_str().unwrap()).collect();
    assert!(notes.iter().any(|n| n.ends_with("queued for c1's session s3")), "clients named, not sessions: {notes:?}");
}

#[test]
fn the_expiry_is_marked_where_the_server_expires_the_session_not_where_the_client_is_cut_off() {
    let trace = trace("standard-n2-stale_holder.json");
    let data = page_data(&zklab::html::render(&trace).unwrap());
    let frames = data["frames"].as_array().unwrap();
    let cut = frames.iter().position(|f| f["step"] == "FAULT expire c0").expect("the expire fault");
    assert_eq!(frames[cut]["fault"], "cut off past the session timeout");
    assert!(frames[cut]["expired"].is_null() && frames[cut]["clients"][0]["expired"] == false);
    let expired = frames.iter().position(|f| f["step"] == "expire c0").expect("the server's expiry");
    assert!(expired > cut);
    assert_eq!(frames[expired]["expired"], "c0's session s2");
    assert!(frames[expired..].iter().all(|f| f["clients"][0]["expired"] == true), "marked from there on");
}
