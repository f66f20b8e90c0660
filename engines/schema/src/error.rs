//! Why a schema was not compiled; each error names where in the schema it arose.
//!
//! Three kinds, as the core's regex errors:
//! - [`SchemaError::InvalidSchema`]: the text is not JSON, or not a schema (a keyword
//!   whose value has the wrong type, a `$ref` to nothing, a pattern that does not parse);
//! - [`SchemaError::Unsupported`]: a valid schema whose language the compiler cannot
//!   write exactly as a regex (an assertion it does not implement, a combination it
//!   cannot merge); it names the keyword and the JSON pointer of its subschema;
//! - [`SchemaError::LimitExceeded`]: the regex would pass the dialect's size or nesting
//!   guard, or a bound of the compiler (the number of alternatives a merge makes).
//!
//! Messages stay on one line.

use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SchemaError {
    InvalidSchema {
        pointer: String,
        message: String,
    },
    Unsupported {
        keyword: String,
        pointer: String,
        reason: String,
    },
    LimitExceeded {
        pointer: String,
        what: String,
    },
}

impl SchemaError {
    pub fn invalid(pointer: &str, message: impl Into<String>) -> SchemaError {
        SchemaError::InvalidSchema {
            pointer: pointer.to_string(),
            message: message.into(),
        }
    }

    pub fn unsupported(keyword: &str, pointer: &str, reason: impl Into<String>) -> SchemaError {
        SchemaError::Unsupported {
            keyword: keyword.to_string(),
            pointer: pointer.to_string(),
            reason: reason.into(),
        }
    }

    pub fn limit(pointer: &str, what: impl Into<String>) -> SchemaError {
        SchemaError::LimitExceeded {
            pointer: pointer.to_string(),
            what: what.into(),
        }
    }

    /// The keyword an `Unsupported` error names.
    pub fn keyword(&self) -> Option<&str> {
        match self {
            SchemaError::Unsupported { keyword, .. } => Some(keyword),
            _ => None,
        }
    }
}

/// The root's pointer is the empty string; it is shown as `/`.
fn at(pointer: &str) -> &str {
    if pointer.is_empty() {
        "/"
    } else {
        pointer
    }
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SchemaError::InvalidSchema { pointer, message } => {
                write!(f, "invalid schema at {}: {message}", at(pointer))
            }
            SchemaError::Unsupported {
                keyword,
                pointer,
                reason,
            } => {
                write!(
                    f,
                    "unsupported keyword \"{keyword}\" at {}: {reason}",
                    at(pointer)
                )
            }
            SchemaError::LimitExceeded { pointer, what } => {
                write!(f, "limit exceeded at {}: {what}", at(pointer))
            }
        }
    }
}

impl std::error::Error for SchemaError {}
