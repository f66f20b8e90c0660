//! Printing an [`Rx`] tree in the regex-syntax dialect, and the printed lengths its nodes
//! cache.
//!
//! Only escapes that regex-syntax and Python's `re` read alike are written (`\xHH`,
//! `\uHHHH`, `\UHHHHHHHH`, a backslash before a meta character), so a compiled regex
//! can also be checked with `re`. A subtree shared by many parents (a `$ref`, the
//! unconstrained value) is printed once and copied where it recurs: the printed text
//! can be far larger than the tree.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt::Write;
use std::rc::Rc;

use crate::languages::charset::{CharSet, MAX_CHAR};
use crate::languages::rx::{Kind, Node, Rx};

/// A regex that matches nothing.
pub const NEVER: &str = "[a&&b]";

/// Shared subtrees shorter than this are printed afresh: copying them costs as much.
const MEMO_MIN_LEN: usize = 64;

/// Prints the tree; the result parses with regex-syntax (Unicode, UTF-8 mode).
pub fn print(x: &Rx) -> String {
    let mut p = Printer {
        out: String::with_capacity(x.len),
        memo: HashMap::new(),
    };
    p.node(x);
    p.out
}

/// The text so far, and where each shared subtree printed so far lies in it.
struct Printer {
    out: String,
    memo: HashMap<*const Node, (usize, usize)>,
}

impl Printer {
    fn node(&mut self, x: &Rx) {
        let shared = x.len >= MEMO_MIN_LEN && Rc::strong_count(x) > 1;
        if shared {
            if let Some(&(start, end)) = self.memo.get(&Rc::as_ptr(x)) {
                let copy = self.out[start..end].to_owned();
                self.out.push_str(&copy);
                return;
            }
        }
        let start = self.out.len();
        write_kind(self, x);
        if shared {
            self.memo.insert(Rc::as_ptr(x), (start, self.out.len()));
        }
    }

    fn grouped(&mut self, x: &Rx, group: bool) {
        if group {
            self.out.push('(');
        }
        self.node(x);
        if group {
            self.out.push(')');
        }
    }
}

fn write_kind(p: &mut Printer, x: &Node) {
    let out = &mut p.out;
    match &x.kind {
        // a rule is never printed: `compile` refuses a tree that holds one
        Kind::Never | Kind::Rule(_) => out.push_str(NEVER),
        Kind::Empty => {}
        Kind::Lit(s) => s.chars().for_each(|c| write_char(c, out)),
        Kind::Set(s) => write_set(s, out),
        Kind::Concat(v) => v.iter().for_each(|x| {
            let group = matches!(x.kind, Kind::Alt(_));
            p.grouped(x, group)
        }),
        Kind::Alt(v) => {
            for (i, x) in v.iter().enumerate() {
                if i > 0 {
                    p.out.push('|');
                }
                p.node(x);
            }
        }
        Kind::Repeat(x, lo, hi) => {
            p.grouped(x, !x.is_atom());
            p.out.push_str(&quantifier(*lo, *hi));
        }
        Kind::Graph(g) => match &g.text {
            Some(text) => p.grouped(text, true),
            None => p.grouped(&crate::languages::eliminate::graph_rx(g), true),
        },
    }
}

fn is_meta(c: char) -> bool {
    regex_syntax::is_meta_character(c)
}

fn write_char(c: char, out: &mut String) {
    if is_meta(c) {
        out.push('\\');
        out.push(c);
    } else if as_code_point(c) {
        write_code_point(c as u32, out);
    } else {
        out.push(c);
    }
}

/// Whether `c` is printed as a code-point escape (outside or inside a class).
fn as_code_point(c: char) -> bool {
    c.is_control() || (c as u32) < 0x20 || c.is_whitespace()
}

/// `\xHH`, `\uHHHH` or `\UHHHHHHHH`: the escapes regex-syntax and Python's `re` read
/// alike, so a compiled regex can also be checked with `re` (the harness ranks and tests
/// instances that way).
fn write_code_point(c: u32, out: &mut String) {
    let _ = match c {
        0..=0xFF => write!(out, "\\x{c:02X}"),
        0x100..=0xFFFF => write!(out, "\\u{c:04X}"),
        _ => write!(out, "\\U{c:08X}"),
    };
}

fn code_point_len(c: u32) -> usize {
    match c {
        0..=0xFF => 4,
        0x100..=0xFFFF => 6,
        _ => 10,
    }
}

/// The printed length of `write_char(c)`, computed without printing: lengths are taken
/// for every literal node, so this is on the compiler's hot path.
pub(super) fn char_len(c: char) -> usize {
    if is_meta(c) {
        2
    } else if as_code_point(c) {
        code_point_len(c as u32)
    } else {
        c.len_utf8()
    }
}

pub(super) fn escaped_len(s: &str) -> usize {
    s.chars().map(char_len).sum()
}

fn is_class_meta(ch: char) -> bool {
    matches!(ch, '\\' | ']' | '[' | '-' | '^' | '&' | '~')
}

/// The printed length of `write_class_char(c)`.
fn class_char_len(c: u32) -> usize {
    let ch = char::from_u32(c).expect("sets hold scalar values");
    if is_class_meta(ch) {
        2
    } else if as_code_point(ch) {
        code_point_len(c)
    } else {
        ch.len_utf8()
    }
}

fn write_class_char(c: u32, out: &mut String) {
    let ch = char::from_u32(c).expect("sets hold scalar values");
    if is_class_meta(ch) {
        out.push('\\');
        out.push(ch);
    } else if as_code_point(ch) {
        write_code_point(c, out);
    } else {
        out.push(ch);
    }
}

/// Prints the set or its complement, whichever has fewer ranges. Most sets are small
/// and win outright (a complement has at most one range more than its set, plus one for
/// the surrogate gap), so the complement is only built when it could be shorter.
fn set_form(s: &CharSet) -> (bool, Cow<'_, CharSet>) {
    let n = s.ranges().len();
    let starts_at_zero = s.ranges().first().is_some_and(|&(a, _)| a == 0);
    let ends_at_max = s.ranges().last().is_some_and(|&(_, b)| b == MAX_CHAR);
    if !starts_at_zero && !ends_at_max {
        return (false, Cow::Borrowed(s)); // the complement has n + 1 ranges or more
    }
    let c = s.complement();
    if !c.is_empty() && c.ranges().len() < n {
        (true, Cow::Owned(c))
    } else {
        (false, Cow::Borrowed(s))
    }
}

pub(super) fn set_len(s: &CharSet) -> usize {
    if let Some(c) = s.as_single() {
        return char_len(c);
    }
    let (neg, body) = set_form(s);
    let inner: usize = body
        .ranges()
        .iter()
        .map(|&(a, b)| match b - a {
            0 => class_char_len(a),
            1 => class_char_len(a) + class_char_len(b),
            _ => class_char_len(a) + 1 + class_char_len(b),
        })
        .sum();
    inner + 2 + neg as usize
}

fn write_set(s: &CharSet, out: &mut String) {
    if let Some(c) = s.as_single() {
        write_char(c, out);
        return;
    }
    let (neg, body) = set_form(s);
    out.push('[');
    if neg {
        out.push('^');
    }
    for &(a, b) in body.ranges() {
        write_class_char(a, out);
        if b > a {
            if b > a + 1 {
                out.push('-');
            }
            write_class_char(b, out);
        }
    }
    out.push(']');
}

pub(super) fn quantifier(lo: u32, hi: Option<u32>) -> String {
    match (lo, hi) {
        (0, None) => "*".into(),
        (1, None) => "+".into(),
        (0, Some(1)) => "?".into(),
        (n, None) => format!("{{{n},}}"),
        (n, Some(m)) if n == m => format!("{{{n}}}"),
        (n, Some(m)) => format!("{{{n},{m}}}"),
    }
}
