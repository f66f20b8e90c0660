//! Writers: a [`Grammar`] as Lark, GBNF or KBNF text, so every grammar reaches every
//! engine in the notation it reads.
//!
//! ## Map
//!
//! - `lark`: [`to_lark`]; terminal regexes rewritten from their parsed form ([`Hir`]) in
//!   the syntax Python's `re` (after Lark's unescaping) and Rust's `regex-syntax`
//!   (llguidance) read alike;
//! - `gbnf`: [`to_gbnf`]; terminal regexes rewritten as GBNF expressions (strings,
//!   classes, groups, repetition), `%ignore` first made explicit;
//! - `scannerless`: [`to_lark_scannerless`]; Lark text whose every terminal is one
//!   character (terminal regexes rewritten as rules), so Lark's Earley parser judges
//!   membership exactly as the reference reads the grammar (a test oracle);
//! - `kbnf`: [`to_kbnf`]; KBNF text for the kbnf crate (Formatron), each terminal one
//!   scannerless `#"regex"` in Rust's syntax, `%ignore` first made explicit.
//!
//! Names: rule `i` is written `r{i}_{name}` (Lark, KBNF) or `r{i}-{name}` (GBNF),
//! terminal `i` `T{i}_{NAME}` / `t{i}_{name}` (scannerless Lark, KBNF) / `t{i}-{name}`, the
//! IR name reduced to the characters the notation allows; the id prefix keeps them
//! unique.
//!
//! [`Hir`]: regex_syntax::hir::Hir

mod gbnf;
mod kbnf;
mod lark;
mod scannerless;

use crate::ir::{Rule, Symbol};

pub use gbnf::to_gbnf;
pub use kbnf::to_kbnf;
pub use lark::to_lark;
pub use scannerless::to_lark_scannerless;

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

/// The non-empty alternatives of `rule`, each its symbols' names (`name`) joined by
/// spaces, and whether `rule` also has the empty alternative: what every writer lays
/// out in its own notation.
pub(crate) fn alternatives(rule: &Rule, name: impl Fn(&Symbol) -> String) -> (Vec<String>, bool) {
    let written = rule
        .alternatives
        .iter()
        .filter(|a| !a.is_empty())
        .map(|a| a.iter().map(&name).collect::<Vec<_>>().join(" "))
        .collect();
    (written, rule.alternatives.iter().any(Vec::is_empty))
}

/// A name built from a prefix, an id, and the sanitized IR name.
pub(crate) fn label(prefix: &str, id: usize, name: &str, sep: char) -> String {
    let s = sanitize(unlabelled(prefix, name), sep);
    if s.is_empty() {
        format!("{prefix}{id}")
    } else {
        format!("{prefix}{id}{sep}{s}")
    }
}

/// `name` without a label this module gave it (`r12_value` -> `value`, also with `-`),
/// so that a grammar written, read and written again keeps short names.
fn unlabelled<'a>(prefix: &str, name: &'a str) -> &'a str {
    let lower = prefix.to_ascii_lowercase();
    let upper = prefix.to_ascii_uppercase();
    for p in [prefix, lower.as_str(), upper.as_str()] {
        if let Some(rest) = name.strip_prefix(p) {
            let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            let tail = &rest[digits..];
            if digits > 0 && (tail.starts_with('_') || tail.starts_with('-')) && tail.len() > 1 {
                return &tail[1..];
            }
        }
    }
    name
}
