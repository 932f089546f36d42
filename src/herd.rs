//! `zklab herd`: the herd effect measured. Each recipe runs fault-free at each client count in
//! the workload that is easy to repeat on a real server (everyone asks at once, holds 10 ms,
//! sub-millisecond network), and the table and chart show what a release costs as N grows.

use crate::progress::Progress;
use crate::scenario::{BadInput, Scenario};
use serde::Serialize;
use zklab_model::WorldConfig;
use zklab_sim::{Herd, Metrics, SimConfig};

/// One recipe at one client count.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    pub recipe: String,
    pub clients: usize,
    pub passed: bool,
    pub herd: Herd,
    pub metrics: Metrics,
}

/// Runs every recipe at every count with `seed`, each run saying to `progress` once a second
/// how far it got. Ctrl-C or SIGTERM stops it: the rows run to their end come back, and
/// `true` says it stopped.
pub fn measure(
    recipes: &[String],
    counts: &[usize],
    seed: u64,
    progress: Option<Progress>,
) -> Result<(Vec<Row>, bool), BadInput> {
    // Every name and count is checked before the first run.
    let mut scenarios = Vec::new();
    for recipe in recipes {
        for &clients in counts {
            let scenario = Scenario::with_limit(recipe, clients, WorldConfig::default(), zklab_sim::MAX_CLIENTS)?;
            SimConfig::new(scenario.config.clone(), seed).validate(clients).map_err(|e| BadInput(e.0))?;
            scenarios.push((recipe, clients, scenario));
        }
    }
    let mut rows = Vec::new();
    let rows_in_all = scenarios.len();
    for (k, (recipe, clients, scenario)) in scenarios.into_iter().enumerate() {
        if let Some(say) = progress {
            say(&format!("row {} of {rows_in_all}: {recipe} at {clients} clients", k + 1));
        }
        // The herd is what the table measures, not a verdict: the runs go to their end.
        let config = SimConfig { measure_herd: true, ..SimConfig::new(scenario.config.clone(), seed) };
        let run =
            crate::simulate::run_within(&scenario, &config, progress, &crate::budget::Budget::until_interrupted());
        // Interrupted whatever the run's verdict: a herd found before the signal is a verdict,
        // but the row's figures are cut short.
        if run.verdict == crate::simulate::RunVerdict::Interrupted || crate::interrupt::interrupted() {
            return Ok((rows, true));
        }
        rows.push(Row {
            recipe: recipe.clone(),
            clients,
            passed: run.verdict == crate::simulate::RunVerdict::Passed,
            herd: run.herd,
            metrics: run.metrics,
        });
    }
    Ok((rows, false))
}

/// The table, one row per recipe and count.
pub fn table(rows: &[Row]) -> String {
    let mut out = format!(
        "{:<16} {:>7} {:>14} {:>14} {:>13} {:>13} {:>9} {:>9} {:>8}\n",
        "recipe",
        "clients",
        "notif/release",
        "futile/acq",
        "getChildren/acq",
        "requests/acq",
        "p50 ms",
        "p99 ms",
        "fairness"
    );
    for r in rows {
        let h = &r.herd;
        out.push_str(&format!(
            "{:<16} {:>7} {:>14.2} {:>14.2} {:>15.2} {:>13.2} {:>9.1} {:>9.1} {:>8.3}{}\n",
            r.recipe,
            r.clients,
            h.notifications_per_release,
            h.futile_wakeups_per_acquisition,
            h.get_children_per_acquisition,
            h.requests_per_acquisition,
            h.latency_ms_p50,
            h.latency_ms_p99,
            h.fairness,
            if r.passed { "" } else { "  (a property failed)" }
        ));
    }
    out
}

/// Notifications per release against N, one line per recipe, as an SVG file.
#[cfg(feature = "cli")]
pub fn chart(rows: &[Row], file: &std::path::Path) -> Result<(), String> {
    use plotters::prelude::*;
    let max_n = rows.iter().map(|r| r.clients).max().unwrap_or(1) as f64;
    let max_y = rows.iter().map(|r| r.herd.notifications_per_release).fold(1.0, f64::max) * 1.1;
    let root = SVGBackend::new(file, (720, 440)).into_drawing_area();
    let fail = |e: &dyn std::fmt::Display| format!("cannot draw {}: {e}", file.display());
    root.fill(&WHITE).map_err(|e| fail(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption("watch notifications per release", ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(48)
        .build_cartesian_2d(0f64..max_n, 0f64..max_y)
        .map_err(|e| fail(&e))?;
    chart.configure_mesh().x_desc("clients").y_desc("notifications per release").draw().map_err(|e| fail(&e))?;
    let mut recipes: Vec<&str> = rows.iter().map(|r| r.recipe.as_str()).collect();
    recipes.dedup();
    for (k, recipe) in recipes.iter().enumerate() {
        let colour = Palette99::pick(k).to_rgba();
        let points: Vec<(f64, f64)> = rows
            .iter()
            .filter(|r| r.recipe == *recipe)
            .map(|r| (r.clients as f64, r.herd.notifications_per_release))
            .collect();
        chart
            .draw_series(LineSeries::new(points.clone(), colour.stroke_width(2)))
            .map_err(|e| fail(&e))?
            .label(*recipe)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2)));
        chart.draw_series(points.into_iter().map(|p| Circle::new(p, 3, colour.filled()))).map_err(|e| fail(&e))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(|e| fail(&e))?;
    root.present().map_err(|e| fail(&e))
}
