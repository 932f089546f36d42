//! What a drawn program adds to the base table (`Program::from_seed`): the reads, writes,
//! comparisons, tokens and paths that lock recipes use beyond sequence numbers, the bounds that
//! keep its state space finite, and its claims of renumbering and symmetry.
//!
//! Each feature is drawn on its own, so that most programs use a few and some none. The
//! claims are drawn apart from whether the program keeps their contracts: a program that
//! compares its sequence number with a constant and still claims renumbering is a careless
//! user's recipe, which the production checker must catch on the states it explores.

use super::numbers::{Cmp, Expr, Kind, Operand, StatField, Test};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// What a read reply with a stat or data puts into the register.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Source {
    /// A field of the reply's stat (exists, getData, setData, and the create's reply).
    Stat(StatField),
    /// A number read back from a getData reply's data.
    Data,
}

/// Where a comparison decides what the recipe does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TestAt {
    /// On each reply that reads a stat or data (exists, getData, setData): it is handled as
    /// `Class::TestTrue` or `Class::TestFalse` instead.
    Reads,
    /// On a listing: the recipe counts itself first when the test holds ("if my seq < 3").
    Listing,
}

/// The fencing token a holder presents.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Token {
    /// Its node's sequence number (the base programs').
    Seq,
    /// Its node's creation zxid, from the create's reply.
    Czxid,
    /// The number in its register.
    Register,
}

/// Which node a data write or read is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    /// The lock node itself.
    Lock,
    /// The recipe's own sequential node.
    Own,
    /// Its named node, `w-<client>`.
    Named,
}

/// Writing a number into a node's data (`Op::SetNum`), reading it back (`Op::GetNum`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DataWrite {
    pub target: Target,
    pub value: Expr,
    /// The sequential node is created with the number as its data too.
    pub at_create: bool,
    /// `Op::GetNum` sets a data watch.
    pub watch: bool,
}

/// A program's additions to its base table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Extras {
    pub read: Option<Source>,
    pub test: Option<(Test, TestAt)>,
    pub write: Option<DataWrite>,
    pub token: Token,
    /// Contenders are created below `/lock/d` (a persistent node created before each
    /// sequential create), not below the lock node.
    pub deep: bool,
    /// At most this many writes (creates, deletes, setData) over the whole run: a retry limit,
    /// without which a recipe that writes in a loop has an infinite graph (every write takes a
    /// new zxid) that no exhaustive checker without renumbering can finish.
    pub write_budget: Option<u8>,
    /// At most this many requests awaiting their reply: without it a recipe that answers each
    /// reply with two reads fills its queue without end.
    pub max_pending: Option<u8>,
    pub claims_renumbering: bool,
    pub claims_symmetry: bool,
}

impl Extras {
    /// The base programs': no additions, no bounds, both claims.
    pub fn none() -> Extras {
        Extras {
            read: None,
            test: None,
            write: None,
            token: Token::Seq,
            deep: false,
            write_budget: None,
            max_pending: None,
            claims_renumbering: true,
            claims_symmetry: true,
        }
    }

    /// A random set of additions.
    pub fn draw(rng: &mut ChaCha8Rng) -> Extras {
        let read = match rng.random_range(0..10) {
            0..=3 => None,
            4..=7 => Some(Source::Stat(StatField::ALL[rng.random_range(0..StatField::ALL.len())])),
            _ => Some(Source::Data),
        };
        let write = rng.random_bool(0.4).then(|| DataWrite {
            target: [Target::Own, Target::Own, Target::Lock, Target::Lock, Target::Named][rng.random_range(0..5)],
            value: expr(rng, &[Operand::Seq, Operand::Czxid, Operand::Session, Operand::Register]),
            at_create: rng.random_bool(0.3),
            watch: rng.random_bool(0.5),
        });
        // Reading data back is what makes writing it mean something.
        let read = match (write, read) {
            (Some(_), _) if rng.random_bool(0.8) => Some(Source::Data),
            (_, read) => read,
        };
        let test = rng.random_bool(0.55).then(|| {
            let at = match rng.random_bool(0.7) {
                true => TestAt::Reads,
                false => TestAt::Listing,
            };
            (test(rng, read), at)
        });
        let token = match rng.random_range(0..10) {
            0..=5 => Token::Seq,
            6..=8 => Token::Czxid,
            _ => Token::Register,
        };
        Extras {
            read,
            test,
            write,
            token,
            deep: rng.random_bool(0.25),
            // One write more for a program that writes its number.
            write_budget: Some(rng.random_range(1..=3) + u8::from(write.is_some())),
            max_pending: Some(rng.random_range(1..=2)),
            claims_renumbering: rng.random_bool(0.8),
            claims_symmetry: rng.random_bool(0.8),
        }
    }

    /// Whether the additions keep renumbering's contract (`Recipe::renumbered`): numbers are
    /// compared only with numbers of their kind, never with a constant or an offset, no
    /// version, cversion or data length is read, and every number kept is renumbered as its
    /// kind is. A register filled from data holds whatever kind was written.
    pub fn keep_renumbering(&self) -> bool {
        let reads_counts = matches!(self.read, Some(Source::Stat(f)) if f.breaks_renumbering());
        let register = self.register_kind();
        let kind_of = |e: Expr| match e.of {
            Operand::Register => register,
            Operand::Seq => Some(Kind::Seq),
            Operand::Czxid => Some(Kind::Zxid),
            Operand::Session => Some(Kind::Session),
            Operand::Zero => Some(Kind::Count),
        };
        let test_ok = self.test.is_none_or(|(t, _)| {
            !t.lhs.is_arithmetic()
                && !t.rhs.is_arithmetic()
                && kind_of(t.lhs).is_some()
                && kind_of(t.lhs) == kind_of(t.rhs)
        });
        let write_ok = self.write.is_none_or(|w| !w.value.is_arithmetic() && kind_of(w.value).is_some());
        let token_ok = self.token != Token::Register || register.is_some_and(|k| k != Kind::Session);
        !reads_counts && test_ok && write_ok && token_ok
    }

    /// Whether the additions keep symmetry's contract (`Recipe::renamed`): a client's
    /// identity appears only in names and session ids the model renames, so its session id is
    /// compared only with session ids and never written into data (which nothing renames).
    pub fn keep_symmetry(&self) -> bool {
        let register = self.register_kind();
        let session =
            |e: Expr| e.of == Operand::Session || (e.of == Operand::Register && register == Some(Kind::Session));
        let test_ok = self.test.is_none_or(|(t, _)| {
            let (a, b) = (session(t.lhs), session(t.rhs));
            !(a || b) || (a && b && t.lhs.plus == t.rhs.plus)
        });
        let write_ok =
            self.write.is_none_or(|w| !(session(w.value) || (w.value.of == Operand::Register && register.is_none())));
        let token_ok = !(self.token == Token::Register && register == Some(Kind::Session));
        test_ok && write_ok && token_ok
    }

    /// Whether the program reads its node's creation zxid: base programs do not, and keep no
    /// more than they did (a register no program reads would only split states).
    pub fn uses_czxid(&self) -> bool {
        let test = self.test.is_some_and(|(t, _)| t.lhs.of == Operand::Czxid || t.rhs.of == Operand::Czxid);
        let write = self.write.is_some_and(|w| w.value.of == Operand::Czxid);
        self.token == Token::Czxid || test || write
    }

    /// The kind of number the register holds, if it is always one kind.
    fn register_kind(&self) -> Option<Kind> {
        match self.read {
            None => None,
            Some(Source::Stat(f)) => Some(f.read(&Default::default()).kind),
            Some(Source::Data) => match self.write {
                Some(w) if w.value.of != Operand::Register => Some(match w.value.of {
                    Operand::Seq => Kind::Seq,
                    Operand::Czxid => Kind::Zxid,
                    Operand::Session => Kind::Session,
                    _ => Kind::Count,
                }),
                _ => None,
            },
        }
    }
}

/// An expression over one of `operands`, mostly without an offset.
fn expr(rng: &mut ChaCha8Rng, operands: &[Operand]) -> Expr {
    let of = operands[rng.random_range(0..operands.len())];
    let plus = match rng.random_range(0..10) {
        0..=6 => 0,
        7 => -1,
        8 => 1,
        _ => 2,
    };
    Expr { of, plus }
}

/// A comparison: the register against something when the recipe reads into it, else its own
/// numbers against each other, its session, or a constant (a threshold such as "seq < 3").
fn test(rng: &mut ChaCha8Rng, read: Option<Source>) -> Test {
    let all = [Operand::Register, Operand::Seq, Operand::Czxid, Operand::Session];
    let lhs = match read {
        Some(_) if rng.random_bool(0.7) => Expr { of: Operand::Register, plus: 0 },
        _ => expr(rng, &all[1..]),
    };
    let rhs = match rng.random_range(0..10) {
        0..=2 => Expr { of: Operand::Zero, plus: rng.random_range(0..4) },
        3..=4 if lhs.of == Operand::Register => Expr { of: Operand::Session, plus: 0 },
        _ => expr(rng, &all),
    };
    let cmp = [Cmp::Lt, Cmp::Le, Cmp::Eq, Cmp::Ne][rng.random_range(0..4)];
    Test { lhs, cmp, rhs }
}
