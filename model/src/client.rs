//! What a ZooKeeper client library does between the wire and the recipe: it remembers which
//! watches it holds, fails outstanding requests on a lost connection, and on reconnect either
//! re-arms its watches (the Java client) or drops them and only reports the state change (kazoo).
//! Recipes that are right under one behaviour can be wrong under the other.

use crate::reduce::rewrite::Rewrite;
use crate::{Request, Response, Server, SessionId, WatchKind, WatchedEvent, ZkResult};
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

/// The Java client's default `jute.maxbuffer` (`ZKClientConfig.CLIENT_MAX_PACKET_LENGTH_DEFAULT`,
/// 0xfffff bytes).
pub const JAVA_MAX_PACKET_BYTES: u32 = 1_048_575;

impl ClientBehaviour {
    /// The longest reply frame the library accepts, given the `jute.maxbuffer` a world sets:
    /// the Java client reads a frame's length first and drops the connection when it is above
    /// its limit ("Packet len N is out of range!"); kazoo reads frames of any length.
    pub fn max_reply_bytes(self, configured: Option<u32>) -> Option<usize> {
        match self {
            ClientBehaviour::Java => configured.map(|bytes| bytes as usize),
            ClientBehaviour::Kazoo => None,
        }
    }

    /// Whether the library refuses `response` as longer than it accepts (see
    /// `max_reply_bytes`), given the `jute.maxbuffer` a world or a script sets.
    pub fn refuses(self, configured: Option<u32>, response: &Response) -> bool {
        self.max_reply_bytes(configured).is_some_and(|limit| response.frame_bytes() > limit)
    }

    /// Whether a closing client hears the watch events its own close fires (the server sends
    /// them before its reply to closeSession). The Java client hands them out; kazoo's `stop()`
    /// marks the client stopped before it sends closeSession and ignores every watch event it
    /// reads after that (`_read_watch_event`), so it hears none (conformance case 33, recorded
    /// with both libraries).
    pub fn hears_own_close(self) -> bool {
        self == ClientBehaviour::Java
    }

    /// The connection dropped while the session lives on: the server forgets the connection's
    /// watches; Java keeps its own list to re-arm, kazoo forgets it (its watchers were handed
    /// the Disconnected state and will hear nothing more).
    pub fn on_disconnect(self, server: &mut Server, session: SessionId, watches: &mut ClientWatches) {
        server.drop_watches(session);
        if self == ClientBehaviour::Kazoo {
            watches.clear();
        }
    }

    /// The library reconnected to its live session, last connected at server zxid `since`.
    /// Java re-arms what it holds with SetWatches; the server answers with a catch-up event for
    /// each watch whose change it missed, and the library hands out those that find a watch it
    /// still holds (consuming it). A node watched both ways and deleted meanwhile gets one
    /// NodeDeleted per watch list; the first takes every watch on it and the second goes to
    /// nobody (recorded with the Java client). Kazoo has nothing to re-arm.
    pub fn on_reconnect(
        self,
        server: &mut Server,
        session: SessionId,
        since: i64,
        watches: &mut ClientWatches,
    ) -> Vec<WatchedEvent> {
        if self == ClientBehaviour::Kazoo {
            return Vec::new();
        }
        let mut events = server.set_watches(session, since, &watches.to_vec());
        events.retain(|event| watches.on_event(event));
        events
    }
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

    /// Removes the watches an event consumes (they are one-shot); whether it found any.
    pub fn on_event(&mut self, event: &WatchedEvent) -> bool {
        let mut found = false;
        for kind in WatchKind::consumed_by(event.kind) {
            found |= self.0.remove(&(event.path.clone(), *kind));
        }
        found
    }

    pub fn renamed(&self, r: &crate::reduce::symmetry::Renamer) -> ClientWatches {
        ClientWatches(self.0.iter().map(|(path, kind)| (r.path(path), *kind)).collect())
    }

    pub fn renumbered(&self, r: &crate::reduce::renumber::Renumber) -> ClientWatches {
        ClientWatches(self.0.iter().map(|(path, kind)| (r.path(path), *kind)).collect())
    }

    /// Forgets the exist watches whose path `dead` says no create can make again (the checker's
    /// dead-watch reduction); whether it forgot any.
    pub fn forget_dead_exist_watches(&mut self, dead: impl Fn(&str) -> bool) -> bool {
        let before = self.0.len();
        self.0.retain(|(path, kind)| *kind != WatchKind::Exist || !dead(path));
        self.0.len() != before
    }

    /// Whether it holds an exist watch `dead` says no create can make again.
    pub fn has_dead_exist_watch(&self, dead: impl Fn(&str) -> bool) -> bool {
        self.0.iter().any(|(path, kind)| *kind == WatchKind::Exist && dead(path))
    }

    pub fn contains(&self, path: &str, kind: WatchKind) -> bool {
        self.0.contains(&(path.to_string(), kind))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CreateMode, EventType, ServerConfig};

    /// A session watching /d's data, /gone's data and /new's creation; its connection drops and
    /// another session changes all three before it reconnects.
    fn outage(behaviour: ClientBehaviour) -> (Server, SessionId, ClientWatches, Vec<WatchedEvent>) {
        let mut server = Server::new(ServerConfig::default());
        let (a, _) = server.open_session(4000);
        let (b, _) = server.open_session(4000);
        let mut watches = ClientWatches::default();
        for path in ["/d", "/gone"] {
            server.apply(b, &Request::create(path, CreateMode::Persistent));
        }
        for request in [
            Request::GetData { path: "/d".into(), watch: true },
            Request::GetData { path: "/gone".into(), watch: true },
            Request::Exists { path: "/new".into(), watch: true },
        ] {
            let outcome = server.apply(a, &request);
            watches.on_reply(&request, &outcome.result);
        }
        let since = server.zxid();
        behaviour.on_disconnect(&mut server, a, &mut watches);
        assert_eq!(server.watches_of(a), (vec![], vec![]), "the server forgets a dropped connection's watches");
        let changes = [
            Request::SetData { path: "/d".into(), data: "x".into(), version: -1 },
            Request::Delete { path: "/gone".into(), version: -1 },
            Request::create("/new", CreateMode::Persistent),
        ];
        for request in changes {
            assert!(server.apply(b, &request).notifications.is_empty(), "nobody is watching any more");
        }
        let events = behaviour.on_reconnect(&mut server, a, since, &mut watches);
        (server, a, watches, events)
    }

    #[test]
    fn java_re_arms_and_hears_what_it_missed() {
        let (_, _, watches, mut events) = outage(ClientBehaviour::Java);
        events.sort();
        let ev = |kind, path: &str| WatchedEvent { kind, path: path.to_string() };
        assert_eq!(
            events,
            vec![
                ev(EventType::NodeCreated, "/new"),
                ev(EventType::NodeDeleted, "/gone"),
                ev(EventType::NodeDataChanged, "/d")
            ]
        );
        assert!(watches.is_empty(), "each catch-up event consumed its watch");
    }

    #[test]
    fn java_re_arms_a_watch_on_what_did_not_change() {
        let mut server = Server::new(ServerConfig::default());
        let (a, _) = server.open_session(4000);
        server.apply(a, &Request::create("/d", CreateMode::Persistent));
        let mut watches = ClientWatches::default();
        let read = Request::GetData { path: "/d".into(), watch: true };
        let outcome = server.apply(a, &read);
        watches.on_reply(&read, &outcome.result);
        let since = server.zxid();
        ClientBehaviour::Java.on_disconnect(&mut server, a, &mut watches);
        assert!(ClientBehaviour::Java.on_reconnect(&mut server, a, since, &mut watches).is_empty());
        assert!(watches.contains("/d", WatchKind::Data));
        assert_eq!(server.watches_of(a).0, vec!["/d".to_string()], "armed at the server again");
    }

    #[test]
    fn java_hands_out_one_node_deleted_for_a_node_watched_both_ways() {
        let mut server = Server::new(ServerConfig::default());
        let (a, _) = server.open_session(4000);
        let (b, _) = server.open_session(4000);
        server.apply(b, &Request::create("/gone", CreateMode::Persistent));
        let mut watches = ClientWatches::default();
        for request in [
            Request::GetData { path: "/gone".into(), watch: true },
            Request::GetChildren { path: "/gone".into(), watch: true },
        ] {
            let outcome = server.apply(a, &request);
            watches.on_reply(&request, &outcome.result);
        }
        let since = server.zxid();
        ClientBehaviour::Java.on_disconnect(&mut server, a, &mut watches);
        server.apply(b, &Request::Delete { path: "/gone".into(), version: -1 });
        let sent = server.clone().set_watches(a, since, &watches.to_vec());
        assert_eq!(sent.len(), 2, "the server answers each watch list");
        let events = ClientBehaviour::Java.on_reconnect(&mut server, a, since, &mut watches);
        assert_eq!(events, vec![WatchedEvent { kind: EventType::NodeDeleted, path: "/gone".into() }]);
        assert!(watches.is_empty());
    }

    #[test]
    fn kazoo_forgets_its_watches_and_hears_nothing() {
        let (server, a, watches, events) = outage(ClientBehaviour::Kazoo);
        assert!(events.is_empty());
        assert!(watches.is_empty());
        assert_eq!(server.watches_of(a), (vec![], vec![]));
    }
}
