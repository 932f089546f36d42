//! Expanding one state of the graph pass: its successors (partial order choosing among them),
//! each judged on the step that reached it, settled, renamed to its class's representative and
//! fingerprinted; the new ones packed for the merge. Where the recipe claims symmetry or
//! renumbering, the claim is checked here on every situation met the first time (see
//! `situations`), and a refuted claim travels back with the expansion.
//! Runs on the helper threads (see `pipeline`), so it reads the index and never writes it.

use super::index::{fingerprint, Index};
use super::intern::{Interner, Packed};
use super::search::{judge, judge_met, judge_step, represent, Reduction};
use rustc_hash::FxHashSet;
use std::sync::Arc;
use zklab_model::{Property, Recipe, Step, World};

/// A successor as a worker found it: unknown states come with the state itself, packed, and
/// which properties hold there, so the merge only numbers them.
pub(super) struct Successor {
    pub(super) step: Step,
    pub(super) fingerprint: u128,
    pub(super) new: Option<(Packed, u64)>,
    /// Bit `i` set: the step violates the transition property `properties[i]`.
    pub(super) broken: u64,
    /// Bit `i` set: the step met the `reached:*` item `properties[i]` (see `judge_met`).
    pub(super) met: u64,
}

/// One expanded state.
pub(super) struct Expansion {
    pub(super) waiting: u8,
    pub(super) holding: u8,
    pub(super) successors: Vec<Successor>,
    /// Why a reduction the pass applies is unsound at this state.
    pub(super) refuted: Option<Refusal>,
    /// The recipe situations (see `situations`) whose claims this expansion checked.
    pub(super) checked: Vec<Situation>,
}

/// The recipe situations whose claims were checked in an earlier level: shared,
/// read-only, with the expanding threads, and grown only between levels so that which states
/// are checked does not depend on how the threads interleave.
pub(super) type CheckedSituations = Arc<FxHashSet<Situation>>;

/// A recipe's claim that a reduction applies to it, checked on the states explored.
#[derive(Clone, Copy, Hash, PartialEq, Eq)]
enum Claim {
    /// Its clients are interchangeable (`World::renaming_commutes`).
    Symmetry,
    /// Only the order of its numbers matters (`World::ranking_commutes`).
    Renumbering,
}

/// One client's situation, checked for one claim. What a client's recipe does next, and how it
/// is renamed or renumbered, depends only on its situation: the client's number and session
/// (its `Ctx`), its recipe's state and the input it handles next (`Client::situation`, a
/// digest memoized on the client). The model's own steps do not depend on the recipe's claims:
/// they are symmetric and read numbers by order by construction, which the differential test
/// holds them to. Kept as its parts, not digested again: a state's situations are looked up on
/// every expansion, and a digest of each cost 3.6 % of a run's instructions (measured).
#[derive(Clone, Copy, Hash, PartialEq, Eq)]
pub(super) struct Situation {
    claim: Claim,
    client: usize,
    /// `Client::situation`.
    situation: u128,
    /// For a renumbering check of a successor, the client's situation once renumbered (see
    /// `renumbered_situations`).
    renumbered: Option<u128>,
}

/// Each client's situation in `world`, for `claim`.
fn situations<R: Recipe>(world: &World<R>, claim: Claim) -> Vec<Situation> {
    (0..world.clients.len())
        .map(|i| Situation { claim, client: i, situation: world.clients[i].situation(), renumbered: None })
        .collect()
}

/// Each client's situation in `raw` beside its situation once renumbered into `kept`, for the
/// check that renumbering commutes (`renumbering_commutes`).
fn renumbered_situations<R: Recipe>(raw: &World<R>, kept: &World<R>) -> Vec<Situation> {
    (0..raw.clients.len())
        .map(|i| Situation {
            claim: Claim::Renumbering,
            client: i,
            situation: raw.clients[i].situation(),
            renumbered: Some(kept.clients[i].situation()),
        })
        .collect()
}

/// A reduction found unsound at an explored state, and why.
pub(super) enum Refusal {
    /// Renaming the clients does not commute with a step (`World::renaming_commutes`).
    Symmetry(String),
    /// Ranking the numbers does not commute with a step (`World::ranking_commutes`).
    Renumbering(String),
}

/// Whether settling `raw` into `kept` (renumbering it through the recipes' own `renumbered`)
/// commutes with every step from it: `kept` offers the same steps, is judged the same, and each
/// step from either leads to states that settle to one. What the spread check
/// (`World::ranking_commutes`) cannot see: it compares two renumbered states, so a recipe whose
/// renumbering loses or changes what it acts on passes it.
fn renumbering_commutes<R: Recipe, T: PartialEq>(
    raw: &World<R>,
    kept: &World<R>,
    observed: &impl Fn(&World<R>) -> T,
) -> Result<(), String> {
    if raw == kept {
        return Ok(());
    }
    let steps = raw.steps();
    if steps != kept.steps() {
        return Err("the state offers other steps once renumbered".to_string());
    }
    if observed(raw) != observed(kept) {
        return Err("the state is judged otherwise once renumbered".to_string());
    }
    for step in steps {
        let (mut from_raw, mut from_kept) = (raw.clone(), kept.clone());
        from_raw.apply(step).expect("enabled");
        from_kept.apply(step).expect("enabled in the same state renumbered");
        // A step after which settling refuses says why itself (see `World::revived`).
        if let Some(why) = from_raw.revived() {
            return Err(format!("step `{step}` is {why}"));
        }
        from_raw.settle();
        from_kept.settle();
        if from_raw != from_kept {
            return Err(format!("step `{step}` leads elsewhere once the state is renumbered"));
        }
    }
    Ok(())
}

/// What expanding a state reads, shared by every thread of one pass.
pub(super) struct Expander<'a, R> {
    /// The states numbered so far (grown by the merging thread only).
    pub(super) known: &'a Index,
    pub(super) interner: &'a Interner<R>,
    /// The properties the pass judges, in the order of their bits.
    pub(super) properties: &'a [Property],
    pub(super) reduction: Reduction,
}

impl<R: Recipe> Expander<'_, R> {
    /// Unpacks and expands `states` in order, dropping each once expanded (the merging thread
    /// would otherwise).
    pub(super) fn expand_all(&self, states: Vec<Packed>, checked: &CheckedSituations) -> Vec<Expansion> {
        states.into_iter().map(|p| self.expand(&self.interner.unpack(&p), &p, checked)).collect()
    }

    /// Expands `world`, which the frontier kept as `packed`.
    fn expand(&self, world: &World<R>, packed: &Packed, checked: &CheckedSituations) -> Expansion {
        let taken = world.successors(self.reduction.partial_order);
        // Each claim is checked once per client situation (see `situations`): a state whose every
        // client is in a situation checked before (in any state) hands each recipe an input it was
        // shown to handle as the claim says. A check looks at every successor of the state, not
        // only the step partial order takes alone, and a situation counts as checked only where the
        // check really ran.
        let symmetric = match self.reduction.symmetry {
            true => situations(world, Claim::Symmetry),
            false => Vec::new(),
        };
        let renumbers = self.reduction.settle && world.renumbering_applies();
        let ranked = match renumbers {
            true => situations(world, Claim::Renumbering),
            false => Vec::new(),
        };
        let unchecked = |situations: &[Situation]| !situations.iter().all(|s| checked.contains(s));
        let check_symmetry = unchecked(&symmetric);
        // A state renumbering keeps as it is checks nothing (see `World::ranking_commutes`).
        let check_ranking = unchecked(&ranked) && world.ranking_checkable();
        // Partial order took fewer steps than are enabled (asked only when a claim is checked).
        let reduced = || taken.len() < world.steps().len();
        let every = match (check_symmetry || check_ranking) && reduced() {
            true => Some(world.successors(false)),
            false => None,
        };
        let claimed = every.as_ref().unwrap_or(&taken);
        let mut newly_checked = Vec::new();
        let mut refuted = None;
        if check_symmetry {
            refuted = world.renaming_commutes(claimed).err().map(Refusal::Symmetry);
            newly_checked = symmetric;
        }
        // A successor whose recipe, renumbered by replay, breaks the claim refutes it for the run.
        let replay_refuted = std::cell::RefCell::new(None);
        // Settles a successor; with `keep_raw`, one that settling renumbers comes with the state
        // as the step left it.
        let settle = |(step, mut next): (Step, World<R>), keep_raw: bool| {
            let mut raw = None;
            if self.reduction.settle {
                self.interner.share_changed(&mut next, world);
                let settled = match keep_raw {
                    true => next.settle_keeping_raw(),
                    false => next.settle_or_refute().map(|_| None),
                };
                match settled {
                    Ok(before) => raw = before,
                    Err(why) => {
                        replay_refuted.borrow_mut().get_or_insert(format!("after step `{step}`, {why}"));
                    }
                }
            }
            (step, next, raw)
        };
        let observed = |w: &World<R>| (judge(w, self.properties), w.waiting_mask(), w.holding_mask());
        // Each successor the pass keeps renumbered must behave as it did before (see
        // `renumbering_commutes`).
        let mut settled = Vec::with_capacity(taken.len());
        for (step, next) in taken {
            let broken = judge_step(world, step, &next, self.properties);
            let met = judge_met(&next, self.properties);
            let (step, next, raw) = settle((step, next), renumbers && refuted.is_none());
            if let Some(raw) = raw {
                // Asked once per pair of situations, each client's as the step left it and as
                // renumbered: what a recipe does depends on its situation, so a pair checked before
                // behaves alike. The situation as the step left it alone would not do: how it is
                // renumbered depends on the whole state's numbers.
                let pairs = renumbered_situations(&raw, &next);
                if unchecked(&pairs) {
                    match renumbering_commutes(&raw, &next, &observed) {
                        Ok(()) => newly_checked.extend(pairs),
                        Err(why) => refuted = Some(Refusal::Renumbering(format!("after step `{step}`, {why}"))),
                    }
                }
            }
            settled.push((step, next, broken, met));
        }
        if check_ranking && refuted.is_none() {
            let every_settled: Vec<(Step, World<R>)> = every
                .map(|all| {
                    all.into_iter().map(|taken| settle(taken, false)).map(|(step, next, _)| (step, next)).collect()
                })
                .unwrap_or_default();
            let pairs: Vec<_> = match every_settled.is_empty() {
                true => settled.iter().map(|(step, next, ..)| (*step, next)).collect(),
                false => every_settled.iter().map(|(step, next)| (*step, next)).collect(),
            };
            match world.ranking_commutes(&pairs, observed) {
                Ok(true) => newly_checked.extend(ranked),
                // Kept as it is (merged with no other state): nothing checked for its situations.
                Ok(false) => {}
                Err(why) => refuted = Some(Refusal::Renumbering(why)),
            }
        }
        if let Some(why) = replay_refuted.into_inner() {
            refuted.get_or_insert(Refusal::Renumbering(why));
        }
        let successors = settled
            .into_iter()
            .map(|(step, next, broken, met)| {
                let next = represent(next, self.reduction);
                let fingerprint = fingerprint(&next);
                // The index only grows, so a state known now is known at the merge; one unknown now
                // may have been found by then (by an earlier state of this chunk or the last).
                let new = self.known.get(fingerprint).is_none().then(|| {
                    let holds = judge(&next, self.properties);
                    (self.interner.pack_successor(next, world, packed), holds)
                });
                Successor { step, fingerprint, new, broken, met }
            })
            .collect();
        Expansion {
            waiting: world.waiting_mask(),
            holding: world.holding_mask(),
            successors,
            refuted,
            checked: newly_checked,
        }
    }
}
