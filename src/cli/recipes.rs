//! `zklab recipes`: the catalogue, its flaws and the fault names.

use crate::exit::Exit;

/// Lists the catalogue, the program's own recipes, the fault names and the client behaviours.
pub fn run() -> Exit {
    say!("recipes:");
    list(zklab_recipes::CATALOGUE);
    if !zklab_recipes::registered().is_empty() {
        say!("this program's own recipes:");
        list(zklab_recipes::registered());
    }
    say!("faults:");
    for k in zklab_model::FaultKind::ALL {
        say!("  {}", k.name());
    }
    say!("  all");
    say!("client behaviours: java (re-arms watches on reconnect), kazoo (drops them)");
    Exit::Passed
}

fn list(entries: &[zklab_recipes::Entry]) {
    for e in entries {
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
}
