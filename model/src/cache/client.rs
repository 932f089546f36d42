//! What a client remembers only to be fast: values derived from it once and carried by every
//! state that shares it. Never part of the client's identity (each `Memo` compares equal and
//! hashes to nothing), and a copy of the client starts it empty; whoever changes a client in
//! place clears it (`Clients`' `IndexMut`).

use super::memo::Memo;
use crate::Collected;

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ClientCache {
    /// The numbers renumbering collects from the client at its index (see
    /// `Numbers::collect_part`); a client only moves to another index by being rebuilt.
    pub numbers: Memo<Option<Collected>>,
    /// The client's digest (see `memo::digest`), which a world's hash writes in its place.
    pub digest: Memo<u128>,
    /// The digest of what its recipe's next move depends on (see `Client::situation`).
    pub situation: Memo<u128>,
}

impl ClientCache {
    /// Forgets every value, for a client about to change.
    pub fn clear(&mut self) {
        self.numbers.clear();
        self.digest.clear();
        self.situation.clear();
    }
}
