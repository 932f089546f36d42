//! The standard lock acquired with a timeout.
//!
//! **Source.** Curator's `acquire(time, unit)` (`InterProcessMutex`,
//! `LockInternals.internalLockLoop`: when the wait runs out the node is deleted with a guaranteed
//! delete) and kazoo's `acquire(timeout=...)` (`Lock.acquire` in `kazoo/recipe/lock.py`: a
//! `LockTimeout`, or the retry's deadline, ends in `_best_effort_cleanup`, which deletes the node
//! it knows or finds by its prefix, once, ignoring errors). The flaw is CURATOR-79: the create is
//! applied, the caller is interrupted before the reply, and the library assumes the create failed
//! and forgets the node. Curator fixed it in `CreateBuilderImpl`: a protected create that fails
//! with ConnectionLoss or with an error that is not ZooKeeper's (an interrupt) finds and deletes
//! its node in the background.
//!
//! **What it does.** A waiter that gives up must take its node out of the queue, or the node blocks
//! everyone behind it until the session ends. The recipe is the standard lock, and it gives up when
//! it is told Disconnected while acquiring, which the checker can make happen at every point of an
//! acquisition (a disconnect, or a lost request or reply, which also drops the connection). A
//! give-up while the create's reply is unknown is the dangerous case: the create may have been
//! applied, so the node must be looked for by its guid before it can be deleted (CURATOR-79). The
//! fixed recipe (`timeout-lock`) deletes its node for sure: by path if it knows it, else by listing
//! the children and finding the node carrying its guid; it retries after ConnectionLoss and stops
//! when the delete is done, the node is absent, or the session is gone. It becomes idle only when
//! every reply it is owed has come back, so that no stale reply reaches a later acquisition.
//!
//! **What it gets wrong.** The flawed recipe (`timeout-lock-forget-node`) forgets a node whose
//! create reply it never saw: it assumes the create failed, and the node it made blocks everyone
//! behind it until the session ends (`no_orphans`, `eventual_acquire`). The fixed recipe: nothing
//! the model can show.
//!
//! **What the model leaves out.** The model has no clock, so the timeout is placed where it can run
//! out unseen: during a connection outage. The lock under it is the recipes-page lock, whose guid
//! is the client and session, not Curator's protected uuid or kazoo's uuid prefix. Curator's
//! guaranteed delete keeps trying in the background and kazoo tries once; the fixed recipe here
//! retries until it is done. Giving up while the connection is up is the `give-up` fault
//! (`Input::Abandon`), taken at any point of an acquisition; interrupts of a holder are not
//! modelled.

use crate::queue::find_own;
use crate::sequential::{SequentialLock, Style};
use zklab_model::path;
use zklab_model::Rewrite;
use zklab_model::{Belief, ClientId, Ctx, Input, Recipe, Renumber, Request, Response, SessionState, ZkError};

/// What a waiter does about its node when it gives up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OnGiveUp {
    /// Delete the node; if its path is unknown, find it by guid first.
    DeleteNode,
    /// Delete the node only if its path is known; else assume the create failed.
    ForgetUnknownNode,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Abandon {
    /// Listing the children to find the node carrying our guid.
    Finding,
    /// Deleting our node.
    Deleting(String),
    /// The node is gone; waiting for replies still owed to us.
    Draining,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TimeoutLock {
    name: &'static str,
    on_give_up: OnGiveUp,
    lock: SequentialLock,
    /// `Some` once the acquisition was given up.
    abandon: Option<Abandon>,
    /// Requests sent whose replies have not come back (an expiry discards them all).
    pending: u8,
}

impl TimeoutLock {
    pub fn new(name: &'static str, lock_path: &str, variant: Style, on_give_up: OnGiveUp) -> Self {
        TimeoutLock { name, on_give_up, lock: SequentialLock::new(name, lock_path, variant), abandon: None, pending: 0 }
    }

    fn lock_path(&self) -> String {
        self.lock.lock_path().to_string()
    }

    fn give_up(&mut self, out: &mut Vec<Request>) {
        let known = self.lock.owned_node().map(str::to_string);
        let lock_path = self.lock_path();
        self.lock = SequentialLock::new(self.name, &lock_path, *self.lock.variant());
        self.abandon = Some(match (known, self.on_give_up) {
            (Some(node), _) => {
                out.push(Request::delete(&node));
                Abandon::Deleting(node)
            }
            (None, OnGiveUp::DeleteNode) => {
                out.push(Request::get_children(&lock_path, false));
                Abandon::Finding
            }
            (None, OnGiveUp::ForgetUnknownNode) => Abandon::Draining,
        });
    }

    /// Handles a reply while giving up. Replies to requests sent before the give-up still come
    /// in; a listing among them is as good as ours, since it was sent after the create.
    fn on_abandon_reply(&mut self, ctx: &Ctx, request: Request, result: zklab_model::ZkResult, out: &mut Vec<Request>) {
        let Some(state) = self.abandon.clone() else { return };
        match (state, request, result) {
            (Abandon::Finding, Request::GetChildren { .. }, Ok(Response::Children { children, .. })) => {
                let mine = self.lock.own_prefix(ctx);
                self.abandon = Some(match find_own(&children, &mine) {
                    Some(found) => {
                        let node = path::join(&self.lock_path(), found);
                        out.push(Request::delete(&node));
                        Abandon::Deleting(node)
                    }
                    None => Abandon::Draining,
                });
            }
            (Abandon::Finding, Request::GetChildren { path, .. }, Err(ZkError::ConnectionLoss)) => {
                out.push(Request::get_children(&path, false))
            }
            (Abandon::Deleting(node), Request::Delete { path, .. }, result) if node == path => match result {
                Err(ZkError::ConnectionLoss) => out.push(Request::delete(&path)),
                _ => self.abandon = Some(Abandon::Draining),
            },
            _ => {}
        }
    }

    fn finish_if_drained(&mut self) {
        if self.abandon == Some(Abandon::Draining) && self.pending == 0 {
            self.abandon = None;
        }
    }
}

impl Recipe for TimeoutLock {
    fn name(&self) -> String {
        self.name.to_string()
    }

    fn handle(&mut self, ctx: &Ctx, input: Input, out: &mut Vec<Request>) {
        if matches!(input, Input::Reply { .. }) {
            self.pending = self.pending.saturating_sub(1);
        }
        let before = out.len();
        match input {
            // The session and its node are gone; so is every reply owed (the world drops them).
            Input::State(SessionState::Expired) => {
                self.pending = 0;
                self.abandon = None;
                self.lock.handle(ctx, input, out);
            }
            Input::Reply { request, result } if self.abandon.is_some() => {
                if result == Err(ZkError::SessionExpired) {
                    self.abandon = Some(Abandon::Draining);
                } else {
                    self.on_abandon_reply(ctx, request, result, out);
                }
            }
            _ if self.abandon.is_some() => {}
            Input::State(SessionState::Disconnected) | Input::Abandon if self.lock.belief() == Belief::Acquiring => {
                self.give_up(out)
            }
            input => self.lock.handle(ctx, input, out),
        }
        self.pending = self.pending.saturating_add((out.len() - before) as u8);
        self.finish_if_drained();
    }

    fn belief(&self) -> Belief {
        match self.abandon {
            Some(_) => Belief::Releasing,
            None => self.lock.belief(),
        }
    }

    fn owned_node(&self) -> Option<&str> {
        match &self.abandon {
            Some(Abandon::Deleting(node)) => Some(node),
            Some(_) => None,
            None => self.lock.owned_node(),
        }
    }

    fn waits_on_one_node(&self) -> bool {
        self.lock.waits_on_one_node()
    }

    /// At any point of an acquisition, the create's reply still owed included.
    fn can_abandon(&self) -> bool {
        self.abandon.is_none() && self.lock.belief() == Belief::Acquiring
    }

    /// Supported as the standard lock is: the node it gives up is one more path.
    fn renumbered(&self, client: ClientId, r: &Renumber) -> Option<Self> {
        let abandon = match &self.abandon {
            Some(Abandon::Deleting(node)) => Some(Abandon::Deleting(r.path(node))),
            other => other.clone(),
        };
        Some(TimeoutLock { lock: self.lock.renumbered(client, r)?, abandon, ..self.clone() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zklab_model::{CreateMode, SessionId, Stat};

    const STANDARD: Style = Style::STANDARD;
    const CTX: Ctx = Ctx { client: 0, session: SessionId(1) };

    /// Acquires, then loses the create's reply: the recipe is left unsure whether its node exists.
    fn unsure(on_give_up: OnGiveUp) -> (TimeoutLock, Vec<Request>) {
        let mut lock = TimeoutLock::new("t", "/lock", STANDARD, on_give_up);
        let mut out = Vec::new();
        lock.handle(&CTX, Input::Acquire, &mut out);
        let create = out.pop().unwrap();
        assert!(matches!(&create, Request::Create { mode: CreateMode::EphemeralSequential, .. }));
        lock.handle(&CTX, Input::Reply { request: create, result: Err(ZkError::ConnectionLoss) }, &mut out);
        out.clear();
        lock.handle(&CTX, Input::State(SessionState::Disconnected), &mut out);
        (lock, out)
    }

    #[test]
    fn giving_up_unsure_of_the_create_finds_the_node_by_guid_and_deletes_it() {
        let (mut lock, out) = unsure(OnGiveUp::DeleteNode);
        assert_eq!(lock.belief(), Belief::Releasing);
        assert_eq!(out, vec![Request::get_children("/lock", false)]);
        let mut out = Vec::new();
        let children = vec!["c1-s2-lock-0000000000".to_string(), "c0-s1-lock-0000000001".to_string()];
        let listing = Ok(Response::Children { children: children.into(), stat: Stat::default() });
        // The recovery listing queued before the give-up answers first, then ours.
        lock.handle(&CTX, Input::Reply { request: Request::get_children("/lock", false), result: listing }, &mut out);
        assert_eq!(out, vec![Request::delete("/lock/c0-s1-lock-0000000001")]);
        assert_eq!(lock.owned_node(), Some("/lock/c0-s1-lock-0000000001"));
        let lost = Input::Reply { request: out[0].clone(), result: Err(ZkError::ConnectionLoss) };
        out.clear();
        lock.handle(&CTX, lost, &mut out);
        assert_eq!(out, vec![Request::delete("/lock/c0-s1-lock-0000000001")], "the delete is retried");
        out.clear();
        lock.handle(
            &CTX,
            Input::Reply { request: Request::delete("/lock/c0-s1-lock-0000000001"), result: Ok(Response::Deleted) },
            &mut out,
        );
        assert_eq!(lock.belief(), Belief::Releasing, "replies are still owed");
        lock.handle(
            &CTX,
            Input::Reply { request: Request::get_children("/lock", false), result: Err(ZkError::ConnectionLoss) },
            &mut out,
        );
        assert!(out.is_empty());
        assert_eq!(lock.belief(), Belief::Idle);
    }

    #[test]
    fn the_flawed_variant_forgets_a_node_whose_create_reply_it_never_saw() {
        let (lock, out) = unsure(OnGiveUp::ForgetUnknownNode);
        assert!(out.is_empty(), "it sends nothing to find the node");
        assert_eq!(lock.owned_node(), None);
    }
}
