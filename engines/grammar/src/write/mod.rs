//! Writers: a [`Grammar`] as Lark text and as GBNF text, so every grammar reaches every
//! engine in the notation it reads.
//!
//! ## Map
//!
//! - `lark`: [`to_lark`]; terminal regexes rewritten from their parsed form ([`Hir`]) in
//!   the syntax Python's `re` (after Lark's unescaping) and Rust's `regex-syntax`
//!   (llguidance) read alike;
//! - `gbnf`: [`to_gbnf`]; terminal regexes rewritten as GBNF expressions (strings,
//!   classes, groups, repetition), `%ignore` first made explicit.
//!
//! Names: rule `i` is written `r{i}_{name}` (Lark) or `r{i}-{name}` (GBNF), terminal `i`
//! `T{i}_{NAME}` / `t{i}-{name}`, the IR name reduced to the characters the notation
//! allows; the id prefix keeps them unique.
//!
//! [`Hir`]: regex_syntax::hir::Hir

mod gbnf;
mod lark;

pub use gbnf::to_gbnf;
pub use lark::to_lark;

/// `name` reduced to `[a-z0-9]` words joined by `sep`, at most 32 characters.
pub(crate) fn sanitize(name: &str, sep: char) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with(sep) {
            out.push(sep);
        }
        if out.len() >= 32 {
            break;
        }
    }
    while out.ends_with(sep) {
        out.pop();
    }
    out
}

/// A name built from a prefix, an id, and the sanitized IR name.
pub(crate) fn label(prefix: &str, id: usize, name: &str, sep: char) -> String {
    let s = sanitize(name, sep);
    if s.is_empty() {
        format!("{prefix}{id}")
    } else {
        format!("{prefix}{id}{sep}{s}")
    }
}
