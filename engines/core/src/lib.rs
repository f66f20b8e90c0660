//! # tokensdfa-core
//!
//! Token-level automata for constrained decoding. A regex over bytes becomes, for a given
//! LLM vocabulary, an automaton whose symbols are *tokens*: in each state, the set of
//! tokens whose bytes keep a full match reachable (a bitmask), and where each leads.
//!
//! Three builders produce the same masks:
//! - [`NaiveIndex`], the reference: every reachable DFA state is tried with every token.
//! - [`Index`] (TokensDFA), eager: every reachable state of the regex's minimized DFA is
//!   walked over the vocabulary's prepared byte trie, in parallel, taking whole *token
//!   slices* where the state provably allows them; each distinct mask is stored once. A
//!   build is bounded ([`Limits`]) and fails fast past its bounds. Its optional
//!   `canonical_literals` [`Mode`] replaces literal runs of the regex by *ghost symbols*
//!   standing for their minimal tokenization (over a class-string trie).
//! - [`LazyIndex`]: nothing up front but the parse and an NFA; a state's DFA transitions
//!   and mask are computed on its first visit and memoized, so the first mask comes in
//!   microseconds even for multi-megabyte regexes.
//!
//! All implement [`TokenAutomaton`], the token-level surface (states, masks, transitions).
//!
//! ## Layout
//!
//! One folder per automaton family, as regex-automata does, each `mod.rs` a map of it;
//! dependencies run downward through this list, never back:
//! - `util`: the shared layer both sides read: token bitmasks ([`Mask`]), the
//!   transition-table layout every mask walk reads (`DfaTable`, `Stepper`), the regex
//!   syntax every road parses with;
//! - `nfa`: the regex front end ([`Ast`], the fast parser, class automata, [`counted`]
//!   automata) and the hash-consed NFA with its subset construction;
//! - [`dfa`]: byte DFAs, whole ([`ByteDfa`], regex-automata's, live-pruned; Hopcroft) or
//!   on demand (the lazy DFA over the NFA, also run to completion for the eager index);
//! - `walk`: the token side: the token trie ([`TokenTrie`]), walk tries, token slices,
//!   and the mask walks over any table;
//! - [`Vocabulary`] (`vocab`): token bytes, specials, EOS, and, built once, its trie and
//!   slices;
//! - `eager`: [`Index`] with its exact and canonical builders, and [`NaiveIndex`];
//! - `lazy`: [`LazyIndex`].
//!
//! Beside them, [`Error`] (errors by kind), [`TokenAutomaton`] with [`Mode`] (the
//! surface every index shares), [`batch`] (many (automaton, state) pairs at once: their
//! masks into one buffer and their next states, on the calling thread and its crew) and
//! [`sequences`] (a server's batch kept here, stepped by one call).
//!
//! ## Public surface
//!
//! The indexes and their options, the vocabulary, the masks, [`ByteDfa`] and [`dfa::parse`]
//! (the byte-level questions and the syntax check the Python bindings ask), and what the
//! schema compiler (`tokensdfa-schema`) builds for the lazy index: the tree [`Ast`]
//! ([`fast_parse`] reads a pattern into one) and its [`counted`] automata, and for the
//! pushdown mode's terminals, many trees as the roots of one [`Forest`].

mod automaton;
pub mod batch;
pub mod dfa;
mod eager;
mod error;
mod lazy;
mod nfa;
pub mod sequences;
mod util;
mod vocab;
mod walk;

pub use automaton::{Mode, TokenAutomaton};
pub use dfa::ByteDfa;
pub use eager::{Index, Limits, NaiveIndex, Stats};
pub use error::Error;
pub use lazy::{LazyIndex, LazyOptions, LazyStats, DEFAULT_CACHE_LIMIT};
pub use nfa::ast::{classes_of_cuts, fast_parse, mark_class_cuts, Ast};
pub use nfa::counted::{self, Counted, UNBOUNDED};
pub use nfa::Forest;
pub use util::bitmask::{copy_mask, get_bit, ones, set_bit, Mask};
pub use vocab::Vocabulary;
pub use walk::slices::JSON_SLICES;
pub use walk::survival::Survival;
pub use walk::trie::{self, TokenTrie};
