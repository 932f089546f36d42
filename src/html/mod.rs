//! A trace as one self-contained HTML page (no network, no CDN): a lane per client and one for
//! the server, requests, replies and watch events as arrows in step order (or virtual time, for
//! a simulated run), faults marked, each client's belief as a band, and for the selected step the
//! nodes under the lock, their watches and every property's judgement. The keyboard and the mouse
//! step through it. The same trace always gives the same bytes.

pub(crate) mod frames;

use crate::trace::{Trace, TraceError};
use std::path::{Path, PathBuf};

/// The pages' templates: the timeline, a client-check schedule, the explorer, and what they
/// share (style, and the script that shows a state as tables). Each page inlines what it
/// includes: nothing is fetched.
const TEMPLATES: [(&str, &str); 6] = [
    ("timeline.html", include_str!("timeline.html")),
    ("schedule.html", include_str!("schedule.html")),
    ("explorer.html", include_str!("../explore/explorer.html")),
    ("lessons.html", include_str!("../explore/lessons.html")),
    ("common.css", include_str!("common.css")),
    ("state.js", include_str!("state.js")),
];

/// The templates, ready to render.
pub(crate) fn templates() -> minijinja::Environment<'static> {
    let mut env = minijinja::Environment::new();
    for (name, text) in TEMPLATES {
        env.add_template(name, text).expect("the page templates parse");
    }
    env
}

/// The most clients a page draws a lane for: a page holds every client's state at every step,
/// so a simulation of thousands of clients is read with `replay --show` instead.
pub const MAX_CLIENTS: usize = 32;

/// The most steps a page draws.
pub const MAX_STEPS: usize = 20_000;

/// Whether `trace` fits a page (at most `MAX_CLIENTS` clients and `MAX_STEPS` steps), or why not.
pub fn fits(trace: &Trace) -> Result<(), String> {
    let (clients, steps) = (trace.scenario.recipes.len(), trace.steps.len());
    match clients > MAX_CLIENTS || steps > MAX_STEPS {
        true => Err(format!(
            "{clients} clients and {steps} steps are too many for a page (at most {MAX_CLIENTS} clients and \
                {MAX_STEPS} steps): use replay --show"
        )),
        false => Ok(()),
    }
}

/// Renders `trace` as an HTML timeline (at most `MAX_CLIENTS` clients and `MAX_STEPS` steps).
pub fn render(trace: &Trace) -> Result<String, TraceError> {
    fits(trace).map_err(TraceError::TooLarge)?;
    let page = frames::page(trace)?;
    let env = templates();
    let template = env.get_template("timeline.html").expect("a built-in template");
    let page_value = minijinja::Value::from(minijinja::value::Serde(&page));
    let html = template
        .render(minijinja::context! { title => &page.title, page => page_value })
        .expect("the timeline template renders");
    Ok(html)
}

/// Writes `trace`'s page beside its JSON file (`x.json` gives `x.html`); the file written.
pub fn write_beside(trace: &Trace, json_file: &Path) -> std::io::Result<PathBuf> {
    let file = json_file.with_extension("html");
    let html = render(trace).map_err(|e| std::io::Error::other(format!("{}: {e}", json_file.display())))?;
    crate::user_files::write_output(&file, &html, crate::user_files::Output::Page)?;
    Ok(file)
}
