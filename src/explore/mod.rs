//! `zklab explore`: the learner plays the scheduler. A local page (127.0.0.1 only) shows a world's
//! state (the nodes under the lock and their watches, each client's belief, link and queue) and
//! every step enabled in it (deliver a message, take an application step, lose a reply, drop a
//! connection, expire a session, pause a process); the learner picks the next one, can undo, and
//! can load a trace to step through. Each position is the list of steps from the start, replayed
//! by the model on every request, so the page and a trace are the same thing.
//!
//! "Break it": the checker first looks for the shortest violation of the world (stopping at the
//! first, as `zklab check` does); the page says what to break and in how many steps it can be
//! done, and says when the learner's position breaks it.

pub mod lessons;
mod state;

pub use lessons::{Lesson, LESSONS};
pub use state::{position, Choice, NotAPosition, Position};

use crate::check::{self, Options, Status};
use crate::scenario::Scenario;
use crate::trace::Trace;
use serde::Serialize;
use std::io::Read;
use std::time::Duration;
use zklab_model::{Property, Step};

/// The largest request body the server reads (a trace of many thousand steps fits).
const MAX_BODY: u64 = 16 << 20;

/// What the learner is asked to break, as the checker found it.
#[derive(Clone, Debug, Serialize)]
pub struct Goal {
    /// The property the shortest violation breaks, or `None` when the world is proven (nothing
    /// to break) or the search ran out of budget (`bounded`).
    pub property: Option<String>,
    /// Its length in steps.
    pub shortest: Option<usize>,
    pub summary: String,
    pub bounded: bool,
}

/// The checker's shortest violation of `scenario`, within `timeout`; of `property` alone when
/// one is given (a loaded trace's: the goal is what that trace breaks, not whatever breaks
/// first).
pub fn goal(scenario: &Scenario, timeout: Duration, property: Option<Property>) -> Goal {
    // Reached items are always judged: a property of that kind is the shortest anyway.
    let only = property.filter(|p| p.kind() != check::properties::Kind::Reached);
    let options =
        Options { timeout: Some(timeout), progress: None, properties: only.map(|p| vec![p]), ..Options::default() };
    let report = check::run(scenario, &options);
    let violated = report.properties.iter().filter(|p| p.status == Status::Violated);
    let wanted = violated.filter(|p| property.is_none_or(|wanted| p.name == wanted.name()));
    let shortest = wanted.filter_map(|p| Some((p, p.trace.as_ref()?))).min_by_key(|(_, t)| t.steps.len());
    match shortest {
        Some((p, trace)) => Goal {
            property: Some(p.name.to_string()),
            shortest: Some(trace.steps.len()),
            summary: trace.summary.clone(),
            bounded: false,
        },
        None if report.outcome.bounded => Goal {
            property: property.map(|p| p.name().to_string()),
            shortest: None,
            summary: "the checker ran out of time before finding a violation or proving the world".to_string(),
            bounded: true,
        },
        None => Goal {
            property: None,
            shortest: None,
            summary: "the checker proves this world: no order of steps breaks a property".to_string(),
            bounded: false,
        },
    }
}

/// The page for `scenario`, starting at `steps` (a loaded trace's); for a level of the lessons,
/// with its task, hint, bug and the address of the next level.
pub fn page(scenario: &Scenario, goal: &Goal, steps: &[Step], lesson: Option<(&Lesson, Option<String>)>) -> String {
    let world = scenario.world();
    let lanes: Vec<String> = world
        .clients
        .iter()
        .enumerate()
        .map(|(i, c)| format!("c{i} {}", zklab_model::Recipe::name(&c.recipe)))
        .collect();
    let title = format!("explore {} with {} clients", scenario.recipe_label(), lanes.len());
    let faults = zklab_model::FaultKind::ALL
        .iter()
        .filter(|k| scenario.config.faults.get(**k) > 0)
        .map(|k| format!("{k}×{}", scenario.config.faults.get(*k)))
        .collect::<Vec<_>>()
        .join(", ");
    // The page's markup, style and script (explorer.html); the world and the goal go in as JSON.
    let env = crate::html::templates();
    let context = minijinja::context! {
        title => &title,
        faults => if faults.is_empty() { "none".to_string() } else { faults },
        lock_path => &scenario.config.lock_path,
        setup => minijinja::Value::from(minijinja::value::Serde(serde_json::json!({
            "lanes": lanes,
            "goal": goal,
            "steps": steps,
            "lesson": lesson.map(|(lesson, next)| serde_json::json!({
                "task": lesson.task,
                "hint": lesson.hint,
                "bug": lesson.bug,
                "next": next,
            })),
        }))),
    };
    env.get_template("explorer.html").expect("a built-in template").render(context).expect("the explorer page renders")
}

/// One world the explorer serves under an address: its page, the scenario its answers replay,
/// and for a level of the lessons the kept trace's HTML timeline.
pub struct Site {
    /// Where it is served: `/`, or `/lesson/ID/` for a level.
    pub prefix: String,
    pub scenario: Scenario,
    pub page: String,
    pub trace_page: Option<String>,
}

/// The explorer for one world at `/`, starting at `start`.
pub fn site(scenario: &Scenario, goal: &Goal, start: &[Step]) -> Site {
    Site {
        prefix: "/".to_string(),
        scenario: scenario.clone(),
        page: page(scenario, goal, start, None),
        trace_page: None,
    }
}

/// Every level of the lessons, each under `/lesson/ID/` with its goal found by the checker
/// within `timeout`; and the index page that lists them, for `/`.
pub fn lesson_sites(timeout: Duration) -> (Vec<Site>, String) {
    let sites = LESSONS
        .iter()
        .enumerate()
        .map(|(i, lesson)| {
            let trace = lesson.trace();
            let goal = goal(&trace.scenario, timeout, Some(trace.verdict.property));
            let next = LESSONS.get(i + 1).map(|l| format!("/lesson/{}/", l.id));
            Site {
                prefix: format!("/lesson/{}/", lesson.id),
                page: page(&trace.scenario, &goal, &[], Some((lesson, next))),
                trace_page: Some(crate::html::render(&trace).expect("a kept trace renders")),
                scenario: trace.scenario,
            }
        })
        .collect();
    let levels: Vec<serde_json::Value> = LESSONS
        .iter()
        .map(|l| {
            let trace = l.trace();
            serde_json::json!({
                "id": l.id,
                "task": l.task,
                "recipe": trace.scenario.recipe_label(),
                "clients": trace.scenario.recipes.len(),
                "faults": trace.scenario.faults().iter().map(|k| k.to_string()).collect::<Vec<_>>(),
            })
        })
        .collect();
    let env = crate::html::templates();
    let index = env
        .get_template("lessons.html")
        .expect("a built-in template")
        .render(minijinja::context! { levels => minijinja::Value::from(minijinja::value::Serde(levels)) })
        .expect("the lessons page renders");
    (sites, index)
}

/// Serves `sites` (and `index` at `/`, if given) until the process is stopped.
pub fn serve(server: &tiny_http::Server, sites: &[Site], index: Option<&str>) {
    for mut request in server.incoming_requests() {
        let url = request.url().to_string();
        let site = sites.iter().filter(|s| url.starts_with(&s.prefix)).max_by_key(|s| s.prefix.len());
        let response = match (site, request.method()) {
            (_, tiny_http::Method::Get) if url == "/" && index.is_some() => {
                reply(200, "text/html; charset=utf-8", index.unwrap_or_default().to_string())
            }
            (Some(site), method) => match (method, &url[site.prefix.len()..]) {
                (tiny_http::Method::Get, "") => reply(200, "text/html; charset=utf-8", site.page.clone()),
                (tiny_http::Method::Get, "trace.html") if site.trace_page.is_some() => {
                    reply(200, "text/html; charset=utf-8", site.trace_page.clone().unwrap_or_default())
                }
                (tiny_http::Method::Post, "api/position") => match body(&mut request) {
                    Ok(text) => answer_position(&site.scenario, &text),
                    Err(e) => error(400, &e),
                },
                (tiny_http::Method::Post, "api/load") => match body(&mut request) {
                    Ok(text) => answer_load(&site.scenario, &text),
                    Err(e) => error(400, &e),
                },
                _ => error(404, "no such page"),
            },
            (None, _) => error(404, "no such page"),
        };
        // A page closed mid-answer is no reason to stop serving.
        let _ = request.respond(response);
    }
}

fn body(request: &mut tiny_http::Request) -> Result<String, String> {
    let mut text = String::new();
    request
        .as_reader()
        .take(MAX_BODY)
        .read_to_string(&mut text)
        .map_err(|e| format!("cannot read the request: {e}"))?;
    Ok(text)
}

/// `POST /api/position` with a JSON list of steps: the position they reach.
fn answer_position(scenario: &Scenario, text: &str) -> tiny_http::Response<std::io::Cursor<Vec<u8>>> {
    let steps: Vec<Step> = match serde_json::from_str(text) {
        Ok(steps) => steps,
        Err(e) => return error(400, &format!("not a list of steps: {e}")),
    };
    match position(scenario, &steps) {
        Ok(at) => reply(200, "application/json", serde_json::to_string(&at).expect("positions serialize")),
        Err(e) => error(409, &e.to_string()),
    }
}

/// `POST /api/load` with a trace file's text: its steps, if it is a trace of this world.
fn answer_load(scenario: &Scenario, text: &str) -> tiny_http::Response<std::io::Cursor<Vec<u8>>> {
    let trace: Trace = match serde_json::from_str(text) {
        Ok(trace) => trace,
        Err(e) => return error(400, &format!("not a zklab trace: {e}")),
    };
    if trace.scenario != *scenario {
        let other = format!("{} with {} clients", trace.scenario.recipe_label(), trace.scenario.recipes.len());
        return error(409, &format!("this trace is of another world ({other}): run zklab explore --trace FILE"));
    }
    let loaded = serde_json::json!({
        "steps": trace.steps,
        "property": trace.verdict.property.name(),
        "summary": trace.summary,
    });
    reply(200, "application/json", loaded.to_string())
}

fn reply(code: u16, kind: &str, text: String) -> tiny_http::Response<std::io::Cursor<Vec<u8>>> {
    let header = tiny_http::Header::from_bytes("Content-Type", kind).expect("a valid header");
    tiny_http::Response::from_string(text).with_status_code(code).with_header(header)
}

fn error(code: u16, message: &str) -> tiny_http::Response<std::io::Cursor<Vec<u8>>> {
    reply(code, "application/json", serde_json::json!({ "error": message }).to_string())
}
