//! Symmetry reduction for the checker: a state's representative among the states that differ
//! from it only in which client plays which role. Clients are put in an order computed from what
//! each one is doing, never from its index, and then renamed to match (see `crate::reduce::symmetry`).
//! Equivalent states usually get the same representative; when two roles look alike to the order
//! they keep their relative order, which can leave two representatives of one class. That costs
//! some reduction, never soundness: every representative is equivalent to the state it stands for.

use crate::cache::rewritten;
use crate::recipe::{Belief, Recipe};
use crate::reduce::rewrite::Rewrite;
use crate::world::derived::Derived;
use crate::world::{Client, Clients, StepOutputs, World};
use crate::{ClientId, Renamer, Renaming, SessionId};
use std::sync::Arc;

impl<R: Recipe> World<R> {
    /// The representative of this state and the renaming that turns this state into it, or
    /// `None` when the clients are not interchangeable (different recipes, or a recipe that does
    /// not support renaming).
    pub fn canonical(&self) -> Option<(World<R>, Renaming)> {
        let renaming = self.canonical_renaming()?;
        let renamed = self.renamed(&renaming)?;
        Some((renamed, renaming))
    }

    /// `canonical`, without a copy when the state is its own representative; the state itself
    /// and no renaming when the clients are not interchangeable.
    pub fn into_canonical(self) -> (World<R>, Option<Renaming>) {
        match self.canonical_renaming() {
            Some(renaming) if renaming.is_identity() => (self, Some(renaming)),
            Some(renaming) => match self.renamed(&renaming) {
                Some(world) => (world, Some(renaming)),
                None => (self, None),
            },
            None => (self, None),
        }
    }

    /// The renaming that puts the clients in the order of their roles, if they are
    /// interchangeable.
    fn canonical_renaming(&self) -> Option<Renaming> {
        if !self.derived.interchangeable {
            return None;
        }
        let mut order: Vec<ClientId> = (0..self.clients.len() as ClientId).collect();
        order.sort_by_cached_key(|&i| self.role(i as usize));
        let mut to = vec![0; order.len()];
        for (slot, &i) in order.iter().enumerate() {
            to[i as usize] = slot as ClientId;
        }
        let renaming = Renaming::new(to, self.derived.first_session);
        Some(renaming)
    }

    /// Whether the clients of a new world are interchangeable: they all run one recipe, and it
    /// supports renaming. Decided once, since neither changes during a run.
    pub(crate) fn interchangeable(clients: &Clients<R>, lock_path: &str, first_session: SessionId) -> bool {
        let Some(first) = clients.first().map(|c| &c.recipe) else { return false };
        let name = first.name();
        let identity = Renaming::new((0..clients.len() as ClientId).collect(), first_session);
        let unchanged = |n: &str| n.to_string();
        let probe =
            Renamer { renaming: &identity, lock_path, name: &unchanged, order: crate::ChildrenOrder::default() };
        clients.iter().all(|c| c.recipe.name() == name && c.recipe.renamed(&probe).is_some())
    }

    /// This state with the clients' roles swapped as `renaming` says.
    pub fn renamed(&self, renaming: &Renaming) -> Option<World<R>> {
        let first = &self.clients.first()?.recipe;
        let name = |n: &str| first.rename_name(n, renaming);
        let renamer = Renamer {
            renaming,
            lock_path: &self.config().lock_path,
            name: &name,
            order: self.server.config().children_order,
        };
        let mut clients: Vec<Option<Arc<Client<R>>>> = vec![None; self.clients.len()];
        for (i, client) in self.clients.iter().enumerate() {
            // As this thread renamed it before with the same renaming, if it did (see
            // `cache::rewritten`).
            let shared = self.clients.shared(i).expect("a client at each index");
            let renamed = rewritten::renamed(shared, renaming, || client.renamed(&renamer).map(Arc::new))?;
            clients[renaming.client(i as ClientId) as usize] = Some(renamed);
        }
        let clients: Clients<R> = clients.into_iter().map(|c| c.expect("a renaming is a permutation")).collect();
        let derived = Derived {
            config: self.derived.config.clone(),
            first_session: self.derived.first_session,
            interchangeable: self.derived.interchangeable,
            one_recipe: self.derived.one_recipe,
            by_session: World::index_sessions(&clients),
            outputs: StepOutputs { predecessor_went: self.derived.outputs.predecessor_went, ..StepOutputs::default() },
            acting: None,
        };
        Some(World {
            server: self.server.renamed(&renamer),
            clients,
            faults_used: self.faults_used,
            resource: self.resource.clone(),
            grants: self.grants,
            coverage: self.coverage,
            derived,
        })
    }

    /// What client `i` is doing, in terms that do not depend on which client it is. A lock
    /// node's creation zxid comes first: it tells apart every client that has created one.
    fn role(&self, i: usize) -> impl Ord {
        let c = &self.clients[i];
        let belief = match c.belief() {
            Belief::Idle => (0, 0),
            Belief::Acquiring => (1, 0),
            Belief::Holding { token } => (2, token),
            Belief::Suspended { token } => (3, token),
            Belief::Releasing => (4, 0),
        };
        let later_session = if self.is_first_session(c) { 0 } else { c.session.0 };
        (
            c.created.first().map_or(i64::MAX, |(_, czxid)| *czxid),
            c.grant,
            belief,
            (c.link, c.paused, c.crashed, c.rounds_left, c.wrote, c.noticed_disconnect),
            (c.inbound.len(), c.outbound.len(), c.watches.len(), c.armed.map(|k| k.kind().index()), c.drop_zxid),
            later_session,
        )
    }

    /// Checks a recipe's claim to support symmetry on this state: renaming the clients must
    /// commute with each of `successors` (steps from this state with the states they lead to)
    /// and offer the renamed steps, under every transposition of two clients, so that each
    /// client is checked taken to every other place (two renamings that merely generate every
    /// permutation are not enough: see the loop). A recipe that orders contenders by client
    /// number, say, breaks it on the first state where the order decides something. Says which
    /// step breaks it.
    pub fn renaming_commutes(&self, successors: &[(crate::world::Step, World<R>)]) -> Result<(), String> {
        let n = self.clients.len() as ClientId;
        if !self.derived.interchangeable || n < 2 {
            return Ok(());
        }
        // Every transposition, not only two that generate the group: what a client's recipe does
        // once renamed depends on where the renaming takes it (its number and session), and a
        // state can commute with a swap of the first two clients and a turn while one of its
        // orbit, met in no reduced run, does not (a recipe comparing its session with a zxid,
        // found by the differential test). Each client is taken to every other place.
        let transpositions: Vec<Vec<ClientId>> = (0..n)
            .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
            .map(|(i, j)| {
                let mut to: Vec<ClientId> = (0..n).collect();
                to.swap(i as usize, j as usize);
                to
            })
            .collect();
        let steps = self.steps();
        for to in transpositions {
            let renaming = Renaming::new(to, self.derived.first_session);
            let renamed = self.renamed(&renaming).ok_or("the recipe stops supporting renaming")?;
            let mut expected: Vec<_> = steps.iter().map(|s| s.renamed_by(|c| renaming.client(c))).collect();
            let mut offered = renamed.steps();
            expected.sort();
            offered.sort();
            if offered != expected {
                return Err("renamed, a state offers other steps than the renamed ones".to_string());
            }
            for (step, next) in successors {
                let mut renamed_next = renamed.clone();
                let moved = renamed_next.apply(step.renamed_by(|c| renaming.client(c)));
                if moved.is_err() || next.renamed(&renaming).as_ref() != Some(&renamed_next) {
                    return Err(format!("step `{step}` leads elsewhere once the clients are renamed"));
                }
            }
        }
        Ok(())
    }

    fn is_first_session(&self, c: &Client<R>) -> bool {
        c.session.0.checked_sub(self.derived.first_session.0).is_some_and(|k| (k as usize) < self.clients.len())
    }
}

impl<R: Recipe> Client<R> {
    fn renamed(&self, r: &Renamer) -> Option<Client<R>> {
        Some(Client {
            recipe: self.recipe.renamed(r)?,
            session: r.session(self.session),
            link: self.link,
            paused: self.paused,
            crashed: self.crashed,
            outbound: self.outbound.iter().map(|q| r.request(q)).collect(),
            inbound: self.inbound.iter().map(|m| r.input(m)).collect(),
            watches: self.watches.renamed(r),
            drop_zxid: self.drop_zxid,
            rounds_left: self.rounds_left,
            noticed_disconnect: self.noticed_disconnect,
            wrote: self.wrote,
            grant: self.grant,
            created: self.created.iter().map(|(path, czxid)| (r.path(path), *czxid)).collect(),
            armed: self.armed,
            lagging: self.lagging,
            handed: self.handed_renamed(r)?,
            cache: crate::cache::client::ClientCache {
                numbers: self.cache.numbers.carried(|n| n.as_ref().map(|n| n.renamed(r.renaming))),
                ..Default::default()
            },
        })
    }
}
