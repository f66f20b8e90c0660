//! The surface the token-level automata share, [`NaiveIndex`](crate::NaiveIndex),
//! [`Index`](crate::Index) and [`LazyIndex`](crate::LazyIndex): states numbered from
//! [`initial_state`], a bitmask of the allowed tokens in each state, and where each
//! allowed token leads.
//!
//! Every method takes `&self`: the eager automata are immutable once built, and the lazy
//! one computes states on demand behind interior mutability (locks), so all three can be
//! shared between threads.
//!
//! [`initial_state`]: TokenAutomaton::initial_state

use std::str::FromStr;

use crate::error::Error;
use crate::util::bitmask::Mask;

/// A token-level automaton over a vocabulary: state `s` allows token `t` iff bit `t` of
/// its mask is set ([`Mask`] layout), EOS exactly where the text so far is a
/// full match.
pub trait TokenAutomaton {
    /// The state before any token, always 0.
    fn initial_state(&self) -> u32;

    /// States are numbered `0..num_states()`. For the lazy index, the states discovered
    /// so far (it grows as `next_state` meets new ones).
    fn num_states(&self) -> usize;

    /// Heap bytes held by the automaton's tables (for the lazy index, now).
    fn memory_bytes(&self) -> usize;

    /// Tokens of the vocabulary it was built for.
    fn vocab_len(&self) -> usize;

    /// The state after `token`, or `None` if the token is not allowed (EOS, a special
    /// token, an unknown id or state included).
    fn next_state(&self, state: u32, token: u32) -> Option<u32>;

    /// Whether the text read to reach `state` is a full match (false for an unknown state).
    fn is_accepting(&self, state: u32) -> bool;

    /// Write the allowed-token bitmask of `state` into `out`, `mask_words()` of the
    /// vocabulary long. `state` must be below [`num_states`](Self::num_states).
    fn fill_mask(&self, state: u32, out: &mut Mask);

    /// Allowed token ids of `state`, ascending, EOS included when accepting. `state`
    /// must be below [`num_states`](Self::num_states).
    fn allowed(&self, state: u32) -> Vec<u32>;

    /// Get ready for masks filled on `threads` threads at once (a batch,
    /// [`crate::batch`]); nothing to do for an automaton whose fills never wait on each
    /// other (the lazy index makes helper engines for its first visits).
    fn prepare_threads(&self, _threads: usize) {}
}

/// How literal runs are treated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Masks equal the naive index's: every tokenization of every string is allowed.
    Exact,
    /// Literal runs are allowed only in their minimal tokenization; masks are subsets of
    /// the exact ones and every string of the language stays reachable.
    CanonicalLiterals,
}

impl FromStr for Mode {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        match s {
            "exact" => Ok(Mode::Exact),
            "canonical_literals" => Ok(Mode::CanonicalLiterals),
            other => Err(Error::Option(format!(
                "mode {other:?} is not one of \"exact\", \"canonical_literals\""
            ))),
        }
    }
}

impl Mode {
    pub fn as_str(&self) -> &'static str {
        match self {
            Mode::Exact => "exact",
            Mode::CanonicalLiterals => "canonical_literals",
        }
    }
}
