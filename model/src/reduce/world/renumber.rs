//! Renumbering a world (see `crate::reduce::renumber`): the checker keeps each state with its sequence
//! numbers and zxids replaced by their ranks, so that states that differ only in how many nodes
//! and transactions came before are one.
//!
//! It applies only where it is sound:
//! - every client runs the same recipe, and it supports renumbering (one name format, one kind
//!   of fencing token);
//! - the lock's counter starts at 0, so it never comes near the 32-bit wrap in a checked run;
//!   the scenarios at the wrap (`first_sequence` near `i32::MAX`) depend on absolute values and
//!   are left alone;
//! - the lock's parent is never reaped: a new incarnation's counter starts again at 0, below the
//!   names that clients still hold;
//! - no `jute.maxbuffer` is set: under a limit, whether a reply is refused depends on the
//!   lengths of the names and data it carries, which renumbering changes (a token of 12 becomes
//!   3);
//! - getChildren replies come sorted or reversed, whose order renumbering keeps among names that
//!   share a prefix (a scrambled order hashes the digits);
//! - in the state itself, the lock's counter and the server's zxid are the largest numbers of
//!   their kind, so the next ones handed out are larger than anything held, in either numbering;
//! - the state holds no number the walk cannot rewrite: no data the recipe cannot renumber (in
//!   the tree or in a queued message) and no node below one of the lock's children
//!   (`Numbers::opaque`).
//!   Such a state is kept as it is; each state is still mapped to one with the same future, so
//!   deciding state by state is sound.
//!
//! The recipe's claim that only the order of its numbers matters is tested on the explored
//! states (`ranking_commutes`); the checker refuses renumbering for a recipe that fails it.

use crate::cache::rewritten;
use crate::recipe::{ClientId, Recipe};
use crate::reduce::rewrite::Rewrite;
use crate::world::{Client, Resource, World};
use crate::{ChildrenOrder, FaultKind, Lifted, Numbers, Renumber};
use std::sync::Arc;

/// Whether each client's recipe in `moved` holds what it holds in `here`, every number that
/// differs moved as `walk` moves it (one it never collected, new in the step, moved to a number
/// no collected one moves to, the same way throughout).
fn recipes_correspond<R: Recipe>(here: &World<R>, moved: &World<R>, walk: &Numbers) -> bool {
    let mut fresh: std::collections::BTreeMap<i64, i64> = std::collections::BTreeMap::new();
    let numbers = |text: &str| -> Vec<String> {
        super::replay::Runs(text).filter(|(digits, _)| *digits).map(|(_, run)| run.to_string()).collect()
    };
    for (a, b) in here.clients.iter().zip(moved.clients.iter()) {
        let (a, b) = (format!("{:?}", a.recipe), format!("{:?}", b.recipe));
        let (xs, ys) = (numbers(&a), numbers(&b));
        if xs.len() != ys.len() {
            return false;
        }
        for (x, y) in xs.iter().zip(&ys) {
            if x == y {
                continue;
            }
            let (Ok(x), Ok(y)) = (x.parse::<i64>(), y.parse::<i64>()) else { return false };
            let images = [
                walk.image(crate::reduce::renumber::NumberKind::Seq, x),
                walk.image(crate::reduce::renumber::NumberKind::Zxid, x),
            ];
            if images.contains(&Some(y)) {
                continue;
            }
            if images.iter().any(Option::is_some) || walk.is_image(y) {
                return false;
            }
            if *fresh.entry(x).or_insert(y) != y {
                return false;
            }
        }
    }
    true
}

/// The requests a step sent and how the server answered each, with every number masked: what
/// the same step does in two numberings of one state must agree on.
fn answered(notes: &Option<Vec<crate::world::Note>>) -> Vec<(String, String)> {
    let mask = |text: String| text.split(|c: char| c.is_ascii_digit()).collect::<Vec<_>>().join("#");
    let kind = |result: &Option<crate::ZkResult>| match result {
        None => "lost".to_string(),
        Some(Err(e)) => e.to_string(),
        Some(Ok(crate::Response::Created { .. })) => "created".to_string(),
        Some(Ok(crate::Response::Exists(None))) => "null".to_string(),
        Some(Ok(crate::Response::Children { children, .. })) => format!("{} children", children.len()),
        Some(Ok(_)) => "ok".to_string(),
    };
    notes
        .iter()
        .flatten()
        .filter_map(|n| match n {
            crate::world::Note::Request { request, result } => {
                Some((mask(crate::world::describe_request(request)), kind(result)))
            }
            _ => None,
        })
        .collect()
}

impl<R: Recipe> World<R> {
    /// This state with its numbers renumbered, or `None` when renumbering does not apply here or
    /// would change nothing.
    pub fn renumbered(&self) -> Option<World<R>> {
        self.renumbered_or_refuted().ok().flatten()
    }

    /// `renumbered`, or why a recipe renumbered by replay breaks its claim here: handed its
    /// inputs again with its numbers moved apart or ranked, it did otherwise (it reads a
    /// number's value). Such a state could still be kept as it is, but the states before it
    /// were merged on the claim, so the run is judged again without renumbering.
    pub fn renumbered_or_refuted(&self) -> Result<Option<World<R>>, String> {
        if !self.renumbering_applies() {
            return Ok(None);
        }
        let collected = Numbers::collecting_spaced(self.renumbers_by_replay());
        let walked = self.collect(&collected).is_some();
        if let Some(why) = collected.unfaithful() {
            return Err(why);
        }
        // Most steps leave the numbers in rank: that is seen without sorting them.
        if !walked || collected.opaque() || collected.in_rank() {
            return Ok(None);
        }
        let ranks = collected.into_ranks();
        if ranks.opaque() || !self.counters_lead(&ranks) || ranks.is_identity() {
            return Ok(None);
        }
        let renumbered = self.renumber_with(&ranks);
        match ranks.unfaithful() {
            Some(why) => Err(why),
            None => Ok(renumbered),
        }
    }

    /// The ranks of this state's numbers, or `None` when renumbering does not apply to the
    /// run or the state holds a number it cannot rewrite.
    fn ranks(&self) -> Option<Numbers> {
        // Spaced ranks with too many forgotten numbers in one gap cannot keep their order.
        self.collected().map(Numbers::into_ranks).filter(|ranks| !ranks.opaque())
    }

    /// Why a recipe renumbered by replay did otherwise when this state's numbers were
    /// collected (its numbers moved apart one by one), if one did.
    fn collected_refutes(&self) -> Option<String> {
        if !self.renumbering_applies() || !self.renumbers_by_replay() {
            return None;
        }
        let collected = Numbers::collecting_spaced(true);
        let _ = self.collect(&collected);
        collected.unfaithful()
    }

    /// This state's numbers, collected (see `ranks`).
    fn collected(&self) -> Option<Numbers> {
        if !self.renumbering_applies() {
            return None;
        }
        let collected = Numbers::collecting_spaced(self.renumbers_by_replay());
        self.collect(&collected)?;
        (!collected.opaque()).then_some(collected)
    }

    /// Whether the lock's counter and the server's zxid are the largest numbers of their kind
    /// in the state, so that every number handed out next is larger than all it holds.
    fn counters_lead(&self, ranks: &Numbers) -> bool {
        let counter = self.server.tree().get(&self.derived.config.lock_path).map(|n| i64::from(n.next_seq));
        counter.is_some() && ranks.max_seq() == counter && ranks.max_zxid() == Some(self.server.zxid())
    }

    /// This state with every number replaced by its rank, whether or not the checker would
    /// keep it so; `None` where renumbering cannot walk it.
    /// An error when a recipe renumbered by replay does otherwise once ranked.
    fn ranked(&self) -> Result<Option<World<R>>, String> {
        let Some(ranks) = self.ranks() else {
            // Kept as it is; but a recipe renumbered by replay that did otherwise with its
            // numbers moved apart (`Handed::collect_held`) breaks the claim, not just the walk.
            return match self.collected_refutes() {
                Some(why) => Err(format!("ranked, {why}")),
                None => Ok(None),
            };
        };
        if ranks.is_identity() {
            return Ok(Some(self.clone()));
        }
        let ranked = self.renumber_with(&ranks);
        match ranks.unfaithful() {
            Some(why) => Err(format!("ranked, {why}")),
            None => Ok(ranked),
        }
    }

    /// Checks, on a state the checker keeps renumbered, that its future depends only on the
    /// order of its numbers, which is what merging it with every state of the same order
    /// assumes (the recipe's `renumbered` claims it). The same state with its numbers spread
    /// apart (`v` becomes `2v + 1`: no number at its rank, a gap between every two) must offer
    /// the same steps, agree on `observed` (the properties the checker judges), and each of
    /// `settled` (steps from this state with their successors, settled) must lead to a state
    /// that settles to the same one. A recipe that reads a number's value (zero, a threshold)
    /// or the distance between two (`n + 1`) breaks this on the first state where that decides
    /// a step. Says which step breaks it.
    ///
    /// Ranking maps each kind of number on its own (sequence numbers, zxids, each client's
    /// private numbers, and a cversion to zero or one), so the check moves each kind as ranking
    /// may: once with the sequence numbers lifted above every zxid and once with the zxids
    /// lifted above every sequence number (`Walk::Spreading`), so that a recipe comparing a
    /// number of one kind with one of another, or a cversion's value, breaks it too; and three
    /// times more with every number shifted up by 1, 2 and 3, so that a comparison with a small
    /// constant, which ranks (small numbers themselves) can answer alike at two values, breaks
    /// it as well.
    ///
    /// `Ok(true)` when the check ran; `Ok(false)` when the state is kept as it is, merged with
    /// no other (its counters do not lead, or renumbering cannot walk it), so that nothing was
    /// checked and the checker must not count its situations as checked.
    pub fn ranking_commutes<T: PartialEq>(
        &self,
        settled: &[(crate::world::Step, &World<R>)],
        observed: impl Fn(&World<R>) -> T,
    ) -> Result<bool, String> {
        let Some(ranks) = self.ranks() else { return Ok(false) };
        if !self.counters_lead(&ranks) {
            return Ok(false);
        }
        // What each step asks of the server here, compared with each numbering's: asked once.
        let answers: Vec<Option<Vec<(String, String)>>> = settled
            .iter()
            .map(|(step, _)| {
                let mut notes = Some(Vec::new());
                self.clone().apply_logged(*step, &mut notes).is_ok().then(|| answered(&notes))
            })
            .collect();
        for lifted in [Lifted::Seqs, Lifted::Zxids, Lifted::Shifted(1), Lifted::Shifted(2), Lifted::Shifted(3)] {
            let spreading = Numbers::spreading(lifted);
            let spread = self.renumber_with(&spreading);
            if let Some(why) = spreading.unfaithful() {
                return Err(format!("with its numbers spread apart, {why}"));
            }
            let Some(spread) = spread else { return Ok(false) };
            if spreading.opaque() {
                return Ok(false);
            }
            self.spread_commutes(&spread, &spreading, settled, &answers, &observed, "spread apart")?;
        }
        if ranks.is_spaced() {
            // Spaced ranks never hold the small numbers of a run's start, which a recipe may
            // compare with a constant: checked against the same state ranked without gaps.
            let densified = ranks.densified();
            let dense = self.renumber_with(&densified);
            if let Some(why) = densified.unfaithful() {
                return Err(format!("with its numbers ranked without gaps, {why}"));
            }
            let Some(dense) = dense else { return Ok(false) };
            self.spread_commutes(&dense, &densified, settled, &answers, &observed, "ranked without gaps")?;
        }
        Ok(true)
    }

    /// Whether `ranking_commutes` would check anything here: the state can be ranked and its
    /// counters lead, so that renumbering merges it with others. Cheap next to the check, which
    /// a checker then runs on every successor.
    pub fn ranking_checkable(&self) -> bool {
        self.ranks().is_some_and(|ranks| self.counters_lead(&ranks))
    }

    /// `ranking_commutes` for one way of spreading the numbers apart, giving `spread`.
    fn spread_commutes<T: PartialEq>(
        &self,
        spread: &World<R>,
        walk: &Numbers,
        settled: &[(crate::world::Step, &World<R>)],
        answers: &[Option<Vec<(String, String)>>],
        observed: &impl Fn(&World<R>) -> T,
        how: &str,
    ) -> Result<(), String> {
        if spread.steps() != self.steps() {
            return Err(format!("with its numbers {how}, a state offers other steps"));
        }
        if observed(spread) != observed(self) {
            return Err(format!("with its numbers {how}, a state is judged differently"));
        }
        for ((step, next), answer) in settled.iter().zip(answers) {
            let mut spread_next = spread.clone();
            let mut spread_notes = Some(Vec::new());
            if spread_next.apply_logged(*step, &mut spread_notes).is_err() {
                return Err(format!("step `{step}` fails once the numbers are {how}"));
            }
            // What the step asked of the server and got, numbers masked, must be the same: a
            // recipe that names a node by a number it computed (`seq - 1`) finds it in one and
            // not in the other, though both successors may be kept as they are (see below).
            if answer.as_ref().is_some_and(|here| *here != answered(&spread_notes)) {
                return Err(format!("step `{step}` is answered otherwise once the numbers are {how}"));
            }
            spread_next.settle(crate::world::Settle::Renumbering).ok();
            // Settling may keep a state as it is (its counters do not lead); ranked, the two
            // must still be one. Two that cannot be ranked are merged with no other state.
            let same = spread_next == **next
                || match (spread_next.ranked()?, next.ranked()?) {
                    // Both kept as they are: for a recipe rebuilt by replay, each must hold what
                    // the other holds with the numbers moved as the walk moved them (a number
                    // it computed, `seq - 1`, is computed again from the moved ones, and may
                    // name another node than the one the walk moved there).
                    (None, None) if self.renumbers_by_replay() => recipes_correspond(next, &spread_next, walk),
                    (a, b) => a == b,
                };
            if !same {
                return Err(format!("step `{step}` leads elsewhere once the numbers are {how}"));
            }
        }
        Ok(())
    }

    /// Why this run keeps its sequence numbers and zxids as they are, if it does: renumbering
    /// was turned off, the world is of a kind it cannot apply to, or the recipe does not claim
    /// it (`Recipe::renumbered`). Asked of a run's first state. Without renumbering, every new
    /// number makes a new state, so a recipe that creates nodes again and again never runs out
    /// of states.
    pub fn why_not_renumbered(&self) -> Option<&'static str> {
        let config = &self.derived.config;
        if !config.renumber {
            return Some("renumbering is turned off (--no-renumber)");
        }
        if !self.derived.one_recipe {
            return Some("the clients run different recipes");
        }
        if config.first_sequence != 0 {
            return Some("the counter starts elsewhere than 0 (--first-sequence), where values matter");
        }
        if config.jute_maxbuffer.is_some() {
            return Some("replies have a length limit (--jute-maxbuffer), which sees a number's digits");
        }
        if config.faults.get(FaultKind::ReapParent) > 0 {
            return Some("the lock's parent can be reaped and made again, restarting its counter");
        }
        if matches!(self.server.config().children_order, ChildrenOrder::Scrambled(_)) {
            return Some("listings come in a scrambled order");
        }
        // A collecting walk asks each recipe for its renumbering and changes nothing.
        let claims = self.walk(&Numbers::collecting(), |r, _| {
            self.clients.iter().enumerate().all(|(i, c)| c.recipe.renumbered(i as ClientId, r).is_some())
        });
        let replayed = self.renumbers_by_replay();
        (claims != Some(true) && !replayed)
            .then_some("the recipe writes no renumbering (Recipe::renumbered) and says no to renumbering by replay")
    }

    /// The lock's next sequence number and the server's zxid: how far this state's numbers
    /// have grown.
    pub fn counters(&self) -> (i64, i64) {
        let seq = self.server.tree().get(&self.derived.config.lock_path).map_or(0, |n| i64::from(n.next_seq));
        (seq, self.server.zxid())
    }

    /// Whether renumbering can apply to this run at all (see the module's list).
    pub fn renumbering_applies(&self) -> bool {
        let config = &self.derived.config;
        self.derived.one_recipe
            && config.renumber
            && config.first_sequence == 0
            && config.jute_maxbuffer.is_none()
            && config.faults.get(FaultKind::ReapParent) == 0
            && !matches!(self.server.config().children_order, ChildrenOrder::Scrambled(_))
    }

    /// Collects the numbers of this state into `numbers` (the first walk), building nothing. A
    /// part shared with an earlier state (a client, a tree) brings the numbers collected from it
    /// then. `None` where renumbering cannot walk the state.
    fn collect(&self, numbers: &Numbers) -> Option<()> {
        debug_assert!(numbers.is_collecting());
        self.walk(numbers, |r, first| {
            // Walked for its numbers: a collecting walk builds no server.
            let _ = self.server.renumbered(r);
            for (i, c) in self.clients.iter().enumerate() {
                numbers.collect_part(&c.cache.numbers, |part| c.renumbered(i as ClientId, &r.with(part)).map(drop))?;
            }
            self.resource_renumbered(first, r);
            Some(())
        })?
    }

    /// This state with its numbers ranked or spread apart as `numbers` says; `None` where
    /// renumbering cannot walk it.
    fn renumber_with(&self, numbers: &Numbers) -> Option<World<R>> {
        debug_assert!(!numbers.is_collecting());
        self.walk(numbers, |r, first| {
            let mut world = self.clone();
            world.server = self.server.renumbered(r).expect("a walk that is not collecting builds");
            for (i, c) in self.clients.iter().enumerate() {
                if r.leaves_alone(&c.cache.numbers) {
                    continue;
                }
                let shared = self.clients.shared(i).expect("a client at each index");
                // Only a changed client is written, so unchanged ones stay shared between states
                // (what it was handed is not part of its identity, but must be renumbered too).
                let build = || {
                    let renumbered = c.renumbered(i as ClientId, r)?;
                    Some(match renumbered != *c || renumbered.handed.digest() != c.handed.digest() {
                        true => Arc::new(renumbered),
                        false => shared.clone(),
                    })
                };
                // A client ranked before with the same images is taken as it was ranked (see
                // `cache::rewritten`); not one renumbered by replay.
                let ranked = match (!c.handed.kept()).then(|| r.images(&c.cache.numbers)).flatten() {
                    Some(images) => rewritten::ranked(shared, i as u32, images, build),
                    None => build(),
                }?;
                if !Arc::ptr_eq(&ranked, shared) {
                    world.clients.put(i, ranked);
                }
            }
            world.resource = self.resource_renumbered(first, r);
            Some(world)
        })?
    }

    /// `walk` given the renumbering of this state with `numbers` (names and data in the format
    /// of `first`, every client's recipe) and that recipe.
    pub(crate) fn walk<T>(&self, numbers: &Numbers, walk: impl FnOnce(&Renumber, &R) -> T) -> Option<T> {
        let first = &self.clients.first()?.recipe;
        let name = |n: &str, numbers: &Numbers| first.renumber_name(n, numbers);
        let data = |d: &str, numbers: &Numbers| first.renumber_data(d, numbers);
        let r = Renumber {
            numbers,
            lock_path: &self.derived.config.lock_path,
            name: &name,
            data: &data,
            order: self.server.config().children_order,
        };
        Some(walk(&r, first))
    }

    /// The resource's tokens and grants walked with `r`.
    fn resource_renumbered(&self, first: &R, r: &Renumber) -> Resource {
        let token = |t: Option<i64>| t.map(|t| first.renumber_token(t, r.numbers));
        Resource {
            max_token: token(self.resource.max_token),
            max_write_token: token(self.resource.max_write_token),
            newest_grant: r.zxid(self.resource.newest_grant),
            newest_write_grant: r.zxid(self.resource.newest_write_grant),
            taken: self.resource.taken.iter().map(|t| first.renumber_token(*t, r.numbers)).collect(),
            ..self.resource.clone()
        }
    }
}

impl<R: Recipe> Client<R> {
    fn renumbered(&self, i: ClientId, r: &Renumber) -> Option<Client<R>> {
        let (recipe, handed) = self.recipe_renumbered(i, r)?;
        Some(Client {
            recipe,
            session: self.session,
            link: self.link,
            paused: self.paused,
            crashed: self.crashed,
            outbound: self.outbound.iter().map(|q| r.request(q)).collect(),
            inbound: self.inbound.iter().map(|m| r.input(m)).collect(),
            watches: self.watches.renumbered(r),
            drop_zxid: r.zxid(self.drop_zxid),
            rounds_left: self.rounds_left,
            noticed_disconnect: self.noticed_disconnect,
            wrote: self.wrote,
            grant: r.zxid(self.grant),
            created: self.created.iter().map(|(path, czxid)| (r.path(path), r.zxid(*czxid))).collect(),
            armed: self.armed,
            lagging: self.lagging,
            handed,
            // Which inputs' numbers a replayed recipe still holds is probed afresh: carried, a
            // recipe that reads a value could be classified by whichever copy came first.
            cache: crate::cache::client::ClientCache {
                numbers: match self.handed.kept() {
                    true => crate::cache::memo::Memo::default(),
                    false => r.carry(&self.cache.numbers),
                },
                ..Default::default()
            },
        })
    }
}
