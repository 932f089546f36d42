//! The numbers a random recipe reads, keeps, compares and writes beyond its sequence number:
//! stat fields, numbers in node data, its session id, constants and offsets.
//!
//! Every number carries its kind, because renumbering ranks sequence numbers and zxids each
//! among their own kind and leaves session ids and counts alone: a recipe that claims
//! renumbering must pass each number it keeps through the right map (`Num::renumbered`), and
//! one that claims symmetry must rename the session ids it keeps (`Num::renamed`). Numbers in
//! node data are written tagged with their kind (`seq:7`), so that any client can read them
//! back whatever program it runs, and `Recipe::renumber_data` can rank them.

use zklab_model::{Numbers, Renamer, Renumber, SessionId, Stat};

/// What a number counts, as renumbering tells them apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A sequence number of one of the lock's children.
    Seq,
    /// A zxid (czxid, mzxid, pzxid).
    Zxid,
    /// A session id (`Ctx.session`, a stat's ephemeral owner).
    Session,
    /// Anything else: a version, a count, a constant. Renumbering leaves it as it is.
    Count,
}

impl Kind {
    fn tag(self) -> &'static str {
        match self {
            Kind::Seq => "seq",
            Kind::Zxid => "zxid",
            Kind::Session => "sid",
            Kind::Count => "n",
        }
    }
}

/// A number with its kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Num {
    pub kind: Kind,
    pub value: i64,
}

impl Num {
    pub fn new(kind: Kind, value: i64) -> Num {
        Num { kind, value }
    }

    /// As node data: `seq:7`, `zxid:12`, `sid:3`, `n:2`.
    pub fn to_data(self) -> String {
        format!("{}:{}", self.kind.tag(), self.value)
    }

    /// A number written by `to_data`; `None` for any other data.
    pub fn from_data(data: &str) -> Option<Num> {
        let (tag, value) = data.split_once(':')?;
        let kind = [Kind::Seq, Kind::Zxid, Kind::Session, Kind::Count].into_iter().find(|k| k.tag() == tag)?;
        Some(Num { kind, value: value.parse().ok()? })
    }

    /// Renumbered as its kind is: sequence numbers and zxids ranked, the rest unchanged.
    pub fn renumbered(self, n: &Numbers) -> Num {
        let value = match self.kind {
            Kind::Seq => n.seq(self.value),
            Kind::Zxid => n.zxid(self.value),
            Kind::Session | Kind::Count => self.value,
        };
        Num { value, ..self }
    }

    /// `renumbered` through a state's renumbering.
    pub fn renumbered_by(self, r: &Renumber) -> Num {
        self.renumbered(r.numbers)
    }

    /// With the clients' roles swapped: a session id of the sessions opened at the start is the
    /// other client's.
    pub fn renamed(self, r: &Renamer) -> Num {
        match self.kind {
            Kind::Session if self.value >= 0 => {
                Num { value: i64::from(r.session(SessionId(self.value as u32)).0), ..self }
            }
            _ => self,
        }
    }
}

/// A field of a stat.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StatField {
    Czxid,
    Mzxid,
    Pzxid,
    Version,
    Cversion,
    EphemeralOwner,
    DataLength,
    NumChildren,
}

impl StatField {
    pub const ALL: [StatField; 8] = [
        StatField::Czxid,
        StatField::Mzxid,
        StatField::Pzxid,
        StatField::Version,
        StatField::Cversion,
        StatField::EphemeralOwner,
        StatField::DataLength,
        StatField::NumChildren,
    ];

    /// The field's value in `stat`; a node without an ephemeral owner has owner -1.
    pub fn read(self, stat: &Stat) -> Num {
        match self {
            StatField::Czxid => Num::new(Kind::Zxid, stat.czxid),
            StatField::Mzxid => Num::new(Kind::Zxid, stat.mzxid),
            StatField::Pzxid => Num::new(Kind::Zxid, stat.pzxid),
            StatField::Version => Num::new(Kind::Count, stat.version.into()),
            StatField::Cversion => Num::new(Kind::Count, stat.cversion.into()),
            StatField::EphemeralOwner => Num::new(Kind::Session, stat.ephemeral_owner.map_or(-1, |s| i64::from(s.0))),
            StatField::DataLength => Num::new(Kind::Count, stat.data_length.into()),
            StatField::NumChildren => Num::new(Kind::Count, stat.num_children.into()),
        }
    }

    /// Whether renumbering changes what the field says, so that a recipe claiming it may not
    /// read it: it never reads a cversion or a version (the contract), and a data length
    /// changes when the numbers in the data are renumbered.
    pub fn breaks_renumbering(self) -> bool {
        matches!(self, StatField::Version | StatField::Cversion | StatField::DataLength)
    }
}

/// What a recipe evaluates: the value of one of its registers plus a constant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Expr {
    pub of: Operand,
    pub plus: i64,
}

/// Where an expression's value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operand {
    /// The number the recipe last read (from a stat or from data).
    Register,
    /// Its node's sequence number.
    Seq,
    /// Its node's creation zxid, from the create's reply.
    Czxid,
    /// Its session id (`Ctx.session`).
    Session,
    /// Zero: with `plus`, a constant.
    Zero,
}

/// What the recipe knows when it evaluates an expression.
pub struct Registers {
    pub register: Option<Num>,
    pub seq: Option<i64>,
    pub czxid: Option<i64>,
    pub session: SessionId,
}

impl Expr {
    /// The value, or `None` when the register it reads is empty.
    pub fn eval(self, r: &Registers) -> Option<Num> {
        let base = match self.of {
            Operand::Register => r.register?,
            Operand::Seq => Num::new(Kind::Seq, r.seq?),
            Operand::Czxid => Num::new(Kind::Zxid, r.czxid?),
            Operand::Session => Num::new(Kind::Session, i64::from(r.session.0)),
            Operand::Zero => Num::new(Kind::Count, 0),
        };
        Some(Num { value: base.value + self.plus, ..base })
    }

    /// Whether the value is not a number as the server handed it out: a constant or an offset.
    pub fn is_arithmetic(self) -> bool {
        self.of == Operand::Zero || self.plus != 0
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cmp {
    Lt,
    Le,
    Eq,
    Ne,
}

/// A comparison of two expressions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Test {
    pub lhs: Expr,
    pub cmp: Cmp,
    pub rhs: Expr,
}

impl Test {
    /// The outcome, and whether it was arithmetic (a constant, an offset, or two kinds of
    /// number compared); a side that cannot be evaluated makes the test false.
    pub fn eval(self, r: &Registers) -> (bool, bool) {
        let (Some(a), Some(b)) = (self.lhs.eval(r), self.rhs.eval(r)) else { return (false, false) };
        let outcome = match self.cmp {
            Cmp::Lt => a.value < b.value,
            Cmp::Le => a.value <= b.value,
            Cmp::Eq => a.value == b.value,
            Cmp::Ne => a.value != b.value,
        };
        (outcome, self.lhs.is_arithmetic() || self.rhs.is_arithmetic() || a.kind != b.kind)
    }
}
