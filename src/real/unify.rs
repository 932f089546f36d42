//! Whether what a real server answered is what the model answered, numbers aside. A real run's
//! zxids count every transaction the server ever applied (sessions opened, the run's own set-up)
//! and its session ids are 64-bit; the model counts from 0 and numbers sessions 1, 2, 3. So two
//! answers are the same when they are equal once each real number is replaced by the model
//! number it stands for, and that correspondence is the same throughout the run: each real zxid
//! (and session) stands for one model zxid (and session), bound the first time they meet, in
//! both directions. Children are compared as sets: a server lists them in no order a recipe may
//! rely on.

use std::collections::BTreeMap;
use zklab_model::{Belief, Input, OpResult, Response, SessionId, Stat, ZkResult};

/// A one-to-one correspondence, built as the run goes.
#[derive(Default, Debug)]
struct Bijection {
    forth: BTreeMap<i64, i64>,
    back: BTreeMap<i64, i64>,
}

impl Bijection {
    fn bind(&mut self, real: i64, model: i64, what: &str) -> Result<(), String> {
        match (self.forth.get(&real), self.back.get(&model)) {
            (None, None) => {
                self.forth.insert(real, model);
                self.back.insert(model, real);
                Ok(())
            }
            (Some(m), _) if *m == model => Ok(()),
            (Some(m), _) => Err(format!("real {what} {real:#x} stood for model {what} {m} before, now for {model}")),
            (None, Some(r)) => {
                Err(format!("model {what} {model} stood for real {what} {r:#x} before, now for {real:#x}"))
            }
        }
    }
}

/// The numbers of a real run and of its model, bound as they meet.
#[derive(Default, Debug)]
pub struct Unify {
    zxids: Bijection,
    sessions: Bijection,
}

impl Unify {
    /// Binds a real zxid to a model one up front (the lock parent's creation, the chroot).
    pub fn bind_zxid(&mut self, real: i64, model: i64) -> Result<(), String> {
        self.zxids.bind(real, model, "zxid")
    }

    pub fn session(&mut self, real: SessionId, model: SessionId) -> Result<(), String> {
        self.sessions.bind(i64::from(real.0), i64::from(model.0), "session")
    }

    fn stat(&mut self, real: &Stat, model: &Stat) -> Result<(), String> {
        let plain = |s: &Stat| (s.version, s.cversion, s.aversion, s.data_length, s.num_children);
        if plain(real) != plain(model) {
            return Err(format!("stat {real:?} against the model's {model:?}"));
        }
        self.zxids.bind(real.czxid, model.czxid, "zxid")?;
        self.zxids.bind(real.mzxid, model.mzxid, "zxid")?;
        self.zxids.bind(real.pzxid, model.pzxid, "zxid")?;
        match (real.ephemeral_owner, model.ephemeral_owner) {
            (None, None) => Ok(()),
            (Some(r), Some(m)) => self.session(r, m),
            _ => Err(format!(
                "ephemeral owner {:?} against the model's {:?}",
                real.ephemeral_owner, model.ephemeral_owner
            )),
        }
    }

    /// Whether a real result is the model's.
    pub fn result(&mut self, real: &ZkResult, model: &ZkResult) -> Result<(), String> {
        let differ = || Err(format!("real {real:?} against the model's {model:?}"));
        match (real, model) {
            (Err(r), Err(m)) if r == m => Ok(()),
            (Ok(Response::Created { path: p, stat: s }), Ok(Response::Created { path: q, stat: t })) if p == q => {
                self.stat(s, t)
            }
            (Ok(Response::Deleted), Ok(Response::Deleted)) => Ok(()),
            (Ok(Response::Exists(None)), Ok(Response::Exists(None))) => Ok(()),
            (Ok(Response::Exists(Some(s))), Ok(Response::Exists(Some(t)))) => self.stat(s, t),
            (Ok(Response::Data { data: d, stat: s }), Ok(Response::Data { data: e, stat: t })) if d == e => {
                self.stat(s, t)
            }
            (Ok(Response::DataSet(s)), Ok(Response::DataSet(t))) => self.stat(s, t),
            (Ok(Response::Synced { path: p }), Ok(Response::Synced { path: q })) if p == q => Ok(()),
            (Ok(Response::Multi(r)), Ok(Response::Multi(m))) if r.len() == m.len() => {
                for pair in r.iter().zip(m) {
                    match pair {
                        (OpResult::Created { path: p }, OpResult::Created { path: q }) if p == q => {}
                        (OpResult::DataSet(s), OpResult::DataSet(t)) => self.stat(s, t)?,
                        (OpResult::Deleted, OpResult::Deleted) | (OpResult::Checked, OpResult::Checked) => {}
                        _ => return differ(),
                    }
                }
                Ok(())
            }
            (Ok(Response::Children { children: c, stat: s }), Ok(Response::Children { children: d, stat: t })) => {
                let mut real: Vec<&str> = c.names().collect();
                let mut model: Vec<&str> = d.names().collect();
                real.sort_unstable();
                model.sort_unstable();
                if real != model {
                    return differ();
                }
                self.stat(s, t)
            }
            _ => differ(),
        }
    }

    /// Whether the input the real recipe was handed is the one the model hands its recipe.
    pub fn input(&mut self, real: &Input, model: &Input) -> Result<(), String> {
        match (real, model) {
            (Input::Reply { request: a, result: r }, Input::Reply { request: b, result: m }) if a == b => {
                self.result(r, m)
            }
            _ if real == model => Ok(()),
            _ => Err(format!("the real recipe was handed {real:?}, the model's {model:?}")),
        }
    }

    /// Whether the real recipe believes what the model's does, its token a number of the same
    /// kind. A token is a zxid or a sequence number: a sequence number is the same in both
    /// (each run has a fresh lock parent), a zxid is bound like any other.
    pub fn belief(&mut self, real: Belief, model: Belief) -> Result<(), String> {
        match (real, model) {
            (Belief::Holding { token: a }, Belief::Holding { token: b })
            | (Belief::Suspended { token: a }, Belief::Suspended { token: b }) => {
                if a == b || self.zxids.forth.get(&a) == Some(&b) {
                    Ok(())
                } else {
                    Err(format!("the real recipe holds with token {a}, the model's with {b}"))
                }
            }
            _ if real == model => Ok(()),
            _ => Err(format!("the real recipe believes {real:?}, the model's {model:?}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zklab_model::ZkError;

    fn stat(czxid: i64, owner: Option<u32>) -> Stat {
        Stat { czxid, mzxid: czxid, pzxid: czxid, ephemeral_owner: owner.map(SessionId), ..Stat::default() }
    }

    #[test]
    fn numbers_stand_for_one_another_throughout_the_run() {
        let mut u = Unify::default();
        let created = |z, o| Ok(Response::Created { path: "/lock/n-0000000000".into(), stat: stat(z, o) });
        assert_eq!(u.result(&created(0x1_0000_0005, Some(7)), &created(3, Some(2))), Ok(()));
        assert_eq!(u.result(&created(0x1_0000_0005, Some(7)), &created(3, Some(2))), Ok(()), "bound alike again");
        assert!(
            u.result(&created(0x1_0000_0005, Some(7)), &created(4, Some(2))).is_err(),
            "one real zxid, two model ones"
        );
        assert!(
            u.result(&created(0x1_0000_0009, Some(7)), &created(3, Some(2))).is_err(),
            "two real zxids, one model one"
        );
        assert!(
            u.result(&created(0x1_0000_0009, Some(8)), &created(5, Some(2))).is_err(),
            "two sessions, one model one"
        );
    }

    #[test]
    fn errors_and_paths_must_be_equal() {
        let mut u = Unify::default();
        assert_eq!(u.result(&Err(ZkError::NoNode), &Err(ZkError::NoNode)), Ok(()));
        assert!(u.result(&Err(ZkError::NoNode), &Err(ZkError::NodeExists)).is_err());
        let a = Ok(Response::Created { path: "/lock/n-0000000001".into(), stat: stat(9, None) });
        let b = Ok(Response::Created { path: "/lock/n-0000000000".into(), stat: stat(9, None) });
        assert!(u.result(&a, &b).is_err());
    }
}
