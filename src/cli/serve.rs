//! `zklab serve`: the model as a ZooKeeper server on a loopback port, until Ctrl-C (or the time
//! asked for), then a summary of what it served.

use super::CliError;
use crate::exit::Exit;
use std::time::{Duration, Instant};
use zklab_model::server::ServerConfig;

#[derive(clap::Args)]
pub struct Args {
    /// The loopback port to listen on (0: any free port, printed).
    #[arg(long, default_value_t = 2181)]
    pub port: u16,
    /// The server's tick: session timeouts are negotiated into [2, 20] ticks, as on ZooKeeper.
    #[arg(long, default_value_t = crate::serve::ZOOKEEPER_TICK_MS, value_parser = clap::value_parser!(u32).range(1..=600_000))]
    pub tick_ms: u32,
    /// ZooKeeper's minSessionTimeout [default: 2 ticks].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=86_400_000))]
    pub min_session_timeout_ms: Option<u32>,
    /// ZooKeeper's maxSessionTimeout [default: 20 ticks].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=86_400_000))]
    pub max_session_timeout_ms: Option<u32>,
    /// Stop after this many seconds instead of at Ctrl-C.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=31_536_000))]
    pub for_seconds: Option<u64>,
}

pub fn run(args: &Args) -> Result<Exit, CliError> {
    let config = ServerConfig {
        tick_ms: args.tick_ms,
        min_session_timeout_ms: args.min_session_timeout_ms,
        max_session_timeout_ms: args.max_session_timeout_ms,
        ..ServerConfig::default()
    };
    if let (Some(min), Some(max)) = (args.min_session_timeout_ms, args.max_session_timeout_ms) {
        if min > max {
            return Err(CliError::BadInput(format!(
                "--min-session-timeout-ms {min} is above --max-session-timeout-ms {max}"
            )));
        }
    }
    let running = crate::serve::start(args.port, config).map_err(CliError::BadInput)?;
    super::stop_on_ctrl_c();
    // The address goes to stdout alone, so a script can read it (`--port 0`).
    say!("{}", running.addr());
    eprintln!(
        "zklab serves its ZooKeeper model on {} (tick {} ms); {}",
        running.addr(),
        args.tick_ms,
        match args.for_seconds {
            Some(s) => format!("stopping after {s} s or at Ctrl-C"),
            None => "Ctrl-C stops".to_string(),
        }
    );
    let started = Instant::now();
    let deadline = args.for_seconds.map(|s| started + Duration::from_secs(s));
    while !crate::interrupt::interrupted() && deadline.is_none_or(|d| Instant::now() < d) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let tally = running.stop();
    let requests: u64 = tally.requests.values().sum();
    let ops = tally.requests.iter().map(|(op, n)| format!("{op} {n}")).collect::<Vec<_>>().join(", ");
    eprintln!(
        "served {} connections, {} sessions, {} requests ({}), {} notifications, {} sessions expired",
        tally.connections,
        tally.sessions,
        requests,
        if ops.is_empty() { "none".to_string() } else { ops },
        tally.notifications,
        tally.expired
    );
    if !tally.unserved.is_empty() {
        let unserved = tally.unserved.iter().map(|(op, n)| format!("op {op} x{n}")).collect::<Vec<_>>().join(", ");
        eprintln!("answered Unimplemented (not served by the model): {unserved}");
    }
    Ok(Exit::Passed)
}
