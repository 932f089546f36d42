//! Random recipes for the differential test: small state machines over the real `Recipe` trait,
//! drawn from a seed. Each has a few phases, each phase a belief, and for every phase and every
//! kind of input (the application's acquire and release, each reply by outcome, watch events,
//! Disconnected, SyncConnected, Expired) an action: up to two requests from a menu of what lock
//! recipes do under the lock path (create a sequential or a named node, or a node below its own;
//! delete them; list with or without a watch; watch the predecessor with exists or getData;
//! write its sequence number into the lock node's data and read it back), whether to forget its
//! node, and the next phase. Most are broken, some loop forever, some back off and retry; that
//! is the point: the reference checker and the production checker must agree on all of them.
//!
//! - `program.rs`: the table. The base draw (`Program::from_seed`) never changes, so that the
//!   seeds of kept cases keep drawing the recipes they found; every later addition draws from
//!   a stream of its own (`with_application_steps`, `noting_outages`, `Program::drawn`).
//! - `extras.rs`: what a drawn program adds, each feature drawn on its own: a stat field read
//!   into a register, a number written into a node's data and read back, its own session id,
//!   comparisons with constants, offsets and numbers of other kinds, a fencing token that is
//!   its node's czxid or its register, contenders below an intermediate node (`/lock/d`), and
//!   the bounds (a write budget, a limit of requests in flight) that keep its graph finite, so
//!   that the reference checker can finish it.
//! - `numbers.rs`: those numbers with their kinds, which renumbering and renaming must follow.
//! - `recipe.rs`: one client's state over the `Recipe` trait.
//! - `case.rs`: the worlds the programs run in, one program or one per client.
//! - `usage.rs`: which features an exploration actually exercised, noted as the recipes run.
//! - `tally.rs`: how many compared cases used each feature, for the differential test's report.
//!
//! Claims. Every base program claims renumbering (it compares sequence numbers only with one
//! another and passes the ones it keeps through the renumbering) and symmetry (its node names
//! carry no client, except the named node `w-<client>`, renamed with it). Some order contenders
//! by the client number in their names (`ordered_by_client`): that breaks symmetry's contract
//! while still claiming it, as a careless user's recipe would. Some take the node numbered one
//! below their own for their predecessor (`reads_values`), as if sequence numbers had no gaps:
//! that breaks renumbering's contract while still claiming it. Drawn programs claim each with
//! a probability of its own, whether or not their additions keep the contract
//! (`Extras::keep_renumbering`, `Extras::keep_symmetry`): honest and dishonest claimers both.
//!
//! Drawn with `Program::noting_outages`, a recipe that is told of an outage while idle notes it
//! silently (it sends nothing and still believes idle) and acts on the application's next
//! acquire differently: a receive that changes nothing anyone sees but what a later acquire
//! does, the case that partial-order reduction must not take alone (condition C1). Random
//! tables make such a row too rarely for the test to find what goes wrong there.
#![allow(dead_code)]

mod case;
mod extras;
mod numbers;
mod program;
mod recipe;
mod tally;
pub mod usage;

// Each test that includes this module uses a part of it.
#[allow(unused_imports)]
pub use case::{case, Case, Mix};
#[allow(unused_imports)]
pub use program::{Op, Program, Variant};
pub use recipe::RandomRecipe;
#[allow(unused_imports)]
pub use tally::{Refusals, Tally};
