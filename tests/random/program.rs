//! A random recipe's program: its phases, the belief of each, and for every phase and every
//! class of input the action to take. Drawn from a seed; the draws of the base table
//! (`Program::from_seed`) never change, so that a seed the differential test once found keeps
//! drawing the recipe it found. Later additions draw from streams of their own.

use super::extras::Extras;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::hash::{DefaultHasher, Hash, Hasher};

pub const PHASES: usize = 5;

/// What happened, as the table tells inputs apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    Acquire,
    Release,
    CreatedMine,
    CreatedOther,
    CreateFailed,
    ListLowest,
    ListNotLowest,
    ListFailed,
    ExistsNull,
    ExistsStat,
    DataMine,
    DataOther,
    ReadFailed,
    Deleted,
    DeleteFailed,
    SetDone,
    ConnectionLoss,
    WatchDeleted,
    WatchOther,
    Disconnected,
    SyncConnected,
    Expired,
    Abandon,
    /// A read reply (exists, getData, setData) after which the program's comparison held
    /// (`TestAt::Reads`).
    TestTrue,
    /// The same, the comparison failing.
    TestFalse,
}
pub const CLASSES: usize = 25;

/// One request an action may send, resolved against what the recipe remembers (an op whose
/// register is empty sends nothing).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    CreateSeq,
    CreateNamed,
    CreateSub,
    DeleteMine,
    DeleteSub,
    DeleteNamed,
    ListWatch,
    List,
    ExistsPredWatch,
    GetDataPredWatch,
    ExistsMineWatch,
    SetDataSeq,
    GetDataLock,
    /// Writes the program's number (`DataWrite::value`) into its target's data.
    SetNum,
    /// Reads its target's data back.
    GetNum,
    /// Reads its own node's stat (exists, without a watch).
    StatMine,
    /// Creates its predecessor's name by hand (ephemeral, not sequential), as a recipe that
    /// "takes over" a vanished name would: a sequential name made again, which a watch left on
    /// it sees, so the checker's dead-watch reduction must refuse the run.
    CreatePredByHand,
    /// A sync of its parent (`Request::Sync`).
    Sync,
    /// Its sequential node made by a multi, after a check of the lock node.
    MultiCreateSeq,
    /// Its own node deleted by a multi, after a check of it.
    MultiDeleteMine,
}
/// The base ops, in the order the base draws index them.
const OPS: [Op; 13] = [
    Op::CreateSeq,
    Op::CreateNamed,
    Op::CreateSub,
    Op::DeleteMine,
    Op::DeleteSub,
    Op::DeleteNamed,
    Op::ListWatch,
    Op::List,
    Op::ExistsPredWatch,
    Op::GetDataPredWatch,
    Op::ExistsMineWatch,
    Op::SetDataSeq,
    Op::GetDataLock,
];

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Action {
    pub ops: [Option<Op>; 2],
    /// Forget the node, its number and the predecessor before sending.
    pub forget: bool,
    pub next: u8,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    Idle,
    Acquiring,
    Holding,
    Releasing,
}

/// Which draws make a program.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Variant {
    /// `Program::noting_outages`.
    pub notes_outages: bool,
    /// `Program::with_application_steps`.
    pub application_steps: bool,
    /// `Program::extended`: stat fields, numbers in data, the session, comparisons, other
    /// tokens, deep paths, and the bounds that keep the graph finite.
    pub extended: bool,
}

/// A random recipe's program, shared by every client running it.
#[derive(Debug)]
pub struct Program {
    pub seed: u64,
    pub variant: Variant,
    /// Tells programs apart in a world's state (the seed and the variant).
    pub id: u64,
    /// `Recipe::name`: `random-<seed>`, or one name shared by every program of a world.
    pub name: String,
    /// Runs beside clients running other programs.
    pub mixed: bool,
    pub beliefs: [Kind; PHASES],
    pub table: [[Action; CLASSES]; PHASES],
    /// Sequential nodes are persistent (so a node can be created below one) rather than
    /// ephemeral.
    pub persistent: bool,
    /// Contenders are ordered by the client number in their names, not by sequence number.
    pub ordered_by_client: bool,
    /// The predecessor is the node numbered one below its own, not the one below it in the
    /// listing.
    pub reads_values: bool,
    /// Told of an outage while idle, it moves silently to another idle phase, whose acquire
    /// does something else.
    pub notes_outages: bool,
    /// Drawn by `with_application_steps`.
    pub application_steps: bool,
    /// The phases that answer an acquire while they hold (re-entry).
    pub reenters: [bool; PHASES],
    /// The waiting phases in which the application may give up.
    pub abandons: [bool; PHASES],
    pub extras: Extras,
    /// What a hold is (`Recipe::mode`): a lock's, or a queue consumer's or a barrier party's,
    /// whose own properties (`taken_at_most_once`, `barrier_waits`) are then judged too.
    pub mode: zklab_model::Mode,
}

impl Program {
    /// The program drawn from `seed` with `variant`'s draws.
    pub fn drawn(seed: u64, variant: Variant) -> Program {
        let mut program = match (variant.notes_outages, variant.application_steps) {
            (true, _) => Program::noting_outages(seed),
            (false, true) => Program::with_application_steps(seed),
            (false, false) => Program::from_seed(seed),
        };
        if variant.extended {
            program.extend();
        }
        Program { variant, ..program }.identified()
    }

    /// With `id` computed from the seed and the variant.
    fn identified(self) -> Program {
        let mut h = DefaultHasher::new();
        (self.seed, self.variant).hash(&mut h);
        Program { id: h.finish(), ..self }
    }

    /// The same program under another name (all programs of a world under one name claim
    /// that their clients are interchangeable), running beside other programs.
    pub fn in_mix(self, name: Option<String>) -> Program {
        Program { name: name.unwrap_or(self.name.clone()), mixed: true, ..self }
    }

    /// The program drawn from `seed`. Phase 0 is idle and acquiring moves out of it, so that
    /// the application's requests mean something; everything else is random.
    pub fn from_seed(seed: u64) -> Program {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let kinds = [Kind::Idle, Kind::Acquiring, Kind::Holding, Kind::Releasing];
        let mut beliefs = [Kind::Idle; PHASES];
        for b in beliefs.iter_mut().skip(1) {
            *b = kinds[rng.random_range(0..kinds.len())];
        }
        // At least one phase holds and one waits, so that most programs can hand the lock on.
        beliefs[1] = Kind::Acquiring;
        beliefs[2] = Kind::Holding;
        let quiet = rng.random_range(0.3..0.8);
        let mut table = [[Action { ops: [None, None], forget: false, next: 0 }; CLASSES]; PHASES];
        for row in table.iter_mut() {
            // The give-up row is drawn last (below), so that a seed draws the same table it drew
            // before giving up existed; the comparisons' rows come from `extend`.
            for cell in row.iter_mut().take(Class::Abandon as usize) {
                *cell = action(&mut rng, quiet, &OPS);
            }
        }
        // From idle, acquiring creates a node and leaves idle.
        table[0][Class::Acquire as usize] =
            Action { ops: [Some(Op::CreateSeq), None], forget: true, next: rng.random_range(1..PHASES as u8) };
        let (persistent, ordered_by_client) = (rng.random_bool(0.2), rng.random_bool(0.1));
        let reads_values = rng.random_bool(0.1);
        for row in table.iter_mut() {
            row[Class::Abandon as usize] = action(&mut rng, quiet, &OPS);
        }
        Program {
            seed,
            variant: Variant::default(),
            id: 0,
            name: format!("random-{seed}"),
            mixed: false,
            beliefs,
            table,
            persistent,
            ordered_by_client,
            reads_values,
            notes_outages: false,
            application_steps: false,
            reenters: [false; PHASES],
            abandons: [false; PHASES],
            extras: Extras::none(),
            mode: zklab_model::Mode::Exclusive,
        }
        .identified()
    }

    /// The program drawn from `seed`, in which the application also steps in: some holding
    /// phases take a re-entrant acquire (their acquire row says what it does), and some waiting
    /// phases let the application give up (their give-up row says how). A separate draw, so
    /// that `from_seed` draws what it drew before these existed.
    pub fn with_application_steps(seed: u64) -> Program {
        let mut program = Program::from_seed(seed);
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed_a991);
        program.reenters = program.beliefs.map(|b| b == Kind::Holding && rng.random_bool(0.4));
        program.abandons = program.beliefs.map(|b| b == Kind::Acquiring && rng.random_bool(0.6));
        program.application_steps = true;
        Program { variant: Variant { application_steps: true, ..Variant::default() }, ..program }.identified()
    }

    /// The program drawn from `seed`, changed so that a Disconnected received in idle phase 0
    /// moves silently to idle phase 3 (the next acquire follows phase 3's random row), an
    /// acquire from phase 0 moves to phase 1, and a SyncConnected received while acquiring
    /// (phase 1) creates again.
    pub fn noting_outages(seed: u64) -> Program {
        const NOTED: u8 = 3;
        let mut program = Program::from_seed(seed);
        program.beliefs[usize::from(NOTED)] = Kind::Idle;
        program.table[0][Class::Disconnected as usize] = Action { ops: [None, None], forget: false, next: NOTED };
        program.table[0][Class::Acquire as usize].next = 1;
        // While acquiring, a connection that comes back means "create again": harmless when
        // the outage came first, an orphan when the create's reply was still to come.
        program.table[1][Class::SyncConnected as usize] =
            Action { ops: [Some(Op::CreateSeq), None], forget: true, next: 1 };
        program.notes_outages = true;
        Program { variant: Variant { notes_outages: true, ..Variant::default() }, ..program }.identified()
    }

    /// Draws the additions (`Extras`) from a stream of their own, the rows of the two
    /// comparison classes, and puts the new ops into some cells of the table (never the
    /// acquire from idle, which must create).
    fn extend(&mut self) {
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed ^ 0xe87e_4d5e_d0a7_a5e5);
        self.extras = Extras::draw(&mut rng);
        let quiet = rng.random_range(0.3..0.8);
        let mut ops: Vec<Op> = OPS.to_vec();
        ops.push(Op::StatMine);
        if self.extras.write.is_some() {
            ops.extend([Op::SetNum, Op::GetNum, Op::SetNum, Op::GetNum]);
        }
        let new: &[Op] = match self.extras.write.is_some() {
            true => &[Op::SetNum, Op::GetNum, Op::StatMine],
            false => &[Op::StatMine],
        };
        // A program that writes a number writes it once it has its node, and reads it back
        // where it waits: what a recipe that publishes its number in its node does.
        if self.extras.write.is_some() {
            for (phase, row) in self.table.iter_mut().enumerate() {
                let created = &mut row[Class::CreatedMine as usize];
                created.ops = [Some(Op::SetNum), created.ops[0]];
                if self.beliefs[phase] == Kind::Acquiring {
                    row[Class::SetDone as usize].ops[0] = Some(Op::GetNum);
                }
            }
        }
        for (phase, row) in self.table.iter_mut().enumerate() {
            for (class, cell) in row.iter_mut().enumerate() {
                if class == Class::TestTrue as usize || class == Class::TestFalse as usize {
                    *cell = action(&mut rng, quiet, &ops);
                } else if !(phase == 0 && class == Class::Acquire as usize) && rng.random_bool(0.15) {
                    cell.ops[rng.random_range(0..2)] = Some(new[rng.random_range(0..new.len())]);
                }
            }
        }
        // From a stream of its own, so that the draws above stay what they were: some programs
        // take over their predecessor's name once they find it gone.
        let mut by_hand = ChaCha8Rng::seed_from_u64(self.seed ^ 0x4a2d_c4ea_7e0f_5eed);
        if by_hand.random_bool(0.3) {
            for row in self.table.iter_mut() {
                for class in [Class::ExistsNull, Class::WatchDeleted, Class::ReadFailed] {
                    row[class as usize].ops[1] = Some(Op::CreatePredByHand);
                }
            }
        }
        self.vocabulary();
    }

    /// From a stream of its own: some programs sync, create and delete by multi, and hold as a
    /// queue's consumer or a barrier's party rather than a lock's holder.
    fn vocabulary(&mut self) {
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed ^ 0x5c0a_b0c4_b1a7_e11e);
        if rng.random_bool(0.35) {
            let new = [Op::Sync, Op::MultiCreateSeq, Op::MultiDeleteMine];
            for (phase, row) in self.table.iter_mut().enumerate() {
                for (class, cell) in row.iter_mut().enumerate() {
                    if !(phase == 0 && class == Class::Acquire as usize) && rng.random_bool(0.12) {
                        cell.ops[rng.random_range(0..2)] = Some(new[rng.random_range(0..new.len())]);
                    }
                }
            }
            // Acquiring from idle makes its node by a multi instead, now and then.
            if rng.random_bool(0.3) {
                self.table[0][Class::Acquire as usize].ops[0] = Some(Op::MultiCreateSeq);
            }
        }
        self.mode = match rng.random_range(0..10) {
            0 | 1 => zklab_model::Mode::Take,
            2 => zklab_model::Mode::Barrier { parties: 2 },
            _ => zklab_model::Mode::Exclusive,
        };
    }
}

/// A random action: up to two ops from `ops` (each left out with probability `quiet`), rarely
/// forgetting the node, and a random next phase.
fn action(rng: &mut ChaCha8Rng, quiet: f64, ops: &[Op]) -> Action {
    let op = |rng: &mut ChaCha8Rng| match rng.random_bool(quiet) {
        true => None,
        false => Some(ops[rng.random_range(0..ops.len())]),
    };
    let ops = [op(rng), op(rng)];
    Action { ops, forget: rng.random_bool(0.08), next: rng.random_range(0..PHASES as u8) }
}
