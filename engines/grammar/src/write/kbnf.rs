//! [`to_kbnf`]: a grammar as KBNF text, the notation of the kbnf crate (Formatron).
//!
//! KBNF is scannerless like the reference: a regex terminal `#"..."` is matched at every
//! length, so each IR terminal is written as one regex and keeps its language. `%ignore`
//! is first made explicit ([`Grammar::expand_ignore`]).
//!
//! Layout: `start ::= <start rule>;` (kbnf starts at `start`), rule `i` as
//! `r{i}_{name} ::= ... | ...;` (an empty alternative as `''`), terminal `i` as
//! `t{i}_{name} ::= #"<regex>";`. The regex is re-printed from its parsed form ([`Hir`])
//! in Rust's regex syntax with no inline flags: meta characters escaped with a backslash,
//! characters outside printable ASCII as `\x{HEX}`, classes as explicit ranges, groups as
//! `(?:...)`, counts as `{m,n}`; a class no character matches as `[a&&b]`. The text
//! between `#"` and `"` is read by kbnf as a string first, so every `\` of the regex is
//! doubled and a `"` escaped. A terminal matching only the empty string is written `''`,
//! and a rule with no alternative as the class of nothing.
//!
//! Refused ([`Error::Unsupported`]): look-around assertions and byte classes that are not
//! whole UTF-8 characters.

use std::fmt::Write as _;

use regex_syntax::hir::{Class, Hir, HirKind};

use super::{alternatives, label};
use crate::error::Error;
use crate::ir::{Grammar, Symbol};

const NOTHING: &str = "[a&&b]";

/// The grammar as KBNF text (see the module doc).
pub fn to_kbnf(g: &Grammar) -> Result<String, Error> {
    let g = g.expand_ignore();
    let rule = |i: u32| label("r", i as usize, &g.rule(i).name, '_');
    let term = |i: u32| label("t", i as usize, &g.terminal(i).name, '_');
    let mut out = String::new();
    let _ = writeln!(out, "start ::= {};", rule(g.start));
    for (i, r) in g.rules.iter().enumerate() {
        let (mut alts, empty) = alternatives(r, |s| match *s {
            Symbol::Rule(j) => rule(j),
            Symbol::Terminal(j) => term(j),
        });
        if empty {
            alts.push("''".to_string());
        }
        let body = if alts.is_empty() {
            kbnf_regex(NOTHING)
        } else {
            alts.join(" | ")
        };
        let _ = writeln!(out, "{} ::= {body};", rule(i as u32));
    }
    for (i, t) in g.terminals.iter().enumerate() {
        let body = terminal(t.regex_text()?).map_err(|m| Error::Unsupported {
            line: 0,
            message: format!("terminal {} (/{}/) in KBNF: {m}", t.name, t.regex),
        })?;
        let _ = writeln!(out, "{} ::= {body};", term(i as u32));
    }
    Ok(out)
}

/// A terminal's regex as a KBNF expression: `#"..."`, or `''` for the empty string.
fn terminal(regex: &str) -> Result<String, String> {
    let h = tokensdfa_core::dfa::parse(regex).map_err(|e| e.to_string())?;
    if h.properties().maximum_len() == Some(0) && h.properties().look_set().is_empty() {
        return Ok("''".into());
    }
    let mut s = String::new();
    write_hir(&h, &mut s)?;
    Ok(kbnf_regex(&s))
}

/// A Rust regex inside `#"..."`, escaped for kbnf's string reading.
fn kbnf_regex(regex: &str) -> String {
    format!("#\"{}\"", regex.replace('\\', "\\\\").replace('"', "\\\""))
}

fn push_char(c: char, in_class: bool, out: &mut String) {
    let meta = if in_class {
        matches!(c, '\\' | ']' | '[' | '-' | '^' | '&' | '~')
    } else {
        regex_syntax::is_meta_character(c)
    };
    match c {
        c if meta => {
            out.push('\\');
            out.push(c);
        }
        ' '..='~' => out.push(c),
        c => {
            let _ = write!(out, "\\x{{{:X}}}", c as u32);
        }
    }
}

fn write_class(ranges: &[(char, char)], out: &mut String) {
    match ranges {
        [] => out.push_str(NOTHING),
        [(a, b)] if a == b => push_char(*a, false, out),
        _ => {
            out.push('[');
            for &(a, b) in ranges {
                push_char(a, true, out);
                if a != b {
                    out.push('-');
                    push_char(b, true, out);
                }
            }
            out.push(']');
        }
    }
}

/// `h` as a group that a postfix operator applies to as a whole.
fn write_atom(h: &Hir, out: &mut String) -> Result<(), String> {
    let single = match h.kind() {
        HirKind::Literal(l) => std::str::from_utf8(&l.0).is_ok_and(|s| s.chars().count() == 1),
        HirKind::Class(_) => true,
        _ => false,
    };
    if single {
        return write_hir(h, out);
    }
    out.push_str("(?:");
    write_hir(h, out)?;
    out.push(')');
    Ok(())
}

fn write_hir(h: &Hir, out: &mut String) -> Result<(), String> {
    match h.kind() {
        HirKind::Empty => out.push_str("(?:)"),
        HirKind::Literal(l) => {
            let s =
                std::str::from_utf8(&l.0).map_err(|_| "a literal that is not UTF-8".to_string())?;
            for c in s.chars() {
                push_char(c, false, out);
            }
        }
        HirKind::Class(Class::Unicode(c)) => {
            let r: Vec<(char, char)> = c.iter().map(|r| (r.start(), r.end())).collect();
            write_class(&r, out);
        }
        HirKind::Class(Class::Bytes(c)) => {
            if c.iter().any(|r| r.end() >= 0x80) {
                return Err("a byte class that is not whole UTF-8 characters".into());
            }
            let r: Vec<(char, char)> = c
                .iter()
                .map(|r| (char::from(r.start()), char::from(r.end())))
                .collect();
            write_class(&r, out);
        }
        HirKind::Look(l) => return Err(format!("look-around assertion {l:?}")),
        HirKind::Repetition(r) => {
            write_atom(&r.sub, out)?;
            let _ = match (r.min, r.max) {
                (0, None) => write!(out, "*"),
                (1, None) => write!(out, "+"),
                (0, Some(1)) => write!(out, "?"),
                (m, None) => write!(out, "{{{m},}}"),
                (m, Some(n)) if m == n => write!(out, "{{{m}}}"),
                (m, Some(n)) => write!(out, "{{{m},{n}}}"),
            };
        }
        HirKind::Capture(c) => write_atom(&c.sub, out)?,
        HirKind::Concat(parts) => {
            for p in parts {
                if matches!(p.kind(), HirKind::Alternation(_)) {
                    write_atom(p, out)?;
                } else {
                    write_hir(p, out)?;
                }
            }
        }
        HirKind::Alternation(alts) => {
            out.push_str("(?:");
            for (i, a) in alts.iter().enumerate() {
                if i > 0 {
                    out.push('|');
                }
                write_hir(a, out)?;
            }
            out.push(')');
        }
    }
    Ok(())
}
