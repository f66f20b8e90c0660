//! # tokensdfa-core
//!
//! Token-level automata for constrained decoding. A regex over bytes becomes, for a given
//! LLM vocabulary, an automaton whose symbols are *tokens*: in each state, the set of
//! tokens whose bytes keep a full match reachable (a bitmask), and where each leads.
//!
//! Three builders produce the same masks:
//! - [`NaiveIndex`], the reference: every reachable DFA state is tried with every token.
//! - [`Index`] (TokensDFA), eager: every reachable state of the regex's minimized DFA
//!   ([`ByteDfa`], Hopcroft) is walked over the vocabulary's prepared byte trie, in
//!   parallel, taking whole *token slices* where the state provably allows them; each
//!   distinct mask is stored once. A build is bounded ([`Limits`]) and fails fast past its
//!   bounds. Its optional `canonical_literals` mode replaces literal runs of the regex by
//!   *ghost symbols* standing for their minimal tokenization (over a class-string trie).
//! - [`LazyIndex`]: nothing up front but the parse and an NFA; a state's DFA transitions
//!   and mask are computed on its first visit and memoized, so the first mask comes in
//!   microseconds even for multi-megabyte regexes.
//!
//! [`schema`] compiles a JSON schema into a regex whose full matches are exactly the
//! valid JSON texts of a chosen dialect (whitespace, escapes, numbers), refusing what it
//! cannot express exactly.
//!
//! All implement [`TokenAutomaton`], the token-level surface (states, masks, transitions).
//!
//! Shared pieces: [`Vocabulary`] (token bytes, specials, EOS, and, built once, its
//! [`TokenTrie`], walk tries and token slices), [`ByteDfa`] (the pruned, class-compressed
//! DFA the eager builders start from).

mod automaton;
mod bitmask;
mod canonical;
mod classauto;
mod classtrie;
mod counted;
pub mod dfa;
mod eager;
mod error;
mod hopcroft;
mod index;
mod lazy;
mod lazydfa;
mod literals;
mod naive;
mod nfa;
mod regex_ast;
pub mod schema;
mod slices;
pub mod trie;
mod vocab;
mod walk;
mod walktrie;

pub use automaton::TokenAutomaton;
pub use bitmask::{get_bit, ones, set_bit, Mask};
pub use counted::{Counted, UNBOUNDED};
pub use dfa::ByteDfa;
pub use error::Error;
pub use index::{Index, Limits, Mode, Stats};
pub use lazy::{LazyIndex, LazyOptions, LazyStats, DEFAULT_CACHE_LIMIT};
pub use naive::NaiveIndex;
pub use regex_ast::Ast;
pub use slices::JSON_SLICES;
pub use trie::TokenTrie;
pub use vocab::Vocabulary;
