//! Errors the core reports; each carries what a caller needs to act on it.
//!
//! A regex can fail three ways, told apart by the structured error kinds of
//! `regex-syntax` and `regex-automata` (never by their message text):
//! - [`Error::InvalidPattern`]: the pattern is malformed or names something that does not
//!   exist (an unclosed group, a bad range, an unknown Unicode property);
//! - [`Error::Unsupported`]: valid syntax for a feature the core does not implement
//!   (look-around, back-references, Unicode word boundaries, which a DFA cannot build, and
//!   patterns that can match invalid UTF-8, which the parser refuses);
//! - [`Error::LimitExceeded`]: a size limit was hit (the parser's nesting or capture
//!   limit, the NFA's size or state count, the DFA's or determinization's size).
//!
//! Each keeps the library's own words on one line, as before.

use std::fmt;

use regex_automata::dfa::dense;
use regex_automata::nfa::thompson;
use regex_syntax::{ast, hir};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// The regex does not parse, or is malformed (the parser's message and offset).
    InvalidPattern(String),
    /// The regex is valid, but uses a feature the core does not implement.
    Unsupported(String),
    /// Compiling the regex hit a size limit of the parser, the NFA or determinization.
    LimitExceeded(String),
    /// A vocabulary argument is inconsistent (message names the offending id).
    Vocabulary(String),
    /// An index option is not one of the known values.
    Option(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidPattern(m) | Error::Unsupported(m) | Error::LimitExceeded(m) => {
                write!(f, "{m}")
            }
            Error::Vocabulary(m) => write!(f, "invalid vocabulary: {m}"),
            Error::Option(m) => write!(f, "invalid option: {m}"),
        }
    }
}

impl std::error::Error for Error {}

/// The constructor of the error kind a regex failure belongs to.
type Kind = fn(String) -> Error;

impl From<&regex_syntax::Error> for Error {
    /// The parser's message on one line: what is wrong and where.
    fn from(e: &regex_syntax::Error) -> Error {
        match e {
            regex_syntax::Error::Parse(p) => ast_kind(p.kind())(format!(
                "{} at offset {} of the pattern",
                p.kind(),
                p.span().start.offset
            )),
            regex_syntax::Error::Translate(t) => hir_kind(t.kind())(format!(
                "{} at offset {} of the pattern",
                t.kind(),
                t.span().start.offset
            )),
            // `regex_syntax::Error` is non-exhaustive; a later kind is taken as malformed.
            other => Error::InvalidPattern(other.to_string().replace('\n', " ")),
        }
    }
}

impl From<&thompson::BuildError> for Error {
    /// NFA compilation from a parsed pattern. This error exposes only its size limit and
    /// the parser error it may wrap (`source`). Of its other kinds, the only one our
    /// configuration can reach is `TooManyStates`, the NFA's state-count limit: there is
    /// one pattern, no capture group, and the Unicode word-boundary data is compiled in.
    fn from(e: &thompson::BuildError) -> Error {
        if e.size_limit().is_some() {
            return Error::LimitExceeded(e.to_string());
        }
        let source = std::error::Error::source(e);
        match source.and_then(|s| s.downcast_ref::<regex_syntax::Error>()) {
            Some(syntax) => Error::from(syntax),
            None => Error::LimitExceeded(e.to_string()),
        }
    }
}

impl From<&dense::BuildError> for Error {
    /// Determinization: a size or state-count limit, the NFA's own error (`source`), or
    /// else its one remaining kind, a feature DFAs cannot express (a Unicode word
    /// boundary).
    fn from(e: &dense::BuildError) -> Error {
        if e.is_size_limit_exceeded() {
            return Error::LimitExceeded(e.to_string());
        }
        let source = std::error::Error::source(e);
        match source.and_then(|s| s.downcast_ref::<thompson::BuildError>()) {
            Some(nfa) => Error::from(nfa),
            None => Error::Unsupported(e.to_string()),
        }
    }
}

fn ast_kind(kind: &ast::ErrorKind) -> Kind {
    use ast::ErrorKind as K;
    match kind {
        K::UnsupportedBackreference | K::UnsupportedLookAround => Error::Unsupported,
        K::NestLimitExceeded(_) | K::CaptureLimitExceeded => Error::LimitExceeded,
        // Every other kind (unclosed groups, bad escapes, ranges, flags, repetitions...)
        // is malformed syntax, and so is any kind a later regex-syntax adds.
        _ => Error::InvalidPattern,
    }
}

fn hir_kind(kind: &hir::ErrorKind) -> Kind {
    use hir::ErrorKind as K;
    match kind {
        // The parser runs in UTF-8 mode: every string a pattern matches must be text.
        K::InvalidUtf8 => Error::Unsupported,
        // Unicode tables this build of regex-syntax lacks.
        K::UnicodePerlClassNotFound | K::UnicodeCaseUnavailable => Error::Unsupported,
        // An unknown property name or value, Unicode where `(?-u)` forbids it, and any
        // kind a later regex-syntax adds.
        _ => Error::InvalidPattern,
    }
}

#[cfg(test)]
mod tests {
    use regex_automata::dfa::dense;
    use regex_automata::nfa::thompson;

    use super::Error;
    use crate::dfa::ByteDfa;

    fn kind_of(pattern: &str) -> Error {
        ByteDfa::from_regex(pattern).unwrap_err()
    }

    #[test]
    fn malformed_patterns_are_invalid() {
        for p in ["(", "a)", "[z-a]", r"\p{Foo}", "a{2,1}", r"(?-u:\pL)", "*"] {
            assert!(matches!(kind_of(p), Error::InvalidPattern(_)), "{p}");
        }
    }

    #[test]
    fn features_the_core_lacks_are_unsupported() {
        for p in ["(?=a)", "(?<!a)b", r"(a)\1", r"\bx", r"(?-u:\xFF)"] {
            assert!(matches!(kind_of(p), Error::Unsupported(_)), "{p}");
        }
        let m = kind_of("(?=a)").to_string();
        assert!(m.contains("look-around") && m.contains("offset 0"), "{m}");
        assert!(
            ByteDfa::from_regex(r"(?-u:\b)x").is_ok(),
            "ASCII word boundaries build"
        );
    }

    #[test]
    fn nesting_past_the_parser_limit_is_a_limit() {
        let deep = format!("{}a{}", "(".repeat(300), ")".repeat(300));
        let e = kind_of(&deep);
        assert!(matches!(e, Error::LimitExceeded(_)), "{e:?}");
        assert!(e.to_string().contains("nested"), "{e}");
    }

    #[test]
    fn nfa_and_dfa_size_limits_are_limits() {
        let nfa = thompson::Compiler::new()
            .configure(thompson::Config::new().nfa_size_limit(Some(1000)))
            .build("a{1000}")
            .unwrap_err();
        assert!(matches!(Error::from(&nfa), Error::LimitExceeded(_)));
        let dfa = dense::Builder::new()
            .configure(dense::Config::new().dfa_size_limit(Some(10_000)))
            .build(r"\w{20}")
            .unwrap_err();
        assert!(matches!(Error::from(&dfa), Error::LimitExceeded(_)));
        let det = dense::Builder::new()
            .configure(dense::Config::new().determinize_size_limit(Some(1000)))
            .build(r"\w{20}")
            .unwrap_err();
        assert!(matches!(Error::from(&det), Error::LimitExceeded(_)));
    }

    #[test]
    fn messages_stay_on_one_line() {
        for p in ["(", r"(?-u:\xFF)", r"\bx"] {
            assert!(!kind_of(p).to_string().contains('\n'), "{p}");
        }
    }
}
