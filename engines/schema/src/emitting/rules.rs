//! The grammar mode's output: a schema's language as a context-free grammar whose
//! terminals are regular languages, for TokensDFA's pushdown mode.
//!
//! In the grammar mode ([`crate::context::Ctx::rules`]) an unconstrained value is not
//! unrolled [`crate::Dialect::any_depth`] levels deep: it is a nonterminal,
//! [`ANY_SPACED`] (or [`ANY_COMPACT`] inside a compact container), whose right-hand side
//! ([`crate::emitting::emit::Emitter::any_rule_body`]) holds the same nonterminal one
//! level down. So values nest without bound, as JSON Schema says, and the language is
//! context-free. The emitted tree is then cut into a [`SchemaGrammar`] here:
//!
//! - a node holding no nonterminal whose printed regex is at most [`SPLIT`] bytes is
//!   one terminal (the grammar's terminals are regular languages matched as wholes),
//!   given as [`Leaves`] says: as the core's tree ([`Leaves::Trees`], for the pushdown
//!   mode: no regex printed and parsed again, a string's counted automaton kept as
//!   one, the tree's limits), or as its printed regex ([`Leaves::Text`], for a grammar
//!   written out, within the dialect's text limit);
//! - a node holding a nonterminal, or longer, becomes structure: a concatenation a
//!   sequence, an alternation alternatives, a repetition a repetition;
//! - except the content of one string: in a concatenation, the children between a
//!   literal ending in `"` and the next literal starting with one, when none holds a
//!   nonterminal, are one terminal however long. An object's other keys (every string
//!   but the declared keys, [`crate::emitting::keys`]) print past [`SPLIT`] beside a
//!   dozen keys, and cut, a key position's items each held a piece (a key's prefix, a
//!   character leaving the keys) that dies on some character, so no item vouched for
//!   the runs of string characters the position takes whole (the pushdown mode's run
//!   bounds), and its first mask walked the whole vocabulary (MaskBench, llama3: 268,000
//!   trie nodes, 1.9 ms). Grouping children keeps the language, whatever they are;
//! - a structured node with more than one parent (the tree is a DAG: a value's regex is
//!   built once however often the schema uses it) becomes a rule of its own, used by
//!   name, so the grammar's size is the DAG's, never the printed text's.
//!
//! The grammar's language is the tree's: every step above keeps it. A counted automaton
//! whose edges hold a nonterminal (a member count or `contains` over values that nest
//! unconstrained values) has no such cut and is refused ([`graph_over_rule`] finds one),
//! as is a terminal past its form's limits. Each distinct node is one terminal however
//! often it is used.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use tokensdfa_core::Forest;

use crate::context::{Fail, Step};
use crate::dialect::Dialect;
use crate::emitting::to_ast::{within_tree_text, TreeBuilder};
use crate::languages::rx::{self, Kind, Node, Rx};

/// The start rule.
pub const START: u32 = 0;
/// An unconstrained value written with the dialect's separators.
pub const ANY_SPACED: u32 = 1;
/// An unconstrained value inside a compact container (no whitespace).
pub const ANY_COMPACT: u32 = 2;
/// The first rule of a recursive `$ref` ([`crate::shapes::shape::Shape::rules`]).
pub const FIRST_REF_RULE: u32 = 3;

/// The printed length past which a node with no nonterminal is cut into structure
/// rather than kept as one terminal: terminals stay small automata, and a large shared
/// piece is one rule rather than a copy in every terminal that holds it. Fewer, larger
/// terminals reach a first mask sooner: on five schemastore schemas (llama3) the first
/// mask took 1.46-2.13x the lazy index's at 2 KB, 1.18-1.86x at 8 KB, and no less at
/// 32 KB or 1 MB.
pub const SPLIT: usize = 8192;

/// How a grammar's terminals are given (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Leaves {
    /// Printed regexes, [`Part::Regex`].
    Text,
    /// The core's trees, [`Part::Tree`].
    Trees,
}

/// A right-hand side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    /// A terminal: a regex in regex-syntax's syntax (the core's), matched as a whole.
    Regex(String),
    /// A terminal: the tree at node `n` of [`SchemaGrammar::forest`], matched as a whole.
    Tree(u32),
    /// The rule of that number.
    Rule(u32),
    /// One after another (none: the empty string).
    Seq(Vec<Part>),
    /// One of them (none: the empty language).
    Alt(Vec<Part>),
    /// `lo` to `hi` copies (`None`: unbounded).
    Repeat(Box<Part>, u32, Option<u32>),
}

/// A schema's texts as a grammar: `rules[n]` is rule `n`'s right-hand side; rule
/// [`START`] derives the texts. A rule the schema never uses is the empty language.
/// `forest` holds the terminals [`Part::Tree`] names, as roots of one tree (None with
/// [`Leaves::Text`]).
#[derive(Clone)]
pub struct SchemaGrammar {
    pub rules: Vec<Part>,
    pub forest: Option<Arc<Forest>>,
}

/// The grammar of `start`, whose other nonterminals ([`ANY_SPACED`], [`ANY_COMPACT`],
/// the rules of recursive `$ref`s from [`FIRST_REF_RULE`]) have the right-hand sides
/// `bodies` (a rule not among them is the empty language), cut as the module doc says.
pub fn lower(
    start: &Rx,
    bodies: &[(u32, Rx)],
    dialect: &Dialect,
    leaves: Leaves,
) -> Step<SchemaGrammar> {
    let mut parents = HashMap::new();
    count_parents(start, &mut parents);
    for (_, body) in bodies {
        count_parents(body, &mut parents);
    }
    let size = bodies
        .iter()
        .map(|&(n, _)| n + 1)
        .fold(FIRST_REF_RULE, u32::max);
    let mut l = Lowerer {
        rules: vec![Part::Alt(Vec::new()); size as usize],
        named: HashMap::new(),
        parents,
        dialect,
        trees: (leaves == Leaves::Trees).then(TreeBuilder::default),
        groups: Vec::new(),
    };
    // a right-hand side met inside the tree is its rule (a recursive `$ref`'s target
    // is read once, where it is entered first, and stands for the rule there too)
    for (n, body) in bodies {
        if structured(body) {
            l.named.insert(Rx::as_ptr(body), (body.clone(), *n));
        }
    }
    l.rules[START as usize] = l.part(start)?;
    for (n, body) in bodies {
        l.rules[*n as usize] = l.structure(body)?;
    }
    let forest = match l.trees {
        Some(b) if b.ast.nodes.len() > dialect.max_tree_nodes => {
            return Err(Fail::Limit(format!(
                "the grammar's terminals would be a tree of {} nodes",
                b.ast.nodes.len()
            )))
        }
        Some(b) => Some(Arc::new(Forest::new(b.ast))),
        None => None,
    };
    Ok(SchemaGrammar {
        rules: l.rules,
        forest,
    })
}

/// Whether `x` holds a counted automaton whose edges hold a nonterminal.
pub fn graph_over_rule(x: &Rx) -> bool {
    let mut stack = vec![x.clone()];
    let mut seen = HashSet::new();
    while let Some(x) = stack.pop() {
        if !x.has_rule() || !seen.insert(Rx::as_ptr(&x)) {
            continue;
        }
        match &x.kind {
            Kind::Graph(_) => return true,
            Kind::Concat(v) | Kind::Alt(v) => stack.extend(v.iter().cloned()),
            Kind::Repeat(y, _, _) => stack.push(y.clone()),
            _ => {}
        }
    }
    false
}

/// Whether `x` is cut into structure rather than kept as one terminal.
fn structured(x: &Node) -> bool {
    matches!(x.kind, Kind::Concat(_) | Kind::Alt(_) | Kind::Repeat(..))
        && (x.has_rule() || x.printed_len() > SPLIT)
}

/// The children of `x` when it is structured.
fn children(x: &Node) -> &[Rx] {
    match &x.kind {
        Kind::Concat(v) | Kind::Alt(v) => v,
        Kind::Repeat(y, _, _) => std::slice::from_ref(y),
        _ => &[],
    }
}

/// How many structured parents each structured node has, counting each edge once per
/// parent (a DAG walk: each structured node's children are counted on its first visit).
fn count_parents(root: &Rx, parents: &mut HashMap<*const Node, usize>) {
    let mut stack = vec![root.clone()];
    let mut seen = HashMap::<*const Node, ()>::new();
    while let Some(x) = stack.pop() {
        if !structured(&x) || seen.insert(Rx::as_ptr(&x), ()).is_some() {
            continue;
        }
        for c in children(&x) {
            if structured(c) {
                *parents.entry(Rx::as_ptr(c)).or_insert(0) += 1;
                stack.push(c.clone());
            }
        }
    }
}

struct Lowerer<'d> {
    rules: Vec<Part>,
    /// Shared structured nodes already made rules (the node kept alive beside its key).
    named: HashMap<*const Node, (Rx, u32)>,
    parents: HashMap<*const Node, usize>,
    dialect: &'d Dialect,
    /// The terminals' tree, with [`Leaves::Trees`].
    trees: Option<TreeBuilder>,
    /// The string contents grouped into one node each (`sequence`), kept alive.
    groups: Vec<Rx>,
}

impl Lowerer<'_> {
    /// `x` where it is used: a terminal, its structure, or the rule standing for it.
    fn part(&mut self, x: &Rx) -> Step<Part> {
        if !structured(x) {
            return self.leaf(x);
        }
        let key = Rx::as_ptr(x);
        if let Some((_, n)) = self.named.get(&key) {
            return Ok(Part::Rule(*n));
        }
        if self.parents.get(&key).copied().unwrap_or(0) <= 1 {
            return self.structure(x);
        }
        let n = u32::try_from(self.rules.len())
            .map_err(|_| Fail::Limit("a grammar of too many rules".into()))?;
        self.rules.push(Part::Alt(Vec::new()));
        self.named.insert(key, (x.clone(), n));
        self.rules[n as usize] = self.structure(x)?;
        Ok(Part::Rule(n))
    }

    /// The structure of `x` itself (a leaf for a node that is not structured).
    fn structure(&mut self, x: &Rx) -> Step<Part> {
        let parts = |l: &mut Self, v: &[Rx]| v.iter().map(|c| l.part(c)).collect::<Step<Vec<_>>>();
        match &x.kind {
            Kind::Concat(v) if structured(x) => self.sequence(v),
            Kind::Alt(v) if structured(x) => Ok(Part::Alt(parts(self, v)?)),
            Kind::Repeat(y, lo, hi) if structured(x) => {
                Ok(Part::Repeat(Box::new(self.part(y)?), *lo, *hi))
            }
            _ => self.leaf(x),
        }
    }

    /// The parts of a structured concatenation's children, each string's content one
    /// terminal (see the module doc).
    fn sequence(&mut self, v: &[Rx]) -> Step<Part> {
        let quote_last = |x: &Rx| matches!(&x.kind, Kind::Lit(s) if s.ends_with('"'));
        let quote_first = |x: &Rx| matches!(&x.kind, Kind::Lit(s) if s.starts_with('"'));
        let mut out = Vec::with_capacity(v.len());
        let mut i = 0;
        while i < v.len() {
            let run = if i > 0 && quote_last(&v[i - 1]) {
                let end = (i..v.len()).find(|&j| quote_first(&v[j]) || v[j].has_rule());
                end.filter(|&j| quote_first(&v[j]) && j > i)
            } else {
                None
            };
            let group = run
                .map(|j| (j, rx::concat(v[i..j].iter().cloned())))
                .filter(|(_, g)| self.fits(g));
            match group {
                Some((j, g)) => {
                    out.push(self.leaf(&g)?);
                    // the trees' builder knows nodes by address: a group dropped here
                    // could lend its address to the next one, which would read as it
                    self.groups.push(g);
                    i = j;
                }
                None => {
                    out.push(self.part(&v[i])?);
                    i += 1;
                }
            }
        }
        Ok(Part::Seq(out))
    }

    /// Whether `x` is within what one terminal may be (else it is cut as its size says).
    fn fits(&self, x: &Rx) -> bool {
        match self.trees {
            Some(_) => x.printed_len() <= self.dialect.max_tree_text_len,
            None => !x.has_graph() && x.printed_len() <= self.dialect.max_regex_len,
        }
    }

    /// A node that is not structured: a nonterminal, the empty string, or a terminal.
    fn leaf(&mut self, x: &Rx) -> Step<Part> {
        match &x.kind {
            Kind::Rule(n) => Ok(Part::Rule(*n)),
            Kind::Empty => Ok(Part::Seq(Vec::new())),
            Kind::Never => Ok(Part::Alt(Vec::new())),
            Kind::Graph(_) if x.has_rule() => Err(Fail::unsupported(
                "minProperties",
                "the pushdown mode takes no counted automaton (a member count, \
                 `contains` or `uniqueItems`) over values that hold unconstrained values",
            )),
            _ => match self.trees.as_mut() {
                Some(trees) => tree(trees, x, self.dialect),
                None => regex(x, self.dialect),
            },
        }
    }
}

/// The terminal regex of `x`, within the dialect's text limit.
fn regex(x: &Rx, dialect: &Dialect) -> Step<Part> {
    if x.has_graph() {
        return Err(Fail::Limit(
            "a counted automaton beside an unconstrained value (a grammar's regex \
             terminals cannot hold it, and its text is too long)"
                .into(),
        ));
    }
    if x.printed_len() > dialect.max_regex_len {
        return Err(Fail::Limit(format!(
            "a terminal of the grammar would be a regex of {} bytes",
            x.printed_len()
        )));
    }
    Ok(Part::Regex(rx::print(x)))
}

/// The terminal tree of `x`: a root of the terminals' tree, within the text a tree may
/// stand for.
fn tree(trees: &mut TreeBuilder, x: &Rx, dialect: &Dialect) -> Step<Part> {
    within_tree_text(x, dialect)?;
    Ok(Part::Tree(trees.node(x)))
}
