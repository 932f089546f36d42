//! Ctrl-C and SIGTERM stop every long command with what it knows: each test starts a command
//! that would run for minutes, waits for its first progress line (progress comes once a second
//! on stderr), sends the signal, and reads the partial report and exit code 3 (1 had it already
//! found a violation). Those that start a real ZooKeeper are in tests/real/signals.rs.

#[path = "support/stopping.rs"]
mod stopping;

use stopping::stop;

#[test]
fn a_schedule_search_stopped_by_sigterm_says_how_many_schedules_it_tried() {
    let args = ["simulate", "--recipe", "standard", "--clients", "20", "--search", "1000000"];
    let stopped =
        stop("search", &[&args[..], &["--faults", "loss-after-apply,expire"]].concat(), "schedules tried", "TERM");
    stopped.assert(3, "of 1000000 schedules of up to 4 faults tried, none breaks a property so far");
}

#[test]
fn a_seed_sweep_stopped_by_ctrl_c_reports_the_seeds_it_finished() {
    let args = ["simulate", "--recipe", "standard", "--clients", "300", "--seeds", "1000000", "--faults", "expire=1"];
    let stopped = stop("seeds", &args, "seeds done", "INT");
    stopped.assert(3, "of 1000000 seeds ran to the end");
}

#[test]
fn a_manifest_stopped_by_sigterm_prints_its_table_so_far() {
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/manifest.json");
    let stopped = stop("manifest", &["check", "--manifest", manifest, "--threads", "1"], "[3/", "TERM");
    stopped.assert(3, "not run (interrupted)");
    assert!(stopped.stdout.contains("as expected"), "{}", stopped.stdout);
}

#[test]
fn the_suite_stopped_by_ctrl_c_says_how_many_cases_ran() {
    let stopped = stop("suite", &["suite"], "[3/", "INT");
    let total = zklab::suite::CASES.len();
    stopped.assert(3, &format!("of {total} cases run, 0 NOT as expected"));
}

#[test]
fn calibration_stopped_by_sigterm_keeps_the_rows_it_has() {
    let args = ["calibrate", "--clients", "2", "--faults", "loss-after-apply,expire", "--seeds", "1000000"];
    let stopped = stop("calibrate", &args, "states reached", "TERM");
    stopped.assert(3, "interrupted: the rows above are what was run by then");
}

#[test]
fn a_herd_measurement_stopped_by_ctrl_c_keeps_its_finished_rows() {
    let args = ["herd", "--recipes", "naive", "--clients", "5,3000", "-o", "herd.svg"];
    let stopped = stop("herd", &args, "acquisitions granted", "INT");
    stopped.assert(3, "interrupted: 1 of 2 runs measured");
}

#[test]
fn a_swarm_stopped_by_sigterm_is_bounded_by_the_signal() {
    let args = ["check", "--recipe", "standard", "--clients", "4", "--faults", "loss-after-apply,expire"];
    let stopped = stop("swarm", &[&args[..], &["--swarm", "1000000000"]].concat(), "walks", "TERM");
    stopped.assert(3, "(BOUNDED: interrupted)");
}
