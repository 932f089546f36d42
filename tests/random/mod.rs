//! Random recipes for the differential test: small state machines over the real `Recipe` trait,
//! drawn from a seed. Each has a few phases, each phase a belief, and for every phase and every
//! kind of input (the application's acquire and release, each reply by outcome, watch events,
//! Disconnected, SyncConnected, Expired) an action: up to two requests from a menu of what lock
//! recipes do under the lock path (create a sequential or a named node, or a node below its own;
//! delete them; list with or without a watch; watch the predecessor with exists or getData;
//! write its sequence number into the lock node's data and read it back), whether to forget its
//! node, and the next phase. Most are broken, some loop forever, some back off and retry; that
//! is the point: the reference checker and the production checker must agree on all of them.
//!
//! Every recipe opts in to renumbering (it compares sequence numbers only with one another and
//! passes the ones it keeps through the renumbering) and to symmetry (its node names carry no
//! client, except the named node `w-<client>`, renamed with it). Some order contenders by the
//! client number in their names (`ordered_by_client`): that breaks symmetry's contract while
//! still claiming it, as a careless user's recipe would. Some take the node numbered one below
//! their own for their predecessor (`reads_values`), as if sequence numbers had no gaps: that
//! breaks renumbering's contract (only the order of numbers matters) while still claiming it.
//!
//! Drawn with `Program::noting_outages`, a recipe that is told of an outage while idle notes it
//! silently (it sends nothing and still believes idle) and acts on the application's next
//! acquire differently: a receive that changes nothing anyone sees but what a later acquire
//! does, the case that partial-order reduction must not take alone (condition C1). Random
//! tables make such a row too rarely for the test to find what goes wrong there.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::hash::{Hash, Hasher};
use std::sync::Arc;
use zklab_model::{
    Belief, ClientId, CreateMode, Ctx, EventType, Input, Numbers, Recipe, Renamer, Renaming, Renumber, Request,
    Response, Rewrite, SessionState, ZkError,
};

const PHASES: usize = 5;
/// The lock path of every world the differential test builds.
const LOCK: &str = "/lock";

/// What happened, as the table tells inputs apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
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
}
const CLASSES: usize = 23;

/// One request an action may send, resolved against what the recipe remembers (an op whose
/// register is empty sends nothing).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Op {
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
}
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
struct Action {
    ops: [Option<Op>; 2],
    /// Forget the node, its number and the predecessor before sending.
    forget: bool,
    next: u8,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Kind {
    Idle,
    Acquiring,
    Holding,
    Releasing,
}

/// A random recipe's program, shared by every client running it.
#[derive(Debug)]
pub struct Program {
    pub seed: u64,
    beliefs: [Kind; PHASES],
    table: [[Action; CLASSES]; PHASES],
    /// Sequential nodes are persistent (so a node can be created below one) rather than
    /// ephemeral.
    persistent: bool,
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
    reenters: [bool; PHASES],
    /// The waiting phases in which the application may give up.
    abandons: [bool; PHASES],
}

impl Program {
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
        let action = |rng: &mut ChaCha8Rng| {
            let op = |rng: &mut ChaCha8Rng| match rng.random_bool(quiet) {
                true => None,
                false => Some(OPS[rng.random_range(0..OPS.len())]),
            };
            let ops = [op(rng), op(rng)];
            Action { ops, forget: rng.random_bool(0.08), next: rng.random_range(0..PHASES as u8) }
        };
        let mut table = [[Action { ops: [None, None], forget: false, next: 0 }; CLASSES]; PHASES];
        for row in table.iter_mut() {
            // The give-up row is drawn last (below), so that a seed draws the same table it drew
            // before giving up existed.
            for cell in row.iter_mut().take(Class::Abandon as usize) {
                *cell = action(&mut rng);
            }
        }
        // From idle, acquiring creates a node and leaves idle.
        table[0][Class::Acquire as usize] =
            Action { ops: [Some(Op::CreateSeq), None], forget: true, next: rng.random_range(1..PHASES as u8) };
        let (persistent, ordered_by_client) = (rng.random_bool(0.2), rng.random_bool(0.1));
        let reads_values = rng.random_bool(0.1);
        for row in table.iter_mut() {
            row[Class::Abandon as usize] = action(&mut rng);
        }
        Program {
            seed,
            beliefs,
            table,
            persistent,
            ordered_by_client,
            reads_values,
            notes_outages: false,
            application_steps: false,
            reenters: [false; PHASES],
            abandons: [false; PHASES],
        }
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
        program
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
        program
    }
}

/// One client's random recipe: the shared program, its phase and what it remembers.
#[derive(Clone, Debug)]
pub struct RandomRecipe {
    program: Arc<Program>,
    phase: u8,
    /// The sequential node it created last, and its sequence number.
    node: Option<String>,
    seq: Option<i64>,
    /// The node just below its own in the last listing.
    pred: Option<String>,
}

impl PartialEq for RandomRecipe {
    fn eq(&self, other: &Self) -> bool {
        (self.program.seed, self.program.notes_outages, self.program.application_steps)
            == (other.program.seed, other.program.notes_outages, other.program.application_steps)
            && (self.phase, &self.node, self.seq, &self.pred) == (other.phase, &other.node, other.seq, &other.pred)
    }
}
impl Eq for RandomRecipe {}
impl Hash for RandomRecipe {
    fn hash<H: Hasher>(&self, state: &mut H) {
        let program = (self.program.seed, self.program.notes_outages, self.program.application_steps);
        (program, self.phase, &self.node, self.seq, &self.pred).hash(state);
    }
}

impl RandomRecipe {
    pub fn new(program: Arc<Program>) -> Self {
        RandomRecipe { program, phase: 0, node: None, seq: None, pred: None }
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

    fn classify(&mut self, input: &Input) -> Class {
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
                (Request::Create { .. }, Ok(Response::Created { path, .. })) => {
                    match self.key(zklab_model::path::name(path)) {
                        Some((_, seq)) => {
                            self.node = Some(path.clone());
                            self.seq = Some(seq);
                            Class::CreatedMine
                        }
                        None => Class::CreatedOther,
                    }
                }
                (Request::Create { .. }, _) => Class::CreateFailed,
                (Request::GetChildren { .. }, Ok(Response::Children { children, .. })) => self.listed(children),
                (Request::GetChildren { .. }, _) => Class::ListFailed,
                (Request::Exists { .. }, Ok(Response::Exists(None))) => Class::ExistsNull,
                (Request::Exists { .. }, Ok(_)) => Class::ExistsStat,
                (Request::GetData { .. }, Ok(Response::Data { data, .. })) => {
                    match self.seq.is_some_and(|s| *data == s.to_string()) {
                        true => Class::DataMine,
                        false => Class::DataOther,
                    }
                }
                (Request::Exists { .. } | Request::GetData { .. }, _) => Class::ReadFailed,
                (Request::Delete { path, .. }, Ok(_)) => {
                    if self.node.as_deref() == Some(path) {
                        self.node = None;
                        self.seq = None;
                    }
                    Class::Deleted
                }
                (Request::Delete { .. }, _) => Class::DeleteFailed,
                (Request::SetData { .. }, Ok(_)) => Class::SetDone,
                (Request::SetData { .. }, _) => Class::DeleteFailed,
            },
        }
    }

    /// A listing: the lowest contender wins; otherwise the one just below is the predecessor.
    fn listed(&mut self, children: &[String]) -> Class {
        let Some(mine) = self.node.as_deref().map(zklab_model::path::name).and_then(|n| self.key(n)) else {
            return Class::ListNotLowest;
        };
        let below = children.iter().filter_map(|c| Some((self.key(c)?, c))).filter(|(k, _)| *k < mine).max();
        match below {
            None => Class::ListLowest,
            Some(_) if self.program.reads_values && !self.program.ordered_by_client => {
                self.pred = Some(format!("{LOCK}/n-{:010}", mine.1 - 1));
                Class::ListNotLowest
            }
            Some((_, name)) => {
                self.pred = Some(format!("{LOCK}/{name}"));
                Class::ListNotLowest
            }
        }
    }

    fn request(&self, op: Op, client: ClientId) -> Option<Request> {
        let lock = LOCK;
        let named = format!("{lock}/w-{client}");
        let sub = |node: &String| format!("{node}/o");
        Some(match op {
            // One node at a time: a recipe that forgot its node (or lost it) creates another.
            Op::CreateSeq if self.node.is_some() => return None,
            Op::CreateSeq => {
                let mode = match self.program.persistent {
                    true => CreateMode::PersistentSequential,
                    false => CreateMode::EphemeralSequential,
                };
                let prefix = match self.program.ordered_by_client {
                    true => format!("{lock}/n-c{client}-"),
                    false => format!("{lock}/n-"),
                };
                Request::create(&prefix, mode)
            }
            Op::CreateNamed => Request::create(&named, CreateMode::Ephemeral),
            Op::CreateSub => Request::create(&sub(self.node.as_ref()?), CreateMode::Ephemeral),
            Op::DeleteMine => Request::delete(self.node.as_ref()?),
            Op::DeleteSub => Request::delete(&sub(self.node.as_ref()?)),
            Op::DeleteNamed => Request::delete(&named),
            Op::ListWatch => Request::get_children(lock, true),
            Op::List => Request::get_children(lock, false),
            Op::ExistsPredWatch => Request::exists(self.pred.as_ref()?, true),
            Op::GetDataPredWatch => Request::get_data(self.pred.as_ref()?, true),
            Op::ExistsMineWatch => Request::exists(self.node.as_ref()?, true),
            Op::SetDataSeq => Request::SetData { path: lock.to_string(), data: self.seq?.to_string(), version: -1 },
            Op::GetDataLock => Request::get_data(lock, false),
        })
    }
}

impl Recipe for RandomRecipe {
    fn name(&self) -> String {
        format!("random-{}", self.program.seed)
    }

    fn handle(&mut self, ctx: &Ctx, input: Input, out: &mut Vec<Request>) {
        let class = self.classify(&input);
        let action = self.program.table[usize::from(self.phase)][class as usize];
        if action.forget {
            (self.node, self.seq, self.pred) = (None, None, None);
        }
        out.extend(action.ops.iter().flatten().filter_map(|op| self.request(*op, ctx.client)));
        self.phase = action.next;
    }

    fn belief(&self) -> Belief {
        match self.program.beliefs[usize::from(self.phase)] {
            Kind::Idle => Belief::Idle,
            Kind::Acquiring => Belief::Acquiring,
            Kind::Holding => Belief::Holding { token: self.seq.unwrap_or(-1) },
            Kind::Releasing => Belief::Releasing,
        }
    }

    fn owned_node(&self) -> Option<&str> {
        self.node.as_deref()
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
        Some(RandomRecipe {
            node: self.node.as_deref().map(|n| r.path(n)),
            pred: self.pred.as_deref().map(|n| r.path(n)),
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
        Some(RandomRecipe {
            node: self.node.as_deref().map(|n| r.path(n)),
            seq: self.seq.map(|s| r.seq(s)),
            pred: self.pred.as_deref().map(|n| r.path(n)),
            ..self.clone()
        })
    }

    fn renumber_token(&self, token: i64, n: &Numbers) -> i64 {
        match token {
            -1 => -1,
            t => n.seq(t),
        }
    }
}
