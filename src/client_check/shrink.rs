//! A violating schedule made smaller before it is saved: cut where its violation first shows,
//! then with each fault taken out, then with runs of choices taken out (halving their length,
//! as delta debugging does). Every candidate is run with the real clients (`Guided`: a choice
//! not enabled in its turn is skipped) and kept only if it breaks the same property with fewer
//! faults, or as many faults and fewer choices. What is kept is the candidate's own run, cut
//! where its violation shows: a schedule the clients really took, never one written by hand.
//!
//! The real clients are programs with timers of their own, so a candidate may break the
//! property by the luck of one run. The caller runs the result once more, exactly
//! (`client_check::replay`), and says whether it showed the violation again.

use super::run::{self, RunError, RunResult, Setup};
use super::strategy::Guided;
use super::switchboard::Choice;
use std::path::Path;

/// The smallest violating run found, and the runs it took.
pub struct Shrunk {
    pub result: RunResult,
    pub runs: usize,
}

/// Makes `found` (a run that broke a property) smaller in at most `budget` runs; `progress` is
/// told the runs so far and the current choices and faults after each.
pub fn shrink(
    setup: &Setup,
    found: &RunResult,
    dir: &Path,
    budget: usize,
    progress: impl FnMut(usize, usize, usize),
) -> Result<Shrunk, RunError> {
    let Some(property) = found.findings.first().map(|f| f.property) else {
        return Ok(Shrunk { result: found.clone(), runs: 0 });
    };
    let mut best = cut(found, setup.clients);
    if !breaks(&best, property) {
        // A deadlock or an orphan shows only at the end: nothing to cut.
        best = found.clone();
    }
    let runner = run::Runner::new(setup, dir);
    let mut s = Shrinker { setup, runner, property, budget, runs: 0, best, progress };
    // Each fault out, the last first.
    let mut i = s.best.schedule.len();
    while i > 0 && s.runs < budget {
        i -= 1;
        if s.best.schedule.get(i).is_some_and(|c| c.is_fault()) {
            let mut candidate = s.best.schedule.clone();
            candidate.remove(i);
            s.attempt(candidate)?;
            i = i.min(s.best.schedule.len());
        }
    }
    // Runs of choices out, halving their length; a fault stays unless taking it out worked.
    let mut size = s.best.schedule.len() / 2;
    while size >= 1 && s.runs < budget {
        let mut start = 0;
        while start < s.best.schedule.len() && s.runs < budget {
            let end = (start + size).min(s.best.schedule.len());
            if s.best.schedule[start..end].iter().any(|c| c.is_fault()) {
                start = end;
                continue;
            }
            let mut candidate = s.best.schedule.clone();
            candidate.drain(start..end);
            if !s.attempt(candidate)? {
                start = end;
            }
        }
        size /= 2;
    }
    Ok(Shrunk { result: s.best, runs: s.runs })
}

struct Shrinker<'a, P> {
    setup: &'a Setup,
    runner: run::Runner<'a>,
    property: &'static str,
    budget: usize,
    runs: usize,
    best: RunResult,
    progress: P,
}

impl<P: FnMut(usize, usize, usize)> Shrinker<'_, P> {
    /// Runs `candidate`; keeps its run if it is smaller and breaks the property again.
    fn attempt(&mut self, candidate: Vec<Choice>) -> Result<bool, RunError> {
        debug_assert!(self.runs < self.budget);
        self.runs += 1;
        let r = self.runner.run(&mut Guided::new(candidate))?;
        let r = cut(&r, self.setup.clients);
        let kept = breaks(&r, self.property) && smaller(&r, &self.best);
        if kept {
            self.best = r;
        }
        (self.progress)(self.runs, self.best.schedule.len(), self.best.faults());
        Ok(kept)
    }
}

/// The run cut where its violation first shows.
fn cut(r: &RunResult, clients: usize) -> RunResult {
    match r.violation_step(clients) {
        Some(k) if k < r.schedule.len() => r.cut(k, clients),
        _ => r.clone(),
    }
}

fn breaks(r: &RunResult, property: &str) -> bool {
    r.findings.iter().any(|f| f.property == property)
}

/// Fewer faults, or as many and fewer choices.
fn smaller(a: &RunResult, b: &RunResult) -> bool {
    (a.faults(), a.schedule.len()) < (b.faults(), b.schedule.len())
}
