//! The front ends: text in one [`Notation`] into a [`Grammar`].
//!
//! ## Map
//!
//! - `builder`: the notation-neutral expression tree ([`builder::Expr`]: terminals, rule
//!   references, sequences, alternatives, counted repetition) and its lowering into the
//!   IR: groups and repetitions become fresh rules, identical terminal regexes share one
//!   terminal id, every terminal regex is checked with the core's parser;
//! - `gbnf`: llama.cpp's GBNF and the llama.cpp-style EBNF of transformers-cfg (one
//!   reader: the EBNF files are GBNF with underscores in names);
//! - `lark`: Lark with the parts of llguidance's dialect this crate reads: its lexer,
//!   parser, lowering, the translation of Python `re` patterns into the core's regex
//!   syntax, and our own table of Lark's `common` terminals.
//!
//! ## Bounds
//!
//! A text over [`MAX_TEXT`] bytes, nesting deeper than [`MAX_DEPTH`] groups, a count above
//! [`MAX_REPEAT`] or a grammar past [`MAX_SYMBOLS`] symbols is refused with
//! [`Error::Limit`]; no input panics or overflows the stack.

pub(crate) mod builder;
mod gbnf;
mod lark;

pub(crate) use lark::common_terminal;

use crate::error::Error;
use crate::ir::{Grammar, Notation};

/// Longest text a reader accepts (4 MiB).
pub const MAX_TEXT: usize = 4 << 20;
/// Deepest nesting of groups (`(`, `[`) a reader accepts.
pub const MAX_DEPTH: usize = 200;
/// Largest count in `{m,n}` / `~ m..n`.
pub const MAX_REPEAT: u32 = 10_000;
/// Most symbols (right-hand-side entries) a read grammar may hold.
pub const MAX_SYMBOLS: usize = 4_000_000;

/// Read `text`, written in `notation`, into a [`Grammar`].
///
/// The start rule is `root` for GBNF and EBNF, `start` for Lark. Errors name the line
/// and the construct (see [`Error`]).
pub fn read(text: &str, notation: Notation) -> Result<Grammar, Error> {
    if text.len() > MAX_TEXT {
        return Err(Error::Limit(format!(
            "grammar text is {} bytes, over the {MAX_TEXT}-byte limit",
            text.len()
        )));
    }
    match notation {
        Notation::Gbnf | Notation::Ebnf => gbnf::read(text, notation),
        Notation::Lark => lark::read(text),
    }
}
