//! Writing your own lock recipe and proving it with zklab, in one file.
//!
//! This lock waits on its predecessor with getData instead of exists (as Curator does): getData
//! on a node that is already gone fails NoNode and arms nothing, so the recipe lists again and
//! no watch is left dangling. It does not recover from ConnectionLoss, and the checker shows
//! what that costs. Run the proofs with `cargo test --example getdata_lock`, or see the
//! verdicts with `cargo run --release --example getdata_lock`. Given arguments, the example is
//! the zklab command line with this recipe beside the catalogue's:
//! `cargo run --release --example getdata_lock -- check --recipe getdata-lock --clients 3`
//! (or `simulate`, `explore`, `replay` of its traces, mixed worlds with `--recipe
//! getdata-lock,standard`).

use std::process::ExitCode;
use zklab::check::check;
use zklab::model::{
    Belief, CreateMode, Ctx, EventType, FaultKind, Input, Recipe, Request, Response, SessionState, ZkError,
};
use zklab::recipes::{AnyRecipe, Entry};

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Phase {
    Idle,
    Creating,
    Listing,
    /// getData(predecessor, watch) is in flight.
    Checking(String),
    Waiting(String),
    Holding,
    Releasing,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct GetDataLock {
    lock: String,
    phase: Phase,
    node: Option<String>,
}

impl GetDataLock {
    pub fn new(lock: &str) -> Self {
        GetDataLock { lock: lock.to_string(), phase: Phase::Idle, node: None }
    }

    fn list(&mut self, out: &mut Vec<Request>) {
        self.phase = Phase::Listing;
        out.push(Request::get_children(&self.lock, false));
    }
}

impl Recipe for GetDataLock {
    fn name(&self) -> String {
        "getdata-lock".to_string()
    }

    fn handle(&mut self, _: &Ctx, input: Input, out: &mut Vec<Request>) {
        match (&self.phase, input) {
            (Phase::Idle, Input::Acquire) => {
                self.phase = Phase::Creating;
                out.push(Request::create(&format!("{}/n-", self.lock), CreateMode::EphemeralSequential));
            }
            (Phase::Creating, Input::Reply { result: Ok(Response::Created { path, .. }), .. }) => {
                self.node = Some(path);
                self.list(out);
            }
            (Phase::Listing, Input::Reply { result: Ok(Response::Children { children, .. }), .. }) => {
                // Every name is `n-` and a sequence number, so name order is queue order. The
                // listing is shared with every client that read the same children: sort a copy.
                let mut children = children.to_vec();
                children.sort();
                let mine = self.node.as_deref().and_then(|n| n.rsplit('/').next()).unwrap_or_default();
                match children.iter().position(|c| c == mine) {
                    Some(0) => self.phase = Phase::Holding,
                    Some(i) => {
                        let predecessor = format!("{}/{}", self.lock, children[i - 1]);
                        out.push(Request::get_data(&predecessor, true));
                        self.phase = Phase::Checking(predecessor);
                    }
                    None => self.phase = Phase::Idle,
                }
            }
            (Phase::Checking(p), Input::Reply { result: Ok(Response::Data { .. }), .. }) => {
                self.phase = Phase::Waiting(p.clone())
            }
            (Phase::Checking(_), Input::Reply { result: Err(ZkError::NoNode), .. }) => self.list(out),
            (Phase::Waiting(p), Input::Watch(e)) if &e.path == p && e.kind == EventType::NodeDeleted => self.list(out),
            (Phase::Holding, Input::Release) => {
                self.phase = Phase::Releasing;
                out.push(Request::delete(self.node.as_deref().expect("a holder has a node")));
            }
            (Phase::Releasing, Input::Reply { .. }) | (_, Input::State(SessionState::Expired)) => {
                self.phase = Phase::Idle;
                self.node = None;
            }
            // No recovery: after a ConnectionLoss the client waits for a reply that never comes.
            _ => {}
        }
    }

    fn belief(&self) -> Belief {
        match self.phase {
            Phase::Idle => Belief::Idle,
            Phase::Holding => Belief::Holding { token: 0 },
            Phase::Releasing => Belief::Releasing,
            _ => Belief::Acquiring,
        }
    }

    fn owned_node(&self) -> Option<&str> {
        self.node.as_deref()
    }

    fn waits_on_one_node(&self) -> bool {
        true
    }
}

/// The recipe as the command line names it.
const RECIPES: &[Entry] = &[Entry::new(
    "getdata-lock",
    "waits on its predecessor with getData (no dangling watch); no recovery from ConnectionLoss",
    |lock| AnyRecipe::custom(GetDataLock::new(lock)),
)];

fn main() -> ExitCode {
    if std::env::args().len() > 1 {
        return zklab::cli::main_with(RECIPES);
    }
    for faults in [&[][..], &[FaultKind::LossAfterApply][..]] {
        let checked = check(GetDataLock::new).clients(3).faults(faults).run();
        println!("getdata-lock x3, faults {faults:?}: {} unique states", checked.outcome.unique_states);
        for verdict in &checked.outcome.verdicts {
            println!("  {:<28} {:?}", verdict.name(), verdict.status);
        }
    }
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;
    use zklab::model::Property;

    #[test]
    fn proven_for_three_clients_without_faults() {
        // Also shows the predecessor vanishing before getData: `reached:predecessor-gone`.
        check(GetDataLock::new).clients(3).run().assert_proven();
    }

    #[test]
    fn a_lost_create_reply_leaves_a_client_waiting_forever() {
        // A run stops at its first violation, which may be another property's, unless asked
        // to judge every property.
        let checked =
            check(GetDataLock::new).clients(2).faults(&[FaultKind::LossAfterApply]).explore_everything().run();
        let cx = checked.assert_violates(Property::EventualAcquire);
        assert!(cx.steps.iter().any(|s| s.is_fault()));
        let timeline = checked.timeline(Property::EventualAcquire).unwrap();
        assert!(timeline.contains("ConnectionLoss"), "{timeline}");
    }
}
