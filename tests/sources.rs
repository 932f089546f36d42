//! Recipes modelled from their real sources, and what the checker finds in them.

use zklab::check::check;
use zklab::check::Status;
use zklab::model::{ClientBehaviour, FaultKind};
use zklab_model::Property;
use zklab_recipes::kazoo_lock::KazooLock;
use zklab_recipes::write_lock::WriteLock;

#[test]
fn write_lock_waits_forever_when_its_predecessor_vanishes_before_exists() {
    let checked = check(WriteLock::new).clients(2).explore_everything().run();
    checked.assert_violates(Property::EventualAcquire);
    for safety in [Property::BeliefExclusion, Property::FencedExclusion, Property::ZkExclusion, Property::NoOrphans] {
        assert_eq!(checked.status(safety), Some(Status::Holds), "{safety:?}");
    }
    let timeline = checked.timeline(Property::EventualAcquire).unwrap();
    assert!(timeline.contains("exists"), "{timeline}");
}

#[test]
fn write_lock_forgets_a_node_whose_unlock_was_lost() {
    let checked = check(WriteLock::new).clients(2).faults(&[FaultKind::LossBeforeApply]).explore_everything().run();
    let cx = checked.assert_violates(Property::NoOrphans);
    assert!(cx.steps.iter().any(|s| s.is_fault()));
}

#[test]
fn write_lock_holder_never_learns_its_session_expired() {
    let checked = check(WriteLock::new).clients(2).faults(&[FaultKind::Expire]).explore_everything().run();
    checked.assert_violates(Property::BeliefExclusion);
    assert_eq!(checked.status(Property::ZkExclusion), Some(Status::Holds));
}

#[test]
fn kazoo_lock_survives_lost_requests_replies_and_disconnects() {
    for behaviour in [ClientBehaviour::Java, ClientBehaviour::Kazoo] {
        let faults = [FaultKind::LossBeforeApply, FaultKind::LossAfterApply, FaultKind::Disconnect];
        check(KazooLock::new).clients(2).faults(&faults).client_behaviour(behaviour).run().assert_proven();
    }
    check(KazooLock::new).clients(3).faults(&[FaultKind::LossAfterApply]).run().assert_proven();
}

#[test]
fn kazoo_lock_holder_never_learns_its_session_expired() {
    let checked = check(KazooLock::new).clients(2).faults(&[FaultKind::Expire]).explore_everything().run();
    checked.assert_violates(Property::BeliefExclusion);
    for holds in [Property::FencedExclusion, Property::ZkExclusion, Property::NoOrphans, Property::EventualAcquire] {
        assert_eq!(checked.status(holds), Some(Status::Holds), "{holds:?}");
    }
}

#[test]
fn every_recipe_file_opens_with_source_what_it_does_gets_wrong_and_leaves_out() {
    const HEADINGS: [&str; 4] =
        ["**Source.**", "**What it does.**", "**What it gets wrong.**", "**What the model leaves out.**"];
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("recipes/src");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "rs"))
        .filter(|path| !["lib.rs", "registry.rs", "queue.rs", "custom.rs"].iter().any(|skip| path.ends_with(skip)))
        .collect();
    files.sort();
    assert!(files.len() >= 12, "recipe files: {files:?}");
    for file in files {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&file).unwrap();
        let doc: String =
            text.lines().take_while(|line| line.starts_with("//!")).map(|line| line.to_string() + "\n").collect();
        let mut from = 0;
        for heading in HEADINGS {
            let Some(at) = doc[from..].find(heading) else {
                match doc.contains(heading) {
                    true => panic!("{name}: {heading} is out of order in its leading //! doc"),
                    false => panic!("{name}: its leading //! doc has no {heading}"),
                }
            };
            from += at + heading.len();
        }
    }
}
