//! What a ZooKeeper client library does between the wire and the recipe: it remembers which
//! watches it holds, fails outstanding requests on a lost connection, and on reconnect either
//! re-arms its watches (the Java client) or drops them and only reports the state change (kazoo).
//! Recipes that are right under one behaviour can be wrong under the other.

use crate::{Request, WatchKind, WatchedEvent, ZkResult};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClientBehaviour {
    /// Keeps its watches over a disconnect and re-arms them with SetWatches on reconnect; the
    /// server answers with catch-up events for what changed meanwhile.
    #[default]
    Java,
    /// Drops its watches on disconnect and wakes each watcher with the state event only.
    Kazoo,
}

/// The watches a client library believes are armed, by path and kind.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ClientWatches(BTreeSet<(String, WatchKind)>);

impl ClientWatches {
    /// Registers the watch a successful read asked for, as the Java client does when the reply
    /// arrives: exists on a missing node is an exist watch, on a present node a data watch.
    pub fn on_reply(&mut self, request: &Request, result: &ZkResult) {
        if let Some(kind) = result.as_ref().ok().and_then(|response| WatchKind::armed_by(request, response)) {
            self.0.insert((request.path().to_string(), kind));
        }
    }

    /// Removes the watches an event consumes (they are one-shot).
    pub fn on_event(&mut self, event: &WatchedEvent) {
        for kind in WatchKind::consumed_by(event.kind) {
            self.0.remove(&(event.path.clone(), *kind));
        }
    }

    pub fn renamed(&self, r: &crate::symmetry::Renamer) -> ClientWatches {
        ClientWatches(self.0.iter().map(|(path, kind)| (r.path(path), *kind)).collect())
    }

    pub fn clear(&mut self) {
        self.0.clear();
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn to_vec(&self) -> Vec<(String, WatchKind)> {
        self.0.iter().cloned().collect()
    }
}
