//! The graph pass's parallel pipeline: helper threads expand a level's chunks side by side while
//! the merging thread numbers what they found in order, one chunk behind, so that while it
//! merges a chunk they expand the next. With one thread the same calls expand a chunk where it
//! is submitted. Either way chunks come back in the order they were submitted, which is what
//! keeps the graph, its counterexamples and its counts independent of the number of threads.

use super::intern::Packed;
use std::collections::{BTreeMap, VecDeque};
use std::sync::{mpsc, Arc, Mutex};
use std::thread::Scope;

/// What the pipeline's threads do with the states of a chunk: expand them in order (the
/// checker's `expand::Expander`). The pipeline knows nothing of what an expansion holds.
pub(in crate::check) trait Expand: Sync {
    /// What a level shares, read-only, with every thread that expands its chunks.
    type Shared: Clone + Send;
    /// What one thread remembers from one state to the next.
    type Local: Default;
    /// What expanding one state found.
    type Expansion: Send;
    /// Expands `states` in order.
    fn expand_all(&self, states: Vec<Packed>, shared: &Self::Shared, local: &mut Self::Local) -> Vec<Self::Expansion>;
}

/// States expanded per round: the helper threads expand a chunk side by side while the merging
/// thread numbers the one before in order. Small enough to bound the successors held at once,
/// large enough that handing out the work costs nothing.
pub(in crate::check) const CHUNK: usize = 4096;

/// Parts a chunk is cut into per helper thread, so that the helpers share it out evenly.
const PARTS_PER_HELPER: usize = 4;

/// A part of a chunk for a helper thread to expand: the chunk's number, the part's, its states
/// and what their level shares.
type Work<E> = (usize, usize, Vec<Packed>, <E as Expand>::Shared);

/// What a helper thread found in a part of a chunk.
type Done<E> = (usize, usize, Vec<<E as Expand>::Expansion>);

/// A chunk submitted and not yet taken back.
enum InFlight<X> {
    /// Expanded where it was submitted (no helpers).
    Expanded(Vec<X>),
    /// Handed to the helpers: its number and how many parts it was cut into.
    Sent { chunk: usize, parts: usize },
}

pub(in crate::check) struct Pipeline<'a, E: Expand> {
    expander: &'a E,
    helpers: usize,
    /// One queue of parts that every helper takes from: a helper slowed down (the merging
    /// thread shares the cores) leaves the next parts to the others. None without helpers.
    give: Option<mpsc::Sender<Work<E>>>,
    results: mpsc::Receiver<Done<E>>,
    /// Chunks submitted so far.
    submitted: usize,
    /// Chunks submitted and not taken back, oldest first.
    in_flight: VecDeque<InFlight<E::Expansion>>,
    /// Parts that came back before the chunks ahead of theirs were taken.
    arrived: BTreeMap<(usize, usize), Vec<E::Expansion>>,
    /// What this thread remembers when it expands the chunks itself (no helpers).
    local: E::Local,
}

impl<'a, E: Expand> Pipeline<'a, E> {
    /// Starts the helpers for a pass on `threads` threads: none for one thread, else one per
    /// thread beside the merging one. They live as long as `scope` (the pass): a thread started
    /// per chunk would start with an empty allocator heap each time and leave its pages to be
    /// reclaimed.
    pub(in crate::check) fn start<'scope>(scope: &'scope Scope<'scope, '_>, expander: &'a E, threads: usize) -> Self
    where
        'a: 'scope,
    {
        let (give, work) = mpsc::channel::<Work<E>>();
        let (done, results) = mpsc::channel::<Done<E>>();
        let work = Arc::new(Mutex::new(work));
        let helpers = if threads > 1 { threads } else { 0 };
        for _ in 0..helpers {
            let (done, work) = (done.clone(), work.clone());
            scope.spawn(move || {
                let mut local = E::Local::default();
                loop {
                    let next = work.lock().expect("no helper panics holding it").recv();
                    let Ok((chunk, part, states, checked)) = next else { return };
                    if done.send((chunk, part, expander.expand_all(states, &checked, &mut local))).is_err() {
                        return;
                    }
                }
            });
        }
        Pipeline {
            expander,
            helpers,
            give: (helpers > 0).then_some(give),
            results,
            submitted: 0,
            in_flight: VecDeque::new(),
            arrived: BTreeMap::new(),
            local: E::Local::default(),
        }
    }

    /// Whether another chunk may be submitted: with helpers, one is expanded while the one
    /// before is merged; alone, each is merged before the next is expanded.
    pub(in crate::check) fn has_room(&self) -> bool {
        self.in_flight.len() < if self.helpers > 0 { 2 } else { 1 }
    }

    /// Submits `chunk` for expansion, with what its level shares.
    pub(in crate::check) fn submit(&mut self, chunk: Vec<Packed>, checked: &E::Shared) {
        match &self.give {
            None => {
                let expanded = self.expander.expand_all(chunk, checked, &mut self.local);
                self.in_flight.push_back(InFlight::Expanded(expanded))
            }
            Some(give) => {
                let cut = split(chunk, self.helpers * PARTS_PER_HELPER);
                let parts = cut.len();
                for (part, states) in cut.into_iter().enumerate() {
                    give.send((self.submitted, part, states, checked.clone()))
                        .expect("helpers run until the pass ends");
                }
                self.in_flight.push_back(InFlight::Sent { chunk: self.submitted, parts });
            }
        }
        self.submitted += 1;
    }

    /// The expansions of the oldest chunk not yet taken back, in order, once all its parts are
    /// in (part by part: each is freed as soon as it is merged); none when no chunk is in flight.
    pub(in crate::check) fn next_in_order(&mut self) -> Option<impl Iterator<Item = E::Expansion>> {
        let (chunk, parts) = match self.in_flight.pop_front()? {
            InFlight::Expanded(expansions) => return Some(vec![expansions].into_iter().flatten()),
            InFlight::Sent { chunk, parts } => (chunk, parts),
        };
        while (0..parts).any(|part| !self.arrived.contains_key(&(chunk, part))) {
            let (chunk, part, expansions) = self.results.recv().expect("helpers run until the pass ends");
            self.arrived.insert((chunk, part), expansions);
        }
        let parts: Vec<_> = (0..parts).map(|part| self.arrived.remove(&(chunk, part)).unwrap_or_default()).collect();
        Some(parts.into_iter().flatten())
    }
}

/// Splits `states` into `parts` runs of about equal length, in order.
fn split<T>(mut states: Vec<T>, parts: usize) -> Vec<Vec<T>> {
    let part = states.len().div_ceil(parts.max(1)).max(1);
    let mut split = Vec::new();
    while states.len() > part {
        let rest = states.split_off(part);
        split.push(std::mem::replace(&mut states, rest));
    }
    split.push(states);
    split
}
