//! The checker's economics, kept apart from ZooKeeper's semantics: what lets it keep one state
//! where many behave alike. Renaming clients (`symmetry`), ranking sequence numbers and zxids
//! (`renumber`), the walk over messages both share (`rewrite`), and the memos that spare
//! deriving the same digest or numbers twice (`memo`). The world's side of each (choosing a
//! representative, settling a state, partial order) is in `world::reduce`; the server's and the
//! tree's in their own `reduce` modules. None of it changes what a recipe can observe.

pub mod memo;
pub mod renumber;
pub mod rewrite;
pub mod rewritten;
pub mod symmetry;
