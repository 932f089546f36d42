//! Helpers shared by the integration tests that check a reduction (symmetry, renumbering)
//! against real reachable states.

use zklab_model::World;
use zklab_recipes::AnyRecipe;

/// Up to `limit` distinct states reachable from `init`, breadth-first, as they are (unsettled).
pub fn reachable(init: World<AnyRecipe>, limit: usize) -> Vec<World<AnyRecipe>> {
    let mut seen = vec![init];
    let mut at = 0;
    while at < seen.len() && seen.len() < limit {
        for step in seen[at].steps() {
            let mut next = seen[at].clone();
            next.apply(step).unwrap();
            if !seen.contains(&next) {
                seen.push(next);
            }
        }
        at += 1;
    }
    seen
}
