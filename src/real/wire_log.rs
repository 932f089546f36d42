//! The wire log of a real run: every frame the driver sent or received on its clients'
//! connections, and every connection it opened, cut or moved, in the order it happened, with
//! the time. A run that breaks a property or that the model could not follow writes it beside
//! its trace (`NAME.wire.jsonl`, one JSON object per line), so what the real server said can be
//! read exchange by exchange, beside the trace's steps and the committed transaction log.

use serde::Serialize;

/// One thing on the wire.
#[derive(Clone, Debug, Serialize)]
pub struct WireEntry {
    /// Microseconds since the run began.
    pub at_us: u64,
    pub client: usize,
    /// `sent`, `received` or `connection`.
    pub kind: &'static str,
    /// What it was: `create /lock/c0-s2-lock- (xid 3)`, `reply xid 3 zxid 0x100000004 ok`,
    /// `notification NodeDeleted /lock/...`, `open session 0x... on 127.0.0.1:...`, `cut`, ...
    pub what: String,
}

/// The log, kept while the run goes.
#[derive(Default)]
pub struct WireLog {
    entries: Vec<WireEntry>,
}

impl WireLog {
    pub fn push(&mut self, at_us: u64, client: usize, kind: &'static str, what: String) {
        self.entries.push(WireEntry { at_us, client, kind, what });
    }

    /// The run's clock started over: what was logged before is at its start.
    pub fn restart(&mut self) {
        for e in &mut self.entries {
            e.at_us = 0;
        }
    }

    pub fn into_entries(self) -> Vec<WireEntry> {
        self.entries
    }
}

/// The log as JSON lines.
pub fn to_jsonl(entries: &[WireEntry]) -> String {
    entries.iter().map(|e| serde_json::to_string(e).expect("an entry serializes") + "\n").collect()
}
