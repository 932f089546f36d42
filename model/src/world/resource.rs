//! The protected resource: a store that accepts a write only with a fencing token at least as
//! large as any it accepted before. It also records, from the world's ground truth, whether it
//! ever accepted a write from an earlier holder after one from a later holder, in ZooKeeper's
//! lock order (the creation zxid of each holder's lock node): that is what fencing exists to
//! prevent, and it happens when a recipe's tokens do not follow lock order.
//!
//! Under a read/write lock readers read the resource under their token too: a read is refused
//! below the newest write's token, and a write below any access's token. A read from an earlier
//! holder after a later writer's write, or a write from an earlier holder after any later
//! access, is the same real-time overlap that fencing exists to prevent.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Resource {
    /// The largest token accepted so far.
    pub max_token: Option<i64>,
    /// The latest position in lock order whose write was accepted.
    pub newest_grant: i64,
    /// A write from an earlier holder was accepted after a later holder's.
    pub interleaved: bool,
    /// Some write was refused for a stale token (fencing did its job at least once).
    pub refused_stale: bool,
    /// The largest token of an accepted write (reads aside).
    pub max_write_token: Option<i64>,
    /// The latest position in lock order whose write (reads aside) was accepted.
    pub newest_write_grant: i64,
    /// A holder that ZooKeeper agreed with was refused: its token was below one accepted
    /// before (tokens restarted with a recreated parent, or wrapped at 2^31).
    pub refused_live: bool,
    /// The items a queue's consumers processed, by token (the item's sequence number); empty
    /// for every other recipe.
    pub taken: std::collections::BTreeSet<i64>,
    /// Some item was processed twice.
    pub taken_twice: bool,
}

impl Resource {
    /// A write by the holder at position `grant` in lock order presenting `token`; returns
    /// whether it was accepted.
    pub fn write(&mut self, token: i64, grant: i64) -> bool {
        if self.max_token.is_some_and(|max| token < max) {
            self.refused_stale = true;
            return false;
        }
        self.max_token = Some(token);
        self.max_write_token = Some(token);
        if grant < self.newest_grant {
            self.interleaved = true;
        }
        self.newest_grant = self.newest_grant.max(grant);
        self.newest_write_grant = self.newest_write_grant.max(grant);
        true
    }

    /// A queue's consumer processes the item `token`: the resource remembers every item
    /// processed, and whether one was processed twice.
    pub fn take(&mut self, token: i64) {
        if !self.taken.insert(token) {
            self.taken_twice = true;
        }
    }

    /// A read by the holder at position `grant` presenting `token`; returns whether it was
    /// served. Reads do not exclude each other, only writes.
    pub fn read(&mut self, token: i64, grant: i64) -> bool {
        if self.max_write_token.is_some_and(|max| token < max) {
            self.refused_stale = true;
            return false;
        }
        self.max_token = Some(self.max_token.map_or(token, |max| max.max(token)));
        if grant < self.newest_write_grant {
            self.interleaved = true;
        }
        self.newest_grant = self.newest_grant.max(grant);
        true
    }
}
