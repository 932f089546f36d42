//! The line every queueing recipe keeps under its lock node, in one place: which children are
//! contenders, the number each one carries, the order they stand in, and the one just before
//! ours. The recipes differ only in the choices their sources make (a name's marker, an order),
//! so each describes its line with a [`Queue`] and calls it; none parses names on its own.
//!
//! A contender's name ends in the counter ZooKeeper appends to a sequential create: `%010d` of a
//! signed 32-bit counter that wraps from 2147483647 to -2147483648. The orders differ only at
//! that wrap (see [`Order`]).

use zklab_model::{path, Listing};

/// How contenders are put in line. They agree until the parent's counter wraps, so a node
/// created after the wrap has the smallest number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Order {
    /// Serial-number arithmetic (RFC 1982): `a` comes before `b` when `b - a`, wrapping, is
    /// positive. Right across the wrap as long as the live contenders span fewer than 2^31
    /// creates, which a lock's queue always does.
    Serial,
    /// By the signed number, as ZooKeeper's WriteLock parses it: the first node after the wrap
    /// sorts before every node created just before it.
    Signed,
    /// By the name's text after the marker, as Curator (`fixForSorting`) and kazoo 2.8 (the
    /// counter a regex extracts, sorted as a string) sort: the same break at the wrap, and after
    /// it, among `-` numbers, the newer node sorts first.
    Text,
}

/// Which children are contenders.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Names {
    /// Anything (a guid, a uuid), then the marker and the counter: `c0-s1-lock-0000000003`.
    EndInMarker,
    /// The marker and the counter alone: `lock-0000000003`.
    Exactly,
}

/// Where our node stands in line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place<'a> {
    /// Our node is not among the contenders (our session ended under us, or it was deleted).
    Gone,
    /// No contender stands before ours: the lock is ours.
    First,
    /// The contender just before ours: the one to watch.
    Behind(&'a str),
}

/// A recipe's line: how its contenders are named and ordered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Queue {
    /// What comes just before the counter in every contender's name (`-lock-`, `__lock__`).
    pub marker: &'static str,
    pub names: Names,
    pub order: Order,
}

impl Queue {
    /// Contenders named `<anything><marker><counter>`, in `order`.
    pub const fn new(marker: &'static str, order: Order) -> Self {
        Queue { marker, names: Names::EndInMarker, order }
    }

    /// The sequence number of a contender's name, or `None` for a child that is not one.
    pub fn sequence(&self, name: &str) -> Option<i32> {
        match self.names {
            Names::Exactly => path::sequence_of(name, self.marker),
            // The counter ends the name, 10 characters or 11 after the wrap; looking there (not
            // searching the name) matters with thousands of contenders per listing. The counter
            // holds only digits and a sign, so this is the number after the last marker.
            Names::EndInMarker => [10, 11].into_iter().find_map(|digits| {
                let at = name.len().checked_sub(digits + self.marker.len())?;
                let tail = name.get(at..)?;
                tail.starts_with(self.marker).then(|| path::sequence_of(tail, self.marker)).flatten()
            }),
        }
    }

    /// What follows the last marker: the counter as ZooKeeper printed it (what text order
    /// compares).
    pub fn suffix<'a>(&self, name: &'a str) -> &'a str {
        name.rfind(self.marker).map_or(name, |at| &name[at + self.marker.len()..])
    }

    /// Whether contender `a` stands before contender `b`.
    pub fn before(&self, a: &str, b: &str) -> bool {
        match self.order {
            Order::Text => self.suffix(a) < self.suffix(b),
            Order::Serial => match (self.sequence(a), self.sequence(b)) {
                (Some(a), Some(b)) => b.wrapping_sub(a) > 0,
                _ => false,
            },
            Order::Signed => match (self.sequence(a), self.sequence(b)) {
                (Some(a), Some(b)) => a < b,
                _ => false,
            },
        }
    }

    /// Where `mine` (a child's name) stands among `children`. One pass, no sort: a waiter
    /// needs only the contender just before it (it matters with thousands of contenders). A
    /// long listing that files its names by counter answers without the pass (see
    /// `place_by_counter`).
    pub fn place<'a>(&self, children: &'a Listing, mine: &str) -> Place<'a> {
        if let Some(place) = self.place_by_counter(children, mine) {
            return place;
        }
        let Some(my_number) = self.sequence(mine) else { return Place::Gone };
        if !children.contains(mine) {
            return Place::Gone;
        }
        let numbered = children.names().filter_map(|c| Some((self.sequence(c)?, c)));
        let behind = match self.order {
            // Distance back from ours, wrapping: the predecessor is the nearest one behind.
            Order::Serial => numbered
                .filter(|(s, _)| s.wrapping_sub(my_number) < 0)
                .max_by_key(|(s, _)| s.wrapping_sub(my_number))
                .map(|(_, c)| c),
            Order::Signed => numbered.filter(|(s, _)| *s < my_number).max().map(|(_, c)| c),
            Order::Text => {
                let mine = self.suffix(mine);
                numbered.map(|(_, c)| c).filter(|c| self.suffix(c) < mine).max_by_key(|c| self.suffix(c))
            }
        };
        behind.map_or(Place::First, Place::Behind)
    }

    /// `place`'s answer read from a long listing's counter index (`Listing::counters_below`),
    /// or `None` to leave it to the pass. The index offers the names ending in a counter below
    /// ours, greatest first, and only when no name here reads as a negative number after our
    /// marker. Every number this queue reads from a name is then that name's counter, or none,
    /// so the contenders before ours are the offered names it reads a number from, each at its
    /// counter. All three orders agree on non-negative numbers below ours (serially, each is
    /// behind ours; as text, ten digits each, after the last marker, which ends in a non-digit
    /// and so cannot end inside the digits): the first such name is the predecessor. Two with
    /// the same number (a name made to look like another's) are a tie each order breaks its own
    /// way: the pass decides.
    fn place_by_counter<'a>(&self, children: &'a Listing, mine: &str) -> Option<Place<'a>> {
        let marker_end = *self.marker.as_bytes().last().filter(|b| !b.is_ascii_digit())?;
        let my_number = u64::try_from(self.sequence(mine)?).ok()?;
        let mut before = children.counters_below(my_number, marker_end)?;
        if !children.contains(mine) {
            return Some(Place::Gone);
        }
        let mut contenders = before.by_ref().filter_map(|(at, name)| Some((at, name, self.sequence(name)?)));
        let Some((at, predecessor, number)) = contenders.next() else { return Some(Place::First) };
        let tied = contenders.next().is_some_and(|(next, _, _)| next == at);
        (u64::try_from(number) == Ok(at) && !tied).then_some(Place::Behind(predecessor))
    }

    /// The contenders among `children`, in line (ties, which only a recipe that names a node
    /// after another's number makes, by name).
    pub fn line<'a>(&self, children: &'a [String]) -> Vec<&'a String> {
        let mut line: Vec<(i32, &String)> = children.iter().filter_map(|c| Some((self.sequence(c)?, c))).collect();
        match self.order {
            Order::Signed => line.sort(),
            Order::Text => line.sort_by(|(_, a), (_, b)| self.suffix(a).cmp(self.suffix(b)).then(a.cmp(b))),
            // Serially from the oldest: the live numbers span less than half the counter, so on
            // the circle of counter values the widest gap between neighbours lies just before it.
            Order::Serial => {
                line.sort();
                let gap = |i: usize| line[i].0.wrapping_sub(line[(i + line.len() - 1) % line.len()].0) as u32;
                if let Some(start) = (0..line.len()).max_by_key(|&i| (gap(i), std::cmp::Reverse(i))) {
                    line.rotate_left(start);
                }
            }
        }
        line.into_iter().map(|(_, c)| c).collect()
    }
}

/// The child whose name starts with `prefix`: a node found again by its guid after a
/// ConnectionLoss left its creator unsure whether the create happened.
pub fn find_own<'a>(children: &'a Listing, prefix: &str) -> Option<&'a str> {
    children.names().find(|c| c.starts_with(prefix))
}

/// ZooKeeper's `ZNodeName` (its WriteLock's): the number after the last `-`, or -1 when that
/// is not a number. A counter after the wrap (`-2147483648`) reads as -1 too: the `-` is its
/// sign, and the digits after it overflow an int.
pub fn znode_name_sequence(name: &str) -> i32 {
    name.rsplit('-').next().and_then(|digits| path::sequence_of(digits, "")).unwrap_or(-1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use zklab_model::ChildrenOrder;

    fn names(list: &[&str]) -> Listing {
        list.iter().map(|s| s.to_string()).collect()
    }

    const LOCK: Queue = Queue::new("-lock-", Order::Serial);

    #[test]
    fn only_contenders_are_numbered() {
        assert_eq!(LOCK.sequence("c0-s1-lock-0000000003"), Some(3));
        assert_eq!(LOCK.sequence("c0-s1-lock--2147483648"), Some(i32::MIN));
        assert_eq!(LOCK.sequence("c0-s1-lock-3"), None, "ZooKeeper pads to ten");
        assert_eq!(LOCK.sequence("w-c0"), None);
        let exact = Queue { names: Names::Exactly, ..Queue::new("lock-", Order::Signed) };
        assert_eq!(exact.sequence("lock-0000000003"), Some(3));
        assert_eq!(exact.sequence("x-lock-0000000003"), None);
    }

    #[test]
    fn a_waiter_watches_the_nearest_contender_behind_it() {
        let children = names(&["c2-s3-lock-0000000002", "w-c0", "c0-s1-lock-0000000000", "c1-s2-lock-0000000001"]);
        for order in [Order::Serial, Order::Signed, Order::Text] {
            let queue = Queue { order, ..LOCK };
            assert_eq!(queue.place(&children, "c2-s3-lock-0000000002"), Place::Behind(&children[3]), "{order:?}");
            assert_eq!(queue.place(&children, "c0-s1-lock-0000000000"), Place::First, "{order:?}");
            assert_eq!(queue.place(&children, "c9-s9-lock-0000000009"), Place::Gone, "{order:?}");
            assert_eq!(queue.line(&children), [&children[2], &children[3], &children[0]], "{order:?}");
        }
    }

    #[test]
    fn only_serial_order_puts_the_node_after_the_wrap_behind_the_holder() {
        let children = names(&["c0-s2-lock-2147483647", "c1-s3-lock--2147483648"]);
        let place = |order| Queue { order, ..LOCK }.place(&children, "c1-s3-lock--2147483648");
        assert_eq!(place(Order::Serial), Place::Behind(&children[0]));
        assert_eq!(place(Order::Signed), Place::First);
        assert_eq!(place(Order::Text), Place::First);
        assert_eq!(LOCK.line(&children), [&children[0], &children[1]]);
    }

    #[test]
    fn after_the_wrap_text_order_puts_the_newer_node_first() {
        let children = names(&["c0-s2-lock--2147483648", "c1-s3-lock--2147483647"]);
        let place = |order| Queue { order, ..LOCK }.place(&children, "c1-s3-lock--2147483647");
        assert_eq!(place(Order::Serial), Place::Behind(&children[0]));
        assert_eq!(place(Order::Signed), Place::Behind(&children[0]));
        assert_eq!(place(Order::Text), Place::First, "\"-2147483647\" < \"-2147483648\" as text");
    }

    /// Names a recipe could meet under its lock node: contenders of several markers, numbers
    /// that tie, sit at the wrap or read as negative, and names that are no contender at all.
    fn child() -> impl Strategy<Value = String> {
        let prefix = prop_oneof![Just(""), Just("c0-s1"), Just("c1-s2-"), Just("x_"), Just("w-c0")];
        let marker = prop_oneof![Just("-lock-"), Just("__lock__"), Just("lock-"), Just("-"), Just("")];
        let number = prop_oneof![
            (0i64..12).prop_map(|n| format!("{n:010}")),
            (-3i64..3).prop_map(|n| format!("{n:010}")),
            Just(format!("{}", i32::MAX)),
            Just(format!("{}", i32::MIN)),
            (0i64..12).prop_map(|n| format!("{n:09}")),
            (0i64..12).prop_map(|n| format!("-{n:010}")),
        ];
        (prefix, marker, number).prop_map(|(p, m, n)| format!("{p}{m}{n}"))
    }

    proptest! {
        /// A long listing's counter index answers `place` exactly as reading every name does,
        /// for every marker, kind of name and order.
        #[test]
        fn the_counter_index_places_a_waiter_where_the_pass_does(
            children in proptest::collection::btree_set(child(), 0..24),
            extra in child(),
            seed in any::<u64>(),
        ) {
            let children: Vec<String> = children.into_iter().collect();
            for order in [ChildrenOrder::Sorted, ChildrenOrder::Reversed, ChildrenOrder::Scrambled(seed)] {
                let kept = Listing::kept(order, children.clone());
                let given = Listing::new(order.arrange(children.clone()));
                for marker in ["-lock-", "__lock__", "lock-", "-"] {
                    for names in [Names::EndInMarker, Names::Exactly] {
                        for queue_order in [Order::Serial, Order::Signed, Order::Text] {
                            let queue = Queue { marker, names, order: queue_order };
                            for mine in children.iter().chain([&extra]) {
                                let owned = |p: Place| format!("{p:?}");
                                prop_assert_eq!(
                                    owned(queue.place(&kept, mine)),
                                    owned(queue.place(&given, mine)),
                                    "{:?} {:?} {}", queue, order, mine
                                );
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn zookeepers_own_parse_reads_a_counter_after_the_wrap_as_minus_one() {
        assert_eq!(znode_name_sequence("/lock/x-0000000007"), 7);
        assert_eq!(znode_name_sequence("/lock/x--2147483648"), -1);
        assert_eq!(znode_name_sequence("/lock/x"), -1);
    }
}
