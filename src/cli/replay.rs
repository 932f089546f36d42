//! `zklab replay`: a trace's steps re-applied and its verdict re-checked, shown as a text
//! timeline, a Mermaid diagram or an HTML page on request.

use super::CliError;
use crate::exit::Exit;
use crate::trace::Trace;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// A trace file, as `check`, `simulate` or `real` write it (zklab-traces/*.json), or a
    /// schedule `client-check` saved (run again with its real clients).
    #[arg(value_name = "TRACE")]
    pub trace: PathBuf,
    /// Print the timeline too.
    #[arg(long)]
    pub show: bool,
    /// Print the trace as a Mermaid sequence diagram too.
    #[arg(long)]
    pub mermaid: bool,
    /// Write the trace as a self-contained HTML timeline (to `-o`, else beside the trace).
    #[arg(long)]
    pub html: bool,
    /// Where `--html` writes the page.
    #[arg(long, short, requires = "html")]
    pub output: Option<PathBuf>,
    /// Let `--html` replace an existing file that is not an HTML page.
    #[arg(long, requires = "html")]
    pub force: bool,
}

/// Replays the trace; failed when it does not reproduce its verdict.
pub fn run(args: &Args) -> Result<Exit, CliError> {
    let path = &args.trace;
    let html = args.html.then(|| args.output.clone().unwrap_or_else(|| path.with_extension("html")));
    if crate::client_check::SavedSchedule::is_one(path) {
        // A schedule `client-check` saved: run again with its real clients.
        if let Some(out) = &html {
            refuse_to_clobber(path, out, args.force)?;
            crate::user_files::check_file_writable(out)?;
        }
        if args.mermaid {
            return Err(CliError::BadInput("--mermaid draws a checker's trace, not a client-check schedule".into()));
        }
        return super::client_check::replay_saved(path, args.show, html.as_deref());
    }
    let trace = Trace::load(path).map_err(|e| CliError::BadInput(e.to_string()))?;
    if let Some(out) = &html {
        // As `simulate --html` refuses it: before any work, as bad input.
        crate::html::fits(&trace).map_err(CliError::BadInput)?;
        refuse_to_clobber(path, out, args.force)?;
        crate::user_files::check_file_writable(out)?;
    }
    let failed = |e: crate::trace::TraceError| CliError::Failed(format!("{}: {e}", path.display()));
    trace.replay().map_err(failed)?;
    let renders: [(bool, crate::trace::Renderer); 2] =
        [(args.show, crate::timeline::render), (args.mermaid, crate::diagram::mermaid)];
    for (_, render) in renders.iter().filter(|(wanted, _)| *wanted) {
        say_raw!("{}", render(&trace).map_err(failed)?);
    }
    if let Some(out) = &html {
        let page = crate::html::render(&trace).map_err(failed)?;
        let dir = out.parent().filter(|d| !d.as_os_str().is_empty());
        dir.map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::write(out, page))
            .map_err(|e| CliError::BadInput(format!("cannot write {}: {e}", out.display())))?;
        say!("wrote the HTML timeline to {}", out.display());
    }
    say!("{}: {} steps reproduce `{}` ({})", path.display(), trace.steps.len(), trace.verdict.property, trace.summary);
    Ok(Exit::Passed)
}

/// The page never replaces the trace it is drawn from, nor, without `--force`, any existing
/// file that is not an HTML page (a trace named `*.html`, a file the user keeps there).
fn refuse_to_clobber(trace: &std::path::Path, out: &std::path::Path, force: bool) -> Result<(), CliError> {
    let same = |a: &std::path::Path, b: &std::path::Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    if same(trace, out) {
        return Err(CliError::BadInput(format!(
            "--html would write over the trace it reads ({}): name the page with -o",
            out.display()
        )));
    }
    super::refuse_to_replace(out, crate::user_files::Output::Page, force)
}
