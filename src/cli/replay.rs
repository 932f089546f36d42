//! `zklab replay`: a trace's steps re-applied and its verdict re-checked, shown as a text
//! timeline, a Mermaid diagram or an HTML page on request.

use super::CliError;
use crate::exit::Exit;
use crate::trace::Trace;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
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
}

/// Replays the trace; failed when it does not reproduce its verdict.
pub fn run(args: &Args) -> Result<Exit, CliError> {
    let path = &args.trace;
    let html = args.html.then(|| args.output.clone().unwrap_or_else(|| path.with_extension("html")));
    let trace = Trace::load(path).map_err(|e| CliError::BadInput(e.to_string()))?;
    if let Some(out) = &html {
        crate::trace::check_file_writable(out)?;
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
