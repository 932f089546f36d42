//! When a client has finished reacting. After every choice the scheduler waits until every
//! client process is quiet before it takes the next one, so that what a client does in answer
//! (a new request, a line of history) is part of the state the next choice is taken in, and a
//! schedule run again meets the same states.
//!
//! Quiet means: no thread of any client process (or of a process it started) is running or
//! runnable, or waiting on the disk (states `R` and `D` in `/proc/PID/task/TID/stat`), or
//! asleep in `nanosleep`/`clock_nanosleep` (its syscall in `/proc/PID/task/TID/syscall`: a
//! plain sleep, such as Python's `time.sleep` in a retry's back-off, whose end is the client's
//! next move), and nothing was heard from the clients (a frame, a line), for `SAMPLES` samples
//! `SAMPLE` apart. A thread that reacts to a frame is woken within microseconds and stays
//! runnable while it works, so a sample that sees none running after a frame was handed over is
//! one the reaction has finished by; several in a row guard against sampling between two
//! bursts. Time-driven work that waits in an event loop's poll with a timeout (Node's timers,
//! Go's runtime timers, a library's ping loop, a JVM thread parked with a timeout) looks quiet
//! while it waits: that is the source of a schedule not replaying, measured by `zklab
//! client-check --replay-check`. A replay makes up for part of it: a recorded choice whose
//! request has not come in yet is waited for (`run::LATE_PATIENCE`).

use std::time::Duration;

/// Samples in a row that must find every client quiet.
pub const SAMPLES: u32 = 3;
/// Between two samples.
pub const SAMPLE: Duration = Duration::from_micros(250);

/// The syscalls of a plain sleep: nanosleep and clock_nanosleep.
#[cfg(target_arch = "x86_64")]
const SLEEPS: [u64; 2] = [35, 230];
#[cfg(target_arch = "aarch64")]
const SLEEPS: [u64; 2] = [101, 115];
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const SLEEPS: [u64; 0] = [];

/// Whether the thread at `/proc/PID/task/TID` is in a plain sleep.
fn asleep_on_a_timer(task: &std::path::Path) -> bool {
    std::fs::read_to_string(task.join("syscall"))
        .ok()
        .and_then(|text| text.split_whitespace().next()?.parse::<u64>().ok())
        .is_some_and(|call| SLEEPS.contains(&call))
}

/// Whether any thread of `pid` or of a process it started is running, runnable, waiting on the
/// disk, or in a plain sleep.
pub fn running(pid: u32) -> bool {
    let mut stack = vec![pid];
    let mut seen = 0;
    while let Some(p) = stack.pop() {
        seen += 1;
        if seen > 4096 {
            break;
        }
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{p}/task")) else { continue };
        for task in tasks.flatten() {
            let dir = task.path();
            if let Ok(stat) = std::fs::read_to_string(dir.join("stat")) {
                // The state follows the command name, which is in parentheses and may hold spaces.
                if stat.rsplit_once(") ").is_some_and(|(_, rest)| rest.starts_with(['R', 'D'])) {
                    return true;
                }
                if asleep_on_a_timer(&dir) {
                    return true;
                }
            }
            if let Ok(children) = std::fs::read_to_string(dir.join("children")) {
                stack.extend(children.split_whitespace().filter_map(|c| c.parse::<u32>().ok()));
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_busy_or_sleeping_process_is_not_quiet_and_a_blocked_one_is() {
        use std::process::{Command, Stdio};
        let mut busy = Command::new("sh").args(["-c", "while :; do :; done"]).spawn().unwrap();
        let mut sleeping = Command::new("sleep").arg("5").spawn().unwrap();
        // Blocked reading a pipe nobody writes: waiting for the scheduler, as a client waits
        // for a reply.
        let mut blocked = Command::new("cat").stdin(Stdio::piped()).stdout(Stdio::null()).spawn().unwrap();
        std::thread::sleep(Duration::from_millis(100));
        let busy_seen = (0..50).any(|_| running(busy.id()));
        let sleeping_seen = (0..50).filter(|_| running(sleeping.id())).count();
        let blocked_seen = (0..50).filter(|_| running(blocked.id())).count();
        for child in [&mut busy, &mut sleeping, &mut blocked] {
            let _ = child.kill();
            let _ = child.wait();
        }
        assert!(busy_seen, "a spinning shell is seen running");
        assert_eq!(sleeping_seen, 50, "a process in a plain sleep will move by itself: never quiet");
        assert_eq!(blocked_seen, 0, "a process blocked on a pipe is always quiet");
    }
}
