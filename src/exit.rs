//! The exit code every command ends with, decided by what it found. The reports decide it
//! themselves (`check::Report::exit`, a manifest's deviations, a simulation's runs), and the
//! command line only hands it to the shell.

use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Exit {
    /// 0: every property holds (every entry as expected, every recording matches).
    Passed,
    /// 1: a property is violated or a proof is vacuous (an entry deviates, a recording differs,
    /// a trace does not replay).
    Failed,
    /// 2: bad input, refused before any long work.
    BadInput,
    /// 3: a budget ran out, or Ctrl-C, before the answer.
    Unknown,
    /// 4: what the command needs from the machine could not be had (a ZooKeeper server that
    /// would not start, no Java): nothing was judged, and the input was not at fault.
    Environment,
}

impl Exit {
    /// The process's exit code.
    pub fn code(self) -> u8 {
        match self {
            Exit::Passed => 0,
            Exit::Failed => 1,
            Exit::BadInput => 2,
            Exit::Unknown => 3,
            Exit::Environment => 4,
        }
    }

    /// `Passed` when `ok`, else `Failed`.
    pub fn passed_if(ok: bool) -> Exit {
        if ok {
            Exit::Passed
        } else {
            Exit::Failed
        }
    }
}
