//! When a client has finished reacting. After every choice the scheduler waits until every
//! client process is quiet before it takes the next one, so that what a client does in answer
//! (a new request, a line of history) is part of the state the next choice is taken in, and a
//! schedule run again meets the same states.
//!
//! Quiet means: no thread of any client process (or of a process it started) is running or
//! runnable, or waiting on the disk (states `R` and `D` in `/proc/PID/task/TID/stat`), and nothing was heard from the clients
//! (a frame, a line), for `SAMPLES` samples `SAMPLE` apart. A thread that reacts to a frame is
//! woken within microseconds and stays runnable while it works, so a sample that sees none
//! running after a frame was handed over is one the reaction has finished by; several in a row
//! guard against sampling between two bursts. Time-driven work (a sleep, a retry's back-off)
//! looks quiet while it waits: that is the one source of a schedule not replaying, measured by
//! `zklab client-check --replay-check`.

use std::time::Duration;

/// Samples in a row that must find every client quiet.
pub const SAMPLES: u32 = 4;
/// Between two samples.
pub const SAMPLE: Duration = Duration::from_millis(1);

/// Whether any thread of `pid` or of a process it started is running, runnable or waiting on
/// the disk.
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
    fn a_busy_process_is_running_and_a_sleeping_one_is_not() {
        let mut busy = std::process::Command::new("sh").args(["-c", "while :; do :; done"]).spawn().unwrap();
        let mut sleeping = std::process::Command::new("sleep").arg("5").spawn().unwrap();
        std::thread::sleep(Duration::from_millis(100));
        let busy_seen = (0..50).any(|_| running(busy.id()));
        let sleeping_seen = (0..50).filter(|_| running(sleeping.id())).count();
        let _ = busy.kill();
        let _ = sleeping.kill();
        let _ = busy.wait();
        let _ = sleeping.wait();
        assert!(busy_seen, "a spinning shell is seen running");
        assert_eq!(sleeping_seen, 0, "a sleeping process is never seen running");
    }
}
