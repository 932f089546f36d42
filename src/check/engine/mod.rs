//! The checker's storage engine: how the graph pass keeps states (packed into numbered parts,
//! `intern`), names and finds them (`index`, `fingerprints`), remembers the steps it took by
//! the parts they read (`transitions`), keeps what it numbered (`chunked`) and shares a level
//! out among threads (`pipeline`). Nothing here decides what a state means or whether a
//! property holds (a memoized step is what `World::apply` and the judges in `search` said of
//! it): a reader of the semantics may skip this wing. What each mechanism may cost a verdict (a
//! digest collision) is bounded in `index`; the differential test holds it to a checker without
//! any of it.

pub(super) mod chunked;
pub(super) mod fingerprints;
pub mod index;
pub(super) mod intern;
pub(super) mod pipeline;
pub(super) mod transitions;
