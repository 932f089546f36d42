//! zklab proves or breaks ZooKeeper lock recipes: the same recipe code is explored exhaustively
//! under every interleaving and fault, and every counterexample is a replayable trace.

pub mod check;
pub mod scenario;
pub mod timeline;
pub mod trace;

pub use zklab_model as model;
pub use zklab_recipes as recipes;
pub mod suite;
