//! The parts of states (trees, session and watch tables, clients) a thread rewrote lately,
//! ranked or renamed, each by the part and what the rewriting reads of it, so that a part met
//! again is taken as it was rewritten instead of walked and built again. Most parts of a state
//! are shared with the states around it, and a settled state's successors are ranked with the
//! same images and renamed with the same renamings.
//!
//! **Why a part rewritten is a function of the key.** A rewriting reads the part, the run's
//! recipe (the format of its names and data), lock path and listing order, which a part never
//! leaves (a part is made and shared by the worlds of one run), and:
//! - ranking (`crate::reduce::renumber`), the images of the numbers the part holds (each
//!   sequence number and zxid to its rank among the state's numbers of its kind, each cversion
//!   to 0 or 1) and, for a client, its index (which its recipe is handed). What the walk asks of
//!   the numbers is what the part's collecting walk collected (`Collected`, memoized on the
//!   part): the premise the walk's shortcut for a part its numbers fix already rests on
//!   (`Renumber::leaves_alone`, the case where every image is the number itself), and that
//!   `ranking_commutes` checks a recipe's claim against. A recipe renumbered by replay is not
//!   ranked through here (its walk notes what it could not replay);
//! - renaming (`crate::reduce::symmetry`), the renaming: the whole permutation of the clients
//!   and what it does to their sessions.
//!
//! So a part met again with the same key is what it was rewritten into. The part is kept alive
//! with its entry, so that its address names it alone while the entry lives. What the tables
//! hold never changes a value, only whether it is built again, so which thread met a part first
//! changes nothing. Bounded: each is emptied when it holds `KEPT` entries.

use crate::{Collected, Renaming};
use std::any::Any;
use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Arc;

/// How many parts a thread keeps rewritten at most, in each table.
const KEPT: usize = 1 << 12;

type Part = Arc<dyn Any + Send + Sync>;

/// Parts by their address and what else the rewriting reads: the part (kept alive) and what it
/// was rewritten into.
type Table<K> = RefCell<HashMap<(usize, K), (Part, Part), rustc_hash::FxBuildHasher>>;

thread_local! {
    static RANKED: Table<(u32, Collected)> = RefCell::new(HashMap::default());
    static RENAMED: Table<Renaming> = RefCell::new(HashMap::default());
}

/// `part` (at index `at`, 0 for a server's part) ranked with `images`: as this thread ranked it
/// before, or as `build` ranks it (`None`: it cannot be, which is not kept).
pub fn ranked<T: Send + Sync + 'static>(
    part: &Arc<T>,
    at: u32,
    images: Collected,
    build: impl FnOnce() -> Option<Arc<T>>,
) -> Option<Arc<T>> {
    through(&RANKED, part, (at, images), build)
}

/// `part` renamed with `renaming`: as this thread renamed it before, or as `build` renames it.
pub fn renamed<T: Send + Sync + 'static>(
    part: &Arc<T>,
    renaming: &Renaming,
    build: impl FnOnce() -> Option<Arc<T>>,
) -> Option<Arc<T>> {
    through(&RENAMED, part, renaming.clone(), build)
}

fn through<K: Hash + Eq + Clone + 'static, T: Send + Sync + 'static>(
    table: &'static std::thread::LocalKey<Table<K>>,
    part: &Arc<T>,
    key: K,
    build: impl FnOnce() -> Option<Arc<T>>,
) -> Option<Arc<T>> {
    table.with(|table| find(table, part, &key)).or_else(|| {
        let rewritten = build()?;
        table.with(|table| keep(table, part, key, &rewritten));
        Some(rewritten)
    })
}

fn address<T>(part: &Arc<T>) -> usize {
    Arc::as_ptr(part) as *const () as usize
}

fn find<K: Hash + Eq + Clone, T: Send + Sync + 'static>(table: &Table<K>, part: &Arc<T>, key: &K) -> Option<Arc<T>> {
    let (_, rewritten) = table.borrow().get(&(address(part), key.clone()))?.clone();
    rewritten.downcast::<T>().ok()
}

fn keep<K: Hash + Eq, T: Send + Sync + 'static>(table: &Table<K>, part: &Arc<T>, key: K, rewritten: &Arc<T>) {
    let mut table = table.borrow_mut();
    if table.len() >= KEPT {
        table.clear();
    }
    let (part_kept, rewritten): (Part, Part) = (part.clone(), rewritten.clone());
    table.insert((address(part), key), (part_kept, rewritten));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_part_is_found_by_itself_and_its_key_only() {
        let (part, equal) = (Arc::new(String::from("tree")), Arc::new(String::from("tree")));
        let images = Collected::default();
        let built = Arc::new(String::from("ranked"));
        let first = ranked(&part, 0, images.clone(), || Some(built.clone()));
        assert!(first.is_some_and(|first| Arc::ptr_eq(&first, &built)));
        let again = ranked(&part, 0, images.clone(), || panic!("built again"));
        assert!(again.is_some_and(|again| Arc::ptr_eq(&again, &built)), "met again, taken as kept");
        let mut builds = 0;
        let mut build = || {
            builds += 1;
            Some(Arc::new(String::from("other")))
        };
        ranked(&equal, 0, images.clone(), &mut build);
        ranked(&part, 1, images.clone(), &mut build);
        assert_eq!(builds, 2, "an equal part elsewhere, or at another index, is another key");
        assert!(ranked(&Arc::new(String::new()), 0, images, || None).is_none(), "what cannot be built is not kept");
        let renaming = Renaming::new(vec![1, 0], crate::SessionId(1));
        let renamed_once = renamed(&part, &renaming, || Some(Arc::new(String::from("renamed"))));
        let renamed_again = renamed(&part, &renaming, || panic!("built again"));
        assert!(renamed_once.zip(renamed_again).is_some_and(|(a, b)| Arc::ptr_eq(&a, &b)));
    }
}
