//! The integration tests, one binary: each file beside this one is a module of it. One binary
//! rather than one per file, because each was a crate of its own that linked the whole library
//! and built its own copies of the checker's generic code (docs/internals/performance.md, "CI's
//! stages"). Run one file's tests with `cargo test --release --test integration FILE::`, for
//! example `cargo test --release --test integration conformance::`.
//!
//! Four stay binaries of their own, for CI's stages that start real things: `examples`,
//! `signals` and `client_check` (a real ZooKeeper, real libraries) and `browser` (Chromium).

// Helpers several files share.
mod common;
mod oracle;
mod random;

mod applicability;
mod application;
mod budget;
mod builder;
mod calibrate;
mod changelog;
mod claims;
mod cli;
mod conformance;
mod cross_check;
mod dead_watches;
mod differential;
mod docs;
mod explore;
mod html;
mod identity;
mod lagging_reads;
mod leader_latch;
mod liveness;
mod manifest;
mod no_herd;
mod oracle_selftest;
mod packing;
mod partial_order;
mod proofs;
mod registered;
mod renumber;
mod replay;
mod schedules;
mod serve;
mod shards;
mod shared_locks;
mod simulate_cli;
mod sources;
mod swarm;
mod symmetry;
mod traces;
