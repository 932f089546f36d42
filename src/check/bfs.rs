//! Our own breadth-first pass over the world's state graph. stateright proves the safety
//! properties fast on many threads, but in 0.31 its counterexamples are not the shortest and its
//! `eventually` misses cycles. This pass keeps the edges (so liveness can be judged on the whole
//! graph) and where each breadth-first level starts, which give each state's shortest path (so
//! the first violating state it meets has a shortest counterexample).
//! Transition properties are judged on every step as it is taken, before its successor is
//! settled and renamed, since what a step did is not part of the state it leads to.
//!
//! The pass is the loop below; a state's expansion is `expand`, the numbering of what it found
//! `graph`, the fingerprints `index`, and the threads `pipeline`.

use super::engine::index::{fingerprint, name, Index};
use super::engine::intern::Interner;
use super::engine::pipeline::{Pipeline, CHUNK};
use super::engine::transitions::Transitions;
use super::expand::Expander;
use super::graph::{Graph, Level};
use super::search::{judge, represent, Budget, Explored, Reduction};
use zklab_model::{Property, Recipe, Settle, World};

/// Explores everything reachable from `init` breadth-first on `threads` threads, checking the
/// safety and reachability properties in `properties` in every state and the transition properties
/// on every step, with the reductions `reduction` asks for. States are numbered in the order
/// one thread would meet them, so the graph, its counterexamples and its counts do not depend
/// on the number of threads.
pub fn explore<R: Recipe>(
    init: World<R>,
    properties: &[Property],
    budget: Budget,
    reduction: Reduction,
    threads: usize,
    progress: &mut dyn FnMut(Explored),
) -> Graph {
    assert!(properties.len() <= 64, "properties are judged into a 64-bit mask");
    // The first state keeps the numbers the run starts with (see `Settle::KeepingNumbers`).
    let mut init = init;
    if reduction.settle {
        init.settle(Settle::KeepingNumbers).ok();
    }
    let init = represent(init, reduction);
    let index = Index::new();
    let interner = Interner::new();
    let mut graph = Graph::new(init.clients.len(), reduction);
    graph.record(0, judge(&init, properties), properties);
    // Where the run renumbers by replay, the interner tells apart equal clients handed other
    // inputs: states are then named by their digests (see `Expander::by_numbers`).
    let by_numbers = !init.renumbers_by_replay();
    let digest = (!by_numbers).then(|| fingerprint(&init));
    let first = interner.pack_first(init);
    index.insert(digest.unwrap_or_else(|| name(&first)));
    let mut level = Level::default();
    level.push(first);
    let transitions = Transitions::new();
    let expander =
        Expander { known: &index, interner: &interner, properties, reduction, transitions: &transitions, by_numbers };
    std::thread::scope(|scope| {
        let mut pipeline = Pipeline::start(scope, &expander, threads);
        let mut depth = 0;
        while !level.is_empty() && graph.complete {
            // The states this level finds are the next level, numbered from here.
            let checked = graph.begin_level(index.len());
            let mut next_level = Level::default();
            let mut unexpanded = level.into_iter();
            let mut next_chunk = || Some(unexpanded.by_ref().take(CHUNK).collect::<Vec<_>>()).filter(|c| !c.is_empty());
            loop {
                while pipeline.has_room() && graph.complete {
                    let Some(chunk) = next_chunk() else { break };
                    if budget.exhausted(index.len()) || graph.refused() {
                        graph.complete = false;
                        break;
                    }
                    pipeline.submit(chunk, &checked);
                }
                let Some(expansions) = pipeline.next_in_order() else { break };
                graph.merge(expansions, &index, &mut next_level, depth, properties);
                progress(Explored { unique: index.len(), total: graph.total, depth });
            }
            drop(checked);
            graph.end_level();
            level = next_level;
            depth += 1;
            if budget.stop_at_violation && graph.complete && !level.is_empty() && graph.found_a_violation() {
                graph.complete = false;
                graph.stopped = true;
            }
        }
    });
    graph
}
