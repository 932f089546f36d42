//! The teaching pages show real traces: every timeline block in docs/ marked with the trace it
//! comes from must be exactly what replaying that trace prints today.

use std::path::Path;
use zklab::trace::Trace;

#[test]
fn every_timeline_in_the_docs_is_a_fresh_replay_of_its_trace() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut checked = 0;
    for entry in std::fs::read_dir(root.join("docs")).unwrap() {
        let page = entry.unwrap().path();
        if page.extension().is_none_or(|e| e != "md") {
            continue;
        }
        let text = std::fs::read_to_string(&page).unwrap();
        for block in text.split("<!-- timeline: ").skip(1) {
            let (trace_path, rest) = block.split_once(" -->\n```text\n").expect("a marker is followed by a text block");
            let shown = rest.split_once("```").expect("the block is closed").0;
            let trace = Trace::load(&root.join(trace_path)).unwrap_or_else(|e| panic!("{e}"));
            let fresh = zklab::timeline::render(&trace).unwrap();
            assert_eq!(shown, fresh, "{}: the timeline of {trace_path} is stale", page.display());
            checked += 1;
        }
    }
    assert!(checked >= 4, "the pitfalls page shows at least four traces, found {checked}");
}
