//! How a run that takes one step at a time is judged, as the checker judges a state: the
//! safety properties that can break at any moment after every step, given who holds; the end
//! of the run (every live waiter has acquired, nothing is orphaned) once faults have stopped.
//! The simulator and the real backend's model world both judge with it, so a real run and a
//! simulated one break a property for the same reason.

use std::collections::BTreeSet;
use zklab_model::property::herd_after;
use zklab_model::{ClientId, Property, Recipe, Step, World};

/// A property a run broke, with what the report says of it. A liveness property is broken
/// only by a deadlock (a client waits and nothing but a fault can happen): a run that ends with
/// someone still waiting while steps remain is `Ending::Undecided`, never broken, since a
/// bounded run cannot tell a slow lock from a stuck one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Broken {
    pub property: Property,
    pub detail: String,
}

/// How a run's end is judged when it is not a pass.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ending {
    /// A property is broken for certain: a replay of the steps shows it.
    Broken(Broken),
    /// Someone still waits, but the world was not deadlocked: the bound ran out before the run
    /// could tell. The reason says who waits and for how long.
    Undecided(String),
}

/// The holders a run keeps track of, and the properties its recipes say apply to them.
pub struct Judge {
    /// Live clients that believe they hold.
    holders: BTreeSet<ClientId>,
    /// The properties the recipes say apply to them (`Recipe::applies`): only those are judged.
    applicable: Vec<Property>,
}

impl Judge {
    pub fn new<R: Recipe>(world: &World<R>) -> Self {
        Judge { holders: BTreeSet::new(), applicable: Property::applicable(world) }
    }

    /// Notes client `i`'s hold after its step (`held`: whether it held before); says whether
    /// the step made it a holder.
    pub fn after_step<R: Recipe>(&mut self, world: &World<R>, i: ClientId, held: bool) -> bool {
        // A crash ends a hold: the holders are the live clients that believe they hold.
        let holds = world.clients[i as usize].holds();
        match (held, holds) {
            (false, true) => self.holders.insert(i),
            (true, false) => {
                self.holders.remove(&i);
                false
            }
            _ => false,
        }
    }

    /// The safety property that can break at any moment and is broken now, judged as the
    /// checker judges it. `no_orphans` speaks of a world where nothing but a fault can happen,
    /// so it is judged at the end (`the_end`).
    pub fn safety<R: Recipe>(&self, world: &World<R>) -> Option<Property> {
        let holders: Vec<ClientId> = self.holders.iter().copied().collect();
        let at_any_moment = [
            Property::BeliefExclusion,
            Property::FencedExclusion,
            Property::ZkExclusion,
            Property::BarrierWaits,
            Property::TakenOnce,
        ];
        at_any_moment.into_iter().find(|p| self.applicable.contains(p) && !p.holds_among(world, &holders))
    }

    /// `no_herd`, judged on the step just taken from the world after it (`herd_after`, from the
    /// notifications the step queued): the clients it woke together, if two or more of them
    /// waited to hold alone and the property applies.
    pub fn herd<R: Recipe>(&self, step: Step, world: &World<R>) -> Option<Vec<ClientId>> {
        if world.routed().len() < 2 || !self.applicable.contains(&Property::NoHerd) {
            return None;
        }
        Some(herd_after(step, world)).filter(|woken| woken.len() >= 2)
    }

    /// After the healed phase: every live waiter has acquired, and nothing is left orphaned.
    /// `healed_ms` is how long the run went on after its faults stopped, `now_ms` when it ended.
    /// Whether `property` applies to this world's recipes (and is judged).
    pub fn judges(&self, property: Property) -> bool {
        self.applicable.contains(&property)
    }

    /// `eventual_acquire` is broken only by a deadlock; waiters in a world that can still move
    /// leave the end undecided. `no_orphans` is judged only where nothing but a fault can
    /// happen (as the checker judges it): a node left by a client that is still working is no
    /// orphan yet.
    pub fn the_end<R: Recipe>(&self, world: &World<R>, healed_ms: u64, now_ms: u64) -> Option<Ending> {
        if !world.waiting().is_empty() && self.applicable.contains(&Property::EventualAcquire) {
            let names = |ids: &[ClientId]| ids.iter().map(|c| format!("c{c}")).collect::<Vec<_>>().join(", ");
            let holders: Vec<ClientId> = self.holders.iter().copied().collect();
            let holder = if holders.is_empty() { "none".to_string() } else { names(&holders) };
            return Some(match world.deadlocked() {
                true => Ending::Broken(Broken {
                    property: Property::EventualAcquire,
                    detail: format!(
                        "{} and nothing but a fault can happen (from {now_ms} ms on); holder: {holder}",
                        waiters(world)
                    ),
                }),
                false => Ending::Undecided(format!(
                    "{} still {healed_ms} ms after the faults stopped, but steps remain (no deadlock); holder: \
                     {holder}",
                    waiters(world)
                )),
            });
        }
        if self.applicable.contains(&Property::NoOrphans) && !Property::NoOrphans.holds(world) {
            return Some(Ending::Broken(Broken { property: Property::NoOrphans, detail: orphaned(world) }));
        }
        None
    }
}

/// How a simulated run's end names its waiters: "3 clients wait (c0, c1, c2)", the first ten
/// by name. A replay checks that a trace's summary starts so.
pub fn waiters<R: Recipe>(world: &World<R>) -> String {
    let waiting = world.waiting();
    let shown = &waiting[..waiting.len().min(10)];
    let names = shown.iter().map(|c| format!("c{c}")).collect::<Vec<_>>().join(", ");
    let more = match waiting.len() > shown.len() {
        true => format!(" and {} more", waiting.len() - shown.len()),
        false => String::new(),
    };
    format!("{} ({names}{more})", count(waiting.len()))
}

/// How a simulated run's end names its orphaned nodes.
pub fn orphaned<R: Recipe>(world: &World<R>) -> String {
    format!("orphaned lock nodes: {}", world.orphans().join(", "))
}

/// "1 client waits", "3 clients wait".
fn count(waiting: usize) -> String {
    match waiting {
        1 => "1 client waits".to_string(),
        n => format!("{n} clients wait"),
    }
}
