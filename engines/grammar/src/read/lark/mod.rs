//! Lark (lark-parser's grammar reference), with the parts of llguidance's dialect this
//! crate reads.
//!
//! ## Map
//!
//! - `lexer`: tokens, with Lark's unescaping of strings and regexes;
//! - `parser`: statements into [`LExpr`] trees (definitions, `%ignore`, `%import`);
//! - `lower`: terminals inlined into one regex each (cycles refused), templates expanded
//!   at use, rules handed to the shared builder;
//! - `pyre`: Python `re` patterns into the core's regex syntax;
//! - `common`: our own table of the terminals of Lark's `common` library.
//!
//! ## What is read, what is refused
//!
//! Read: rules (`?`, `!`, `_` prefixes; `-> alias`; priorities), terminals (priorities
//! dropped), strings with the `i` flag, regexes with flags `i m s x u`, ranges
//! `"a".."z"`, `* + ? ~n ~n..m`, `[item]`, groups, terminals built from terminals,
//! templates `name{a, b}` (expanded per distinct argument list), `%import common.X`,
//! `%import common.X -> Y`, `%import common (A, B)`, `%ignore` (a name, a literal or an
//! expansion: the terminals go to [`Grammar::ignore`]), llguidance's `%llguidance {...}`
//! (dropped) and `[capture]`/`[temperature=..]` attributes (dropped). An empty string
//! `""` is the empty sequence (llguidance reads it so; Lark refuses it).
//!
//! Refused: `%declare`, `%override`, `%extend`, imports from any module but `common`,
//! relative imports, terminal templates, the `l`/`a`/`L` flags, look-around and
//! back-references in regexes ([`Error::Unsupported`], naming the terminal), and
//! llguidance's `%json`, `%regex`, special tokens, `&`, and `[lazy]`/`[max_tokens]`/
//! `[stop]` attributes. The start rule is `start`.
//!
//! A terminal is a regular language: Lark's lexer semantics (longest match, priorities,
//! the first match of a lazy `.*?`) are not kept, so `/\/\*(.|\n)*?\*\//` is every text
//! between `/*` and `*/`, inner `*/` included.

mod common;
mod lexer;
mod lower;
mod parser;
mod pyre;

use crate::error::Error;
use crate::ir::Grammar;

/// The regex `%import common.NAME` reads as (this crate's spelling of Lark's `common`
/// library), or None where `common` has no such terminal.
pub(crate) fn common_terminal(name: &str) -> Option<String> {
    common::regex(name)
}

/// A Lark expansion as parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum LExpr {
    Seq(Vec<LExpr>),
    Alt(Vec<LExpr>),
    /// `min..max` copies (`None`: unbounded), with the line.
    Repeat(Box<LExpr>, u32, Option<u32>, usize),
    /// A string literal (unescaped), its `i` flag, and how it was written.
    Str {
        value: String,
        ci: bool,
        raw: String,
    },
    /// A regex literal (Python syntax, unescaped), its flags, how it was written.
    Regex {
        pattern: String,
        flags: String,
        raw: String,
        line: usize,
    },
    /// `"a".."z"`.
    Range(String, String, usize),
    /// A rule or terminal name.
    Name(String, usize),
    /// `name{args}`.
    Template(String, Vec<LExpr>, usize),
}

/// Read a Lark text (see the module doc).
pub(super) fn read(text: &str) -> Result<Grammar, Error> {
    let tokens = lexer::lex(text)?;
    let parsed = parser::parse(tokens)?;
    lower::lower(parsed)
}
