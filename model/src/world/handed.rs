//! What a client's recipe was handed since it was last as it started (`Handed`): kept beside a
//! client for the checker's renumbering by replay (`crate::reduce::world::replay`, which
//! explains why it is sound), and never part of the client's identity: equality and hashing
//! ignore it.

use crate::cache::memo::digest;
use crate::recipe::{Ctx, Input, Recipe};
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// What a client's recipe was handed since it was last as it started, oldest first, and where
/// it started; empty and off for a recipe renumbered otherwise (or not at all). Never part of a
/// client's identity: equality and hashing ignore it.
#[derive(Clone)]
pub struct Handed<R> {
    /// The recipe as it last started, when this client's inputs are kept.
    pub(crate) start: Option<Arc<R>>,
    /// The latest input, which links to the ones before it: states share what they were handed
    /// before they parted.
    pub(crate) last: Option<Arc<HandedInput>>,
}

/// One input handed to a recipe, with who it ran as then and what it did.
pub(crate) struct HandedInput {
    pub(crate) ctx: Ctx,
    pub(crate) input: Input,
    pub(crate) seen: Seen,
    pub(crate) before: Option<Arc<HandedInput>>,
    /// A digest of every input up to this one, so that the interner tells two histories apart
    /// without walking them.
    pub(crate) digest: u128,
}

impl<R> Handed<R> {
    /// Whether this client's inputs are kept, for renumbering by replay.
    pub fn kept(&self) -> bool {
        self.start.is_some()
    }

    /// What tells this history from another of the same client: 0 when nothing is kept.
    pub fn digest(&self) -> u128 {
        self.last.as_ref().map_or(0, |e| e.digest)
    }
}

/// What the world and the application saw of a recipe once it handled an input: the requests
/// it sent, what it believed, in which mode, and the nodes it owned. Replaying the inputs with
/// their numbers renumbered must give each of these again, renumbered: that is the claim,
/// checked along the inputs themselves (a recipe that decided by a number's value decides
/// otherwise when replayed, and its state is not renumbered).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Seen {
    pub(crate) sent: Vec<crate::Request>,
    pub(crate) belief: crate::Belief,
    pub(crate) mode: crate::Mode,
    pub(crate) owned: Vec<String>,
}

impl Seen {
    pub(crate) fn of<R: Recipe>(recipe: &R, sent: &[crate::Request]) -> Seen {
        let owned = recipe.owned_nodes().into_iter().map(str::to_string).collect();
        Seen { sent: sent.to_vec(), belief: recipe.belief(), mode: recipe.mode(), owned }
    }
}

impl<R: Recipe> Handed<R> {
    /// Keeps the inputs of a recipe that starts as `recipe`.
    pub fn from_start(recipe: &R) -> Self {
        Handed { start: Some(Arc::new(recipe.clone())), last: None }
    }

    /// Notes that `recipe`, running as `ctx`, was handed `input`, sent `sent` and is now `now`.
    /// A recipe back where it started needs nothing before that to be replayed.
    pub fn push(&mut self, ctx: Ctx, input: Input, now: &R, sent: &[crate::Request]) {
        let Some(start) = &self.start else { return };
        if **start == *now {
            self.last = None;
            return;
        }
        self.append(ctx, input, Seen::of(now, sent));
    }

    pub(crate) fn append(&mut self, ctx: Ctx, input: Input, seen: Seen) {
        let before = self.last.take();
        let digest = digest(&(before.as_ref().map_or(0, |e| e.digest), ctx, &input));
        self.last = Some(Arc::new(HandedInput { ctx, input, seen, before, digest }));
    }

    /// The inputs, oldest first.
    pub(crate) fn entries(&self) -> Vec<&HandedInput> {
        let mut entries = Vec::new();
        let mut at = self.last.as_deref();
        while let Some(entry) = at {
            entries.push(entry);
            at = entry.before.as_deref();
        }
        entries.reverse();
        entries
    }
}

impl<R> Default for Handed<R> {
    /// Off: nothing is kept.
    fn default() -> Self {
        Handed { start: None, last: None }
    }
}

impl<R> PartialEq for Handed<R> {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl<R> Eq for Handed<R> {}

impl<R> Hash for Handed<R> {
    fn hash<H: Hasher>(&self, _: &mut H) {}
}

impl<R> fmt::Debug for Handed<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut n = 0;
        let mut at = self.last.as_deref();
        while let Some(entry) = at {
            n += 1;
            at = entry.before.as_deref();
        }
        match self.start.is_some() {
            true => write!(f, "Handed({n} inputs)"),
            false => write!(f, "Handed(off)"),
        }
    }
}
