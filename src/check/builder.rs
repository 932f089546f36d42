//! Proving your own recipe in a `#[test]`:
//!
//! ```
//! use zklab::check::check;
//! use zklab_model::FaultKind;
//!
//! // Any `Recipe`; here the catalogue's standard lock, built for the lock path it is given.
//! let my_lock = |lock: &str| zklab_recipes::build("standard", lock).unwrap();
//! let checked = check(my_lock).clients(2).faults(&[FaultKind::Expire]).run();
//! checked.assert_proven();
//! ```
//!
//! The recipe is built once per client from the lock path (`.recipes(|i, lock| ...)` builds
//! client `i`'s, for a world of different recipes). A failed assertion prints the
//! counterexample as a timeline, and `Checked` prints as the command line's report does.

use super::explore::explore;
use super::options::Options;
use super::outcome::Outcome;
use super::properties::Kind;
use super::report::{growing_numbers_text, REPLAY_TEXT};
use super::search::Counterexample;
use super::verdict::{status_text, Status};
use crate::scenario::MAX_CLIENTS;
use std::time::Duration;
use zklab_model::{ClientBehaviour, FaultBudget, FaultKind, Property, Recipe, World, WorldConfig};

/// Starts a check of the recipe that `make` builds for a lock path.
pub fn check<R: Recipe>(make: impl Fn(&str) -> R + 'static) -> Builder<R> {
    Builder {
        make: Box::new(move |_, lock| make(lock)),
        clients: 2,
        config: WorldConfig::default(),
        options: Options::default(),
    }
}

/// Builds client `i`'s recipe for the lock path.
type Factory<R> = Box<dyn Fn(usize, &str) -> R>;

pub struct Builder<R> {
    make: Factory<R>,
    clients: usize,
    config: WorldConfig,
    options: Options,
}

impl<R: Recipe> Builder<R> {
    pub fn clients(mut self, clients: usize) -> Self {
        self.clients = clients;
        self
    }
    /// Each of `faults` may happen once per run.
    pub fn faults(mut self, faults: &[FaultKind]) -> Self {
        self.config.faults = FaultBudget::once(faults);
        self
    }
    /// `kind` may happen up to `times` times per run (0: never), the others as set before.
    pub fn fault(mut self, kind: FaultKind, times: u32) -> Self {
        self.config.faults.0[kind.index()] = times;
        self
    }
    /// Client `i` runs the recipe `make(i, lock)` builds: a world of different recipes, or of
    /// one recipe configured per client.
    pub fn recipes(mut self, make: impl Fn(usize, &str) -> R + 'static) -> Self {
        self.make = Box::new(make);
        self
    }
    /// Threads that expand states (the answer does not depend on it; default 2).
    pub fn threads(mut self, threads: usize) -> Self {
        self.options.threads = threads;
        self
    }
    /// Stop when memory use passes this many MiB (the answer is then unknown).
    pub fn max_memory(mut self, mib: u64) -> Self {
        self.options.max_memory_mib = Some(mib);
        self
    }
    pub fn rounds(mut self, rounds: u8) -> Self {
        self.config.rounds = rounds;
        self
    }
    pub fn client_behaviour(mut self, behaviour: ClientBehaviour) -> Self {
        self.config.client_behaviour = behaviour;
        self
    }
    pub fn lock_path(mut self, path: &str) -> Self {
        self.config.lock_path = path.to_string();
        self
    }
    pub fn first_sequence(mut self, first: i32) -> Self {
        self.config.first_sequence = first;
        self
    }
    pub fn max_states(mut self, states: usize) -> Self {
        self.options.max_states = states;
        self
    }
    /// Explore one state per symmetry class, if the recipe supports renaming (see
    /// `Recipe::renamed`); verdicts are the same, state counts smaller.
    pub fn symmetry(mut self) -> Self {
        self.options.symmetry = true;
        self
    }
    /// Stop after this long (the answer is then unknown).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.options.timeout = Some(timeout);
        self
    }
    /// Judge only `properties` of those that apply (the `reached:*` items are judged
    /// whatever this says); the rest are reported `not applicable` and `assert_proven` does
    /// not ask for them.
    pub fn properties(mut self, properties: &[Property]) -> Self {
        self.options.properties = Some(properties.to_vec());
        self
    }
    /// Judge every property, instead of stopping once the breadth-first level of the first
    /// violation is finished (`Options::stop_at_violation`): to assert what a broken recipe
    /// does not break, or a starving cycle behind an earlier violation.
    pub fn explore_everything(mut self) -> Self {
        self.options.stop_at_violation = false;
        self
    }

    /// The world the check starts from.
    pub fn world(&self) -> World<R> {
        assert!((1..=MAX_CLIENTS).contains(&self.clients), "clients must be between 1 and {MAX_CLIENTS}");
        assert!(self.config.rounds > 0, "rounds must be at least 1");
        let lock = &self.config.lock_path;
        let valid =
            zklab_model::path::validate(lock, false).is_ok() && lock != "/" && zklab_model::path::parent(lock) == "/";
        assert!(valid, "the lock path must be a top-level node such as /lock, got {lock:?}");
        assert!((1..=256).contains(&self.options.threads), "threads must be between 1 and 256");
        World::new(self.config.clone(), (0..self.clients).map(|i| (self.make)(i, lock)).collect())
    }

    /// Explores every interleaving and fault and judges every property.
    pub fn run(self) -> Checked<R> {
        let init = self.world();
        Checked { outcome: explore(init.clone(), &self.options), init }
    }
}

/// The result of a check, with assertions that explain themselves.
pub struct Checked<R> {
    pub outcome: Outcome,
    init: World<R>,
}

impl<R: Recipe> Checked<R> {
    pub fn status(&self, property: Property) -> Option<Status> {
        self.outcome.status(property)
    }

    pub fn counterexample(&self, property: Property) -> Option<&Counterexample> {
        self.outcome.verdicts.iter().find(|v| v.property == property)?.counterexample.as_ref()
    }

    /// The counterexample of `property` as a timeline.
    pub fn timeline(&self, property: Property) -> Option<String> {
        let cx = self.counterexample(property)?;
        crate::timeline::render_steps(self.init.clone(), &cx.steps, cx.cycle_start).ok()
    }

    /// Every property that applies holds and every claimed fault and race was reached;
    /// otherwise panics with the verdicts and the first counterexample. A property the recipe
    /// says does not apply (`Recipe::applies`), or that `.properties` left out, is not asked.
    pub fn assert_proven(&self) {
        let failing: Vec<_> = self
            .outcome
            .verdicts
            .iter()
            .filter(|v| !matches!(v.status, Status::Holds | Status::NotApplicable))
            .collect();
        if failing.is_empty() {
            let judged = self.outcome.verdicts.iter().any(|v| v.status == Status::Holds && v.kind() != Kind::Reached);
            assert!(judged, "not proven: no property applies");
            return;
        }
        let list: Vec<String> = failing.iter().map(|v| format!("{} {:?}", v.name(), v.status)).collect();
        let shown = failing.iter().find_map(|v| self.timeline(v.property)).unwrap_or_default();
        panic!("not proven: {}\n{shown}", list.join(", "));
    }

    /// `property` is violated; panics with the verdicts otherwise. Returns the counterexample.
    pub fn assert_violates(&self, property: Property) -> &Counterexample {
        match (self.status(property), self.counterexample(property)) {
            (Some(Status::Violated), Some(cx)) => cx,
            (Some(Status::Unknown), _) if self.outcome.stopped => panic!(
                "expected {property} to be violated, but the run stopped at another violation first; \
                 call .explore_everything() to judge every property"
            ),
            (status, _) => panic!("expected {property} to be violated, it is {status:?}"),
        }
    }
}

/// The report the command line prints: what was explored, each property's verdict, and the
/// first counterexample as a timeline.
impl<R: Recipe> std::fmt::Display for Checked<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let o = &self.outcome;
        let mut names: Vec<String> = self.init.clients.iter().map(|c| c.recipe.name()).collect();
        let clients = names.len();
        // One name for clients that all run one recipe, as the command line's header has it.
        names.dedup();
        let bounded = match (o.bounded, o.spent) {
            (false, _) => String::new(),
            (true, Some(spent)) => format!(" (BOUNDED: {})", spent.what_ran_out()),
            (true, None) => " (BOUNDED)".to_string(),
        };
        writeln!(
            f,
            "{} x{clients}: {} unique states, {} total, depth {}, {} ms{bounded}",
            names.join(","),
            o.unique_states,
            o.total_states,
            o.max_depth,
            o.elapsed_ms
        )?;
        for v in &o.verdicts {
            writeln!(f, "  {:<28} {}", v.name(), status_text(v.status, o.stopped, o.swarm.is_some()))?;
        }
        if o.renumbered_by_replay {
            writeln!(f, "  {}", REPLAY_TEXT)?;
        }
        if let Some(growing) = &o.growing_numbers {
            writeln!(f, "  {}", growing_numbers_text(growing))?;
        }
        let shown = o.verdicts.iter().find_map(|v| Some((v.name(), self.timeline(v.property)?)));
        if let Some((name, timeline)) = shown {
            writeln!(f, "\n{name} counterexample:\n{timeline}")?;
        }
        Ok(())
    }
}
