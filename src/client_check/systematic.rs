//! Systematic exploration: depth-first over the scheduler's choices, each schedule a run of the
//! real clients from the start (stateless search, as CHESS does), bounded by faults and by
//! switches between clients, with sleep sets so that independent choices are not tried in both
//! orders.
//!
//! - **The default schedule.** After the prefix a run was asked to follow, the client that moved
//!   last moves again while it can; otherwise the lowest-numbered client that can. No fault is
//!   taken by default.
//! - **Bounds.** A schedule is bounded by its faults (losses and expiries) and by its
//!   *switches*: among the choices that reach the server (every choice but a delivery), the
//!   times one is another client's than the one before. Most concurrency bugs need very few
//!   (context bounding, Musuvathi and Qadeer, PLDI 2007). Deliveries are left out of the count
//!   so that the count is the same for every order the sleep sets treat as one (below): a
//!   preemption count, which asks whether the last client could have gone on, changes when a
//!   delivery moves, and a search that prunes by it and by sleep sets together can miss a
//!   schedule within the bound (its only explored equivalent being out of it).
//! - **Independence (sleep sets, Godefroid 1996).** `Deliver(y)` hands client y the oldest frame
//!   held for it. A choice of another client x only ever appends to y's held frames (a watch
//!   event), never removes or reorders them, and nothing y does in reaction (new requests, held
//!   in y's own queue) is read by x's choice. So the two orders reach the same server, the same
//!   held messages and, for clients that do the same given the same inputs (what every replay
//!   assumes), the same clients. Once a subtree under one order is explored, the other order is
//!   asleep. Every other pair (two applies to the server, a connection and an apply) is treated
//!   as dependent.
//! - **Why the two together are sound.** Swapping a delivery with a neighbouring choice of
//!   another client leaves the sequence of server choices, and so the switches and the faults
//!   of every prefix, as they were. A schedule pruned as asleep has an equivalent one that was
//!   explored, and every prefix of that one is within the bounds when the pruned one's are. The
//!   differential test below runs the search with and without sleep sets on random toy systems
//!   that keep the independence above, and asks for the same final states.
//!
//! What is covered: every schedule within the bounds, up to the equivalence above, unless
//! `cap` runs were spent first. A run that does not follow its prefix (a client acted otherwise
//! than when the prefix was recorded) is counted as diverged and its subtree left unexplored:
//! it is reported, never hidden.

use super::run::{self, RunError, RunResult, Setup};
use super::strategy::Strategy;
use super::switchboard::Choice;
use std::path::Path;

/// The bounds of a systematic exploration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    pub switches: usize,
    pub faults: usize,
    /// The most runs (schedules) to spend.
    pub cap: usize,
}

/// What a systematic exploration did.
pub struct Explored {
    /// Each run, in the order run.
    pub runs: Vec<RunResult>,
    /// Every schedule within the bounds was run (the stack was emptied before the cap).
    pub complete: bool,
    /// Runs that did not follow their prefix.
    pub diverged: usize,
    /// Runs that ended with every move left asleep (what follows is explored in an
    /// equivalent order), or at the switch bound: cut, not undecided.
    pub cut: usize,
}

/// Whether two choices commute (see the module's doc): a delivery to one client and any choice
/// of another.
pub fn independent(a: Choice, b: Choice) -> bool {
    a.client() != b.client() && (matches!(a, Choice::Deliver(_)) || matches!(b, Choice::Deliver(_)))
}

/// One choice point of the current path.
struct Node {
    enabled: Vec<Choice>,
    /// The choice the current path takes here; `None` at a rest point the last run ended at
    /// (stuck), whose faults are still to try.
    taken: Option<Choice>,
    /// Choices already explored from here (the one taken among them).
    done: Vec<Choice>,
    /// Choices not to take here: explored in an equivalent order elsewhere.
    sleep: Vec<Choice>,
}

/// Follows a prefix, then the default schedule, noting what was enabled at each choice.
struct Dfs {
    prefix: Vec<Choice>,
    /// Past the prefix: each choice point, with what was enabled, what was taken, and what
    /// was asleep there.
    seen: Vec<Seen>,
    last: Option<usize>,
    /// The switch bound, the switches so far, and the client of the last server choice.
    bound: usize,
    switches: usize,
    last_at_server: Option<usize>,
    /// What is asleep at the next choice point past the prefix (explored in an equivalent
    /// order already): never the default choice.
    sleep: Vec<Choice>,
    /// Choices of the prefix taken as recorded.
    followed: usize,
    /// The run ended with moves left within the bound, every one asleep: what follows is
    /// explored in an equivalent order elsewhere.
    ended_asleep: bool,
}

/// A choice point a run passed beyond its prefix.
struct Seen {
    enabled: Vec<Choice>,
    taken: Option<Choice>,
    sleep: Vec<Choice>,
}

impl Dfs {
    fn new(prefix: Vec<Choice>, bound: usize, sleep: Vec<Choice>) -> Self {
        Dfs {
            prefix,
            seen: Vec::new(),
            last: None,
            bound,
            switches: 0,
            last_at_server: None,
            sleep,
            followed: 0,
            ended_asleep: false,
        }
    }

    /// Whether `c` keeps the schedule within the switch bound.
    fn within(&self, c: Choice) -> bool {
        matches!(c, Choice::Deliver(_))
            || self.last_at_server.is_none_or(|l| l == c.client())
            || self.switches < self.bound
    }

    /// The default schedule's choice: no fault, within the bound, not asleep, the last
    /// client's if it can. None when there is no such move: the schedule is maximal there
    /// (within the bound, or up to orders explored already).
    fn default_choice(&self, enabled: &[Choice]) -> Option<Choice> {
        let moves = || enabled.iter().copied().filter(|c| !c.is_fault() && self.within(*c) && !self.sleep.contains(c));
        self.last.and_then(|l| moves().find(|c| c.client() == l)).or_else(|| moves().min_by_key(|c| c.client()))
    }

    fn note(&mut self, step: usize, enabled: &[Choice], choice: Option<Choice>) -> Option<Choice> {
        if step >= self.prefix.len() {
            self.seen.push(Seen { enabled: enabled.to_vec(), taken: choice, sleep: self.sleep.clone() });
            if let Some(c) = choice {
                self.sleep.retain(|a| independent(*a, c));
            }
        } else if choice.is_some() {
            self.followed += 1;
        }
        if let Some(c) = choice {
            self.last = Some(c.client());
            if !matches!(c, Choice::Deliver(_)) {
                if self.last_at_server.is_some_and(|l| l != c.client()) {
                    self.switches += 1;
                }
                self.last_at_server = Some(c.client());
            }
        }
        choice
    }
}

impl Strategy for Dfs {
    fn pick(&mut self, step: usize, enabled: &[Choice]) -> Option<Choice> {
        let choice = match self.prefix.get(step) {
            Some(c) => Some(*c).filter(|c| enabled.contains(c)),
            None => self.default_choice(enabled),
        };
        if choice.is_none() && step >= self.prefix.len() {
            self.ended_asleep = enabled.iter().any(|c| !c.is_fault() && self.within(*c));
        }
        self.note(step, enabled, choice)
    }

    fn wanted(&self, step: usize) -> Option<Choice> {
        self.prefix.get(step).copied()
    }

    /// Past its prefix a schedule ends where no move is within the bound and awake.
    fn exhausted(&self, step: usize) -> bool {
        step >= self.prefix.len()
    }

    fn at_rest(&mut self, step: usize, enabled: &[Choice]) -> Option<Choice> {
        // Nothing moves: only a fault the prefix asks for is taken here. Past the prefix the
        // run ends, and the rest point is noted with nothing taken, so that the search tries
        // its faults like any other alternative.
        let choice = self.prefix.get(step).copied().filter(|c| enabled.contains(c));
        self.note(step, enabled, choice)
    }
}

/// Switches along `path`: among its choices that reach the server (all but deliveries), the
/// times one is another client's than the one before.
fn switches(path: impl Iterator<Item = Choice>) -> usize {
    let clients = path.filter(|c| !matches!(c, Choice::Deliver(_))).map(Choice::client);
    let mut last = None;
    let mut count = 0;
    for c in clients {
        if last.is_some_and(|l| l != c) {
            count += 1;
        }
        last = Some(c);
    }
    count
}

/// Explores every schedule of `setup` within `bounds`, calling `each` after every run; stops at
/// the first violation when `stop_at_violation`.
pub fn explore(
    setup: &Setup,
    bounds: Bounds,
    dir: &Path,
    stop_at_violation: bool,
    mut each: impl FnMut(&RunResult),
) -> Result<Explored, RunError> {
    let mut runner = run::Runner::new(setup, dir);
    let searched = search(bounds, true, |dfs| {
        let result = runner.run(dfs)?;
        each(&result);
        let diverged = matches!(result.end, run::End::Diverged { .. });
        let stop = stop_at_violation && !result.findings.is_empty();
        Ok((result, diverged, stop))
    })?;
    let cut = searched.runs.iter().filter(|r| r.end == run::End::Cut).count();
    debug_assert!(searched.asleep.iter().filter(|a| **a).count() <= cut);
    Ok(Explored { runs: searched.runs, complete: searched.complete, diverged: searched.diverged, cut })
}

/// What `search` found: each run's outcome, whether the tree was emptied, runs that diverged.
struct Searched<R> {
    runs: Vec<R>,
    /// For each run, whether it ended with only sleeping moves left.
    asleep: Vec<bool>,
    complete: bool,
    diverged: usize,
}

/// The depth-first search itself, over any system a `Strategy` drives: `run` runs it once
/// under the strategy it is given and says what came of it, whether it diverged from its
/// prefix, and whether to stop. With `sleep_sets` off, every order is tried (the reference the
/// differential test compares against).
fn search<R, E>(
    bounds: Bounds,
    sleep_sets: bool,
    mut run: impl FnMut(&mut dyn Strategy) -> Result<(R, bool, bool), E>,
) -> Result<Searched<R>, E> {
    let mut stack: Vec<Node> = Vec::new();
    let mut runs = Vec::new();
    let mut asleep = Vec::new();
    let mut diverged = 0;
    loop {
        if runs.len() >= bounds.cap || crate::interrupt::interrupted() {
            return Ok(Searched { runs, asleep, complete: false, diverged });
        }
        let prefix: Vec<Choice> = stack.iter().filter_map(|n| n.taken).collect();
        // What sleeps below the last choice point of the prefix: what slept there or was
        // explored there before the choice taken, where that commutes with the choice.
        let sleep = match stack.last() {
            Some(Node { sleep, done, taken: Some(t), .. }) if sleep_sets => {
                sleep.iter().chain(done.iter().filter(|d| *d != t)).copied().filter(|a| independent(*a, *t)).collect()
            }
            _ => Vec::new(),
        };
        let mut dfs = Dfs::new(prefix.clone(), bounds.switches, sleep);
        let (outcome, went_astray, stop) = run(&mut dfs)?;
        let dfs_asleep = dfs.ended_asleep;
        if went_astray || dfs.followed < prefix.len() {
            diverged += 1;
        } else {
            for seen in dfs.seen {
                let sleep = if sleep_sets { seen.sleep } else { Vec::new() };
                stack.push(Node {
                    enabled: seen.enabled,
                    taken: seen.taken,
                    done: seen.taken.into_iter().collect(),
                    sleep,
                });
            }
        }
        runs.push(outcome);
        asleep.push(dfs_asleep);
        if stop {
            return Ok(Searched { runs, asleep, complete: false, diverged });
        }
        // Backtrack to the deepest choice point with an alternative within the bounds.
        loop {
            let Some(top) = stack.last() else {
                return Ok(Searched { runs, asleep, complete: true, diverged });
            };
            let depth = stack.len() - 1;
            let before = || stack[..depth].iter().filter_map(|n| n.taken);
            let faults_before = before().filter(|c| c.is_fault()).count();
            let alternative = top.enabled.iter().copied().find(|c| {
                !top.done.contains(c)
                    && !top.sleep.contains(c)
                    && faults_before + usize::from(c.is_fault()) <= bounds.faults
                    && switches(before().chain(std::iter::once(*c))) <= bounds.switches
            });
            match alternative {
                Some(b) => {
                    let top = stack.last_mut().expect("there is a top");
                    top.done.push(b);
                    top.taken = Some(b);
                    break;
                }
                None => {
                    stack.pop();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{BTreeSet, VecDeque};

    #[test]
    fn a_delivery_commutes_with_another_clients_choice_and_nothing_else_does() {
        assert!(independent(Choice::Deliver(0), Choice::Apply(1)));
        assert!(independent(Choice::Expire(1), Choice::Deliver(0)));
        assert!(independent(Choice::Deliver(0), Choice::Deliver(1)));
        assert!(!independent(Choice::Deliver(0), Choice::Apply(0)), "one client's own choices are ordered");
        assert!(!independent(Choice::Apply(0), Choice::Apply(1)), "the server's order is the schedule's");
        assert!(!independent(Choice::Connect(0), Choice::LossAfterApply(1)));
    }

    #[test]
    fn a_switch_is_counted_among_server_choices_and_a_delivery_moves_nothing() {
        use Choice::*;
        assert_eq!(switches([Apply(0), Apply(1), Apply(0)].into_iter()), 2);
        assert_eq!(switches([Apply(0), Deliver(1), Apply(0)].into_iter()), 0, "a delivery is not counted");
        // The same schedule with a delivery moved past another client's choice: the same count.
        let a = [Apply(0), Deliver(0), Apply(1), Expire(1), Apply(0)];
        let b = [Apply(0), Apply(1), Deliver(0), Expire(1), Apply(0)];
        assert_eq!(switches(a.into_iter()), switches(b.into_iter()));
    }

    #[test]
    fn the_default_schedule_keeps_the_last_client_moving_and_takes_no_fault() {
        let mut d = Dfs::new(vec![Choice::Apply(1)], 1, Vec::new());
        let enabled = [Choice::Apply(0), Choice::Expire(0), Choice::Apply(1), Choice::Deliver(1)];
        assert_eq!(d.pick(0, &enabled), Some(Choice::Apply(1)), "the prefix first");
        assert_eq!(d.pick(1, &enabled), Some(Choice::Apply(1)), "then client 1 again while it can");
        assert_eq!(d.pick(2, &[Choice::Expire(1), Choice::Apply(0)]), Some(Choice::Apply(0)), "no fault by default");
        assert_eq!(d.pick(3, &[Choice::Expire(0)]), None);
        assert_eq!(d.seen.len(), 3, "the points past the prefix, the last with nothing taken");
        // The one switch allowed is spent (1 to 0): client 1 may not apply again, but a
        // delivery is never counted.
        assert_eq!(d.pick(4, &[Choice::Apply(1), Choice::Deliver(1)]), Some(Choice::Deliver(1)));
        assert_eq!(d.pick(5, &[Choice::Apply(1)]), None, "the schedule is maximal within the bound");
    }

    /// A toy system that keeps the independence the reduction assumes, as the switchboard does:
    /// each client sends its program's requests one at a time (the next once it hears the reply
    /// to the last); the server applies a client's oldest request, replies to it and, for a
    /// request that notifies, appends an event to every other live client's held frames; a
    /// client that hears an event sends a check. A loss after apply loses the reply (the client
    /// goes on with its next request); an expiry ends a client and notifies the others.
    #[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
    struct Toy {
        programs: Vec<Vec<u8>>,
        next: Vec<usize>,
        inbound: Vec<VecDeque<u8>>,
        outbound: Vec<VecDeque<(usize, u8)>>,
        server: Vec<(usize, u8)>,
        heard: Vec<Vec<(usize, u8)>>,
        alive: Vec<bool>,
    }

    const NOTIFY: u8 = 1;
    const CHECK: u8 = 2;
    const EVENT: u8 = 8;

    impl Toy {
        fn new(programs: Vec<Vec<u8>>) -> Toy {
            let n = programs.len();
            let mut t = Toy {
                next: vec![0; n],
                inbound: vec![VecDeque::new(); n],
                outbound: vec![VecDeque::new(); n],
                server: Vec::new(),
                heard: vec![Vec::new(); n],
                alive: vec![true; n],
                programs,
            };
            (0..n).for_each(|c| t.send_next(c));
            t
        }

        fn send_next(&mut self, c: usize) {
            if let Some(op) = self.programs[c].get(self.next[c]) {
                self.inbound[c].push_back(*op);
                self.next[c] += 1;
            }
        }

        fn enabled(&self, faults: bool) -> Vec<Choice> {
            let mut out = Vec::new();
            for c in 0..self.programs.len() {
                if !self.inbound[c].is_empty() {
                    out.push(Choice::Apply(c));
                    if faults {
                        out.push(Choice::LossAfterApply(c));
                    }
                }
                if !self.outbound[c].is_empty() {
                    out.push(Choice::Deliver(c));
                }
                if faults && self.alive[c] {
                    out.push(Choice::Expire(c));
                }
            }
            out
        }

        fn apply(&mut self, c: usize, reply: bool) {
            let op = self.inbound[c].pop_front().expect("enabled");
            self.server.push((c, op));
            if reply {
                self.outbound[c].push_back((c, op));
            } else {
                self.send_next(c);
            }
            if op == NOTIFY {
                for d in (0..self.programs.len()).filter(|d| *d != c && self.alive[*d]) {
                    self.outbound[d].push_back((c, EVENT));
                }
            }
        }

        fn take(&mut self, choice: Choice) {
            match choice {
                Choice::Apply(c) => self.apply(c, true),
                Choice::LossAfterApply(c) => self.apply(c, false),
                Choice::Deliver(c) => {
                    let frame = self.outbound[c].pop_front().expect("enabled");
                    self.heard[c].push(frame);
                    match frame {
                        (_, EVENT) => self.inbound[c].push_back(CHECK),
                        (_, CHECK) => {}
                        _ => self.send_next(c),
                    }
                }
                Choice::Expire(c) => {
                    self.alive[c] = false;
                    self.inbound[c].clear();
                    self.outbound[c].clear();
                    self.server.push((c, EVENT));
                    for d in (0..self.programs.len()).filter(|d| *d != c && self.alive[*d]) {
                        self.outbound[d].push_back((c, EVENT));
                    }
                }
                other => unreachable!("the toy has no {other:?}"),
            }
        }
    }

    /// Runs the toy under `strategy` as `run::run` runs real clients: a move while any is
    /// enabled, a fault at rest only if the strategy takes one.
    fn run_toy(start: &Toy, faults: bool, strategy: &mut dyn Strategy) -> Toy {
        let mut t = start.clone();
        let mut step = 0;
        loop {
            let enabled = t.enabled(faults);
            if enabled.is_empty() {
                return t;
            }
            let choice = match enabled.iter().any(|c| !c.is_fault()) {
                true => strategy.pick(step, &enabled),
                false => strategy.at_rest(step, &enabled),
            };
            let Some(choice) = choice else { return t };
            t.take(choice);
            step += 1;
        }
    }

    /// The final states a search reaches, and whether it finished within `cap` runs.
    fn finals(start: &Toy, bounds: Bounds, faults: bool, sleep_sets: bool) -> (BTreeSet<Toy>, bool) {
        let searched =
            search(bounds, sleep_sets, |dfs| Ok::<_, ()>((run_toy(start, faults, dfs), false, false))).unwrap();
        assert_eq!(searched.diverged, 0, "the toy does the same given the same choices");
        assert!(sleep_sets || searched.asleep.iter().all(|a| !a), "nothing sleeps without sleep sets");
        // A run that ended with only sleeping moves left stopped short of a final state: what
        // follows it is reached in an equivalent order.
        let finals = searched.runs.into_iter().zip(searched.asleep).filter(|(_, a)| !a).map(|(t, _)| t).collect();
        (finals, searched.complete)
    }

    /// The reduction's differential test: on random toy systems, within random bounds, the
    /// search with sleep sets reaches exactly the final states that the search trying every
    /// order reaches, in fewer or as many runs.
    #[test]
    fn sleep_sets_reach_every_final_state_the_plain_search_reaches_within_the_bounds() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(57);
        let (mut compared, mut pruned) = (0, 0);
        for case in 0..1000 {
            let clients = rng.random_range(2..=3);
            let programs: Vec<Vec<u8>> =
                (0..clients).map(|_| (0..rng.random_range(1..=2)).map(|_| rng.random_range(0..=1)).collect()).collect();
            let faults = rng.random_bool(0.5);
            let bounds = Bounds {
                switches: rng.random_range(0..=2),
                faults: if faults { rng.random_range(0..=1) } else { 0 },
                cap: 5_000,
            };
            let start = Toy::new(programs.clone());
            let (plain, plain_done) = finals(&start, bounds, faults, false);
            if !plain_done {
                continue;
            }
            let (reduced, reduced_done) = finals(&start, bounds, faults, true);
            assert!(reduced_done, "case {case}: the reduced search ran out where the plain one did not");
            assert_eq!(reduced, plain, "case {case}: {programs:?} faults {faults} {bounds:?}");
            compared += 1;
            pruned += usize::from(runs(&start, bounds, faults, true) < runs(&start, bounds, faults, false));
        }
        // Systems whose plain search needs more than its cap are left out (most with faults).
        assert!(compared >= 600, "only {compared} of 1000 toy systems were small enough to compare");
        assert!(pruned * 2 >= compared, "sleep sets saved runs in only {pruned} of {compared} systems");
    }

    fn runs(start: &Toy, bounds: Bounds, faults: bool, sleep_sets: bool) -> usize {
        search(bounds, sleep_sets, |dfs| Ok::<_, ()>((run_toy(start, faults, dfs), false, false))).unwrap().runs.len()
    }

    #[test]
    fn sleep_sets_save_runs_on_a_toy_with_many_deliveries() {
        // Two clients of two notifying requests each: many deliveries to interleave.
        let start = Toy::new(vec![vec![NOTIFY; 2], vec![NOTIFY; 2]]);
        let bounds = Bounds { switches: 1, faults: 0, cap: 100_000 };
        let (plain, reduced) = (runs(&start, bounds, false, false), runs(&start, bounds, false, true));
        assert!(reduced * 10 <= plain, "sleep sets ran {reduced} schedules against {plain}");
    }
}
