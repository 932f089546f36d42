//! Where a long run stops early: a count of states, a deadline, the process's resident memory,
//! or Ctrl-C; and which of them ran out, named as the command line names it. The checker's
//! passes and swarms and the simulator's runs are bounded by the same budget.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// Where to stop early.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    pub max_states: usize,
    pub deadline: Option<Instant>,
    /// Resident memory of the process, in MiB, beyond which the pass stops.
    pub max_memory_mib: Option<u64>,
    /// Stop once the breadth-first level in which a safety or transition property is first
    /// violated, or a waiting client first deadlocks, is finished (see `Graph::stopped`).
    pub stop_at_violation: bool,
    /// Set by someone else (the CLI's Ctrl-C handler) to stop as a spent budget stops.
    pub interrupt: Option<&'static AtomicBool>,
}

/// The part of a budget that ran out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Spent {
    States,
    Time,
    Memory,
    /// Someone raised `Budget::interrupt` (Ctrl-C).
    Interrupted,
}

impl Spent {
    /// What ran out, as the command line names it: the flag that set it, or the signal.
    pub fn what_ran_out(self) -> &'static str {
        match self {
            Spent::States => "--max-states ran out",
            Spent::Time => "--timeout ran out",
            Spent::Memory => "--max-memory ran out",
            Spent::Interrupted => "interrupted",
        }
    }
}

impl Budget {
    /// No bound but Ctrl-C (or SIGTERM, SIGHUP): what a command without budget flags runs
    /// under.
    pub fn until_interrupted() -> Budget {
        Budget {
            max_states: usize::MAX,
            deadline: None,
            max_memory_mib: None,
            stop_at_violation: false,
            interrupt: Some(&crate::interrupt::INTERRUPTED),
        }
    }

    pub(crate) fn exhausted(&self, states: usize) -> bool {
        self.spent(states).is_some()
    }

    /// Which part of the budget is spent with `states` stored, if any.
    pub fn spent(&self, states: usize) -> Option<Spent> {
        if states >= self.max_states {
            Some(Spent::States)
        } else if self.interrupt.is_some_and(|flag| flag.load(Ordering::Relaxed)) {
            Some(Spent::Interrupted)
        } else if self.deadline.is_some_and(|d| Instant::now() >= d) {
            Some(Spent::Time)
        } else if self.max_memory_mib.is_some_and(|max| resident_mib().is_some_and(|rss| rss > max)) {
            Some(Spent::Memory)
        } else {
            None
        }
    }
}

/// The process's resident memory in MiB (Linux; elsewhere unknown, and never a reason to stop).
pub fn resident_mib() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096 / (1024 * 1024))
}

/// Three quarters of the machine's memory, the default bound (Linux; elsewhere none).
pub fn default_max_memory_mib() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let total_kib: u64 =
        meminfo.lines().find(|l| l.starts_with("MemTotal:"))?.split_whitespace().nth(1)?.parse().ok()?;
    Some(total_kib / 1024 * 3 / 4)
}
