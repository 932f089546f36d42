//! The built-in suite, what `zklab` runs with no arguments: the standard lock proven under
//! connection loss, disconnects and expiry; the holder-outlives-session lesson (belief broken,
//! fencing intact); and every broken variant caught by the property it breaks, the herd effect
//! included.

use crate::check::{Options, Report, Status};
use crate::scenario::{parse_faults, Scenario};
use zklab_model::ClientBehaviour::{self, Java, Kazoo};
use zklab_model::{Property, WorldConfig};

/// One entry: a scenario and the properties expected to be violated (all others must hold).
pub struct Case {
    pub recipe: &'static str,
    pub clients: usize,
    pub faults: &'static str,
    /// The client library's behaviour over a disconnect (kazoo drops its watches).
    pub client: ClientBehaviour,
    /// Where the lock's sequence counter starts (2147483647: at the 32-bit wrap).
    pub first_sequence: i32,
    pub violated: &'static [Property],
    pub lesson: &'static str,
}

pub const CASES: &[Case] = &[
    Case {
        recipe: "standard",
        clients: 2,
        faults: "loss-before-apply,loss-after-apply,disconnect,expire",
        client: Java,
        first_sequence: 0,
        violated: &[],
        lesson: "the recipe survives lost requests, lost replies, disconnects and expiry",
    },
    Case {
        recipe: "standard",
        clients: 3,
        faults: "loss-before-apply,loss-after-apply",
        client: Java,
        first_sequence: 0,
        violated: &[],
        lesson: "three contenders, requests lost before and after the server applies them",
    },
    Case {
        recipe: "standard",
        clients: 3,
        faults: "expire",
        client: Java,
        first_sequence: 0,
        violated: &[],
        lesson: "three contenders, one session expired under its holder or a waiter",
    },
    Case {
        recipe: "standard",
        clients: 2,
        faults: "expire,pause",
        client: Java,
        first_sequence: 0,
        violated: &[Property::BeliefExclusion, Property::StaleHolder],
        lesson: "holder-outlives-session: a paused holder believes past its expiry; the fencing token still protects \
            the resource",
    },
    Case {
        recipe: "naive",
        clients: 3,
        faults: "none",
        client: Java,
        first_sequence: 0,
        violated: &[Property::NoHerd],
        lesson: "herd-effect: one release wakes every waiter of the single-node lock (otherwise safe)",
    },
    Case {
        recipe: "parent-watch",
        clients: 3,
        faults: "none",
        client: Java,
        first_sequence: 0,
        violated: &[Property::NoHerd],
        lesson: "herd-effect: every create or delete wakes every waiter of the children-watch lock (otherwise safe)",
    },
    Case {
        recipe: "blind-retry",
        clients: 2,
        faults: "loss-after-apply",
        client: Java,
        first_sequence: 0,
        violated: &[Property::NoOrphans, Property::EventualAcquire],
        lesson: "orphan-after-connloss: the first node outlives the retry and blocks everyone",
    },
    Case {
        recipe: "naive-blind-delete",
        clients: 3,
        faults: "loss-after-apply",
        client: Java,
        first_sequence: 0,
        violated: &[Property::BeliefExclusion, Property::StaleHolder, Property::NoHerd],
        lesson: "blind-delete-retry: a retried delete of a reused name removes the next holder's node",
    },
    Case {
        recipe: "wait-on-null",
        clients: 2,
        faults: "none",
        client: Java,
        first_sequence: 0,
        violated: &[Property::EventualAcquire],
        lesson: "delete-before-watch: a watch on a vanished predecessor never fires",
    },
    Case {
        recipe: "rw-writer,rw-reader,rw-reader",
        clients: 3,
        faults: "none",
        client: Java,
        first_sequence: 0,
        violated: &[],
        lesson: "the recipes page read/write lock: readers share, a writer excludes everyone",
    },
    Case {
        recipe: "rw-reader,rw-writer",
        clients: 2,
        faults: "expire",
        client: Java,
        first_sequence: 0,
        violated: &[],
        lesson: "a reader and a writer, either session expired under its holder or a waiter",
    },
    Case {
        recipe: "curator-rw-reader,curator-rw-writer",
        clients: 2,
        faults: "loss-after-apply",
        client: Java,
        first_sequence: 0,
        violated: &[],
        lesson: "Curator's read/write lock adopts its protected node after a lost reply",
    },
    Case {
        recipe: "curator-rw-downgrade,curator-rw-reader",
        clients: 2,
        faults: "expire",
        client: Java,
        first_sequence: 0,
        violated: &[],
        lesson: "a writer downgrades to read (acquire read, release write) beside a reader",
    },
    Case {
        recipe: "curator-rw-downgrade-621,curator-rw-writer",
        clients: 2,
        faults: "none",
        client: Java,
        first_sequence: 0,
        violated: zklab_recipes::TWO_HOLDERS_BREAK,
        lesson: "downgrade-lets-writer-in: a downgraded read queued behind a waiting writer (CURATOR-276, CURATOR-621)",
    },
    Case {
        recipe: "curator-rw-writer,curator-rw-reader-211",
        clients: 2,
        faults: "expire",
        client: Java,
        first_sequence: 0,
        violated: &[Property::EventualAcquire],
        lesson: "rw-vanished-own-node: a reader whose node went with its session never notices (CURATOR-211)",
    },
    Case {
        recipe: "semaphore",
        clients: 2,
        faults: "loss-after-apply",
        client: Java,
        first_sequence: 0,
        violated: &[],
        lesson: "a two-lease semaphore: both leases in use at once, lost replies recovered",
    },
    Case {
        recipe: "semaphore-max1",
        clients: 2,
        faults: "expire",
        client: Java,
        first_sequence: 0,
        violated: &[],
        lesson: "a one-lease semaphore survives an expired session",
    },
    Case {
        recipe: "semaphore-forget-lease",
        clients: 2,
        faults: "loss-after-apply",
        client: Java,
        first_sequence: 0,
        violated: &[Property::NoOrphans, Property::EventualAcquire],
        lesson: "semaphore-lease-orphan: a lease whose create reply was lost is never returned",
    },
    Case {
        recipe: "revocable-writer,revocable-reader-deletion-only,revocable-reader-deletion-only",
        clients: 3,
        faults: "none",
        client: Java,
        first_sequence: 0,
        violated: &[Property::EventualAcquire],
        lesson: "revocation-consumes-watch: a request to unlock fires the other waiters' exists watches",
    },
    Case {
        recipe: "revocable-writer,revocable-reader",
        clients: 2,
        faults: "loss-after-apply",
        client: Java,
        first_sequence: 0,
        violated: &[],
        lesson: "the revocable lock: a waiter asks the node it waits on to unlock",
    },
    Case {
        recipe: "zk-write-lock",
        clients: 2,
        faults: "none",
        client: Java,
        first_sequence: 0,
        violated: &[Property::EventualAcquire],
        lesson:
            "write-lock-exists-null: ZooKeeper's WriteLock returns false when exists() on its predecessor is null, \
            and nothing wakes it",
    },
    Case {
        recipe: "kazoo-lock",
        clients: 2,
        faults: "expire",
        client: Java,
        first_sequence: 0,
        violated: &[Property::BeliefExclusion, Property::StaleHolder],
        lesson: "holder-ignores-session: kazoo's Lock never tells its holder that the session expired",
    },
    Case {
        recipe: "kazoo-lock",
        clients: 2,
        faults: "loss-before-apply,loss-after-apply,disconnect",
        client: Java,
        first_sequence: 0,
        violated: &[],
        lesson: "kazoo's Lock survives lost requests, lost replies and disconnects: it finds its node by its uuid \
            prefix",
    },
    Case {
        recipe: "release-under-connloss",
        clients: 2,
        faults: "loss-before-apply",
        client: Java,
        first_sequence: 0,
        violated: &[Property::NoOrphans, Property::EventualAcquire],
        lesson: "release-under-connloss: a release that forgets its node after a failed delete leaves it to block \
            everyone (CURATOR-678)",
    },
    Case {
        recipe: "container-lock",
        clients: 2,
        faults: "reap-parent,loss-after-apply,expire",
        client: Java,
        first_sequence: 0,
        violated: &[],
        lesson: "a lock on a container parent survives the server reaping it: recreate the parent on NoNode",
    },
    Case {
        recipe: "container-lock",
        clients: 3,
        faults: "reap-parent",
        client: Java,
        first_sequence: 0,
        violated: &[Property::FencingAvailable],
        lesson: "tokens-restart: the reaped parent is created again and its sequence counter restarts at 0, so the \
            next holder's token is below the last one and the resource refuses the rightful holder",
    },
    Case {
        recipe: "container-lock-no-recreate",
        clients: 2,
        faults: "reap-parent",
        client: Java,
        first_sequence: 0,
        violated: &[Property::EventualAcquire],
        lesson: "parent-reaped: the server reaps the empty container parent, the next create fails NoNode and nobody \
            recreates it (CURATOR-308)",
    },
    Case {
        recipe: "curator-mutex-498",
        clients: 2,
        faults: "loss-after-apply,lagging-session,expire",
        client: Java,
        first_sequence: 0,
        violated: &[Property::BeliefExclusion, Property::StaleHolder],
        lesson: "adopt-expired-node: after an expiry the new session is on a lagging follower, which still lists the \
            old protected node, and the mutex adopts it (CURATOR-498)",
    },
    Case {
        recipe: "leader-latch-644",
        clients: 2,
        faults: "disconnect",
        client: Java,
        first_sequence: 0,
        violated: &[Property::EventualAcquire],
        lesson:
            "leader-latch-livelock: after a reconnect two latches delete and recreate their nodes, each waking the \
            other, forever (CURATOR-644/645)",
    },
    Case {
        recipe: "leader-latch-696",
        clients: 2,
        faults: "lagging-session,expire",
        client: Java,
        first_sequence: 0,
        violated: &[Property::BeliefExclusion, Property::StaleHolder],
        lesson: "leader-latch-double-leader: after an expiry the new session is on a lagging follower, whose listing \
            shows the latch's old node first, and it leads beside the new leader (CURATOR-696)",
    },
    Case {
        recipe: "watches-not-rearmed",
        clients: 2,
        faults: "disconnect",
        client: Kazoo,
        first_sequence: 0,
        violated: &[Property::EventualAcquire],
        lesson: "watches-not-rearmed: under kazoo a waiter that ignores the reconnect never hears its predecessor go \
            (kazoo PR #170)",
    },
    Case {
        recipe: "timeout-lock",
        clients: 3,
        faults: "loss-after-apply",
        client: Java,
        first_sequence: 0,
        violated: &[],
        lesson: "a waiter that gives up deletes its node, found by its guid when the create's reply was lost",
    },
    Case {
        recipe: "timeout-lock-forget-node",
        clients: 2,
        faults: "loss-after-apply",
        client: Java,
        first_sequence: 0,
        violated: &[Property::NoOrphans, Property::EventualAcquire],
        lesson: "interrupt-after-create: giving up before the create's reply, the node is forgotten and blocks \
            everyone (CURATOR-79)",
    },
    Case {
        recipe: "client-id-lock",
        clients: 3,
        faults: "loss-after-apply",
        client: Java,
        first_sequence: 0,
        violated: &[],
        lesson: "the lock that keeps its client id as node data finds its node by reading each child after a lost \
            reply",
    },
    Case {
        recipe: "client-id-lock-nonode-fatal",
        clients: 2,
        faults: "loss-after-apply",
        client: Java,
        first_sequence: 0,
        violated: &[Property::NoOrphans],
        lesson: "getdata-nonode-fatal: a child gone between listing and getData fails the acquire and orphans its node",
    },
    Case {
        recipe: "standard",
        clients: 2,
        faults: "loss-after-apply",
        client: Java,
        first_sequence: i32::MAX,
        violated: &[Property::FencingAvailable],
        lesson: "tokens-wrap: at the 32-bit wrap the standard lock still orders -2147483648 after 2147483647 \
            (serial-number order), but a sequence number as fencing token goes backwards and the resource refuses the \
            rightful holder",
    },
    Case {
        recipe: "sequence-wrap",
        clients: 2,
        faults: "none",
        client: Java,
        first_sequence: i32::MAX,
        violated: zklab_recipes::TWO_HOLDERS_BREAK,
        lesson: "sequence-wrap: ordered as text, the node after the wrap sorts before the holder's (Curator's and \
            kazoo's sort)",
    },
    Case {
        recipe: "sequence-wrap-signed",
        clients: 2,
        faults: "none",
        client: Java,
        first_sequence: i32::MAX,
        violated: zklab_recipes::TWO_HOLDERS_BREAK,
        lesson: "sequence-wrap: ordered by the signed number, the node after the wrap sorts before the holder's \
            (ZooKeeper's WriteLock)",
    },
    Case {
        recipe: "curator-mutex",
        clients: 2,
        faults: "loss-before-apply,loss-after-apply,expire",
        client: Java,
        first_sequence: 0,
        violated: &[],
        lesson: "Curator's InterProcessMutex: protected create found again by prefix, getData watch, guaranteed delete",
    },
    Case {
        recipe: "curator-mutex-reenter-after-lost",
        clients: 2,
        faults: "expire",
        client: Java,
        first_sequence: 0,
        violated: &[Property::BeliefExclusion, Property::StaleHolder],
        lesson: "reenter-after-lost: the thread's re-entrant count outlives its session, and its next acquire returns \
            at once without a node (CURATOR-206)",
    },
    Case {
        recipe: "curator-mutex",
        clients: 2,
        faults: "expire,give-up",
        client: Java,
        first_sequence: 0,
        violated: &[],
        lesson: "Curator's InterProcessMutex, re-entrant: a nested acquire counts, LOST releases the count, a waiter \
            that gives up deletes its node",
    },
    Case {
        recipe: "leader-election",
        clients: 2,
        faults: "loss-before-apply,loss-after-apply,expire",
        client: Java,
        first_sequence: 0,
        violated: &[],
        lesson: "the recipes page leader election: one leader, handed on when it resigns or its session ends",
    },
    Case {
        recipe: "leader-latch",
        clients: 2,
        faults: "disconnect,expire",
        client: Java,
        first_sequence: 0,
        violated: &[],
        lesson: "Curator's LeaderLatch since CURATOR-644/645: lists again instead of resetting its node",
    },
    Case {
        recipe: "leader-latch-696-sync",
        clients: 2,
        faults: "loss-after-apply,lagging-session,expire",
        client: Java,
        first_sequence: 0,
        violated: &[],
        lesson: "a sync before every listing: the new session's listing is answered by a follower that has caught up, \
            so CURATOR-696's double leader is gone without the owner check",
    },
    Case {
        recipe: "standard",
        clients: 2,
        faults: "operator-delete",
        client: Java,
        first_sequence: 0,
        violated: &[Property::BeliefExclusion, Property::StaleHolder],
        lesson: "operator-delete: an operator deletes the holder's node, the next in line acquires while the holder \
            still believes; the fencing token still protects the resource",
    },
    Case {
        recipe: "barrier",
        clients: 2,
        faults: "loss-before-apply,loss-after-apply,disconnect",
        client: Java,
        first_sequence: 0,
        violated: &[],
        lesson: "ZooKeeper's double barrier (enter): no party passes before both entered, and both pass",
    },
    Case {
        recipe: "barrier-count",
        clients: 2,
        faults: "none",
        client: Java,
        first_sequence: 0,
        violated: &[Property::EventualAcquire],
        lesson: "barrier-without-ready: the first party passes and leaves before the other lists, which then never \
            sees both parties",
    },
    Case {
        recipe: "barrier-sequential",
        clients: 2,
        faults: "loss-after-apply",
        client: Java,
        first_sequence: 0,
        violated: &[Property::BarrierWaits],
        lesson: "barrier-double-count: a sequential create sent again after a lost reply makes two nodes of one \
            party, and it passes alone",
    },
    Case {
        recipe: "queue",
        clients: 2,
        faults: "loss-before-apply,loss-after-apply,disconnect",
        client: Java,
        first_sequence: 0,
        violated: &[],
        lesson: "a work queue taking items with a multi of the delete and a record of who took it: each item \
            processed once, none lost",
    },
    Case {
        recipe: "queue-optimistic",
        clients: 2,
        faults: "loss-before-apply",
        client: Java,
        first_sequence: 0,
        violated: &[Property::TakenOnce],
        lesson: "queue-taken-twice: a delete lost before it was applied is taken for success, and another consumer \
            takes the same item",
    },
    Case {
        recipe: "queue-lose-on-retry",
        clients: 2,
        faults: "loss-after-apply",
        client: Java,
        first_sequence: 0,
        violated: &[Property::EventualAcquire],
        lesson: "queue-item-lost: a delete sent again after a lost reply fails NoNode, the item is taken for \
            another's and lost",
    },
];

impl Case {
    pub fn scenario(&self) -> Scenario {
        let config = WorldConfig {
            faults: parse_faults(self.faults).expect("suite faults are valid"),
            client_behaviour: self.client,
            first_sequence: self.first_sequence,
            ..WorldConfig::default()
        };
        Scenario::new(self.recipe, self.clients, config).expect("suite scenarios are valid")
    }
}

/// The options every case runs with: each case names every property it breaks, and all the
/// others must hold, so each is judged (no stop at the first violation).
pub fn options(threads: usize) -> Options {
    Options { threads, stop_at_violation: false, ..Options::default() }
}

/// What `report` gets wrong about `case`: a property violated that should hold or the reverse,
/// a vacuous proof, an unknown verdict. Empty: the case is as expected.
pub fn unexpected(case: &Case, report: &Report) -> Vec<String> {
    let wrong = report.properties.iter().filter(|p| {
        (p.status == Status::Violated) != case.violated.iter().any(|v| v.name() == p.name)
            || p.status == Status::Vacuous
            || p.status == Status::Unknown
    });
    wrong.map(|p| format!("{} {:?}", p.name, p.status)).collect()
}
