//! The tests that start real components: a real ZooKeeper (Debian's `zookeeper`), kazoo, a JVM
//! with Curator and ZooKeeper's WriteLock, Go with go-zookeeper, Node with node-zookeeper-client.
//! `cargo test` leaves them out (`test = false` in Cargo.toml), since a fresh machine has none of
//! them; they run by name, `cargo test --release --test real` (`.ci/run` installs what they need
//! and runs them). They share every build with `cargo test`: no feature switches them on. A
//! client-check campaign runs alone, never beside another or beside a test that starts a real
//! ZooKeeper (`support/gate.rs` says why).

#[path = "support/commands.rs"]
mod commands;
#[path = "support/gate.rs"]
mod gate;
#[path = "support/stopping.rs"]
mod stopping;

#[path = "real/client_check.rs"]
mod client_check;
#[path = "real/examples.rs"]
mod examples;
#[path = "real/signals.rs"]
mod signals;
