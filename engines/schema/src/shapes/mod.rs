//! Shapes: the compiler's intermediate form and its algebra, the middle stage.
//!
//! A [`shape::Shape`] says, for each JSON type, which values of it a schema admits: a
//! union of alternatives per type, each a conjunction of constraints. Reading builds
//! shapes ([`crate::reading`]) and combines them here; emitting writes them out
//! ([`crate::emitting`]).
//!
//! - [`shape`]: the form itself ([`shape::Shape`], the per-type constraints
//!   [`shape::NumCons`], [`shape::StrCons`], [`shape::ArrCons`], [`shape::ObjCons`]);
//! - [`intern`]: one shape per structure, so the caches keyed by address find what was
//!   built from an equal shape;
//! - [`merge`]: intersection (`allOf`, and every place two schemas meet one value);
//! - [`negate`]: complement (`not`), where it is a shape again;
//! - [`exclusive`]: `oneOf`, the values valid against exactly one branch;
//! - [`scalars`]: the languages of scalar constraints (decoded strings, number texts),
//!   which merges and `oneOf` decide emptiness with and emission writes;
//! - [`listed_multiples`]: `multipleOf` between close bounds, as the few values it admits;
//! - [`keyspace`]: an object's undeclared keys, split into regions by the patterns that
//!   match them (complements and emission both walk them).
//!
//! Shapes build on [`crate::languages`] (regexes, automata, decimals) and on
//! `context`, where every shape is counted and interned.

pub mod exclusive;
pub mod intern;
pub mod keyspace;
pub mod listed_multiples;
pub mod merge;
pub mod negate;
pub mod scalars;
pub mod shape;
