//! Where long work (a check, a simulation, a fuzzing run) says how far it got, a line at a time:
//! the command line prints each line to stderr; a library user passes its own sink, or none.
//! The library itself prints nothing.

/// A sink for progress lines.
pub type Progress = fn(&str);
