//! JSON schemas in TokensDFA's pushdown mode: the schema compiler's grammar mode
//! ([`tokensdfa_schema::compile_language`]: unconstrained values as a nonterminal that
//! nests without bound) read into this crate's [`Grammar`], then indexed as any grammar
//! is ([`crate::pushdown_index`]). A schema with no unconstrained value is regular, and
//! its tree goes to the lazy index as `LazyIndex.from_schema` sends it: the same
//! automaton, no Earley sets.

use std::sync::Arc;

use tokensdfa_core::{Forest, LazyIndex, LazyOptions, Vocabulary};
use tokensdfa_schema::{
    compile_language, Dialect, Language, Leaves, Part, SchemaError, SchemaGrammar,
};

use crate::error::Error;
use crate::ir::{Grammar, TerminalTree};
use crate::pushdown::pushdown_index_with;
use crate::read::builder::{Builder, Expr};

/// Why a schema has no pushdown index: the compiler refused it, or its grammar failed
/// (a terminal's regex past the core's limits, a size bound).
#[derive(Debug)]
pub enum SchemaIndexError {
    Schema(SchemaError),
    Grammar(Error),
}

/// The grammar a [`SchemaGrammar`] stands for: rule `n` is named `r{n}`, terminals are
/// its regexes (interned, one terminal per distinct regex) or its forest's roots (one
/// terminal per root `n`, named `t{n}`), the start is rule [`tokensdfa_schema::START`].
pub fn schema_grammar(sg: &SchemaGrammar) -> Result<Grammar, Error> {
    let mut b = Builder::new();
    // the printer's regexes; trimming parses each (and names one that fails)
    b.trusted_regexes = true;
    let ids: Vec<u32> = (0..sg.rules.len())
        .map(|n| b.declare(&format!("r{n}")))
        .collect();
    for (part, &id) in sg.rules.iter().zip(&ids) {
        b.define(id, &expr(part, sg.forest.as_ref(), &ids)?)?;
    }
    Ok(b.finish(ids[tokensdfa_schema::START as usize], Vec::new()))
}

/// The grammar of `schema_json` in `dialect` (None: the schema is regular), its
/// terminals as `leaves` says: trees for the pushdown mode, regexes to write it out.
pub fn schema_language(
    schema_json: &str,
    dialect: &Dialect,
    leaves: Leaves,
) -> Result<Option<Grammar>, SchemaIndexError> {
    match compile_language(schema_json, dialect, leaves).map_err(SchemaIndexError::Schema)? {
        Language::Regular(_) => Ok(None),
        Language::Grammar(sg) => schema_grammar(&sg)
            .map(Some)
            .map_err(SchemaIndexError::Grammar),
    }
}

/// The pushdown-mode index of `schema_json` in `dialect` over `vocab` (see the module
/// doc); `item_budget` as [`pushdown_index`]'s.
pub fn schema_pushdown_index(
    schema_json: &str,
    dialect: &Dialect,
    vocab: &Vocabulary,
    opts: LazyOptions,
    item_budget: usize,
) -> Result<LazyIndex, SchemaIndexError> {
    let language = compile_language(schema_json, dialect, Leaves::Trees);
    match language.map_err(SchemaIndexError::Schema)? {
        Language::Regular(ast) => LazyIndex::from_ast(ast, vocab, opts)
            .map_err(|e| SchemaIndexError::Grammar(Error::Limit(e.to_string()))),
        Language::Grammar(sg) => {
            let g = schema_grammar(&sg).map_err(SchemaIndexError::Grammar)?;
            pushdown_index_with(&g, vocab, opts, item_budget, false)
                .map_err(SchemaIndexError::Grammar)
        }
    }
}

/// `p` as the builder's expression, rule `n` being `ids[n]`.
fn expr(p: &Part, forest: Option<&Arc<Forest>>, ids: &[u32]) -> Result<Expr, Error> {
    let all = |v: &[Part]| {
        v.iter()
            .map(|x| expr(x, forest, ids))
            .collect::<Result<_, _>>()
    };
    Ok(match p {
        Part::Regex(regex) => Expr::Term {
            regex: regex.clone(),
            name: terminal_name(regex),
        },
        Part::Tree(n) => Expr::Tree(TerminalTree {
            forest: forest
                .ok_or_else(|| Error::Invalid("a tree terminal without its forest".into()))?
                .clone(),
            root: *n,
        }),
        Part::Rule(n) => Expr::Rule(*ids.get(*n as usize).ok_or_else(|| {
            Error::Invalid(format!("a reference to rule {n}, not in the grammar"))
        })?),
        Part::Seq(v) => Expr::Seq(all(v)?),
        Part::Alt(v) => Expr::Alt(all(v)?),
        Part::Repeat(inner, min, max) => Expr::Repeat {
            inner: Box::new(expr(inner, forest, ids)?),
            min: *min,
            max: *max,
            line: 0,
        },
    })
}

/// A terminal's name for messages: its regex, cut short.
fn terminal_name(regex: &str) -> String {
    let short: String = regex.chars().take(40).collect();
    if short.len() < regex.len() {
        format!("/{short}.../")
    } else {
        format!("/{short}/")
    }
}
