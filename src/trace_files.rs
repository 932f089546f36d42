//! Where a check's counterexamples go: each one's trace file, named by the recipe, the number of
//! clients and the property it breaks, and with `--html` its timeline page beside it. Kept out
//! of the checker, which finds counterexamples and writes nothing.

use crate::check::Report;
use crate::scenario::Scenario;
use std::path::{Path, PathBuf};
use zklab_model::Property;

/// Writes each counterexample to `dir` as `<recipe>-n<N>-<property>.json` and records the
/// file in the report; with `html`, its HTML timeline beside it (`.html`).
pub fn write(report: &mut Report, dir: &Path, html: bool) -> std::io::Result<()> {
    for p in &mut report.properties {
        if let Some(trace) = &p.trace {
            let with_path =
                |e: std::io::Error, at: &Path| std::io::Error::new(e.kind(), format!("{}: {e}", at.display()));
            std::fs::create_dir_all(dir).map_err(|e| with_path(e, dir))?;
            let file = trace_file(dir, &report.recipe, report.clients, p.name);
            trace.write(&file)?;
            if html {
                crate::html::write_beside(trace, &file)?;
            }
            p.trace_file = Some(file.display().to_string());
        }
    }
    Ok(())
}

/// Where a check of `recipe` (its label) with `clients` clients writes its counterexample to
/// `property` in `dir`.
pub fn trace_file(dir: &Path, recipe: &str, clients: usize, property: &str) -> PathBuf {
    dir.join(format!("{}-n{clients}-{property}.json", recipe.replace(',', "+")))
}

/// Whether every counterexample a check of `scenario` may write to `dir` (and its page, with
/// `html`) would replace only a file zklab wrote: asked before the run, not after it.
pub fn traces_replaceable(scenario: &Scenario, dir: &Path, html: bool) -> Result<(), String> {
    for property in Property::applicable(&scenario.world()) {
        let file = trace_file(dir, &scenario.recipe_label(), scenario.recipes.len(), property.name());
        crate::user_files::replaceable(&file, crate::user_files::Output::Json)?;
        if html {
            crate::user_files::replaceable(&file.with_extension("html"), crate::user_files::Output::Page)?;
        }
    }
    Ok(())
}
