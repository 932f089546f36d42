//! A trace as a readable timeline: one row per step, one column per client, each step's effects
//! written under the client that took it, faults marked so the eye finds them.

use crate::trace::{Trace, TraceError};
use zklab_model::{Recipe, Step, World};

const WIDTH: usize = 56;

/// Renders `trace` by replaying it with the world's own descriptions of each step.
pub fn render(trace: &Trace) -> Result<String, TraceError> {
    let mut out = render_steps(trace.scenario.world(), &trace.steps, trace.verdict.cycle_start)?;
    out.push_str(&format!("\n=> {} violated: {}\n", trace.verdict.property, trace.summary));
    Ok(out)
}

/// Renders `steps` taken from `init`, for any recipe; `cycle_start` marks where a cycle begins.
pub fn render_steps<R: Recipe>(
    mut world: World<R>,
    steps: &[Step],
    cycle_start: Option<usize>,
) -> Result<String, TraceError> {
    let clients = world.clients.len();
    let mut out = String::new();
    let header: Vec<String> =
        world.clients.iter().enumerate().map(|(i, c)| format!("c{i} ({}, {})", c.recipe.name(), c.session)).collect();
    out.push_str(&row("step", &header));
    out.push_str(&format!("{}\n", "-".repeat(6 + clients * (WIDTH + 3))));
    for (i, step) in steps.iter().enumerate() {
        if cycle_start == Some(i) {
            out.push_str(&format!("{:>5} ~~~~ the cycle starts here and returns to this state ~~~~\n", ""));
        }
        let mut log = Some(Vec::new());
        world.apply_logged(*step, &mut log).map_err(|_| TraceError::NotEnabled(i, *step))?;
        let title = match step {
            Step::Fault(fault, _) => format!("!! FAULT {fault}"),
            Step::Server(event) => format!("!! FAULT {event}"),
            Step::Lossy(fault, sending, c) => {
                format!(
                    "!! FAULT {fault} during {}",
                    sending.step(*c).to_string().split(' ').next().unwrap_or_default()
                )
            }
            other => other.to_string().split(' ').next().unwrap_or_default().to_string(),
        };
        let mut lines = vec![title];
        lines.extend(log.unwrap_or_default().into_iter().map(|note| format!("  {note}")));
        // The table has a column per client: the server's own events are shown in the first.
        let column = step.client().unwrap_or_default() as usize;
        let wrapped = lines.iter().flat_map(|line| wrap(line));
        for (n, line) in wrapped.enumerate() {
            let mut cells = vec![String::new(); clients];
            cells[column] = line;
            let label = if n == 0 { format!("{:>4}", i + 1) } else { String::new() };
            out.push_str(&row(&label, &cells));
        }
    }
    Ok(out)
}

/// Splits a long line at spaces into pieces that fit a column, indenting the continuations.
fn wrap(line: &str) -> Vec<String> {
    let text = line.trim_start();
    let lead = &line[..line.len() - text.len()];
    let mut pieces = vec![lead.to_string()];
    for word in text.split(' ') {
        let current = pieces.last_mut().expect("never empty");
        if current.len() > lead.len() && current.chars().count() + 1 + word.chars().count() > WIDTH {
            pieces.push(format!("{lead}    {word}"));
        } else {
            if current.len() > lead.len() {
                current.push(' ');
            }
            current.push_str(word);
        }
    }
    pieces
}

fn row(label: &str, cells: &[String]) -> String {
    let mut line = format!("{label:<5}");
    for cell in cells {
        line.push_str(&format!(" | {cell:<WIDTH$}"));
    }
    line.truncate(line.trim_end().len());
    line.push('\n');
    line
}
