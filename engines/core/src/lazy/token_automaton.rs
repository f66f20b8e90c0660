//! The lazy index behind the common interface of token automata.

use std::sync::atomic::AtomicBool;

use crate::automaton::TokenAutomaton;
use crate::util::bitmask::{copy_mask, ones, Mask};
use crate::util::table::Stepper;
use crate::util::table::DEAD;

use super::LazyIndex;

impl TokenAutomaton for LazyIndex {
    fn initial_state(&self) -> u32 {
        0
    }

    /// States discovered so far (see the module doc).
    fn num_states(&self) -> usize {
        self.memo().rows.len()
    }

    fn memory_bytes(&self) -> usize {
        let s = self.stats();
        let memo = self.memo();
        s.cache_bytes + s.dfa_bytes + memo.rows.len() * 13 + self.special.len()
    }

    fn vocab_len(&self) -> usize {
        self.vocab_len
    }

    fn next_state(&self, state: u32, token: u32) -> Option<u32> {
        let t = token as usize;
        if t >= self.vocab_len || self.special[t] {
            return None;
        }
        let mut engine = self.engine();
        let row = *self.memo().rows.get(state as usize)?;
        let next = engine.dfa.walk(row, self.tokens.get(token));
        if self.note_exceeded(&engine) || next == DEAD {
            return None;
        }
        let fresh = self.memo().rows.len() as u32;
        let id = *engine.number.entry(next).or_insert(fresh);
        if id == fresh {
            let accepting = engine.dfa.dfa().is_accepting(next);
            let mut memo = self.memo.write().unwrap_or_else(|p| p.into_inner());
            memo.rows.push(next);
            memo.parents.push((state, token));
            memo.accepting.push(accepting);
            memo.masks.push(None);
            memo.used.push(AtomicBool::new(false));
        }
        Some(id)
    }

    fn is_accepting(&self, state: u32) -> bool {
        self.memo()
            .accepting
            .get(state as usize)
            .copied()
            .unwrap_or(false)
    }

    /// An unknown state allows nothing.
    fn fill_mask(&self, state: u32, out: &mut Mask) {
        if self.fill_cached(state, out) {
            return;
        }
        match self.mask(state) {
            Some(m) => copy_mask(out, &m),
            None => out.fill(0),
        }
    }

    fn prepare_threads(&self, threads: usize) {
        LazyIndex::prepare_threads(self, threads);
    }

    fn allowed(&self, state: u32) -> Vec<u32> {
        self.mask(state).map(|m| ones(&m)).unwrap_or_default()
    }
}
