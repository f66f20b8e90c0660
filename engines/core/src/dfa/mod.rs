//! Byte-level DFAs, built whole or on demand.
//!
//! - [`dense`]: [`ByteDfa`], regex-automata's dense DFA copied into a live-pruned,
//!   class-compressed table (the naive index's and the eager builders' automaton, the
//!   slices' automata, and the differ's byte-level questions through Python);
//! - `hopcroft`: minimization by partition refinement ([`ByteDfa::minimized`]);
//! - `lazy`: `LazyDfa`, subset construction over the NFA (the `nfa` module) one
//!   transition at a time: the lazy index's automaton, and, run to completion
//!   (`minimal_dfa`), how the eager index determinizes.
//!
//! Both kinds fill the shared table layout (`util::table`), which is what the mask walks
//! read. A state is [`DEAD`] once no full match is reachable.
//!
//! - [`recognizer`]: [`recognizer::Recognizer`], a byte automaton another front end
//!   computes on demand (the grammar crate's Earley sets), which `LazyDfa` reads as it
//!   reads the NFA.
//!
//! - `runs`: run bounds of a class read off a DFA by stepping it (a recognizer's, which
//!   has no NFA to read them from), for the vocabulary's slices;
//! - [`on_demand`]: [`OnDemandDfa`], `LazyDfa` for a front end outside the crate (the
//!   pushdown mode's terminals).
//!
//! Public here: [`ByteDfa`], [`OnDemandDfa`], [`parse`] (the regex syntax every index
//! reads), [`DEAD`] and the [`recognizer::Recognizer`] trait.

pub mod dense;
mod hopcroft;
pub(crate) mod lazy;
pub mod on_demand;
pub mod recognizer;
mod runs;

pub use crate::util::syntax::parse;
pub use crate::util::table::DEAD;
pub use dense::ByteDfa;
pub use on_demand::OnDemandDfa;
