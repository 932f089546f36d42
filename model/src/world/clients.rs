//! The world's clients, each behind a shared pointer. A checker clones a state once per
//! successor and a step changes one or two clients, so the others stay shared between the
//! states instead of being copied; writing to a client copies it first if another state still
//! shares it.

use super::Client;
use crate::recipe::Recipe;
use std::ops::{Index, IndexMut};
use std::sync::Arc;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Clients<R>(Vec<Arc<Client<R>>>);

impl<R> Default for Clients<R> {
    fn default() -> Self {
        Clients(Vec::new())
    }
}

/// Each client by its digest: a client shared between states is hashed once, not once per state.
impl<R: std::hash::Hash> std::hash::Hash for Clients<R> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_usize(self.0.len());
        for client in &self.0 {
            state.write_u128(client.digest());
        }
    }
}

impl<R: Recipe> Clients<R> {
    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn get(&self, i: usize) -> Option<&Client<R>> {
        self.0.get(i).map(|c| &**c)
    }

    pub fn first(&self) -> Option<&Client<R>> {
        self.get(0)
    }

    /// Puts `client` in place of client `i` (without copying the one it replaces).
    pub fn set(&mut self, i: usize, client: Client<R>) {
        self.0[i] = Arc::new(client);
    }

    /// Puts the shared `client` in place of client `i`.
    pub fn put(&mut self, i: usize, client: Arc<Client<R>>) {
        self.0[i] = client;
    }

    /// Puts in place of each client `i` the copy `shared(i, client)` gives, if it gives one,
    /// which must be equal to it: a checker hands every state one copy of each client it has met
    /// (see the checker's interner). A client left as it is costs no reference-count update,
    /// which on a pointer shared by every thread's states is a contended write.
    pub fn share(&mut self, mut shared: impl FnMut(usize, &Arc<Client<R>>) -> Option<Arc<Client<R>>>) {
        for (i, client) in self.0.iter_mut().enumerate() {
            if let Some(kept) = shared(i, client) {
                *client = kept;
            }
        }
    }

    /// Whether client `i` is the same here as in `other`: shared (the step left it alone), or
    /// equal.
    pub fn same(&self, i: usize, other: &Clients<R>) -> bool
    where
        R: PartialEq,
    {
        Arc::ptr_eq(&self.0[i], &other.0[i]) || self.0[i] == other.0[i]
    }

    /// Client `i` as the pointer this state shares it by.
    pub fn shared(&self, i: usize) -> Option<&Arc<Client<R>>> {
        self.0.get(i)
    }

    pub fn iter(&self) -> impl ExactSizeIterator<Item = &Client<R>> + DoubleEndedIterator + Clone {
        self.0.iter().map(|c| &**c)
    }
}

impl<R> FromIterator<Client<R>> for Clients<R> {
    fn from_iter<I: IntoIterator<Item = Client<R>>>(iter: I) -> Self {
        Clients(iter.into_iter().map(Arc::new).collect())
    }
}

/// Clients already shared (see `share`).
impl<R> FromIterator<Arc<Client<R>>> for Clients<R> {
    fn from_iter<I: IntoIterator<Item = Arc<Client<R>>>>(iter: I) -> Self {
        Clients(iter.into_iter().collect())
    }
}

impl<R: Clone> IntoIterator for Clients<R> {
    type Item = Client<R>;
    type IntoIter = std::iter::Map<std::vec::IntoIter<Arc<Client<R>>>, fn(Arc<Client<R>>) -> Client<R>>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter().map(Arc::unwrap_or_clone as fn(Arc<Client<R>>) -> Client<R>)
    }
}

impl<R> Index<usize> for Clients<R> {
    type Output = Client<R>;

    fn index(&self, i: usize) -> &Client<R> {
        &self.0[i]
    }
}

impl<R: Clone> IndexMut<usize> for Clients<R> {
    fn index_mut(&mut self, i: usize) -> &mut Client<R> {
        let client = Arc::make_mut(&mut self.0[i]);
        client.cache.clear();
        client
    }
}
