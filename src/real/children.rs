//! Nothing a run starts may outlive it, whatever signal ends it. Every process the real backend
//! starts (ZooKeeper's JVMs, a library's client processes, the log tool) is spawned here:
//!
//! - the kernel kills it when zklab dies (`PR_SET_PDEATHSIG`, SIGKILL): a second Ctrl-C's
//!   `exit(130)`, a SIGKILL, a panic that aborts all end the children with the process. The
//!   signal follows the thread that spawned, so children are spawned from the thread that runs
//!   the command, which lives as long as the process's work does;
//! - the children and the directories a run makes are filed too, so the second signal's quick
//!   exit kills the children first and then removes the directories (`quit_now`), as the
//!   ordinary tear-down (`Drop`) does.

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::Mutex;

/// The directories the run made and has not removed yet.
static DIRS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// The processes the run started. A reaped one may linger here, its pid perhaps another
/// process's by now: `quit_now` kills only a pid that is still this process's running child.
static PIDS: Mutex<Vec<u32>> = Mutex::new(Vec::new());

/// Spawns `command` as a child that dies with zklab.
pub fn spawn(command: &mut Command) -> std::io::Result<Child> {
    use std::os::unix::process::CommandExt;
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: between fork and exec only async-signal-safe calls are made (prctl, getppid,
    // _exit), touching no lock and allocating nothing.
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // zklab died before the line above: nobody would kill this child.
            if libc::getppid() != parent {
                libc::_exit(1);
            }
            Ok(())
        });
    }
    let child = command.spawn()?;
    PIDS.lock().unwrap_or_else(|e| e.into_inner()).push(child.id());
    Ok(child)
}

/// Files `dir` as the run's, to be removed if a second signal quits at once.
pub fn own_dir(dir: &Path) {
    DIRS.lock().unwrap_or_else(|e| e.into_inner()).push(dir.to_path_buf());
}

/// `dir` was removed (or kept on purpose) by the ordinary tear-down.
pub fn disown_dir(dir: &Path) {
    DIRS.lock().unwrap_or_else(|e| e.into_inner()).retain(|d| d != dir);
}

/// A second signal's quick exit: kills the run's children now (so none writes into a directory
/// being removed), then removes the run's directories (unless `ZKLAB_REAL_KEEP` says to keep
/// them).
pub fn quit_now() {
    if let Ok(pids) = PIDS.try_lock() {
        for &pid in pids.iter() {
            let pid = pid as libc::pid_t;
            // SAFETY: waitpid(2) and kill(2) touch no memory of ours. WNOHANG answers 0 only for
            // a child of this process that still runs (a pid reaped and reused by another
            // process is no child of ours: ECHILD), so only such a child is killed, then reaped
            // so that it is gone before its directory is removed.
            unsafe {
                if libc::waitpid(pid, std::ptr::null_mut(), libc::WNOHANG) == 0 {
                    libc::kill(pid, libc::SIGKILL);
                    libc::waitpid(pid, std::ptr::null_mut(), 0);
                }
            }
        }
    }
    if std::env::var_os("ZKLAB_REAL_KEEP").is_some() {
        return;
    }
    // try_lock: a signal that lands while the list is being changed leaves it rather than wait.
    if let Ok(dirs) = DIRS.try_lock() {
        for dir in dirs.iter() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}
