//! zklab as a ZooKeeper server: the model (model/'s `Server`, the one the checker explores)
//! behind ZooKeeper's wire protocol, so that real client code in any language (the Java client,
//! kazoo, go-zookeeper, node-zookeeper-client, Curator) connects to it unchanged.
//!
//! - `codec`: frames in the server's direction (requests read, replies written);
//! - `served`: the model and its connections, without I/O: frames in, effects out;
//! - `four_letter`: `ruok`, `srvr`, `cons`, `wchc`, `dump`, `mntr` on the client port;
//! - `listener`: a loopback port, free-running (`zklab serve`).

pub mod codec;
pub mod four_letter;
pub mod listener;
pub mod served;

pub use listener::{start, Running};
pub use served::{Conn, Effect, Served, Tally};

/// ZooKeeper's default tickTime (zoo.cfg's 2000 ms), the tick a served model has unless asked
/// otherwise: a client then gets the session timeout it asks for as it would from ZooKeeper
/// (the model's own 100 ms tick would clamp a 10 s timeout to 2 s).
pub const ZOOKEEPER_TICK_MS: u32 = 2000;
