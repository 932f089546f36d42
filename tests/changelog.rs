//! The crates' version follows CHANGELOG.md: its newest heading names the version Cargo.toml
//! gives, so a change that asks recipe authors to migrate cannot ship under the old number.

#[test]
fn the_newest_changelog_heading_is_the_crate_s_version() {
    let changelog = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/CHANGELOG.md")).unwrap();
    let newest = changelog.lines().find(|l| l.starts_with("## ")).expect("a version heading");
    let version = newest.trim_start_matches("## ").split_whitespace().next().unwrap();
    assert_eq!(version, env!("CARGO_PKG_VERSION"), "CHANGELOG.md's newest heading: {newest}");
    assert!(changelog.contains("**Migration:**"), "each entry says how to migrate");
}
