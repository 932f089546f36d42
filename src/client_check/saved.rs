//! A schedule saved to a file: what ran (the library or the command, the clients, their task,
//! the fault kinds), every choice in order, what each did in words, the history the clients
//! told, and what it broke. `zklab client-check --schedule FILE` runs it again against the same
//! clients; `zklab replay FILE` does the same and `--html` draws it. The file is plain JSON a
//! user can read, trim by hand and run again.

use super::clients::{ClientProgram, Task};
use super::run::{End, RunResult, Setup};
use super::switchboard::{Choice, Faults};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The `kind` every saved schedule carries, which tells it from a checker's trace.
pub const KIND: &str = "zklab client-check schedule";
/// The file format's version.
pub const FORMAT: u32 = 1;

/// The clients' program as saved: a built-in library by name, or the user's command.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum SavedProgram {
    Library(String),
    Cmd(String),
}

/// A property the run broke, with what shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SavedFinding {
    pub property: String,
    pub detail: String,
}

/// How the schedule was made smaller than the random one that found it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Shrinking {
    /// The found schedule's choices and faults.
    pub from_steps: usize,
    pub from_faults: usize,
    /// Runs tried while shrinking.
    pub runs: usize,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SavedSchedule {
    pub kind: String,
    pub format: u32,
    pub program: SavedProgram,
    pub clients: usize,
    pub lock_path: String,
    pub session_timeout_ms: u32,
    pub rounds: u32,
    pub hold_ms: i64,
    /// The lock's parent node was made before the clients started (`--lock-made`); written
    /// only when it was, so a file from before the option reads as it did.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub lock_made: bool,
    pub faults: Faults,
    /// The seed of the random schedule it was found with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shrunk: Option<Shrinking>,
    /// The choices, in order: what a run of this file takes.
    pub schedule: Vec<Choice>,
    /// What each choice did, in words (read only by people and pages).
    pub steps: Vec<String>,
    /// The history the clients told: `STEP cCLIENT WHAT`, each line heard after STEP choices.
    pub history: Vec<String>,
    pub end: End,
    pub findings: Vec<SavedFinding>,
}

impl SavedSchedule {
    /// The run `result` of `setup`, found from `seed`.
    pub fn of(setup: &Setup, result: &RunResult, seed: Option<u64>, shrunk: Option<Shrinking>) -> Self {
        SavedSchedule {
            kind: KIND.into(),
            format: FORMAT,
            program: match &setup.program {
                ClientProgram::Command(cmd) => SavedProgram::Cmd(cmd.clone()),
                library => SavedProgram::Library(library.name()),
            },
            clients: setup.clients,
            lock_path: setup.task.lock_path.clone(),
            session_timeout_ms: setup.task.session_timeout_ms,
            rounds: setup.task.rounds,
            hold_ms: setup.task.hold_ms,
            lock_made: setup.task.lock_made,
            faults: setup.faults,
            seed,
            shrunk,
            schedule: result.schedule.clone(),
            steps: result.steps.clone(),
            history: result.story().iter().map(|(step, c, said)| format!("{step} c{c} {said}")).collect(),
            end: result.end.clone(),
            findings: result
                .findings
                .iter()
                .map(|f| SavedFinding { property: f.property.into(), detail: f.detail.clone() })
                .collect(),
        }
    }

    /// Whether the file at `path` says it is a saved schedule (its `kind`), without judging
    /// the rest: how `zklab replay` tells one from a checker's trace.
    pub fn is_one(path: &Path) -> bool {
        #[derive(Deserialize)]
        struct Kind {
            kind: Option<String>,
        }
        crate::user_files::read_input(path)
            .ok()
            .and_then(|text| serde_json::from_str::<Kind>(&text).ok())
            .is_some_and(|k| k.kind.as_deref() == Some(KIND))
    }

    /// Reads and checks a saved schedule: every error is one line naming the file.
    pub fn load(path: &Path) -> Result<Self, String> {
        let at = path.display();
        let text = crate::user_files::read_input(path).map_err(|e| format!("cannot read {at}: {e}"))?;
        let saved: SavedSchedule =
            serde_json::from_str(&text).map_err(|e| format!("{at} is not a client-check schedule: {e}"))?;
        saved.check().map_err(|why| format!("{at}: {why}"))?;
        Ok(saved)
    }

    fn check(&self) -> Result<(), String> {
        if self.kind != KIND {
            return Err(format!("kind is `{}`, not `{KIND}`", self.kind));
        }
        if self.format != FORMAT {
            return Err(format!("format {} is not {FORMAT}, the one this zklab reads", self.format));
        }
        self.program()?;
        if !(1..=16).contains(&self.clients) {
            return Err(format!("{} clients: 1 to 16", self.clients));
        }
        if let Some(c) = self.schedule.iter().find(|c| c.client() >= self.clients) {
            return Err(format!("choice {c:?} names a client beyond the {} clients", self.clients));
        }
        if let Some(c) = self.schedule.iter().find(|c| !c.allowed_by(self.faults)) {
            return Err(format!("choice {c:?} is a fault the schedule's `faults` do not allow"));
        }
        zklab_model::path::validate(&self.lock_path, false)
            .map_err(|e| format!("lock_path `{}` is not a ZooKeeper path: {e}", self.lock_path))?;
        if !(1..=100).contains(&self.rounds) {
            return Err(format!("{} rounds: 1 to 100", self.rounds));
        }
        if self.session_timeout_ms == 0 || self.session_timeout_ms > 3_600_000 {
            return Err(format!("session_timeout_ms {}: 1 to 3,600,000", self.session_timeout_ms));
        }
        Ok(())
    }

    /// The clients' program; an unknown library is refused.
    pub fn program(&self) -> Result<ClientProgram, String> {
        match &self.program {
            SavedProgram::Library(name) => ClientProgram::library(name),
            SavedProgram::Cmd(cmd) if cmd.trim().is_empty() => Err("the command is empty".into()),
            SavedProgram::Cmd(cmd) => Ok(ClientProgram::Command(cmd.clone())),
        }
    }

    /// The setup that runs this schedule again.
    pub fn setup(&self) -> Result<Setup, String> {
        let top_level = self.lock_path.len() > 1 && self.lock_path.rfind('/') == Some(0);
        if self.lock_made && !top_level {
            return Err(format!("lock_made needs a top-level lock path, not {:?}", self.lock_path));
        }
        let task = Task {
            lock_path: self.lock_path.clone(),
            session_timeout_ms: self.session_timeout_ms,
            rounds: self.rounds,
            hold_ms: self.hold_ms,
            lock_made: self.lock_made,
        };
        Ok(Setup::new(self.program()?, self.clients, task, self.faults, self.schedule.len() + 1))
    }

    /// The faults among its choices.
    pub fn faults(&self) -> usize {
        self.schedule.iter().filter(|c| c.is_fault()).count()
    }

    /// The first property broken, if any.
    pub fn property(&self) -> Option<&str> {
        self.findings.first().map(|f| f.property.as_str())
    }

    /// Writes it as pretty JSON (replacing only a JSON file).
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        let text = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        crate::user_files::write_output(path, &(text + "\n"), crate::user_files::Output::Json)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> SavedSchedule {
        SavedSchedule {
            kind: KIND.into(),
            format: FORMAT,
            program: SavedProgram::Library("kazoo".into()),
            clients: 2,
            lock_path: "/lock".into(),
            session_timeout_ms: 10_000,
            rounds: 1,
            hold_ms: -1,
            lock_made: false,
            faults: Faults { expire: true, ..Faults::default() },
            seed: Some(11),
            shrunk: None,
            schedule: vec![Choice::Apply(0), Choice::Deliver(0), Choice::Expire(0), Choice::Apply(1)],
            steps: vec![
                "c0: create -e -s /lock/x- applied".into(),
                "c0 hears create: x-0000000000".into(),
                "c0: session expired by the server".into(),
                "c1: create -e -s /lock/y- applied".into(),
            ],
            history: vec!["0 c0 acquiring".into(), "2 c0 acquired 0".into(), "4 c1 acquired 1".into()],
            end: End::Cut,
            findings: vec![SavedFinding { property: "belief_exclusion".into(), detail: "c1 acquired".into() }],
        }
    }

    fn file(name: &str) -> std::path::PathBuf {
        std::env::temp_dir().join(format!("zklab-saved-{name}-{}.json", std::process::id()))
    }

    #[test]
    fn a_saved_schedule_reads_back_as_written_and_gives_its_setup() {
        let path = file("round-trip");
        let saved = sample();
        saved.write(&path).unwrap();
        assert!(SavedSchedule::is_one(&path));
        let back = SavedSchedule::load(&path).unwrap();
        assert_eq!(back, saved);
        let setup = back.setup().unwrap();
        assert_eq!((setup.clients, setup.program.clone(), setup.faults), (2, ClientProgram::Kazoo, saved.faults));
        assert!(setup.max_steps > saved.schedule.len(), "a replay is not cut short by the step bound");
        std::fs::remove_file(&path).ok();
    }

    #[test]
    fn a_schedule_that_cannot_be_run_as_written_is_refused_in_one_line() {
        type Breaks = fn(&mut SavedSchedule);
        let cases: [(&str, Breaks, &str); 6] = [
            ("client", |s| s.schedule.push(Choice::Apply(5)), "beyond the 2 clients"),
            ("fault", |s| s.faults.expire = false, "do not allow"),
            ("library", |s| s.program = SavedProgram::Library("nope".into()), "unknown library `nope`"),
            ("path", |s| s.lock_path = "lock".into(), "not a ZooKeeper path"),
            ("format", |s| s.format = 9, "format 9"),
            ("kind", |s| s.kind = "trace".into(), "kind is `trace`"),
        ];
        for (name, break_it, says) in cases {
            let path = file(name);
            let mut saved = sample();
            break_it(&mut saved);
            saved.write(&path).unwrap();
            let why = SavedSchedule::load(&path).unwrap_err();
            assert!(why.contains(says) && !why.contains('\n'), "{name}: {why}");
            std::fs::remove_file(&path).ok();
        }
        let path = file("not-one");
        std::fs::write(&path, r#"{"format": 1, "steps": []}"#).unwrap();
        assert!(!SavedSchedule::is_one(&path), "a checker's trace is not taken for a schedule");
        std::fs::remove_file(&path).ok();
    }

    #[test]
    fn its_page_has_a_row_per_choice_with_the_fault_and_the_violation_marked() {
        let page = super::super::page::render(&sample(), "s.json");
        assert!(page.contains("VIOLATED belief_exclusion: c1 acquired"));
        assert_eq!(page.matches("<td class=\"step\">").count(), 5, "the connecting row and four choices");
        assert_eq!(page.matches("<tr class=\"fault\">").count(), 1, "the expiry, and only it, is a fault");
        assert_eq!(page.matches(" shows\"").count(), 1, "the last row is where it shows");
        assert!(page.contains("<span class=\"said-acquired\">acquired 1</span>"));
        assert!(page.contains("client-check --schedule s.json"));
        assert_eq!(page, super::super::page::render(&sample(), "s.json"), "the same bytes every time");
    }
}
