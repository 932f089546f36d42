//! A recipe's claims that a reduction applies to it (its clients are interchangeable; only the
//! order of its numbers matters), checked on the states the graph pass explores. `expand` asks
//! this file three things of each state: which claims to check there (`Claims::plan`), whether
//! renaming the clients commutes with its steps (`Claims::check_symmetry`), and whether ranking
//! its numbers does (`Claims::check_pair` per renumbered successor, `Claims::check_ranking` over
//! all of them). A claim found false travels back with the expansion (`Refusal`) and the pass
//! is run again without that reduction. The written argument is in docs/internals/reductions.md.

use rustc_hash::FxHashSet;
use std::sync::Arc;
use zklab_model::{Recipe, Settle, Step, World};

/// A recipe's claim that a reduction applies to it, checked on the states explored.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
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
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub(super) struct Situation {
    claim: Claim,
    client: usize,
    /// `Client::situation`.
    situation: u128,
    /// For a renumbering check of a successor, the client's situation once renumbered (see
    /// `renumbered_situations`).
    renumbered: Option<u128>,
}

/// The recipe situations whose claims were checked in an earlier level: shared,
/// read-only, with the expanding threads, and grown only between levels so that which states
/// are checked does not depend on how the threads interleave.
pub(super) type CheckedSituations = Arc<FxHashSet<Situation>>;

/// A reduction found unsound at an explored state, and why.
pub(super) enum Refusal {
    /// Renaming the clients does not commute with a step (`World::renaming_commutes`).
    Symmetry(String),
    /// Ranking the numbers does not commute with a step (`World::ranking_commutes`).
    Renumbering(String),
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
        from_raw.settle(Settle::Renumbering).ok();
        from_kept.settle(Settle::Renumbering).ok();
        if from_raw != from_kept {
            return Err(format!("step `{step}` leads elsewhere once the state is renumbered"));
        }
    }
    Ok(())
}

/// The claims checked at one state, and what checking them found. Each claim is checked once per
/// client situation (see `Situation`): a state whose every client is in a situation checked
/// before (in any state) hands each recipe an input it was shown to handle as the claim says. A
/// check looks at every successor of the state, not only the step partial order takes alone,
/// and a situation counts as checked only where the check really ran.
pub(super) struct Claims<'a> {
    /// The situations checked in earlier levels.
    before: &'a CheckedSituations,
    /// The clients' situations for the symmetry claim, when it is checked here.
    symmetric: Vec<Situation>,
    /// The clients' situations for the renumbering claim, when it applies.
    ranked: Vec<Situation>,
    /// The state's successors are renumbered when settled (the pass settles, and the recipe
    /// renumbers).
    pub(super) renumbers: bool,
    /// Symmetry is checked at this state.
    pub(super) symmetry: bool,
    /// Ranking is checked at this state over all its settled successors: none of them may then
    /// be found by name instead of settled.
    pub(super) ranking: bool,
    /// The first claim found false here.
    refuted: Option<Refusal>,
    /// A successor whose recipe, renumbered by replay, broke the claim: it refutes renumbering
    /// for the run unless another claim was refuted first.
    replay_refuted: Option<String>,
    /// The situations checked here.
    checked: Vec<Situation>,
}

impl<'a> Claims<'a> {
    /// Which claims `world` is checked for: those the pass applies whose situations are not all
    /// in `checked` (a state renumbering keeps as it is checks nothing: see
    /// `World::ranking_checkable`).
    pub(super) fn plan<R: Recipe>(
        world: &World<R>,
        symmetry: bool,
        settle: bool,
        checked: &'a CheckedSituations,
    ) -> Self {
        let symmetric = match symmetry {
            true => situations(world, Claim::Symmetry),
            false => Vec::new(),
        };
        let renumbers = settle && world.renumbering_applies();
        let ranked = match renumbers {
            true => situations(world, Claim::Renumbering),
            false => Vec::new(),
        };
        let unchecked = |situations: &[Situation]| !situations.iter().all(|s| checked.contains(s));
        Claims {
            before: checked,
            symmetry: unchecked(&symmetric),
            ranking: unchecked(&ranked) && world.ranking_checkable(),
            symmetric,
            ranked,
            renumbers,
            refuted: None,
            replay_refuted: None,
            checked: Vec::new(),
        }
    }

    /// Whether any claim is checked here: the state's every successor is then needed, not only
    /// those partial order takes.
    pub(super) fn any(&self) -> bool {
        self.symmetry || self.ranking
    }

    /// Whether a refutation was found here already.
    pub(super) fn refuted(&self) -> bool {
        self.refuted.is_some()
    }

    /// Checks that renaming the clients commutes with every step from `world` to its
    /// successors `every`.
    pub(super) fn check_symmetry<R: Recipe>(&mut self, world: &World<R>, every: &[(Step, World<R>)]) {
        if !self.symmetry {
            return;
        }
        self.refuted = world.renaming_commutes(every).err().map(Refusal::Symmetry);
        self.checked = std::mem::take(&mut self.symmetric);
    }

    /// Checks that a successor `raw`, renumbered by settling into `kept` after `step`, behaves as
    /// it did before (`renumbering_commutes`): asked once per pair of situations, each client's
    /// as the step left it and as renumbered. What a recipe does depends on its situation, so a
    /// pair checked before behaves alike; the situation as the step left it alone would not do:
    /// how it is renumbered depends on the whole state's numbers.
    pub(super) fn check_pair<R: Recipe, T: PartialEq>(
        &mut self,
        step: Step,
        raw: &World<R>,
        kept: &World<R>,
        observed: &impl Fn(&World<R>) -> T,
    ) {
        let pairs = renumbered_situations(raw, kept);
        if pairs.iter().all(|s| self.before.contains(s)) {
            return;
        }
        match renumbering_commutes(raw, kept, observed) {
            Ok(()) => self.checked.extend(pairs),
            Err(why) => self.refuted = Some(Refusal::Renumbering(format!("after step `{step}`, {why}"))),
        }
    }

    /// Settling a successor after `step` refused: renumbering by replay broke the claim (`why`).
    pub(super) fn replay_refused(&mut self, step: Step, why: String) {
        self.replay_refuted.get_or_insert(format!("after step `{step}`, {why}"));
    }

    /// Checks that ranking the numbers commutes with every step from `world` to its settled
    /// successors `settled`, unless a claim was refuted here already.
    pub(super) fn check_ranking<R: Recipe, T: PartialEq>(
        &mut self,
        world: &World<R>,
        settled: &[(Step, &World<R>)],
        observed: impl Fn(&World<R>) -> T,
    ) {
        if !self.ranking || self.refuted.is_some() {
            return;
        }
        match world.ranking_commutes(settled, observed) {
            Ok(true) => self.checked.append(&mut self.ranked),
            // Kept as it is (merged with no other state): nothing checked for its situations.
            Ok(false) => {}
            Err(why) => self.refuted = Some(Refusal::Renumbering(why)),
        }
    }

    /// What the checks found: the first refusal (a replay's last), and the situations checked.
    pub(super) fn found(self) -> (Option<Refusal>, Vec<Situation>) {
        (self.refuted.or(self.replay_refuted.map(Refusal::Renumbering)), self.checked)
    }
}
