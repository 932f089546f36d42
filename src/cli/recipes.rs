//! `zklab recipes`: the catalogue, its flaws and the fault names.

use crate::exit::Exit;

/// Lists the catalogue, the fault names and the client behaviours.
pub fn run() -> Exit {
    say!("recipes:");
    for e in zklab_recipes::CATALOGUE {
        match &e.flaw {
            None => say!("  {:<20} {}", e.name, e.summary),
            Some(f) => say!(
                "  {:<20} {} [flaw: {}; breaks {}]",
                e.name,
                e.summary,
                f.bug,
                f.breaks.iter().map(|p| p.name()).collect::<Vec<_>>().join(", ")
            ),
        }
    }
    say!("faults:");
    for k in zklab_model::FaultKind::ALL {
        say!("  {}", k.name());
    }
    say!("  all");
    say!("client behaviours: java (re-arms watches on reconnect), kazoo (drops them)");
    Exit::Passed
}
