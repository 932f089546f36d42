//! One client's random recipe: the shared program, its phase and what it remembers, over the
//! real `Recipe` trait.

use super::extras::{Source, Target, TestAt, Token};
use super::numbers::{Num, Registers};
use super::program::{Class, Kind, Op, Program};
use super::usage::{note, Feature};
use std::hash::{Hash, Hasher};
use std::sync::Arc;
use zklab_model::{
    Belief, ClientId, CreateMode, Ctx, EventType, Input, Numbers, Recipe, Renamer, Renaming, Renumber, Request,
    Response, Rewrite, SessionState, Stat, ZkError,
};

/// The lock path of every world the differential test builds.
pub const LOCK: &str = "/lock";
/// The intermediate node that deep programs (`Extras::deep`) create their contenders below.
pub const DIR: &str = "/lock/d";

#[derive(Clone)]
pub struct RandomRecipe {
    program: Arc<Program>,
    phase: u8,
    /// The sequential node it created last, and its sequence number.
    node: Option<String>,
    seq: Option<i64>,
    /// The node just below its own in the last listing.
    pred: Option<String>,
    /// Its node's creation zxid, from the create's reply.
    czxid: Option<i64>,
    /// The number it last read (`Extras::read`).
    register: Option<Num>,
    /// Writes sent so far (`Extras::write_budget`).
    writes: u8,
    /// Requests sent and not yet answered (`Extras::max_pending`).
    pending: u8,
}

/// The whole state, the program by its number: it never changes, and printing its table at
/// every renumbering by replay (which compares what `Debug` prints) would cost more than the
/// exploration.
impl std::fmt::Debug for RandomRecipe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RandomRecipe")
            .field("program", &self.program.id)
            .field("phase", &self.phase)
            .field("node", &self.node)
            .field("seq", &self.seq)
            .field("pred", &self.pred)
            .field("czxid", &self.czxid)
            .field("register", &self.register)
            .field("writes", &self.writes)
            .field("pending", &self.pending)
            .finish()
    }
}

impl RandomRecipe {
    pub fn new(program: Arc<Program>) -> Self {
        RandomRecipe {
            program,
            phase: 0,
            node: None,
            seq: None,
            pred: None,
            czxid: None,
            register: None,
            writes: 0,
            pending: 0,
        }
    }

    fn state(&self) -> impl Eq + Hash + '_ {
        let remembered = (&self.node, self.seq, &self.pred, self.czxid, self.register);
        (self.program.id, self.phase, remembered, self.writes, self.pending)
    }

    /// Where its contenders live.
    fn parent(&self) -> &'static str {
        match self.program.extras.deep {
            true => DIR,
            false => LOCK,
        }
    }

    fn registers(&self, ctx: &Ctx) -> Registers {
        Registers { register: self.register, seq: self.seq, czxid: self.czxid, session: ctx.session }
    }

    /// The sort key of a contender's name: its sequence number, or with `ordered_by_client`
    /// the client number its name carries first.
    fn key(&self, name: &str) -> Option<(i64, i64)> {
        let rest = name.strip_prefix("n-")?;
        let seq: i64 = rest.get(rest.len().checked_sub(10)?..)?.parse().ok()?;
        let client = match self.program.ordered_by_client {
            true => rest.strip_prefix('c')?.split('-').next()?.parse().ok()?,
            false => 0,
        };
        Some((client, seq))
    }

    /// Reads a reply's stat into the register, if the program reads that way.
    fn read_stat(&mut self, stat: &Stat) {
        if let Some(Source::Stat(field)) = self.program.extras.read {
            self.register = Some(field.read(stat));
            note(Feature::StatFields);
        }
    }

    /// A reply that reads a stat or data: with a comparison at reads, its outcome decides the
    /// class; otherwise `class`.
    fn tested(&mut self, ctx: &Ctx, class: Class) -> Class {
        match self.program.extras.test {
            Some((test, TestAt::Reads)) => match self.test(ctx, test) {
                true => Class::TestTrue,
                false => Class::TestFalse,
            },
            _ => class,
        }
    }

    fn test(&self, ctx: &Ctx, test: super::numbers::Test) -> bool {
        let (outcome, arithmetic) = test.eval(&self.registers(ctx));
        if arithmetic {
            note(Feature::Arithmetic);
        }
        if [test.lhs.of, test.rhs.of].contains(&super::numbers::Operand::Session) {
            note(Feature::Session);
        }
        outcome
    }

    fn classify(&mut self, ctx: &Ctx, input: &Input) -> Class {
        match input {
            Input::Acquire => Class::Acquire,
            Input::Release => Class::Release,
            Input::Abandon => Class::Abandon,
            Input::State(SessionState::Disconnected) => Class::Disconnected,
            Input::State(SessionState::SyncConnected) => Class::SyncConnected,
            Input::State(_) => Class::Expired,
            Input::Watch(e) if e.kind == EventType::NodeDeleted => Class::WatchDeleted,
            Input::Watch(_) => Class::WatchOther,
            Input::Reply { result: Err(ZkError::ConnectionLoss), .. } => Class::ConnectionLoss,
            Input::Reply { request, result } => match (request, result) {
                (Request::Create { .. }, Ok(Response::Created { path, stat })) => {
                    match self.key(zklab_model::path::name(path)) {
                        Some((_, seq)) => {
                            self.node = Some(path.clone());
                            self.seq = Some(seq);
                            self.czxid = self.program.extras.uses_czxid().then_some(stat.czxid);
                            self.read_stat(stat);
                            if path.starts_with(&format!("{DIR}/")) {
                                note(Feature::Deep);
                            }
                            Class::CreatedMine
                        }
                        None => Class::CreatedOther,
                    }
                }
                (Request::Create { .. }, _) => Class::CreateFailed,
                (Request::GetChildren { .. }, Ok(Response::Children { children, .. })) => {
                    let class = self.listed(children);
                    match self.program.extras.test {
                        Some((test, TestAt::Listing)) if self.node.is_some() => match self.test(ctx, test) {
                            true => Class::ListLowest,
                            false => Class::ListNotLowest,
                        },
                        _ => class,
                    }
                }
                (Request::GetChildren { .. }, _) => Class::ListFailed,
                (Request::Exists { .. }, Ok(Response::Exists(None))) => Class::ExistsNull,
                (Request::Exists { .. }, Ok(Response::Exists(Some(stat)))) => {
                    self.read_stat(stat);
                    self.tested(ctx, Class::ExistsStat)
                }
                (Request::Exists { .. }, Ok(_)) => Class::ExistsStat,
                (Request::GetData { .. }, Ok(Response::Data { data, stat })) => {
                    let mine = self.seq.is_some_and(|s| *data == s.to_string());
                    self.read_stat(stat);
                    if self.program.extras.read == Some(Source::Data) {
                        self.register = Num::from_data(data);
                        if self.register.is_some() {
                            note(Feature::DataNumbers);
                        }
                    }
                    match mine {
                        true => self.tested(ctx, Class::DataMine),
                        false => self.tested(ctx, Class::DataOther),
                    }
                }
                (Request::Exists { .. } | Request::GetData { .. }, _) => Class::ReadFailed,
                (Request::Delete { path, .. }, Ok(_)) => {
                    if self.node.as_deref() == Some(path) {
                        (self.node, self.seq, self.czxid) = (None, None, None);
                    }
                    Class::Deleted
                }
                (Request::Delete { .. }, _) => Class::DeleteFailed,
                (Request::SetData { .. }, Ok(Response::DataSet(stat))) => {
                    self.read_stat(stat);
                    self.tested(ctx, Class::SetDone)
                }
                (Request::SetData { .. }, Ok(_)) => Class::SetDone,
                (Request::SetData { .. }, _) => Class::DeleteFailed,
                (Request::Sync { .. }, Ok(_)) => {
                    note(Feature::Sync);
                    Class::SetDone
                }
                (Request::Sync { .. }, _) => Class::ReadFailed,
                (Request::Multi { .. }, Ok(response)) => {
                    note(Feature::Multi);
                    let created = response.created().into_iter().find_map(|path| {
                        self.key(zklab_model::path::name(path)).map(|(_, seq)| (path.to_string(), seq))
                    });
                    match created {
                        // A multi's create answers no stat: no creation zxid to keep.
                        Some((path, seq)) => {
                            self.czxid = None;
                            self.node = Some(path);
                            self.seq = Some(seq);
                            Class::CreatedMine
                        }
                        None => {
                            let deleted = request.writes().iter().any(
                                |w| matches!(w, Request::Delete { path, .. } if self.node.as_deref() == Some(path)),
                            );
                            if deleted {
                                (self.node, self.seq, self.czxid) = (None, None, None);
                            }
                            Class::Deleted
                        }
                    }
                }
                (Request::Multi { .. }, _) => Class::CreateFailed,
            },
        }
    }

    /// A listing: the lowest contender wins; otherwise the one just below is the predecessor.
    fn listed(&mut self, children: &[String]) -> Class {
        let Some(mine) = self.node.as_deref().map(zklab_model::path::name).and_then(|n| self.key(n)) else {
            return Class::ListNotLowest;
        };
        let parent = self.parent();
        let below = children.iter().filter_map(|c| Some((self.key(c)?, c))).filter(|(k, _)| *k < mine).max();
        match below {
            None => Class::ListLowest,
            Some(_) if self.program.reads_values && !self.program.ordered_by_client => {
                self.pred = Some(format!("{parent}/n-{:010}", mine.1 - 1));
                Class::ListNotLowest
            }
            Some((_, name)) => {
                self.pred = Some(format!("{parent}/{name}"));
                Class::ListNotLowest
            }
        }
    }

    /// The node a data write or read is about.
    fn target(&self, target: Target, client: ClientId) -> Option<String> {
        match target {
            Target::Lock => Some(LOCK.to_string()),
            Target::Own => self.node.clone(),
            Target::Named => Some(format!("{LOCK}/w-{client}")),
        }
    }

    /// The number a data write writes, as data; noting the session if it is written.
    fn number_data(&self, ctx: &Ctx) -> Option<String> {
        let write = self.program.extras.write?;
        let num = write.value.eval(&self.registers(ctx))?;
        if write.value.of == super::numbers::Operand::Session {
            note(Feature::Session);
        }
        Some(num.to_data())
    }

    fn request(&self, op: Op, ctx: &Ctx) -> Option<Request> {
        let client = ctx.client;
        let named = format!("{LOCK}/w-{client}");
        let sub = |node: &String| format!("{node}/o");
        Some(match op {
            // One node at a time: a recipe that forgot its node (or lost it) creates another.
            Op::CreateSeq if self.node.is_some() => return None,
            Op::CreateSeq => {
                let mode = match self.program.persistent {
                    true => CreateMode::PersistentSequential,
                    false => CreateMode::EphemeralSequential,
                };
                let parent = self.parent();
                let path = match self.program.ordered_by_client {
                    true => format!("{parent}/n-c{client}-"),
                    false => format!("{parent}/n-"),
                };
                let data = match self.program.extras.write {
                    Some(w) if w.at_create => self.number_data(ctx).unwrap_or_default(),
                    _ => String::new(),
                };
                Request::Create { path, data, mode }
            }
            Op::CreateNamed => Request::create(&named, CreateMode::Ephemeral),
            Op::CreateSub => Request::create(&sub(self.node.as_ref()?), CreateMode::Ephemeral),
            Op::DeleteMine => Request::delete(self.node.as_ref()?),
            Op::DeleteSub => Request::delete(&sub(self.node.as_ref()?)),
            Op::DeleteNamed => Request::delete(&named),
            Op::ListWatch => Request::get_children(self.parent(), true),
            Op::List => Request::get_children(self.parent(), false),
            Op::ExistsPredWatch => Request::exists(self.pred.as_ref()?, true),
            Op::GetDataPredWatch => Request::get_data(self.pred.as_ref()?, true),
            Op::ExistsMineWatch => Request::exists(self.node.as_ref()?, true),
            Op::SetDataSeq => Request::SetData { path: LOCK.to_string(), data: self.seq?.to_string(), version: -1 },
            Op::GetDataLock => Request::get_data(LOCK, false),
            Op::SetNum => {
                let path = self.target(self.program.extras.write?.target, client)?;
                Request::SetData { path, data: self.number_data(ctx)?, version: -1 }
            }
            Op::GetNum => {
                let write = self.program.extras.write?;
                Request::get_data(&self.target(write.target, client)?, write.watch)
            }
            Op::StatMine => Request::exists(self.node.as_ref()?, false),
            Op::CreatePredByHand => {
                let request = Request::create(self.pred.as_ref()?, CreateMode::Ephemeral);
                note(Feature::ByHand);
                request
            }
            Op::Sync => Request::sync(self.parent()),
            Op::MultiCreateSeq => {
                let Some(Request::Create { path, data, mode }) = self.request(Op::CreateSeq, ctx) else { return None };
                Request::Multi {
                    ops: vec![
                        zklab_model::Op::Check { path: LOCK.to_string(), version: -1 },
                        zklab_model::Op::Create { path, data, mode },
                    ],
                }
            }
            Op::MultiDeleteMine => {
                let node = self.node.clone()?;
                Request::Multi {
                    ops: vec![
                        zklab_model::Op::Check { path: node.clone(), version: -1 },
                        zklab_model::Op::Delete { path: node, version: -1 },
                    ],
                }
            }
        })
    }

    /// Sends `request` unless a bound of the program forbids it (`Extras::write_budget`,
    /// `Extras::max_pending`); a deep program creates the intermediate node first.
    fn send(&mut self, request: Request, out: &mut Vec<Request>) {
        let extras = self.program.extras;
        if request.is_write() && extras.write_budget.is_some_and(|b| self.writes >= b) {
            return;
        }
        if extras.max_pending.is_some_and(|m| self.pending >= m) {
            return;
        }
        let sequential = |r: &Request| match r {
            Request::Create { mode, .. } => mode.is_sequential(),
            Request::Multi { ops } => {
                ops.iter().any(|op| matches!(op, zklab_model::Op::Create { mode, .. } if mode.is_sequential()))
            }
            _ => false,
        };
        if extras.deep && sequential(&request) {
            out.push(Request::create(DIR, CreateMode::Persistent));
        }
        self.writes += u8::from(request.is_write() && extras.write_budget.is_some());
        self.pending += u8::from(extras.max_pending.is_some());
        out.push(request);
    }
}

impl PartialEq for RandomRecipe {
    fn eq(&self, other: &Self) -> bool {
        self.state() == other.state()
    }
}
impl Eq for RandomRecipe {}
impl Hash for RandomRecipe {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.state().hash(state);
    }
}

impl Recipe for RandomRecipe {
    fn name(&self) -> String {
        self.program.name.clone()
    }

    fn handle(&mut self, ctx: &Ctx, input: Input, out: &mut Vec<Request>) {
        if self.program.mixed {
            note(Feature::Mixed);
        }
        match &input {
            // The intermediate node's create answers nothing the table asks about.
            Input::Reply { request: Request::Create { path, .. }, .. } if path == DIR => return,
            Input::Reply { .. } => self.pending = self.pending.saturating_sub(1),
            Input::Acquire if self.accepts_reentry() => note(Feature::Reentry),
            Input::Abandon => note(Feature::Abandon),
            _ => {}
        }
        let class = self.classify(ctx, &input);
        let action = self.program.table[usize::from(self.phase)][class as usize];
        if action.forget {
            (self.node, self.seq, self.pred, self.czxid) = (None, None, None, None);
        }
        for op in action.ops.iter().flatten() {
            if let Some(request) = self.request(*op, ctx) {
                self.send(request, out);
            }
        }
        self.phase = action.next;
        if self.belief().is_holding() && self.program.extras.token != Token::Seq {
            note(Feature::Tokens);
        }
    }

    fn belief(&self) -> Belief {
        match self.program.beliefs[usize::from(self.phase)] {
            Kind::Idle => Belief::Idle,
            Kind::Acquiring => Belief::Acquiring,
            Kind::Holding => Belief::Holding {
                token: match self.program.extras.token {
                    Token::Seq => self.seq,
                    Token::Czxid => self.czxid,
                    Token::Register => self.register.map(|n| n.value),
                }
                .unwrap_or(-1),
            },
            Kind::Releasing => Belief::Releasing,
        }
    }

    fn owned_node(&self) -> Option<&str> {
        self.node.as_deref()
    }

    fn mode(&self) -> zklab_model::Mode {
        self.program.mode
    }

    fn accepts_reentry(&self) -> bool {
        self.program.reenters[usize::from(self.phase)]
    }

    fn can_abandon(&self) -> bool {
        self.program.abandons[usize::from(self.phase)]
    }

    fn waits_on_one_node(&self) -> bool {
        true
    }

    fn renamed(&self, r: &Renamer) -> Option<Self> {
        self.program.extras.claims_symmetry.then(|| RandomRecipe {
            node: self.node.as_deref().map(|n| r.path(n)),
            pred: self.pred.as_deref().map(|n| r.path(n)),
            register: self.register.map(|n| n.renamed(r)),
            ..self.clone()
        })
    }

    fn rename_name(&self, name: &str, r: &Renaming) -> String {
        let client = |c: &str| c.parse::<ClientId>().ok().map(|c| r.client(c));
        if let Some(c) = name.strip_prefix("w-").and_then(client) {
            return format!("w-{c}");
        }
        if let Some(rest) = name.strip_prefix("n-c") {
            if let Some((c, tail)) = rest.split_once('-') {
                if let Some(c) = client(c) {
                    return format!("n-c{c}-{tail}");
                }
            }
        }
        name.to_string()
    }

    fn renumbered(&self, _: ClientId, r: &Renumber) -> Option<Self> {
        self.program.extras.claims_renumbering.then(|| RandomRecipe {
            node: self.node.as_deref().map(|n| r.path(n)),
            seq: self.seq.map(|s| r.seq(s)),
            pred: self.pred.as_deref().map(|n| r.path(n)),
            czxid: self.czxid.map(|z| r.zxid(z)),
            register: self.register.map(|n| n.renumbered_by(r)),
            ..self.clone()
        })
    }

    /// Numbers written by `Num::to_data` are renumbered as their kind is; any other data but
    /// the empty one (a base program's untagged sequence number) cannot be, and keeps the
    /// state as it is.
    fn renumber_data(&self, data: &str, n: &Numbers) -> Option<String> {
        match data.is_empty() {
            true => Some(String::new()),
            false => Num::from_data(data).map(|num| num.renumbered(n).to_data()),
        }
    }

    fn renumber_token(&self, token: i64, n: &Numbers) -> i64 {
        match (token, self.program.extras.token) {
            (-1, _) => -1,
            (t, Token::Seq) => n.seq(t),
            (t, Token::Czxid) => n.zxid(t),
            (t, Token::Register) => match self.register {
                Some(num) => Num { value: t, ..num }.renumbered(n).value,
                None => t,
            },
        }
    }
}
