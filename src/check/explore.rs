//! Exploring a world: the graph pass (or a swarm of random walks), run again without a reduction
//! where one was refuted or kept the pass from judging what it found, and each property's
//! verdict read off the graph.

use super::bfs;
use super::cross_check;
use super::engine::index;
use super::graph::Graph;
use super::liveness::Liveness;
use super::options::{Options, Walks};
use super::outcome::{GrowingNumbers, Outcome};
use super::properties::{Kind, Property};
use super::search::{self, Budget, Counterexample, Explored};
use super::swarm;
use super::verdict::{Status, Verdict};
use crate::scenario::MAX_CLIENTS;
use std::time::{Duration, Instant};
use zklab_model::{Recipe, World};

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
    let parts = init.digested_parts();
    let (mut outcome, earlier) = match options.swarm {
        Some(walks) => (walk(init, options, walks, deadline, started), Vec::new()),
        None => explore_within(init, options, deadline, options.max_states, started),
    };
    // The collision bound, over the passes whose findings the outcome keeps: this one's, and
    // those of a pass it kept counterexamples of (see `Fallback::tell`).
    let passes = std::iter::once((outcome.unique_states, outcome.total_states)).chain(earlier);
    outcome.collision_probability =
        passes.map(|(states, transitions)| index::collision_probability(states, transitions, parts)).sum();
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
        // Computed once, over every pass the outcome keeps, by `explore`.
        collision_probability: 0.0,
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
/// outcome is the last pass's, told what the passes before it found (see `Fallback`), with the
/// states and transitions of each earlier pass whose findings it may keep (for the collision
/// bound).
fn explore_within<R: Recipe>(
    init: World<R>,
    options: &Options,
    deadline: Option<Instant>,
    max_states: usize,
    started: Instant,
) -> (Outcome, Vec<(usize, usize)>) {
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
    // The passes whose counterexamples the outcome may keep: their states and transitions.
    let kept = fallbacks
        .iter()
        .filter_map(|f| match f {
            Fallback::Rerun { first, .. } => Some((first.unique_states, first.total_states)),
            _ => None,
        })
        .collect();
    // Latest first, as each pass would tell the outcome of the pass after it.
    for fallback in fallbacks.into_iter().rev() {
        fallback.tell(&mut outcome);
    }
    (outcome, kept)
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
        // Computed once, over every pass the outcome keeps, by `explore`.
        collision_probability: 0.0,
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
    graph: &Graph,
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
