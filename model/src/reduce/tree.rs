//! The tree's side of the checker's reductions (see `crate::reduce`): the tree with its
//! clients renamed, and with its numbers ranked.

use crate::cache::memo::{Memo, Memoized};
use crate::reduce::rewrite::Rewrite;
use crate::tree::{DataTree, Node};
use std::collections::BTreeMap;

impl DataTree {
    /// The tree with its lock nodes renamed and their owners' sessions with them.
    pub fn renamed(&self, r: &crate::reduce::symmetry::Renamer) -> DataTree {
        let mut nodes: Memoized<_> = self
            .nodes
            .iter()
            .map(|(path, node)| (r.path(path), Node { owner: node.owner.map(|s| r.session(s)), ..node.clone() }))
            .collect();
        // Renaming changes no number.
        nodes.numbers = self.nodes.numbers.carried(Clone::clone);
        DataTree { nodes, listed: Memo::default() }
    }

    /// The tree with the lock's children, every zxid, the lock's counter and the cversions
    /// renumbered (see `renumber`).
    pub fn renumbered(&self, r: &crate::reduce::renumber::Renumber) -> DataTree {
        let nodes = self
            .nodes
            .iter()
            .map(|(path, node)| {
                let next_seq = match path == r.lock_path {
                    true => r.seq(i64::from(node.next_seq)) as i32,
                    false => node.next_seq,
                };
                let renumbered = Node {
                    czxid: r.zxid(node.czxid),
                    mzxid: r.zxid(node.mzxid),
                    pzxid: r.zxid(node.pzxid),
                    cversion: r.numbers.cversion(node.cversion),
                    next_seq,
                    data: r.data(&node.data),
                    ..node.clone()
                };
                (r.path(path), renumbered)
            })
            .collect::<Memoized<BTreeMap<_, _>>>()
            .numbers_carried(r, &self.nodes.numbers);
        DataTree { nodes, listed: Memo::default() }
    }
}
