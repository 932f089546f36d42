//! Which features of the random recipes an exploration actually exercised.
//!
//! A feature drawn into a program's table may sit in a row no run reaches; counting drawn
//! features would then claim coverage the comparison never had. So the recipes note each
//! feature as they use it (in `Recipe::handle`), into a per-thread set that the differential
//! test empties before the reference checker explores a case and reads right after: what the
//! reference checker's exploration exercised is exactly what the comparison covered.
//!
//! Noting is invisible to the recipes' state (it is not part of any `World`), so it changes no
//! state count.

use std::cell::Cell;

/// A feature a random recipe can use, as the differential test counts them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Feature {
    /// Read a stat field (czxid, mzxid, pzxid, version, cversion, ephemeral owner, data length,
    /// number of children) from an exists, getData, setData or create reply into its register.
    StatFields,
    /// Read back a number a client wrote into a node's data.
    DataNumbers,
    /// Used its own session id (`Ctx.session`): compared with a value, or written into data.
    Session,
    /// Evaluated a comparison with a constant, an offset, or numbers of two kinds (a sequence
    /// number against a zxid, say).
    Arithmetic,
    /// Came to hold with a fencing token that is not its sequence number.
    Tokens,
    /// Ran beside a client running another program (a world of distinct recipes).
    Mixed,
    /// Created its sequential node below an intermediate node (`/lock/d/n-...`).
    Deep,
    /// Gave up waiting (`Input::Abandon`, where `can_abandon` let the application).
    Abandon,
    /// Took a re-entrant acquire while holding (`accepts_reentry`).
    Reentry,
    /// Created its predecessor's sequential name by hand (`Op::CreatePredByHand`).
    ByHand,
    /// Had a sync answered.
    Sync,
    /// Had a multi applied.
    Multi,
}

impl Feature {
    pub const ALL: [Feature; 12] = [
        Feature::StatFields,
        Feature::DataNumbers,
        Feature::Session,
        Feature::Arithmetic,
        Feature::Tokens,
        Feature::Mixed,
        Feature::Deep,
        Feature::Abandon,
        Feature::Reentry,
        Feature::ByHand,
        Feature::Sync,
        Feature::Multi,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Feature::StatFields => "stat fields",
            Feature::DataNumbers => "numbers in data",
            Feature::Session => "own session",
            Feature::Arithmetic => "arithmetic",
            Feature::Tokens => "other tokens",
            Feature::Mixed => "mixed programs",
            Feature::Deep => "deep paths",
            Feature::Abandon => "giving up",
            Feature::Reentry => "re-entry",
            Feature::ByHand => "sequential names by hand",
            Feature::Sync => "sync",
            Feature::Multi => "multi",
        }
    }

    fn bit(self) -> u16 {
        1 << (self as u16)
    }
}

/// A set of features.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Used(u16);

impl Used {
    pub fn contains(self, f: Feature) -> bool {
        self.0 & f.bit() != 0
    }

    pub fn insert(&mut self, f: Feature) {
        self.0 |= f.bit();
    }

    pub fn iter(self) -> impl Iterator<Item = Feature> {
        Feature::ALL.into_iter().filter(move |&f| self.contains(f))
    }
}

thread_local! {
    static USED: Cell<Used> = const { Cell::new(Used(0)) };
}

/// Notes that a recipe on this thread used `f`.
pub fn note(f: Feature) {
    USED.with(|u| {
        let mut used = u.get();
        used.insert(f);
        u.set(used);
    });
}

/// The features noted on this thread since the last `take`, and forgets them.
pub fn take() -> Used {
    USED.with(|u| u.replace(Used(0)))
}
