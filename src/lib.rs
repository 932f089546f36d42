//! zklab proves or breaks ZooKeeper lock recipes: the same recipe code is explored exhaustively
//! under every interleaving and fault, and every counterexample is a replayable trace.

/// Prints a line to stdout; a closed pipe (`zklab ... | head`) ends the output quietly instead
/// of panicking.
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

/// Like `say!` without the newline.
#[macro_export]
macro_rules! say_raw {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stdout(), $($arg)*);
    }};
}

pub mod budget;
pub mod check;
#[cfg(feature = "cli")]
pub mod cli;
#[cfg(feature = "live")]
pub mod client_check;
pub mod conformance;
pub mod diagram;
pub mod exit;
#[cfg(feature = "cli")]
pub mod explore;
pub mod html;
pub mod interrupt;
pub mod manifest;
pub mod progress;
#[cfg(feature = "live")]
pub mod real;
pub mod scenario;
pub mod serve;
pub mod shard;
pub mod timeline;
pub mod trace;
pub mod trace_files;
pub mod user_files;
pub mod wire;

pub use zklab_model as model;
pub use zklab_recipes as recipes;
pub mod calibrate;
pub mod herd;
pub mod schedules;
pub mod simulate;
pub mod suite;

/// docs/writing-a-recipe.md, whose code is compiled and run as a doc test: the guide shows the
/// API as it is.
#[cfg(doctest)]
#[doc = include_str!("../docs/writing-a-recipe.md")]
pub struct WritingARecipe;
