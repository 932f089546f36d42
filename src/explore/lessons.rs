//! The lessons: each pitfall of docs/pitfalls.md (and the herd) as a level of the explorer. A
//! level is a world to break, taken from the kept trace that breaks it (built into the binary,
//! so an installed `zklab` has them), a task in the learner's words, a hint, and the real bug
//! the violation is. Reaching the violation says which bug it is and links the kept trace.

use crate::trace::Trace;
use serde::Serialize;

/// One level.
#[derive(Clone, Debug, Serialize)]
pub struct Lesson {
    /// The pitfall's name in docs/pitfalls.md and docs/bugzoo.md; the level's address.
    pub id: &'static str,
    /// What to do, in the learner's words.
    pub task: &'static str,
    pub hint: &'static str,
    /// The real bug a violation here is (starting with its name, `id`), and where it was met.
    pub bug: &'static str,
    /// The kept trace (traces/NAME.json): the world, and one way to break it.
    pub trace_file: &'static str,
    #[serde(skip)]
    trace_text: &'static str,
}

impl Lesson {
    /// The kept trace: its world is the level's, its property the goal.
    pub fn trace(&self) -> Trace {
        serde_json::from_str(self.trace_text).expect("a kept trace built into the binary parses")
    }
}

/// The levels, easiest first.
pub const LESSONS: [Lesson; 5] = [
    Lesson {
        id: "herd-effect",
        task: "wake the whole herd: make one step wake two waiters at once",
        hint: "Let c1 and c2 both ask for the lock while c0 holds it (each watches /lock/holder), then release c0.",
        bug: "herd-effect, which the ZooKeeper recipes page warns of at step 2 (Hunt et al. 2010; kazoo #26): every \
              waiter watches the same node, so each release wakes them all",
        trace_file: "traces/naive-n3-no_herd.json",
        trace_text: include_str!("../../traces/naive-n3-no_herd.json"),
    },
    Lesson {
        id: "delete-before-watch",
        task: "make a waiter wait forever",
        hint: "Let c1 list the children while c0 holds, then release c0 before c1 handles that listing: \
               c1's exists() on c0's node comes back null, and wait-on-null waits anyway.",
        bug: "delete-before-watch: the recipes page's step 5 taken literally (kazoo PR #490; Curator's dangling \
              watchers): a watch on a vanished predecessor never fires",
        trace_file: "traces/wait-on-null-n2-eventual_acquire.json",
        trace_text: include_str!("../../traces/wait-on-null-n2-eventual_acquire.json"),
    },
    Lesson {
        id: "orphan-after-connloss",
        task: "make every client wait behind a node nobody owns",
        hint: "Lose the reply to a create after the server applied it (loss-after-apply): blind-retry creates \
               again, and its first node is lowest.",
        bug: "orphan-after-connloss: the recipes page's note on error handling (go-zookeeper #229, CURATOR-45): a \
              create that did succeed, its reply lost with the connection",
        trace_file: "traces/blind-retry-n2-eventual_acquire.json",
        trace_text: include_str!("../../traces/blind-retry-n2-eventual_acquire.json"),
    },
    Lesson {
        id: "holder-outlives-session",
        task: "make two clients believe they hold the lock, with the correct recipe",
        hint: "Let c0 acquire and c1 ask; then cut c0 off past its session timeout and pause it: when the server \
               expires c0's session, c1 acquires while c0 still believes.",
        bug: "holder-outlives-session (CURATOR-206; Kleppmann, \"How to do distributed locking\"): no recipe can \
              prevent it; only fencing tokens checked by the resource protect it",
        trace_file: "traces/standard-n2-belief_exclusion.json",
        trace_text: include_str!("../../traces/standard-n2-belief_exclusion.json"),
    },
    Lesson {
        id: "blind-delete-retry",
        task: "make two clients believe they hold the lock by losing one reply",
        hint: "Lose the reply to c0's release (loss-after-apply), let c1 create /lock/holder, then let c0 retry its \
               delete: it removes c1's node, and c2 walks in.",
        bug: "blind-delete-retry: a release that retries its delete after ConnectionLoss without checking the node \
              is still its own deletes the next holder's lock",
        trace_file: "traces/naive-blind-delete-n3-belief_exclusion.json",
        trace_text: include_str!("../../traces/naive-blind-delete-n3-belief_exclusion.json"),
    },
];

/// The level called `id`.
pub fn lesson(id: &str) -> Option<&'static Lesson> {
    LESSONS.iter().find(|l| l.id == id)
}
