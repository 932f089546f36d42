//! The recipes by name, as the command line and trace files refer to them.

use crate::barrier::{self, Barrier};
use crate::client_id_lock::{ClientIdLock, OnDataNoNode};
use crate::contender::Contender;
use crate::curator_mutex::{CURATOR_MUTEX, CURATOR_MUTEX_BEFORE_498, CURATOR_MUTEX_REENTER_AFTER_LOST};
use crate::custom::Custom;
use crate::kazoo_lock::KazooLock;
use crate::leader_election::LEADER_ELECTION;
use crate::leader_latch::{
    LEADER_LATCH, LEADER_LATCH_BEFORE_644, LEADER_LATCH_BEFORE_696, LEADER_LATCH_BEFORE_696_SYNC,
};
use crate::naive::NaiveLock;
use crate::queue::{Order, Queue};
use crate::revocable::Revocable;
use crate::rw_queue::RwQueue;
use crate::semaphore::{OnLeaseLoss, Semaphore};
use crate::sequential::{
    OnCreateLoss, OnDeleteLoss, OnMissingParent, OnMissingPredecessor, OnReconnect, SequentialLock, Style, WaitOn,
    MARKER,
};
use crate::timeout_lock::{OnGiveUp, TimeoutLock};
use crate::work_queue::{Take, WorkQueue};
use crate::write_lock::WriteLock;
use crate::{curator_rw, shared_lock};
use zklab_model::{
    Belief, ClientId, Ctx, Input, Mode, Numbers, Property, Recipe, Renamer, Renaming, Renumber, Request,
};

/// A catalogue entry: what the recipe is, where it comes from, and what it gets wrong.
pub struct Entry {
    pub name: &'static str,
    pub summary: &'static str,
    /// `None` for a correct recipe; else the flaw and the properties it breaks.
    pub flaw: Option<Flaw>,
    build: Build,
}

/// How an entry builds its recipe for a lock path: the catalogue's given the entry's own name
/// (so that each name is written once), a registered recipe as its author wrote it.
#[derive(Clone, Copy)]
enum Build {
    Named(fn(&'static str, &str) -> AnyRecipe),
    Path(fn(&str) -> AnyRecipe),
}

impl Entry {
    /// An entry for a user's own recipe, built for a lock path by `build` (which wraps it with
    /// `AnyRecipe::custom`), to `register` beside the catalogue.
    pub const fn new(name: &'static str, summary: &'static str, build: fn(&str) -> AnyRecipe) -> Entry {
        Entry { name, summary, flaw: None, build: Build::Path(build) }
    }

    /// The same entry, with the flaw it is known to have.
    pub const fn with_flaw(self, flaw: Flaw) -> Entry {
        Entry { flaw: Some(flaw), ..self }
    }
}

/// Recipes a program added to the catalogue (`register`), found by name beside it.
static REGISTERED: std::sync::OnceLock<&'static [Entry]> = std::sync::OnceLock::new();

/// Adds a program's own recipes to the names everything looks up (`build`, `entry`): the
/// command line's `--recipe`, trace files, the explorer, the simulator. Once per process, and
/// no name may be one the catalogue has.
pub fn register(entries: &'static [Entry]) -> Result<(), String> {
    if let Some(taken) = entries.iter().find(|e| CATALOGUE.iter().any(|c| c.name == e.name)) {
        return Err(format!("recipe `{}` is already in the catalogue: give yours another name", taken.name));
    }
    if let Some((i, e)) = entries.iter().enumerate().find(|(i, e)| entries[..*i].iter().any(|d| d.name == e.name)) {
        return Err(format!("recipe `{}` is registered twice (entry {i})", e.name));
    }
    REGISTERED.set(entries).map_err(|_| "recipes can be registered once per process".to_string())
}

/// The recipes `register` added, if any.
pub fn registered() -> &'static [Entry] {
    REGISTERED.get().copied().unwrap_or(&[])
}

/// Whether `name` is a recipe the running program registered (not the catalogue's).
pub fn is_registered(name: &str) -> bool {
    registered().iter().any(|e| e.name == name)
}

pub struct Flaw {
    pub bug: &'static str,
    pub breaks: &'static [Property],
}

/// What a second holder, beside the real one and with a lower token, breaks (the node after the
/// counter's 32-bit wrap sorted first; a downgrade that lets a writer in beside a reader).
pub const TWO_HOLDERS_BREAK: &[Property] =
    &[Property::BeliefExclusion, Property::FencedExclusion, Property::ZkExclusion, Property::FencingAvailable];

const STANDARD: Style = Style::STANDARD;

pub const CATALOGUE: &[Entry] = &[
    Entry {
        name: "standard",
        summary: "ZooKeeper recipes page lock: guid-tagged ephemeral-sequential node, predecessor watch, recovery by \
            listing after ConnectionLoss",
        flaw: None,
        build: Build::Named(|name, p| AnyRecipe::Sequential(SequentialLock::new(name, p, STANDARD))),
    },
    Entry {
        name: NaiveLock::NAME,
        summary: "single ephemeral node; every waiter watches it (safe, but a herd on every release)",
        flaw: Some(Flaw { bug: "herd-effect", breaks: &[Property::NoHerd] }),
        build: Build::Named(|_, p| AnyRecipe::Naive(NaiveLock::new(p))),
    },
    Entry {
        name: NaiveLock::BLIND_DELETE_NAME,
        summary: "single-node lock that retries its delete after a ConnectionLoss without checking the node is still \
            its own (and herds like the single-node lock)",
        flaw: Some(Flaw {
            bug: "blind-delete-retry",
            breaks: &[Property::BeliefExclusion, Property::StaleHolder, Property::NoHerd],
        }),
        build: Build::Named(|_, p| AnyRecipe::Naive(NaiveLock::blind_delete(p))),
    },
    Entry {
        name: "parent-watch",
        summary: "sequential nodes, every waiter watches the parent's children (safe, but a herd on every change)",
        flaw: Some(Flaw { bug: "herd-effect", breaks: &[Property::NoHerd] }),
        build: Build::Named(|name, p| {
            AnyRecipe::Sequential(SequentialLock::new(name, p, Style { wait_on: WaitOn::Parent, ..STANDARD }))
        }),
    },
    Entry {
        name: "blind-retry",
        summary: "standard lock that creates again after a ConnectionLoss instead of looking for its node",
        flaw: Some(Flaw { bug: "orphan-after-connloss", breaks: &[Property::EventualAcquire, Property::NoOrphans] }),
        build: Build::Named(|name, p| {
            AnyRecipe::Sequential(SequentialLock::new(
                name,
                p,
                Style { on_create_loss: OnCreateLoss::CreateAgain, ..STANDARD },
            ))
        }),
    },
    Entry {
        name: "wait-on-null",
        summary: "standard lock that waits for a notification even when exists() on its predecessor returned null",
        flaw: Some(Flaw { bug: "delete-before-watch", breaks: &[Property::EventualAcquire] }),
        build: Build::Named(|name, p| {
            AnyRecipe::Sequential(SequentialLock::new(
                name,
                p,
                Style { on_missing_predecessor: OnMissingPredecessor::Wait, ..STANDARD },
            ))
        }),
    },
    Entry {
        name: "rw-reader",
        summary: "ZooKeeper recipes page shared lock, read side: read- node, waits on the last write- node before it",
        flaw: None,
        build: Build::Named(|name, p| AnyRecipe::Shared(shared_lock::reader(name, p))),
    },
    Entry {
        name: "rw-writer",
        summary: "ZooKeeper recipes page shared lock, write side: write- node, waits on the node just before it",
        flaw: None,
        build: Build::Named(|name, p| AnyRecipe::Shared(shared_lock::writer(name, p))),
    },
    Entry {
        name: "curator-rw-reader",
        summary: "Curator InterProcessReadWriteLock read side: __READ__ node, waits on the first __WRIT__ node, \
            getData watch",
        flaw: None,
        build: Build::Named(|name, p| AnyRecipe::Shared(curator_rw::reader(name, p))),
    },
    Entry {
        name: "curator-rw-writer",
        summary: "Curator InterProcessReadWriteLock write side: __WRIT__ node, waits on its predecessor, getData watch",
        flaw: None,
        build: Build::Named(|name, p| AnyRecipe::Shared(curator_rw::writer(name, p))),
    },
    Entry {
        name: "curator-rw-downgrade",
        summary: "Curator InterProcessReadWriteLock writer that downgrades: acquires read while holding write, then \
            releases write",
        flaw: None,
        build: Build::Named(|name, p| AnyRecipe::Shared(curator_rw::downgrading_writer(name, p))),
    },
    Entry {
        name: "curator-rw-downgrade-621",
        summary: "Curator downgrade before CURATOR-621: the read node queues behind a waiting writer, which gets the \
            write lock beside it",
        flaw: Some(Flaw { bug: "downgrade-lets-writer-in", breaks: TWO_HOLDERS_BREAK }),
        build: Build::Named(|name, p| AnyRecipe::Shared(curator_rw::downgrading_writer_before_621(name, p))),
    },
    Entry {
        name: "curator-rw-reader-211",
        summary: "Curator read side before CURATOR-211: a missing own node goes unnoticed, the reader watches the \
            first write node or throws",
        flaw: Some(Flaw { bug: "rw-vanished-own-node", breaks: &[Property::EventualAcquire] }),
        build: Build::Named(|name, p| AnyRecipe::Shared(curator_rw::reader_before_211(name, p))),
    },
    Entry {
        name: "semaphore",
        summary: "Curator InterProcessSemaphoreV2-style semaphore, 2 leases: mutex-guarded lease creation, leases \
            children watched",
        flaw: None,
        build: Build::Named(|name, p| AnyRecipe::Semaphore(Semaphore::new(name, p, 2, OnLeaseLoss::FindOwnLease))),
    },
    Entry {
        name: "semaphore-max1",
        summary: "the same semaphore with a single lease",
        flaw: None,
        build: Build::Named(|name, p| AnyRecipe::Semaphore(Semaphore::new(name, p, 1, OnLeaseLoss::FindOwnLease))),
    },
    Entry {
        name: "semaphore-forget-lease",
        summary: "single-lease semaphore that fails the acquire after a ConnectionLoss on its lease create without \
            looking for the lease",
        flaw: Some(Flaw { bug: "semaphore-lease-orphan", breaks: &[Property::EventualAcquire, Property::NoOrphans] }),
        build: Build::Named(|name, p| AnyRecipe::Semaphore(Semaphore::new(name, p, 1, OnLeaseLoss::GiveUp))),
    },
    Entry {
        name: "revocable-reader",
        summary: "ZooKeeper recipes page revocable shared lock, read side: watches its own node, gives up \
            on \"unlock\"",
        flaw: None,
        build: Build::Named(|name, p| AnyRecipe::Revocable(Revocable::new(name, shared_lock::reader(name, p)))),
    },
    Entry {
        name: "revocable-writer",
        summary: "ZooKeeper recipes page revocable shared lock, write side: asks the node it waits on to unlock",
        flaw: None,
        build: Build::Named(|name, p| AnyRecipe::Revocable(Revocable::new(name, shared_lock::writer(name, p)))),
    },
    Entry {
        name: "revocable-reader-deletion-only",
        summary: "revocable shared lock whose waiting readers wake only on the deletion of the node they watch, as in \
            the plain shared lock",
        flaw: Some(Flaw { bug: "revocation-consumes-watch", breaks: &[Property::EventualAcquire] }),
        build: Build::Named(|name, p| {
            AnyRecipe::Revocable(Revocable::waking_on_deletion_only(name, shared_lock::reader(name, p)))
        }),
    },
    Entry {
        name: WriteLock::NAME,
        summary: "ZooKeeper's zookeeper-recipes-lock WriteLock as written: stops waiting when exists() on its \
            predecessor returns null, adopts a bare node name after ConnectionLoss, unlocks without retry, never \
            watches its session",
        flaw: Some(Flaw { bug: "write-lock-exists-null", breaks: &[Property::EventualAcquire] }),
        build: Build::Named(|_, p| AnyRecipe::WriteLock(WriteLock::new(p))),
    },
    Entry {
        name: KazooLock::NAME,
        summary: "kazoo's Lock as written: uuid-prefixed node found again after ConnectionLoss, predecessor watched \
            with get, retries expiry too; the holder never watches its session",
        flaw: Some(Flaw { bug: "holder-ignores-session", breaks: &[Property::BeliefExclusion, Property::StaleHolder] }),
        build: Build::Named(|_, p| AnyRecipe::Kazoo(KazooLock::new(p))),
    },
    Entry {
        name: "release-under-connloss",
        summary: "standard lock whose release drops its state when the delete fails with ConnectionLoss (CURATOR-678, \
            CURATOR-307): an unapplied delete leaves the node, and the waiters wait until the session ends",
        flaw: Some(Flaw { bug: "release-under-connloss", breaks: &[Property::EventualAcquire, Property::NoOrphans] }),
        build: Build::Named(|name, p| {
            AnyRecipe::Sequential(SequentialLock::new(
                name,
                p,
                Style { on_delete_loss: OnDeleteLoss::Forget, ..STANDARD },
            ))
        }),
    },
    Entry {
        name: "watches-not-rearmed",
        summary: "standard lock that ignores the reconnect and trusts its watch (kazoo PR #170): under a client that \
            drops watches on disconnect (--client kazoo) a predecessor deleted during the outage never wakes it",
        flaw: Some(Flaw { bug: "watches-not-rearmed", breaks: &[Property::EventualAcquire] }),
        build: Build::Named(|name, p| {
            AnyRecipe::Sequential(SequentialLock::new(
                name,
                p,
                Style { on_reconnect: OnReconnect::KeepWaiting, ..STANDARD },
            ))
        }),
    },
    Entry {
        name: "container-lock",
        summary: "standard lock on a container parent (as Curator makes it): after the server reaps the empty parent, \
            a create that fails NoNode creates the parent again and retries",
        flaw: None,
        build: Build::Named(|name, p| {
            AnyRecipe::Sequential(SequentialLock::new(
                name,
                p,
                Style { on_missing_parent: OnMissingParent::Recreate, ..STANDARD },
            ))
        }),
    },
    Entry {
        name: "container-lock-no-recreate",
        summary: "standard lock on a container parent that assumes the parent exists (CURATOR-308): once the server \
            reaps it, the create fails NoNode and the client waits for a lock it never asked for",
        flaw: Some(Flaw { bug: "parent-reaped", breaks: &[Property::EventualAcquire] }),
        build: Build::Named(|name, p| AnyRecipe::Sequential(SequentialLock::new(name, p, STANDARD))),
    },
    Entry {
        name: "timeout-lock",
        summary: "standard lock acquired with a timeout that runs out during an outage (given up on Disconnected): \
            deletes its node for sure, finding it by guid if the create's reply was lost",
        flaw: None,
        build: Build::Named(|name, p| AnyRecipe::Timeout(TimeoutLock::new(name, p, STANDARD, OnGiveUp::DeleteNode))),
    },
    Entry {
        name: "timeout-lock-forget-node",
        summary:
            "timeout lock that, giving up before the create's reply came, assumes the create failed (CURATOR-79): \
            the node it made blocks everyone",
        flaw: Some(Flaw { bug: "interrupt-after-create", breaks: &[Property::EventualAcquire, Property::NoOrphans] }),
        build: Build::Named(|name, p| {
            AnyRecipe::Timeout(TimeoutLock::new(name, p, STANDARD, OnGiveUp::ForgetUnknownNode))
        }),
    },
    Entry {
        name: "client-id-lock",
        summary: "sequential lock whose nodes carry the client id as data, not in the name; after ConnectionLoss it \
            lists the children and reads each one's data to find its node, skipping children gone meanwhile",
        flaw: None,
        build: Build::Named(|name, p| AnyRecipe::ClientId(ClientIdLock::new(name, p, OnDataNoNode::Skip))),
    },
    Entry {
        name: "client-id-lock-nonode-fatal",
        summary: "client-id lock whose recovery fails the acquire when a child vanishes between the listing and its \
            getData (as CURATOR-358's getLeader threw NoNode): its own node, created but not yet found, is left behind",
        flaw: Some(Flaw { bug: "getdata-nonode-fatal", breaks: &[Property::NoOrphans] }),
        build: Build::Named(|name, p| AnyRecipe::ClientId(ClientIdLock::new(name, p, OnDataNoNode::Fail))),
    },
    Entry {
        name: "sequence-wrap",
        summary: "standard lock that orders contenders by the text of the counter, as Curator's and kazoo's sorts do \
            (ZOOKEEPER-4372): after the 32-bit wrap `-2147483648` sorts before the holder's `2147483647` (try \
            --first-sequence 2147483647)",
        flaw: Some(Flaw { bug: "sequence-wrap", breaks: TWO_HOLDERS_BREAK }),
        build: Build::Named(|name, p| {
            AnyRecipe::Sequential(SequentialLock::new(
                name,
                p,
                Style { queue: Queue::new(MARKER, Order::Text), ..STANDARD },
            ))
        }),
    },
    Entry {
        name: "sequence-wrap-signed",
        summary: "standard lock that orders contenders by the signed counter, as ZooKeeper's WriteLock parses it: the \
            first node after the 32-bit wrap sorts before the holder's (try --first-sequence 2147483647)",
        flaw: Some(Flaw { bug: "sequence-wrap", breaks: TWO_HOLDERS_BREAK }),
        build: Build::Named(|name, p| {
            AnyRecipe::Sequential(SequentialLock::new(
                name,
                p,
                Style { queue: Queue::new(MARKER, Order::Signed), ..STANDARD },
            ))
        }),
    },
    Entry {
        name: "curator-mutex",
        summary: "Curator's InterProcessMutex: protected `_c_<uuid>-lock-` node found by its prefix after \
            ConnectionLoss (a changed session deletes it instead), predecessor read with getData, children sorted as \
            text, guaranteed delete on release; re-entrant (a per-thread count, one nested acquire); the holder \
            listens to the connection as Curator's docs ask and releases on LOST",
        flaw: None,
        build: Build::Named(|name, p| AnyRecipe::Contender(Contender::new(name, p, CURATOR_MUTEX))),
    },
    Entry {
        name: "curator-mutex-reenter-after-lost",
        summary: "Curator's InterProcessMutex, re-entrant, whose application only notes LOST: the thread's lock count \
            outlives the session, and the thread's next acquire returns at once, counted, with no node (CURATOR-206)",
        flaw: Some(Flaw { bug: "reenter-after-lost", breaks: &[Property::BeliefExclusion, Property::StaleHolder] }),
        build: Build::Named(|name, p| AnyRecipe::Contender(Contender::new(name, p, CURATOR_MUTEX_REENTER_AFTER_LOST))),
    },
    Entry {
        name: "leader-election",
        summary: "ZooKeeper recipes page leader election: guid-n_ ephemeral-sequential node, exists() watch on the \
            next lower node, lead when lowest, volunteer again after expiry",
        flaw: None,
        build: Build::Named(|name, p| AnyRecipe::Contender(Contender::new(name, p, LEADER_ELECTION))),
    },
    Entry {
        name: "leader-latch",
        summary: "Curator's LeaderLatch since CURATOR-696: protected latch- node, getData watch on its predecessor, \
            lists again when it is gone or on reconnect; not leader while suspended; keeps its node's path through an \
            expiry and lists on the new session; first in line, leads only if its node's ephemeral owner is its \
            session, else resets",
        flaw: None,
        build: Build::Named(|name, p| AnyRecipe::Contender(Contender::new(name, p, LEADER_LATCH))),
    },
    Entry {
        name: "curator-mutex-498",
        summary: "Curator's InterProcessMutex before CURATOR-498: after an expiry its protected create finds its old \
            node (a lagging follower still lists it) and adopts it without asking whose session owns it",
        flaw: Some(Flaw { bug: "adopt-expired-node", breaks: &[Property::BeliefExclusion, Property::StaleHolder] }),
        build: Build::Named(|name, p| AnyRecipe::Contender(Contender::new(name, p, CURATOR_MUTEX_BEFORE_498))),
    },
    Entry {
        name: "leader-latch-696",
        summary:
            "Curator's LeaderLatch before CURATOR-696: after an expiry a lagging listing still shows its old node \
            first and it leads without checking the node's ephemeral owner",
        flaw: Some(Flaw {
            bug: "leader-latch-double-leader",
            breaks: &[Property::BeliefExclusion, Property::StaleHolder],
        }),
        build: Build::Named(|name, p| AnyRecipe::Contender(Contender::new(name, p, LEADER_LATCH_BEFORE_696))),
    },
    Entry {
        name: "leader-latch-644",
        summary: "Curator's LeaderLatch before CURATOR-644/645: resets (deletes its node and creates a new one) on \
            every reconnect and whenever its predecessor is gone at the getData; after one disconnect two latches can \
            reset each other forever",
        flaw: Some(Flaw { bug: "leader-latch-livelock", breaks: &[Property::EventualAcquire] }),
        build: Build::Named(|name, p| AnyRecipe::Contender(Contender::new(name, p, LEADER_LATCH_BEFORE_644))),
    },
    Entry {
        name: "leader-latch-696-sync",
        summary: "Curator's LeaderLatch before CURATOR-696 with a sync of the latch path before every listing: the \
            follower catches up first, so the new session's listing no longer shows its expired node",
        flaw: None,
        build: Build::Named(|name, p| AnyRecipe::Contender(Contender::new(name, p, LEADER_LATCH_BEFORE_696_SYNC))),
    },
    Entry {
        name: "barrier",
        summary: "ZooKeeper's double barrier, its enter half, for 2 parties: watch ready, create the party's own \
            ephemeral node, list; the last to come creates ready, the others pass when it appears",
        flaw: None,
        build: Build::Named(|name, p| AnyRecipe::Barrier(Barrier::new(name, p, barrier::Style::Ready))),
    },
    Entry {
        name: "barrier-count",
        summary: "a barrier without ready: passes when its listing shows every party, so the first to pass and \
            leave strands a party that has not listed yet",
        flaw: Some(Flaw { bug: "barrier-without-ready", breaks: &[Property::EventualAcquire] }),
        build: Build::Named(|name, p| AnyRecipe::Barrier(Barrier::new(name, p, barrier::Style::Count))),
    },
    Entry {
        name: "barrier-sequential",
        summary: "a barrier whose parties create sequential nodes and create again after a lost reply: one party's \
            two nodes count as two and the other passes before every party has entered",
        flaw: Some(Flaw { bug: "barrier-double-count", breaks: &[Property::BarrierWaits] }),
        build: Build::Named(|name, p| AnyRecipe::Barrier(Barrier::new(name, p, barrier::Style::Sequential))),
    },
    Entry {
        name: "queue",
        summary: "a work queue (ZooKeeper's recipes page, kazoo's Queue): each client puts an item and takes the \
            lowest with a multi of its delete and a record of who took it, read back after a lost reply",
        flaw: None,
        build: Build::Named(|name, p| AnyRecipe::Queue(WorkQueue::new(name, p, Take::Recorded))),
    },
    Entry {
        name: "queue-optimistic",
        summary: "a work queue whose consumer takes a lost reply to its delete for success: the item may still be \
            there, and another consumer processes it too",
        flaw: Some(Flaw { bug: "queue-taken-twice", breaks: &[Property::TakenOnce] }),
        build: Build::Named(|name, p| AnyRecipe::Queue(WorkQueue::new(name, p, Take::Optimistic))),
    },
    Entry {
        name: "queue-lose-on-retry",
        summary: "a work queue whose consumer deletes again after a lost reply, as kazoo's retry does: NoNode is \
            taken for another's take, the item is lost and a consumer waits forever",
        flaw: Some(Flaw { bug: "queue-item-lost", breaks: &[Property::EventualAcquire] }),
        build: Build::Named(|name, p| AnyRecipe::Queue(WorkQueue::new(name, p, Take::Retry))),
    },
];

/// The entry called `name`, in the catalogue or among the registered recipes.
pub fn entry(name: &str) -> Option<&'static Entry> {
    CATALOGUE.iter().chain(registered()).find(|e| e.name == name)
}

/// A recipe by name for a lock at `lock_path`, or the list of names that exist.
pub fn build(name: &str, lock_path: &str) -> Result<AnyRecipe, String> {
    match entry(name) {
        Some(e) => Ok(match e.build {
            Build::Named(build) => build(e.name, lock_path),
            Build::Path(build) => build(lock_path),
        }),
        None => Err(format!(
            "unknown recipe `{name}` (known: {}; a recipe your own program registers with `zklab::cli::main_with` is \
             known to that program only: run its `replay`, `simulate` or `real` there)",
            CATALOGUE.iter().chain(registered()).map(|e| e.name).collect::<Vec<_>>().join(", ")
        )),
    }
}

/// Any recipe of the catalogue, so that one world can mix recipes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum AnyRecipe {
    Sequential(SequentialLock),
    Naive(NaiveLock),
    Shared(RwQueue),
    Semaphore(Semaphore),
    Revocable(Revocable),
    WriteLock(WriteLock),
    Kazoo(KazooLock),
    Timeout(TimeoutLock),
    ClientId(ClientIdLock),
    Contender(Contender),
    Barrier(Barrier),
    Queue(WorkQueue),
    /// A user's own recipe (see `crate::custom`).
    Custom(Custom),
}

impl AnyRecipe {
    /// A user's own recipe, to run beside the catalogue's.
    pub fn custom<R: Recipe>(recipe: R) -> AnyRecipe {
        AnyRecipe::Custom(Custom::new(recipe))
    }
}

/// Calls the same method on whichever recipe `self` holds; `wrap` rewraps a returned recipe.
macro_rules! each {
    ($self:expr, $r:ident => $call:expr) => {
        match $self {
            AnyRecipe::Sequential($r) => $call,
            AnyRecipe::Naive($r) => $call,
            AnyRecipe::Shared($r) => $call,
            AnyRecipe::Semaphore($r) => $call,
            AnyRecipe::Revocable($r) => $call,
            AnyRecipe::WriteLock($r) => $call,
            AnyRecipe::Kazoo($r) => $call,
            AnyRecipe::Timeout($r) => $call,
            AnyRecipe::ClientId($r) => $call,
            AnyRecipe::Contender($r) => $call,
            AnyRecipe::Barrier($r) => $call,
            AnyRecipe::Queue($r) => $call,
            AnyRecipe::Custom($r) => $call,
        }
    };
    (wrap $self:expr, $r:ident => $call:expr) => {
        match $self {
            AnyRecipe::Sequential($r) => $call.map(AnyRecipe::Sequential),
            AnyRecipe::Naive($r) => $call.map(AnyRecipe::Naive),
            AnyRecipe::Shared($r) => $call.map(AnyRecipe::Shared),
            AnyRecipe::Semaphore($r) => $call.map(AnyRecipe::Semaphore),
            AnyRecipe::Revocable($r) => $call.map(AnyRecipe::Revocable),
            AnyRecipe::WriteLock($r) => $call.map(AnyRecipe::WriteLock),
            AnyRecipe::Kazoo($r) => $call.map(AnyRecipe::Kazoo),
            AnyRecipe::Timeout($r) => $call.map(AnyRecipe::Timeout),
            AnyRecipe::ClientId($r) => $call.map(AnyRecipe::ClientId),
            AnyRecipe::Contender($r) => $call.map(AnyRecipe::Contender),
            AnyRecipe::Barrier($r) => $call.map(AnyRecipe::Barrier),
            AnyRecipe::Queue($r) => $call.map(AnyRecipe::Queue),
            AnyRecipe::Custom($r) => $call.map(AnyRecipe::Custom),
        }
    };
}

impl Recipe for AnyRecipe {
    fn name(&self) -> String {
        each!(self, r => r.name())
    }
    fn handle(&mut self, ctx: &Ctx, input: Input, out: &mut Vec<Request>) {
        each!(self, r => r.handle(ctx, input, out))
    }
    fn belief(&self) -> Belief {
        each!(self, r => r.belief())
    }
    fn mode(&self) -> Mode {
        each!(self, r => r.mode())
    }
    fn owned_node(&self) -> Option<&str> {
        each!(self, r => r.owned_node())
    }
    fn owned_nodes(&self) -> Vec<&str> {
        each!(self, r => r.owned_nodes())
    }
    fn waits_on_one_node(&self) -> bool {
        each!(self, r => r.waits_on_one_node())
    }
    fn accepts_reentry(&self) -> bool {
        each!(self, r => r.accepts_reentry())
    }
    fn can_abandon(&self) -> bool {
        each!(self, r => r.can_abandon())
    }
    fn applies(&self, property: Property) -> bool {
        each!(self, r => r.applies(property))
    }
    fn renamed(&self, renamer: &Renamer) -> Option<Self> {
        each!(wrap self, r => r.renamed(renamer))
    }
    fn rename_name(&self, name: &str, renaming: &Renaming) -> String {
        each!(self, r => r.rename_name(name, renaming))
    }
    fn renumbered(&self, client: ClientId, n: &Renumber) -> Option<Self> {
        each!(wrap self, r => r.renumbered(client, n))
    }
    fn renumbered_by_replay(&self) -> bool {
        each!(self, r => r.renumbered_by_replay())
    }
    fn renumber_name(&self, name: &str, n: &Numbers) -> String {
        each!(self, r => r.renumber_name(name, n))
    }
    fn renumber_data(&self, data: &str, n: &Numbers) -> Option<String> {
        each!(self, r => r.renumber_data(data, n))
    }
    fn renumber_token(&self, token: i64, n: &Numbers) -> i64 {
        each!(self, r => r.renumber_token(token, n))
    }
}
