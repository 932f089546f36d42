//! The "Leader Election" of ZooKeeper's recipes page, as a `contender` style.
//!
//! **Source.** ZooKeeper's recipes page, "Leader Election".
//!
//! **What it does.** It creates `<guid>-n_` (ephemeral, sequential), calls exists() with a watch
//! on the next lower node (null: list again), leads when it is lowest, and after an expiry
//! volunteers again with a new node on the new session. The page says only "sequence number"; the
//! machine orders by serial-number arithmetic, right across the 32-bit wrap.
//!
//! **What it gets wrong.** `LEADER_ELECTION` (`leader-election`): nothing the model can show,
//! beyond what no election can prevent (a leader paused past its session's expiry).
//!
//! **What the model leaves out.** The guid is the client and its session, not a random guid;
//! the rest as every contender (see `contender`).

use crate::contender::{AfterExpiry, Naming, Recheck, Reentry, Style, Watch};
use crate::queue::Order;

/// The leader election of ZooKeeper's recipes page.
pub const LEADER_ELECTION: Style = Style {
    naming: Naming::Guid,
    marker: "-n_",
    watch: Watch::Exists,
    order: Order::Serial,
    on_predecessor_gone: Recheck::List,
    on_reconnect: Recheck::List,
    after_expiry: AfterExpiry::Rejoin,
    holder_resumes: false,
    session_check: false,
    owner_check: false,
    reentry: Reentry::None,
    sync_before_listing: false,
};
