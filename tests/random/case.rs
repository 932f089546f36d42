//! A case of the differential test: the world one or more random programs run in (clients,
//! faults, client library, rounds, a reply length limit), drawn so that most cases are small
//! enough for the reference checker to explore exhaustively.

use super::program::{Program, Variant};
use super::recipe::RandomRecipe;
use proptest::prelude::*;
use std::sync::Arc;
use zklab_model::{ClientBehaviour, FaultBudget, FaultKind, World, WorldConfig, UNBOUNDED_ROUNDS};

#[derive(Clone, Debug)]
pub struct Case {
    pub seed: u64,
    pub clients: usize,
    pub faults: Vec<FaultKind>,
    pub client: ClientBehaviour,
    pub rounds: u8,
    /// Which draws make the programs (`Program::drawn`).
    pub variant: Variant,
    /// A Java client's jute.maxbuffer small enough to refuse some replies (symmetry and
    /// renumbering must then stay off: names' lengths matter).
    pub jute_maxbuffer: Option<u32>,
    /// Each client runs a program of its own, drawn from the case's seed and its number.
    pub mix: Mix,
}

/// Whether the clients of a case run one program or several.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mix {
    /// Every client runs the program drawn from the case's seed.
    One,
    /// Each its own, under its own name: the production checker applies neither symmetry nor
    /// renumbering (they need one recipe).
    Named,
    /// Each its own, under one shared name: the world claims its clients are interchangeable.
    /// Renaming moves each client's program with it, so the claim holds where every program
    /// keeps symmetry's contract.
    Shared,
}

impl Case {
    /// A case of the base programs (`Program::from_seed`), as the cases kept from before the
    /// extensions were drawn: two Java clients, one round.
    pub fn base(seed: u64, faults: Vec<FaultKind>) -> Case {
        Case {
            seed,
            clients: 2,
            faults,
            client: ClientBehaviour::Java,
            rounds: 1,
            variant: Variant::default(),
            jute_maxbuffer: None,
            mix: Mix::One,
        }
    }

    /// The same programs in a smaller world, one step down: one fault fewer (the give-up
    /// fault, which application steps need, last), then one round, then two clients, then no
    /// fault; `None` for the smallest world. A program too big for the reference checker in the
    /// world drawn for it is compared in the first smaller world that fits.
    pub fn smaller(&self) -> Option<Case> {
        let mut faults = self.faults.clone();
        if faults.len() > 1 {
            let drop = faults.iter().position(|&f| f != FaultKind::GiveUp).unwrap_or(0);
            faults.remove(drop);
            return Some(Case { faults, ..self.clone() });
        }
        if self.rounds != 1 {
            return Some(Case { rounds: 1, ..self.clone() });
        }
        if self.clients > 2 {
            return Some(Case { clients: 2, ..self.clone() });
        }
        (!faults.is_empty()).then(|| Case { faults: Vec::new(), ..self.clone() })
    }

    /// Whether this is `drawn` made smaller.
    pub fn smaller_than(&self, drawn: &Case) -> bool {
        (self.clients, &self.faults, self.rounds) != (drawn.clients, &drawn.faults, drawn.rounds)
    }

    /// The program each client runs.
    pub fn programs(&self) -> Vec<Arc<Program>> {
        match self.mix {
            Mix::One => {
                let program = Arc::new(Program::drawn(self.seed, self.variant));
                (0..self.clients).map(|_| program.clone()).collect()
            }
            Mix::Named | Mix::Shared => (0..self.clients)
                .map(|i| {
                    let seed = match i {
                        0 => self.seed,
                        i => self.seed.wrapping_mul(0x9e37_79b9_7f4a_7c15).wrapping_add(i as u64),
                    };
                    let name = (self.mix == Mix::Shared).then(|| format!("random-mix-{}", self.seed));
                    Arc::new(Program::drawn(seed, self.variant).in_mix(name))
                })
                .collect(),
        }
    }

    pub fn world(&self, renumber: bool) -> World<RandomRecipe> {
        let config = WorldConfig {
            faults: FaultBudget::once(&self.faults),
            client_behaviour: self.client,
            rounds: self.rounds,
            renumber,
            jute_maxbuffer: self.jute_maxbuffer,
            ..WorldConfig::default()
        };
        World::new(config, self.programs().into_iter().map(RandomRecipe::new).collect())
    }

    /// Whether the production checker may renumber (`honest`: and every program keeps the
    /// contract), as far as the recipes' claims go: every client claims it under one name,
    /// and no reply length limit is set.
    pub fn claims_renumbering(&self, honest: bool) -> bool {
        self.claims(|p| p.extras.claims_renumbering, |p| !p.reads_values && p.extras.keep_renumbering(), honest)
    }

    /// The same for symmetry.
    pub fn claims_symmetry(&self, honest: bool) -> bool {
        self.claims(|p| p.extras.claims_symmetry, |p| !p.ordered_by_client && p.extras.keep_symmetry(), honest)
    }

    fn claims(&self, claim: impl Fn(&Program) -> bool, keep: impl Fn(&Program) -> bool, honest: bool) -> bool {
        let programs = self.programs();
        self.jute_maxbuffer.is_none()
            && self.mix != Mix::Named
            && programs.iter().all(|p| claim(p))
            && programs.iter().all(|p| keep(p)) == honest
    }
}

/// The cases the differential test draws. Every program is drawn with its bounds
/// (`Extras::write_budget`, `Extras::max_pending`), which keep even unbounded rounds finite;
/// three clients get at most one fault. A case still too big is compared in a smaller world
/// (`Case::smaller`).
pub fn case() -> impl Strategy<Value = Case> {
    let world = (
        any::<u64>(),
        prop_oneof![3 => Just(2usize), 1 => Just(3usize)],
        // Up to two of every fault kind (reaping the parent and lagging reads change what
        // renumbering may do, so they are drawn too).
        proptest::sample::subsequence(FaultKind::ALL.to_vec(), 0..=2),
        prop_oneof![Just(ClientBehaviour::Java), Just(ClientBehaviour::Kazoo)],
        prop_oneof![2 => Just(1u8), 1 => Just(2u8), 1 => Just(UNBOUNDED_ROUNDS)],
    );
    let programs = (
        proptest::bool::weighted(0.15),
        proptest::bool::weighted(0.4),
        // Between a create's reply (38 bytes) and a Stat's (84): lists of two or more names and
        // replies with a Stat are refused, so the refusals do not create nodes without end.
        prop_oneof![4 => Just(None), 1 => (40u32..=90).prop_map(Some)],
        prop_oneof![3 => Just(Mix::One), 1 => Just(Mix::Named), 1 => Just(Mix::Shared)],
        // An operator's delete beside the drawn faults now and then: one kind among eleven is
        // drawn too seldom for its floor.
        proptest::bool::weighted(0.2),
    );
    (world, programs).prop_map(
        |(
            (seed, clients, mut faults, mut client, rounds),
            (notes_outages, application_steps, jute_maxbuffer, mix, operator),
        )| {
            // The outage alone: other faults reach most of what it does by other paths.
            if notes_outages {
                faults = vec![FaultKind::Disconnect];
            }
            if operator && !notes_outages && !faults.contains(&FaultKind::OperatorDelete) {
                faults.insert(0, FaultKind::OperatorDelete);
            }
            if clients > 2 {
                faults.truncate(1);
            }
            // Only the Java client has the limit.
            if jute_maxbuffer.is_some() {
                client = ClientBehaviour::Java;
            }
            let application_steps = application_steps && !notes_outages;
            if application_steps && !faults.contains(&FaultKind::GiveUp) {
                faults.push(FaultKind::GiveUp);
            }
            let variant = Variant { notes_outages, application_steps, extended: true };
            Case { seed, clients, faults, client, rounds, variant, jute_maxbuffer, mix }
        },
    )
}
