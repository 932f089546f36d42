//! The teaching pages show real traces: every timeline or diagram block in docs/ marked with the
//! trace it comes from must be exactly what replaying that trace prints today.

use std::path::{Path, PathBuf};
use zklab::trace::Trace;

/// Every page in docs/ (Markdown) with its text.
fn pages() -> Vec<(PathBuf, String)> {
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs");
    let paths = std::fs::read_dir(docs).unwrap().map(|entry| entry.unwrap().path());
    let markdown = paths.filter(|page| page.extension().is_some_and(|e| e == "md"));
    markdown.map(|page| (page.clone(), std::fs::read_to_string(&page).unwrap())).collect()
}

#[test]
fn every_timeline_in_the_docs_is_a_fresh_replay_of_its_trace() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut checked = 0;
    for (page, text) in pages() {
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
                assert_eq!(
                    shown,
                    fresh,
                    "{}: the block for {trace_path} is stale (run scripts/docs-timelines.sh)",
                    page.display()
                );
                checked += 1;
            }
        }
    }
    assert!(checked >= 5, "the pitfalls page shows at least four timelines and a diagram, found {checked}");
}

/// Every trace a page shows as a text timeline also has its HTML timeline in docs/timelines/,
/// exactly as `zklab replay --html` writes it today (`scripts/docs-html.sh` writes them all),
/// and the page links it.
#[test]
fn every_timeline_in_the_docs_has_a_fresh_html_page_that_its_page_links() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut checked = 0;
    for (page, text) in pages() {
        for block in text.split("<!-- timeline: ").skip(1) {
            let trace_path = block.split_once(" -->").expect("a marker ends").0;
            let stem = Path::new(trace_path).file_stem().unwrap().to_string_lossy().to_string();
            let link = format!("(timelines/{stem}.html)");
            assert!(text.contains(&link), "{} does not link {link}", page.display());
            let kept = root.join("docs/timelines").join(format!("{stem}.html"));
            let kept = std::fs::read_to_string(&kept)
                .unwrap_or_else(|e| panic!("{}: {e} (run scripts/docs-html.sh)", kept.display()));
            let trace = Trace::load(&root.join(trace_path)).unwrap_or_else(|e| panic!("{e}"));
            let fresh = zklab::html::render(&trace).unwrap();
            assert!(kept == fresh, "docs/timelines/{stem}.html is stale (run scripts/docs-html.sh)");
            checked += 1;
        }
    }
    assert!(checked >= 20, "one HTML timeline per pitfall shown in the docs, found {checked}");
}
