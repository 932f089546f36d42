//! `eventual_acquire`, case (b), on the graph of worlds:
//!
//! "there is a reachable cycle of non-fault steps, weakly fair (every non-fault step —
//! identified by its exact `Step` value, client included — that is enabled in every state of
//! the cycle is taken on the cycle), on which some client c waits in at least one state and
//! holds in none. Judge (b) per client c: restrict the graph to non-fault edges between states
//! where c does not hold; compute its strongly connected components; a nontrivial component
//! (2+ states, or one state with a self-loop) that contains a state where c waits is a
//! violation iff the cycle through all its states and edges is weakly fair, i.e. every non-fault
//! step enabled (in the FULL graph) in all of the component's states labels some edge inside the
//! component."
//!
//! "Waits" and "holds" are `properties::waits` and `properties::holds`: a crashed client does
//! neither, whatever its recipe last believed, so it never starves and never counts as holding.
//!
//! Why the whole component decides: any cycle inside a component visits a subset of its states
//! (so at least the steps enabled throughout the component are enabled throughout the cycle)
//! and takes a subset of its edges; if the cycle through everything is unfair, so is every
//! cycle in it, and every cycle of the restricted graph lies in one component.

use super::graph::Graph;
use super::properties as p;
use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};
use zklab_model::{ClientId, Recipe, Step};

/// A weakly fair cycle on which `client` starves, as a lasso through the graph of worlds.
pub struct Starvation {
    pub client: ClientId,
    /// A shortest path from the initial world to the cycle's first world.
    pub stem: Vec<Step>,
    /// The cycle, from its first world back to it.
    pub cycle: Vec<Step>,
    /// The first world of the cycle (for choosing the shortest stem).
    pub root: u32,
}

/// Strongly connected components of the graph on `nodes` (world ids) with successor lists
/// `adj` (indexed like `nodes`, entries are indices into `nodes`): Tarjan's algorithm with an
/// explicit stack, so no recursion at all.
fn tarjan(adj: &[Vec<usize>]) -> Vec<Vec<usize>> {
    const UNSEEN: usize = usize::MAX;
    let n = adj.len();
    let mut index = vec![UNSEEN; n];
    let mut low = vec![0usize; n];
    let mut on_stack = vec![false; n];
    let mut stack: Vec<usize> = Vec::new();
    let mut counter = 0usize;
    let mut components = Vec::new();
    for start in 0..n {
        if index[start] != UNSEEN {
            continue;
        }
        // (node, next successor to look at)
        let mut calls: Vec<(usize, usize)> = vec![(start, 0)];
        index[start] = counter;
        low[start] = counter;
        counter += 1;
        stack.push(start);
        on_stack[start] = true;
        while let Some(&mut (v, ref mut next)) = calls.last_mut() {
            if *next < adj[v].len() {
                let w = adj[v][*next];
                *next += 1;
                if index[w] == UNSEEN {
                    index[w] = counter;
                    low[w] = counter;
                    counter += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    calls.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
            } else {
                calls.pop();
                if low[v] == index[v] {
                    let mut component = Vec::new();
                    loop {
                        let w = stack.pop().expect("v is on the stack");
                        on_stack[w] = false;
                        component.push(w);
                        if w == v {
                            break;
                        }
                    }
                    components.push(component);
                }
                if let Some(&(u, _)) = calls.last() {
                    low[u] = low[u].min(low[v]);
                }
            }
        }
    }
    components
}

/// Every client that starves on some weakly fair cycle, each with one lasso (the component with
/// the shortest stem for that client).
pub fn starvations<R: Recipe>(g: &Graph<R>) -> Vec<Starvation> {
    let clients = g.worlds.first().map_or(0, |w| w.clients.len());
    let mut found = Vec::new();
    for c in 0..clients {
        if let Some(s) = starvation_of(g, c) {
            found.push(s);
        }
    }
    found
}

fn starvation_of<R: Recipe>(g: &Graph<R>, c: usize) -> Option<Starvation> {
    // The restricted graph: expanded worlds where c does not hold, non-fault edges between them.
    let nodes: Vec<u32> = (0..g.worlds.len() as u32)
        .filter(|&w| g.edges[w as usize].is_some() && !p::holds(&g.worlds[w as usize].clients[c]))
        .collect();
    let local: HashMap<u32, usize> = nodes.iter().enumerate().map(|(i, &w)| (w, i)).collect();
    let adj: Vec<Vec<usize>> = nodes
        .iter()
        .map(|&w| {
            g.edges[w as usize]
                .as_ref()
                .expect("expanded")
                .iter()
                .filter(|(step, _)| !step.is_fault())
                .filter_map(|(_, to)| local.get(to).copied())
                .collect()
        })
        .collect();
    let mut best: Option<Starvation> = None;
    for component in tarjan(&adj) {
        let members: BTreeSet<u32> = component.iter().map(|&i| nodes[i]).collect();
        let internal = internal_edges(g, &members);
        if internal.is_empty() {
            continue; // trivial: one state without a self-loop
        }
        if !members.iter().any(|&w| p::waits(&g.worlds[w as usize].clients[c])) {
            continue;
        }
        let required = enabled_throughout(g, members.iter().copied());
        let taken: BTreeSet<Step> = internal.iter().map(|&(_, s, _)| s).collect();
        if !required.is_subset(&taken) {
            continue; // not weakly fair
        }
        // The world of the component nearest the initial world (the shortest stem).
        let root = *members.iter().min_by_key(|&&w| g.first_state[w as usize]).expect("nonempty");
        if best.as_ref().is_some_and(|b| g.first_state[b.root as usize] <= g.first_state[root as usize]) {
            continue;
        }
        let cycle = fair_cycle(g, c, &members, &internal, root);
        best = Some(Starvation { client: c as ClientId, stem: g.path_to_world(root), cycle, root });
    }
    best
}

/// The non-fault edges with both ends in `members`.
fn internal_edges<R: Recipe>(g: &Graph<R>, members: &BTreeSet<u32>) -> Vec<(u32, Step, u32)> {
    let mut out = Vec::new();
    for &w in members {
        for &(step, to) in g.edges[w as usize].as_ref().expect("expanded") {
            if !step.is_fault() && members.contains(&to) {
                out.push((w, step, to));
            }
        }
    }
    out
}

/// The non-fault steps enabled (in the full graph) in every world of `members`.
fn enabled_throughout<R: Recipe>(g: &Graph<R>, members: impl IntoIterator<Item = u32>) -> BTreeSet<Step> {
    let mut all: Option<BTreeSet<Step>> = None;
    for w in members {
        let steps: Vec<Step> = g.edges[w as usize].as_ref().expect("expanded").iter().map(|(s, _)| *s).collect();
        let here = p::non_fault(&steps);
        all = Some(match all {
            None => here,
            Some(a) => a.intersection(&here).copied().collect(),
        });
    }
    all.unwrap_or_default()
}

/// A shortest path inside the component from `from` to `to`, as edges.
fn path_within(internal: &[(u32, Step, u32)], from: u32, to: u32) -> Vec<(u32, Step, u32)> {
    if from == to {
        return Vec::new();
    }
    let mut out_of: HashMap<u32, Vec<(Step, u32)>> = HashMap::new();
    for &(a, s, b) in internal {
        out_of.entry(a).or_default().push((s, b));
    }
    let mut parent: HashMap<u32, (u32, Step)> = HashMap::new();
    let mut seen: HashSet<u32> = HashSet::from([from]);
    let mut queue = VecDeque::from([from]);
    while let Some(a) = queue.pop_front() {
        for &(s, b) in out_of.get(&a).map(Vec::as_slice).unwrap_or(&[]) {
            if seen.insert(b) {
                parent.insert(b, (a, s));
                if b == to {
                    let mut path = Vec::new();
                    let mut at = to;
                    while at != from {
                        let (prev, step) = parent[&at];
                        path.push((prev, step, at));
                        at = prev;
                    }
                    path.reverse();
                    return path;
                }
                queue.push_back(b);
            }
        }
    }
    panic!("oracle: a strongly connected component is not strongly connected");
}

/// A cycle inside the component, from `root` back to it, that visits a world where client `c`
/// waits and takes every step the fairness condition asks of it: every non-fault step enabled
/// in every world the cycle visits is taken on it. Built by closed detours from `root`: while
/// some step is enabled throughout the cycle so far and not taken, take an edge labelled with it
/// (there is one inside the component if the step is enabled throughout the component) or visit
/// a world of the component where it is not enabled. Each detour settles its step for good, so
/// this ends.
fn fair_cycle<R: Recipe>(
    g: &Graph<R>,
    c: usize,
    members: &BTreeSet<u32>,
    internal: &[(u32, Step, u32)],
    root: u32,
) -> Vec<Step> {
    let mut cycle: Vec<(u32, Step, u32)> = Vec::new();
    let detour_to = |cycle: &mut Vec<(u32, Step, u32)>, target: u32| {
        cycle.extend(path_within(internal, root, target));
        cycle.extend(path_within(internal, target, root));
    };
    let waiting =
        *members.iter().find(|&&w| p::waits(&g.worlds[w as usize].clients[c])).expect("the component has a waiter");
    detour_to(&mut cycle, waiting);
    loop {
        if cycle.is_empty() {
            // The root waits and nothing is required yet: take any edge out of it and come back.
            let &(a, s, b) = internal.iter().find(|(a, _, _)| *a == root).expect("a nontrivial component");
            cycle.push((a, s, b));
            cycle.extend(path_within(internal, b, root));
            continue;
        }
        let visited: BTreeSet<u32> = cycle.iter().map(|&(a, _, _)| a).collect();
        let taken: BTreeSet<Step> = cycle.iter().map(|&(_, s, _)| s).collect();
        let Some(&missing) = enabled_throughout(g, visited.iter().copied()).difference(&taken).next() else {
            break;
        };
        if let Some(&(a, s, b)) = internal.iter().find(|&&(_, s, _)| s == missing) {
            cycle.extend(path_within(internal, root, a));
            cycle.push((a, s, b));
            cycle.extend(path_within(internal, b, root));
        } else {
            let disabled = *members
                .iter()
                .find(|&&w| !g.edges[w as usize].as_ref().expect("expanded").iter().any(|(s, _)| *s == missing))
                .expect("a step enabled throughout a fair component labels an edge inside it");
            detour_to(&mut cycle, disabled);
        }
    }
    cycle.into_iter().map(|(_, s, _)| s).collect()
}
