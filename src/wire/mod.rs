//! ZooKeeper's wire format (jute), shared by both directions zklab speaks it in: as a client of a
//! real server (`real`, the op scripts) and as a server to real clients (`serve`).

pub mod jute;
