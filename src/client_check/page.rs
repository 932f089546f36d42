//! A saved schedule as one self-contained HTML page: a row per choice (faults marked, the row
//! where the violation shows marked), and beside it what each client said after it. Drawn from
//! the file alone, so the page of a schedule is the same bytes however often it is drawn.

use super::saved::SavedSchedule;
use serde::Serialize;

#[derive(Serialize)]
struct Page {
    setup: String,
    file: String,
    end: String,
    findings: Vec<super::saved::SavedFinding>,
    lanes: Vec<String>,
    rows: Vec<Row>,
}

#[derive(Serialize)]
struct Row {
    step: usize,
    choice: String,
    fault: bool,
    /// The history broke its property by the end of this row (the last row of a cut schedule).
    shows: bool,
    /// Per client, what it said after this choice (before the next).
    heard: Vec<Vec<Said>>,
}

#[derive(Clone, Serialize)]
struct Said {
    kind: String,
    text: String,
}

/// The page of `saved`, read from `file` (named on the page, to run it again).
pub fn render(saved: &SavedSchedule, file: &str) -> String {
    let lanes: Vec<String> = (0..saved.clients).map(|c| format!("c{c}")).collect();
    // Row 0 is before any choice: what the clients said as they connected.
    let mut rows: Vec<Row> = std::iter::once(Row {
        step: 0,
        choice: "(the clients connect)".into(),
        fault: false,
        shows: false,
        heard: vec![Vec::new(); saved.clients],
    })
    .chain(saved.schedule.iter().enumerate().map(|(i, choice)| Row {
        step: i + 1,
        choice: saved.steps.get(i).cloned().unwrap_or_else(|| format!("{choice:?}")),
        fault: choice.is_fault(),
        shows: false,
        heard: vec![Vec::new(); saved.clients],
    }))
    .collect();
    for line in &saved.history {
        let mut words = line.splitn(3, ' ');
        let (Some(step), Some(client), Some(text)) = (words.next(), words.next(), words.next()) else { continue };
        let (Ok(step), Some(Ok(client))) = (step.parse::<usize>(), client.strip_prefix('c').map(str::parse::<usize>))
        else {
            continue;
        };
        if let Some(cell) = rows.get_mut(step).and_then(|r| r.heard.get_mut(client)) {
            let kind = text.split(|ch: char| !ch.is_ascii_alphabetic()).next().unwrap_or("").to_ascii_lowercase();
            cell.push(Said { kind, text: text.to_string() });
        }
    }
    if !saved.findings.is_empty() && saved.end == super::End::Cut {
        if let Some(last) = rows.last_mut() {
            last.shows = true;
        }
    }
    let faults: Vec<&str> = [
        (saved.faults.loss_before_apply, "loss-before-apply"),
        (saved.faults.loss_after_apply, "loss-after-apply"),
        (saved.faults.expire, "expire"),
        (saved.faults.disconnect, "disconnect"),
    ]
    .iter()
    .filter(|(on, _)| *on)
    .map(|(_, name)| *name)
    .collect();
    let program = match &saved.program {
        super::saved::SavedProgram::Library(name) => format!("--library {name}"),
        super::saved::SavedProgram::Cmd(cmd) => format!("--cmd '{cmd}'"),
    };
    let page = Page {
        setup: format!(
            "{program}, {} clients, {} round(s) on {}, faults: {}{}; {} choices",
            saved.clients,
            saved.rounds,
            saved.lock_path,
            if faults.is_empty() { "none".to_string() } else { faults.join(",") },
            saved.seed.map_or(String::new(), |s| format!(", found from seed {s}")),
            saved.schedule.len()
        ),
        file: file.to_string(),
        end: format!("{:?}", saved.end),
        findings: saved.findings.clone(),
        lanes,
        rows,
    };
    let title = match saved.property() {
        Some(p) => format!("client-check: {p} broken"),
        None => "client-check schedule".to_string(),
    };
    let env = crate::html::templates();
    let template = env.get_template("schedule.html").expect("a built-in template");
    template
        .render(minijinja::context! { title => title, page => minijinja::Value::from(minijinja::value::Serde(&page)) })
        .expect("the schedule template renders")
}
