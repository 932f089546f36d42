//! Expanding one state of the graph pass, in five calls: which reductions' claims to check
//! there (`Claims::plan`); its successors, partial order choosing among them, each put together
//! from the steps taken before (`transitions`) and judged on the step that reached it; the
//! symmetry claim checked on them; each successor resolved: found by the name of its parts'
//! numbers if it was met before (`index::name`), or settled, renamed to its class's
//! representative, named and packed for the merge; and the ranking claim checked on the settled
//! successors. The claims and their checks are in `claims`; a refuted claim travels back with
//! the expansion. Runs on the helper threads (see `pipeline`), so it reads the index and never
//! writes it.

use super::claims::{CheckedSituations, Claims, Refusal, Situation};
use super::engine::index::{fingerprint as state_fingerprint, name, Index};
use super::engine::intern::{Interner, Number, Packed};
use super::engine::pipeline::Expand;
use super::engine::transitions::{Next, Transitions};
use super::search::{judge, judge_met, judge_step, represent_telling, Reduction};
use rustc_hash::FxHashMap;
use zklab_model::world::ClientSteps;
use zklab_model::{ClientId, Property, Recipe, Settle, Step, World};

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
    /// The recipe situations (see `claims::Situation`) whose claims this expansion checked.
    pub(super) checked: Vec<Situation>,
}

/// A successor partial order took, judged on its step, and named where its parts are filed.
struct Taken<R> {
    step: Step,
    next: Next<R>,
    /// Bit `i` set: the step violates the transition property `properties[i]`.
    broken: u64,
    /// Bit `i` set: the step met the `reached:*` item `properties[i]`.
    reached: u64,
    /// The raw successor's name (`index::name`), where its parts are filed and settling may
    /// name it (see `Made::revives`).
    name: Option<u128>,
}

/// Every successor of a state as worlds, where a claim is checked and partial order took fewer
/// than every step; `None` where what it took is every successor, or no claim is checked.
type Every<R> = Option<Vec<(Step, World<R>)>>;

/// What settling a successor did.
struct Settling {
    /// It changed the state (or refused, which leaves it as it was).
    changed: bool,
    /// It refused (see `World::settle`): the raw successor is then not named.
    refused: bool,
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

impl<R: Recipe> Expand for Expander<'_, R> {
    type Shared = CheckedSituations;
    type Local = Local;
    type Expansion = Expansion;

    /// Unpacks and expands `states` in order, dropping each once expanded (the merging thread
    /// would otherwise), with what this thread remembers (`local`).
    fn expand_all(&self, states: Vec<Packed>, checked: &CheckedSituations, local: &mut Local) -> Vec<Expansion> {
        local.bound();
        states.into_iter().map(|p| self.expand(&self.interner.unpack(&p), &p, checked, local)).collect()
    }
}

impl<R: Recipe> Expander<'_, R> {
    /// Expands `world`, which the frontier kept as `packed`.
    fn expand(&self, world: &World<R>, packed: &Packed, checked: &CheckedSituations, local: &mut Local) -> Expansion {
        let mut claims = Claims::plan(world, self.reduction.symmetry, self.reduction.settle, checked);
        let (taken, every) = self.successors(world, packed, claims.any(), local);
        self.check_symmetry(world, &taken, every.as_deref(), &mut claims);
        // The ranking check reads every successor settled: where partial order took them all,
        // those resolved, as settled.
        let mut settled = (claims.ranking && every.is_none()).then(Vec::new);
        let successors =
            taken.into_iter().map(|t| self.resolve(world, packed, t, &mut claims, local, settled.as_mut())).collect();
        self.check_ranking(world, every, settled.unwrap_or_default(), &mut claims);
        let (refuted, checked) = claims.found();
        Expansion { waiting: world.waiting_mask(), holding: world.holding_mask(), successors, refuted, checked }
    }

    /// Checks, where `claims` asks, that renaming the clients commutes with every step from
    /// `world`: to `every` successor, or to those `taken` where partial order took them all.
    fn check_symmetry(
        &self,
        world: &World<R>,
        taken: &[Taken<R>],
        every: Option<&[(Step, World<R>)]>,
        claims: &mut Claims,
    ) {
        if claims.symmetry {
            match every {
                Some(every) => claims.check_symmetry(world, every),
                None => claims.check_symmetry(world, &self.worlds(world, taken)),
            }
        }
    }

    /// Checks, where `claims` asks and nothing was refuted yet, that ranking the numbers commutes
    /// with every step from `world`: to `every` successor, settled here, or to those resolved
    /// (`settled`) where partial order took them all.
    fn check_ranking(&self, world: &World<R>, every: Every<R>, settled: Vec<(Step, World<R>)>, claims: &mut Claims) {
        if !claims.ranking || claims.refuted() {
            return;
        }
        let settled = match every {
            Some(every) => every
                .into_iter()
                .map(|(step, next)| (step, self.settle(world, step, next, false, true, claims).0))
                .collect(),
            None => settled,
        };
        let pairs: Vec<(Step, &World<R>)> = settled.iter().map(|(step, next)| (*step, next)).collect();
        claims.check_ranking(world, &pairs, |w| self.observed(w));
    }

    /// The successors partial order takes from `world`, each judged on its step and named if its
    /// parts are filed; with `every_needed` (a claim is checked here), every successor as worlds
    /// where partial order took fewer (see `Every`).
    fn successors(
        &self,
        world: &World<R>,
        packed: &Packed,
        every_needed: bool,
        local: &mut Local,
    ) -> (Vec<Taken<R>>, Every<R>) {
        let enabled = local.steps(world, packed);
        let mut successor = |step| self.transitions.successor(self.interner, world, packed, step, self.properties);
        let invisible = |step, next: &Next<R>| match next {
            Next::Filed(_, made) => made.invisible,
            Next::Taken(next) => world.invisible(step, next),
        };
        let every_step = enabled.len();
        let listed = every_needed.then(|| enabled.clone());
        let taken = world.successors_with(self.reduction.partial_order, enabled, &mut successor, &invisible);
        let every = listed.filter(|_| taken.len() < every_step).map(|enabled| {
            let every = world.successors_with(false, enabled, &mut successor, &invisible);
            every.into_iter().map(|(step, next)| (step, next.world(self.interner, world, step))).collect()
        });
        let taken = taken
            .into_iter()
            .map(|(step, next)| {
                let (broken, reached, name) = match &next {
                    // Settling reads one thing beside the state: whether the step could revive a
                    // forgotten watch (`World::revived`), after which it refuses. Such a successor
                    // is not named.
                    Next::Filed(numbers, made) => (made.broken, made.met, (!made.revives()).then(|| name(numbers))),
                    Next::Taken(next) => {
                        (judge_step(world, step, next, self.properties), judge_met(next, self.properties), None)
                    }
                };
                Taken { step, next, broken, reached, name }
            })
            .collect();
        (taken, every)
    }

    /// The successors `taken` as worlds.
    fn worlds(&self, world: &World<R>, taken: &[Taken<R>]) -> Vec<(Step, World<R>)> {
        taken.iter().map(|t| (t.step, t.next.clone().world(self.interner, world, t.step))).collect()
    }

    /// What a renumbering must leave as it was: which properties hold, who waits, who holds.
    fn observed(&self, world: &World<R>) -> (u64, u8, u8) {
        (judge(world, self.properties), world.waiting_mask(), world.holding_mask())
    }

    /// One successor on its way to the merge: found by the name of its raw successor if met
    /// before (unless the ranking check reads every settled successor of this state); otherwise
    /// settled (its renumbering checked where it changes the state), renamed to its class's
    /// representative, named, and packed if the index does not have it. Where `settled` is
    /// given, the successor as settled is kept there for the ranking check.
    fn resolve(
        &self,
        world: &World<R>,
        packed: &Packed,
        taken: Taken<R>,
        claims: &mut Claims,
        local: &mut Local,
        settled: Option<&mut Vec<(Step, World<R>)>>,
    ) -> Successor {
        let Taken { step, next, broken, reached, name: raw_name } = taken;
        let found = raw_name
            .filter(|_| !claims.ranking)
            .and_then(|raw| local.met.get(&raw).map(remembered).or_else(|| self.known.get(raw).map(Target::Known)));
        if let Some(target) = found {
            return Successor { step, target, alias: None, broken, met: reached };
        }
        let numbers = match &next {
            Next::Filed(numbers, _) => Some(numbers.clone()),
            Next::Taken(_) => None,
        };
        let next = next.world(self.interner, world, step);
        // Each successor the pass keeps renumbered must behave as it did before (see
        // `Claims::check_pair`).
        let keep_raw = claims.renumbers && !claims.refuted();
        let (next, raw, settling) = self.settle(world, step, next, keep_raw, numbers.is_none(), claims);
        if let Some(raw) = raw {
            claims.check_pair(step, &raw, &next, &|w: &World<R>| self.observed(w));
        }
        if let Some(settled) = settled {
            settled.push((step, next.clone()));
        }
        let alias = raw_name.filter(|_| !settling.refused);
        // The state's parts are the raw successor's, whose numbers are known, unless settling
        // changed it.
        let numbers = numbers.filter(|_| !settling.changed);
        let (mut next, renamed) = represent_telling(next, self.reduction);
        // A state its raw successor's parts make is named by their numbers; any other is filed
        // part by part first (most are met again, and their parts are kept anyway). Named by its
        // digest instead (`by_numbers`), it is filed only if it is new.
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
        // The index only grows, so a state known now is known at the merge; one unknown now may
        // have been found by then (by an earlier state of this chunk or the last). One this
        // thread found before (from another raw successor) is numbered by the merge before this
        // one: it is neither judged nor packed again.
        let target = match (self.known.get(state_name), local.met.get(&state_name)) {
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
        local.met.insert(state_name, (state_name, id));
        if let Some(name) = alias {
            local.met.insert(name, (state_name, id));
        }
        Successor { step, target, alias, broken, met: reached }
    }

    /// Settles `next`, a successor of `world` after `step` (one whose parts are not all filed,
    /// `share`, is handed the kept copies of its changed clients first); with `keep_raw`, one
    /// that settling renumbers comes with the state as the step left it. A refusal (renumbering
    /// by replay broke the claim) is told to `claims`, and leaves the state as it was.
    fn settle(
        &self,
        world: &World<R>,
        step: Step,
        mut next: World<R>,
        keep_raw: bool,
        share: bool,
        claims: &mut Claims,
    ) -> (World<R>, Option<World<R>>, Settling) {
        if !self.reduction.settle {
            return (next, None, Settling { changed: false, refused: false });
        }
        if share {
            self.interner.share_changed(&mut next, world);
        }
        match next.settle(if keep_raw { Settle::KeepingRaw } else { Settle::Renumbering }) {
            Ok(settled) => (next, settled.raw, Settling { changed: settled.changed, refused: false }),
            Err(why) => {
                claims.replay_refused(step, why);
                (next, None, Settling { changed: true, refused: true })
            }
        }
    }
}
