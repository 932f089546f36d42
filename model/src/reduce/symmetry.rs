//! Renaming clients, for symmetry reduction. Clients that run the same recipe are
//! interchangeable: a state and the same state with two clients' roles swapped behave alike, so
//! a checker need only explore one of them. Swapping roles is more than reordering the clients:
//! a client's identity is written into the names of its lock nodes, the owners of its ephemerals,
//! the sessions of its watches and every message that mentions them, and all of those must be
//! renamed together or the two states are not equivalent.
//!
//! Session ids are renamed only for the sessions the world opened at the start (client `i` got
//! the `i`-th): with roles swapped, each client starts with the other's session. Sessions opened
//! later keep their ids, because whoever replaces an expired session first gets the next id in
//! either history.

use crate::path;
use crate::reduce::rewrite::Rewrite;
use crate::{ChildrenOrder, ClientId, SessionId, Stat};

/// A permutation of the clients, and what it does to their initial sessions.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Renaming {
    /// `to[i]`: the index client `i` gets.
    to: Vec<ClientId>,
    /// The session opened for client 0 at the start; client `i` got `first_session + i`.
    first_session: u32,
}

impl Renaming {
    /// `to[i]` is the new index of client `i`; `to` must be a permutation of `0..to.len()`.
    pub fn new(to: Vec<ClientId>, first_session: SessionId) -> Self {
        debug_assert!({
            let mut sorted = to.clone();
            sorted.sort_unstable();
            sorted.iter().enumerate().all(|(i, c)| (*c as usize) == i)
        });
        Renaming { to, first_session: first_session.0 }
    }

    pub fn is_identity(&self) -> bool {
        self.to.iter().enumerate().all(|(i, c)| (*c as usize) == i)
    }

    pub fn client(&self, c: ClientId) -> ClientId {
        self.to[c as usize]
    }

    pub fn session(&self, s: SessionId) -> SessionId {
        match s.0.checked_sub(self.first_session) {
            Some(i) if (i as usize) < self.to.len() => SessionId(self.first_session + self.to[i as usize]),
            _ => s,
        }
    }

    /// The renaming that undoes this one.
    pub fn inverse(&self) -> Renaming {
        let mut back = vec![0; self.to.len()];
        for (i, c) in self.to.iter().enumerate() {
            back[*c as usize] = i as ClientId;
        }
        Renaming { to: back, first_session: self.first_session }
    }

    /// This renaming, then `next`.
    pub fn then(&self, next: &Renaming) -> Renaming {
        Renaming { to: self.to.iter().map(|c| next.client(*c)).collect(), first_session: self.first_session }
    }
}

/// Applies a renaming to the values that mention clients. Only the names of the lock's children
/// carry a client's identity (in a format the recipe chooses, hence `name`); everything else
/// refers to clients by session.
pub struct Renamer<'a> {
    pub renaming: &'a Renaming,
    pub lock_path: &'a str,
    /// Renames one child name of the lock path.
    pub name: &'a dyn Fn(&str) -> String,
    /// The server's order of getChildren replies, which depends on the names.
    pub order: ChildrenOrder,
}

impl Renamer<'_> {
    pub fn session(&self, s: SessionId) -> SessionId {
        self.renaming.session(s)
    }
}

impl Rewrite for Renamer<'_> {
    fn path(&self, p: &str) -> String {
        match path::child_of(p, self.lock_path) {
            Some(name) => path::join(self.lock_path, &(self.name)(name)),
            None => p.to_string(),
        }
    }

    /// A getChildren listing of `parent`, in the order the server gives the renamed names.
    fn children(&self, parent: &str, names: &[String]) -> Vec<String> {
        if parent == self.lock_path {
            self.order.arrange(names.iter().map(|n| (self.name)(n)).collect())
        } else {
            names.to_vec()
        }
    }

    fn stat(&self, stat: &Stat) -> Stat {
        Stat { ephemeral_owner: stat.ephemeral_owner.map(|s| self.session(s)), ..*stat }
    }
}
