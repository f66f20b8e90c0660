//! Errors of the grammar front ends and the reference, each on one line.
//!
//! A grammar fails to read in one of four ways, each naming where: [`Error::Syntax`] (the
//! text does not parse in its notation), [`Error::Unsupported`] (a construct of the
//! notation this crate does not implement, named), [`Error::Invalid`] (it parses but is no
//! grammar: an unknown rule, no start rule, an empty language, a terminal whose regex does
//! not compile) and [`Error::Limit`] (a size bound: the file, nesting, rule count). The
//! reference adds [`Error::Budget`]: a state needed more Earley work than its budget.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// The text does not parse: line (1-based), the construct, what is wrong.
    Syntax { line: usize, message: String },
    /// A construct this crate does not implement (`%declare`, templates, ...).
    Unsupported { line: usize, message: String },
    /// Parses, but is not a usable grammar (unknown rule, empty language, bad terminal).
    Invalid(String),
    /// A size bound of the front end was hit.
    Limit(String),
    /// A state of the reference needed more Earley items than its budget allows.
    Budget(String),
    /// A vocabulary or option argument is wrong.
    Argument(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Syntax { line, message } => write!(f, "line {line}: {message}"),
            Error::Unsupported { line, message } => {
                write!(f, "line {line}: unsupported: {message}")
            }
            Error::Invalid(m) | Error::Limit(m) | Error::Budget(m) | Error::Argument(m) => {
                write!(f, "{m}")
            }
        }
    }
}

impl std::error::Error for Error {}

impl From<tokensdfa_core::Error> for Error {
    fn from(e: tokensdfa_core::Error) -> Error {
        match e {
            tokensdfa_core::Error::LimitExceeded(m) => Error::Limit(m),
            tokensdfa_core::Error::Vocabulary(m) | tokensdfa_core::Error::Option(m) => {
                Error::Argument(m)
            }
            other => Error::Invalid(other.to_string()),
        }
    }
}
