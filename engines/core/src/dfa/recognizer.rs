//! [`Recognizer`]: a byte automaton another front end defines, which a lazy index
//! determinizes on demand like a regex's NFA.
//!
//! A lazy index reads its automaton through the table every mask walk reads
//! ([`crate::util::table`]); a regex's rows are computed by subset construction over its
//! NFA. A recognizer computes them instead: its states are numbered 0 (the start), 1,
//! 2, ... in the order it makes them, and [`Recognizer::step`] gives the state after a
//! byte, making a new one when needed, or [`DEAD`] when no sentence is reachable any
//! more. The grammar crate's pushdown mode is one: its states are hash-consed Earley
//! sets, so a context-free grammar gets the lazy index's machinery whole (memoized
//! masks, token-level states, slices, helpers, batches).
//!
//! The contract is the NFA's: a state is live iff some continuation reaches acceptance,
//! which is what makes every mask walk exact.
//!
//! `Source` is what the lazy DFA fills its missing transitions from: the NFA's subset
//! construction, or a recognizer. A recognizer has no NFA to read run bounds off: it
//! may give a lower bound of its own ([`Recognizer::run_lower`]; the Earley sets read
//! theirs off their items' terminals), and the rest is found by stepping its table
//! (`crate::dfa::runs`), or left to the product search.

use crate::nfa::Determinizer;
use crate::util::table::{DfaTable, DEAD};
use crate::walk::survival::Survival;

/// A byte automaton computed on demand (see the module doc).
pub trait Recognizer: Send + Sync {
    /// A partition of the bytes no state tells apart: each byte's class, and how many.
    fn byte_classes(&self) -> ([u8; 256], usize);
    /// The state after `byte` from `state` (a new one gets the next number), or [`DEAD`].
    fn step(&mut self, state: u32, byte: u8) -> u32;
    fn is_accepting(&self, state: u32) -> bool;
    /// States made so far.
    fn num_states(&self) -> usize;
    /// Bound the work of later steps (`LazyOptions::walk_limit`, in the NFA's states:
    /// the default, 2^23, stands for about two gigabytes; a recognizer reads it as a
    /// bound on its own memory).
    fn set_limit(&mut self, limit: usize);
    /// Whether a step passed the limit: that step and every later one may be wrong.
    fn exceeded(&self) -> bool;
    fn memory_bytes(&self) -> usize;
    fn boxed_clone(&self) -> Box<dyn Recognizer>;

    /// Strings `state` surely survives ([`crate::walk::survival`]), for mask walks to
    /// take whole, or None where the automaton wants no survival skips at all (not even
    /// a search of the table); None by default. Each must be exact: a string it covers
    /// never leads `state` to [`DEAD`].
    fn survivals(&mut self, state: u32) -> Option<Vec<Survival>> {
        let _ = state;
        None
    }

    /// A lower bound, at most `cap`, on the runs of characters of `class` (ranges of
    /// scalar values) `state` survives: every string of at most that many such characters
    /// keeps it live. None where the automaton gives none (the table is then stepped,
    /// `crate::dfa::runs`); None by default. It must hold: the vocabulary's slices are
    /// taken whole on its word.
    fn run_lower(&mut self, state: u32, class: &[(u32, u32)], cap: u32) -> Option<u32> {
        let _ = (state, class, cap);
        None
    }
}

impl Clone for Box<dyn Recognizer> {
    fn clone(&self) -> Self {
        self.boxed_clone()
    }
}

/// The table of a recognizer's start state: its classes and row 0.
pub(crate) fn start_table(r: &dyn Recognizer) -> DfaTable {
    let (classes, n) = r.byte_classes();
    let mut table = DfaTable::empty(classes, n);
    table.push_state(r.is_accepting(0));
    table
}

/// The row after `byte` from `row`, rows added to `table` for the states `r` made.
fn next_row(r: &mut dyn Recognizer, table: &mut DfaTable, row: u32, byte: u8) -> u32 {
    let next = r.step(table.state(row), byte);
    if next == DEAD {
        return DEAD;
    }
    while table.num_states() <= next as usize {
        let state = table.num_states() as u32;
        table.push_state(r.is_accepting(state));
    }
    next << table.shift
}

/// What computes a lazy table's missing transitions: subset construction over a regex's
/// NFA, or another front end's automaton.
#[derive(Clone)]
pub(crate) enum Source {
    Nfa(Box<Determinizer>),
    Other(Box<dyn Recognizer>),
}

impl Source {
    pub(crate) fn next(&mut self, table: &mut DfaTable, row: u32, byte: u8) -> u32 {
        match self {
            Source::Nfa(d) => d.next(table, row, byte),
            Source::Other(r) => next_row(r.as_mut(), table, row, byte),
        }
    }

    /// Bounds on runs of `class` from `state` (the NFA's; a recognizer gives none).
    pub(crate) fn run_bounds(
        &mut self,
        state: u32,
        class: &[(u32, u32)],
        cap: u32,
    ) -> Option<(u32, u32)> {
        match self {
            Source::Nfa(d) => Some(d.run_bounds(state, class, cap)),
            Source::Other(_) => None,
        }
    }

    pub(crate) fn run_lower(&mut self, state: u32, class: &[(u32, u32)], cap: u32) -> Option<u32> {
        match self {
            Source::Nfa(d) => Some(d.run_lower(state, class, cap)),
            Source::Other(_) => None,
        }
    }

    /// A recognizer's own lower run bound ([`Recognizer::run_lower`]; none for an NFA's,
    /// whose bounds are `run_bounds`).
    pub(crate) fn recognizer_lower(
        &mut self,
        state: u32,
        class: &[(u32, u32)],
        cap: u32,
    ) -> Option<u32> {
        match self {
            Source::Nfa(_) => None,
            Source::Other(r) => r.run_lower(state, class, cap),
        }
    }

    /// What `state` surely survives (a recognizer's word; none for an NFA's).
    pub(crate) fn survivals(&mut self, state: u32) -> Option<Vec<Survival>> {
        match self {
            Source::Nfa(_) => None,
            Source::Other(r) => r.survivals(state),
        }
    }

    /// The NFA's states, or the recognizer's.
    pub(crate) fn states(&self) -> usize {
        match self {
            Source::Nfa(d) => d.nfa_states(),
            Source::Other(r) => r.num_states(),
        }
    }

    pub(crate) fn set_limit(&mut self, limit: usize) {
        match self {
            Source::Nfa(d) => d.set_walk_limit(limit),
            Source::Other(r) => r.set_limit(limit),
        }
    }

    pub(crate) fn exceeded(&self) -> bool {
        match self {
            Source::Nfa(d) => d.exceeded(),
            Source::Other(r) => r.exceeded(),
        }
    }

    pub(crate) fn memory_bytes(&self) -> usize {
        match self {
            Source::Nfa(d) => d.memory_bytes(),
            Source::Other(r) => r.memory_bytes(),
        }
    }
}
