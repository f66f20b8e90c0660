//! [`to_lark`]: a grammar as Lark text.
//!
//! Rules become `r{i}_{name}: ...` (an empty alternative makes the rest optional,
//! `[...]`), terminals `T{i}_{NAME}: /regex/`, except that a terminal named and spelled
//! as Lark's `common` library has it is written `%import common.NAME` (engines read
//! their own `common`, as they did the grammar it came from), `%ignore` lines follow, and
//! `start: <start rule>` opens the text. A rule with no alternative (an empty language)
//! refers to a terminal no text matches.
//!
//! The regexes are written from the terminal's parsed form so both readers agree:
//! ASCII punctuation is escaped with a backslash (never with `\xHH`: Lark unescapes
//! `\x2e` into `.` before Python sees it), control characters as `\xHH`, other
//! non-ASCII as `\uHHHH`/`\UHHHHHHHH` (Lark turns them into the character; Rust reads
//! the escape), classes as explicit ranges (no `\d`, `\w`, no Unicode classes), groups
//! as `(?:...)`, quantifiers greedy. `^`/`$`/`\b` are written as such (the IR's readers
//! rarely produce them); a byte class past ASCII (the core's parser never produces one)
//! keeps its ASCII part.

use std::fmt::Write as _;

use regex_syntax::hir::{Class, Hir, HirKind, Look};

use super::{alternatives, label};
use crate::error::Error;
use crate::ir::{Grammar, Symbol, Terminal};
use crate::read::common_terminal;

const NEVER: &str = "NEVER_";

/// The grammar as Lark text (see the module doc); an error for a terminal given as a
/// tree ([`Terminal::regex_text`]).
pub fn to_lark(g: &Grammar) -> Result<String, Error> {
    for t in &g.terminals {
        t.regex_text()?;
    }
    let rule = |i: u32| label("r", i as usize, &g.rule(i).name, '_');
    let imported = |t: &Terminal| common_terminal(&t.name).as_deref() == Some(t.regex.as_str());
    let term = |i: u32| {
        let t = g.terminal(i);
        if imported(t) {
            t.name.clone()
        } else {
            label("T", i as usize, &t.name, '_').to_ascii_uppercase()
        }
    };
    let mut out = String::new();
    let _ = writeln!(out, "start: {}", rule(g.start));
    let mut never = false;
    for (i, r) in g.rules.iter().enumerate() {
        let (alts, empty) = alternatives(r, |s| match *s {
            Symbol::Rule(j) => rule(j),
            Symbol::Terminal(j) => term(j),
        });
        let body = match (alts.is_empty(), empty) {
            (true, true) => String::new(),
            (true, false) => {
                never = true;
                NEVER.to_string()
            }
            (false, false) => alts.join("\n    | "),
            (false, true) => format!("[{}]", alts.join(" | ")),
        };
        let _ = writeln!(out, "{}: {body}", rule(i as u32));
    }
    for (i, t) in g.terminals.iter().enumerate() {
        if imported(t) {
            let _ = writeln!(out, "%import common.{}", t.name);
        } else {
            let _ = writeln!(out, "{}: /{}/", term(i as u32), lark_regex(&t.regex));
        }
    }
    if never {
        let _ = writeln!(out, "{NEVER}: /[^\\x00-\\U0010FFFF]/");
    }
    for &i in &g.ignore {
        let _ = writeln!(out, "%ignore {}", term(i));
    }
    Ok(out)
}

/// A regex of the core's syntax rewritten for Lark (a pattern the core does not parse,
/// which a read grammar never holds, is written as one that matches nothing).
pub(crate) fn lark_regex(regex: &str) -> String {
    match tokensdfa_core::dfa::parse(regex) {
        Ok(h) => {
            let mut s = String::new();
            write_hir(&h, &mut s);
            s
        }
        Err(_) => "[^\\x00-\\U0010FFFF]".into(),
    }
}

pub(super) fn push_char(c: char, in_class: bool, out: &mut String) {
    let meta = if in_class {
        "\\]-[^&~"
    } else {
        "\\.^$*+?()[]{}|/-#&~"
    };
    match c {
        '/' => out.push_str("\\/"),
        c if meta.contains(c) => {
            out.push('\\');
            out.push(c);
        }
        ' '..='~' => out.push(c),
        c if (c as u32) < 0x100 && (c.is_control()) => {
            let _ = write!(out, "\\x{:02x}", c as u32);
        }
        c if (c as u32) < 0x10000 => {
            let _ = write!(out, "\\u{:04x}", c as u32);
        }
        c => {
            let _ = write!(out, "\\U{:08x}", c as u32);
        }
    }
}

pub(super) fn write_class(ranges: &[(char, char)], out: &mut String) {
    if ranges.is_empty() {
        out.push_str("[^\\x00-\\U0010FFFF]");
        return;
    }
    if let [(a, b)] = ranges {
        if a == b {
            push_char(*a, false, out);
            return;
        }
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

fn write_group(h: &Hir, out: &mut String) {
    match h.kind() {
        HirKind::Literal(l) if std::str::from_utf8(&l.0).is_ok_and(|s| s.chars().count() == 1) => {
            write_hir(h, out)
        }
        HirKind::Class(_) | HirKind::Capture(_) => write_hir(h, out),
        _ => {
            out.push_str("(?:");
            write_hir(h, out);
            out.push(')');
        }
    }
}

fn write_hir(h: &Hir, out: &mut String) {
    match h.kind() {
        HirKind::Empty => out.push_str("(?:)"),
        HirKind::Literal(l) => {
            for c in String::from_utf8_lossy(&l.0).chars() {
                push_char(c, false, out);
            }
        }
        HirKind::Class(Class::Unicode(c)) => {
            let r: Vec<(char, char)> = c.iter().map(|r| (r.start(), r.end())).collect();
            write_class(&r, out);
        }
        HirKind::Class(Class::Bytes(c)) => {
            let r: Vec<(char, char)> = c
                .iter()
                .filter(|r| r.start() < 0x80)
                .map(|r| (char::from(r.start()), char::from(r.end().min(0x7f))))
                .collect();
            write_class(&r, out);
        }
        HirKind::Look(look) => out.push_str(match look {
            Look::Start => "^",
            Look::End => "$",
            Look::WordUnicodeNegate | Look::WordAsciiNegate => "\\B",
            _ => "\\b",
        }),
        HirKind::Repetition(r) => {
            write_group(&r.sub, out);
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
            out.push_str("(?:");
            write_hir(&c.sub, out);
            out.push(')');
        }
        HirKind::Concat(parts) => {
            for p in parts {
                if matches!(p.kind(), HirKind::Alternation(_)) {
                    write_group(p, out);
                } else {
                    write_hir(p, out);
                }
            }
        }
        HirKind::Alternation(alts) => {
            out.push_str("(?:");
            for (i, a) in alts.iter().enumerate() {
                if i > 0 {
                    out.push('|');
                }
                write_hir(a, out);
            }
            out.push(')');
        }
    }
}
