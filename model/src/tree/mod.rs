//! The data tree: znodes, their stats and each parent's sequence counter. Pure bookkeeping, no
//! sessions or watches: the server decides what an operation means, the tree records it.

use crate::cache::memo::{Memo, Memoized};
use crate::path;
use crate::reduce::renumber::Collected;
use crate::ChildrenOrder;
use crate::{Listing, SessionId, Stat};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::ops::Bound;

/// One znode. Children are found by key range in the tree, which keeps clones cheap.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Node {
    pub data: String,
    pub czxid: i64,
    pub mzxid: i64,
    pub pzxid: i64,
    pub version: i32,
    pub cversion: i32,
    pub owner: Option<SessionId>,
    pub num_children: i32,
    /// The next sequential suffix for a child. Advanced by every successful child create
    /// (sequential or not), never by deletes or failed creates; wraps as a signed 32-bit int.
    pub next_seq: i32,
}

impl Node {
    fn new(data: String, zxid: i64, owner: Option<SessionId>, next_seq: i32) -> Self {
        Node { data, czxid: zxid, mzxid: zxid, pzxid: zxid, version: 0, cversion: 0, owner, num_children: 0, next_seq }
    }

    pub fn stat(&self) -> Stat {
        Stat {
            czxid: self.czxid,
            mzxid: self.mzxid,
            pzxid: self.pzxid,
            version: self.version,
            cversion: self.cversion,
            aversion: 0,
            ephemeral_owner: self.owner,
            data_length: self.data.len() as i32,
            num_children: self.num_children,
        }
    }
}

/// The data tree. Its fields are the model crate's alone: the checker's reductions
/// (`crate::reduce::tree`) rank and rebuild them; everything else goes through the methods here.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DataTree {
    /// With their digest, which a state's hash writes in their place (a tree shared between
    /// states is hashed once), and the numbers renumbering collects from them, both forgotten
    /// when a node changes.
    pub(crate) nodes: Memoized<BTreeMap<String, Node>>,
    /// The first long listing handed out, kept up to date as the children it lists change
    /// (see `listing`).
    #[serde(skip)]
    pub(crate) listed: Memo<Listed>,
}

impl std::hash::Hash for DataTree {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_u128(self.digest());
    }
}

/// A listing kept with the tree it was taken from.
pub(crate) struct Listed {
    parent: String,
    order: ChildrenOrder,
    names: Listing,
}

/// Listings at least this long are kept with their tree, changed in place as children come and
/// go, and shared by every reply that lists the same children in the same order: a herd of N
/// clients each listing N children holds one listing, not N, and N changes to a queue of N
/// children cost O(N log N) (see `Listing`). Shorter ones (every listing the checker ever makes)
/// are built afresh, so the states it stores carry nothing extra.
pub const SHARED_LISTING: usize = 64;

impl Default for DataTree {
    fn default() -> Self {
        let nodes = [("/".to_string(), Node::new(String::new(), 0, None, 0))].into_iter().collect();
        DataTree { nodes, listed: Memo::default() }
    }
}

impl DataTree {
    /// What the tree's hash is in a state's (see `memo::digest`).
    pub fn digest(&self) -> u128 {
        self.nodes.digest()
    }

    /// The numbers renumbering collects from this tree (see `Numbers::collect_part`).
    pub fn numbers(&self) -> &Memo<Option<Collected>> {
        &self.nodes.numbers
    }

    pub fn get(&self, path: &str) -> Option<&Node> {
        self.nodes.get(path)
    }

    pub fn get_mut(&mut self, path: &str) -> Option<&mut Node> {
        // A node's data and stat are not in a listing: the kept one stays.
        self.nodes.get_mut(path)
    }

    /// `parent`'s children arranged in `order`, as a reply carries them: the kept listing when
    /// it is of these children in this order (see `SHARED_LISTING`).
    pub fn listing(&self, parent: &str, order: ChildrenOrder) -> Listing {
        if let Some(kept) = self.listed.get() {
            if kept.parent == parent && kept.order == order {
                return kept.names.clone();
            }
        }
        let children = self.children(parent);
        if children.len() < SHARED_LISTING || self.listed.get().is_some() {
            return Listing::new(order.arrange(children));
        }
        let names = Listing::kept(order, children);
        self.listed.get_or_init(|| Listed { parent: parent.to_string(), order, names: names.clone() });
        names
    }

    /// Tells the kept listing that `path` came (`added`) or went.
    fn relist(&mut self, path: &str, added: bool) {
        let Some(kept) = self.listed.get_mut() else { return };
        if path::parent(path) == kept.parent {
            match added {
                true => kept.names.insert(path::name(path)),
                false => kept.names.remove(path::name(path)),
            }
        }
    }

    /// Child names in key order (the server scrambles them before replying).
    pub fn children(&self, parent: &str) -> Vec<String> {
        let prefix = match parent {
            "/" => "/".to_string(),
            _ => [parent, "/"].concat(),
        };
        self.nodes
            .range::<str, _>((Bound::Included(prefix.as_str()), Bound::Unbounded))
            .take_while(|(k, _)| k.starts_with(&prefix))
            .map(|(k, _)| &k[prefix.len()..])
            .filter(|rest| !rest.is_empty() && !rest.contains('/'))
            .map(str::to_string)
            .collect()
    }

    /// Every node path with its node, in path order.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &Node)> {
        self.nodes.iter()
    }

    /// Inserts a node under an existing parent, updating the parent's counters.
    pub fn insert(&mut self, path: String, data: String, zxid: i64, owner: Option<SessionId>, next_seq: i32) {
        // The kept listing is changed along with the nodes, not forgotten.
        self.relist(&path, true);
        let parent = self.nodes.get_mut(path::parent(&path)).expect("parent checked by caller");
        parent.num_children += 1;
        parent.cversion += 1;
        parent.pzxid = zxid;
        parent.next_seq = parent.next_seq.wrapping_add(1);
        self.nodes.insert(path, Node::new(data, zxid, owner, next_seq));
    }

    /// Removes a childless node, updating the parent's counters (not its sequence counter).
    pub fn remove(&mut self, path: &str, zxid: i64) {
        if self.nodes.remove(path).is_none() {
            return;
        }
        self.relist(path, false);
        // The server never lets a node outlive its parent (NotEmpty), so the parent is there; a
        // tree built by hand (a test, a rewrite gone wrong) must still not panic here.
        if let Some(parent) = self.nodes.get_mut(path::parent(path)) {
            parent.num_children -= 1;
            parent.cversion += 1;
            parent.pzxid = zxid;
        }
    }

    /// Ephemeral nodes owned by `session`, in path order.
    pub fn ephemerals_of(&self, session: SessionId) -> Vec<String> {
        self.nodes.iter().filter(|(_, n)| n.owner == Some(session)).map(|(p, _)| p.clone()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removing_a_node_whose_parent_is_gone_does_not_panic() {
        // The server never lets this happen (NotEmpty), but a stale deep path reached some other
        // way must not bring the checker down.
        let mut tree = DataTree::default();
        tree.insert("/a".to_string(), String::new(), 1, None, 0);
        tree.insert("/a/b".to_string(), String::new(), 2, None, 0);
        tree.remove("/a", 3);
        tree.remove("/a/b", 4);
        assert!(tree.get("/a/b").is_none() && tree.get("/a").is_none());
        tree.remove("/a/b", 5);
        assert_eq!(tree.get("/").map(|n| n.num_children), Some(0));
    }
}
