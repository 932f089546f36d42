//! Helpers shared by the integration tests that check a reduction (symmetry, renumbering,
//! partial order) against real reachable states.

use std::collections::HashSet;
use zklab_model::{Recipe, World};

/// Up to `limit` distinct states reachable from `init`, breadth-first, as they are (unsettled).
pub fn reachable<R: Recipe>(init: World<R>, limit: usize) -> Vec<World<R>> {
    let mut seen = vec![init];
    let mut met: HashSet<World<R>> = seen.iter().cloned().collect();
    let mut at = 0;
    while at < seen.len() && seen.len() < limit {
        for step in seen[at].steps() {
            let mut next = seen[at].clone();
            next.apply(step).unwrap();
            if met.insert(next.clone()) {
                seen.push(next);
            }
        }
        at += 1;
    }
    seen
}
