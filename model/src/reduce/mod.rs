//! The checker's economics, kept apart from ZooKeeper's semantics: what lets it keep one state
//! where many behave alike, in one wing. Renaming clients (`symmetry`), ranking sequence numbers
//! and zxids (`renumber`) and the walk over messages both share (`rewrite`); each part's side of
//! them: the world's (`world`: partial order, a state's class representative, settling, dead
//! watches, renumbering by replay), the server's (`server`) and the tree's (`tree`). What they
//! remember to be fast is in `crate::cache`. `World::apply` and `World::steps`, ZooKeeper's
//! side, never call any of it, and none of it changes what a recipe can observe.

pub mod renumber;
pub mod rewrite;
pub mod server;
pub mod symmetry;
pub mod tree;
pub mod world;
