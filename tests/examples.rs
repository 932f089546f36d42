//! The commands a user is shown work as written: every argument of every subcommand has help,
//! every subcommand's help ends with one example, and each example and each `zklab` line of
//! the README is run here, as a shell would run it, in a fresh directory that sees the
//! checkout's `traces/`, `conformance/` and `tests/`. Those that start a real ZooKeeper, kazoo
//! or Java are run by tests/real/examples.rs; the rest here, in every `cargo test`.

#[path = "support/commands.rs"]
mod commands;

use commands::{examples, needs_a_server, readme_commands, runs_as_written, Sandbox};

#[test]
fn every_argument_has_help_and_every_subcommand_one_example() {
    let command = <zklab::cli::Cli as clap::CommandFactory>::command();
    for sub in command.get_subcommands() {
        for arg in sub.get_arguments().filter(|a| !["help", "version"].contains(&a.get_id().as_str())) {
            assert!(arg.get_help().is_some(), "`zklab {}`: `{}` has no help text", sub.get_name(), arg.get_id());
        }
    }
    assert_eq!(examples().len(), command.get_subcommands().count());
}

#[test]
fn every_subcommand_s_example_works_as_written() {
    let sandbox = Sandbox::new("help");
    for (name, line) in examples().into_iter().filter(|(_, l)| !needs_a_server(l)) {
        runs_as_written(&sandbox, &line, 0);
        if name == "completions" {
            let script = std::fs::read_to_string(sandbox.0.join("zklab.bash")).unwrap();
            assert!(script.contains("_zklab()"), "a bash completion script: {}", &script[..script.len().min(200)]);
        }
    }
}

#[test]
fn every_readme_command_does_what_its_text_says() {
    let sandbox = Sandbox::new("readme");
    let commands = readme_commands();
    assert!(commands.len() >= 20, "the README's commands were found: {commands:?}");
    // `tests/manifest.rs` runs the manifest; the completions line writes under $HOME.
    let here = |l: &String| !l.contains("--manifest") && !l.contains("completions") && !needs_a_server(l);
    for (line, code) in commands.into_iter().filter(|(l, _)| here(l)) {
        runs_as_written(&sandbox, &line, code);
    }
    // What the HTML line promises: each counterexample's page beside its trace.
    let pages = std::fs::read_dir(sandbox.0.join("zklab-traces")).unwrap();
    assert!(pages
        .filter_map(Result::ok)
        .any(|f| f.path().to_string_lossy().ends_with("blind-retry-n2-no_orphans.html")));
}
