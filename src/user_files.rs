//! The files a user names: inputs read and outputs written. An input must be a regular file
//! (a FIFO would block on opening, `/dev/zero` would be read forever); an output never replaces
//! a file zklab cannot read or did not write (a note named like a trace, a trace named
//! `*.html`), looks at no more than a file's first bytes to tell, and is no special file. Each
//! is asked before any long work, so a bad path costs one line and exit 2, not a finished run.

use crate::scenario::BadInput;
use std::io::Read;
use std::path::Path;

/// How many bytes of an existing output are read to tell what it is.
const HEAD_BYTES: u64 = 64;

/// Reads `path` as text, refusing anything but a regular file (after following symlinks)
/// before opening it.
pub fn read_input(path: &Path) -> std::io::Result<String> {
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(std::io::Error::other(format!("{} is not a regular file", kind_of(&meta))));
    }
    std::fs::read_to_string(path)
}

/// Whether an error says the path is not there: missing, or below a file (which the caller
/// finds and names when it reaches that file).
fn absent(e: &std::io::Error) -> bool {
    matches!(e.kind(), std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory)
}

/// What a file that is not a regular one is, for an error.
fn kind_of(meta: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    match () {
        _ if t.is_dir() => "a directory",
        _ if t.is_fifo() => "a FIFO",
        _ if t.is_socket() => "a socket",
        _ if t.is_char_device() || t.is_block_device() => "a device",
        _ => "a special file",
    }
}

/// Why `file` may never be written, whatever `--force` says: it exists and is a directory, a
/// FIFO (writing would block until someone reads), a socket or a block device. A character
/// device (`/dev/stdout`, `/dev/null`) may be written with `--force`.
pub fn special(file: &Path) -> Option<String> {
    use std::os::unix::fs::FileTypeExt;
    let meta = std::fs::metadata(file).ok()?;
    let allowed = meta.is_file() || meta.file_type().is_char_device();
    (!allowed).then(|| format!("cannot write {}: it is {}", file.display(), kind_of(&meta)))
}

/// Whether traces can be written under `dir`, asked before a long run rather than after it:
/// `dir`, or the nearest of its ancestors that exists, must be a directory that takes a new
/// file. A path that exists but cannot be followed (a symlink loop, a dangling link) is
/// refused here, not after the run. Probed by creating and removing a file, the one test every
/// platform agrees on.
pub fn check_writable(dir: &Path) -> Result<(), BadInput> {
    let cannot = |why: String| BadInput(format!("cannot write traces to {}: {why}", dir.display()));
    let mut at = dir;
    loop {
        match std::fs::symlink_metadata(at) {
            Ok(_) => match std::fs::metadata(at) {
                Ok(_) => break,
                Err(e) => return Err(cannot(format!("{}: {e}", at.display()))),
            },
            Err(e) if absent(&e) => {}
            Err(e) => return Err(cannot(format!("{}: {e}", at.display()))),
        }
        at = match at.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent,
            _ => Path::new("."),
        };
    }
    if !at.is_dir() {
        return Err(cannot(format!("{} is not a directory", at.display())));
    }
    let probe = at.join(format!(".zklab-write-probe-{}", std::process::id()));
    std::fs::File::create(&probe).map_err(|e| cannot(e.to_string()))?;
    std::fs::remove_file(&probe).map_err(|e| cannot(e.to_string()))
}

/// What kind of file an output is, to tell whether an existing file at its place is one zklab
/// wrote (and may be replaced) or one of the user's (and may not).
#[derive(Clone, Copy, Debug)]
pub enum Output {
    /// A JSON document: a trace, a schedule, a conformance case.
    Json,
    /// JSON lines: a wire log.
    JsonLines,
    /// An HTML page.
    Page,
    /// An SVG chart.
    Chart,
}

impl Output {
    /// Whether a file that starts with `head` (lower-cased, blanks trimmed) is of this kind.
    pub fn looks_like(self, head: &str) -> bool {
        match self {
            Output::Json | Output::JsonLines => head.starts_with('{') || head.is_empty(),
            Output::Page => head.starts_with("<!doctype html") || head.starts_with("<html"),
            Output::Chart => head.starts_with("<svg") || head.starts_with("<?xml"),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Output::Json => "a JSON file",
            Output::JsonLines => "a JSON-lines log",
            Output::Page => "an HTML page",
            Output::Chart => "an SVG chart",
        }
    }
}

/// Whether `file` may be written as `kind`: it does not exist, or it is a regular file whose
/// first bytes look like what zklab writes there. A file of the user's is never replaced, nor
/// one that cannot be read (a write-only file may hold anything), nor a special file (a FIFO,
/// a device); the error says so.
pub fn replaceable(file: &Path, kind: Output) -> Result<(), String> {
    let meta = match std::fs::metadata(file) {
        Ok(meta) => meta,
        Err(e) if absent(&e) => {
            // A dangling symlink would be written through: refused like any link we cannot follow.
            return match std::fs::symlink_metadata(file) {
                Ok(_) => Err(format!("{} is a symlink to nothing: not replaced", file.display())),
                Err(_) => Ok(()),
            };
        }
        Err(e) => return Err(format!("{}: {e}: not replaced", file.display())),
    };
    if !meta.is_file() {
        return Err(format!("{} is {}: not replaced", file.display(), kind_of(&meta)));
    }
    let mut head = Vec::with_capacity(HEAD_BYTES as usize);
    std::fs::File::open(file)
        .and_then(|f| f.take(HEAD_BYTES).read_to_end(&mut head))
        .map_err(|e| format!("{} exists and cannot be read ({e}): not replaced", file.display()))?;
    let head = String::from_utf8_lossy(&head).trim_start().to_ascii_lowercase();
    match kind.looks_like(&head) {
        true => Ok(()),
        false => Err(format!("{} exists and is not {}: not replaced", file.display(), kind.name())),
    }
}

/// Writes `text` to `file` as `kind`, unless a file of another kind is there (`replaceable`).
pub fn write_output(file: &Path, text: &str, kind: Output) -> std::io::Result<()> {
    replaceable(file, kind).map_err(std::io::Error::other)?;
    std::fs::write(file, text).map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", file.display())))
}

/// Whether a file can be written at `file` (its directory, or the nearest existing ancestor,
/// takes a new file, and `file` is not a directory), asked before any work.
pub fn check_file_writable(file: &Path) -> Result<(), BadInput> {
    if file.is_dir() {
        return Err(BadInput(format!("cannot write {}: it is a directory", file.display())));
    }
    let dir = file.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    check_writable(dir)
        .map_err(|_| BadInput(format!("cannot write {}: {} takes no new file", file.display(), dir.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("zklab-user-files-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_file_that_cannot_be_read_is_never_replaced() {
        use std::os::unix::fs::PermissionsExt;
        let d = dir("write-only");
        let file = d.join("wo.html");
        std::fs::write(&file, "my notes, not a page").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o200)).unwrap();
        // Root reads a write-only file anyway; then the content decides, and it is no page.
        assert!(replaceable(&file, Output::Page).is_err());
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        std::fs::write(&file, "<!DOCTYPE html><html></html>").unwrap();
        assert_eq!(replaceable(&file, Output::Page), Ok(()));
    }

    #[test]
    fn special_files_are_neither_read_nor_replaced() {
        for special in ["/dev/zero", "/dev/null"] {
            let why = replaceable(Path::new(special), Output::Json).unwrap_err();
            assert!(why.contains("a device"), "{why}");
            assert!(read_input(Path::new(special)).is_err());
        }
        let d = dir("fifo");
        let fifo = d.join("f.json");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status().map(|s| s.success());
        if made.is_ok_and(|ok| ok) {
            assert!(replaceable(&fifo, Output::Json).unwrap_err().contains("a FIFO"));
            assert!(read_input(&fifo).unwrap_err().to_string().contains("a FIFO"));
        }
    }

    #[test]
    fn a_symlink_loop_is_refused_up_front() {
        let d = dir("loop");
        let a = d.join("a");
        std::os::unix::fs::symlink(d.join("b"), &a).unwrap();
        std::os::unix::fs::symlink(&a, d.join("b")).unwrap();
        let why = check_writable(&a.join("traces")).unwrap_err().0;
        assert!(why.contains("symbolic links") || why.contains("loop"), "{why}");
    }

    #[test]
    fn only_the_first_bytes_of_an_output_are_read() {
        let d = dir("head");
        let file = d.join("t.json");
        let mut text = String::from("{");
        text.push_str(&"x".repeat(1 << 20));
        std::fs::write(&file, &text).unwrap();
        assert_eq!(replaceable(&file, Output::Json), Ok(()));
        std::fs::write(&file, format!("notes{text}")).unwrap();
        assert!(replaceable(&file, Output::Json).is_err());
    }
}
