//! Languages: the regular-language toolkit every stage builds with. Nothing here knows
//! about schemas or shapes.
//!
//! - [`charset`]: sets of Unicode scalar values (no surrogates), the alphabet;
//! - [`rx`]: the regex tree ([`rx::Rx`], `Rc`-shared nodes with cached printed length
//!   and nesting) and its smart constructors, with [`rx::alternatives`] (how one
//!   alternation keeps each alternative once) and [`rx::printer`] (the tree as
//!   regex-syntax text);
//! - [`automaton`]: character-level DFAs, for the intersections and complements regexes
//!   lack; [`eliminate`]: back from a DFA to a regex (state elimination), or to a
//!   counted automaton ([`tokensdfa_core::counted`]) when the regex would be too large;
//! - [`decimal`]: exact decimal numbers; [`digits`]: ranges of digit strings;
//!   [`numbers`]: numeric bounds and `multipleOf` as regexes over number texts;
//! - [`ecma`]: ECMA-262 patterns as character-level regexes, with `anchors` (`^` and
//!   `$` anywhere) and `lookahead` (look-aheads at the start);
//! - [`formats`]: `format` grammars (dates, addresses, URIs...) as patterns.
//!
//! Languages of *decoded* strings are character-level; [`crate::emitting::spell`]
//! writes them as JSON string texts.

pub mod automaton;
pub mod charset;
pub mod decimal;
pub mod digits;
pub mod ecma;
pub mod eliminate;
pub mod formats;
pub mod numbers;
pub mod rx;
