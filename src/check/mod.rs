//! `zklab check`: prove or refute a scenario. The breadth-first graph pass (on all threads)
//! checks the safety properties in every state, the transition properties on every step and the
//! reachability of each fault and race, supplies the shortest counterexamples and judges
//! liveness on the whole graph. Once the graph pass is complete every property is decided;
//! `--cross-check` then has stateright explore the same model for a second opinion.

pub mod bfs;
mod builder;
mod chunked;
pub mod cross_check;
mod expand;
mod fingerprints;
mod graph;
pub mod index;
mod intern;
pub mod liveness;
mod pipeline;
pub mod properties;
pub mod search;
pub mod stateright_adapter;
pub mod swarm;
mod transitions;

pub use builder::{check, Builder, Checked};

pub use crate::budget::default_max_memory_mib;
use crate::exit::Exit;
use crate::scenario::{Scenario, MAX_CLIENTS};
use crate::trace::{Trace, TraceVerdict, FORMAT};
use cross_check::CrossCheck;
use liveness::Liveness;
use properties::{Kind, Property};
use search::{Budget, Counterexample, Explored};
use serde::Serialize;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};
use zklab_model::{Recipe, World};

#[derive(Clone, Debug)]
pub struct Options {
    pub threads: usize,
    pub max_states: usize,
    pub timeout: Option<Duration>,
    /// Stop when the process's resident memory passes this many MiB.
    pub max_memory_mib: Option<u64>,
    /// Where to say how far the search got (at most once a second); none: say nothing.
    pub progress: Option<crate::progress::Progress>,
    /// Explore one state per symmetry class (clients running the same recipe are
    /// interchangeable), where the recipe supports it. State counts are then of classes.
    pub symmetry: bool,
    /// Take a client's invisible local step alone where there is one (see
    /// `World::local_step`); a violation or a cycle is then judged again without it.
    pub partial_order: bool,
    /// After a complete run, have stateright explore the same model and compare.
    pub cross_check: bool,
    /// Settle each state before keeping it (see `World::settle`). Off only to count states as
    /// `World::apply` leaves them, as the reference checker in the tests does.
    pub settle: bool,
    /// Stop once the breadth-first level in which a safety or transition property is first
    /// violated, or a waiting client first deadlocks, is finished, as Spin and TLC do: those
    /// counterexamples are as short as a complete run's (see docs/reference.md), and every
    /// property not decided by then is unknown, starving cycles included (they need the whole
    /// graph). Off (`--continue`) to judge every property and count every state; a stopped run
    /// is never cross-checked (`cross_check` needs a complete one).
    pub stop_at_violation: bool,
    /// Instead of the exhaustive search, a swarm of seeded random walks (see `swarm`): always
    /// bounded, never "holds".
    pub swarm: Option<Walks>,
    /// A flag another thread may raise (the CLI's Ctrl-C handler) to stop the run as a spent
    /// budget stops it: bounded, with what it found so far.
    pub interrupt: Option<&'static AtomicBool>,
    /// Judge only these of the properties that apply (`--properties`); none: every one. The
    /// `reached:*` items are judged whatever this says: a proof that never reaches its faults
    /// and races is vacuous however few properties it judges. The rest are reported
    /// `not applicable`.
    pub properties: Option<Vec<Property>>,
}

/// A swarm's walks: how many, how long at most, and the seed of their streams.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Walks {
    /// The first walk's number: 0, or where a shard's part begins (`--shard`).
    pub first: u64,
    pub walks: u64,
    pub depth: usize,
    pub seed: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            threads: 2,
            max_states: 50_000_000,
            timeout: None,
            max_memory_mib: default_max_memory_mib(),
            progress: None,
            symmetry: false,
            partial_order: true,
            cross_check: false,
            settle: true,
            stop_at_violation: true,
            swarm: None,
            interrupt: None,
            properties: None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Holds,
    Violated,
    /// A `reached:*` property never happened in a complete exploration: the proof is vacuous.
    Vacuous,
    /// A budget ran out before the answer.
    Unknown,
    /// Not judged: the recipe says the property says nothing about it (`Recipe::applies`), or
    /// the run was narrowed to other properties (`Options::properties`). Never a pass.
    NotApplicable,
}

#[derive(Clone, Debug, Serialize)]
pub struct PropertyReport {
    #[serde(skip)]
    pub property: Property,
    /// The property's name, as files and the command line write it.
    pub name: &'static str,
    pub kind: Kind,
    pub status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace_file: Option<String>,
    #[serde(skip)]
    pub trace: Option<Trace>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub recipe: String,
    pub clients: usize,
    pub faults: Vec<String>,
    pub client_behaviour: zklab_model::ClientBehaviour,
    pub rounds: u8,
    pub unique_states: usize,
    pub total_states: usize,
    pub max_depth: usize,
    pub elapsed_ms: u128,
    /// A budget (states or time) ran out.
    pub bounded: bool,
    /// The run was stopped by Ctrl-C (`bounded_by` says so too).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// Which budget ran out, for a bounded exhaustive run: states, time, memory or interrupted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bounded_by: Option<search::Spent>,
    /// The run stopped after the breadth-first level of its first violation (see
    /// `Options::stop_at_violation`): properties it had not decided are unknown.
    pub stopped_at_violation: bool,
    /// States were counted one per symmetry class.
    pub symmetry: bool,
    /// States were counted in the graph reduced by partial order.
    pub partial_order: bool,
    /// An upper bound on the probability that two distinct states, or two distinct parts of
    /// states, were taken for one by their 128-bit digests (see `index::collision_probability`).
    pub fingerprint_collision_probability: f64,
    /// `--symmetry` was refused (why): the recipe's renaming does not commute with its steps.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub symmetry_refused: Option<String>,
    /// Renumbering was refused (why): the recipe's future depends on more than the order of
    /// its numbers, so the run was judged without it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub renumbering_refused: Option<String>,
    /// The recipe writes no renumbering and was renumbered by replay, its claim checked on the
    /// explored states (see `zklab_model::world::replay`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub renumbered_by_replay: bool,
    /// Peak resident memory of the process, in KiB (Linux only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_rss_kib: Option<u64>,
    /// Peak resident memory over the states stored (`unique_states`): what a stored state
    /// costs, start-up and search structures included (the figure Spin's and TLC's reports
    /// compare with).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes_per_state: Option<u64>,
    pub properties: Vec<PropertyReport>,
    /// stateright's second opinion (`--cross-check`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cross_check: Option<CrossCheck>,
    /// What a swarm of random walks covered (`--swarm`), instead of an exhaustive search.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub swarm: Option<swarm::SwarmCoverage>,
    /// A bounded run that kept its numbers as they are: how far they grew, why, and what to do.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub growing_numbers: Option<GrowingNumbers>,
}

impl Report {
    pub fn status(&self, property: Property) -> Option<Status> {
        self.properties.iter().find(|p| p.property == property).map(|p| p.status)
    }

    /// Passed: everything holds; failed: a property is violated, the run is vacuous or
    /// stateright disagrees; unknown: a budget ran out (before the answer, or before
    /// stateright's).
    pub fn exit(&self) -> Exit {
        let any = |s: Status| self.properties.iter().any(|p| p.status == s);
        let disagrees = self.cross_check.as_ref().is_some_and(|c| !c.disagreements.is_empty());
        let unfinished = self.cross_check.as_ref().is_some_and(|c| !c.complete);
        if any(Status::Violated) || any(Status::Vacuous) || disagrees {
            Exit::Failed
        } else if any(Status::Unknown) || unfinished {
            Exit::Unknown
        } else {
            Exit::Passed
        }
    }
}

/// A verdict in words, as the reports print it: why an unknown is unknown (`stopped`: the run
/// stopped at the first violation; `swarm`: random walks cannot tell).
pub fn status_text(status: Status, stopped: bool, swarm: bool) -> &'static str {
    match status {
        Status::Holds => "holds",
        Status::Violated => "VIOLATED",
        Status::Vacuous => "VACUOUS (never reached)",
        Status::Unknown if stopped => "unknown (stopped at the first violation)",
        Status::Unknown if swarm => "unknown (random walks cannot tell)",
        Status::Unknown => "unknown (budget ran out)",
        Status::NotApplicable => "not applicable",
    }
}

/// What a report says of a run that renumbered its recipe by replay.
pub const REPLAY_TEXT: &str = "renumbered by replay: the recipe writes no renumbering, so each state's recipes \
    were rebuilt from the inputs they were handed, with sequence numbers and zxids ranked (checked as a claim on \
    the explored states); --symmetry is not combined with it";

/// What a report says of a bounded run that kept its numbers (see `GrowingNumbers`).
pub fn growing_numbers_text(g: &GrowingNumbers) -> String {
    if g.by_replay {
        return format!(
            "sequence numbers and zxids are renumbered by replay, but numbers the recipe makes itself (a counter \
             or uuid in its node names) are kept as they are, because {}: a recipe that makes new ones again and \
             again makes a new state with each, so the run may never end (the last state met was at depth {}); {}",
            g.kept_because, g.depth, g.remedy
        );
    }
    format!(
        "numbers are kept as they are, because {}: by the last state met (depth {}) the lock's counter was at {} \
         and the zxid at {}, and a recipe that creates nodes again and again makes a new state with every new \
         number, so the run may never end; {}",
        g.kept_because, g.depth, g.sequence, g.zxid, g.remedy
    )
}

/// One progress line: states, unique states, rate and depth.
fn progress_line(progress: Explored, started: Instant) -> String {
    let secs = started.elapsed().as_secs_f64().max(0.001);
    format!(
        "{:>6.1}s  {} states, {} unique, depth {} | {:.0} states/s",
        secs,
        progress.total,
        progress.unique,
        progress.depth,
        progress.total as f64 / secs,
    )
}

/// The verdict on one property, with a counterexample when violated.
#[derive(Clone, Debug)]
pub struct Verdict {
    pub property: Property,
    pub status: Status,
    pub counterexample: Option<Counterexample>,
}

impl Verdict {
    pub fn name(&self) -> &'static str {
        self.property.name()
    }

    pub fn kind(&self) -> Kind {
        self.property.kind()
    }
}

/// What exploring a world found, for any recipe type.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub unique_states: usize,
    pub total_states: usize,
    pub max_depth: usize,
    pub elapsed_ms: u128,
    pub bounded: bool,
    /// Which budget ran out, if one did (see `Budget::spent`; a swarm is bounded by its walks
    /// whether or not one did).
    pub spent: Option<search::Spent>,
    /// Stopped after the level of the first violation (`Options::stop_at_violation`).
    pub stopped: bool,
    /// Explored with symmetry reduction.
    pub symmetric: bool,
    /// The counts are of the graph reduced by partial order (see `Options::partial_order`).
    pub partial_order: bool,
    /// An upper bound on the chance that two distinct states, or two distinct parts of states,
    /// were taken for one (see `index::collision_probability`).
    pub collision_probability: f64,
    /// `symmetry` was asked for and refused: renaming the clients did not commute with a step
    /// in an explored state (why); the run was judged without it.
    pub symmetry_refused: Option<String>,
    /// Renumbering was found unsound for the recipe: a state's future depended on more than the
    /// order of its numbers (why); the run was judged without it.
    pub renumbering_refused: Option<String>,
    /// The recipe writes no renumbering and was renumbered by replay (see
    /// `zklab_model::world::replay`), its claim checked on the explored states.
    pub renumbered_by_replay: bool,
    pub verdicts: Vec<Verdict>,
    /// stateright's second opinion, when asked for and the run was complete.
    pub cross_check: Option<CrossCheck>,
    /// What the swarm covered, when the search was a swarm of random walks.
    pub swarm: Option<swarm::SwarmCoverage>,
    /// A bounded exhaustive run whose numbers were not renumbered: how far they had grown, and
    /// why they were kept (see `GrowingNumbers`).
    pub growing_numbers: Option<GrowingNumbers>,
}

/// Why a bounded run may never have ended: its sequence numbers and zxids are kept as they are,
/// so every new number makes a new state, and a recipe that creates nodes again and again
/// (re-enters a queue, re-creates its node) has a graph without end. Reported with how far the
/// numbers had grown by the last state the run met, and what to do about it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GrowingNumbers {
    /// Why the run kept its numbers (`World::why_not_renumbered`, or the refused claim).
    pub kept_because: String,
    /// The lock's next sequence number and the server's zxid in the last state met.
    pub sequence: i64,
    pub zxid: i64,
    /// That state's depth.
    pub depth: usize,
    /// What to do.
    pub remedy: &'static str,
    /// The run renumbered ZooKeeper's numbers by replay, and only the recipe's own numbers
    /// (a counter or uuid in its node names) were kept.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub by_replay: bool,
}

/// What to do about numbers that grow (see `GrowingNumbers`).
const REMEDY: &str = "if the recipe only compares sequence numbers and zxids with one another, claim renumbering \
(implement Recipe::renumbered, checked as a claim on the explored states) so that states differing only in their \
numbers are one (a recipe that writes none is renumbered by replay, which reaches ZooKeeper's numbers but not numbers \
the recipe makes itself: rank those with Renumber::local in a written renumbering); otherwise bound how often clients \
acquire (--rounds) and the faults' budgets";

impl GrowingNumbers {
    /// The note for a bounded run of `init` whose last state met is `last`, at `depth`, if the
    /// run kept its numbers.
    fn of<R: Recipe>(init: &World<R>, last: &World<R>, depth: usize) -> Option<Self> {
        let by_replay = init.renumbers_by_replay();
        let kept_because = match by_replay {
            true => {
                "the recipe writes no renumbering, and replay ranks only the numbers ZooKeeper hands it".to_string()
            }
            false => init.why_not_renumbered()?.to_string(),
        };
        let (sequence, zxid) = last.counters();
        Some(GrowingNumbers { kept_because, sequence, zxid, depth, remedy: REMEDY, by_replay })
    }
}

impl Outcome {
    pub fn status(&self, property: Property) -> Option<Status> {
        self.verdicts.iter().find(|v| v.property == property).map(|v| v.status)
    }
}

/// Explores every interleaving and fault from `init` and judges every property that applies.
/// The budgets (`max_states`, `timeout`, `max_memory_mib`) are for the whole call: a run repeated
/// without a reduction shares them with the run before. `init` has at most `MAX_CLIENTS`
/// clients (a state is packed and judged with a bit per client), as the check builder and the
/// command line ask.
pub fn explore<R: Recipe>(init: World<R>, options: &Options) -> Outcome {
    let clients = init.clients.len();
    assert!(clients <= MAX_CLIENTS, "a check explores at most {MAX_CLIENTS} clients, not {clients}");
    let started = Instant::now();
    // A timeout past what the clock can count is no deadline at all.
    let deadline = options.timeout.and_then(|t| started.checked_add(t));
    let candidates = Property::candidates(&init);
    let judged = judged(&init, options);
    let mut outcome = match options.swarm {
        Some(walks) => walk(init, options, walks, deadline, started),
        None => explore_within(init, options, deadline, options.max_states, started),
    };
    let not_applicable = candidates.iter().filter(|p| !judged.contains(p));
    outcome.verdicts.extend(not_applicable.map(|&property| Verdict {
        property,
        status: Status::NotApplicable,
        counterexample: None,
    }));
    let order = |p: Property| candidates.iter().position(|&c| c == p).unwrap_or(usize::MAX);
    outcome.verdicts.sort_by_key(|v| order(v.property));
    outcome
}

/// The properties a run judges: those that apply to `init` (`Property::applicable`, which asks
/// each recipe), narrowed to `Options::properties` except for the `reached:*` items.
pub fn judged<R: Recipe>(init: &World<R>, options: &Options) -> Vec<Property> {
    let mut properties = Property::applicable(init);
    if let Some(asked) = &options.properties {
        properties.retain(|p| p.kind() == Kind::Reached || asked.contains(p));
    }
    properties
}

/// A swarm of random walks from `init` (see `swarm`): violations it met, reached items, and
/// `unknown` for the rest; bounded.
fn walk<R: Recipe>(
    init: World<R>,
    options: &Options,
    walks: Walks,
    deadline: Option<Instant>,
    started: Instant,
) -> Outcome {
    let properties = judged(&init, options);
    let plan = swarm::Swarm {
        first_walk: walks.first,
        walks: walks.walks,
        depth: walks.depth,
        seed: walks.seed,
        threads: options.threads,
        budget: Budget {
            max_states: options.max_states,
            deadline,
            max_memory_mib: options.max_memory_mib,
            stop_at_violation: false,
            interrupt: options.interrupt,
        },
        progress: options.progress,
    };
    let found = swarm::run(&init, &properties, &plan);
    let verdicts = properties
        .iter()
        .map(|&property| {
            let counterexample = swarm::counterexample(&found, property);
            let status = match (&counterexample, property.kind()) {
                (Some(_), _) => Status::Violated,
                (None, Kind::Reached) if found.reached.contains(&property) => Status::Holds,
                (None, _) => Status::Unknown,
            };
            Verdict { property, status, counterexample }
        })
        .collect();
    Outcome {
        unique_states: found.coverage.distinct_states,
        total_states: found.coverage.visits as usize,
        max_depth: found.longest,
        elapsed_ms: started.elapsed().as_millis(),
        bounded: true,
        spent: found.spent,
        stopped: false,
        symmetric: false,
        partial_order: false,
        collision_probability: index::collision_probability(
            found.coverage.distinct_states,
            found.coverage.visits as usize,
            init.digested_parts(),
        ),
        symmetry_refused: None,
        renumbering_refused: None,
        renumbered_by_replay: false,
        verdicts,
        cross_check: None,
        swarm: Some(found.coverage),
        growing_numbers: None,
    }
}

/// Explores `init` within the budget (`deadline`, `max_states` over every pass): a graph pass
/// and, where a reduction it applied was refuted or kept it from judging what it found, another
/// pass without that reduction, until one stands (each reduction is dropped at most once). The
/// outcome is the last pass's, told what the passes before it found (see `Fallback`).
fn explore_within<R: Recipe>(
    init: World<R>,
    options: &Options,
    deadline: Option<Instant>,
    max_states: usize,
    started: Instant,
) -> Outcome {
    let (mut init, mut options, mut max_states) = (init, options.clone(), max_states);
    let mut fallbacks = Vec::new();
    let mut outcome = loop {
        let (fallback, explored) = match pass(&init, &options, deadline, max_states, started) {
            Pass::Done(outcome) => break outcome,
            Pass::Again(fallback, explored) => (fallback, explored),
        };
        match &fallback {
            Fallback::SymmetryRefused(_) => options.symmetry = false,
            Fallback::RenumberingRefused(_) => init = init.without_renumbering(),
            Fallback::Rerun { without, .. } => options = without.clone(),
        }
        max_states = max_states.saturating_sub(explored).max(1);
        fallbacks.push(fallback);
    };
    // Latest first, as each pass would tell the outcome of the pass after it.
    for fallback in fallbacks.into_iter().rev() {
        fallback.tell(&mut outcome);
    }
    outcome
}

/// Why a pass is not the last, and what the outcome of the passes after it keeps of it.
enum Fallback {
    /// The recipe claims symmetry and breaks it: the reduced graph proves nothing, and the
    /// next pass explores without symmetry.
    SymmetryRefused(String),
    /// The recipe claims its future depends on the order of its numbers alone, and breaks it:
    /// the next pass explores without renumbering.
    RenumberingRefused(String),
    /// A reduction kept the pass from judging what it found (partial order keeps neither
    /// shortest paths nor fairness; symmetry cannot tell which client starves on a cycle): the
    /// next pass explores `without` it.
    Rerun { without: Options, first: FirstPass },
}

/// What a pass that ran again found, kept where the next pass runs out of budget.
struct FirstPass {
    verdicts: Vec<Verdict>,
    unique_states: usize,
    total_states: usize,
    max_depth: usize,
    symmetric: bool,
    partial_order: bool,
    collision_probability: f64,
}

impl Fallback {
    /// Tells the outcome of the passes after this one what this one found.
    fn tell(self, outcome: &mut Outcome) {
        match self {
            Fallback::SymmetryRefused(why) => outcome.symmetry_refused = Some(why),
            Fallback::RenumberingRefused(why) => {
                if let Some(growing) = &mut outcome.growing_numbers {
                    growing.kept_because = format!("the recipe's claim to renumbering was refused: {why}");
                }
                outcome.renumbering_refused = Some(why);
            }
            Fallback::Rerun { first, .. } => {
                // A budget that ran out during the second pass keeps what the first found: its
                // counterexamples are real runs (translated out of the reduction), if not the
                // shortest. A second pass that stopped at its first violation keeps only its
                // own, the shortest.
                for v in &mut outcome.verdicts {
                    if v.status == Status::Unknown && outcome.bounded {
                        let found =
                            first.verdicts.iter().find(|f| f.property == v.property && f.status == Status::Violated);
                        if let Some(found) = found {
                            *v = found.clone();
                        }
                    }
                }
                // The first pass may have spent nearly all of the states budget, leaving the
                // second next to nothing: what was explored is then the first pass's graph, and
                // the counts say so.
                if outcome.bounded && outcome.unique_states < first.unique_states {
                    outcome.unique_states = first.unique_states;
                    outcome.total_states = first.total_states;
                    outcome.max_depth = first.max_depth;
                    outcome.symmetric = first.symmetric;
                    outcome.partial_order = first.partial_order;
                    outcome.collision_probability = outcome.collision_probability.max(first.collision_probability);
                }
            }
        }
    }
}

/// How a graph pass ended.
enum Pass {
    /// It stands: the outcome.
    Done(Outcome),
    /// Another pass must follow, for this reason; this one explored so many states (spent from
    /// the states budget).
    Again(Fallback, usize),
}

/// One graph pass.
fn pass<R: Recipe>(
    init: &World<R>,
    options: &Options,
    deadline: Option<Instant>,
    max_states: usize,
    started: Instant,
) -> Pass {
    let properties = judged(init, options);
    let symmetric = options.symmetry && init.canonical().is_some();
    let concrete = |steps: Vec<zklab_model::Step>| match symmetric {
        true => search::concrete_steps(init, &steps),
        false => steps,
    };

    let judged_by_the_pass: Vec<_> = properties.iter().copied().filter(|p| p.kind() != Kind::Liveness).collect();
    let budget = Budget {
        max_states,
        deadline,
        max_memory_mib: options.max_memory_mib,
        stop_at_violation: options.stop_at_violation,
        interrupt: options.interrupt,
    };
    let mut last = Instant::now();
    let reduction =
        search::Reduction { symmetry: symmetric, partial_order: options.partial_order, settle: options.settle };
    let graph = bfs::explore(init.clone(), &judged_by_the_pass, budget, reduction, options.threads, &mut |p| {
        if let Some(say) = options.progress.filter(|_| last.elapsed() >= Duration::from_secs(1)) {
            last = Instant::now();
            say(&progress_line(p, started));
        }
    });

    if let Some(why) = &graph.symmetry_refused {
        return Pass::Again(Fallback::SymmetryRefused(why.clone()), graph.unique());
    }
    if let Some(why) = &graph.renumbering_refused {
        return Pass::Again(Fallback::RenumberingRefused(why.clone()), graph.unique());
    }
    // A deadlock is known once its state is expanded; starving cycles need the whole graph.
    let liveness = match graph.complete {
        true => Some(graph.liveness()),
        false => graph.deadlock().map(Liveness::Violated),
    };
    let verdicts = verdicts_of(&graph, &properties, liveness.as_ref(), &concrete);
    let violated = verdicts.iter().any(|v| v.status == Status::Violated);
    let rerun = if options.partial_order && (violated || liveness == Some(Liveness::NeedsFullGraph)) {
        Some(("a shortest counterexample or a cycle's fairness", Options { partial_order: false, ..options.clone() }))
    } else if liveness == Some(Liveness::NeedsFullGraph) {
        Some(("a cycle's fairness, judged per client,", Options { symmetry: false, ..options.clone() }))
    } else {
        None
    };
    if let Some((why, without)) = rerun {
        if let Some(say) = options.progress {
            say(&format!("{why} needs the graph without this reduction: exploring again"));
        }
        let first = FirstPass {
            verdicts,
            unique_states: graph.unique(),
            total_states: graph.total,
            max_depth: graph.depth,
            symmetric,
            partial_order: options.partial_order,
            collision_probability: index::collision_probability(graph.unique(), graph.total, init.digested_parts()),
        };
        return Pass::Again(Fallback::Rerun { without, first }, graph.unique());
    }
    // stateright explores the same graph again: it gets the run's state limit to itself, and
    // what is left of its time and memory.
    let cross_budget = Budget { max_states, ..budget };
    let cross_check = (options.cross_check && graph.complete)
        .then(|| cross_check::run(init, &properties, reduction, options, cross_budget, graph.unique(), &verdicts));

    let bounded = !graph.complete && !graph.stopped;
    let growing_numbers = bounded.then(|| graph.unique().checked_sub(1)).flatten().and_then(|last| {
        let steps = concrete(graph.path_to(last as u32));
        let mut world = init.clone();
        for step in &steps {
            world.apply(*step).expect("a path of the graph replays");
        }
        GrowingNumbers::of(init, &world, steps.len())
    });
    Pass::Done(Outcome {
        unique_states: graph.unique(),
        total_states: graph.total,
        max_depth: graph.depth,
        elapsed_ms: started.elapsed().as_millis(),
        bounded,
        spent: (!graph.complete && !graph.stopped).then(|| budget.spent(graph.unique())).flatten(),
        stopped: graph.stopped,
        symmetric,
        partial_order: options.partial_order,
        collision_probability: index::collision_probability(graph.unique(), graph.total, init.digested_parts()),
        symmetry_refused: None,
        renumbering_refused: None,
        renumbered_by_replay: init.renumbers_by_replay(),
        verdicts,
        cross_check,
        swarm: None,
        growing_numbers,
    })
}

/// The verdict on each of `properties` that the graph (and its liveness judgement, when complete)
/// gives, with counterexamples turned into steps from the initial world by `concrete`.
fn verdicts_of(
    graph: &graph::Graph,
    properties: &[Property],
    liveness: Option<&Liveness>,
    concrete: &dyn Fn(Vec<zklab_model::Step>) -> Vec<zklab_model::Step>,
) -> Vec<Verdict> {
    properties
        .iter()
        .map(|&property| {
            let (status, counterexample) = match property.kind() {
                Kind::Safety => match graph.first_violation.get(&property) {
                    Some(&state) => (
                        Status::Violated,
                        Some(Counterexample { steps: concrete(graph.path_to(state)), cycle_start: None }),
                    ),
                    None if graph.complete => (Status::Holds, None),
                    None => (Status::Unknown, None),
                },
                Kind::Transition => match graph.first_bad_step.get(&property) {
                    Some(&(state, step)) => (
                        Status::Violated,
                        Some(Counterexample { steps: concrete(graph.path_through(state, step)), cycle_start: None }),
                    ),
                    None if graph.complete => (Status::Holds, None),
                    None => (Status::Unknown, None),
                },
                Kind::Reached => match graph.reached.contains(&property) {
                    true => (Status::Holds, None),
                    false if graph.complete => (Status::Vacuous, None),
                    false => (Status::Unknown, None),
                },
                Kind::Liveness => match liveness {
                    None | Some(Liveness::NeedsFullGraph) => (Status::Unknown, None),
                    Some(Liveness::Violated(cx)) => (
                        Status::Violated,
                        Some(Counterexample { steps: concrete(cx.steps.clone()), cycle_start: cx.cycle_start }),
                    ),
                    Some(Liveness::Holds) => (Status::Holds, None),
                },
            };
            Verdict { property, status, counterexample }
        })
        .collect()
}

/// Checks `scenario` against every property that applies to it; counterexamples become traces.
pub fn run(scenario: &Scenario, options: &Options) -> Report {
    let outcome = explore(scenario.world(), options);
    let trace = |property: Property, cx: &Counterexample| -> Trace {
        let mut trace = Trace {
            format: FORMAT,
            scenario: scenario.clone(),
            seed: None,
            summary: String::new(),
            verdict: TraceVerdict { property, cycle_start: cx.cycle_start, stalled: false },
            steps: cx.steps.clone(),
            times_us: Vec::new(),
            program: scenario.registering_program(),
        };
        // One way to tell what a trace shows: the way its replay checks it.
        trace.summary = trace.replayed_summary().expect("counterexample steps replay");
        trace
    };
    let peak_rss_kib = peak_rss_kib();
    Report {
        recipe: scenario.recipe_label(),
        clients: scenario.recipes.len(),
        faults: scenario
            .faults()
            .iter()
            .map(|k| match scenario.config.faults.get(*k) {
                1 => k.name().to_string(),
                n => format!("{}={n}", k.name()),
            })
            .collect(),
        client_behaviour: scenario.config.client_behaviour,
        rounds: scenario.config.rounds,
        unique_states: outcome.unique_states,
        total_states: outcome.total_states,
        max_depth: outcome.max_depth,
        elapsed_ms: outcome.elapsed_ms,
        bounded: outcome.bounded,
        interrupted: outcome.spent == Some(search::Spent::Interrupted),
        bounded_by: outcome.spent,
        stopped_at_violation: outcome.stopped,
        symmetry: outcome.symmetric,
        partial_order: outcome.partial_order,
        fingerprint_collision_probability: outcome.collision_probability,
        symmetry_refused: outcome.symmetry_refused.clone(),
        renumbering_refused: outcome.renumbering_refused.clone(),
        renumbered_by_replay: outcome.renumbered_by_replay,
        peak_rss_kib,
        bytes_per_state: peak_rss_kib
            .filter(|_| outcome.unique_states > 0)
            .map(|kib| kib * 1024 / outcome.unique_states as u64),
        properties: outcome
            .verdicts
            .iter()
            .map(|v| PropertyReport {
                property: v.property,
                name: v.name(),
                kind: v.kind(),
                status: v.status,
                trace_file: None,
                trace: v.counterexample.as_ref().map(|cx| trace(v.property, cx)),
            })
            .collect(),
        cross_check: outcome.cross_check.clone(),
        swarm: outcome.swarm.clone(),
        growing_numbers: outcome.growing_numbers.clone(),
    }
}

/// The process's peak resident memory so far, where the OS tells it (Linux).
pub fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// stateright's view of symmetry: a state's representative.
fn representative<R: Recipe>(world: &World<R>) -> World<R> {
    world.canonical().map_or_else(|| world.clone(), |(representative, _)| representative)
}
