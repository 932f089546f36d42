//! ZooKeeper lock recipes written once as sans-IO state machines: the correct ones and the
//! classic broken ones, each tied to the real failure it reproduces.

pub mod barrier;
pub mod kazoo_lock;
pub mod naive;
pub mod queue;
pub mod registry;
pub mod sequential;
pub mod write_lock;

pub mod custom;

pub mod client_id_lock;
pub mod contender;
pub mod curator_mutex;
pub mod leader_election;
pub mod leader_latch;
pub mod timeout_lock;
pub mod work_queue;

pub mod curator_rw;
pub mod revocable;
pub mod rw_queue;
pub mod semaphore;
pub mod shared_lock;

pub use custom::Custom;
pub use registry::{
    build, entry, is_registered, register, registered, AnyRecipe, Entry, Flaw, CATALOGUE, TWO_HOLDERS_BREAK,
};
