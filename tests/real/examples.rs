//! The commands a user is shown that start a real ZooKeeper, kazoo or Java work as written:
//! each such subcommand example and README line, run as a shell would run it (the others are
//! run by tests/examples.rs in every `cargo test`).

use crate::commands::{examples, needs_a_server, readme_commands, runs_as_written, Sandbox};

#[test]
fn every_subcommand_s_example_that_needs_a_server_works_as_written() {
    let _gate = crate::gate::enter(crate::gate::Kind::Servers);
    let sandbox = Sandbox::new("help-real");
    let real: Vec<_> = examples().into_iter().filter(|(_, l)| needs_a_server(l)).collect();
    assert!(real.len() >= 3, "the examples that start something real were found: {real:?}");
    for (_, line) in real {
        runs_as_written(&sandbox, &line, 0);
    }
}

#[test]
fn every_readme_command_that_needs_a_server_does_what_its_text_says() {
    let _gate = crate::gate::enter(crate::gate::Kind::Servers);
    let sandbox = Sandbox::new("readme-real");
    let real: Vec<_> = readme_commands().into_iter().filter(|(l, _)| needs_a_server(l)).collect();
    assert!(real.len() >= 3, "the README's commands that start something real were found: {real:?}");
    // "A real server of yours": one started here stands in for it, at its own address.
    let yours = zklab::real::Ensemble::start(1).expect("ZooKeeper starts");
    for (line, code) in real {
        runs_as_written(&sandbox, &line.replace("127.0.0.1:2181", &yours.servers[0]), code);
    }
}
