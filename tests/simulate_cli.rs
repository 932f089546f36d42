//! `zklab simulate` as a user meets it: a seed sweep gives the same runs on one thread or two, a
//! violation is a trace that `zklab replay` confirms plus the command that reproduces it, and
//! bad input is one line and exit 2.

use serde_json::Value;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_zklab");

fn zklab(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().expect("zklab runs")
}

fn temp_dir(test: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("zklab-sim-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn a_sweep_gives_the_same_runs_on_any_number_of_threads() {
    let sweep = |threads: &str| {
        let out = zklab(&[
            "simulate",
            "--recipe",
            "standard",
            "--clients",
            "30",
            "--seed",
            "5",
            "--seeds",
            "6",
            "--faults",
            "loss-after-apply=0.02,expire=2",
            "--threads",
            threads,
            "--json",
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        let runs: Value = serde_json::from_slice(&out.stdout).unwrap();
        runs.as_array()
            .unwrap()
            .iter()
            .map(|r| (r["seed"].as_u64().unwrap(), r["steps_hash"].clone()))
            .collect::<Vec<_>>()
    };
    let one = sweep("1");
    assert_eq!(one.iter().map(|(s, _)| *s).collect::<Vec<_>>(), vec![5, 6, 7, 8, 9, 10]);
    assert_eq!(one, sweep("2"));
    assert_eq!(one, sweep("2"), "and again");
}

#[test]
fn a_violation_writes_a_trace_that_replays_and_says_how_to_reproduce_it() {
    let dir = temp_dir("violation");
    let args = [
        "simulate",
        "--recipe",
        "blind-retry",
        "--clients",
        "10",
        "--seeds",
        "40",
        "--faults",
        "loss-before-apply=0.01,loss-after-apply=0.01,expire=3",
        "--trace-dir",
        dir.to_str().unwrap(),
        "--html",
    ];
    let out = zklab(&args);
    assert_eq!(out.status.code(), Some(1), "blind-retry is caught");
    let text = String::from_utf8_lossy(&out.stdout);
    let reproduce = text.lines().find_map(|l| l.trim().strip_prefix("reproduce: zklab ")).expect("a reproduce line");
    let trace = text.lines().find_map(|l| l.trim().strip_prefix("trace: ")).expect("a trace line").to_string();
    let bytes = std::fs::read(&trace).unwrap();
    // Its HTML timeline beside it, with the run's virtual time on the axis.
    let page = std::fs::read_to_string(trace.replace(".json", ".html")).expect("--html writes the page beside");
    assert!(page.contains(r#""timed": true"#), "a simulated run's page is timed");
    let replayed = zklab(&["replay", &trace]);
    assert_eq!(replayed.status.code(), Some(0), "{}", String::from_utf8_lossy(&replayed.stdout));
    // The printed command runs that one seed again, byte for byte.
    std::fs::remove_file(&trace).unwrap();
    let mut again: Vec<&str> = reproduce.split(' ').collect();
    again.extend(["--trace-dir", dir.to_str().unwrap()]);
    assert_eq!(zklab(&again).status.code(), Some(1));
    assert_eq!(std::fs::read(&trace).unwrap(), bytes);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    for (args, says) in [
        (vec!["--recipe", "standard", "--clients", "0"], "--clients"),
        (vec!["--recipe", "standard", "--clients", "200000"], "--clients"),
        (vec!["--recipe", "nope"], "unknown recipe"),
        (vec!["--recipe", "standard", "--faults", "expire=lots"], "not a rate"),
        (vec!["--recipe", "standard", "--faults", "loss-after-apply=2"], "probability"),
        (vec!["--recipe", "standard", "--latency-us", "5"], "--latency-us"),
        (vec!["--recipe", "standard", "--seeds", "0"], "--seeds"),
        (vec!["--recipe", "standard", "--schedule", "/no/such/schedule.json"], "cannot read schedule"),
        (vec!["--recipe", "standard", "--jute-maxbuffer", "0"], "--jute-maxbuffer"),
        (vec!["--recipe", "standard", "--clients", "1000", "--html"], "--html draws at most 32 clients"),
        (vec!["--recipe", "standard", "--jute-maxbuffer", "-5"], "-5"),
        (vec!["--recipe", "standard", "--client", "kazoo", "--jute-maxbuffer", "9"], "kazoo"),
        // Durations near the clock's end would overflow it (a false violation, or a pass).
        (vec!["--recipe", "standard", "--hold-ms", "18446744073709551"], "--hold-ms"),
        (vec!["--recipe", "standard", "--chaos-ms", "18446744073709551"], "--chaos-ms"),
        (vec!["--recipe", "standard", "--heal-ms", "86400001"], "--heal-ms"),
        (vec!["--recipe", "standard", "--start-spread-ms", "90000000"], "--start-spread-ms"),
        (vec!["--recipe", "standard", "--latency-us", "1..18446744073709551615"], "--latency-us"),
        // A fault list that says nothing, or says one thing twice; a search of nothing.
        (vec!["--recipe", "standard", "--faults", ""], "empty entry"),
        (vec!["--recipe", "standard", "--faults", "expire,expire"], "named twice"),
        (vec!["--recipe", "standard", "--faults", "none,expire"], "stands alone"),
        (vec!["--recipe", "standard", "--faults", "expire", "--search", "0"], "--search"),
        (vec!["--recipe", "standard", "--faults", "expire", "--search", "10", "--max-faults", "0"], "--max-faults"),
    ] {
        let mut full = vec!["simulate"];
        full.extend(&args);
        let out = zklab(&full);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

#[test]
fn a_scheduled_fault_after_the_chaos_phase_is_refused() {
    let dir = temp_dir("late-fault");
    std::fs::create_dir_all(&dir).unwrap();
    let schedule = dir.join("late.json");
    std::fs::write(&schedule, r#"{"faults": [{"at_ms": 5000, "fault": "expire", "client": 0}]}"#).unwrap();
    let run = |chaos: &str| {
        zklab(&["simulate", "--recipe", "standard", "--schedule", schedule.to_str().unwrap(), "--chaos-ms", chaos])
    };
    let late = run("2000");
    let err = String::from_utf8_lossy(&late.stderr);
    assert_eq!(late.status.code(), Some(2), "{err}");
    assert!(err.contains("5000 ms") && err.contains("--chaos-ms"), "{err}");
    // Within a longer chaos phase the same schedule runs, and the standard lock survives it.
    let within = run("6000");
    assert_eq!(within.status.code(), Some(0), "{}", String::from_utf8_lossy(&within.stdout));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn clients_that_start_late_are_still_judged() {
    // Clients start over 100 virtual seconds, long after the chaos phase: each must still get
    // its acquisition before the run ends.
    let out = zklab(&["simulate", "--recipe", "standard", "--clients", "3", "--start-spread-ms", "100000"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains(": 3 acquisitions"), "every client acquired: {text}");
}

#[test]
fn the_herd_chart_goes_under_the_trace_dir_unless_told_otherwise() {
    let dir = temp_dir("herd-default");
    std::fs::create_dir_all(&dir).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_zklab"))
        .current_dir(&dir)
        .args(["herd", "--recipes", "standard", "--clients", "5"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(dir.join("zklab-traces/herd.svg").is_file(), "the chart is kept with the traces");
    assert!(!dir.join("herd.svg").exists(), "nothing is left in the working directory");
    let elsewhere = dir.join("charts/h.svg");
    let out = zklab(&["herd", "--recipes", "standard", "--clients", "5", "-o", elsewhere.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(elsewhere.is_file(), "-o says where");
    // Again over its own chart: replaced. Over a file of the user's: refused, unless --force.
    let out = zklab(&["herd", "--recipes", "standard", "--clients", "5", "-o", elsewhere.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let notes = dir.join("notes.txt");
    std::fs::write(&notes, "mine").unwrap();
    let args = ["herd", "--recipes", "standard", "--clients", "5", "-o", notes.to_str().unwrap()];
    let out = zklab(&args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        (out.status.code(), stderr.contains("is not an SVG chart: not replaced (--force replaces it)")),
        (Some(2), true),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "mine");
    assert_eq!(zklab(&[&args[..], &["--force"]].concat()).status.code(), Some(0));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_herd_table_shows_one_wakeup_per_release_for_the_standard_lock_and_a_herd_for_the_others() {
    let dir = temp_dir("herd");
    std::fs::create_dir_all(&dir).unwrap();
    let svg = dir.join("herd.svg");
    let out = zklab(&[
        "herd",
        "--recipes",
        "standard,parent-watch",
        "--clients",
        "5,20,40",
        "--json",
        "--svg",
        svg.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let rows: Value = serde_json::from_slice(&out.stdout).unwrap();
    let per_release = |recipe: &str| -> Vec<f64> {
        rows.as_array()
            .unwrap()
            .iter()
            .filter(|r| r["recipe"] == recipe)
            .map(|r| r["herd"]["notifications_per_release"].as_f64().unwrap())
            .collect()
    };
    assert!(per_release("standard").iter().all(|n| *n <= 1.0), "{:?}", per_release("standard"));
    let herd = per_release("parent-watch");
    assert!(herd[1] > 3.0 * herd[0] && herd[2] > 1.8 * herd[1], "linear growth: {herd:?}");
    let chart = std::fs::read_to_string(&svg).unwrap();
    assert!(chart.starts_with("<svg") && chart.contains("standard") && chart.contains("parent-watch"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_queue_longer_than_jute_maxbuffer_allows_is_reported_as_unknown_with_its_cause() {
    let dir = temp_dir("jute");
    let args = [
        "simulate",
        "--recipe",
        "standard",
        "--clients",
        "200",
        "--start-spread-ms",
        "50",
        "--heal-ms",
        "2000",
        "--jute-maxbuffer",
        "3000",
        "--trace-dir",
        dir.to_str().unwrap(),
    ];
    let out = zklab(&args);
    let text = String::from_utf8_lossy(&out.stdout);
    // Waiters keep listing and reconnecting: the world never deadlocks, so a bounded run cannot
    // call it a violation. It is unknown (exit 3), its cause named, and no trace is written.
    assert_eq!(out.status.code(), Some(3), "{text}");
    assert!(text.contains("UNKNOWN") && text.contains("no deadlock"), "{text}");
    let refused =
        text.lines().find(|l| l.contains("longer than jute.maxbuffer")).expect("the refused replies are counted");
    assert!(refused.contains("the shortest a listing of 1"), "about 120 names fit in 3000 bytes: {refused}");
    assert!(!text.contains("trace: ") && !dir.exists(), "an undecided run writes no trace: {text}");
    // The same run with the Java client's own limit: 200 names fit many times over.
    let default: Vec<&str> = args.iter().copied().filter(|a| *a != "--jute-maxbuffer" && *a != "3000").collect();
    let out = zklab(&default);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn ctrl_c_stops_a_simulation_and_prints_what_is_known_with_exit_3() {
    let dir = temp_dir("ctrl-c");
    // A hundred thousand clients queued on the lock, many seconds of work: the interruption, not
    // the end, stops it (a herd recipe would be a finding, and a finding is a verdict).
    let child = Command::new(env!("CARGO_BIN_EXE_zklab"))
        .args(["simulate", "--recipe", "standard", "--clients", "100000", "--trace-dir", dir.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{text}");
    assert!(text.contains("seed 1: interrupted after"), "what it knows: {text}");
    assert!(text.contains("0 of 1 runs passed"), "an interrupted run is not a pass: {text}");
    assert!(!dir.exists(), "no verdict, no trace");
}

#[test]
fn a_run_in_which_no_one_acquires_ends_at_the_stall_window_and_says_why() {
    // Every listing of 2000 children is longer than 20000 bytes: no client can ever acquire.
    let dir = temp_dir("stall");
    let out = zklab(&[
        "simulate",
        "--recipe",
        "standard",
        "--clients",
        "2000",
        "--jute-maxbuffer",
        "20000",
        "-q",
        "--trace-dir",
        dir.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "stuck is not shown, only suspected: {text}");
    assert!(text.contains("2000 clients wait"), "{text}");
    assert!(
        text.contains(
            "none has acquired for 6.0 s of virtual time (the stall window is 6.0 s), but steps remain (no deadlock): \
             stalled"
        ),
        "{text}"
    );
    assert!(text.contains("the lock's listing exceeds jute.maxbuffer"), "the cause is named: {text}");
    // Ended at the window (a few seconds of virtual time), not at the heal deadline (minutes).
    assert!(text.contains("steps in 6.0 s of virtual time"), "{text}");
    assert!(!dir.exists(), "an undecided run writes no trace");
}

/// The report that opened this: a correct lock, a 5 s hold and a 1 ms deadline. The second
/// client is only waiting out the hold; the run says so as unknown, writes no trace, and a
/// sweep of such runs is no pass.
#[test]
fn a_correct_lock_with_a_hold_longer_than_the_deadline_is_unknown_not_violated() {
    let dir = temp_dir("long-hold");
    let out = zklab(&[
        "simulate",
        "--recipe",
        "standard",
        "--clients",
        "2",
        "--hold-ms",
        "5000",
        "--heal-ms",
        "1",
        "--chaos-ms",
        "0",
        "--seeds",
        "3",
        "-q",
        "--trace-dir",
        dir.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{text}");
    assert!(!text.contains("violated"), "{text}");
    assert_eq!(text.matches("UNKNOWN: 1 client waits (c").count(), 3, "{text}");
    assert!(text.contains("0 of 3 runs passed, 3 unknown"), "{text}");
    assert!(!dir.exists(), "no trace: nothing was shown broken");
}

#[test]
fn a_run_stopped_by_its_timeout_or_memory_bound_names_the_bound_and_gives_no_verdict() {
    // 100,000 clients over the Java client's jute.maxbuffer: long enough to meet any bound.
    let long = ["simulate", "--recipe", "standard", "--clients", "100000", "--seed", "1", "-q"];
    for (bound, value, named) in
        [("--timeout", "1", "--timeout ran out"), ("--max-memory", "40", "--max-memory ran out")]
    {
        let out = zklab(&[&long[..], &[bound, value, "--json"]].concat());
        assert_eq!(out.status.code(), Some(3), "{bound}: {}", String::from_utf8_lossy(&out.stderr));
        let runs: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!((runs[0]["verdict"].as_str(), runs[0]["bounded_by"].as_str()), (Some("bounded"), Some(named)));
        let text = zklab(&[&long[..], &[bound, value]].concat());
        let stdout = String::from_utf8_lossy(&text.stdout);
        assert!(stdout.contains(&format!("{named}: 0 of 1 seeds ran to the end")), "{stdout}");
    }
    let sweep = zklab(&[&long[..], &["--seeds", "3", "--timeout", "1"]].concat());
    assert_eq!(sweep.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&sweep.stdout).contains("--timeout ran out"));
    for (bound, value) in [("--timeout", "604801"), ("--max-memory", "0")] {
        let out = zklab(&[&long[..], &[bound, value]].concat());
        assert_eq!(out.status.code(), Some(2), "{bound} {value}");
    }
}

#[test]
fn a_violation_met_after_the_steps_a_run_keeps_is_run_again_for_its_trace() {
    let scenario = zklab::scenario::Scenario::new("blind-retry", 3, Default::default()).unwrap();
    let mut config = zklab_sim::SimConfig::new(scenario.config.clone(), 2);
    config.rates.loss_after_apply = 0.3;
    let kept = zklab::simulate::run_unstoppable(&scenario, &config);
    let lean = zklab::simulate::run_unstoppable(&scenario, &zklab_sim::SimConfig { keep_steps: 2, ..config });
    let (Some(kept_trace), Some(lean_trace)) = (&kept.trace, &lean.trace) else {
        panic!("blind-retry breaks a property under lost replies: {:?}", kept.verdict);
    };
    assert!(kept_trace.steps.len() > 2);
    assert_eq!(lean_trace, kept_trace, "the run again keeps every step");
    assert_eq!(lean.steps_hash, kept.steps_hash);
    lean_trace.replay().expect("the trace replays to its violation");
}

/// `no_herd` is judged by the simulator as by the checker, from the notifications each step
/// queues: the naive lock's first release wakes every waiter, the run says so with a trace
/// that ends at that release and replays, and the predecessor watch never herds.
#[test]
fn the_naive_locks_herd_is_flagged_by_a_simulation_and_its_trace_replays() {
    let dir = temp_dir("herd");
    let run = |recipe: &str| {
        zklab(&[
            "simulate",
            "--recipe",
            recipe,
            "--clients",
            "5",
            "--seeds",
            "3",
            "-q",
            "--trace-dir",
            dir.to_str().unwrap(),
        ])
    };
    let naive = run("naive");
    let text = String::from_utf8_lossy(&naive.stdout);
    assert_eq!(naive.status.code(), Some(1), "{text}");
    assert_eq!(text.matches("no_herd violated: one step wakes").count(), 3, "{text}");
    let traces: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(traces.len(), 3, "{traces:?}");
    for trace in &traces {
        let replayed = zklab(&["replay", trace.to_str().unwrap()]);
        assert_eq!(replayed.status.code(), Some(0), "{}", String::from_utf8_lossy(&replayed.stderr));
        let last = serde_json::from_slice::<serde_json::Value>(&std::fs::read(trace).unwrap()).unwrap()["steps"]
            .as_array()
            .unwrap()
            .last()
            .cloned()
            .unwrap();
        assert!(last.get("release").is_some() || last.get("receive").is_some(), "ends at the herd: {last}");
    }
    let standard = run("standard");
    assert_eq!(standard.status.code(), Some(0), "{}", String::from_utf8_lossy(&standard.stdout));
    let _ = std::fs::remove_dir_all(&dir);
}
