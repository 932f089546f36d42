//! Traces: a scenario, the steps taken, and the verdict they lead to. Replaying re-applies the
//! steps to a fresh world and must reproduce the verdict, so a trace is a proof that can be
//! re-checked anywhere.

use crate::scenario::{BadInput, Scenario};
use crate::user_files::{read_input, replaceable, Output};
use serde::{Deserialize, Serialize};
use std::path::Path;
use zklab_model::property::{herd, Kind};
use zklab_model::Property;

use zklab_model::ClientId;
use zklab_model::{Mode, Settle, Step, World};
use zklab_recipes::AnyRecipe;

pub const FORMAT: u32 = 1;

/// The latest step time a trace may give: a day of virtual time, far past any simulated run.
pub const MAX_TIME_US: u64 = 24 * 3600 * 1_000_000;

/// A way to show a trace (the text timeline, the Mermaid diagram).
pub type Renderer = fn(&Trace) -> Result<String, TraceError>;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Trace {
    pub format: u32,
    pub scenario: Scenario,
    /// The seed of the simulated run the steps come from (none: found by the checker).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    pub steps: Vec<Step>,
    /// The virtual time of each step in microseconds, for a simulated run's trace (empty for
    /// the checker's, whose steps have no time); shown on the HTML timeline's axis.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub times_us: Vec<u64>,
    pub verdict: TraceVerdict,
    pub summary: String,
    /// The program that registered a recipe of the scenario (`Scenario::registering_program`);
    /// none for the catalogue's recipes, which every `zklab` knows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceVerdict {
    /// The property the steps violate (by its name; an unknown name is refused on loading).
    pub property: Property,
    /// For a liveness cycle: the step index where the cycle starts (the state after the last
    /// step equals the state before this one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cycle_start: Option<usize>,
    /// Written by an older zklab for a simulated run that ended with someone waiting and no
    /// deadlock. Such a run is no violation (the lock may only have been slow), so it is read
    /// only to refuse the trace with that reason (`TraceError::Stalled`), and never written.
    #[serde(default, skip_serializing)]
    pub stalled: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error("cannot read {0}: {1}")]
    Io(String, std::io::Error),
    #[error("{0} is not a zklab trace: {1}")]
    Malformed(String, serde_json::Error),
    #[error("unsupported trace format {0} (this zklab reads format {FORMAT})")]
    Format(u32),
    #[error("bad scenario in trace: {0}")]
    Scenario(BadInput),
    #[error("step {0} ({1}) is not enabled in the replayed world")]
    NotEnabled(usize, Step),
    #[error("`{0}` is not a property a trace can violate")]
    NotViolable(Property),
    #[error("replay does not reproduce the verdict: {0}")]
    Diverged(String),
    #[error("the trace gives {0} step times for {1} steps")]
    Times(usize, usize),
    #[error("step {0}'s time ({1} µs) is {2}")]
    BadTime(usize, u64, &'static str),
    #[error("the trace's summary says {0:?}; its replay says {1:?}")]
    Summary(String, String),
    #[error("{0}")]
    TooLarge(String),
    #[error(
        "the trace is marked stalled: its run ended with a client still waiting but steps left to take, which is \
         no violation (a liveness violation is a deadlock or a fair cycle); zklab no longer replays such traces"
    )]
    Stalled,
}

/// What a simulated or real run left that its trace is made of.
pub struct RunEnd<'a> {
    pub seed: u64,
    pub steps: &'a [Step],
    pub times_us: &'a [u64],
    /// The world the run ended in.
    pub world: &'a World<AnyRecipe>,
    /// What the run said of its violation (empty: the trace says it).
    pub detail: &'a str,
}

impl Trace {
    /// The trace of a run that broke `property` at step `kept` (counted from 1): its steps up to
    /// there, in a world that allows exactly the faults the run used (so it replays as is). A
    /// transition's summary is its replay's, as the checker's; a safety or liveness violation's
    /// is the run's detail, else the end state's.
    pub fn of_run(scenario: &Scenario, run: RunEnd, property: Property, kept: usize) -> Trace {
        let kept = kept.min(run.steps.len());
        let mut replayable = scenario.clone();
        replayable.config.faults = zklab_model::FaultBudget(run.world.faults_used);
        let mut trace = Trace {
            format: FORMAT,
            scenario: replayable,
            seed: Some(run.seed),
            steps: run.steps[..kept].to_vec(),
            times_us: run.times_us[..kept.min(run.times_us.len())].to_vec(),
            verdict: TraceVerdict { property, cycle_start: None, stalled: false },
            summary: String::new(),
            program: scenario.registering_program(),
        };
        trace.summary = match (property.kind(), run.detail.is_empty()) {
            (Kind::Transition, _) => trace.replayed_summary().unwrap_or_else(|_| property.to_string()),
            (_, true) => summarize(property, run.world),
            (_, false) => run.detail.to_string(),
        };
        trace
    }

    pub fn load(path: &Path) -> Result<Trace, TraceError> {
        let name = path.display().to_string();
        let text = read_input(path).map_err(|e| TraceError::Io(name.clone(), e))?;
        let trace: Trace = serde_json::from_str(&text).map_err(|e| TraceError::Malformed(name, e))?;
        match (trace.validate(), &trace.program) {
            // A recipe this zklab does not know, registered by another program: say which.
            (Err(TraceError::Scenario(BadInput(why))), Some(program)) => Err(TraceError::Scenario(BadInput(format!(
                "{why}; this trace's recipe was registered by `{program}`: replay it there (`{program} replay {}`)",
                path.display()
            )))),
            (checked, _) => checked.map(|()| trace),
        }
    }

    /// What loading checks beyond the JSON's shape (also asked of a trace read inside another
    /// file, such as a shard report): the format, a trace no longer replayed (stalled), the
    /// scenario, and the step times.
    pub fn validate(&self) -> Result<(), TraceError> {
        if self.format != FORMAT {
            return Err(TraceError::Format(self.format));
        }
        if self.verdict.stalled {
            return Err(TraceError::Stalled);
        }
        let limit = if self.seed.is_some() { zklab_sim::MAX_CLIENTS } else { crate::scenario::MAX_CLIENTS };
        self.scenario.validate_with(limit).map_err(TraceError::Scenario)?;
        if !self.times_us.is_empty() && self.times_us.len() != self.steps.len() {
            return Err(TraceError::Times(self.times_us.len(), self.steps.len()));
        }
        // Virtual time only moves forward, and a simulated run ends long before u64::MAX µs
        // (half a million years): a time past a day of virtual time is no simulator's.
        for (i, pair) in self.times_us.windows(2).enumerate() {
            if pair[1] < pair[0] {
                return Err(TraceError::BadTime(i + 1, pair[1], "before the step ahead of it"));
            }
        }
        if let Some((i, &t)) = self.times_us.iter().enumerate().find(|(_, &t)| t > MAX_TIME_US) {
            return Err(TraceError::BadTime(i, t, "past a day of virtual time"));
        }
        Ok(())
    }

    /// The canonical text of the trace (stable field order, one step per line).
    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).expect("traces serialize");
        text.push('\n');
        text
    }

    /// Writes the trace to `file` as `to_json` gives it, streamed (a simulated run's trace can
    /// hold millions of steps: its text is never held whole), unless a file of another kind is
    /// there (`replaceable`).
    pub fn write(&self, file: &Path) -> std::io::Result<()> {
        use std::io::Write;
        replaceable(file, Output::Json).map_err(std::io::Error::other)?;
        let named = |e: std::io::Error| std::io::Error::new(e.kind(), format!("{}: {e}", file.display()));
        let mut out = std::io::BufWriter::new(std::fs::File::create(file).map_err(named)?);
        serde_json::to_writer_pretty(&mut out, self).map_err(std::io::Error::from).map_err(named)?;
        out.write_all(b"\n").and_then(|_| out.flush()).map_err(named)
    }

    /// The worlds along the trace: the initial one, then one after each step.
    pub fn worlds(&self) -> Result<Vec<World<AnyRecipe>>, TraceError> {
        let mut world = self.scenario.world();
        let mut worlds = vec![world.clone()];
        for (i, step) in self.steps.iter().enumerate() {
            world.apply(*step).map_err(|_| TraceError::NotEnabled(i, *step))?;
            worlds.push(world.clone());
        }
        Ok(worlds)
    }

    /// Re-applies the steps and checks that they lead to the verdict: a safety property holds
    /// until the last step and fails after it; a transition property holds of every step but
    /// the last and fails on the last; a deadlock ends with a client waiting and nothing
    /// but faults possible; a cycle of fault-free steps returns to the state where it started
    /// (up to renumbering), a client waits on it and never holds, and it is weakly fair: no
    /// fault-free step is enabled all along it and never taken.
    ///
    /// Then the trace's summary must be the one its replay gives (`replayed_summary`): a
    /// summary edited to tell another story is refused.
    pub fn replay(&self) -> Result<(), TraceError> {
        let replayed = self.replay_verdict()?;
        let agrees = match self.seed {
            // A simulated run's end says more than its last state (times, the last holder):
            // its summary must start with what the state says.
            Some(_) => self.summary.starts_with(&replayed),
            None => self.summary == replayed,
        };
        match agrees {
            true => Ok(()),
            false => Err(TraceError::Summary(self.summary.clone(), replayed)),
        }
    }

    /// The summary the trace's replay gives: what the checker writes for a counterexample, and
    /// for a simulated run's liveness or orphan verdict what its end names (the waiters, the
    /// orphaned nodes).
    pub fn replayed_summary(&self) -> Result<String, TraceError> {
        let mut world = self.scenario.world();
        let mut before = None;
        let mut cycle = Vec::new();
        for (i, step) in self.steps.iter().enumerate() {
            if self.verdict.property.kind() == Kind::Transition && i + 1 == self.steps.len() {
                before = Some(world.clone());
            }
            if self.verdict.cycle_start.is_some_and(|start| i >= start) {
                cycle.push(world.clone());
            }
            world.apply(*step).map_err(|_| TraceError::NotEnabled(i, *step))?;
        }
        Ok(self.summary_at(before.as_ref(), &world, &cycle))
    }

    /// The summary from the replayed worlds: the last one, the one before the last step (for a
    /// transition property) and those the cycle starts each of its steps from.
    fn summary_at(
        &self,
        before: Option<&World<AnyRecipe>>,
        last: &World<AnyRecipe>,
        cycle: &[World<AnyRecipe>],
    ) -> String {
        let property = self.verdict.property;
        match (before, self.verdict.cycle_start, self.seed) {
            (Some(before), _, _) => summarize_step(property, before, *self.steps.last().expect("a step"), last),
            (_, Some(_), _) => summarize_cycle(&starving(cycle)),
            (_, None, Some(_)) if property == Property::EventualAcquire => zklab_sim::waiters(last),
            (_, None, Some(_)) if property == Property::NoOrphans => zklab_sim::orphaned(last),
            _ => summarize(property, last),
        }
    }

    /// Checks the verdict (see `replay`) and returns the replayed summary, from the same walk.
    fn replay_verdict(&self) -> Result<String, TraceError> {
        let property = self.verdict.property;
        if property.kind() == Kind::Safety {
            // One world at a time: a simulated trace may have thousands of clients.
            let mut world = self.scenario.world();
            for (i, step) in self.steps.iter().enumerate() {
                if !property.holds(&world) {
                    return Err(TraceError::Diverged(format!("{property} already fails before step {i}")));
                }
                world.apply(*step).map_err(|_| TraceError::NotEnabled(i, *step))?;
            }
            if property.holds(&world) {
                return Err(TraceError::Diverged(format!("{property} holds at the end")));
            }
            return Ok(self.summary_at(None, &world, &[]));
        }
        if property.kind() == Kind::Transition {
            let mut world = self.scenario.world();
            let mut before = world.clone();
            for (i, step) in self.steps.iter().enumerate() {
                before = world.clone();
                world.apply(*step).map_err(|_| TraceError::NotEnabled(i, *step))?;
                let allowed = property.allows(&before, *step, &world);
                match (allowed, i + 1 == self.steps.len()) {
                    (false, false) => {
                        return Err(TraceError::Diverged(format!("{property} already fails at step {i}")))
                    }
                    (true, true) => return Err(TraceError::Diverged(format!("{property} holds of the last step"))),
                    _ => {}
                }
            }
            return match self.steps.is_empty() {
                true => Err(TraceError::Diverged(format!("{property} needs a step to fail on"))),
                false => Ok(self.summary_at(Some(&before), &world, &[])),
            };
        }
        if property.kind() != Kind::Liveness {
            return Err(TraceError::NotViolable(property));
        }
        if self.verdict.stalled {
            return Err(TraceError::Stalled);
        }
        if self.verdict.cycle_start.is_none() {
            // A deadlock, and nothing less: a client waits and nothing but a fault can happen.
            // A run cut short with someone waiting (a prefix of a correct run) is refused.
            let mut world = self.scenario.world();
            for (i, step) in self.steps.iter().enumerate() {
                world.apply(*step).map_err(|_| TraceError::NotEnabled(i, *step))?;
            }
            return match world.deadlocked() {
                true => Ok(self.summary_at(None, &world, &[])),
                false if world.waiting().is_empty() => {
                    Err(TraceError::Diverged("no client waits at the end".to_string()))
                }
                false => Err(TraceError::Diverged(
                    "the last state is not a deadlock: a client waits, but steps other than faults remain".to_string(),
                )),
            };
        }
        let worlds = self.worlds()?;
        let last = worlds.last().expect("at least the initial world");
        match self.verdict.cycle_start {
            None if last.deadlocked() => Ok(self.summary_at(None, last, &[])),
            None => Err(TraceError::Diverged("the last state is not a deadlock".to_string())),
            Some(start) => {
                let cycle = worlds
                    .get(start..)
                    .filter(|c| c.len() > 1)
                    .ok_or_else(|| TraceError::Diverged(format!("cycle start {start} is not inside the trace")))?;
                // States are compared as the checker keeps them (see `World::settle`): a cycle
                // may return to its start with its sequence numbers and zxids moved on.
                let settled = |w: &World<AnyRecipe>| {
                    let mut w = w.clone();
                    w.settle(Settle::Renumbering).ok();
                    w
                };
                if settled(&cycle[0]) != settled(last) {
                    return Err(TraceError::Diverged("the cycle does not return to its start".to_string()));
                }
                let steps = &self.steps[start..];
                if let Some(fault) = steps.iter().find(|s| s.is_fault()) {
                    return Err(TraceError::Diverged(format!("the cycle injects a fault ({fault})")));
                }
                if starving(cycle).is_empty() {
                    return Err(TraceError::Diverged("no client waits on the cycle and never holds".to_string()));
                }
                match neglected(cycle, steps).first() {
                    Some(step) => Err(TraceError::Diverged(format!(
                        "the cycle is not weakly fair: `{step}` is enabled all along it and never taken"
                    ))),
                    // The worlds each of the cycle's steps starts from: its last world is its first.
                    None => Ok(self.summary_at(None, last, &cycle[..cycle.len() - 1])),
                }
            }
        }
    }
}

/// One line saying what the last step of a counterexample to a transition property did, from
/// the worlds before and after it.
pub fn summarize_step(property: Property, before: &World<AnyRecipe>, step: Step, after: &World<AnyRecipe>) -> String {
    match property {
        Property::NoHerd => {
            let herd = herd(before, step, after);
            // A simulated herd can wake thousands: the first ten are named, the rest counted.
            let mut woken: Vec<String> = herd.iter().take(10).map(|c| format!("c{c}")).collect();
            if herd.len() > woken.len() {
                woken.push(format!("{} more", herd.len() - woken.len()));
            }
            let names = match woken.split_last() {
                Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
                _ => woken.join(""),
            };
            let all = if herd.len() == 2 { "both" } else { "all" };
            format!("one step wakes {names}, {all} waiting to hold the lock alone")
        }
        other => other.name().to_string(),
    }
}

fn verb(count: usize, one: &'static str, many: &'static str) -> &'static str {
    if count == 1 {
        one
    } else {
        many
    }
}

/// Whether any of the holders `ids` holds in a mode other than a mutex's.
fn shares(world: &World<AnyRecipe>, ids: &[ClientId]) -> bool {
    world.modes(ids).iter().any(|m| *m != Mode::Exclusive)
}

/// The holders with the mode each holds in: `c0 (write) and c1 (read)`.
fn held(world: &World<AnyRecipe>, ids: Vec<ClientId>) -> String {
    let modes = world.modes(&ids);
    ids.iter().zip(modes).map(|(c, m)| format!("c{c} ({})", m.label())).collect::<Vec<_>>().join(" and ")
}

/// The clients that starve on `cycle` (its worlds, the last equal to the first up to
/// renumbering): each waits in some world of it and holds in none.
pub fn starving(cycle: &[World<AnyRecipe>]) -> Vec<ClientId> {
    let clients = cycle.first().map_or(0, |w| w.clients.len()) as ClientId;
    (0..clients)
        .filter(|&c| {
            let c = c as usize;
            cycle.iter().any(|w| w.clients[c].is_waiting()) && cycle.iter().all(|w| !w.clients[c].holds())
        })
        .collect()
}

/// The fault-free steps enabled in every world of `cycle` that its `steps` never take: a cycle
/// with one is not weakly fair, so no fair run goes round it forever.
pub fn neglected(cycle: &[World<AnyRecipe>], steps: &[Step]) -> Vec<Step> {
    let Some((first, rest)) = cycle.split_first() else { return Vec::new() };
    first
        .steps()
        .into_iter()
        .filter(|s| !s.is_fault() && !steps.contains(s) && rest.iter().all(|w| w.enabled(*s)))
        .collect()
}

/// One line saying who starves on a liveness cycle.
pub fn summarize_cycle(starving: &[ClientId]) -> String {
    let names = starving.iter().map(|c| format!("c{c}")).collect::<Vec<_>>().join(" and ");
    format!(
        "{names} {} again and again in a fair cycle of steps and never {}",
        verb(starving.len(), "waits", "wait"),
        verb(starving.len(), "holds", "hold")
    )
}

/// One line saying what went wrong at the end of a counterexample (a deadlock, for
/// `eventual_acquire`; a cycle is told by `summarize_cycle`).
pub fn summarize(property: Property, world: &World<AnyRecipe>) -> String {
    let names = |ids: Vec<ClientId>| ids.iter().map(|c| format!("c{c}")).collect::<Vec<_>>().join(" and ");
    match property {
        Property::BeliefExclusion if shares(world, &world.believers()) => {
            format!("{} believe they hold the lock together", held(world, world.believers()))
        }
        Property::BeliefExclusion => format!("{} both believe they hold the lock", names(world.believers())),
        Property::FencedExclusion => "the resource accepted a write from an older holder after a newer one".to_string(),
        Property::ZkExclusion if shares(world, &world.zk_holders()) => {
            format!("{} hold the lock together with live nodes", held(world, world.zk_holders()))
        }
        Property::ZkExclusion => format!("{} hold the lock with live nodes", names(world.zk_holders())),
        Property::NoOrphans => {
            format!("nothing can happen, yet {} is owned by no client that knows it", world.orphans().join(", "))
        }
        Property::StaleHolder => {
            let stale = world.stale_holders_among(&world.believers());
            format!(
                "{} {} it holds, but its session or its node is gone",
                names(stale.clone()),
                verb(stale.len(), "believes", "believe")
            )
        }
        Property::FencingAvailable => {
            "the resource refused the holder ZooKeeper agrees with: its token is below one accepted before".to_string()
        }
        Property::BarrierWaits => format!(
            "{} passed the barrier before all its parties entered (entered: {})",
            names(world.believers()),
            names((0..world.clients.len() as ClientId).filter(|&i| world.entered(i)).collect())
        ),
        Property::TakenOnce => "an item of the queue was processed twice".to_string(),
        Property::EventualAcquire => format!(
            "{} {} and nothing but a fault can happen",
            names(world.waiting()),
            verb(world.waiting().len(), "waits", "wait")
        ),
        other => other.name().to_string(),
    }
}
