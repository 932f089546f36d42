//! The flags that describe a world, shared by the commands that build one (`check`, `explore`).

use super::ClientChoice;
use crate::scenario::parse_rounds;

#[derive(clap::Args)]
pub struct WorldArgs {
    /// How many clients take the lock (1 to the recipe's limit; each runs the recipe once per
    /// round).
    #[arg(long, default_value_t = 2)]
    pub clients: usize,
    /// Comma list of faults (loss-before-apply, loss-after-apply, disconnect, expire, crash, pause,
    /// lagging-read, reap-parent, give-up, lagging-session, operator-delete), each once or `kind=N`
    /// times, `all` (every kind but operator-delete) or `none`.
    #[arg(long, default_value = "none")]
    pub faults: String,
    /// How many times each client acquires and releases (1 to 254), or `unbounded`: each client
    /// asks again whenever it is idle, forever, so starvation by overtaking can be found.
    #[arg(long, default_value = "1", value_parser = parse_rounds)]
    pub rounds: u8,
    /// Client library behaviour on reconnect.
    #[arg(long, value_enum, default_value = "java")]
    pub client: ClientChoice,
}
