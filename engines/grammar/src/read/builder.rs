//! The notation-neutral expression tree and its lowering into the IR.
//!
//! Every reader parses its notation into [`Expr`] trees, one per named rule, then hands
//! them to a [`Builder`]:
//! - [`Builder::declare`] gives every named rule its id first, so references may come
//!   before definitions;
//! - [`Builder::define`] lowers a rule's tree: its top-level alternatives stay the rule's
//!   alternatives, a nested group or alternative becomes a fresh rule, and repetition is
//!   desugared right-recursively (`x*` is `R ::= x R | ε`; `x{m,n}` is `m` copies of `x`
//!   and then a chain of `n - m` optionals, `O_k ::= x O_{k-1} | ε`, so the size is linear
//!   in the counts, never exponential);
//! - [`Builder::terminal`] interns a terminal by its regex (one id per distinct regex),
//!   checking the regex with the core's parser (`tokensdfa_core::dfa::parse`).
//!
//! The lowering recurses along the tree, whose depth the readers bound by
//! [`super::MAX_DEPTH`]; counts are bounded by [`super::MAX_REPEAT`] and the grammar's
//! size by [`super::MAX_SYMBOLS`].

use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::{MAX_REPEAT, MAX_SYMBOLS};
use crate::error::Error;
use crate::ir::{Grammar, Rule, Symbol, Terminal, TerminalTree};

/// A right-hand side before lowering.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Expr {
    /// A terminal: its regex in the core's syntax, and a name for messages.
    Term { regex: String, name: String },
    /// A terminal given as the core's tree (the schema compiler's), named `t{root}`.
    Tree(TerminalTree),
    /// A reference to a named rule, with the line it appears on.
    Ref { name: String, line: usize },
    /// A reference to a rule by the id [`Builder::declare`] gave it (the schema
    /// compiler's grammar numbers its rules itself: no name written and looked up).
    Rule(u32),
    /// Items one after another (empty: the empty string).
    Seq(Vec<Expr>),
    /// One of several.
    Alt(Vec<Expr>),
    /// `min` to `max` (`None`: unbounded) copies of `inner`.
    Repeat {
        inner: Box<Expr>,
        min: u32,
        max: Option<u32>,
        line: usize,
    },
}

/// Builds a [`Grammar`] from named rules' [`Expr`]s.
#[derive(Default)]
pub(crate) struct Builder {
    rules: Vec<Rule>,
    names: FxHashMap<String, u32>,
    terminals: Vec<Terminal>,
    by_regex: FxHashMap<String, u32>,
    /// Tree terminals by their forest's address and root (each forest kept alive by
    /// `terminals`).
    by_tree: FxHashMap<(usize, u32), u32>,
    symbols: usize,
    /// Terminals' regexes are written by a program that checks them later (the schema
    /// compiler's, whose grammar the pushdown mode parses once, trimming): not parsed here.
    pub trusted_regexes: bool,
}

impl Builder {
    pub fn new() -> Builder {
        Builder::default()
    }

    /// Give the named rule `name` an id (before any definition is lowered).
    pub fn declare(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.names.get(name) {
            return id;
        }
        let id = self.fresh(name.to_string());
        self.names.insert(name.to_string(), id);
        id
    }

    /// The id of a declared rule.
    pub fn lookup(&self, name: &str) -> Option<u32> {
        self.names.get(name).copied()
    }

    /// Lower `expr` as the alternatives of the declared rule `id`.
    pub fn define(&mut self, id: u32, expr: &Expr) -> Result<(), Error> {
        let alternatives = self.alternatives(expr, id)?;
        self.rules[id as usize].alternatives = alternatives;
        Ok(())
    }

    /// The id of the terminal with `regex` (interned; `name` kept from its first use).
    pub fn terminal(&mut self, regex: &str, name: &str) -> Result<u32, Error> {
        if let Some(&id) = self.by_regex.get(regex) {
            return Ok(id);
        }
        if !self.trusted_regexes {
            tokensdfa_core::dfa::parse(regex)
                .map_err(|e| Error::Invalid(format!("terminal {name}: regex /{regex}/: {e}")))?;
        }
        let id = u32::try_from(self.terminals.len())
            .map_err(|_| Error::Limit("too many terminals".into()))?;
        self.terminals.push(Terminal::of_regex(name, regex));
        self.by_regex.insert(regex.to_string(), id);
        Ok(id)
    }

    /// The id of the terminal given as `tree` (interned by identity, named `t{root}`).
    pub fn tree_terminal(&mut self, tree: &TerminalTree) -> Result<u32, Error> {
        let key = (Arc::as_ptr(&tree.forest) as usize, tree.root);
        if let Some(&id) = self.by_tree.get(&key) {
            return Ok(id);
        }
        let id = u32::try_from(self.terminals.len())
            .map_err(|_| Error::Limit("too many terminals".into()))?;
        self.terminals.push(Terminal {
            name: format!("t{}", tree.root),
            regex: String::new(),
            tree: Some(tree.clone()),
        });
        self.by_tree.insert(key, id);
        Ok(id)
    }

    /// The grammar, starting at the declared rule `start`.
    pub fn finish(self, start: u32, ignore: Vec<u32>) -> Grammar {
        Grammar {
            rules: self.rules,
            terminals: self.terminals,
            start,
            ignore,
        }
    }

    fn fresh(&mut self, name: String) -> u32 {
        let id = self.rules.len() as u32;
        self.rules.push(Rule {
            name,
            alternatives: Vec::new(),
        });
        id
    }

    fn fresh_named(&mut self, parent: u32, alternatives: Vec<Vec<Symbol>>) -> Result<u32, Error> {
        self.count(1)?;
        let name = format!("{}_{}", self.rules[parent as usize].name, self.rules.len());
        let id = self.fresh(name);
        self.rules[id as usize].alternatives = alternatives;
        Ok(id)
    }

    fn count(&mut self, n: usize) -> Result<(), Error> {
        self.symbols += n;
        if self.symbols > MAX_SYMBOLS || self.rules.len() >= u32::MAX as usize / 2 {
            return Err(Error::Limit(format!(
                "grammar grows past {MAX_SYMBOLS} symbols once repetitions are expanded"
            )));
        }
        Ok(())
    }

    fn alternatives(&mut self, expr: &Expr, parent: u32) -> Result<Vec<Vec<Symbol>>, Error> {
        match expr {
            Expr::Alt(alts) => alts
                .iter()
                .map(|a| self.sequence(a, parent))
                .collect::<Result<Vec<_>, _>>(),
            _ => Ok(vec![self.sequence(expr, parent)?]),
        }
    }

    fn sequence(&mut self, expr: &Expr, parent: u32) -> Result<Vec<Symbol>, Error> {
        let mut out = Vec::new();
        self.push_item(expr, parent, &mut out)?;
        Ok(out)
    }

    fn push_item(&mut self, expr: &Expr, parent: u32, out: &mut Vec<Symbol>) -> Result<(), Error> {
        match expr {
            Expr::Seq(items) => {
                for item in items {
                    self.push_item(item, parent, out)?;
                }
            }
            Expr::Alt(alts) if alts.len() == 1 => self.push_item(&alts[0], parent, out)?,
            Expr::Repeat {
                inner,
                min,
                max,
                line,
            } => {
                self.repeat(inner, *min, *max, *line, parent, out)?;
            }
            _ => {
                let s = self.symbol(expr, parent)?;
                self.count(1)?;
                out.push(s);
            }
        }
        Ok(())
    }

    /// `expr` as one symbol: a terminal, a reference, or a fresh rule.
    fn symbol(&mut self, expr: &Expr, parent: u32) -> Result<Symbol, Error> {
        match expr {
            Expr::Term { regex, name } => Ok(Symbol::Terminal(self.terminal(regex, name)?)),
            Expr::Tree(tree) => Ok(Symbol::Terminal(self.tree_terminal(tree)?)),
            Expr::Ref { name, line } => match self.names.get(name) {
                Some(&id) => Ok(Symbol::Rule(id)),
                None => Err(Error::Invalid(format!(
                    "line {line}: undefined rule `{name}`"
                ))),
            },
            Expr::Rule(id) if (*id as usize) < self.rules.len() => Ok(Symbol::Rule(*id)),
            Expr::Rule(id) => Err(Error::Invalid(format!("no rule numbered {id}"))),
            Expr::Seq(items) if items.len() == 1 => self.symbol(&items[0], parent),
            Expr::Alt(alts) if alts.len() == 1 => self.symbol(&alts[0], parent),
            _ => {
                let alternatives = self.alternatives(expr, parent)?;
                Ok(Symbol::Rule(self.fresh_named(parent, alternatives)?))
            }
        }
    }

    fn repeat(
        &mut self,
        inner: &Expr,
        min: u32,
        max: Option<u32>,
        line: usize,
        parent: u32,
        out: &mut Vec<Symbol>,
    ) -> Result<(), Error> {
        let top = max.unwrap_or(min).max(min);
        if top > MAX_REPEAT {
            return Err(Error::Limit(format!(
                "line {line}: repetition count {top} is over the limit of {MAX_REPEAT}"
            )));
        }
        if max.is_some_and(|n| n < min) {
            return Err(Error::Invalid(format!(
                "line {line}: repetition {{{min},{}}} has its maximum below its minimum",
                max.unwrap_or(0)
            )));
        }
        let x = self.symbol(inner, parent)?;
        self.count(min as usize)?;
        out.extend(std::iter::repeat_n(x, min as usize));
        match max {
            None => {
                let id = self.fresh_named(parent, Vec::new())?;
                self.count(2)?;
                self.rules[id as usize].alternatives = vec![vec![x, Symbol::Rule(id)], vec![]];
                out.push(Symbol::Rule(id));
            }
            Some(n) if n > min => {
                let mut prev = self.fresh_named(parent, vec![vec![x], vec![]])?;
                for _ in min + 1..n {
                    self.count(2)?;
                    prev = self.fresh_named(parent, vec![vec![x, Symbol::Rule(prev)], vec![]])?;
                }
                out.push(Symbol::Rule(prev));
            }
            Some(_) => {}
        }
        Ok(())
    }
}

/// A code point as a regex atom that reads the same inside and outside a class.
pub(crate) fn regex_char(c: char) -> String {
    if c.is_ascii_alphanumeric() || c == '_' {
        c.to_string()
    } else {
        format!("\\x{{{:X}}}", c as u32)
    }
}

/// A class of code-point ranges as a regex (`negated`: its complement).
pub(crate) fn regex_class(ranges: &[(char, char)], negated: bool) -> String {
    if ranges.is_empty() {
        return if negated {
            "(?s:.)".into()
        } else {
            "[^\\x{0}-\\x{10FFFF}]".into()
        };
    }
    let mut s = String::from(if negated { "[^" } else { "[" });
    for &(a, b) in ranges {
        s.push_str(&regex_char(a));
        if a != b {
            s.push('-');
            s.push_str(&regex_char(b));
        }
    }
    s.push(']');
    s
}
