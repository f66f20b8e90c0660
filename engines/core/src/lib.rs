//! # tokensdfa-core
//!
//! Token-level automata for constrained decoding. A regex over bytes becomes, for a given
//! LLM vocabulary, an automaton whose symbols are *tokens*: in each state, the set of
//! tokens whose bytes keep a full match reachable (a bitmask), and where each leads.
//!
//! Two builders produce the same automaton:
//! - [`NaiveIndex`], the reference: every reachable DFA state is tried with every token.
//! - [`Index`] (TokensDFA): drops tokens with dead bytes, groups tokens by their string of
//!   byte classes, walks a flat trie of those class strings from each state so a rejected
//!   prefix skips its whole subtree, runs states in parallel, and stores each distinct
//!   mask once. Its optional `canonical_literals` mode replaces literal runs of the regex
//!   by *ghost symbols* standing for their minimal tokenization.
//!
//! Both implement [`TokenAutomaton`], the token-level surface (states, masks, transitions).
//!
//! Shared pieces: [`Vocabulary`] (token bytes, specials, EOS, and its [`TokenTrie`] built
//! once), [`ByteDfa`] (the pruned, class-compressed DFA both builders start from).

mod automaton;
mod bitmask;
mod classtrie;
pub mod dfa;
mod error;
mod index;
mod literals;
mod naive;
pub mod trie;
mod vocab;

pub use automaton::TokenAutomaton;
pub use bitmask::{get_bit, ones, set_bit, Mask};
pub use dfa::ByteDfa;
pub use error::Error;
pub use index::{Index, Mode, Stats};
pub use naive::NaiveIndex;
pub use trie::TokenTrie;
pub use vocab::Vocabulary;
