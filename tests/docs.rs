//! The teaching pages show real traces: every timeline or diagram block in docs/ marked with the
//! trace it comes from must be exactly what replaying that trace prints today.

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
        let renderers: [(&str, &str, zklab::trace::Renderer); 2] = [
            ("<!-- timeline: ", " -->\n```text\n", zklab::timeline::render),
            ("<!-- diagram: ", " -->\n```mermaid\n", zklab::diagram::mermaid),
        ];
        for (marker, fence, render) in renderers {
            for block in text.split(marker).skip(1) {
                let (trace_path, rest) = block.split_once(fence).expect("a marker is followed by its block");
                let shown = rest.split_once("```").expect("the block is closed").0;
                let trace = Trace::load(&root.join(trace_path)).unwrap_or_else(|e| panic!("{e}"));
                let fresh = render(&trace).unwrap();
                assert_eq!(shown, fresh, "{}: the block for {trace_path} is stale", page.display());
                checked += 1;
            }
        }
    }
    assert!(checked >= 5, "the pitfalls page shows at least four timelines and a diagram, found {checked}");
}
