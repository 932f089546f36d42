//! The oracle (tests/oracle) against the verdicts of tests/manifest.json on small entries, with
//! every counterexample it gives replayed by its own predicates. Only verdicts compare: the
//! manifest's state counts are of the production checker's merged states.

use crate::oracle;

use serde_json::Value;
use std::time::Instant;
use zklab_model::{
    Belief, ClientBehaviour, CreateMode, Ctx, FaultBudget, FaultKind, Input, Mode, Recipe, Request, Response,
    ServerEvent, Step, World, WorldConfig,
};
use zklab_recipes::AnyRecipe;

/// One manifest entry, as the oracle needs it.
struct Entry {
    label: String,
    world: World<AnyRecipe>,
    expect: Vec<(String, String)>,
}

fn budget(list: &str) -> FaultBudget {
    let mut budget = FaultBudget::none();
    for item in list.split(',').map(str::trim).filter(|s| !s.is_empty() && *s != "none") {
        let (name, times) = item.split_once('=').unwrap_or((item, "1"));
        let kind = FaultKind::parse(name).unwrap_or_else(|| panic!("unknown fault {name}"));
        budget.0[kind.index()] = times.parse().unwrap();
    }
    budget
}

fn world(recipe: &str, clients: usize, config: WorldConfig) -> World<AnyRecipe> {
    let names: Vec<&str> = recipe.split(',').collect();
    let recipes = (0..clients)
        .map(|i| zklab_recipes::build(if names.len() == 1 { names[0] } else { names[i] }, &config.lock_path).unwrap())
        .collect();
    World::new(config, recipes)
}

fn manifest() -> Vec<Entry> {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/manifest.json")).unwrap();
    let manifest: Value = serde_json::from_str(&text).unwrap();
    manifest["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let recipe = e["recipe"].as_str().unwrap();
            let clients = e["clients"].as_u64().unwrap() as usize;
            let faults = e["faults"].as_str().unwrap();
            let client = e["client"].as_str().unwrap();
            let config = WorldConfig {
                faults: budget(faults),
                rounds: e["rounds"].as_u64().unwrap() as u8,
                first_sequence: e["first_sequence"].as_i64().unwrap() as i32,
                client_behaviour: match client {
                    "java" => ClientBehaviour::Java,
                    "kazoo" => ClientBehaviour::Kazoo,
                    other => panic!("unknown client {other}"),
                },
                ..WorldConfig::default()
            };
            let expect = e["expect"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
                .collect();
            Entry {
                label: format!("{recipe} x{clients} faults {faults} {client} first {}", e["first_sequence"]),
                world: world(recipe, clients, config),
                expect,
            }
        })
        .collect()
}

/// Runs the oracle on `entry` and returns every deviation from the manifest, and from the
/// oracle's own replay of its counterexamples.
fn deviations(entry: &Entry, max_states: usize) -> (oracle::Oracle, Vec<String>) {
    let o = oracle::check(entry.world.clone(), max_states);
    let mut out = Vec::new();
    if !o.complete {
        out.push(format!("incomplete after {} search states", o.search_states));
    }
    for (name, expected) in &entry.expect {
        let got = o.status(name);
        if got != expected {
            out.push(format!("{name}: expected {expected}, the oracle says {got}"));
        }
    }
    for (name, steps) in &o.violated {
        let lasso_stem = name == "eventual_acquire" && !o.lasso.is_empty() && {
            let (lasso, start) = &o.lasso[name];
            lasso[..*start] == steps[..]
        };
        if !lasso_stem {
            if let Err(e) = oracle::replays_to_violation(&entry.world, steps, name) {
                out.push(format!("{name}: the counterexample does not replay: {e}"));
            }
        }
    }
    for (name, (steps, start)) in &o.lasso {
        if let Err(e) = oracle::is_fair_lasso(&entry.world, steps, *start) {
            out.push(format!("{name}: the lasso is not fair: {e}"));
        }
    }
    (o, out)
}

/// Manifest entries small enough for the oracle in a few seconds in release mode.
const SMALL: &[&str] = &[
    "wait-on-null x2 faults none java first 0",
    "standard x2 faults none java first 0",
    "container-lock-no-recreate x2 faults reap-parent java first 0",
    "curator-mutex x2 faults none java first 2147483647",
    "sequence-wrap x2 faults none java first 2147483647",
    "standard x2 faults lagging-read java first 0",
    "release-under-connloss x2 faults loss-before-apply java first 0",
    "standard x2 faults loss-after-apply java first 0",
    "client-id-lock-nonode-fatal x2 faults loss-after-apply java first 0",
    "naive x3 faults none java first 0",
    "blind-retry x2 faults loss-after-apply java first 0",
    "watches-not-rearmed x2 faults disconnect kazoo first 0",
    "parent-watch x3 faults none java first 0",
    "standard x2 faults expire,pause java first 0",
];

#[test]
fn the_oracle_agrees_with_the_manifest_on_small_entries() {
    let entries = manifest();
    let mut failures = Vec::new();
    for label in SMALL {
        let entry = entries.iter().find(|e| e.label == *label).unwrap_or_else(|| panic!("no manifest entry {label}"));
        let start = Instant::now();
        let (o, found) = deviations(entry, 3_000_000);
        eprintln!(
            "{label}: {} worlds, {} search states, {:.2}s, violated {:?}{}",
            o.unique_worlds,
            o.search_states,
            start.elapsed().as_secs_f64(),
            o.violated.keys().collect::<Vec<_>>(),
            if o.lasso.is_empty() { "" } else { ", with a fair lasso" }
        );
        failures.extend(found.into_iter().map(|d| format!("{label}: {d}")));
    }
    assert!(failures.is_empty(), "deviations:\n{}", failures.join("\n"));
}

#[test]
fn the_shortest_herds_are_as_short_as_the_production_tests_say() {
    // tests/no_herd.rs: the single-node lock's shortest herd is 8 steps ending with c0's
    // release, the children watch's 5 steps ending with c2's acquire.
    let entries = manifest();
    for (label, length, last) in [
        ("naive x3 faults none java first 0", 8, Step::Release(0)),
        ("parent-watch x3 faults none java first 0", 5, Step::Acquire(2)),
    ] {
        let entry = entries.iter().find(|e| e.label == label).unwrap();
        let o = oracle::check(entry.world.clone(), 1_000_000);
        let herd = &o.violated["no_herd"];
        assert_eq!(herd.len(), length, "{label}: {herd:?}");
        assert_eq!(herd.last(), Some(&last), "{label}");
    }
}

#[test]
fn a_budget_that_runs_out_leaves_the_run_incomplete() {
    let entries = manifest();
    let entry = entries.iter().find(|e| e.label == "standard x2 faults loss-after-apply java first 0").unwrap();
    let o = oracle::check(entry.world.clone(), 100);
    assert!(!o.complete);
    assert_eq!(o.search_states, 100);
    assert_eq!(o.status("eventual_acquire"), "unknown");
    assert_eq!(o.status("reached:predecessor-gone"), "unknown");
}

#[test]
fn a_wrong_lasso_and_a_wrong_counterexample_are_refused() {
    let entries = manifest();
    let entry = entries.iter().find(|e| e.label == "standard x2 faults none java first 0").unwrap();
    let steps = [Step::Acquire(0), Step::Receive(0)];
    assert!(oracle::replays_to_violation(&entry.world, &steps, "belief_exclusion").is_err());
    assert!(oracle::replays_to_violation(&entry.world, &[Step::Write(0)], "belief_exclusion").is_err());
    assert!(oracle::is_fair_lasso(&entry.world, &steps, 1).is_err());
    assert!(oracle::is_fair_lasso(&entry.world, &steps, 2).is_err());
}

/// A toy recipe for cycles (no catalogue recipe has a finite one: a livelock there recreates
/// nodes, so its worlds never repeat without renumbering). A poller waits until `/lock/go`
/// exists, polling with `exists` (no watch) and flipping a bit each time, so that its polling
/// is a cycle of two worlds; a creator creates `/lock/go` (persistent) and holds.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Toy {
    creator: bool,
    flip: bool,
    belief: Belief,
}

const GO: &str = "/lock/go";

impl Toy {
    fn poller() -> Self {
        Toy { creator: false, flip: false, belief: Belief::Idle }
    }
    fn creator() -> Self {
        Toy { creator: true, flip: false, belief: Belief::Idle }
    }
}

impl Recipe for Toy {
    fn name(&self) -> String {
        "toy".to_string()
    }
    fn handle(&mut self, _: &Ctx, input: Input, out: &mut Vec<Request>) {
        match input {
            Input::Acquire => {
                self.belief = Belief::Acquiring;
                out.push(match self.creator {
                    true => Request::create(GO, CreateMode::Persistent),
                    false => Request::exists(GO, false),
                });
            }
            Input::Release => self.belief = Belief::Idle,
            Input::Reply { result, .. } if self.belief == Belief::Acquiring => match result {
                Ok(Response::Exists(None)) => {
                    self.flip = !self.flip;
                    out.push(Request::exists(GO, false));
                }
                _ => self.belief = Belief::Holding { token: 0 },
            },
            _ => {}
        }
    }
    fn belief(&self) -> Belief {
        self.belief
    }
    fn mode(&self) -> Mode {
        Mode::Read
    }
    fn owned_node(&self) -> Option<&str> {
        None
    }
}

#[test]
fn a_client_that_polls_forever_starves_on_a_fair_cycle() {
    let init = World::new(WorldConfig::default(), vec![Toy::poller()]);
    let o = oracle::check(init.clone(), 1000);
    assert!(o.complete);
    assert_eq!(o.violated["eventual_acquire"], vec![Step::Acquire(0)], "the stem");
    let (steps, start) = &o.lasso["eventual_acquire"];
    assert_eq!((steps.as_slice(), *start), ([Step::Acquire(0), Step::Receive(0), Step::Receive(0)].as_slice(), 1));
    assert_eq!(oracle::is_fair_lasso(&init, steps, *start), Ok(0));
    assert!(oracle::replays_to_violation(&init, &[Step::Acquire(0)], "eventual_acquire").is_err(), "no deadlock");
    // Half the cycle does not come back to where it started.
    assert!(oracle::is_fair_lasso(&init, &steps[..2], 1).is_err());
}

#[test]
fn two_pollers_starve_on_a_cycle_that_serves_both() {
    let init = World::new(WorldConfig::default(), vec![Toy::poller(), Toy::poller()]);
    let o = oracle::check(init.clone(), 1000);
    assert!(o.complete);
    let (steps, start) = &o.lasso["eventual_acquire"];
    assert_eq!(*start, 2, "both acquire first: {steps:?}");
    assert!(steps[2..].contains(&Step::Receive(0)) && steps[2..].contains(&Step::Receive(1)), "{steps:?}");
    assert_eq!(oracle::is_fair_lasso(&init, steps, *start), Ok(0));
    // Polling by one of them alone is not fair to the other.
    let unfair = [Step::Acquire(0), Step::Acquire(1), Step::Receive(0), Step::Receive(0)];
    assert!(oracle::is_fair_lasso(&init, &unfair, 2).unwrap_err().contains("not weakly fair"));
}

#[test]
fn an_unfair_cycle_is_no_starvation() {
    // The poller can poll forever only while the creator, which could create the node, never
    // takes its step.
    let init = World::new(WorldConfig::default(), vec![Toy::poller(), Toy::creator()]);
    let o = oracle::check(init.clone(), 10_000);
    assert!(o.complete);
    assert_eq!(o.status("eventual_acquire"), "holds", "{:?}", o.lasso);
    let unfair = [Step::Acquire(0), Step::Receive(0), Step::Receive(0)];
    assert!(oracle::is_fair_lasso(&init, &unfair, 1).unwrap_err().contains("acquire c1"));
}

/// Replays `steps` from `init` and returns the world reached.
fn replay<R: Recipe>(init: &World<R>, steps: &[Step]) -> World<R> {
    let mut world = init.clone();
    for &step in steps {
        world.apply(step).unwrap();
    }
    world
}

#[test]
fn a_holder_that_never_learns_its_session_expired_is_a_stale_holder() {
    // kazoo-lock does not watch its session: expired under it, it goes on believing it holds.
    let config = WorldConfig { faults: budget("expire"), ..WorldConfig::default() };
    let init = world("kazoo-lock", 1, config);
    let o = oracle::check(init.clone(), 100_000);
    assert!(o.complete);
    assert_eq!(o.status("stale_holder"), "violated");
    let steps = &o.violated["stale_holder"];
    assert_eq!(oracle::replays_to_violation(&init, steps, "stale_holder"), Ok(()));
    let end = replay(&init, steps);
    let c = &end.clients[0];
    assert!(matches!(c.recipe.belief(), Belief::Holding { .. }), "{steps:?}");
    assert!(!end.server.is_alive(c.session), "the session is gone: {steps:?}");
    // Shortest: one step fewer reaches no stale holder. Nobody else holds, so ZooKeeper's own
    // exclusion holds throughout.
    assert!(oracle::replays_to_violation(&init, &steps[..steps.len() - 1], "stale_holder").is_err());
    assert_eq!(o.status("zk_exclusion"), "holds");
}

#[test]
fn the_standard_lock_without_faults_has_no_stale_holder() {
    let init = world("standard", 2, WorldConfig::default());
    let o = oracle::check(init.clone(), 100_000);
    assert!(o.complete);
    assert_eq!(o.status("stale_holder"), "holds");
    assert_eq!(o.status("fencing_available"), "holds");
    // A client that holds, replayed: ZooKeeper agrees with it.
    let holds = [Step::Acquire(0), Step::Receive(0), Step::Receive(0)];
    let end = replay(&init, &holds);
    assert!(matches!(end.clients[0].recipe.belief(), Belief::Holding { .. }));
    assert!(oracle::replays_to_violation(&init, &holds, "stale_holder").is_err());
}

#[test]
fn a_wrapped_sequence_counter_locks_the_legitimate_holder_out() {
    // One client, two rounds, the counter one below the wrap: its first hold writes with token
    // 2147483647, its second (node -2147483648, which ZooKeeper agrees it owns) is refused.
    let config = WorldConfig { rounds: 2, first_sequence: i32::MAX, ..WorldConfig::default() };
    let init = world("standard", 1, config);
    let o = oracle::check(init.clone(), 100_000);
    assert!(o.complete);
    assert_eq!(o.status("fencing_available"), "violated");
    assert_eq!(o.status("stale_holder"), "holds", "the refused holder is not stale");
    let steps = &o.violated["fencing_available"];
    assert_eq!(steps.last(), Some(&Step::Write(0)), "the path ends with the refused write: {steps:?}");
    assert_eq!(oracle::replays_to_violation(&init, steps, "fencing_available"), Ok(()));
    // Not before the refused write; but on every state after it along the path.
    assert!(oracle::replays_to_violation(&init, &steps[..steps.len() - 1], "fencing_available").is_err());
    let mut longer = steps.clone();
    longer.push(Step::Release(0));
    assert_eq!(oracle::replays_to_violation(&init, &longer, "fencing_available"), Ok(()));
    // The same recipe from 0 never goes backwards.
    let init = world("standard", 1, WorldConfig { rounds: 2, ..WorldConfig::default() });
    let o = oracle::check(init, 100_000);
    assert!(o.complete);
    assert_eq!(o.status("fencing_available"), "holds");
}

#[test]
fn a_reaped_and_recreated_parent_locks_the_legitimate_holder_out() {
    // container-lock creates the parent again after it was reaped: the counter restarts at 0,
    // below the tokens already accepted.
    let config = WorldConfig { faults: budget("reap-parent"), rounds: 2, ..WorldConfig::default() };
    let init = world("container-lock", 2, config);
    let o = oracle::check(init.clone(), 1_000_000);
    assert!(o.complete);
    assert_eq!(o.status("reached:reap-parent"), "holds");
    assert_eq!(o.status("fencing_available"), "violated");
    let steps = &o.violated["fencing_available"];
    assert!(
        steps.iter().any(|s| matches!(s, Step::Server(ServerEvent::ReapParent))),
        "the parent is reaped: {steps:?}"
    );
    assert!(matches!(steps.last(), Some(Step::Write(_))), "{steps:?}");
    assert_eq!(oracle::replays_to_violation(&init, steps, "fencing_available"), Ok(()));
}

#[test]
fn a_stale_holder_refused_does_not_break_fencing_available() {
    // A holder paused past its session's expiry writes after the next holder: the resource
    // refuses it (reached:stale-write-refused), as it should, since ZooKeeper no longer agrees
    // with it. That breaks stale_holder, not fencing_available.
    let config = WorldConfig { faults: budget("expire,pause"), ..WorldConfig::default() };
    let init = world("standard", 2, config);
    let o = oracle::check(init.clone(), 3_000_000);
    assert!(o.complete);
    assert_eq!(o.status("reached:stale-write-refused"), "holds");
    assert_eq!(o.status("fencing_available"), "holds");
    assert_eq!(o.status("stale_holder"), "violated");
    assert_eq!(oracle::replays_to_violation(&init, &o.violated["stale_holder"], "stale_holder"), Ok(()));
}

#[test]
fn a_holder_that_names_no_node_is_a_stale_holder() {
    // The toy creator holds after creating a persistent node it does not name as its own
    // (`owned_node()` is None): ZooKeeper cannot agree with it, although its session is alive.
    let init = World::new(WorldConfig::default(), vec![Toy::creator()]);
    let o = oracle::check(init.clone(), 1000);
    assert!(o.complete);
    assert_eq!(o.violated["stale_holder"], vec![Step::Acquire(0), Step::Receive(0)]);
    let end = replay(&init, &[Step::Acquire(0), Step::Receive(0)]);
    assert!(end.server.is_alive(end.clients[0].session));
    assert!(oracle::replays_to_violation(&init, &[Step::Acquire(0)], "stale_holder").is_err());
}

/// The first world reachable from `init` (breadth-first, up to `limit` worlds) for which `found`
/// holds.
fn find<R: Recipe>(init: &World<R>, limit: usize, found: impl Fn(&World<R>) -> bool) -> Option<World<R>> {
    let mut seen = std::collections::HashSet::from([init.clone()]);
    let mut queue = std::collections::VecDeque::from([init.clone()]);
    while let Some(w) = queue.pop_front() {
        if found(&w) {
            return Some(w);
        }
        for step in w.steps() {
            let mut next = w.clone();
            next.apply(step).unwrap();
            if seen.len() < limit && seen.insert(next.clone()) {
                queue.push_back(next);
            }
        }
    }
    None
}

#[test]
fn a_crashed_holder_holds_nothing_but_its_node_lives_on() {
    // The standard lock under crash: the holder crashes, the server expires its session, and
    // the next client is granted the lock while the dead one's recipe still says Holding. A
    // crashed process's belief counts for nothing, so no property sees two holders or a stale
    // one; its node and session are ZooKeeper's and stay until the expiry.
    let init = world("standard", 2, WorldConfig { faults: budget("crash"), ..WorldConfig::default() });
    let o = oracle::check(init.clone(), 1_000_000);
    assert!(o.complete);
    for name in ["belief_exclusion", "zk_exclusion", "stale_holder", "no_orphans", "eventual_acquire"] {
        assert_eq!(o.status(name), "holds", "{name}: {:?}", o.violated.get(name));
    }
    let believes = |w: &World<AnyRecipe>, i: usize| matches!(w.clients[i].recipe.belief(), Belief::Holding { .. });
    // The dead holder beside the live one: what the earlier definitions called a violation.
    let handed_on = find(&init, 100_000, |w| w.clients[0].crashed && believes(w, 0) && believes(w, 1))
        .expect("a crashed holder's successor is granted the lock");
    assert!(!oracle::properties::holds(&handed_on.clients[0]) && oracle::properties::holds(&handed_on.clients[1]));
    assert!(oracle::properties::belief_exclusion(&handed_on) && oracle::properties::stale_holder(&handed_on));
    // Before the expiry, the dead holder's node blocks the other and is an orphan candidate
    // (no live owner knows it), though the pending expiry keeps the world from being judged.
    let dead =
        find(&init, 100_000, |w| w.clients[0].crashed && believes(w, 0) && w.server.is_alive(w.clients[0].session))
            .expect("a holder crashes");
    let node = dead.clients[0].recipe.owned_node().expect("it names its node").to_string();
    assert_eq!(oracle::properties::orphan_nodes(&dead), vec![node]);
    assert!(!oracle::properties::only_faults_possible(&dead), "the expiry is still to come");
    assert!(oracle::properties::no_orphans(&dead));
}
