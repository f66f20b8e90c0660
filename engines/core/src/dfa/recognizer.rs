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

use crate::util::table::{DfaTable, DEAD};

/// A byte automaton computed on demand (see the module doc).
pub trait Recognizer: Send + Sync {
    /// A partition of the bytes no state tells apart: each byte's class, and how many.
    fn byte_classes(&self) -> ([u8; 256], usize);
    /// The state after `byte` from `state` (a new one gets the next number), or [`DEAD`].
    fn step(&mut self, state: u32, byte: u8) -> u32;
    fn is_accepting(&self, state: u32) -> bool;
    /// States made so far.
    fn num_states(&self) -> usize;
    /// Bound the work of later steps (`LazyOptions::walk_limit`, in the NFA's units of
    /// twelve-byte states; a recognizer reads it as a bound on its own memory).
    fn set_limit(&mut self, limit: usize);
    /// Whether a step passed the limit: that step and every later one may be wrong.
    fn exceeded(&self) -> bool;
    fn memory_bytes(&self) -> usize;
    fn boxed_clone(&self) -> Box<dyn Recognizer>;
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
pub(crate) fn next_row(r: &mut dyn Recognizer, table: &mut DfaTable, row: u32, byte: u8) -> u32 {
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
