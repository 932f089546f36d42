//! An abstract ZooKeeper that matches ZooKeeper 3.8 wherever a lock recipe can observe it, the
//! client libraries' connection behaviour, and the explorable world in which recipes run.

pub mod cache;
pub mod children_order;
pub mod error;
pub mod event;
pub mod listing;
pub mod path;
pub mod property;
pub mod reduce;
pub mod request;
pub mod server;
pub mod stat;
pub mod tree;

pub use children_order::ChildrenOrder;
pub use error::ZkError;
pub use event::{EventType, SessionState, WatchedEvent};
pub use listing::{Listing, NameIter};
pub use path::PathError;
pub use property::{Property, Reach};
pub use reduce::renumber::{Collected, Lifted, Numbers, Renumber};
pub use reduce::rewrite::Rewrite;
pub use reduce::symmetry::{Renamer, Renaming};
pub use request::{CreateMode, Op, OpResult, Request, Response, SessionId, ZkResult};
pub use server::{
    Applied, Notification, Server, ServerConfig, SessionInfo, SessionStatus, Sessions, WatchKind, WatchTable,
};
pub use stat::Stat;
pub use tree::{DataTree, Node};
pub mod client;
pub mod recipe;
pub mod world;

pub use client::{ClientBehaviour, ClientWatches, JAVA_MAX_PACKET_BYTES};
pub use recipe::{Belief, ClientId, Ctx, Input, Mode, Recipe};
pub use world::{
    ClientFault, Fault, FaultBudget, FaultKind, RefusedReply, RequestFault, ServerEvent, Settle, Settled, Step, World,
    WorldConfig, UNBOUNDED_ROUNDS,
};
