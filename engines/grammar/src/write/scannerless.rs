//! [`to_lark_scannerless`]: a grammar as Lark text in which every terminal is one
//! character, so Lark's Earley parser (`lexer="dynamic_complete"`) judges membership
//! exactly as this crate reads the grammar.
//!
//! Why: the reference reads a grammar scannerless (a terminal is its regular language,
//! matched at every length; `%ignore` terminals at any length around every terminal).
//! Lark's dynamic lexers instead match a terminal's regex with Python's `re.match`
//! (leftmost-first alternation, lazy quantifiers) and try only prefixes of that one
//! match, and match `%ignore` greedily. With every lexeme a single character, lexing is
//! exact and the Earley parser decides a context-free language over characters, which
//! makes Lark an independent judge of the reference.
//!
//! How: `%ignore` is first made explicit ([`Grammar::expand_ignore`]: no `%ignore` line
//! is written). `start: <start rule>` opens the text; rule `i` is `r{i}_{name}: ...` as in
//! [`to_lark`](super::to_lark) (an empty alternative makes the rest optional, `[...]`);
//! terminal `i` becomes the *rule* `t{i}_{name}`, its regex rewritten from its parsed form
//! ([`Hir`]) as Lark EBNF: a literal as one-character strings (`"a" "b"`, or a
//! one-character regex such as `/\./` or `/\x0a/` where a string would need escapes), a
//! class as the one-character regex `/[...]/` (written as [`to_lark`](super::to_lark)
//! writes classes), repetition as `* + ?` and Lark's ranges `~ m..n`, alternation `|`
//! and groups `( )`. The empty string is written as nothing (an empty rule body, an
//! optional `( )?`), never as an empty terminal, which Lark refuses; a class no character
//! matches, and a rule with no alternative, as a class no character matches.
//!
//! Refused ([`Error::Unsupported`]): look-around assertions (`^ $ \b`) and byte classes
//! that are not whole UTF-8 characters.

use std::fmt::Write as _;

use regex_syntax::hir::{Class, Hir, HirKind};

use super::lark::{push_char, write_class};
use super::{alternatives, label};
use crate::error::Error;
use crate::ir::{Grammar, Symbol};

const NOTHING: &str = "/[^\\x00-\\U0010FFFF]/";

/// The grammar as Lark text whose every terminal is one character (see the module doc).
pub fn to_lark_scannerless(g: &Grammar) -> Result<String, Error> {
    let g = g.expand_ignore();
    let rule = |i: u32| label("r", i as usize, &g.rule(i).name, '_');
    let term = |i: u32| label("t", i as usize, &g.terminal(i).name, '_');
    let mut out = String::new();
    let _ = writeln!(out, "start: {}", rule(g.start));
    for (i, r) in g.rules.iter().enumerate() {
        let (alts, empty) = alternatives(r, |s| match *s {
            Symbol::Rule(j) => rule(j),
            Symbol::Terminal(j) => term(j),
        });
        let body = match (alts.is_empty(), empty) {
            (true, true) => String::new(),
            (true, false) => NOTHING.to_string(),
            (false, false) => alts.join("\n    | "),
            (false, true) => format!("[{}]", alts.join(" | ")),
        };
        let _ = writeln!(out, "{}: {body}", rule(i as u32));
    }
    for (i, t) in g.terminals.iter().enumerate() {
        let body = ebnf_of_regex(t.regex_text()?).map_err(|m| Error::Unsupported {
            line: 0,
            message: format!(
                "terminal {} (/{}/) in scannerless Lark: {m}",
                t.name, t.regex
            ),
        })?;
        let body = body.map(|e| e.text).unwrap_or_default();
        let _ = writeln!(out, "{}: {body}", term(i as u32));
    }
    Ok(out)
}

/// How tightly an expression binds: what it may be written next to without parentheses.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Prec {
    /// One terminal or a parenthesized group: takes a postfix operator.
    Atom,
    /// A sequence or a repeated item: may stand in a sequence.
    Seq,
    /// An alternation: needs parentheses inside a sequence.
    Alt,
}

/// A Lark expression (the empty string is `None` where an `Option<Expr>` is returned).
struct Expr {
    text: String,
    prec: Prec,
}

impl Expr {
    fn atom(text: String) -> Expr {
        Expr {
            text,
            prec: Prec::Atom,
        }
    }

    /// The expression, parenthesized unless it binds at least as tightly as `at`.
    fn at(self, at: Prec) -> String {
        if self.prec <= at {
            self.text
        } else {
            format!("({})", self.text)
        }
    }
}

/// A regex of the core's syntax as a Lark expression over one-character terminals.
fn ebnf_of_regex(regex: &str) -> Result<Option<Expr>, String> {
    let h = tokensdfa_core::dfa::parse(regex).map_err(|e| e.to_string())?;
    ebnf(&h)
}

/// One character as a Lark terminal: a string where no escape is needed, else a regex.
fn char_atom(c: char) -> String {
    match c {
        ' '..='~' if c != '"' && c != '\\' => format!("\"{c}\""),
        _ => {
            let mut s = String::from("/");
            push_char(c, false, &mut s);
            s.push('/');
            s
        }
    }
}

/// A class as one Lark terminal (a regex of one character), or the one of nothing.
fn class_atom(ranges: &[(char, char)]) -> Expr {
    match ranges {
        [] => Expr::atom(NOTHING.into()),
        [(a, b)] if a == b => Expr::atom(char_atom(*a)),
        _ => {
            let mut s = String::from("/");
            write_class(ranges, &mut s);
            s.push('/');
            Expr::atom(s)
        }
    }
}

fn ebnf(h: &Hir) -> Result<Option<Expr>, String> {
    Ok(match h.kind() {
        HirKind::Empty => None,
        HirKind::Literal(l) => {
            let s =
                std::str::from_utf8(&l.0).map_err(|_| "a literal that is not UTF-8".to_string())?;
            let atoms: Vec<String> = s.chars().map(char_atom).collect();
            match atoms.len() {
                0 => None,
                1 => Some(Expr::atom(atoms.concat())),
                _ => Some(Expr {
                    text: atoms.join(" "),
                    prec: Prec::Seq,
                }),
            }
        }
        HirKind::Class(Class::Unicode(c)) => {
            let r: Vec<(char, char)> = c.iter().map(|r| (r.start(), r.end())).collect();
            Some(class_atom(&r))
        }
        HirKind::Class(Class::Bytes(c)) => {
            if c.iter().any(|r| r.end() >= 0x80) {
                return Err("a byte class that is not whole UTF-8 characters".into());
            }
            let r: Vec<(char, char)> = c
                .iter()
                .map(|r| (char::from(r.start()), char::from(r.end())))
                .collect();
            Some(class_atom(&r))
        }
        HirKind::Look(l) => return Err(format!("look-around assertion {l:?}")),
        HirKind::Repetition(r) => ebnf(&r.sub)?.and_then(|e| repeat(e, r.min, r.max)),
        HirKind::Capture(c) => ebnf(&c.sub)?,
        HirKind::Concat(parts) => {
            let mut items = Vec::new();
            for p in parts {
                if let Some(e) = ebnf(p)? {
                    items.push(e.at(Prec::Seq));
                }
            }
            match items.len() {
                0 => None,
                1 => Some(Expr {
                    text: items.remove(0),
                    prec: Prec::Seq,
                }),
                _ => Some(Expr {
                    text: items.join(" "),
                    prec: Prec::Seq,
                }),
            }
        }
        HirKind::Alternation(alts) => {
            let mut items = Vec::new();
            let mut nullable = false;
            for a in alts {
                match ebnf(a)? {
                    Some(e) => items.push(e.at(Prec::Alt)),
                    None => nullable = true,
                }
            }
            let text = match (items.is_empty(), nullable) {
                (true, _) => return Ok(None),
                (false, false) => {
                    return Ok(Some(Expr {
                        text: items.join(" | "),
                        prec: Prec::Alt,
                    }))
                }
                (false, true) => format!("({})?", items.join(" | ")),
            };
            Some(Expr {
                text,
                prec: Prec::Seq,
            })
        }
    })
}

/// `e` repeated `min` to `max` times (unbounded where `max` is `None`); `None` for zero.
fn repeat(e: Expr, min: u32, max: Option<u32>) -> Option<Expr> {
    let a = e.at(Prec::Atom);
    let text = match (min, max) {
        (_, Some(0)) => return None,
        (1, Some(1)) => a,
        (0, None) => format!("{a}*"),
        (1, None) => format!("{a}+"),
        (0, Some(1)) => format!("{a}?"),
        (m, None) => format!("{a} ~ {m} {a}*"),
        (m, Some(n)) if m == n => format!("{a} ~ {m}"),
        (m, Some(n)) => format!("{a} ~ {m}..{n}"),
    };
    Some(Expr {
        text,
        prec: Prec::Seq,
    })
}
