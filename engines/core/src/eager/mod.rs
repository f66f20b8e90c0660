//! The eager automata: every reachable state built up front.
//!
//! - [`index`]: [`Index`] (TokensDFA), every state's mask computed once at construction,
//!   each distinct mask stored once, in one of two [`crate::Mode`]s;
//! - [`exact`]: exact mode's builder: the minimized DFA's states, each walked over the
//!   vocabulary's prepared tries, slices taken whole where they apply;
//! - [`canonical`]: `canonical_literals` mode's builder: literal runs muted to ghost
//!   symbols, token classes over a class-string trie (`classtrie`, `literals`);
//! - [`build`]: what both builders share below the index: bounds ([`Limits`]), figures
//!   ([`Stats`]), the mask store;
//! - [`naive`]: [`NaiveIndex`], the reference, every DFA state tried with every token.
//!
//! The eager index determinizes with the lazy DFA run to completion
//! ([`crate::dfa::lazy::minimal_dfa`]) and walks with [`crate::walk`].

pub mod build;
pub mod canonical;
pub mod exact;
pub mod index;
pub mod naive;

pub use build::{Limits, Stats};
pub use index::Index;
pub use naive::NaiveIndex;
