//! The oracle's own predicates, each written from its definition (quoted in its doc comment).
//! Nothing here calls the production property code (`World::belief_exclusion`, `zk_holders`,
//! `quiescent`, `orphans`, `waiting`, `deadlocked`, `Client::is_waiting`, ...): only the state's
//! public fields, `World::steps`, `Recipe::belief`/`mode`/`owned_node(s)` and `Mode::compatible`.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::rc::Rc;
use zklab_model::world::{Client, Resource};
use zklab_model::{Belief, ClientId, FaultKind, Input, Mode, Recipe, Response, ServerEvent, Step, World};

pub const BELIEF_EXCLUSION: &str = "belief_exclusion";
pub const ZK_EXCLUSION: &str = "zk_exclusion";
pub const NO_ORPHANS: &str = "no_orphans";
pub const FENCED_EXCLUSION: &str = "fenced_exclusion";
pub const NO_HERD: &str = "no_herd";
pub const EVENTUAL_ACQUIRE: &str = "eventual_acquire";
pub const STALE_HOLDER: &str = "stale_holder";
pub const FENCING_AVAILABLE: &str = "fencing_available";
pub const BARRIER_WAITS: &str = "barrier_waits";
pub const TAKEN_ONCE: &str = "taken_at_most_once";

/// Every property the oracle judges that applies to every world (the `reached:*` items, and a
/// barrier's and a queue's own, aside).
pub const PROPERTIES: [&str; 8] = [
    BELIEF_EXCLUSION,
    ZK_EXCLUSION,
    NO_ORPHANS,
    FENCED_EXCLUSION,
    NO_HERD,
    EVENTUAL_ACQUIRE,
    STALE_HOLDER,
    FENCING_AVAILABLE,
];

/// "A client *holds* when it is not crashed and `recipe.belief()` is `Belief::Holding{..}`."
///
/// A crashed process's belief counts for nothing: what its recipe last believed died with it,
/// so every property that speaks of holders (`belief_exclusion`, `zk_exclusion`,
/// `stale_holder`, `reached:shared-hold`, the holders of `eventual_acquire`'s cycles, the
/// positions of `fenced_exclusion`) judges live processes only. Its node and session are
/// ZooKeeper's and outlive it (see `orphan_nodes`, which credits no crashed owner).
pub fn holds<R: Recipe>(c: &Client<R>) -> bool {
    !c.crashed && matches!(c.recipe.belief(), Belief::Holding { .. })
}

/// "A client *waits* when it is not crashed and its belief is `Belief::Acquiring`."
pub fn waits<R: Recipe>(c: &Client<R>) -> bool {
    !c.crashed && c.recipe.belief() == Belief::Acquiring
}

/// No non-fault step is enabled: "only faults, or nothing, can happen". A fault step is one
/// for which `Step::is_fault()` holds (`Step::Fault`, `Step::Lossy`, `Step::Server`).
pub fn only_faults_possible<R: Recipe>(w: &World<R>) -> bool {
    w.steps().iter().all(|s| s.is_fault())
}

/// `belief_exclusion` (safety, judged in every reachable state): "the modes (`recipe.mode()`)
/// of all clients that hold (live clients only, see `holds`) are compatible
/// (`Mode::compatible`)."
pub fn belief_exclusion<R: Recipe>(w: &World<R>) -> bool {
    let modes: Vec<Mode> = w.clients.iter().filter(|c| holds(c)).map(|c| c.recipe.mode()).collect();
    Mode::compatible(&modes)
}

/// The holders ZooKeeper agrees with: "[live] holder whose current session (`client.session`) is alive
/// on the server, whose `owned_node()` exists in the server's tree and whose node's ephemeral
/// owner is that session."
pub fn zk_agrees<R: Recipe>(w: &World<R>, c: &Client<R>) -> bool {
    holds(c)
        && w.server.is_alive(c.session)
        && match c.recipe.owned_node() {
            None => false,
            Some(path) => w.server.tree().get(path).is_some_and(|node| node.owner == Some(c.session)),
        }
}

/// `zk_exclusion` (safety): "the same [the modes of all clients that hold are compatible],
/// restricted to the holders that ZooKeeper agrees with" (see `zk_agrees`).
pub fn zk_exclusion<R: Recipe>(w: &World<R>) -> bool {
    let modes: Vec<Mode> = w.clients.iter().filter(|c| zk_agrees(w, c)).map(|c| c.recipe.mode()).collect();
    Mode::compatible(&modes)
}

/// The clients that break `stale_holder`: those that hold (not crashed and
/// `Belief::Holding{..}`; a `Belief::Suspended{..}` client does not hold, nor does a crashed
/// one, whatever it last believed) and that ZooKeeper does not agree with (see
/// `zk_agrees`). A holder that names no node (`owned_node()` is None) is one of them: ZooKeeper
/// cannot agree with it.
pub fn stale_holders<R: Recipe>(w: &World<R>) -> Vec<ClientId> {
    (0..w.clients.len())
        .filter(|&i| holds(&w.clients[i]) && !zk_agrees(w, &w.clients[i]))
        .map(|i| i as ClientId)
        .collect()
}

/// `stale_holder` (safety, judged in every reachable state): "no [live] client believes it holds
/// (`Belief::Holding{..}`; `Belief::Suspended{..}` is not holding) while ZooKeeper disagrees: in
/// every reachable state, every live client whose belief is `Holding` has a live session
/// (`server.is_alive(client.session)`), and the node it believes it owns
/// (`recipe.owned_node()`) exists in the server's tree and its ephemeral owner is that
/// session." True when the property holds in `w` (see `stale_holders`).
pub fn stale_holder<R: Recipe>(w: &World<R>) -> bool {
    stale_holders(w).is_empty()
}

/// "At or below the lock path (`config().lock_path`, at any depth)": the lock path itself or a
/// path that continues it with `/`.
pub fn at_or_below(lock: &str, path: &str) -> bool {
    path.strip_prefix(lock).is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// The ephemeral nodes at or below the lock path that break `no_orphans`: those without "an
/// owner client that is not crashed, whose current session equals the node's owner, and whose
/// `owned_nodes()` contains the node's path."
pub fn orphan_nodes<R: Recipe>(w: &World<R>) -> Vec<String> {
    let lock = &w.config().lock_path;
    w.server
        .tree()
        .iter()
        .filter(|(path, node)| node.owner.is_some() && at_or_below(lock, path))
        .filter(|(path, node)| {
            !w.clients
                .iter()
                .any(|c| !c.crashed && Some(c.session) == node.owner && c.recipe.owned_nodes().contains(&path.as_str()))
        })
        .map(|(path, _)| path.clone())
        .collect()
}

/// `no_orphans` (safety): "in every reachable state in which no non-fault step is enabled (only
/// faults, or nothing, can happen), every ephemeral node at or below the lock path has an owner
/// client that is not crashed, whose current session equals the node's owner, and whose
/// `owned_nodes()` contains the node's path."
pub fn no_orphans<R: Recipe>(w: &World<R>) -> bool {
    !only_faults_possible(w) || orphan_nodes(w).is_empty()
}

/// `barrier_waits` (safety, judged in every reachable state where some client's mode is a
/// barrier's and rounds are bounded): "every live client that holds in `Mode::Barrier {
/// parties }` does so in a state where at least `parties` clients (crashed ones too) have been
/// handed an acquire: their `rounds_left` is below the world's `config().rounds`."
pub fn barrier_waits<R: Recipe>(w: &World<R>) -> bool {
    if w.config().rounds == zklab_model::UNBOUNDED_ROUNDS {
        // Not judged: who asked to enter is not counted with unbounded rounds.
        return true;
    }
    let entered = w.clients.iter().filter(|c| c.rounds_left < w.config().rounds).count();
    w.clients.iter().filter(|c| holds(c)).all(|c| match c.recipe.mode() {
        Mode::Barrier { parties } => entered >= usize::from(parties),
        _ => true,
    })
}

/// `taken_at_most_once` (safety, judged on steps where some client's mode is a queue
/// consumer's): "no `Step::Write(i)` is taken by a live client holding in `Mode::Take` with a
/// token that is already among the items the resource records as processed
/// (`resource.taken`) in the state the step leaves." A violation is the state after that step.
pub fn takes_again<R: Recipe>(before: &World<R>, step: Step) -> bool {
    let Step::Write(i) = step else { return false };
    let c = &before.clients[i as usize];
    match (c.recipe.mode(), c.recipe.belief()) {
        (Mode::Take, Belief::Holding { token }) => holds(c) && before.resource.taken.contains(&token),
        _ => false,
    }
}

/// `eventual_acquire`, case (a): "a reachable state where some client waits has no non-fault
/// step enabled (a deadlock)".
pub fn deadlock<R: Recipe>(w: &World<R>) -> bool {
    w.clients.iter().any(|c| waits(c)) && only_faults_possible(w)
}

/// The items of `reached:*` that hold in `w`:
/// - `reached:<fault>` for each `FaultKind` k whose budget `config().faults.get(k) > 0`: the
///   fault happened (the `coverage` fields for loss-before-apply (`lost_before_apply`),
///   loss-after-apply (`lost_after_apply`), expire (`expired`) and lagging-read
///   (`lagged_read`); `faults_used[k.index()] > 0` for the rest);
/// - `reached:handoff` (`coverage.handoff`);
/// - `reached:predecessor-gone`: judged on steps, not here (see `met_on_step`);
/// - `reached:stale-write-refused` (`resource.refused_stale`);
/// - `reached:shared-hold` (two or more live clients hold at once).
pub fn reached_items<R: Recipe>(w: &World<R>) -> Vec<String> {
    let mut items = Vec::new();
    for kind in FaultKind::ALL {
        if w.config().faults.get(kind) == 0 {
            continue;
        }
        let happened = match kind {
            FaultKind::LossBeforeApply => w.coverage.lost_before_apply,
            FaultKind::LossAfterApply => w.coverage.lost_after_apply,
            FaultKind::Expire => w.coverage.expired,
            FaultKind::LaggingRead => w.coverage.lagged_read,
            _ => w.faults_used[kind.index()] > 0,
        };
        if happened {
            items.push(format!("reached:{kind}"));
        }
    }
    if w.coverage.handoff {
        items.push("reached:handoff".to_string());
    }
    if w.resource.refused_stale {
        items.push("reached:stale-write-refused".to_string());
    }
    if w.clients.iter().filter(|c| holds(c)).count() >= 2 {
        items.push("reached:shared-hold".to_string());
    }
    items
}

/// The items of `reached:*` that the step into `after` met: `reached:predecessor-gone` when the
/// model says the step's exists or getData with a watch, below the lock, found no node
/// (`World::predecessor_went`). The fact is the step's, not the state's, so it is judged on
/// every step, into new worlds and known ones.
pub fn met_on_step<R: Recipe>(after: &World<R>) -> Vec<String> {
    match after.predecessor_went() {
        true => vec!["reached:predecessor-gone".to_string()],
        false => Vec::new(),
    }
}

/// The client taking `step`, if any: "`Step::Expire(_)` and `Step::Server(_)` (the container
/// reaper, an operator's delete) are the server's own events and have no acting client."
pub fn acting_client(step: Step) -> Option<usize> {
    match step {
        Step::Expire(_) | Step::Server(_) => None,
        _ => step.client().map(|c| c as usize),
    }
}

/// What `step` appended at the back of a queue that was `before` and is `after`. For a client
/// that is not taking the step the queue can only grow at its back; anything else means the
/// model no longer fits the definition, which the oracle reports by panicking.
fn appended<'a>(before: &VecDeque<Input>, after: &'a VecDeque<Input>, client: usize, step: Step) -> Vec<&'a Input> {
    let keeps_prefix = after.len() >= before.len() && before.iter().zip(after.iter()).all(|(b, a)| b == a);
    assert!(keeps_prefix, "oracle: step {step} changed the front of client {client}'s inbound queue");
    after.iter().skip(before.len()).collect()
}

/// The clients a step herds. `no_herd` (transition, judged on every step, into new and known
/// states): "the step appends watch notifications (`Input::Watch(..)` entries at the back of a
/// client's `inbound`) for two or more distinct clients that, before the step, waited and asked
/// for `Mode::Exclusive` or `Mode::Write`; the client taking the step does not count, except that
/// `Step::Expire(_)` and `Step::Server(ServerEvent::ReapParent)` are the server's own events and
/// have no acting client." The step violates `no_herd` when this returns two or more clients.
pub fn herd<R: Recipe>(before: &World<R>, step: Step, after: &World<R>) -> Vec<ClientId> {
    let actor = acting_client(step);
    (0..before.clients.len())
        .filter(|&i| Some(i) != actor)
        .filter(|&i| {
            let c = &before.clients[i];
            waits(c) && matches!(c.recipe.mode(), Mode::Exclusive | Mode::Write)
        })
        .filter(|&i| {
            appended(&before.clients[i].inbound, &after.clients[i].inbound, i, step)
                .iter()
                .any(|input| matches!(input, Input::Watch(_)))
        })
        .map(|i| i as ClientId)
        .collect()
}

/// Whether the resource accepts an access, by the rule of `model/src/world/resource.rs`: a write
/// is accepted unless its token is below the largest token accepted so far (`max_token`), a read
/// unless its token is below the largest token of an accepted write (`max_write_token`). The
/// rule is read off the resource before the access and confirmed against the resource after
/// it (a refusal sets `refused_stale` and changes no token; an acceptance records the token):
/// if the two disagree, the model has changed under the oracle, which says so by panicking.
fn accepted(before: &Resource, after: &Resource, mode: Mode, token: i64) -> bool {
    let accepted = match mode {
        Mode::Read => before.max_write_token.is_none_or(|max| token >= max),
        _ => before.max_token.is_none_or(|max| token >= max),
    };
    let consistent = match (accepted, mode) {
        (false, _) => {
            after.refused_stale
                && after.max_token == before.max_token
                && after.max_write_token == before.max_write_token
        }
        (true, Mode::Read) => {
            after.max_token == Some(before.max_token.map_or(token, |m| m.max(token)))
                && after.max_write_token == before.max_write_token
        }
        (true, _) => after.max_token == Some(token) && after.max_write_token == Some(token),
    };
    assert!(
        consistent,
        "oracle: the resource's acceptance of a {mode:?} access with token {token} does not fit the rule"
    );
    accepted
}

/// Holders that share the resource without a fencing token: a semaphore's leases, a barrier's
/// parties past it, a queue's consumers (each processes its own item).
fn unfenced(mode: Mode) -> bool {
    matches!(mode, Mode::Lease { .. } | Mode::Barrier { .. } | Mode::Take)
}

/// Whether `step`, from `before` to `after`, breaks `fencing_available` (safety,
/// path-dependent): "the resource never refuses a holder that ZooKeeper agrees with: whenever a
/// client takes a `Step::Write` while it believes `Holding`, and (in the state before the step)
/// its session is alive and the node it believes it owns exists and is owned by that session,
/// the resource accepts its token." Holders in `Mode::Read` read, other fenced modes write;
/// `Mode::Lease{..}`, `Mode::Barrier{..}` and `Mode::Take` holders are not fenced and always accepted. The resource's acceptance is
/// decided by `accepted`. A violation makes the state after the step, and every state reached
/// from it along that path, violate the property (see `Ghost::refused_agreed`).
pub fn refuses_agreed_holder<R: Recipe>(before: &World<R>, step: Step, after: &World<R>) -> bool {
    let Step::Write(client) = step else { return false };
    let c = &before.clients[client as usize];
    let Belief::Holding { token } = c.recipe.belief() else { return false };
    let mode = c.recipe.mode();
    if unfenced(mode) || !zk_agrees(before, c) {
        return false;
    }
    !accepted(&before.resource, &after.resource, mode, token)
}

/// What `fenced_exclusion` and `fencing_available` (see `refuses_agreed_holder`) need of a path
/// beyond the world it reaches (ghost state, kept next to the world in the oracle's search
/// states):
///
/// `fenced_exclusion` (safety, path-dependent): "every hold has a position in ZooKeeper's lock
/// order: when a client comes to hold (a step after which it holds and before which it did not
/// hold and was not `Suspended`), its position is the creation zxid (czxid) of the node
/// `owned_node()` names, as the server assigned it when that node was created by that client's
/// session — that node may be gone by then (a stale belief) [...]; if the recipe names no node
/// (`owned_node()` is None), the position is the server's zxid (`server.zxid()`) right after the
/// step. Every `Write` step of a holder is an access to the protected resource (`Mode::Read`
/// holders read, other fenced modes write; `Mode::Lease`, `Mode::Barrier` and `Mode::Take`
/// holders are not fenced: ignore them);
/// the access is accepted iff the World's resource accepted it. Violation: an accepted write
/// whose position is lower than the position of an earlier accepted access (read or write), or
/// an accepted read whose position is lower than an earlier accepted write's. (A second hold by
/// the same client after a downgrade keeps its position.)"
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Ghost {
    /// Per client, every node its steps created (any of its sessions), with the creation zxid
    /// of its latest creation (the largest: zxids only grow). Shared between search states
    /// until it changes (equality and hashing are by content).
    pub created: Vec<Rc<BTreeMap<String, i64>>>,
    /// Per client, the position of its current hold: set when it comes to hold, kept while it
    /// holds or is suspended, forgotten otherwise.
    pub positions: Vec<Option<i64>>,
    /// The highest position of an accepted access (read or write).
    pub max_access: Option<i64>,
    /// The highest position of an accepted write.
    pub max_write: Option<i64>,
    /// `fencing_available` is broken on the path: some step of it refused a holder that
    /// ZooKeeper agreed with (see `refuses_agreed_holder`). Set on that step, never cleared.
    pub refused_agreed: bool,
}

impl Ghost {
    pub fn new(clients: usize) -> Self {
        Ghost {
            created: (0..clients).map(|_| Rc::new(BTreeMap::new())).collect(),
            positions: vec![None; clients],
            max_access: None,
            max_write: None,
            refused_agreed: false,
        }
    }

    /// How many creations the ghost remembers (what it costs to keep).
    pub fn size(&self) -> usize {
        self.created.iter().map(|m| m.len()).sum()
    }

    fn record(&mut self, client: usize, path: &str, czxid: i64) {
        if self.created[client].get(path).is_some_and(|&known| known >= czxid) {
            return;
        }
        Rc::make_mut(&mut self.created[client]).insert(path.to_string(), czxid);
    }

    /// Follows `step` from `before` to `after`; returns a description of the violation of
    /// `fenced_exclusion` if the step is an accepted access out of lock order, and sets
    /// `refused_agreed` if the step breaks `fencing_available`.
    pub fn advance<R: Recipe>(&mut self, before: &World<R>, step: Step, after: &World<R>) -> Option<String> {
        if refuses_agreed_holder(before, step, after) {
            self.refused_agreed = true;
        }
        // 1. The nodes the step created. Only the client taking a step sends requests in it (the
        // server applies a request as it is sent), so every node that appears in the tree (a new
        // path, or a path with a new czxid) is that client's, and so is every Created reply in
        // its queue. A node created and deleted within the step shows only in its reply, a node
        // whose reply was lost only in the tree.
        if let Some(actor) = acting_client(step) {
            for (path, node) in after.server.tree().iter() {
                if before.server.tree().get(path).is_none_or(|old| old.czxid != node.czxid) {
                    self.record(actor, path, node.czxid);
                }
            }
            for input in &after.clients[actor].inbound {
                if let Input::Reply { result: Ok(Response::Created { path, stat }), .. } = input {
                    self.record(actor, path, stat.czxid);
                }
            }
        }
        // 2. Positions of holds.
        // A crashed client holds nothing (see `holds`): its position is forgotten as it dies,
        // and it never takes another step.
        for i in 0..after.clients.len() {
            let was = before.clients[i].recipe.belief();
            let now = match after.clients[i].crashed {
                true => Belief::Idle,
                false => after.clients[i].recipe.belief(),
            };
            let holds_now = matches!(now, Belief::Holding { .. });
            let comes_to_hold = holds_now && !matches!(was, Belief::Holding { .. } | Belief::Suspended { .. });
            // A client that turns from suspended to holding without a position (it was
            // suspended without having held: no recipe does that) is placed as a new hold.
            if comes_to_hold || (holds_now && self.positions[i].is_none()) {
                let c = &after.clients[i];
                let position = match c.recipe.owned_node() {
                    None => after.server.zxid(),
                    // A node the client never created: placed by when it came to believe.
                    Some(path) => self.created[i].get(path).copied().unwrap_or(after.server.zxid()),
                };
                self.positions[i] = Some(position);
            }
            if !matches!(now, Belief::Holding { .. } | Belief::Suspended { .. }) {
                self.positions[i] = None;
            }
        }
        // 3. The access to the resource.
        let Step::Write(client) = step else { return None };
        let i = client as usize;
        let c = &before.clients[i];
        let Belief::Holding { token } = c.recipe.belief() else { panic!("oracle: {step} taken by a non-holder") };
        let mode = c.recipe.mode();
        if unfenced(mode) {
            return None;
        }
        if !accepted(&before.resource, &after.resource, mode, token) {
            return None;
        }
        let position = self.positions[i].expect("a holder has a position");
        let violation = match mode {
            Mode::Read => self
                .max_write
                .filter(|&m| position < m)
                .map(|m| format!("c{i} read at position {position} after a write at position {m} was accepted")),
            _ => self
                .max_access
                .filter(|&m| position < m)
                .map(|m| format!("c{i} wrote at position {position} after an access at position {m} was accepted")),
        };
        self.max_access = Some(self.max_access.map_or(position, |m| m.max(position)));
        if mode != Mode::Read {
            self.max_write = Some(self.max_write.map_or(position, |m| m.max(position)));
        }
        violation
    }
}

/// The set of non-fault steps in `steps`.
pub fn non_fault(steps: &[Step]) -> BTreeSet<Step> {
    steps.iter().copied().filter(|s| !s.is_fault()).collect()
}
