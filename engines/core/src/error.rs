//! Errors the core reports; each carries what a caller needs to act on it.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// The regex does not parse or cannot be compiled to a DFA (parser's message).
    Regex(String),
    /// A vocabulary argument is inconsistent (message names the offending id).
    Vocabulary(String),
    /// An index option is not one of the known values.
    Option(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Regex(m) => write!(f, "{m}"),
            Error::Vocabulary(m) => write!(f, "invalid vocabulary: {m}"),
            Error::Option(m) => write!(f, "invalid option: {m}"),
        }
    }
}

impl std::error::Error for Error {}
