//! Failure schedules: faults at given moments, written as JSON so that a run found by one seed
//! (or shrunk by proptest) can be kept and replayed as an explicit list.

use crate::queue::Micros;
use serde::{Deserialize, Serialize};
use zklab_model::{ClientId, FaultKind};

/// One fault at one moment on one client. Connection loss strikes the client's next request
/// after `at_ms`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimedFault {
    /// Virtual milliseconds since the run began.
    pub at_ms: u64,
    pub fault: FaultKind,
    pub client: ClientId,
}

impl TimedFault {
    pub fn at(&self) -> Micros {
        self.at_ms.saturating_mul(1000)
    }
}

/// A schedule file: `{"faults": [{"at_ms": 120, "fault": "expire", "client": 0}, ...]}`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Schedule {
    pub faults: Vec<TimedFault>,
    /// For a schedule kept because it breaks a recipe: the run it breaks and how.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub breaks: Option<Breaks>,
}

/// The run a kept schedule breaks: `zklab simulate <args> --schedule FILE` violates `property`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Breaks {
    pub args: Vec<String>,
    pub property: zklab_model::Property,
}

#[derive(Debug, thiserror::Error)]
pub enum ScheduleError {
    #[error("cannot read schedule {0}: {1}")]
    Io(String, std::io::Error),
    #[error("{0} is not a fault schedule: {1}")]
    Malformed(String, serde_json::Error),
    /// The same fault at the same moment on the same client twice: a copy-and-paste slip, never
    /// a plan (a fault strikes once).
    #[error("{0} lists {1} twice")]
    Duplicate(String, String),
}

impl Schedule {
    pub fn load(path: &std::path::Path) -> Result<Schedule, ScheduleError> {
        let name = path.display().to_string();
        // A FIFO or a device would block or never end: only a regular file is read.
        let regular = std::fs::metadata(path).and_then(|m| match m.is_file() {
            true => Ok(()),
            false => Err(std::io::Error::other("not a regular file")),
        });
        regular.map_err(|e| ScheduleError::Io(name.clone(), e))?;
        let text = std::fs::read_to_string(path).map_err(|e| ScheduleError::Io(name.clone(), e))?;
        let schedule: Schedule = serde_json::from_str(&text).map_err(|e| ScheduleError::Malformed(name.clone(), e))?;
        let mut seen = std::collections::BTreeSet::new();
        if let Some(f) = schedule.faults.iter().find(|f| !seen.insert(**f)) {
            let what = format!("{} on client {} at {} ms", f.fault, f.client, f.at_ms);
            return Err(ScheduleError::Duplicate(name, what));
        }
        Ok(schedule)
    }

    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).expect("schedules serialize");
        text.push('\n');
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fault_listed_twice_is_refused_and_the_same_fault_at_two_moments_is_not() {
        let dir = std::env::temp_dir().join(format!("zklab-schedule-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("s.json");
        let expire_at = |ms: u32| format!(r#"{{"at_ms": {ms}, "fault": "expire", "client": 0}}"#);
        let twice = format!(r#"{{"faults": [{}, {}]}}"#, expire_at(120), expire_at(120));
        std::fs::write(&file, twice).unwrap();
        let refused = Schedule::load(&file).unwrap_err().to_string();
        assert!(refused.contains("lists expire on client 0 at 120 ms twice"), "{refused}");
        let apart = format!(r#"{{"faults": [{}, {}]}}"#, expire_at(120), expire_at(900));
        std::fs::write(&file, apart).unwrap();
        assert_eq!(Schedule::load(&file).unwrap().faults.len(), 2);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
