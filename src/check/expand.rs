//! Expanding one state of the graph pass: its successors (partial order choosing among them,
//! each put together from the steps taken before: `transitions`), each judged on the step that
//! reached it, then found by the name of its parts' numbers if it was met before (`index::name`),
//! or settled, renamed to its class's representative and named (`index::name`); the new ones
//! packed for the merge. Where the recipe claims symmetry or renumbering, the claim is checked
//! here on every situation met the first time (see `situations`), and a refuted claim travels
//! back with the expansion. Runs on the helper threads (see `pipeline`), so it reads the index
//! and never writes it.

use super::index::{fingerprint as state_fingerprint, name, Index};
use super::intern::{Interner, Number, Packed};
use super::search::{judge, judge_met, judge_step, represent_telling, Reduction};
use super::transitions::{Next, Transitions};
use rustc_hash::{FxHashMap, FxHashSet};
use std::sync::Arc;
use zklab_model::world::ClientSteps;
use zklab_model::{ClientId, Property, Recipe, Step, World};

/// A successor as a worker found it: unknown states come with the state itself, packed, and
/// which properties hold there, so the merge only numbers them.
pub(super) struct Successor {
    pub(super) step: Step,
    pub(super) target: Target,
    /// The name of the raw successor, for the merge to file as another name of the state it
    /// settles into (see `index::name`).
    pub(super) alias: Option<u128>,
    /// Bit `i` set: the step violates the transition property `properties[i]`.
    pub(super) broken: u64,
    /// Bit `i` set: the step met the `reached:*` item `properties[i]` (see `judge_met`).
    pub(super) met: u64,
}

/// A successor of the state being expanded, on its way to the merge. A state has a handful, held
/// for the length of its expansion: boxing the world would cost an allocation each.
#[allow(clippy::large_enum_variant)]
enum Settled<R> {
    /// Found by the name of its raw successor: what the merge needs of it.
    Found(Successor),
    /// Settled, with what its step was judged to do, the name to file for it, and the numbers
    /// of its parts where settling left the raw successor's as they were.
    Settled { step: Step, next: World<R>, broken: u64, reached: u64, alias: Option<u128>, numbers: Option<Packed> },
}

/// What settling a successor did.
struct Settling {
    /// It changed the state (or refused, which leaves it as it was).
    changed: bool,
    /// It refused (see `World::settle_or_refute`).
    refused: bool,
}

/// Which state a successor is.
pub(super) enum Target {
    /// The state numbered so, as the index had it when the successor was found.
    Known(u32),
    /// The state of this name (`index::name`, or its digest), which the merge knows by the time
    /// it gets here: found earlier by the same thread (see `Local::met`).
    Met(u128),
    /// The state of this name, unknown when the successor was found: packed, with which
    /// properties hold there, for the merge to number if it is still unknown then.
    Unknown { name: u128, packed: Packed, holds: u64 },
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
    /// The steps taken so far, by the parts they read.
    pub(super) transitions: &'a Transitions,
    /// States are named by the numbers of their parts (`index::name`); otherwise by their
    /// digests (`index::fingerprint`): where the run renumbers by replay, the interner tells
    /// apart equal clients that were handed other inputs (`Client::interned_as`).
    pub(super) by_numbers: bool,
}

/// What one expanding thread remembers from one state to the next: no other thread reads it,
/// and nothing it answers depends on which states it met before (each of its entries says of
/// one state what any thread would work out of it), so it costs no lock and changes no count.
#[derive(Default)]
pub(super) struct Local {
    /// The raw successors this thread settled, by name, and the states they settled into, by
    /// their own names, each with the name of the state and its number if the index had it:
    /// raw successors and states repeat most often close together, from states next to each
    /// other in a level, before the merge has filed them (`Index::alias`). A thread takes the
    /// parts of a chunk, and the chunks, in the order the merge numbers them, so what it found
    /// before is numbered before the successors it finds here: a state it found again, from
    /// another raw successor, is handed to the merge by name (`Target::Met`), not judged and
    /// packed again.
    met: FxHashMap<u128, (u128, Option<u32>)>,
    /// Each client's steps (`World::client_steps`) by the numbers of its shell and of the client at
    /// its index, which they read alone.
    steps: FxHashMap<(Number, usize, Number), ClientSteps>,
}

/// The state a `Local::met` entry names, as the merge will find it: by its number if the index
/// had it, else by its name, since this thread handed it to the merge earlier (in a part the
/// merge reads first).
fn remembered(&(state, id): &(u128, Option<u32>)) -> Target {
    match id {
        Some(id) => Target::Known(id),
        None => Target::Met(state),
    }
}

/// Raw successors a thread remembers before it starts again: those of the last few chunks,
/// which the merge has not named yet (older ones it finds by name).
const MET: usize = 1 << 16;

/// Clients' steps a thread remembers before it starts again (some ten megabytes).
const STEPS: usize = 1 << 17;

impl Local {
    /// Keeps what is remembered within `MET` and `STEPS` entries.
    fn bound(&mut self) {
        if self.met.len() > MET {
            self.met.clear();
        }
        if self.steps.len() > STEPS {
            self.steps.clear();
        }
    }

    /// The steps enabled in `world`, kept as `packed` (`World::steps`).
    fn steps<R: Recipe>(&mut self, world: &World<R>, packed: &Packed) -> Vec<Step> {
        let shell = packed.shell();
        for (i, &client) in packed.clients().iter().enumerate() {
            self.steps.entry((shell, i, client)).or_insert_with(|| world.client_steps(i as ClientId));
        }
        let clients: Vec<&ClientSteps> =
            packed.clients().iter().enumerate().map(|(i, &client)| &self.steps[&(shell, i, client)]).collect();
        let mut steps = Vec::new();
        world.steps_from(&clients, &mut steps);
        steps
    }
}

impl<R: Recipe> Expander<'_, R> {
    /// Unpacks and expands `states` in order, dropping each once expanded (the merging thread
    /// would otherwise), with what this thread remembers (`local`).
    pub(super) fn expand_all(
        &self,
        states: Vec<Packed>,
        checked: &CheckedSituations,
        local: &mut Local,
    ) -> Vec<Expansion> {
        local.bound();
        states.into_iter().map(|p| self.expand(&self.interner.unpack(&p), &p, checked, local)).collect()
    }

    /// Expands `world`, which the frontier kept as `packed`.
    fn expand(&self, world: &World<R>, packed: &Packed, checked: &CheckedSituations, local: &mut Local) -> Expansion {
        let enabled = local.steps(world, packed);
        let met = &mut local.met;
        let mut successor = |step| self.transitions.successor(self.interner, world, packed, step, self.properties);
        let invisible = |step, next: &Next<R>| match next {
            Next::Filed(_, made) => made.invisible,
            Next::Taken(next) => world.invisible(step, next),
        };
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
        let every_step = enabled.len();
        // The enabled steps are listed again only where a claim is checked (below).
        let listed = (check_symmetry || check_ranking).then(|| enabled.clone());
        let taken = world.successors_with(self.reduction.partial_order, enabled, &mut successor, &invisible);
        let to_world = |(step, next): (Step, Next<R>)| (step, next.world(self.interner, world, step));
        // Every successor, not only those partial order took, as worlds (asked only when a claim
        // is checked).
        let every: Option<Vec<(Step, World<R>)>> = listed.map(|enabled| match taken.len() < every_step {
            true => {
                world.successors_with(false, enabled, &mut successor, &invisible).into_iter().map(to_world).collect()
            }
            false => Vec::new(),
        });
        let mut newly_checked = Vec::new();
        let mut refuted = None;
        // The successors partial order took, each judged on its step and named if its parts are
        // filed (see `index::name`), as worlds where a claim is checked.
        let mut taken: Vec<_> = taken
            .into_iter()
            .map(|(step, next)| {
                let (broken, reached, name) = match &next {
                    Next::Filed(numbers, made) => {
                        // Settling reads one thing beside the state: whether the step could revive
                        // a forgotten watch (`World::revived`), after which it refuses. Such a
                        // successor is not named.
                        (made.broken, made.met, (!made.revives()).then(|| name(numbers)))
                    }
                    Next::Taken(next) => {
                        (judge_step(world, step, next, self.properties), judge_met(next, self.properties), None)
                    }
                };
                (step, next, broken, reached, name)
            })
            .collect();
        if check_symmetry {
            let claimed: Vec<(Step, World<R>)> = match &every {
                Some(every) if !every.is_empty() => every.clone(),
                _ => taken.iter().map(|(step, next, ..)| (*step, next.clone())).map(to_world).collect(),
            };
            refuted = world.renaming_commutes(&claimed).err().map(Refusal::Symmetry);
            newly_checked = symmetric;
        }
        // A successor whose recipe, renumbered by replay, breaks the claim refutes it for the run.
        let replay_refuted = std::cell::RefCell::new(None);
        // Settles a successor (one whose parts are not all `filed` is handed the kept copies of
        // its changed clients first); with `keep_raw`, one that settling renumbers comes with the
        // state as the step left it. Says whether settling changed it, and whether it refused,
        // after which the raw successor is not named.
        let settle = |(step, mut next): (Step, World<R>), keep_raw: bool, filed: bool| {
            let mut raw = None;
            let (mut changed, mut refused) = (false, false);
            if self.reduction.settle {
                if !filed {
                    self.interner.share_changed(&mut next, world);
                }
                match next.settle_telling(keep_raw) {
                    Ok(settled) => {
                        changed = settled.changed;
                        raw = settled.raw;
                    }
                    Err(why) => {
                        refused = true;
                        changed = true;
                        replay_refuted.borrow_mut().get_or_insert(format!("after step `{step}`, {why}"));
                    }
                }
            }
            (step, next, raw, Settling { changed, refused })
        };
        let observed = |w: &World<R>| (judge(w, self.properties), w.waiting_mask(), w.holding_mask());
        // A raw successor met before is found by name instead of settled: unless the ranking
        // check below reads every settled successor of this state.
        let by_name = !check_ranking;
        // In the order the steps were taken, which the merge numbers new states in.
        let mut settled = Vec::with_capacity(taken.len());
        for (step, next, broken, reached, name) in taken.drain(..) {
            let found = name
                .filter(|_| by_name)
                .and_then(|name| met.get(&name).map(remembered).or_else(|| self.known.get(name).map(Target::Known)));
            if let Some(target) = found {
                settled.push(Settled::Found(Successor { step, target, alias: None, broken, met: reached }));
                continue;
            }
            let numbers = match &next {
                Next::Filed(numbers, _) => Some(numbers.clone()),
                Next::Taken(_) => None,
            };
            let next = next.world(self.interner, world, step);
            // Each successor the pass keeps renumbered must behave as it did before (see
            // `renumbering_commutes`).
            let (step, next, raw, settling) = settle((step, next), renumbers && refuted.is_none(), numbers.is_some());
            let alias = name.filter(|_| !settling.refused);
            // The state's parts are the raw successor's, whose numbers are known, unless settling
            // changed it.
            let numbers = numbers.filter(|_| !settling.changed);
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
            settled.push(Settled::Settled { step, next, broken, reached, alias, numbers });
        }
        if check_ranking && refuted.is_none() {
            let every_settled: Vec<(Step, World<R>)> = every
                .map(|all| {
                    all.into_iter()
                        .map(|taken| settle(taken, false, false))
                        .map(|(step, next, ..)| (step, next))
                        .collect()
                })
                .unwrap_or_default();
            let pairs: Vec<_> = match every_settled.is_empty() {
                // None was found by name (`by_name`).
                true => settled
                    .iter()
                    .filter_map(|s| match s {
                        Settled::Settled { step, next, .. } => Some((*step, next)),
                        Settled::Found(_) => None,
                    })
                    .collect(),
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
            .map(|settled| {
                let (step, next, broken, reached, alias, numbers) = match settled {
                    Settled::Found(successor) => return successor,
                    Settled::Settled { step, next, broken, reached, alias, numbers } => {
                        (step, next, broken, reached, alias, numbers)
                    }
                };
                let (mut next, renamed) = represent_telling(next, self.reduction);
                // A state its raw successor's parts make is named by their numbers; any other is
                // filed part by part first (most are met again, and their parts are kept anyway).
                // Named by its digest instead (`by_numbers`), it is filed only if it is new.
                let (state_name, numbers) = match (self.by_numbers, numbers.filter(|_| !renamed)) {
                    (true, Some(numbers)) => (name(&numbers), Some(numbers)),
                    (true, None) => {
                        let numbers = self.interner.file(&mut next, world, packed);
                        (name(&numbers), Some(numbers))
                    }
                    (false, _) => (state_fingerprint(&next), None),
                };
                // Named as it is: no other name to file.
                let alias = alias.filter(|&alias| alias != state_name);
                // The index only grows, so a state known now is known at the merge; one unknown now
                // may have been found by then (by an earlier state of this chunk or the last).
                // One this thread found before (from another raw successor) is numbered by the
                // merge before this one: it is neither judged nor packed again.
                let target = match (self.known.get(state_name), met.get(&state_name)) {
                    (Some(id), _) => Target::Known(id),
                    (None, Some(entry)) if entry.0 == state_name => remembered(entry),
                    (None, _) => {
                        let holds = judge(&next, self.properties);
                        let packed = numbers.unwrap_or_else(|| self.interner.file(&mut next, world, packed));
                        Target::Unknown { name: state_name, packed, holds }
                    }
                };
                let id = match target {
                    Target::Known(id) => Some(id),
                    _ => None,
                };
                // The state's own name, which a raw successor the settling leaves as it is has too.
                met.insert(state_name, (state_name, id));
                if let Some(name) = alias {
                    met.insert(name, (state_name, id));
                }
                Successor { step, target, alias, broken, met: reached }
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
