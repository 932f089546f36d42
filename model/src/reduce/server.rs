//! The server's side of the checker's reductions (see `crate::reduce`): the server with its
//! clients renamed, with its numbers ranked, and with its shared parts (trees, sessions, watch
//! tables) swapped for equal copies other states already hold.

use crate::reduce::rewrite::Rewrite;
use crate::server::{Server, SessionInfo, Sessions, WatchTable};
use crate::tree::DataTree;
use std::sync::Arc;

/// One shared part of a server (a tree, the sessions, a watch table) walked by renumbering,
/// through the memo of the numbers collected from it (`numbers`): a walk that only collects
/// them builds nothing (`None`), and walks the part only if it has not been walked before; a
/// ranking walk leaves a part its numbers fix as it is, keeps an unchanged part the one
/// already shared, and takes a part it ranked before with the same images as it was (`cache::rewritten`). `walk` builds
/// the part renumbered, with its memo carried.
fn renumbered_part<T: PartialEq + Send + Sync + 'static>(
    r: &crate::reduce::renumber::Renumber,
    part: &Arc<T>,
    numbers: &crate::cache::memo::Memo<Option<crate::Collected>>,
    walk: impl Fn(&crate::reduce::renumber::Renumber) -> T,
) -> Option<Arc<T>> {
    if r.numbers.is_collecting() {
        r.numbers.collect_part(numbers, |collecting| {
            walk(&r.with(collecting));
            Some(())
        });
        return None;
    }
    if r.leaves_alone(numbers) {
        return Some(part.clone());
    }
    let build = || {
        let renumbered = walk(r);
        Some(match renumbered == **part {
            true => part.clone(),
            false => Arc::new(renumbered),
        })
    };
    match r.images(numbers) {
        Some(images) => crate::cache::rewritten::ranked(part, 0, images, build),
        None => build(),
    }
}

impl Server {
    /// The same server with clients' roles swapped (see `symmetry`).
    pub fn renamed(&self, r: &crate::reduce::symmetry::Renamer) -> Server {
        // Each part as this thread renamed it before with the same renaming, if it did.
        fn renamed<T: Send + Sync + 'static>(
            part: &Arc<T>,
            r: &crate::reduce::symmetry::Renamer,
            build: impl FnOnce() -> T,
        ) -> Arc<T> {
            crate::cache::rewritten::renamed(part, r.renaming, || Some(Arc::new(build()))).expect("a renaming builds")
        }
        let table = |t: &Arc<WatchTable>| -> Arc<WatchTable> {
            renamed(t, r, || {
                t.iter()
                    .map(|(path, sessions)| (r.path(path), sessions.iter().map(|s| r.session(*s)).collect()))
                    .collect()
            })
        };
        Server {
            config: self.config,
            tree: renamed(&self.tree, r, || self.tree.renamed(r)),
            zxid: self.zxid,
            next_session: self.next_session,
            sessions: renamed(&self.sessions, r, || {
                self.sessions.iter().map(|(s, info)| (r.session(*s), *info)).collect()
            }),
            data_watches: table(&self.data_watches),
            child_watches: table(&self.child_watches),
            history: self.history.iter().map(|(zxid, tree)| (*zxid, renamed(tree, r, || tree.renamed(r)))).collect(),
        }
    }

    /// The same server with its sequence numbers and zxids renumbered (see `renumber`); for a
    /// walk that only collects them, nothing (`None`): it visits every number a ranking walk
    /// maps and builds no copy. Trees and tables that do not change stay shared.
    pub fn renumbered(&self, r: &crate::reduce::renumber::Renumber) -> Option<Server> {
        let tree = |tree: &Arc<DataTree>| renumbered_part(r, tree, tree.numbers(), |r| tree.renumbered(r));
        // A watcher set holds no number.
        let table = |t: &Arc<WatchTable>| {
            renumbered_part(r, t, &t.numbers, |r| {
                let table: WatchTable = t.iter().map(|(path, s)| (r.path(path), s.clone())).collect();
                table.numbers_carried(r, &t.numbers)
            })
        };
        let sessions = renumbered_part(r, &self.sessions, &self.sessions.numbers, |r| {
            let sessions: Sessions = self
                .sessions
                .iter()
                .map(|(s, info)| {
                    let view = info.view.map(|z| r.zxid(z));
                    (*s, SessionInfo { last_zxid: r.zxid(info.last_zxid), view, ..*info })
                })
                .collect();
            sessions.numbers_carried(r, &self.sessions.numbers)
        });
        // Every part is walked before any is missed: a collecting walk builds none of them.
        let (current, zxid) = (tree(&self.tree), r.zxid(self.zxid));
        let (data_watches, child_watches) = (table(&self.data_watches), table(&self.child_watches));
        let history = self.history.iter().map(|(zxid, t)| Some((r.zxid(*zxid), tree(t)?))).collect::<Vec<_>>();
        Some(Server {
            config: self.config,
            tree: current?,
            zxid,
            next_session: self.next_session,
            sessions: sessions?,
            data_watches: data_watches?,
            child_watches: child_watches?,
            history: history.into_iter().collect::<Option<_>>()?,
        })
    }

    /// Puts in place of each shared part (the tree and the past ones, the sessions, the watch
    /// tables) the copy the matching function gives, which must be equal to it (see
    /// `Clients::share`). A part that is the same as `kept`'s (a step left it alone) is left as
    /// it is: the caller shared `kept`'s parts before (the state this one is a successor of).
    pub fn share(
        &mut self,
        kept: Option<&Server>,
        mut tree: impl FnMut(&Arc<DataTree>) -> Arc<DataTree>,
        sessions: impl FnOnce(&Arc<Sessions>) -> Arc<Sessions>,
        mut watches: impl FnMut(&Arc<WatchTable>) -> Arc<WatchTable>,
    ) {
        let kept_trees =
            || kept.into_iter().flat_map(|k| std::iter::once(&k.tree).chain(k.history.iter().map(|(_, t)| t)));
        // A tree the kept state shares is left as it is: no reference-count update.
        let mut share_tree = |t: &mut Arc<DataTree>| {
            if !kept_trees().any(|k| Arc::ptr_eq(k, t)) {
                *t = tree(t);
            }
        };
        share_tree(&mut self.tree);
        for (_, past) in &mut self.history {
            share_tree(past);
        }
        if !kept.is_some_and(|k| Arc::ptr_eq(&self.sessions, &k.sessions)) {
            self.sessions = sessions(&self.sessions);
        }
        let kept_tables = [kept.map(|k| &k.data_watches), kept.map(|k| &k.child_watches)];
        for (table, kept) in [&mut self.data_watches, &mut self.child_watches].into_iter().zip(kept_tables) {
            if !kept.is_some_and(|k| Arc::ptr_eq(table, k)) {
                *table = watches(table);
            }
        }
    }
}

impl Server {
    /// Whether no create can ever make `path` again while its parent lives: it is absent, and
    /// its name is a sequential name its parent's counter has already passed (`0 <= n <
    /// next_seq`), so no sequential create under this parent names it again. A create by hand
    /// of such a name, or a new parent (whose counter starts again at 0), could: the world's
    /// dead-watch reduction refuses those (see `reduce::world::dead_watches`).
    pub fn unrevivable(&self, path: &str) -> bool {
        if path == "/" || self.tree.get(path).is_some() {
            return false;
        }
        let name = crate::path::name(path);
        let Some(prefix) = name.len().checked_sub(10).and_then(|at| name.get(..at)) else { return false };
        let parent = self.tree.get(crate::path::parent(path));
        match (crate::path::sequence_of(name, prefix), parent) {
            (Some(n), Some(parent)) => 0 <= n && n < parent.next_seq,
            _ => false,
        }
    }

    /// Whether `path` is a child of `parent` that no create can make again (`unrevivable`): the
    /// names the world's dead-watch reduction forgets watches on, and guards.
    pub fn unrevivable_child(&self, parent: &str, path: &str) -> bool {
        crate::path::parent(path) == parent && self.unrevivable(path)
    }

    /// The children of `parent` under a data or exist watch that no create can make again
    /// (`unrevivable_child`).
    pub fn dead_data_watches(&self, parent: &str) -> Vec<String> {
        self.data_watches.keys().filter(|path| self.unrevivable_child(parent, path)).cloned().collect()
    }

    /// Forgets every data or exist watch on `paths`.
    pub fn forget_data_watches(&mut self, paths: &[String]) {
        if !paths.is_empty() {
            Arc::make_mut(&mut self.data_watches).retain(|path, _| !paths.contains(path));
        }
    }
}
