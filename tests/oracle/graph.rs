//! The plain breadth-first search. Two layers:
//!
//! - the graph of worlds: every distinct `World` (full equality) gets an id in the order the
//!   search first meets it, and every step of `World::steps()` from it, applied to a clone with
//!   `World::apply` (never `settle`), is kept as an edge (step, target);
//! - the search states: a world id with the ghost state `fenced_exclusion` and
//!   `fencing_available` need (see `properties::Ghost`), each with a parent pointer (search
//!   state, step).
//!
//! Search states are expanded in breadth-first order, so the first search state of each world
//! lies on a shortest path to it, and the first violation met on a state or a step has a
//! shortest counterexample.
//!
//! Both tables are hash maps with the Fx hash (a world's `Hash` writes its parts' digests;
//! SipHash over them was a third of the search's time): a faster table, the same full
//! equality.

use super::properties::{self as p, Ghost};
use rustc_hash::FxHashMap as HashMap;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;
use zklab_model::{Recipe, Step, World};

/// The search also stops (incomplete) once the ghosts remember more creations than this many
/// per allowed search state on average: a recipe that creates nodes forever (a livelock such as
/// `leader-latch-644`) never repeats a world, and each of its search states remembers every
/// node its clients created, so memory would grow with the square of the depth long before
/// `max_states` is reached. Complete runs of the catalogue stay far below it.
pub const GHOST_ENTRIES_PER_STATE: usize = 16;

pub struct Graph<R> {
    /// Worlds by id, in the order first met.
    pub worlds: Vec<Rc<World<R>>>,
    pub ids: HashMap<Rc<World<R>>, u32>,
    /// Every enabled step of each expanded world, with the world it leads to; `None` for a world
    /// not expanded (the budget ran out first).
    pub edges: Vec<Option<Vec<(Step, u32)>>>,
    /// The search state in which each world was first met (on a shortest path to it).
    pub first_state: Vec<u32>,
    /// Search states: (world, ghost), with their parent pointers.
    pub states: Vec<(u32, Rc<Ghost>)>,
    pub parents: Vec<Option<(u32, Step)>>,
    state_ids: HashMap<(u32, Rc<Ghost>), u32>,
    pub complete: bool,
    /// The creations remembered by the ghosts of all search states, counted as if none were
    /// shared (a bound on what they cost).
    pub ghost_entries: usize,
    /// First violation of each safety or transition property: the search state it was met in,
    /// and for a step, the step (the path is the path to the state plus the step). A state
    /// property is judged on the first search state of each world, `fencing_available` on every
    /// search state (its ghost).
    pub violations: BTreeMap<String, (u32, Option<Step>)>,
    /// A shortest path to a deadlock, as the search state it was met in.
    pub deadlock: Option<u32>,
    pub reached: BTreeSet<String>,
}

impl<R: Recipe> Graph<R> {
    /// Explores from `init` until every search state is expanded, or until a new search state
    /// would make more than `max_states`, or the ghosts exceed their share (see
    /// `GHOST_ENTRIES_PER_STATE`): then `complete` is false.
    pub fn explore(init: World<R>, max_states: usize) -> Self {
        let clients = init.clients.len();
        let mut g = Graph {
            worlds: Vec::new(),
            ids: HashMap::default(),
            edges: Vec::new(),
            first_state: Vec::new(),
            states: Vec::new(),
            parents: Vec::new(),
            state_ids: HashMap::default(),
            complete: true,
            ghost_entries: 0,
            violations: BTreeMap::new(),
            deadlock: None,
            reached: BTreeSet::new(),
        };
        if max_states == 0 {
            g.complete = false;
            return g;
        }
        let w0 = g.add_world(init);
        g.add_state(w0, Rc::new(Ghost::new(clients)), None);
        g.judge_world(w0, 0);
        let mut head = 0usize;
        while head < g.states.len() {
            let (w, ghost) = g.states[head].clone();
            if g.edges[w as usize].is_none() {
                g.expand(w, head as u32);
            }
            let edges = g.edges[w as usize].clone().expect("expanded");
            for (step, to) in edges {
                let mut next = (*ghost).clone();
                if let Some(_why) = next.advance(&g.worlds[w as usize], step, &g.worlds[to as usize]) {
                    g.violations.entry(p::FENCED_EXCLUSION.to_string()).or_insert((head as u32, Some(step)));
                }
                let key = (to, Rc::new(next));
                if g.state_ids.contains_key(&key) {
                    continue;
                }
                if g.states.len() >= max_states || g.ghost_entries > GHOST_ENTRIES_PER_STATE * max_states {
                    g.complete = false;
                    return g;
                }
                let (to, next) = key;
                let new_world = g.first_state[to as usize] == u32::MAX;
                let refused_agreed = next.refused_agreed;
                let id = g.add_state(to, next, Some((head as u32, step)));
                if new_world {
                    g.judge_world(to, id);
                }
                // `fencing_available` is judged on the search state: its ghost remembers whether
                // the path to it refused a holder ZooKeeper agreed with.
                if refused_agreed {
                    g.violations.entry(p::FENCING_AVAILABLE.to_string()).or_insert((id, None));
                }
            }
            head += 1;
        }
        g
    }

    fn add_world(&mut self, world: World<R>) -> u32 {
        let id = self.worlds.len() as u32;
        let world = Rc::new(world);
        self.ids.insert(world.clone(), id);
        self.worlds.push(world);
        self.edges.push(None);
        self.first_state.push(u32::MAX);
        id
    }

    fn add_state(&mut self, world: u32, ghost: Rc<Ghost>, parent: Option<(u32, Step)>) -> u32 {
        let id = self.states.len() as u32;
        if self.first_state[world as usize] == u32::MAX {
            self.first_state[world as usize] = id;
        }
        self.ghost_entries += ghost.size();
        self.state_ids.insert((world, ghost.clone()), id);
        self.states.push((world, ghost));
        self.parents.push(parent);
        id
    }

    /// Lists the steps of world `w`, first expanded in search state `state`, and judges
    /// `no_herd` on each of them.
    fn expand(&mut self, w: u32, state: u32) {
        let world = self.worlds[w as usize].clone();
        let mut out = Vec::new();
        for step in world.steps() {
            let mut next = (*world).clone();
            next.apply(step).unwrap_or_else(|e| panic!("oracle: a listed step is not enabled: {e}"));
            if p::herd(&world, step, &next).len() >= 2 {
                self.violations.entry(p::NO_HERD.to_string()).or_insert((state, Some(step)));
            }
            if p::takes_again(&world, step) {
                self.violations.entry(p::TAKEN_ONCE.to_string()).or_insert((state, Some(step)));
            }
            self.reached.extend(p::met_on_step(&next));
            let to = match self.ids.get(&next) {
                Some(&id) => id,
                None => self.add_world(next),
            };
            out.push((step, to));
        }
        self.edges[w as usize] = Some(out);
    }

    /// Judges the state properties of world `w`, first met in search state `state`.
    fn judge_world(&mut self, w: u32, state: u32) {
        let world = self.worlds[w as usize].clone();
        for (name, ok) in [
            (p::BELIEF_EXCLUSION, p::belief_exclusion(&world)),
            (p::ZK_EXCLUSION, p::zk_exclusion(&world)),
            (p::NO_ORPHANS, p::no_orphans(&world)),
            (p::STALE_HOLDER, p::stale_holder(&world)),
            (p::BARRIER_WAITS, p::barrier_waits(&world)),
        ] {
            if !ok {
                self.violations.entry(name.to_string()).or_insert((state, None));
            }
        }
        if self.deadlock.is_none() && p::deadlock(&world) {
            self.deadlock = Some(state);
        }
        self.reached.extend(p::reached_items(&world));
    }

    /// The steps from the initial world to search state `state`.
    pub fn path(&self, mut state: u32) -> Vec<Step> {
        let mut steps = Vec::new();
        while let Some((parent, step)) = self.parents[state as usize] {
            steps.push(step);
            state = parent;
        }
        steps.reverse();
        steps
    }

    /// A shortest path from the initial world to world `w`.
    pub fn path_to_world(&self, w: u32) -> Vec<Step> {
        self.path(self.first_state[w as usize])
    }
}
