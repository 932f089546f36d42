//! Dead watches: the checker forgets an exist watch on a sequential name that no create can
//! make again, so that states differing only in such watches are one.
//!
//! A recipe that calls exists on its predecessor after the predecessor is gone (the race the
//! standard lock handles by listing again) is left an exist watch on that name, on the server
//! and in its client library, for the rest of its session. The watch fires only when a node of
//! that name is created. A sequential create under the same parent never names it again: the
//! parent's counter has passed it and only grows (`Server::unrevivable`: `0 <= n < next_seq`).
//! Only the lock node's children are forgotten this way: they are the names recipes wait on,
//! and the lock node is the one parent whose deletion the reduction then has to watch for.
//!
//! **What a dead watch can change, and why that is nothing.** A state `s` and the same state
//! with its dead watches forgotten, `d(s)`, offer the same steps, and each step leads from them
//! to states `t` and `t'` with `d(t) = d(t')`, judged alike:
//! - Properties, coverage, herds, notifications routed and reply lengths never read a watch
//!   that does not fire, and the recipe never reads its library's watch table.
//! - A dead watch fires only on a create of its name: by a sequential create (impossible, above),
//!   or by hand (refused, below).
//! - A reconnect (Java's SetWatches) re-arms an exist watch on an absent node as an exist watch:
//!   still dead, and forgotten again. A data or child watch on an absent node fires NodeDeleted
//!   on reconnect: those are never forgotten (only the client's exist watches are, and the
//!   server's data-table entries on absent nodes, which are exist watches: a data watch on a
//!   node fires, and is consumed, when the node is deleted).
//! - An expiry or a crash drops the session's watches from both sides, dead or not.
//! - The checker's partial order reads whether a client holds a watch (a reconnect with none to
//!   re-arm sends nothing); it is argued on the states as settled, so it sees the reduced ones.
//!
//! So `d` is a bisimulation that every property respects: the reduced graph has a violation, a
//! deadlock or a fair cycle exactly where the full one does, each replaying on the unreduced
//! world (whose steps are the same).
//!
//! **When a name can come back**, and what the reduction does then:
//! - a create by hand (not sequential) of a name that reads as a sequential one, under the lock
//!   node whose counter has passed it, names a node that may carry a forgotten watch;
//! - a new lock node starts its counter at 0: the lock node deleted by a request while its
//!   counter is past 0 may be created again and count through the names again;
//! - the server reaping the parent (`reap-parent`) is the same, so while that fault may still
//!   strike no watch is forgotten (afterwards, the counter read is the new parent's).
//!
//! A step that does the first or the second makes settling refuse (`revival`), like a broken
//! renumbering claim, and the checker explores again without renumbering, which turns this
//! reduction off with it (`WorldConfig::renumber`). The differential test holds the whole to a
//! checker that forgets nothing, with recipes drawn to create such names by hand.

use crate::recipe::Recipe;
use crate::world::World;
use crate::{FaultKind, Request};

impl<R: Recipe> World<R> {
    /// Forgets every dead exist watch, on the server and in each client's library (see the
    /// module), where the reduction applies: with renumbering on and no reaping left to come.
    /// `about_to_change` is shown the state before it changes, if it does.
    pub(crate) fn forget_dead_watches(&mut self, about_to_change: impl FnOnce(&World<R>)) {
        if !self.derived.config.renumber || !self.fault_spent(FaultKind::ReapParent) {
            return;
        }
        let lock = &self.derived.config.lock_path;
        let dead = self.server.dead_data_watches(lock);
        // The names no create can make again, read off the tree, which forgetting leaves alone.
        let forgettable = |server: &crate::Server, path: &str| server.unrevivable_child(lock, path);
        // Only the clients that hold one are written, so clients shared with other states stay shared.
        let holders: Vec<usize> = (0..self.clients.len())
            .filter(|&i| self.clients[i].watches.has_dead_exist_watch(|path| forgettable(&self.server, path)))
            .collect();
        if dead.is_empty() && holders.is_empty() {
            return;
        }
        about_to_change(self);
        self.server.forget_data_watches(&dead);
        for i in holders {
            let server = &self.server;
            self.clients[i].watches.forget_dead_exist_watches(|path| forgettable(server, path));
        }
    }

    /// Why the last step could make a forgotten watch's name again, if it could (`revival`):
    /// settling refuses after it.
    pub fn revived(&self) -> Option<&str> {
        self.derived.outputs.revived.as_deref()
    }

    /// Why `request`, if it succeeds, could make a forgotten watch's name again (see the
    /// module): a create by hand of a sequential name the lock node's counter has passed, or the
    /// delete of the lock node once its counter is past 0. Asked before the request is applied.
    pub(crate) fn revival(&self, request: &Request) -> Option<String> {
        if !self.derived.config.renumber {
            return None;
        }
        if let Request::Multi { .. } = request {
            return request.writes().iter().find_map(|write| self.revival(write));
        }
        let lock = &self.derived.config.lock_path;
        match request {
            Request::Create { path, mode, .. } if !mode.is_sequential() => self
                .server
                .unrevivable_child(lock, path)
                .then(|| format!("a create by hand of {path}, a sequential name the lock node's counter has passed")),
            Request::Delete { path, .. } if path == lock => self
                .server
                .tree()
                .get(path)
                .is_some_and(|node| node.next_seq > 0)
                .then(|| format!("the delete of {path}, whose sequence counter a new lock node would start again")),
            _ => None,
        }
    }
}
