//! The one grammar every notation is read into and every writer and index reads.
//!
//! A [`Grammar`] is context-free over *bytes*: nonterminals ([`Rule`]s, each a list of
//! alternatives, each a sequence of [`Symbol`]s) over *terminals*, each a regular
//! language given as a regex in the core's syntax (`tokensdfa_core::dfa::parse`: Unicode
//! literals and classes match their UTF-8 encodings). A literal string is a terminal
//! whose regex is the escaped string; a GBNF character class is a terminal whose regex is
//! the class. Repetition, options and groups of the notations are desugared by the
//! readers into fresh rules, so the IR has only sequences and alternatives.
//!
//! `ignore` lists terminals (Lark's `%ignore`) that may appear before and after any
//! terminal occurrence; [`Grammar::expand_ignore`] (in `transform`) makes them explicit
//! rules, which is how the reference and the GBNF writer read them.
//!
//! Names are kept for messages and writers; rule 0 need not be the start: `start` says.

use std::sync::Arc;

use tokensdfa_core::Forest;

use crate::error::Error;

/// One symbol of a right-hand side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Symbol {
    /// A nonterminal: index into [`Grammar::rules`].
    Rule(u32),
    /// A terminal: index into [`Grammar::terminals`].
    Terminal(u32),
}

/// A nonterminal with its alternatives (an empty alternative derives the empty string).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    pub name: String,
    pub alternatives: Vec<Vec<Symbol>>,
}

/// A regular terminal: `regex` in the core's syntax, matched as a whole (anchored both
/// ends). `name` is the notation's name (`NUMBER`) or a made-up one for anonymous
/// literals and classes (`"\"{\""`, `[0-9]`).
///
/// A terminal may instead be given as the core's tree (`tree`; `regex` is then empty):
/// the schema compiler's grammars for the pushdown mode, whose terminals would print to
/// long regexes or hold counted automata that have no regex short enough. Only the
/// pushdown mode reads a tree; the writers, the reference and the sampler read regexes
/// and refuse a grammar holding one ([`Terminal::regex_text`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Terminal {
    pub name: String,
    pub regex: String,
    pub tree: Option<TerminalTree>,
}

impl Terminal {
    /// A terminal given as a regex.
    pub fn of_regex(name: impl Into<String>, regex: impl Into<String>) -> Terminal {
        Terminal {
            name: name.into(),
            regex: regex.into(),
            tree: None,
        }
    }

    /// The regex, for a reader of regexes: an error naming a terminal given as a tree.
    pub fn regex_text(&self) -> Result<&str, Error> {
        match self.tree {
            None => Ok(&self.regex),
            Some(_) => Err(Error::Unsupported {
                line: 0,
                message: format!(
                    "terminal {} is a tree of the schema compiler, with no regex text \
                     (only the pushdown mode reads it)",
                    self.name
                ),
            }),
        }
    }
}

/// A terminal's language as the core's tree: the node `root` of a forest shared by the
/// grammar's terminals. Two are equal iff they are the same root of the same forest.
#[derive(Clone)]
pub struct TerminalTree {
    pub forest: Arc<Forest>,
    pub root: u32,
}

impl PartialEq for TerminalTree {
    fn eq(&self, other: &TerminalTree) -> bool {
        Arc::ptr_eq(&self.forest, &other.forest) && self.root == other.root
    }
}

impl Eq for TerminalTree {}

impl std::fmt::Debug for TerminalTree {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TerminalTree(root {})", self.root)
    }
}

/// Which notation a text is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Notation {
    /// llama.cpp's GBNF (`root ::= ...`).
    Gbnf,
    /// Lark, with the parts of llguidance's dialect this crate reads.
    Lark,
    /// The llama.cpp-style EBNF of transformers-cfg and xgrammar.
    Ebnf,
}

impl Notation {
    pub fn parse(name: &str) -> Option<Notation> {
        match name {
            "gbnf" => Some(Notation::Gbnf),
            "lark" => Some(Notation::Lark),
            "ebnf" => Some(Notation::Ebnf),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Notation::Gbnf => "gbnf",
            Notation::Lark => "lark",
            Notation::Ebnf => "ebnf",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grammar {
    pub rules: Vec<Rule>,
    pub terminals: Vec<Terminal>,
    /// The start rule.
    pub start: u32,
    /// Terminals that may appear around every terminal occurrence (Lark's `%ignore`).
    pub ignore: Vec<u32>,
}

impl Grammar {
    pub fn rule(&self, id: u32) -> &Rule {
        &self.rules[id as usize]
    }

    pub fn terminal(&self, id: u32) -> &Terminal {
        &self.terminals[id as usize]
    }
}
