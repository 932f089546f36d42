//! The liveness judgement on a complete graph: `eventual_acquire`, the response property
//! "always, if client c waits, c eventually holds" under weak fairness, judged per client.
//!
//! A client *waits* when it is not crashed and believes `Acquiring`; it *holds* when it is not
//! crashed and believes `Holding` (a crashed process holds nothing). Faults are bounded, so every
//! infinite run ends in a cycle of fault-free steps. A run is weakly fair when every fault-free
//! step (a `Step` value: the step and its client) that stays enabled from some point on is taken
//! again and again. The property fails for client c when
//! - a reachable state where c waits has no fault-free step enabled (a deadlock), or
//! - a weakly fair cycle of fault-free steps is reachable on which c waits in some state and
//!   holds in none: c asks again and again and never gets the lock (starvation, including a
//!   livelock in which c backs off and retries through other beliefs).
//!
//! The cycles are found per client c: keep the states where c does not hold and the fault-free
//! edges between them, take the strongly connected components there, and keep those with a
//! state where c waits. A component admits a weakly fair cycle exactly when the cycle through
//! all its states and edges is fair: a smaller cycle inside it keeps at least the same steps
//! enabled throughout and takes no step the big one does not. So a component is a violation
//! when every fault-free step enabled in all of its states (read in the whole graph, edges
//! leaving the component included) labels an edge inside it. Judging whole maximal components
//! of the unrestricted graph instead would miss a fair starving cycle inside a component that
//! also holds states where c holds.

use super::graph::Graph;
use super::search::Counterexample;
use std::collections::{HashMap, VecDeque};
use zklab_model::Step;

/// What the liveness judgement found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Liveness {
    Holds,
    Violated(Counterexample),
    /// The reduced graph has a cycle through a state where some client waits; whether a fair
    /// run starves on it needs the unreduced graph.
    NeedsFullGraph,
}

impl Graph {
    /// Violated at the nearest state where a client waits and nothing but a fault can happen,
    /// or else on a weakly fair cycle on which some client waits and never holds (see the
    /// module). Only meaningful on a complete graph. Paths are in the graph's own numbering.
    pub fn liveness(&self) -> Liveness {
        if let Some(deadlock) = self.deadlock() {
            return Liveness::Violated(deadlock);
        }
        if self.reduction.partial_order || self.reduction.symmetry {
            // A reduced state lists one step (partial order), and along a path of
            // representatives a client may change its number (symmetry), so neither fairness
            // nor "the same client" can be read off a reduced cycle. Both reductions keep, for
            // every weakly fair run, the sequence of who holds and who waits up to repetition,
            // so a starving run of the full graph shows here as a cycle through a state where
            // some client waits: only then is the full graph needed.
            let someone_waits = |members: &Vec<u32>| members.iter().any(|&s| self.waiting[s as usize] != 0);
            return match self.components(|_| true).iter().any(someone_waits) {
                true => Liveness::NeedsFullGraph,
                false => Liveness::Holds,
            };
        }
        self.starving_cycle().map_or(Liveness::Holds, Liveness::Violated)
    }

    /// A shortest path to the first state (in breadth-first order) where a client waits and
    /// nothing but a fault can happen. Known as soon as that state is expanded, so it stands in
    /// an incomplete graph too (a stopped or budgeted pass).
    pub fn deadlock(&self) -> Option<Counterexample> {
        self.first_deadlock.map(|state| Counterexample { steps: self.path_to(state), cycle_start: None })
    }

    /// The fair starving cycle (see the module) whose nearest state comes first in breadth-first
    /// order, over every client, as a lasso: a shortest path to that state, then the cycle.
    fn starving_cycle(&self) -> Option<Counterexample> {
        let mut best: Option<(u32, u8, Vec<u32>)> = None;
        for c in 0..self.clients {
            let bit = 1u8 << c;
            let not_holding = |s: u32| self.holding[s as usize] & bit == 0;
            for members in self.components(not_holding) {
                if !members.iter().any(|&s| self.waiting[s as usize] & bit != 0) || !self.fair(&members) {
                    continue;
                }
                let entry = *members.iter().min().expect("a component has a state");
                if best.as_ref().is_none_or(|(b, _, _)| entry < *b) {
                    best = Some((entry, bit, members));
                }
            }
        }
        let (entry, bit, members) = best?;
        let mut steps = self.path_to(entry);
        let cycle_start = steps.len();
        steps.extend(self.fair_cycle(entry, bit, &members));
        Some(Counterexample { steps, cycle_start: Some(cycle_start) })
    }

    /// Whether the cycle through every state and edge of the component `members` is weakly
    /// fair: each fault-free step enabled in all its states is taken on an edge inside it.
    fn fair(&self, members: &[u32]) -> bool {
        let member = self.membership(members);
        let (always, taken) = self.fairness(members, &member);
        always.iter().all(|st| taken.binary_search(st).is_ok())
    }

    fn membership(&self, members: &[u32]) -> Vec<bool> {
        let mut member = vec![false; self.expanded()];
        for &s in members {
            member[s as usize] = true;
        }
        member
    }

    /// Steps enabled (other than faults) in every member, and steps taken inside the component,
    /// each sorted.
    fn fairness(&self, members: &[u32], member: &[bool]) -> (Vec<Step>, Vec<Step>) {
        let mut always: Option<Vec<Step>> = None;
        let mut taken = Vec::new();
        for &s in members {
            let mut enabled: Vec<Step> = self.out(s).map(|(_, step)| step).filter(|st| !st.is_fault()).collect();
            enabled.sort();
            enabled.dedup();
            always = Some(match always {
                None => enabled,
                Some(prev) => prev.into_iter().filter(|st| enabled.binary_search(st).is_ok()).collect(),
            });
            for (t, step) in self.out(s) {
                if !step.is_fault() && member[t as usize] {
                    taken.push(step);
                }
            }
        }
        taken.sort();
        taken.dedup();
        (always.unwrap_or_default(), taken)
    }

    /// A cycle from `entry` back to itself inside the component that passes a state where the
    /// client `bit` waits and is weakly fair as it is printed: every fault-free step enabled in
    /// all the states it visits is taken on it. Taking each step enabled throughout the
    /// component is not enough, since the cycle need not visit every state; so while some step
    /// is enabled all along the cycle so far and never taken, it goes on to a state of the
    /// component where that step is disabled (there is one: the component is fair).
    fn fair_cycle(&self, entry: u32, bit: u8, members: &[u32]) -> Vec<Step> {
        let member = self.membership(members);
        let (always, _) = self.fairness(members, &member);
        let mut steps = Vec::new();
        let mut visited = vec![entry];
        let mut at = entry;
        let mut go = |path: Vec<Step>, steps: &mut Vec<Step>, visited: &mut Vec<u32>| {
            for step in path {
                let (next, _) = self.out(at).find(|(_, s)| *s == step).expect("a path of the graph");
                at = next;
                visited.push(at);
                steps.push(step);
            }
            at
        };
        if self.waiting[entry as usize] & bit == 0 {
            let (path, _) = self.path_inside(entry, &member, |s, _| self.waiting[s as usize] & bit != 0);
            go(path, &mut steps, &mut visited);
        }
        for required in &always {
            let from = *visited.last().expect("entry");
            let (path, _) = self.path_inside(from, &member, |s, step| step == *required && member[s as usize]);
            go(path, &mut steps, &mut visited);
        }
        while let Some(neglected) = self.neglected(&visited, &steps) {
            let from = *visited.last().expect("entry");
            let disabled = |s: u32| self.out(s).all(|(_, st)| st != neglected);
            let (path, _) = self.path_inside(from, &member, |s, _| disabled(s));
            go(path, &mut steps, &mut visited);
        }
        let from = *visited.last().expect("entry");
        if steps.is_empty() || from != entry {
            let (path, _) = self.path_inside(from, &member, |s, _| s == entry);
            go(path, &mut steps, &mut visited);
        }
        debug_assert!(self.neglected(&visited, &steps).is_none(), "closing the cycle neglects nothing new");
        steps
    }

    /// A fault-free step enabled in every state of `visited` that `steps` never take.
    fn neglected(&self, visited: &[u32], steps: &[Step]) -> Option<Step> {
        let (first, rest) = visited.split_first()?;
        self.out(*first).map(|(_, st)| st).find(|st| {
            !st.is_fault() && !steps.contains(st) && rest.iter().all(|&s| self.out(s).any(|(_, x)| x == *st))
        })
    }

    /// Shortest path inside the component from `from` ending with an edge `(target, step)` that
    /// satisfies `goal` (at least one step).
    fn path_inside(&self, from: u32, member: &[bool], goal: impl Fn(u32, Step) -> bool) -> (Vec<Step>, u32) {
        let mut prev: HashMap<u32, (u32, Step)> = HashMap::new();
        let mut queue = VecDeque::from([from]);
        let mut seen = vec![false; self.expanded()];
        seen[from as usize] = true;
        while let Some(s) = queue.pop_front() {
            for (t, step) in self.out(s) {
                if step.is_fault() || !member[t as usize] {
                    continue;
                }
                if goal(t, step) {
                    let mut path = vec![step];
                    let mut at = s;
                    while at != from {
                        let (p, st) = prev[&at];
                        path.push(st);
                        at = p;
                    }
                    path.reverse();
                    return (path, t);
                }
                if !seen[t as usize] {
                    seen[t as usize] = true;
                    prev.insert(t, (s, step));
                    queue.push_back(t);
                }
            }
        }
        unreachable!("a strongly connected component reaches all its edges")
    }

    /// The states `inside` accepts that a cycle of fault-free edges between such states
    /// reaches (on it or after it): the others are taken away, each once every edge into it
    /// comes from one taken away (Kahn's algorithm), and no state of a cycle ever is, since the
    /// edge into it from the cycle stays. So every strongly connected component with a cycle is
    /// kept whole, with all its edges, and the search for them (`components`) reads only what
    /// is kept: on a graph without cycles, the usual one under bounded rounds, nothing. Reading
    /// the graph in the order it is stored, this takes 0.6 s at five clients with
    /// loss-after-apply and expire (7.4 M states, 17.7 M edges), where the depth-first search
    /// over the whole graph took 1.5 s.
    fn on_or_after_cycles(&self, inside: &impl Fn(u32) -> bool) -> Vec<bool> {
        let n = self.expanded();
        let edge_inside = |w: u32, step: Step| self.edge_inside(w, step, inside);
        let mut into = vec![0u32; n];
        for v in (0..n as u32).filter(|&v| inside(v)) {
            for (w, step) in self.out(v) {
                if edge_inside(w, step) {
                    into[w as usize] += 1;
                }
            }
        }
        let mut kept: Vec<bool> = (0..n as u32).map(inside).collect();
        // Kahn's algorithm takes the states with no edge left into them in any order. Here they
        // are taken in the order they are numbered, where the edges of one lie next to the
        // edges of the one before; a state whose last edge in comes from one numbered after it
        // (an edge back up the levels, an eighth of them) is taken as soon as it is free.
        let mut behind: Vec<u32> = Vec::new();
        for at in 0..n as u32 {
            if !kept[at as usize] || into[at as usize] != 0 {
                continue;
            }
            behind.push(at);
            while let Some(v) = behind.pop() {
                kept[v as usize] = false;
                for (w, step) in self.out(v) {
                    if edge_inside(w, step) {
                        into[w as usize] -= 1;
                        if into[w as usize] == 0 && w < at {
                            behind.push(w);
                        }
                    }
                }
            }
        }
        kept
    }

    /// Whether an edge by `step` into `w` is one the cycle searches follow: fault-free, into an
    /// expanded state that `inside` accepts.
    fn edge_inside(&self, w: u32, step: Step, inside: &impl Fn(u32) -> bool) -> bool {
        !step.is_fault() && (w as usize) < self.expanded() && inside(w)
    }

    /// Strongly connected components of the fault-free edges between the states `inside`
    /// accepts (iterative Tarjan, on the states a cycle reaches: `on_or_after_cycles`); only
    /// components with a cycle (two states or more, or a step back to the same state).
    fn components(&self, inside: impl Fn(u32) -> bool) -> Vec<Vec<u32>> {
        let n = self.expanded();
        let kept = self.on_or_after_cycles(&inside);
        let inside = |v: u32| kept[v as usize];
        const UNSEEN: u32 = u32::MAX;
        let mut order = vec![UNSEEN; n];
        let mut low = vec![0u32; n];
        let mut on_stack = vec![false; n];
        let mut stack = Vec::new();
        let mut components = Vec::new();
        let mut next = 0u32;
        let edge_inside = |w: u32, step: Step| self.edge_inside(w, step, &inside);
        for root in 0..n as u32 {
            if order[root as usize] != UNSEEN || !inside(root) {
                continue;
            }
            let mut calls: Vec<(u32, usize)> = vec![(root, 0)];
            order[root as usize] = next;
            low[root as usize] = next;
            next += 1;
            stack.push(root);
            on_stack[root as usize] = true;
            while let Some(&mut (v, ref mut edge)) = calls.last_mut() {
                if let Some((w, step)) = self.edge(v, *edge) {
                    *edge += 1;
                    if !edge_inside(w, step) {
                        continue;
                    }
                    if order[w as usize] == UNSEEN {
                        order[w as usize] = next;
                        low[w as usize] = next;
                        next += 1;
                        stack.push(w);
                        on_stack[w as usize] = true;
                        calls.push((w, 0));
                    } else if on_stack[w as usize] {
                        low[v as usize] = low[v as usize].min(order[w as usize]);
                    }
                } else {
                    calls.pop();
                    if let Some(&(parent, _)) = calls.last() {
                        low[parent as usize] = low[parent as usize].min(low[v as usize]);
                    }
                    if low[v as usize] == order[v as usize] {
                        let mut members = Vec::new();
                        loop {
                            let w = stack.pop().expect("v is on the stack");
                            on_stack[w as usize] = false;
                            members.push(w);
                            if w == v {
                                break;
                            }
                        }
                        if members.len() > 1 || self.out(v).any(|(t, s)| t == v && edge_inside(t, s)) {
                            components.push(members);
                        }
                    }
                }
            }
        }
        components
    }
}
