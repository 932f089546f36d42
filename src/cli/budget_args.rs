//! `--timeout` and `--max-memory`, as `check` and `simulate` both take them: checked before any
//! work, and turned into the one `Budget` every long run is bounded by.

use super::CliError;
use crate::budget::{default_max_memory_mib, Budget};
use std::time::{Duration, Instant};

#[derive(clap::Args, Clone, Debug)]
pub struct BudgetArgs {
    /// Stop after this many seconds (the answer is then unknown, exit 3).
    #[arg(long)]
    pub timeout: Option<u64>,
    /// Stop when memory use passes this many MiB (default: three quarters of the machine's).
    #[arg(long)]
    pub max_memory: Option<u64>,
}

/// The longest `--timeout`: a week.
const MAX_TIMEOUT_S: u64 = 7 * 24 * 3600;

impl BudgetArgs {
    /// Refuses a timeout past a week and a memory bound of nothing.
    pub fn validate(&self) -> Result<(), CliError> {
        if let Some(t) = self.timeout.filter(|t| *t > MAX_TIMEOUT_S) {
            return Err(CliError::BadInput(format!(
                "--timeout must be at most {MAX_TIMEOUT_S} seconds (a week), got {t}"
            )));
        }
        if self.max_memory == Some(0) {
            return Err(CliError::BadInput("--max-memory must be at least 1 (MiB)".to_string()));
        }
        Ok(())
    }

    pub fn timeout(&self) -> Option<Duration> {
        self.timeout.map(Duration::from_secs)
    }

    /// The flag's bound, else three quarters of the machine's memory.
    pub fn max_memory_mib(&self) -> Option<u64> {
        self.max_memory.or_else(default_max_memory_mib)
    }

    /// The budget of a run starting now: these bounds and Ctrl-C; no bound on states.
    pub fn starting_now(&self) -> Budget {
        Budget {
            deadline: self.timeout().map(|t| Instant::now() + t),
            max_memory_mib: self.max_memory_mib(),
            ..Budget::until_interrupted()
        }
    }
}
