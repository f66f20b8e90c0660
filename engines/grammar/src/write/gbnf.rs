//! [`to_gbnf`]: a grammar as GBNF text.
//!
//! `%ignore` is first made explicit ([`Grammar::expand_ignore`]); then `root ::=` names
//! the start rule, rule `i` is written `r{i}-{name} ::= ...` and terminal `i`
//! `t{i}-{name} ::= ...`, its regex rewritten as a GBNF expression: literals as strings,
//! classes as `[...]`, both with llama.cpp's escapes (`\xHH`, `\uHHHH`, `\UHHHHHHHH`,
//! `\t \r \n \\ \" \[ \] \-`), groups in parentheses, repetition as `*`, `+`, `?`,
//! `{m}`, `{m,}`, `{m,n}`. An empty alternative is written `""`; a rule with no
//! alternative, and an empty class, as a class no character matches.
//!
//! Refused ([`Error::Unsupported`]): look-around assertions, byte classes that are not
//! whole UTF-8 characters, and counts above 2000 (llama.cpp refuses a larger minimum and
//! reads a larger maximum as unbounded).

use std::fmt::Write as _;

use regex_syntax::hir::{Class, Hir, HirKind};

use super::{alternatives, label};
use crate::error::Error;
use crate::ir::{Grammar, Symbol};

/// llama.cpp's bound on a count.
const MAX_COUNT: u32 = 2000;
const NOTHING: &str = "[^\\x00-\\U0010FFFF]";

/// The grammar as GBNF text (see the module doc).
pub fn to_gbnf(g: &Grammar) -> Result<String, Error> {
    let g = g.expand_ignore();
    let rule = |i: u32| label("r", i as usize, &g.rule(i).name, '-');
    let term = |i: u32| label("t", i as usize, &g.terminal(i).name, '-');
    let mut out = String::new();
    let _ = writeln!(out, "root ::= {}", rule(g.start));
    for (i, r) in g.rules.iter().enumerate() {
        let (mut alts, empty) = alternatives(r, |s| match *s {
            Symbol::Rule(j) => rule(j),
            Symbol::Terminal(j) => term(j),
        });
        if empty {
            alts.push("\"\"".to_string());
        }
        let body = if alts.is_empty() {
            NOTHING.to_string()
        } else {
            alts.join(" | ")
        };
        let _ = writeln!(out, "{} ::= {body}", rule(i as u32));
    }
    for (i, t) in g.terminals.iter().enumerate() {
        let expr = gbnf_expr(t.regex_text()?).map_err(|m| Error::Unsupported {
            line: 0,
            message: format!("terminal {} (/{}/) in GBNF: {m}", t.name, t.regex),
        })?;
        let _ = writeln!(out, "{} ::= {expr}", term(i as u32));
    }
    Ok(out)
}

/// A regex of the core's syntax as a GBNF expression.
pub(crate) fn gbnf_expr(regex: &str) -> Result<String, String> {
    let h = tokensdfa_core::dfa::parse(regex).map_err(|e| e.to_string())?;
    let mut s = String::new();
    write_hir(&h, &mut s)?;
    Ok(s)
}

fn push_char(c: char, in_class: bool, out: &mut String) {
    match c {
        '"' if !in_class => out.push_str("\\\""),
        '\\' => out.push_str("\\\\"),
        '[' | ']' if in_class => {
            out.push('\\');
            out.push(c);
        }
        // llama.cpp's reader (and transformers-CFG's) knows no `\-`; every reader knows `\x`
        '-' if in_class => out.push_str("\\x2D"),
        '^' if in_class => out.push_str("\\x5E"),
        '\n' => out.push_str("\\n"),
        '\t' => out.push_str("\\t"),
        '\r' => out.push_str("\\r"),
        ' '..='~' => out.push(c),
        c if (c as u32) < 0x100 => {
            let _ = write!(out, "\\x{:02X}", c as u32);
        }
        c if (c as u32) < 0x10000 => {
            let _ = write!(out, "\\u{:04X}", c as u32);
        }
        c => {
            let _ = write!(out, "\\U{:08X}", c as u32);
        }
    }
}

fn write_class(ranges: &[(char, char)], out: &mut String) {
    if ranges.is_empty() {
        out.push_str(NOTHING);
        return;
    }
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

fn write_hir(h: &Hir, out: &mut String) -> Result<(), String> {
    match h.kind() {
        HirKind::Empty => out.push_str("\"\""),
        HirKind::Literal(l) => {
            let s =
                std::str::from_utf8(&l.0).map_err(|_| "a literal that is not UTF-8".to_string())?;
            out.push('"');
            for c in s.chars() {
                push_char(c, false, out);
            }
            out.push('"');
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
            if r.min > MAX_COUNT || r.max.is_some_and(|n| n > MAX_COUNT) {
                return Err(format!("a count above {MAX_COUNT}"));
            }
            out.push('(');
            write_hir(&r.sub, out)?;
            out.push(')');
            let _ = match (r.min, r.max) {
                (0, None) => write!(out, "*"),
                (1, None) => write!(out, "+"),
                (0, Some(1)) => write!(out, "?"),
                (m, None) => write!(out, "{{{m},}}"),
                (m, Some(n)) if m == n => write!(out, "{{{m}}}"),
                (m, Some(n)) => write!(out, "{{{m},{n}}}"),
            };
        }
        HirKind::Capture(c) => {
            out.push('(');
            write_hir(&c.sub, out)?;
            out.push(')');
        }
        HirKind::Concat(parts) => {
            for (i, p) in parts.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                write_hir(p, out)?;
            }
        }
        HirKind::Alternation(alts) => {
            out.push('(');
            for (i, a) in alts.iter().enumerate() {
                if i > 0 {
                    out.push_str(" | ");
                }
                write_hir(a, out)?;
            }
            out.push(')');
        }
    }
    Ok(())
}
