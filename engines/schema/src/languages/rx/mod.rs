//! A small regular-expression tree, printed in the regex-syntax dialect.
//!
//! Printed lengths saturate, so a tree whose printed form could never be written (a
//! DAG that shares subtrees exponentially) still reports a length past any guard.
//!
//! Every language the compiler builds is an [`Rx`]: an `Rc`-shared node, so a subschema
//! used in many places is built once and only *printing* repeats it. Each node caches
//! its printed length and group nesting, so the size guard is checked before a byte is
//! printed, and a regex that would pass it is refused without being written.
//!
//! The smart constructors ([`concat()`], [`alt`], [`repeat`]) keep the tree normal: no
//! nested concatenation or alternation, no `Empty` inside a concatenation, `Never`
//! (the empty language) absorbed or dropped, adjacent literals joined, and alternatives
//! that are single characters joined into one class. They never change the language.
//!
//! The same type carries two alphabets: *character-level* trees (patterns, formats,
//! keys), whose literals and sets are decoded string characters, and *text-level* trees
//! (the output), where they are the characters of the JSON text. `spell` maps the
//! first to the second.
//!
//! Here: the tree and its constructors; [`alternatives`]: what one [`alt`] keeps, once
//! each; [`printer`]: the text, and the printed lengths the nodes cache.

use std::rc::Rc;
use std::sync::Arc;

use tokensdfa_core::counted::Counted;

use crate::languages::charset::CharSet;

pub mod alternatives;
pub mod printer;

use alternatives::Alternatives;
pub use printer::print;
use printer::{escaped_len, quantifier, set_len, NEVER};

pub type Rx = Rc<Node>;

#[derive(Debug, PartialEq, Eq)]
pub struct Node {
    pub kind: Kind,
    /// Printed length, standalone (for a [`Kind::Graph`], see [`Graph`]).
    pub(super) len: usize,
    /// Group and repetition nesting of the printed form.
    depth: usize,
    /// Whether a [`Kind::Graph`] without a [`Graph::text`] is inside: such a tree has no
    /// printed form worth writing (see [`Graph`]).
    graphs: bool,
    /// Whether a [`Kind::Rule`] is inside: such a tree is a grammar's right-hand side,
    /// not a regular language (see [`Kind::Rule`]).
    rules: bool,
}

/// A counted automaton ([`tokensdfa_core::counted`]) whose edges read one character each: the
/// language of a string constraint whose product with its length bound is too large to
/// build, let alone print. The lazy index's tree carries it as is, and
/// [`crate::compile`] refuses a tree that holds one rather than print it (the printer
/// writes it by state elimination of every `(state, count)` pair, for tests). So its
/// `len` is not a printed length but what the tree's text guard
/// ([`crate::Dialect::max_tree_text_len`]) means to bound, the NFA compiled as the walks
/// go: the labels of its largest state, which is what one step compiles.
///
/// A graph may also carry its language as a regex ([`Graph::text`]): an automaton whose
/// regex was written but is long ([`crate::languages::eliminate::to_rx_or_graph`]). The regex text
/// prints that, as a group, and measures it so; the tree still takes the automaton,
/// whose states the lazy index compiles once, where the regex's positions would be
/// compiled once for every place it stands.
#[derive(Debug)]
pub struct Graph {
    pub counted: Arc<Counted>,
    /// Per state, one label per edge, beside [`Counted::targets`].
    pub labels: Vec<Vec<Rx>>,
    /// The same language as a regex, where one was written.
    pub text: Option<Rx>,
}

impl PartialEq for Graph {
    fn eq(&self, other: &Graph) -> bool {
        Arc::ptr_eq(&self.counted, &other.counted) && self.labels == other.labels
    }
}

impl Eq for Graph {}

#[derive(Debug, PartialEq, Eq)]
pub enum Kind {
    /// The empty language.
    Never,
    /// The empty string.
    Empty,
    Lit(String),
    Set(CharSet),
    Concat(Vec<Rx>),
    Alt(Vec<Rx>),
    Repeat(Rx, u32, Option<u32>),
    Graph(Rc<Graph>),
    /// A nonterminal of the grammar mode ([`crate::compile_grammar`]): the language of
    /// rule `n` of the grammar being written (an unconstrained value, which nests
    /// without bound). Only that mode makes one, and it hands a tree holding one to
    /// [`crate::emitting::rules`], never to the printer or an automaton: they read it as
    /// the empty language.
    Rule(u32),
}

impl Node {
    pub fn printed_len(&self) -> usize {
        self.len
    }

    pub fn nesting(&self) -> usize {
        self.depth
    }

    /// Whether a counted automaton is inside (see [`Graph`]).
    pub fn has_graph(&self) -> bool {
        self.graphs
    }

    /// Whether a nonterminal is inside (see [`Kind::Rule`]).
    pub fn has_rule(&self) -> bool {
        self.rules
    }

    pub(super) fn is_atom(&self) -> bool {
        match &self.kind {
            Kind::Lit(s) => s.chars().count() == 1,
            Kind::Set(_) => true,
            _ => false,
        }
    }

    /// Length and depth when printed as the operand of a repetition.
    fn as_operand(&self) -> (usize, usize) {
        if self.is_atom() {
            (self.len, self.depth)
        } else {
            (self.len.saturating_add(2), self.depth + 1)
        }
    }

    /// Length and depth when printed inside a concatenation.
    fn in_concat(&self) -> (usize, usize) {
        if matches!(self.kind, Kind::Alt(_)) {
            (self.len.saturating_add(2), self.depth + 1)
        } else {
            (self.len, self.depth)
        }
    }
}

/// Depth counts what regex-syntax's nest limit counts (its parser refuses more than
/// 250 levels, and every index parses with it): each group, repetition, bracketed class,
/// concatenation (a literal of two characters or more is one) and alternation.
fn node(kind: Kind) -> Rx {
    let (len, depth) = match &kind {
        Kind::Never | Kind::Rule(_) => (NEVER.len(), 1),
        Kind::Empty => (0, 0),
        Kind::Lit(s) => (escaped_len(s), usize::from(s.chars().nth(1).is_some())),
        Kind::Set(s) => (set_len(s), 1),
        Kind::Concat(v) => {
            let (len, depth) = v
                .iter()
                .map(|x| x.in_concat())
                .fold((0usize, 0usize), |a, b| {
                    (a.0.saturating_add(b.0), a.1.max(b.1))
                });
            (len, depth + 1)
        }
        Kind::Alt(v) => (
            v.iter().fold(v.len() - 1, |a, x| a.saturating_add(x.len)),
            v.iter().map(|x| x.depth).max().unwrap_or(0) + 1,
        ),
        Kind::Repeat(x, lo, hi) => {
            let (l, d) = x.as_operand();
            (l.saturating_add(quantifier(*lo, *hi).len()), d + 1)
        }
        Kind::Graph(g) => match &g.text {
            Some(text) => (text.len.saturating_add(2), text.depth + 1),
            None => {
                let at_one = |v: &Vec<Rx>| v.iter().fold(1usize, |a, x| a.saturating_add(x.len));
                let len = g.labels.iter().map(at_one).max().unwrap_or(1);
                let labels = g.labels.iter().flatten();
                (len, labels.map(|x| x.depth).max().unwrap_or(0) + 1)
            }
        },
    };
    let graphs = match &kind {
        Kind::Concat(v) | Kind::Alt(v) => v.iter().any(|x| x.graphs),
        Kind::Repeat(x, _, _) => x.graphs,
        Kind::Graph(g) => g.text.as_ref().is_none_or(|t| t.graphs),
        _ => false,
    };
    let rules = match &kind {
        Kind::Concat(v) | Kind::Alt(v) => v.iter().any(|x| x.rules),
        Kind::Repeat(x, _, _) => x.rules,
        Kind::Graph(g) => g.labels.iter().flatten().any(|x| x.rules),
        Kind::Rule(_) => true,
        _ => false,
    };
    Rc::new(Node {
        kind,
        len,
        depth,
        graphs,
        rules,
    })
}

/// The counted automaton `g` (an empty language when its start is not feasible).
pub fn graph(g: Graph) -> Rx {
    if !g.counted.feasible(0, 0) {
        return never();
    }
    node(Kind::Graph(Rc::new(g)))
}

pub fn never() -> Rx {
    node(Kind::Never)
}

/// The nonterminal `n` (see [`Kind::Rule`]).
pub fn rule(n: u32) -> Rx {
    node(Kind::Rule(n))
}

pub fn empty() -> Rx {
    node(Kind::Empty)
}

pub fn lit(s: &str) -> Rx {
    if s.is_empty() {
        empty()
    } else {
        node(Kind::Lit(s.to_string()))
    }
}

pub fn set(s: CharSet) -> Rx {
    if s.is_empty() {
        never()
    } else {
        node(Kind::Set(s))
    }
}

pub fn is_never(x: &Rx) -> bool {
    matches!(x.kind, Kind::Never)
}

pub fn concat(parts: impl IntoIterator<Item = Rx>) -> Rx {
    let mut out: Vec<Rx> = Vec::new();
    for p in parts {
        match &p.kind {
            Kind::Never => return never(),
            Kind::Empty => {}
            Kind::Concat(v) => v.iter().for_each(|x| push_concat(&mut out, x.clone())),
            _ => push_concat(&mut out, p),
        }
    }
    match out.len() {
        0 => empty(),
        1 => out.pop().unwrap(),
        _ => node(Kind::Concat(out)),
    }
}

fn push_concat(out: &mut Vec<Rx>, x: Rx) {
    if let (Some(last), Kind::Lit(b)) = (out.last(), &x.kind) {
        if let Kind::Lit(a) = &last.kind {
            let joined = format!("{a}{b}");
            *out.last_mut().unwrap() = lit(&joined);
            return;
        }
    }
    out.push(x);
}

pub fn alt(parts: impl IntoIterator<Item = Rx>) -> Rx {
    let mut out = Alternatives::default();
    let mut has_empty = false;
    for p in parts {
        match &p.kind {
            Kind::Never => {}
            Kind::Empty => has_empty = true,
            Kind::Alt(v) => v.iter().for_each(|x| out.push(x.clone())),
            _ => out.push(p),
        }
    }
    let mut out = out.finish();
    let body = match out.len() {
        0 => return if has_empty { empty() } else { never() },
        1 => out.pop().unwrap(),
        _ => node(Kind::Alt(out)),
    };
    if has_empty {
        repeat(body, 0, Some(1))
    } else {
        body
    }
}

pub fn repeat(x: Rx, lo: u32, hi: Option<u32>) -> Rx {
    if hi.is_some_and(|h| h < lo) {
        return never();
    }
    match &x.kind {
        Kind::Never => return if lo == 0 { empty() } else { never() },
        Kind::Empty => return empty(),
        _ => {}
    }
    match (lo, hi) {
        (0, Some(0)) => empty(),
        (1, Some(1)) => x,
        _ => node(Kind::Repeat(x, lo, hi)),
    }
}

pub fn opt(x: Rx) -> Rx {
    repeat(x, 0, Some(1))
}

pub fn star(x: Rx) -> Rx {
    repeat(x, 0, None)
}

/// Whether `x` matches the empty string. (Walks the tree, not the DAG's shared nodes
/// once: for the small trees of a pattern.)
pub fn nullable(x: &Rx) -> bool {
    match &x.kind {
        // a rule is an unconstrained JSON value, never empty
        Kind::Never | Kind::Lit(_) | Kind::Set(_) | Kind::Rule(_) => false,
        Kind::Empty => true,
        Kind::Concat(v) => v.iter().all(nullable),
        Kind::Alt(v) => v.iter().any(nullable),
        Kind::Repeat(y, lo, _) => *lo == 0 || nullable(y),
        Kind::Graph(g) => g.counted.stops(0, 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::full_match;

    /// Alternatives are kept once each, in first-seen order, whether a duplicate is
    /// the same shared node or an equal one built apart, and on either side of the
    /// point where the scan gives way to the structure index.
    #[test]
    fn alternatives_are_kept_once_in_order() {
        let value = |i: usize| concat([lit(&format!("v{i}")), opt(lit(".0"))]);
        let firsts: Vec<Rx> = (0..100).map(value).collect();
        let mut parts = firsts.clone();
        parts.extend(firsts.iter().rev().cloned());
        parts.extend((0..100).map(value));
        parts.push(set(CharSet::range('a' as u32, 'c' as u32)));
        parts.push(lit("x"));
        let joined = alt(parts);
        let Kind::Alt(kept) = &joined.kind else {
            panic!("{}", print(&joined))
        };
        assert_eq!(kept.len(), 101, "{}", print(&joined));
        assert_eq!(print(&kept[0]), "[a-cx]");
        for (i, k) in kept[1..].iter().enumerate() {
            assert!(Rc::ptr_eq(k, &firsts[i]), "{i}: {}", print(k));
        }
        // below the scan limit the same holds
        let few = alt([
            value(1),
            value(2),
            value(1),
            firsts[2].clone(),
            firsts[2].clone(),
        ]);
        assert_eq!(print(&few), print(&alt([value(1), value(2)])));
    }

    #[test]
    fn printed_length_is_cached_exactly() {
        let a = concat([lit("a.b"), set(CharSet::range('x' as u32, 'z' as u32))]);
        let b = alt([a.clone(), lit("\n"), repeat(a.clone(), 2, Some(5))]);
        let c = concat([b.clone(), star(set(CharSet::single('-').complement()))]);
        for x in [a, b, c] {
            assert_eq!(print(&x).len(), x.printed_len(), "{}", print(&x));
        }
    }

    #[test]
    fn printed_regexes_parse_and_mean_what_they_say() {
        let meta = set(CharSet::from_ranges(vec![
            (']' as u32, '^' as u32),
            ('-' as u32, '-' as u32),
            ('&' as u32, '&' as u32),
        ]));
        let re = print(&concat([lit("[a]"), meta, alt([lit("x"), empty()])]));
        assert!(full_match(&re, "[a]^x"), "{re}");
        assert!(full_match(&re, "[a]&"), "{re}");
        assert!(!full_match(&re, "[a]a"), "{re}");
        assert!(!full_match(&print(&never()), ""));
        // a set whose complement is empty is printed as itself, never as `[^]`
        let any = print(&set(CharSet::full()));
        assert!(
            full_match(&any, "a") && full_match(&any, "\u{10FFFF}"),
            "{any}"
        );
    }

    #[test]
    fn shared_subtrees_print_the_same_as_fresh_ones() {
        let shared = concat([lit("{\"k\":"), set(CharSet::range('0' as u32, '9' as u32))]);
        let shared = repeat(
            alt([shared.clone(), lit("x".repeat(70).as_str())]),
            1,
            Some(3),
        );
        let twice = concat([shared.clone(), lit(","), shared.clone()]);
        let once = print(&shared);
        assert_eq!(print(&twice), format!("{once},{once}"));
        assert_eq!(print(&twice).len(), twice.printed_len());
    }

    #[test]
    fn constructors_absorb_never_and_empty() {
        assert!(is_never(&concat([lit("a"), never()])));
        assert_eq!(print(&alt([never(), lit("ab")])), "ab");
        assert_eq!(print(&alt([lit("ab"), empty()])), "(ab)?");
        assert_eq!(print(&alt([lit("a"), lit("b"), lit("c")])), "[a-c]");
        assert_eq!(print(&repeat(never(), 0, None)), "");
    }
}
