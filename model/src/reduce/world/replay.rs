//! Renumbering by replay: how the checker renumbers a recipe that does not renumber itself
//! (`Recipe::renumbered` says `None`), with nothing written by its author.
//!
//! A recipe is a deterministic state machine: its state is what its inputs made of the state it
//! started from. Every number it holds came to it in an input (a created node's name, a
//! listing, a stat), so the recipe as it would be had ZooKeeper handed out other numbers in the
//! same order is a fresh copy of where it started, handed the same inputs with those numbers.
//! Each client therefore keeps what its recipe was handed since the recipe was last as it
//! started (`Handed`), and renumbering a state hands a fresh copy those inputs renumbered. The
//! inputs' numbers are collected with the rest of the state's, so the ranks keep their order
//! with every number the recipe may have kept.
//!
//! Replay gives what the recipe would hold if only the order of its numbers mattered: exactly
//! the claim a written `renumbered` makes, and checked the same way on the explored states
//! (`World::ranking_commutes`): a recipe that compares a number with a constant, or reads the
//! distance between two, is refused and judged again without renumbering.
//!
//! What was handed is not part of a client's identity: two clients whose recipes are equal have
//! the same futures, whatever brought each there, and replaying either's inputs gives the same
//! recipe. It is part of which copy of a client the checker's interner hands a state, so that
//! the copy a run keeps never depends on which thread met it first. The numbers of inputs
//! handed since the recipe last started still count among the state's numbers: a recipe that
//! never returns to where it started keeps them all, and its numbers grow with them.

use crate::recipe::{ClientId, Ctx, Recipe};
use crate::reduce::renumber::NumberKind;
use crate::reduce::rewrite::Rewrite;
use crate::world::handed::{Handed, Seen};
use crate::world::{Client, World};
use crate::{Numbers, Renamer, Renumber};
use std::sync::Arc;

impl Seen {
    /// The same, with its numbers rewritten (`token` for fencing tokens).
    fn rewritten(&self, rewrite: &impl Rewrite, token: &dyn Fn(i64) -> i64) -> Seen {
        use crate::Belief;
        let belief = match self.belief {
            Belief::Holding { token: t } => Belief::Holding { token: token(t) },
            Belief::Suspended { token: t } => Belief::Suspended { token: token(t) },
            other => other,
        };
        Seen {
            sent: self.sent.iter().map(|q| rewrite.request(q)).collect(),
            belief,
            mode: self.mode,
            owned: self.owned.iter().map(|p| rewrite.path(p)).collect(),
        }
    }
}

impl<R: Recipe> Handed<R> {
    /// The inputs rewritten by `rewrite` (and their contexts by `ctx`, tokens by `token`), kept
    /// from `start` (the start rewritten), and, when `replay`, the recipe a copy of `start`
    /// becomes when handed them; an error when the copy, handed an input, does not do what the
    /// recipe did, rewritten (see `Seen`).
    #[allow(clippy::too_many_arguments)]
    fn rewritten(
        &self,
        start: R,
        rewrite: &impl Rewrite,
        numbers: &Numbers,
        ctx: impl Fn(Ctx) -> Ctx,
        token: &dyn Fn(i64) -> i64,
        replay: bool,
        // The recipe as it is, as `Debug` prints it.
        actual: Option<&str>,
    ) -> Result<(Handed<R>, Option<R>), String> {
        let mut handed = Handed { start: Some(Arc::new(start.clone())), last: None };
        let mut recipe = replay.then_some(start);
        let mut out = Vec::new();
        let rewrite = KeepingCounts(rewrite);
        for entry in self.entries() {
            let (ctx, input) = (ctx(entry.ctx), rewrite.input(&entry.input));
            let seen = entry.seen.rewritten(&rewrite, token);
            if let Some(recipe) = &mut recipe {
                recipe.handle(&ctx, input.clone(), &mut out);
                if Seen::of(recipe, &out) != seen {
                    return Err(format!("handed {input:?} again, the recipe does otherwise"));
                }
                out.clear();
            }
            handed.append(ctx, input, seen);
        }
        // What the recipe holds must be the same but for its numbers: a recipe that decided by a
        // number's value holds another state once replayed, though it sent the same requests.
        // And each number it holds must be one of its own numbers where this renumbering takes
        // it: a number it computed (`seq - 1`) and has not sent yet is not.
        if let (Some(recipe), Some(actual)) = (&recipe, actual) {
            renumbered_alike(actual, &format!("{recipe:?}"), numbers)?;
        }
        Ok((handed, recipe))
    }

    /// Collects with `r` the numbers of the inputs that the recipe still holds, and notes the
    /// others as forgotten (`Numbers::forget`). A number is held when handing the inputs again
    /// with it moved within its gap (`Numbers::probing`) gives another recipe than with none
    /// moved: the recipe keeps it, or something made of it that its order alone does not
    /// decide. One it does not hold cannot reach the recipe's future, so it takes no rank, and
    /// two states whose recipes hold the same numbers are ranked alike whatever each was handed
    /// on the way.
    fn collect_held(&self, r: &Renumber, actual: &R) {
        let entries = self.entries();
        if entries.is_empty() {
            return;
        }
        let Some(start) = self.start.as_deref() else { return };
        let handed = Numbers::collecting();
        let walk = r.with(&handed);
        for entry in &entries {
            KeepingCounts(&walk).input(&entry.input);
            entry.seen.rewritten(&KeepingCounts(&walk), &|t| start.renumber_token(t, &handed));
        }
        if handed.opaque() {
            r.numbers.mark_opaque();
            return;
        }
        let printed = format!("{actual:?}");
        let replayed = |at: Option<(NumberKind, i64)>| {
            let probe = Numbers::probing(at);
            let token = |t| start.renumber_token(t, &probe);
            self.rewritten(start.clone(), &r.with(&probe), &probe, |ctx| ctx, &token, true, Some(&printed))
                .map(|(_, recipe)| recipe)
        };
        // A recipe that does otherwise with its numbers moved apart reads their values: its
        // state is kept as it is.
        let moved_none = match replayed(None) {
            Ok(recipe) => recipe,
            Err(why) => {
                r.numbers.note_unfaithful(format!("with its numbers moved apart, {why}"));
                r.numbers.mark_opaque();
                return;
            }
        };
        for kind in [NumberKind::Seq, NumberKind::Zxid] {
            for v in handed.collected(kind) {
                // Zxid 0 is the model's "none" and every state's (the root's czxid): ranked.
                let held = match (kind, v) {
                    (NumberKind::Zxid, 0) => true,
                    _ => match replayed(Some((kind, v))) {
                        Ok(moved) => moved != moved_none,
                        Err(why) => {
                            r.numbers.note_unfaithful(format!("with one number moved, {why}"));
                            r.numbers.mark_opaque();
                            return;
                        }
                    },
                };
                match (held, kind) {
                    (true, NumberKind::Seq) => {
                        r.numbers.seq(v);
                    }
                    (true, NumberKind::Zxid) => {
                        r.numbers.zxid(v);
                    }
                    (false, _) => r.numbers.forget(kind, v),
                }
            }
        }
    }
}

/// Whether `replayed` holds, number for number, what `actual` holds renumbered by `numbers`
/// (both as `Debug` prints them): the same text between the runs of digits (a recipe that
/// decided by a number's value holds another state once replayed, though it sent the same
/// requests), and each run of digits either the same in both (a count, a version, a client's
/// number) or a sequence number or zxid of `actual`'s that `numbers` takes to `replayed`'s (a
/// number the recipe computed, `seq - 1`, is not). So `Debug` must print the whole state, as
/// `Hash` must write everything `Eq` compares.
fn renumbered_alike(actual: &str, replayed: &str, numbers: &Numbers) -> Result<(), String> {
    let (mut a, mut b) = (Runs(actual), Runs(replayed));
    loop {
        match (a.next(), b.next()) {
            (None, None) => return Ok(()),
            (Some((false, x)), Some((false, y))) if x == y => {}
            (Some((true, x)), Some((true, y))) if x == y => {}
            (Some((true, x)), Some((true, y))) => {
                let (Ok(x), Ok(y)) = (x.parse::<i64>(), y.parse::<i64>()) else {
                    return Err(format!("replayed, the recipe holds {y} where it held {x}"));
                };
                let image = |kind| numbers.image(kind, x) == Some(y);
                if !(image(NumberKind::Seq) || image(NumberKind::Zxid)) {
                    return Err(format!(
                        "replayed, the recipe holds {y} where it held {x}, which its numbers do not take there"
                    ));
                }
            }
            _ => return Err("replayed, the recipe holds another state than its numbers alone make".to_string()),
        }
    }
}

/// A text's runs of digits and of other characters, in order: `(digits, run)`.
pub(crate) struct Runs<'a>(pub(super) &'a str);

impl<'a> Iterator for Runs<'a> {
    type Item = (bool, &'a str);
    fn next(&mut self) -> Option<(bool, &'a str)> {
        let bytes = self.0.as_bytes();
        let digits = bytes.first()?.is_ascii_digit();
        // An ASCII digit is one byte, and no other character's bytes are digits: `end` falls
        // on a character's boundary.
        let end = bytes.iter().position(|b| b.is_ascii_digit() != digits).unwrap_or(bytes.len());
        let (run, rest) = self.0.split_at(end);
        self.0 = rest;
        Some((digits, run))
    }
}

/// A rewrite of the inputs a recipe was handed that leaves every stat's cversion as it was.
/// Ranking keeps a cversion only as 0 or 1, which is not an order-preserving map: a recipe that
/// kept a cversion and compares it with the next would, replayed with flattened ones, compare
/// alike where it did not, and the state would hide what the recipe really holds. Kept as it
/// was, a recipe that holds a cversion holds it in the renumbered state too, and a later reply's
/// flattened one compares otherwise with it, which the claim's checks see.
struct KeepingCounts<'a, W: Rewrite>(&'a W);

impl<W: Rewrite> Rewrite for KeepingCounts<'_, W> {
    fn path(&self, p: &str) -> String {
        self.0.path(p)
    }
    fn children(&self, parent: &str, names: &[String]) -> Vec<String> {
        self.0.children(parent, names)
    }
    fn stat(&self, stat: &crate::Stat) -> crate::Stat {
        crate::Stat { cversion: stat.cversion, ..self.0.stat(stat) }
    }
    fn data(&self, data: &str) -> String {
        self.0.data(data)
    }
}

impl<R: Recipe> Client<R> {
    /// This client's recipe renumbered by `r`, and what it was handed renumbered with it: as
    /// the recipe writes it (`Recipe::renumbered`), else by replay; `None` when neither
    /// applies. A collecting walk collects the numbers of the inputs too and builds nothing.
    pub(crate) fn recipe_renumbered(&self, i: ClientId, r: &Renumber) -> Option<(R, Handed<R>)> {
        // Decided once per run (`keep_inputs_for_replay`): a recipe replayed in one state and
        // renumbered by its own code in another would leave its inputs unrenumbered.
        if !self.handed.kept() {
            return Some((self.recipe.renumbered(i, r)?, Handed::default()));
        }
        if r.numbers.is_collecting() {
            self.handed.collect_held(r, &self.recipe);
            return Some((self.recipe.clone(), self.handed.clone()));
        }
        let start = R::clone(self.handed.start.as_deref()?);
        let token = |t| start.renumber_token(t, r.numbers);
        let printed = format!("{:?}", self.recipe);
        match self.handed.rewritten(start.clone(), r, r.numbers, |ctx| ctx, &token, true, Some(&printed)) {
            Ok((handed, recipe)) => Some((recipe?, handed)),
            Err(why) => {
                r.numbers.note_unfaithful(why);
                None
            }
        }
    }

    /// What this client's recipe was handed, with the clients renamed by `r` (the start renamed
    /// as the recipe renames itself); `None` when the recipe does not support renaming.
    pub(crate) fn handed_renamed(&self, r: &Renamer) -> Option<Handed<R>> {
        if !self.handed.kept() {
            return Some(Handed::default());
        }
        let ctx = |ctx: Ctx| Ctx { client: r.renaming.client(ctx.client), session: r.session(ctx.session) };
        let start = self.handed.start.as_deref()?.renamed(r)?;
        let unused = Numbers::collecting();
        self.handed.rewritten(start, r, &unused, ctx, &|t| t, false, None).ok().map(|(handed, _)| handed)
    }
}

impl<R: Recipe> World<R> {
    /// Starts keeping each client's inputs when this run will renumber its recipe by replay:
    /// renumbering applies to the run, the recipe does not renumber itself and does not say no
    /// to replay. Asked once, of a run's first state.
    pub(crate) fn keep_inputs_for_replay(&mut self) {
        let replayed = self.renumbering_applies()
            && self.clients.iter().all(|c| c.recipe.renumbered_by_replay())
            && self
                .walk(&crate::Numbers::collecting(), |r, _| {
                    self.clients.iter().enumerate().all(|(i, c)| c.recipe.renumbered(i as ClientId, r).is_none())
                })
                .unwrap_or(false);
        if replayed {
            for i in 0..self.clients.len() {
                let handed = Handed::from_start(&self.clients[i].recipe);
                self.clients[i].handed = handed;
            }
            // Renaming a replayed client renames its inputs, and the next renumbering replays
            // them: the recipe is then rebuilt as the client it was renamed to, which hides a
            // recipe whose renaming does not commute with its steps from symmetry's check.
            self.derived.interchangeable = false;
        }
    }

    /// Whether this run renumbers its recipe by replay (see the module).
    pub fn renumbers_by_replay(&self) -> bool {
        self.renumbering_applies() && self.clients.first().is_some_and(|c| c.handed.kept())
    }

    /// Stops keeping inputs: the run no longer renumbers, or never settles a state (the
    /// simulator).
    pub fn stop_keeping_inputs(&mut self) {
        for i in 0..self.clients.len() {
            if self.clients[i].handed.kept() {
                self.clients[i].handed = Handed::default();
            }
        }
    }
}
