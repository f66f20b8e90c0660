//! Emitting: a [`Shape`](crate::shapes::shape::Shape) into the regex tree of its JSON
//! texts in the dialect, the last stage.
//!
//! - [`emit`]: [`emit::Emitter`], values by type, arrays (positional items, `contains`),
//!   the dialect's tokens and whitespace, and the unconstrained value;
//! - [`objects`]: objects in schema order, declared members then undeclared ones;
//! - [`member_counts`]: member counts that depend on which optional members are present,
//!   as a counted automaton over members;
//! - [`unique`]: `uniqueItems` over enumerated values, as a counted automaton over items;
//! - `any`: the unconstrained value, unrolled or (grammar mode) a nonterminal;
//! - [`keys`]: the language of every string but an object's declared keys;
//! - [`spell`]: how decoded characters are written inside a JSON string (escapes);
//! - [`rules`]: the grammar mode's tree cut into a grammar over regex terminals, where
//!   unconstrained values are a nonterminal that nests without bound;
//! - [`to_ast`]: the finished tree as the lazy index's [`tokensdfa_core::Ast`], without
//!   printing it.
//!
//! The languages of strings and numbers come from [`crate::shapes::scalars`], the key
//! regions of an object from [`crate::shapes::keyspace`]; the printed text from
//! [`crate::languages::rx::print`].

mod any;
pub mod emit;
pub mod keys;
pub mod member_counts;
pub mod objects;
pub mod rules;
pub mod spell;
pub mod to_ast;
pub mod unique;
