//! # tokensdfa-grammar
//!
//! Context-free grammars for constrained decoding, over bytes.
//!
//! ## Layout
//!
//! - `ir`: [`Grammar`], the one representation: rules over regular terminals;
//! - `error`: [`Error`], one line each, naming the line and construct;
//! - `read`: the front ends, one per notation (GBNF and llama.cpp-style EBNF share one
//!   reader; Lark has its own, with its `common` library), [`read`];
//! - `write`: writers from a [`Grammar`] to Lark and to GBNF text, so every grammar
//!   reaches every engine in the notation it reads;
//! - `transform`: `%ignore` made explicit, trimming (unproductive and unreachable symbols
//!   removed; an empty language refused);
//! - `earley`: the byte-level Earley recognizer with regular terminals;
//! - `lexemes`: greedy lexing's reading of terminals that match the empty string;
//! - `index`: [`NaiveGrammarIndex`], the exact reference over a vocabulary's token trie;
//! - `pushdown`: TokensDFA's pushdown mode, [`pushdown_index`]: the recognizer's Earley
//!   sets hash-consed into a DFA computed on demand ([`EarleySets`]), served by the lazy
//!   index;
//! - `schema`: JSON schemas in the pushdown mode, [`schema_pushdown_index`]: the schema
//!   compiler's grammar mode (unconstrained values nest without bound) read as a
//!   [`Grammar`];
//! - `sample`: [`Sampler`], random sentences (the corpus's derived instances);
//! - `reduce`: one-step smaller grammars ([`Grammar::reductions`]), which the differ's
//!   minimizer keeps while a bug still shows.
//!
//! ## Public surface
//!
//! [`read`] a text in a [`Notation`] into a [`Grammar`]; [`to_lark`] and [`to_gbnf`]
//! write one; [`NaiveGrammarIndex`] is the reference the differ holds grammar engines to.

mod earley;
mod error;
mod index;
mod ir;
mod lexemes;
mod options;
mod pushdown;
mod read;
mod reduce;
mod sample;
mod schema;
mod transform;
mod write;

pub use error::Error;
pub use index::NaiveGrammarIndex;
pub use ir::{Grammar, Notation, Rule, Symbol, Terminal, TerminalTree};
pub use options::{GrammarOptions, Lexing, TrailingIgnore};
pub use pushdown::{pushdown_index, EarleySets};
pub use read::read;
pub use sample::{SampleOptions, Sampler};
pub use schema::{schema_grammar, schema_language, schema_pushdown_index, SchemaIndexError};
pub use tokensdfa_schema::Leaves;
pub use write::{to_gbnf, to_kbnf, to_lark, to_lark_scannerless};
