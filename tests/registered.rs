//! A program's own recipe, registered beside the catalogue (what `zklab::cli::main_with` does
//! before it runs the command line), runs wherever recipes are named: scenarios, the checker,
//! traces and their replay, the simulator. Registration is once per process, so this file is
//! one story.

use zklab::check::{self, Options, Status};
use zklab::recipes::sequential::{SequentialLock, Style};
use zklab::recipes::{AnyRecipe, Entry, Flaw};
use zklab::scenario::{parse_faults, Scenario};
use zklab::trace::Trace;
use zklab_model::{Property, WorldConfig};

/// The standard lock under another name, with a variant of the user's own that forgets to look
/// for its node after a lost create reply.
const MINE: &[Entry] = &[
    Entry::new("my-standard", "the standard lock, registered by a user", |lock| {
        AnyRecipe::custom(SequentialLock::new("my-standard", lock, Style::STANDARD))
    }),
    Entry::new("my-blind-retry", "creates again after a lost create reply", |lock| {
        let variant =
            Style { on_create_loss: zklab::recipes::sequential::OnCreateLoss::CreateAgain, ..Style::STANDARD };
        AnyRecipe::custom(SequentialLock::new("my-blind-retry", lock, variant))
    })
    .with_flaw(Flaw { bug: "orphan-after-connloss", breaks: &[Property::NoOrphans, Property::EventualAcquire] }),
];

const TAKEN: &[Entry] =
    &[Entry::new("standard", "a name the catalogue has", |lock| zklab::recipes::build("naive", lock).unwrap())];

fn scenario(recipes: &str, faults: &str) -> Scenario {
    let config = WorldConfig { faults: parse_faults(faults).unwrap(), ..WorldConfig::default() };
    Scenario::new(recipes, 2, config).unwrap()
}

#[test]
fn a_registered_recipe_is_checked_traced_and_replayed_as_the_catalogues_are() {
    assert!(Scenario::new("my-standard", 2, WorldConfig::default()).is_err(), "unknown before registration");
    let refused = zklab::recipes::register(TAKEN).unwrap_err();
    assert!(refused.contains("already in the catalogue"), "{refused}");
    zklab::recipes::register(MINE).unwrap();
    assert!(zklab::recipes::register(MINE).is_err(), "once per process");

    // The same lock under its catalogue name and as a user's: the same graph, the same verdicts.
    let options = Options { stop_at_violation: false, ..Options::default() };
    let faults = "loss-after-apply,expire";
    let theirs = check::run(&scenario("standard", faults), &options);
    let mine = check::run(&scenario("my-standard", faults), &options);
    assert_eq!(mine.outcome.unique_states, theirs.outcome.unique_states);
    assert_eq!(
        mine.properties.iter().map(|p| (p.name, p.status)).collect::<Vec<_>>(),
        theirs.properties.iter().map(|p| (p.name, p.status)).collect::<Vec<_>>()
    );
    assert!(mine.properties.iter().all(|p| p.status == Status::Holds));

    // A flawed one mixed with a catalogue recipe: caught, and its trace names it and replays.
    let broken = check::run(&scenario("my-blind-retry,standard", "loss-after-apply"), &options);
    let found = broken.properties.iter().find(|p| p.name == "no_orphans").unwrap();
    assert_eq!(found.status, Status::Violated);
    let trace = found.trace.clone().unwrap();
    let file = std::env::temp_dir().join(format!("zklab-registered-{}.json", std::process::id()));
    std::fs::write(&file, trace.to_json()).unwrap();
    let reloaded = Trace::load(&file).unwrap();
    std::fs::remove_file(&file).unwrap();
    assert_eq!(reloaded.scenario.recipes, ["my-blind-retry", "standard"]);
    reloaded.replay().unwrap();
    assert!(zklab::timeline::render(&reloaded).unwrap().contains("my-blind-retry"));
}
