//! The recipes by name, as the command line and trace files refer to them.

use crate::kazoo_lock::KazooLock;
use crate::naive::NaiveLock;
use crate::sequential::{OnCreateLoss, OnMissingPredecessor, SequentialLock, Variant, WaitOn};
use crate::write_lock::WriteLock;
use zklab_model::{Belief, Ctx, Input, Recipe, Request};

/// A catalogue entry: what the recipe is, where it comes from, and what it gets wrong.
pub struct Entry {
    pub name: &'static str,
    pub summary: &'static str,
    /// `None` for a correct recipe; else the flaw and the properties it breaks.
    pub flaw: Option<Flaw>,
    build: fn(&str) -> AnyRecipe,
}

pub struct Flaw {
    pub bug: &'static str,
    pub breaks: &'static [&'static str],
}

const STANDARD: Variant = Variant {
    wait_on: WaitOn::Predecessor,
    on_create_loss: OnCreateLoss::FindOwnNode,
    on_missing_predecessor: OnMissingPredecessor::ListAgain,
};

pub const CATALOGUE: &[Entry] = &[
    Entry {
        name: "standard",
        summary: "ZooKeeper recipes page lock: guid-tagged ephemeral-sequential node, predecessor watch, recovery by listing after ConnectionLoss",
        flaw: None,
        build: |p| AnyRecipe::Sequential(SequentialLock::new("standard", p, STANDARD)),
    },
    Entry {
        name: "naive",
        summary: "single ephemeral node; every waiter watches it (safe, but a herd on every release)",
        flaw: None,
        build: |p| AnyRecipe::Naive(NaiveLock::new(p)),
    },
    Entry {
        name: "naive-blind-delete",
        summary: "single-node lock that retries its delete after a ConnectionLoss without checking the node is still its own",
        flaw: Some(Flaw { bug: "blind-delete-retry", breaks: &["belief_exclusion"] }),
        build: |p| AnyRecipe::Naive(NaiveLock::blind_delete(p)),
    },
    Entry {
        name: "parent-watch",
        summary: "sequential nodes, every waiter watches the parent's children (safe, but a herd on every change)",
        flaw: None,
        build: |p| AnyRecipe::Sequential(SequentialLock::new("parent-watch", p, Variant { wait_on: WaitOn::Parent, ..STANDARD })),
    },
    Entry {
        name: "blind-retry",
        summary: "standard lock that creates again after a ConnectionLoss instead of looking for its node",
        flaw: Some(Flaw { bug: "orphan-after-connloss", breaks: &["eventual_acquire", "no_orphans"] }),
        build: |p| AnyRecipe::Sequential(SequentialLock::new("blind-retry", p, Variant { on_create_loss: OnCreateLoss::CreateAgain, ..STANDARD })),
    },
    Entry {
        name: "wait-on-null",
        summary: "standard lock that waits for a notification even when exists() on its predecessor returned null",
        flaw: Some(Flaw { bug: "delete-before-watch", breaks: &["eventual_acquire"] }),
        build: |p| AnyRecipe::Sequential(SequentialLock::new("wait-on-null", p, Variant { on_missing_predecessor: OnMissingPredecessor::Wait, ..STANDARD })),
    },
    Entry {
        name: "zk-write-lock",
        summary: "ZooKeeper's zookeeper-recipes-lock WriteLock as written: stops waiting when exists() on its predecessor returns null, adopts a bare node name after ConnectionLoss, unlocks without retry, never watches its session",
        flaw: Some(Flaw { bug: "write-lock-exists-null", breaks: &["eventual_acquire"] }),
        build: |p| AnyRecipe::WriteLock(WriteLock::new(p)),
    },
    Entry {
        name: "kazoo-lock",
        summary: "kazoo's Lock as written: uuid-prefixed node found again after ConnectionLoss, predecessor watched with get, retries expiry too; the holder never watches its session",
        flaw: Some(Flaw { bug: "holder-ignores-session", breaks: &["belief_exclusion"] }),
        build: |p| AnyRecipe::Kazoo(KazooLock::new(p)),
    },
];

/// The catalogue entry called `name`.
pub fn entry(name: &str) -> Option<&'static Entry> {
    CATALOGUE.iter().find(|e| e.name == name)
}

/// A recipe by name for a lock at `lock_path`, or the list of names that exist.
pub fn build(name: &str, lock_path: &str) -> Result<AnyRecipe, String> {
    match entry(name) {
        Some(e) => Ok((e.build)(lock_path)),
        None => Err(format!(
            "unknown recipe `{name}` (known: {})",
            CATALOGUE.iter().map(|e| e.name).collect::<Vec<_>>().join(", ")
        )),
    }
}

/// Any recipe of the catalogue, so that one world can mix recipes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum AnyRecipe {
    Sequential(SequentialLock),
    Naive(NaiveLock),
    WriteLock(WriteLock),
    Kazoo(KazooLock),
}

impl Recipe for AnyRecipe {
    fn name(&self) -> String {
        match self {
            AnyRecipe::Sequential(r) => r.name(),
            AnyRecipe::Naive(r) => r.name(),
            AnyRecipe::WriteLock(r) => r.name(),
            AnyRecipe::Kazoo(r) => r.name(),
        }
    }
    fn handle(&mut self, ctx: &Ctx, input: Input, out: &mut Vec<Request>) {
        match self {
            AnyRecipe::Sequential(r) => r.handle(ctx, input, out),
            AnyRecipe::Naive(r) => r.handle(ctx, input, out),
            AnyRecipe::WriteLock(r) => r.handle(ctx, input, out),
            AnyRecipe::Kazoo(r) => r.handle(ctx, input, out),
        }
    }
    fn belief(&self) -> Belief {
        match self {
            AnyRecipe::Sequential(r) => r.belief(),
            AnyRecipe::Naive(r) => r.belief(),
            AnyRecipe::WriteLock(r) => r.belief(),
            AnyRecipe::Kazoo(r) => r.belief(),
        }
    }
    fn owned_node(&self) -> Option<&str> {
        match self {
            AnyRecipe::Sequential(r) => r.owned_node(),
            AnyRecipe::Naive(r) => r.owned_node(),
            AnyRecipe::WriteLock(r) => r.owned_node(),
            AnyRecipe::Kazoo(r) => r.owned_node(),
        }
    }
    fn waits_on_one_node(&self) -> bool {
        match self {
            AnyRecipe::Sequential(r) => r.waits_on_one_node(),
            AnyRecipe::Naive(r) => r.waits_on_one_node(),
            AnyRecipe::WriteLock(r) => r.waits_on_one_node(),
            AnyRecipe::Kazoo(r) => r.waits_on_one_node(),
        }
    }
}
