//! ZooKeeper path rules. The real client rejects a bad path before it is sent, so a bad path is
//! an error value here too, never a panic and never a server round trip.

/// Why a path is not a ZooKeeper path (the wording follows the Java client's `PathUtils`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("path must not be empty")]
    Empty,
    #[error("path must start with / character: {0:?}")]
    NotAbsolute(String),
    #[error("path must not end with / character: {0:?}")]
    TrailingSlash(String),
    #[error("empty node name specified @{1} in {0:?}")]
    EmptySegment(String, usize),
    #[error("relative paths not allowed @{1} in {0:?}")]
    Relative(String, usize),
    #[error("invalid character @{1} in {0:?}")]
    InvalidChar(String, usize),
}

/// Validates `path` as the Java client does. A sequential create validates the path with a digit
/// appended, so `/lock/` is a valid sequential prefix but not a valid node.
pub fn validate(path: &str, sequential: bool) -> Result<(), PathError> {
    // Every request the server applies is validated, and nearly every path a recipe sends is
    // plain: answered without the copy a sequential path's check makes or a walk by character.
    match plainly_valid(path.as_bytes(), sequential) {
        true => Ok(()),
        false => validate_by_characters(path, sequential),
    }
}

/// `validate`, walking the path character by character as the Java client's `PathUtils` does.
fn validate_by_characters(path: &str, sequential: bool) -> Result<(), PathError> {
    if sequential {
        return validate_by_characters(&format!("{path}1"), false).map_err(|e| strip_digit(e, path));
    }
    if path.is_empty() {
        return Err(PathError::Empty);
    }
    if !path.starts_with('/') {
        return Err(PathError::NotAbsolute(path.to_string()));
    }
    if path == "/" {
        return Ok(());
    }
    if path.ends_with('/') {
        return Err(PathError::TrailingSlash(path.to_string()));
    }
    let mut offset = 1;
    for segment in path[1..].split('/') {
        if segment.is_empty() {
            return Err(PathError::EmptySegment(path.to_string(), offset));
        }
        if segment == "." || segment == ".." {
            return Err(PathError::Relative(path.to_string(), offset));
        }
        if let Some((i, _)) = segment.char_indices().find(|(_, c)| invalid_char(*c)) {
            return Err(PathError::InvalidChar(path.to_string(), offset + i));
        }
        offset += segment.len() + 1;
    }
    Ok(())
}

/// Whether `path` is valid by a test of its bytes alone, for the paths a recipe sends: printable
/// ASCII (no character `invalid_char` refuses), absolute, no empty, `.` or `..` segment, and no
/// trailing `/` (which a sequential path may have: a digit is appended to it). `false` says
/// nothing: `validate` then decides, and tells why.
fn plainly_valid(path: &[u8], sequential: bool) -> bool {
    let [b'/', rest @ ..] = path else { return false };
    if rest.is_empty() {
        return true;
    }
    let last = rest.len() - 1;
    let mut segment = 0;
    for (i, &b) in rest.iter().enumerate() {
        if !(0x20..0x7f).contains(&b) {
            return false;
        }
        if b != b'/' {
            segment += 1;
            continue;
        }
        // A segment ends: it must not be empty or all dots (`.` or `..`).
        if segment == 0 || (segment <= 2 && rest[i - segment..i].iter().all(|&d| d == b'.')) {
            return false;
        }
        segment = 0;
        if i == last {
            return sequential;
        }
    }
    // The last segment, to which a sequential path's digit is appended.
    sequential || !(segment <= 2 && rest[last + 1 - segment..].iter().all(|&d| d == b'.'))
}

fn strip_digit(error: PathError, original: &str) -> PathError {
    let fix = |_: String| original.to_string();
    match error {
        PathError::Empty => PathError::Empty,
        PathError::NotAbsolute(p) => PathError::NotAbsolute(fix(p)),
        PathError::TrailingSlash(p) => PathError::TrailingSlash(fix(p)),
        PathError::EmptySegment(p, i) => PathError::EmptySegment(fix(p), i),
        PathError::Relative(p, i) => PathError::Relative(fix(p), i),
        PathError::InvalidChar(p, i) => PathError::InvalidChar(fix(p), i),
    }
}

/// The characters ZooKeeper refuses in a node name (control characters and the ranges the Java
/// client reserves).
fn invalid_char(c: char) -> bool {
    matches!(c, '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}' | '\u{e000}'..='\u{f8ff}' | '\u{fff0}'..='\u{ffff}')
}

/// The parent of a valid, non-root path.
pub fn parent(path: &str) -> &str {
    match path.rfind('/') {
        Some(0) | None => "/",
        Some(i) => &path[..i],
    }
}

/// The last segment of a valid, non-root path.
pub fn name(path: &str) -> &str {
    // A byte search: every state the checker judges asks for its holders' names.
    path.rfind('/').map_or(path, |at| &path[at + 1..])
}

/// `parent` joined with a child `name`.
pub fn join(parent: &str, name: &str) -> String {
    // The checker joins paths on every state it renames or renumbers: no formatting machinery.
    let parent = if parent == "/" { "" } else { parent };
    let mut path = String::with_capacity(parent.len() + 1 + name.len());
    path.push_str(parent);
    path.push('/');
    path.push_str(name);
    path
}

/// Whether `path` lies strictly below `parent`, at any depth.
pub fn is_below(path: &str, parent: &str) -> bool {
    match parent {
        "/" => path.len() > 1,
        _ => path.strip_prefix(parent).is_some_and(|rest| rest.len() > 1 && rest.starts_with('/')),
    }
}

/// The name of `path` if it is a child of `parent` (not a deeper descendant).
pub fn child_of<'p>(path: &'p str, parent: &str) -> Option<&'p str> {
    let rest = match parent {
        "/" => path.strip_prefix('/')?,
        _ => path.strip_prefix(parent)?.strip_prefix('/')?,
    };
    (!rest.is_empty() && !rest.contains('/')).then_some(rest)
}

/// The sequence number of a sequential node `name` created with `prefix`. Only the prefix tells
/// where the counter starts: `x-1000000000` is `x-` with 1000000000 or `x` with -1000000000, which
/// is why a recipe that guesses mis-orders names at the 32-bit wrap.
pub fn sequence_of(name: &str, prefix: &str) -> Option<i32> {
    let digits = name.strip_prefix(prefix)?.as_bytes();
    let (negative, body) = match digits.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, digits),
    };
    let well_formed = match negative {
        true => digits.len() == 10 || digits.len() == 11,
        false => digits.len() == 10,
    };
    if !well_formed {
        return None;
    }
    // Read in one pass: every state the checker judges reads its holders' counters. Ten digits
    // fit an i64; the values past i32 are not a counter.
    let mut value: i64 = 0;
    for &b in body {
        if !b.is_ascii_digit() {
            return None;
        }
        value = value * 10 + i64::from(b - b'0');
    }
    i32::try_from(if negative { -value } else { value }).ok()
}

/// The suffix ZooKeeper appends to a sequential create: `%010d` of the signed counter.
pub fn sequence_suffix(counter: i32) -> String {
    let mut suffix = String::with_capacity(11);
    push_sequence_suffix(&mut suffix, counter);
    suffix
}

/// Appends `sequence_suffix(counter)` to `out`.
pub fn push_sequence_suffix(out: &mut String, counter: i32) {
    // `%010d`: the sign takes one of the ten places.
    match counter < 0 {
        true => {
            out.push('-');
            push_decimal(out, counter.unsigned_abs().into(), 9);
        }
        false => push_decimal(out, counter.unsigned_abs().into(), 10),
    }
}

/// Appends `n` in decimal, padded with zeros to `width` digits (at most 20): what
/// `format!("{n:0width$}")` writes, without the formatting machinery, which renaming and
/// renumbering would otherwise run for every name of every state they rewrite.
pub fn push_decimal(out: &mut String, n: u64, width: usize) {
    let mut digits = [b'0'; 20];
    let (mut at, mut rest) = (digits.len(), n);
    loop {
        at -= 1;
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    let at = at.min(digits.len().saturating_sub(width));
    out.push_str(std::str::from_utf8(&digits[at..]).expect("ASCII digits"));
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]
        /// The test by bytes never accepts a path the walk by characters refuses, and accepts
        /// every plain one: paths drawn from slashes, dots, letters and characters it must
        /// leave to the walk.
        #[test]
        fn the_test_by_bytes_agrees_with_the_walk_by_characters(
            path in proptest::collection::vec(
                prop::sample::select(vec!['/', '/', '.', '.', 'a', 'b', ' ', '~', '\u{1}', '\u{7f}', '\u{e9}']), 0..9)
                .prop_map(|cs| cs.into_iter().collect::<String>()),
            sequential: bool,
        ) {
            let walked = validate_by_characters(&path, sequential);
            prop_assert_eq!(validate(&path, sequential), walked.clone());
            if plainly_valid(path.as_bytes(), sequential) {
                prop_assert_eq!(walked.clone(), Ok(()));
            }
            let plain = path.bytes().all(|b| (0x20..0x7f).contains(&b));
            prop_assert_eq!(plainly_valid(path.as_bytes(), sequential), plain && walked.is_ok());
        }
    }

    #[test]
    fn child_of_names_only_direct_children() {
        assert_eq!(child_of("/lock/x-0000000001", "/lock"), Some("x-0000000001"));
        assert_eq!(child_of("/lock", "/lock"), None);
        assert_eq!(child_of("/lockx/y", "/lock"), None);
        assert_eq!(child_of("/lock/a/b", "/lock"), None);
        assert_eq!(child_of("/lock", "/"), Some("lock"));
        assert_eq!(child_of("/", "/"), None);
    }

    #[test]
    fn join_and_suffix_format_like_zookeeper() {
        assert_eq!(join("/", "lock"), "/lock");
        assert_eq!(join("/lock", "x-"), "/lock/x-");
        assert_eq!(sequence_suffix(7), "0000000007");
        assert_eq!(sequence_suffix(i32::MIN), "-2147483648");
    }

    proptest::proptest! {
        /// The one-pass reading agrees with the definition: the name after the prefix is ten
        /// characters (eleven with a sign) that parse as an i32.
        #[test]
        fn sequence_of_reads_as_the_definition_says(digits in "[-+0-9a]{0,2}[0-9]{0,11}", prefix in "(x-|x|)") {
            let name = format!("{prefix}{digits}");
            let well_formed = match digits.strip_prefix('-') {
                Some(rest) => (digits.len() == 10 || digits.len() == 11) && rest.bytes().all(|b| b.is_ascii_digit()),
                None => digits.len() == 10 && digits.bytes().all(|b| b.is_ascii_digit()),
            };
            let defined = if well_formed { digits.parse::<i32>().ok() } else { None };
            proptest::prop_assert_eq!(sequence_of(&name, prefix.as_str()), defined);
        }

        #[test]
        fn numbers_are_written_as_the_formatting_machinery_writes_them(n: u64, counter: i32, width in 0usize..=20) {
            let mut written = String::new();
            push_decimal(&mut written, n, width);
            proptest::prop_assert_eq!(written, format!("{n:0width$}"));
            proptest::prop_assert_eq!(sequence_suffix(counter), format!("{counter:010}"));
        }

        #[test]
        fn name_is_what_follows_the_last_slash(path in "(/[a-z0-9-]{0,6}){0,4}") {
            proptest::prop_assert_eq!(name(&path), path.rsplit('/').next().unwrap_or(""));
        }
    }
}
