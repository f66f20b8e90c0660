//! The token side: a vocabulary's tries and the walks that compute masks over them.
//!
//! - [`trie`]: [`trie::TokenTrie`], every text token in one prefix tree laid flat in
//!   depth-first order (a rejected prefix skips its subtree with one addition);
//! - [`walktrie`]: [`walktrie::WalkTrie`], the same layout over a subset of the tokens
//!   (one per slice, and the rest), 12 bytes a node;
//! - [`slices`]: the tokens cut into slices by a few regexes (JSON string content by
//!   length, by default), each with its walk trie and precomputed mask, and the family
//!   automaton that decides them;
//! - [`masks`]: the walks themselves: a walk trie read from one automaton state
//!   ([`masks::walk`]), the slice decision by product search ([`masks::classify`]), and
//!   the pruning walk ([`masks::prune`]);
//! - [`survival`]: subtrees a walk takes whole where its state surely survives every
//!   token in them.
//!
//! The walks read any automaton through [`crate::util::table::Stepper`], so the eager
//! builder (a complete table) and the lazy index (a table filled as the walks go) share
//! them. A [`crate::Vocabulary`] builds its trie and slices once, on first use.

pub mod masks;
pub mod slices;
pub mod survival;
pub mod trie;
pub mod walktrie;
