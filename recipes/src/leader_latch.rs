//! Curator's `LeaderLatch`, as `contender` styles.
//!
//! **Source.** Curator's `LeaderLatch`. The issues it reproduces: CURATOR-644 and CURATOR-645 (the
//! livelock, fixed in Curator PR #430) and CURATOR-696 (the double leader).
//!
//! **What it does.** Beside what every contender does (see `contender`):
//! - Only a NodeDeleted on the predecessor's watch wakes it (`Watch::GetDataDeleted`).
//! - It drops leadership on SUSPENDED and LOST, and on RECONNECTED lists again (since
//!   CURATOR-644/645). LOST only drops leadership: the latch keeps its node's path and handles the
//!   new session's connect like any reconnect.
//! - Since CURATOR-696 a latch that finds itself first reads its own node and leads only if the
//!   node's ephemeral owner is its current session; otherwise it resets (deletes its node and
//!   creates a new one).
//!
//! **What it gets wrong.** `LEADER_LATCH` (`leader-latch`): nothing the model can show. The styles
//! from before each fix:
//! - `LEADER_LATCH_BEFORE_696` (`leader-latch-696`): first in a listing, it leads without reading
//!   whose its node is, so after an expiry a listing that still shows its old node first (a
//!   follower lagging behind the expiry) makes it leader again, beside the real leader.
//! - `LEADER_LATCH_BEFORE_696_SYNC` (`leader-latch-696-sync`): the same latch with a `sync` of the
//!   latch path sent before every listing (what stale-read fixes do elsewhere: sync, then read),
//!   which Curator did not do: the listing is then answered by a follower that has caught up, and
//!   the double leader is gone without the owner check.
//! - `LEADER_LATCH_BEFORE_644` (`leader-latch-644`): before CURATOR-644/645 LeaderLatch reset
//!   itself on RECONNECTED: delete its node and create a new one, which is also what it did when
//!   getData found its predecessor gone. After a single disconnect, two latches resetting each
//!   other that way never settle (the livelock).
//!
//! **What the model leaves out.** It drops leadership on SUSPENDED only under the default
//! connection-state error policy, which is the one modelled. Not modelled: the latch's participant
//! id, its listeners and close modes, and its reset when the latch path itself is gone
//! (CURATOR-724).

use crate::contender::{AfterExpiry, Naming, Recheck, Reentry, Style, Watch};
use crate::queue::Order;

/// Curator's LeaderLatch as of CURATOR-696 (and CURATOR-644/645 before it).
pub const LEADER_LATCH: Style = Style {
    naming: Naming::Protected,
    marker: "latch-",
    watch: Watch::GetDataDeleted,
    order: Order::Text,
    on_predecessor_gone: Recheck::List,
    on_reconnect: Recheck::List,
    after_expiry: AfterExpiry::Reconnect,
    holder_resumes: false,
    session_check: true,
    owner_check: true,
    reentry: Reentry::None,
    sync_before_listing: false,
};

/// LeaderLatch between CURATOR-644/645 and CURATOR-696: first in a listing, it leads without
/// asking whose its node is, so a stale listing on a new session can make it leader.
pub const LEADER_LATCH_BEFORE_696: Style = Style { owner_check: false, ..LEADER_LATCH };

/// LeaderLatch before CURATOR-696 with a `sync` before every listing: the other fix of its
/// double leader. The listing on the new session comes after the follower has caught up with
/// the leader, so it no longer shows the expired session's node.
pub const LEADER_LATCH_BEFORE_696_SYNC: Style = Style { sync_before_listing: true, ..LEADER_LATCH_BEFORE_696 };

/// LeaderLatch before CURATOR-644/645: resets (deletes its node and creates a new one) when
/// its predecessor is gone at the getData and on every reconnect. Its livelock creates nodes
/// forever; the checker closes its graph by renumbering (see docs/bugzoo.md).
pub const LEADER_LATCH_BEFORE_644: Style =
    Style { on_predecessor_gone: Recheck::Reset, on_reconnect: Recheck::Reset, owner_check: false, ..LEADER_LATCH };
