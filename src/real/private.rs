//! What one `zklab real` (or `zk-fuzz`) run owns alone, so that two runs on one machine never
//! touch each other's things: a run id drawn once per process (its pid and 64 random bits: two
//! containers on one host can share a pid, never both), the servers' and clients' directories
//! made with `create_dir` (which fails rather than share one that exists), and the chroot on the
//! servers. Nothing here removes anything it did not make.

use std::hash::{BuildHasher, Hasher};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// This process's run id: `PID-RANDOM`.
pub fn run_id() -> &'static str {
    static ID: OnceLock<String> = OnceLock::new();
    ID.get_or_init(|| {
        // The standard library's per-process random keys, from the OS: no clock, no crate.
        let random = std::collections::hash_map::RandomState::new().build_hasher().finish();
        format!("{}-{random:016x}", std::process::id())
    })
}

/// The system's temporary directory, if it is one (asked up front by the commands that make
/// private directories, as bad input: `TMPDIR` is the user's).
pub fn temporary() -> Result<PathBuf, String> {
    let tmp = std::env::temp_dir();
    match std::fs::metadata(&tmp) {
        Ok(meta) if meta.is_dir() => Ok(tmp),
        Ok(_) => Err(format!("the temporary directory {} is not a directory (TMPDIR)", tmp.display())),
        Err(e) => Err(format!("the temporary directory {} cannot be used (TMPDIR): {e}", tmp.display())),
    }
}

/// A new directory for `what` under the system's temporary directory, this run's alone. The
/// temporary directory itself (`TMPDIR`) must exist: it is never made here.
pub fn private_dir(what: &str) -> Result<PathBuf, String> {
    static MADE: AtomicU64 = AtomicU64::new(0);
    let tmp = temporary()?;
    let dir = tmp.join(format!("zklab-{what}-{}-{}", run_id(), MADE.fetch_add(1, Ordering::Relaxed)));
    std::fs::create_dir(&dir).map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
    super::children::own_dir(&dir);
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_private_dir_is_new_and_the_run_id_is_stable() {
        let (a, b) = (private_dir("test").unwrap(), private_dir("test").unwrap());
        assert_ne!(a, b);
        assert!(a.to_string_lossy().contains(run_id()) && run_id() == run_id());
        assert!(run_id().starts_with(&format!("{}-", std::process::id())));
        for dir in [a, b] {
            std::fs::remove_dir(&dir).unwrap();
            crate::real::children::disown_dir(&dir);
        }
    }
}
