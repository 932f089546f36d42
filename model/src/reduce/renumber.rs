//! Renumbering, for the checker. ZooKeeper only ever hands out sequence numbers and zxids larger
//! than any it handed out before, and the recipes that support renumbering only compare them
//! with one another. Two states that differ only in the absolute values of those numbers, with
//! the same order among all the values each state holds, therefore have the same futures: a
//! checker need only keep one of them, the one where every number is replaced by its rank among
//! the numbers of its kind that the state mentions. Without this, a recipe that keeps creating
//! nodes (a livelock) never repeats a state and its cycle cannot be seen.
//!
//! Three kinds of number are ranked, each on its own:
//! - sequence numbers of the lock's children: the 10-digit suffix of their names wherever a name
//!   appears (the tree, watches, queued requests, replies and events, the recipes' state), the
//!   lock parent's counter, and fencing tokens that are sequence numbers;
//! - zxids: the server's counter, node stats (czxid, mzxid, pzxid), what each session has seen,
//!   the lagging follower's history, a client's drop zxid, grant and creation zxid, and tokens
//!   that are zxids;
//! - numbers private to one client's recipe that only grow (a protected create's uuid).
//!
//! A stat's cversion only counts child changes, and nothing a supported recipe or the server
//! does tells its values apart beyond zero or not (the container manager reaps a parent that has
//! had children), so it is kept as 0 or 1.
//!
//! A state is walked twice by the same code: the first pass collects the values (and returns
//! them unchanged), the second maps each to its rank. Walking with one function keeps what is
//! collected and what is mapped the same.

use crate::cache::memo::Memo;
use crate::path;
use crate::reduce::rewrite::Rewrite;
use crate::{ChildrenOrder, ClientId, Stat};
use std::cell::{Cell, RefCell};

/// What a walk does with each number it meets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum WalkMode {
    /// Collects it, changing nothing.
    #[default]
    Collecting,
    /// Replaces it by its rank among the collected numbers of its kind.
    Ranking,
    /// Replaces `v` by `2v + 1`: the same order with a gap between every two numbers and none
    /// at its rank, to test that a state's future depends on that order alone (see
    /// `World::ranking_commutes`), and lifts one kind of number above every number of the
    /// other, since ranking ranks each kind on its own and so may move one kind past the
    /// other. Zxid 0 stays: it is the initial tree's, which every state holds (the root's
    /// czxid), so ranking keeps it too, and the model uses it for "none". A cversion above 0
    /// becomes `2c + 1`, as ranking keeps only whether it is 0.
    Spreading(Lifted),
    /// Replaces `v` by `2v`, and one number `at` of one kind by `2at + 1`: the same order, with
    /// that number moved within its gap. A recipe renumbered by replay holds `at` exactly when
    /// replaying its inputs moved so gives another recipe than with none moved (see
    /// `crate::reduce::world::replay`). Zxid 0 stays, as ranking keeps it.
    Probing(Option<(NumberKind, i64)>),
}

/// The kinds of number ranking ranks each on its own (a client's private numbers aside).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NumberKind {
    Seq,
    Zxid,
}

/// How far apart spaced ranks are (see `Numbers::spaced`): room for that many numbers less one
/// between two ranks.
const GAP: i64 = 1 << 12;

/// How a spreading walk moves the numbers: spread apart (`2v + 1`) with one kind lifted above
/// every number of the other, or every number shifted up by a few (`v + k`), so that a recipe
/// comparing a number with a small constant (`seq - 1 == 1`, `seq < 3`) sees another answer
/// than at its rank.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lifted {
    Seqs,
    Zxids,
    Shifted(u8),
}

/// How far a spreading walk lifts a kind of number: above any number a checked state holds,
/// and still a sequence number (a 32-bit counter).
const LIFT: i64 = 1 << 26;

/// `v` spread apart from its neighbours (see `WalkMode::Spreading`), lifted when `lift`; shifted
/// instead under `Lifted::Shifted`.
fn spread(v: i64, lifted: Lifted, lift: bool) -> i64 {
    match lifted {
        Lifted::Shifted(k) => v.saturating_add(i64::from(k)),
        _ => v.saturating_mul(2).saturating_add(1).saturating_add(if lift { LIFT } else { 0 }),
    }
}

/// The numbers a state holds, by kind: collected on the first walk, ranked on the second.
#[derive(Debug, Default)]
pub struct Numbers {
    walk: WalkMode,
    seqs: RefCell<Values>,
    zxids: RefCell<Values>,
    /// `(client, value)`: ranked among the values of the same client.
    locals: RefCell<Vec<(ClientId, i64)>>,
    /// Numbers an input handed a recipe renumbered by replay that the recipe no longer holds
    /// (see `crate::reduce::world::replay`): they take no rank, but must keep their order with every
    /// number when the inputs are handed again, so ranks are spaced apart to make room.
    forgotten_seqs: RefCell<Values>,
    forgotten_zxids: RefCell<Values>,
    /// Ranks are spaced apart (`(rank + 1) * GAP`, zxid 0 kept), with each forgotten number in
    /// the gap its value falls in: a run that renumbers by replay.
    spaced: bool,
    /// Some cversion above 1 was met, so the state is not its own renumbering.
    counted: Cell<bool>,
    /// A recipe renumbered by replay did otherwise, handed its inputs again with the numbers
    /// this walk gives (see `crate::reduce::world::replay`): why. Its claim does not hold.
    unfaithful: RefCell<Option<String>>,
    /// The walk met a number it cannot rewrite (see `Numbers::opaque`): the state must be kept
    /// as it is.
    opaque: Cell<bool>,
}

/// The numbers one part of a state (a tree, a client) holds, as a walk collected them: kept in
/// that part's memo, so that a part shared with the state before a step is not walked again.
/// Each number once.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Collected {
    seqs: Values,
    zxids: Values,
    locals: Vec<(ClientId, i64)>,
    forgotten_seqs: Values,
    forgotten_zxids: Values,
    counted: bool,
    opaque: bool,
}

impl Collected {
    /// The numbers of the same part with its client renamed (renaming changes no number).
    pub fn renamed(&self, renaming: &crate::Renaming) -> Collected {
        let locals = sorted(self.locals.iter().map(|&(c, v)| (renaming.client(c), v)).collect());
        Collected { locals, ..self.clone() }
    }

    /// Whether renumbering with `ranks` leaves every one of these numbers as it is, so that the
    /// part they come from need not be walked again.
    pub fn fixed_by(&self, ranks: &Numbers) -> bool {
        !self.counted
            && self.seqs.iter().all(|v| ranks.seq(v) == v)
            && self.zxids.iter().all(|v| ranks.zxid(v) == v)
            && self.locals.iter().all(|&(c, v)| ranks.local(c, v) == v)
            && self.forgotten_seqs.iter().all(|v| ranks.seq(v) == v)
            && self.forgotten_zxids.iter().all(|v| ranks.zxid(v) == v)
    }

    /// The numbers of the same part once renumbered with `ranks` (the walk maps each value
    /// it collected to its rank, and every cversion to 0 or 1).
    pub fn ranked(&self, ranks: &Numbers) -> Collected {
        debug_assert!(ranks.walk == WalkMode::Ranking);
        Collected {
            seqs: self.seqs.iter().map(|v| ranks.seq(v)).collect(),
            zxids: self.zxids.iter().map(|v| ranks.zxid(v)).collect(),
            locals: self.locals.iter().map(|&(c, v)| (c, ranks.local(c, v))).collect(),
            forgotten_seqs: self.forgotten_seqs.iter().map(|v| ranks.seq(v)).collect(),
            forgotten_zxids: self.forgotten_zxids.iter().map(|v| ranks.zxid(v)).collect(),
            counted: false,
            opaque: false,
        }
    }
}

/// Numbers of one kind as a walk collects them: those from 0 to 127 as a set of bits, into
/// which a part's numbers are merged with one `or` (a state's numbers, kept in rank, are small),
/// the others listed. Once ranked, every value is listed, sorted and distinct (`sorted`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
struct Values {
    bits: u128,
    listed: Vec<i64>,
}

impl Values {
    fn insert(&mut self, v: i64) {
        match (0..128).contains(&v) {
            true => self.bits |= 1 << v,
            false => self.listed.push(v),
        }
    }

    fn extend(&mut self, other: &Values) {
        self.bits |= other.bits;
        self.listed.extend_from_slice(&other.listed);
    }

    /// Every value: the bits' in order, then the listed ones.
    fn iter(&self) -> impl Iterator<Item = i64> + '_ {
        let mut bits = self.bits;
        let set = std::iter::from_fn(move || {
            let at = (bits != 0).then(|| i64::from(bits.trailing_zeros()))?;
            bits &= bits - 1;
            Some(at)
        });
        set.chain(self.listed.iter().copied())
    }

    /// Whether these are exactly 0 to some k - 1, told by the bits alone: `false` with any
    /// value listed.
    fn are_zero_to_k(&self) -> bool {
        // 2^k - 1: the k lowest bits and no other.
        self.listed.is_empty() && self.bits & self.bits.wrapping_add(1) == 0
    }

    /// The same values with those listed sorted, each once: what a part's memo keeps.
    fn distinct(mut self) -> Values {
        self.listed = sorted(self.listed);
        self
    }

    /// Every value listed, sorted and distinct, ready to rank.
    fn sorted(&self) -> Values {
        Values { bits: 0, listed: sorted(self.iter().collect()) }
    }
}

impl FromIterator<i64> for Values {
    fn from_iter<I: IntoIterator<Item = i64>>(values: I) -> Self {
        let mut collected = Values::default();
        values.into_iter().for_each(|v| collected.insert(v));
        collected
    }
}

/// `v`'s rank among the sorted, distinct `values`.
fn rank(values: &[i64], v: i64, kind: &str) -> i64 {
    values.binary_search(&v).unwrap_or_else(|_| panic!("{kind} {v} was not collected")) as i64
}

/// Where spaced ranks (`Numbers::spaced`) put `v`: one of the sorted, distinct `ranked`
/// values at `(rank + 1) * GAP` (zxid 0 at 0, when `zero_stays`), one of the `forgotten` ones
/// (sorted, distinct, none ranked) just after the ranked value below it, in order.
fn spaced(ranked: &[i64], forgotten: &[i64], v: i64, zero_stays: bool, kind: &str) -> i64 {
    if let Ok(r) = ranked.binary_search(&v) {
        return if zero_stays && v == 0 { 0 } else { (r as i64 + 1) * GAP };
    }
    let at = forgotten.binary_search(&v).unwrap_or_else(|_| panic!("{kind} {v} was not collected"));
    let gap = ranked.partition_point(|r| *r < v);
    let first = match gap {
        0 => 0,
        _ => forgotten.partition_point(|f| *f < ranked[gap - 1]),
    };
    gap as i64 * GAP + (at - first) as i64 + 1
}

/// Whether some gap between two ranked values (or below the first) would hold `GAP` or more
/// forgotten values, too many for spaced ranks.
fn overfull(ranked: &[i64], forgotten: &[i64]) -> bool {
    let mut per_gap = std::collections::HashMap::new();
    forgotten.iter().any(|f| {
        let n = per_gap.entry(ranked.partition_point(|r| r < f)).or_insert(0i64);
        *n += 1;
        *n >= GAP
    })
}

/// `values` sorted, each once.
fn sorted<T: Ord>(mut values: Vec<T>) -> Vec<T> {
    values.sort();
    values.dedup();
    values
}

/// Whether sorted, distinct `values` are already their own ranks.
fn ranked(values: &[i64]) -> bool {
    values.iter().enumerate().all(|(i, v)| *v == i as i64)
}

impl Numbers {
    /// Ready for the first walk.
    pub fn collecting() -> Numbers {
        Numbers::default()
    }

    /// Ready for the first walk of a state whose ranks will be spaced (see `spaced`).
    pub fn collecting_spaced(spaced: bool) -> Numbers {
        Numbers { spaced, ..Numbers::default() }
    }

    /// Ready for a walk that moves every number to `2v`, and `at` (if any) to `2at + 1` (see
    /// `WalkMode::Probing`).
    pub fn probing(at: Option<(NumberKind, i64)>) -> Numbers {
        Numbers { walk: WalkMode::Probing(at), ..Numbers::default() }
    }

    /// On the first walk, notes a number that an input handed a recipe renumbered by replay,
    /// and that the recipe no longer holds (see `forgotten_seqs`).
    pub fn forget(&self, kind: NumberKind, v: i64) {
        debug_assert!(self.is_collecting());
        match kind {
            NumberKind::Seq => self.forgotten_seqs.borrow_mut().insert(v),
            NumberKind::Zxid => self.forgotten_zxids.borrow_mut().insert(v),
        }
    }

    /// The numbers of each kind the first walk collected, sorted, each once (forgotten ones
    /// aside).
    pub fn collected(&self, kind: NumberKind) -> Vec<i64> {
        let values = match kind {
            NumberKind::Seq => &self.seqs,
            NumberKind::Zxid => &self.zxids,
        };
        values.borrow().sorted().listed
    }

    /// Ready for a walk that spreads every number apart and lifts one kind above the other
    /// (see `WalkMode::Spreading`).
    pub fn spreading(lifted: Lifted) -> Numbers {
        Numbers { walk: WalkMode::Spreading(lifted), ..Numbers::default() }
    }

    /// Whether this is the first walk, which only collects.
    pub fn is_collecting(&self) -> bool {
        self.walk == WalkMode::Collecting
    }

    /// Whether this walk ranks (and so the numbers each part collected can follow it).
    pub fn is_ranking(&self) -> bool {
        self.walk == WalkMode::Ranking
    }

    /// On the first walk, collects what `walk` collects from one part of the state, through
    /// the part's `memo`: `walk` runs only if the part has not been walked before.
    /// `walk` says `None` when the part cannot be renumbered, and so does this.
    pub fn collect_part(
        &self,
        memo: &Memo<Option<Collected>>,
        walk: impl FnOnce(&Numbers) -> Option<()>,
    ) -> Option<()> {
        debug_assert!(self.is_collecting());
        let part = memo.get_or_init(|| {
            let part = Numbers::collecting();
            walk(&part)?;
            Some(Collected {
                seqs: part.seqs.into_inner().distinct(),
                zxids: part.zxids.into_inner().distinct(),
                locals: sorted(part.locals.into_inner()),
                forgotten_seqs: part.forgotten_seqs.into_inner().distinct(),
                forgotten_zxids: part.forgotten_zxids.into_inner().distinct(),
                counted: part.counted.get(),
                opaque: part.opaque.get(),
            })
        });
        let part = part.as_ref()?;
        self.seqs.borrow_mut().extend(&part.seqs);
        self.zxids.borrow_mut().extend(&part.zxids);
        self.locals.borrow_mut().extend_from_slice(&part.locals);
        self.forgotten_seqs.borrow_mut().extend(&part.forgotten_seqs);
        self.forgotten_zxids.borrow_mut().extend(&part.forgotten_zxids);
        if part.counted {
            self.counted.set(true);
        }
        if part.opaque {
            self.opaque.set(true);
        }
        Some(())
    }

    /// Whether what the first walk collected is already its own ranks (what `is_identity` says
    /// once ranked), seen without sorting: each kind's values are exactly 0 to some k - 1,
    /// which the set of bits tells when they are all below 128. `false` when it cannot tell so
    /// (a number past 127, a private number): the ranks then decide.
    pub fn in_rank(&self) -> bool {
        debug_assert!(self.is_collecting());
        !self.spaced
            && !self.counted.get()
            && self.locals.borrow().is_empty()
            && self.seqs.borrow().are_zero_to_k()
            && self.zxids.borrow().are_zero_to_k()
    }

    /// What the first walk collected, ready to rank on the second.
    pub fn into_ranks(self) -> Numbers {
        let seqs = self.seqs.borrow().sorted();
        let zxids = self.zxids.borrow().sorted();
        // A number forgotten by one recipe and held elsewhere is ranked.
        let forgotten = |values: &RefCell<Values>, ranked: &Values| Values {
            bits: 0,
            listed: values
                .borrow()
                .sorted()
                .listed
                .into_iter()
                .filter(|v| ranked.listed.binary_search(v).is_err())
                .collect(),
        };
        let forgotten_seqs = forgotten(&self.forgotten_seqs, &seqs);
        let forgotten_zxids = forgotten(&self.forgotten_zxids, &zxids);
        let overfull =
            overfull(&seqs.listed, &forgotten_seqs.listed) || overfull(&zxids.listed, &forgotten_zxids.listed);
        if overfull {
            self.opaque.set(true);
        }
        Numbers {
            walk: WalkMode::Ranking,
            seqs: RefCell::new(seqs),
            zxids: RefCell::new(zxids),
            locals: RefCell::new(sorted(self.locals.into_inner())),
            forgotten_seqs: RefCell::new(forgotten_seqs),
            forgotten_zxids: RefCell::new(forgotten_zxids),
            spaced: self.spaced,
            counted: self.counted,
            opaque: self.opaque,
            unfaithful: self.unfaithful,
        }
    }

    /// Whether ranks are spaced apart (see `spaced`).
    pub fn is_spaced(&self) -> bool {
        self.spaced
    }

    /// Ranks of the same numbers without gaps: every number, forgotten ones included, at its
    /// rank among all of its kind, so that the smallest are 0, 1, 2... as at a run's start.
    /// Spaced ranks never hold those small values, so the claim is also checked against them
    /// (see `World::ranking_commutes`).
    pub fn densified(&self) -> Numbers {
        debug_assert!(self.is_ranking());
        let dense = |live: &RefCell<Values>, forgotten: &RefCell<Values>| {
            let mut all = live.borrow().listed.clone();
            all.extend_from_slice(&forgotten.borrow().listed);
            RefCell::new(Values { bits: 0, listed: sorted(all) })
        };
        Numbers {
            walk: WalkMode::Ranking,
            seqs: dense(&self.seqs, &self.forgotten_seqs),
            zxids: dense(&self.zxids, &self.forgotten_zxids),
            locals: self.locals.clone(),
            counted: self.counted.clone(),
            ..Numbers::default()
        }
    }

    /// Every number is already its rank: renumbering would change nothing.
    pub fn is_identity(&self) -> bool {
        let locals = self.locals.borrow();
        let locals_ranked = locals.iter().enumerate().all(|(i, (client, v))| {
            let first = locals.partition_point(|(c, _)| c < client);
            *v == (i - first) as i64
        });
        debug_assert!(self.is_ranking(), "only ranks list every value");
        if self.spaced {
            let fixed = |values: &RefCell<Values>, map: &dyn Fn(i64) -> i64| {
                values.borrow().listed.iter().all(|&v| map(v) == v)
            };
            let seq = |v| self.seq(v);
            let zxid = |v| self.zxid(v);
            return fixed(&self.seqs, &seq)
                && fixed(&self.forgotten_seqs, &seq)
                && fixed(&self.zxids, &zxid)
                && fixed(&self.forgotten_zxids, &zxid)
                && locals_ranked
                && !self.counted.get();
        }
        ranked(&self.seqs.borrow().listed)
            && ranked(&self.zxids.borrow().listed)
            && locals_ranked
            && !self.counted.get()
    }

    /// Whether the walk met something that may hold a number it cannot rewrite: node data the
    /// recipe cannot renumber (`Recipe::renumber_data`: a holder announcing its sequence number
    /// writes one there), or a node below one of the lock's children (its path holds the
    /// child's name, but only the lock's children are renamed). Renumbering such a state would
    /// keep stale numbers beside ranked ones, so it is left as it is.
    pub fn opaque(&self) -> bool {
        self.opaque.get()
    }

    /// Notes that a recipe replayed with this walk's numbers did otherwise (see `unfaithful`).
    pub fn note_unfaithful(&self, why: String) {
        self.unfaithful.borrow_mut().get_or_insert(why);
    }

    /// Why a recipe replayed with this walk's numbers did otherwise, if one did.
    pub fn unfaithful(&self) -> Option<String> {
        self.unfaithful.borrow().clone()
    }

    /// Marks the state as holding numbers the walk cannot rewrite (see `opaque`).
    pub fn mark_opaque(&self) {
        self.opaque.set(true);
    }

    /// The largest sequence number collected.
    pub fn max_seq(&self) -> Option<i64> {
        self.seqs.borrow().iter().max()
    }

    /// The largest zxid collected.
    pub fn max_zxid(&self) -> Option<i64> {
        self.zxids.borrow().iter().max()
    }

    /// Where this walk takes `v` as a number of `kind`; `None` when it is a ranking walk that
    /// never collected `v` as one (no part of the state holds it as such). Never collects.
    pub fn image(&self, kind: NumberKind, v: i64) -> Option<i64> {
        let known = |values: &RefCell<Values>| values.borrow().listed.binary_search(&v).is_ok();
        let (ranked, forgotten) = match kind {
            NumberKind::Seq => (&self.seqs, &self.forgotten_seqs),
            NumberKind::Zxid => (&self.zxids, &self.forgotten_zxids),
        };
        match self.walk {
            WalkMode::Collecting => None,
            WalkMode::Ranking if !(known(ranked) || (self.spaced && known(forgotten))) => None,
            _ => Some(match kind {
                NumberKind::Seq => self.seq(v),
                NumberKind::Zxid => self.zxid(v),
            }),
        }
    }

    /// Whether `y` is where this walk takes some number it collected, of either kind.
    pub fn is_image(&self, y: i64) -> bool {
        let listed = |values: &RefCell<Values>| values.borrow().listed.clone();
        let hits = |kind: NumberKind, values: Vec<i64>| values.into_iter().any(|v| self.image(kind, v) == Some(y));
        hits(NumberKind::Seq, listed(&self.seqs))
            || hits(NumberKind::Seq, listed(&self.forgotten_seqs))
            || hits(NumberKind::Zxid, listed(&self.zxids))
            || hits(NumberKind::Zxid, listed(&self.forgotten_zxids))
    }

    /// A sequence number of one of the lock's children (or the lock's counter).
    pub fn seq(&self, v: i64) -> i64 {
        match self.walk {
            WalkMode::Ranking if self.spaced => {
                spaced(&self.seqs.borrow().listed, &self.forgotten_seqs.borrow().listed, v, false, "sequence number")
            }
            WalkMode::Ranking => rank(&self.seqs.borrow().listed, v, "sequence number"),
            WalkMode::Spreading(lifted) => spread(v, lifted, lifted == Lifted::Seqs),
            WalkMode::Probing(at) => v.saturating_mul(2).saturating_add(i64::from(at == Some((NumberKind::Seq, v)))),
            WalkMode::Collecting => {
                self.seqs.borrow_mut().insert(v);
                v
            }
        }
    }

    pub fn zxid(&self, v: i64) -> i64 {
        match self.walk {
            WalkMode::Ranking if self.spaced => {
                spaced(&self.zxids.borrow().listed, &self.forgotten_zxids.borrow().listed, v, true, "zxid")
            }
            WalkMode::Ranking => rank(&self.zxids.borrow().listed, v, "zxid"),
            WalkMode::Spreading(_) | WalkMode::Probing(_) if v == 0 => 0,
            WalkMode::Probing(at) => v.saturating_mul(2).saturating_add(i64::from(at == Some((NumberKind::Zxid, v)))),
            WalkMode::Spreading(lifted) => spread(v, lifted, lifted == Lifted::Zxids),
            WalkMode::Collecting => {
                self.zxids.borrow_mut().insert(v);
                v
            }
        }
    }

    /// A number that only `client`'s recipe hands out, always larger than the ones before.
    pub fn local(&self, client: ClientId, v: i64) -> i64 {
        match self.walk {
            WalkMode::Spreading(lifted) => spread(v, lifted, false),
            WalkMode::Probing(_) => v,
            WalkMode::Ranking => {
                let locals = self.locals.borrow();
                let first = locals.partition_point(|(c, _)| *c < client);
                let at =
                    locals.binary_search(&(client, v)).unwrap_or_else(|_| panic!("c{client}'s {v} was not collected"));
                (at - first) as i64
            }
            WalkMode::Collecting => {
                self.locals.borrow_mut().push((client, v));
                v
            }
        }
    }

    pub fn cversion(&self, c: i32) -> i32 {
        match self.walk {
            WalkMode::Ranking => c.min(1),
            WalkMode::Probing(_) => c,
            WalkMode::Spreading(_) if c <= 0 => c,
            WalkMode::Spreading(Lifted::Shifted(k)) => c.saturating_add(i32::from(k)),
            WalkMode::Spreading(_) => c.saturating_mul(2).saturating_add(1),
            WalkMode::Collecting => {
                if c > 1 {
                    self.counted.set(true);
                }
                c
            }
        }
    }

    /// A child name whose last ten characters are ZooKeeper's sequence suffix, with it
    /// renumbered; any other name unchanged.
    pub fn sequential_name(&self, name: &str) -> String {
        match sequence_suffix_at(name) {
            Some(at) => {
                let value = self.seq(name[at..].parse().expect("ten digits"));
                match self.walk {
                    WalkMode::Ranking | WalkMode::Spreading(_) | WalkMode::Probing(_) => {
                        let mut renamed = String::with_capacity(name.len() + 1);
                        renamed.push_str(&name[..at]);
                        path::push_sequence_suffix(&mut renamed, value as i32);
                        renamed
                    }
                    WalkMode::Collecting => name.to_string(),
                }
            }
            None => name.to_string(),
        }
    }
}

/// Where a name's sequence suffix starts: ten digits end it. A counter that has not wrapped
/// always prints as ten digits (`%010d`).
fn sequence_suffix_at(name: &str) -> Option<usize> {
    let at = name.len().checked_sub(10)?;
    (name.is_char_boundary(at) && name[at..].bytes().all(|b| b.is_ascii_digit())).then_some(at)
}

/// Applies a renumbering to the values of a world, as `crate::reduce::symmetry::Renamer` applies a
/// renaming. Only the names of the lock's children carry sequence numbers (in a format the
/// recipe chooses, hence `name`).
pub struct Renumber<'a> {
    pub numbers: &'a Numbers,
    pub lock_path: &'a str,
    /// Renumbers one child name of the lock path.
    pub name: &'a dyn Fn(&str, &Numbers) -> String,
    /// Renumbers a node's data, or says it cannot (`Recipe::renumber_data`).
    pub data: &'a dyn Fn(&str, &Numbers) -> Option<String>,
    /// The server's order of getChildren replies, which depends on the names.
    pub order: ChildrenOrder,
}

impl<'a> Renumber<'a> {
    /// The same renumbering with other numbers (to collect one part of a state on its own).
    pub fn with<'b>(&self, numbers: &'b Numbers) -> Renumber<'b>
    where
        'a: 'b,
    {
        Renumber { numbers, lock_path: self.lock_path, name: self.name, data: self.data, order: self.order }
    }

    pub fn seq(&self, v: i64) -> i64 {
        self.numbers.seq(v)
    }

    /// Whether the part with this memo is known to come out of the ranking walk unchanged.
    pub fn leaves_alone(&self, memo: &Memo<Option<Collected>>) -> bool {
        self.numbers.is_ranking() && memo.get().is_some_and(|n| n.as_ref().is_some_and(|n| n.fixed_by(self.numbers)))
    }

    /// What a ranking walk makes of the numbers of the part with this memo (`Collected::ranked`),
    /// where the part was walked before: with the part, all its renumbering reads.
    pub fn images(&self, memo: &Memo<Option<Collected>>) -> Option<Collected> {
        match self.numbers.is_ranking() {
            true => memo.get()?.as_ref().map(|n| n.ranked(self.numbers)),
            false => None,
        }
    }

    /// The memo of a part once renumbered: its numbers ranked, when ranking (a walk that only
    /// collects builds nothing that is kept; a spread part is walked afresh when needed).
    pub fn carry(&self, memo: &Memo<Option<Collected>>) -> Memo<Option<Collected>> {
        match self.numbers.is_ranking() {
            true => memo.carried(|n| n.as_ref().map(|n| n.ranked(self.numbers))),
            false => Memo::default(),
        }
    }

    pub fn zxid(&self, v: i64) -> i64 {
        self.numbers.zxid(v)
    }

    pub fn local(&self, client: ClientId, v: i64) -> i64 {
        self.numbers.local(client, v)
    }

    /// A child name of the lock path.
    pub fn child(&self, name: &str) -> String {
        (self.name)(name, self.numbers)
    }
}

impl Rewrite for Renumber<'_> {
    fn path(&self, p: &str) -> String {
        match path::child_of(p, self.lock_path) {
            Some(name) => path::join(self.lock_path, &self.child(name)),
            None => {
                if path::is_below(p, self.lock_path) {
                    self.numbers.mark_opaque();
                }
                p.to_string()
            }
        }
    }

    fn data(&self, data: &str) -> String {
        (self.data)(data, self.numbers).unwrap_or_else(|| {
            self.numbers.mark_opaque();
            data.to_string()
        })
    }

    /// A getChildren listing of `parent`, in the order the server gives the renumbered names.
    fn children(&self, parent: &str, names: &[String]) -> Vec<String> {
        if parent != self.lock_path {
            return names.to_vec();
        }
        let renamed = names.iter().map(|n| self.child(n)).collect();
        match self.numbers.is_collecting() {
            // Collecting changes no name, so the listing keeps its order.
            true => renamed,
            false => self.order.arrange(renamed),
        }
    }

    fn stat(&self, stat: &Stat) -> Stat {
        Stat {
            czxid: self.zxid(stat.czxid),
            mzxid: self.zxid(stat.mzxid),
            pzxid: self.zxid(stat.pzxid),
            cversion: self.numbers.cversion(stat.cversion),
            ..*stat
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_become_their_ranks_and_names_keep_their_prefix() {
        let collect = Numbers::collecting();
        for v in [7, 3, 12, 3] {
            collect.seq(v);
        }
        collect.sequential_name("c0-s2-lock-0000000005");
        let ranks = collect.into_ranks();
        assert!(!ranks.is_identity());
        assert_eq!([3, 5, 7, 12].map(|v| ranks.seq(v)), [0, 1, 2, 3]);
        assert_eq!(ranks.sequential_name("c0-s2-lock-0000000007"), "c0-s2-lock-0000000002");
        assert_eq!(ranks.sequential_name("holder"), "holder", "not a sequential name");
    }

    #[test]
    fn private_numbers_are_ranked_per_client() {
        let collect = Numbers::collecting();
        for (client, v) in [(0, 4), (1, 9), (0, 6), (1, 2)] {
            collect.local(client, v);
        }
        let ranks = collect.into_ranks();
        assert_eq!([(0, 4), (0, 6), (1, 2), (1, 9)].map(|(c, v)| ranks.local(c, v)), [0, 1, 0, 1]);
    }

    use proptest::prelude::{prop_oneof, Just};

    proptest::proptest! {
        /// Bits and list together hold every value met, each once, whatever its size.
        #[test]
        fn collected_values_are_every_value_met(values in proptest::collection::vec(-3i64..200, 0..12)) {
            let collected: Values = values.iter().copied().collect();
            let mut expected = values.clone();
            expected.sort();
            expected.dedup();
            proptest::prop_assert_eq!(&collected.sorted().listed, &expected);
            let from_zero = expected.iter().enumerate().all(|(i, v)| *v == i as i64);
            proptest::prop_assert!(!collected.are_zero_to_k() || from_zero);
        }

        /// Seen in rank without sorting exactly when ranking would change nothing, for numbers
        /// below 128; never wrongly above.
        #[test]
        fn numbers_seen_in_rank_without_sorting_are_the_identity_once_ranked(
            mut seqs in proptest::collection::vec(0i64..4, 0..6),
            zxids in proptest::collection::vec(0i64..4, 0..6),
            far in proptest::option::of(prop_oneof![Just(126i64), Just(127), Just(128), Just(140)]),
        ) {
            seqs.extend(far);
            let collect = Numbers::collecting();
            seqs.iter().for_each(|&v| { collect.seq(v); });
            zxids.iter().for_each(|&v| { collect.zxid(v); });
            let seen = collect.in_rank();
            let identity = collect.into_ranks().is_identity();
            proptest::prop_assert!(!seen || identity);
            if seqs.iter().all(|&v| v < 128) {
                proptest::prop_assert_eq!(seen, identity);
            }
        }
    }

    #[test]
    fn ranks_already_in_place_are_the_identity() {
        let collect = Numbers::collecting();
        for v in [0, 1, 2] {
            collect.zxid(v);
            collect.seq(v);
        }
        collect.cversion(1);
        assert!(collect.into_ranks().is_identity());
        let counted = Numbers::collecting();
        counted.cversion(2);
        assert!(!counted.into_ranks().is_identity(), "a cversion of 2 becomes 1");
    }
}
