//! First visits of one lazy index on several threads: helper engines.
//!
//! A first visit mutates the lazy DFA (it computes the transitions its walks meet), so
//! the index's own engine serves one at a time. A batch filled on T threads
//! ([`crate::batch`]) would then wait on it whenever two sequences of one spec reach new
//! states in one step. So the index keeps up to T - 1 *helpers*: engines of their own,
//! each over a copy of the index's DFA taken when a batch first asks for T threads
//! ([`Helpers::prepare`]), with every transition computed by then. A first visit that
//! finds the index's engine busy takes an idle helper instead (or waits for the engine
//! when none is idle). From the copy on, each DFA grows on its own.
//!
//! Why a helper's mask is the mask: a mask is decided by the state's residual language
//! alone (the texts that may follow its prefix), every walk being exact. The state's
//! numbering is the index's: a helper knows its row of every state numbered when it was
//! made (the copy's rows are the index's), and finds its row of a later state by
//! following, from the nearest state it knows, the bytes of the tokens that first
//! reached it (the memo's parents): a path to the same residual language. Its own row
//! numbers are never shown outside.
//!
//! Consistency of the cache: a mask is memoized under the memo's write lock, and two
//! threads computing one state's mask (the engine and a helper, racing) compute the same
//! bits, so whichever lands is the mask. States are still numbered only by the index's
//! engine (`next_state`), so numbers never depend on threads. A helper's DFA passing the
//! walk limit marks the whole index exceeded, as the engine's does.
//!
//! Cost: copying the DFA once per helper, and memory of its own, counted in
//! [`crate::LazyStats`]'s `dfa_bytes`; transitions computed later by one engine are
//! computed again by another that needs them.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use rustc_hash::FxHashMap;

use crate::util::table::DEAD;

use super::{Engine, LazyIndex};

/// Helpers made per index at most, whatever the threads asked.
pub const MAX_HELPERS: usize = 15;

/// A helper: an engine of its own, and its DFA rows of the index's states it has met.
pub(super) struct Helper {
    engine: Engine,
    rows: FxHashMap<u32, u32>,
}

#[derive(Default)]
pub(super) struct Helpers {
    idle: Mutex<Vec<Helper>>,
    made: Mutex<usize>,
    /// Masks computed by helpers.
    pub(super) masks: AtomicU64,
}

impl Helpers {
    fn idle(&self) -> MutexGuard<'_, Vec<Helper>> {
        self.idle.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Helpers made so far.
    pub(super) fn count(&self) -> usize {
        *self.made.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// DFA bytes of the idle helpers (a busy one is counted when it is back).
    pub(super) fn dfa_bytes(&self) -> usize {
        self.idle()
            .iter()
            .map(|h| h.engine.dfa.memory_bytes() + h.rows.capacity() * 8)
            .sum()
    }

    /// Make helpers until there are `threads - 1` (at most [`MAX_HELPERS`]), each over a
    /// copy of the index's DFA as it is now (warm: the transitions its engine computed,
    /// and its row of every state numbered so far). Takes the index's engine lock.
    pub(super) fn prepare(&self, index: &LazyIndex, threads: usize) {
        let want = threads.saturating_sub(1).min(MAX_HELPERS);
        let mut made = self.made.lock().unwrap_or_else(|p| p.into_inner());
        if *made >= want {
            return;
        }
        let engine = index.engine();
        let rows: FxHashMap<u32, u32> = {
            let memo = index.memo();
            (0..).zip(memo.rows.iter().copied()).collect()
        };
        while *made < want {
            let helper = Helper {
                engine: Engine::new(engine.dfa.clone(), &index.prepared),
                rows: rows.clone(),
            };
            self.idle().push(helper);
            *made += 1;
        }
    }

    /// The mask of `state` computed by an idle helper, memoized; None when no helper is
    /// idle (the caller waits for the index's engine).
    pub(super) fn first_visit(&self, index: &LazyIndex, state: u32) -> Option<Arc<[u32]>> {
        let mut helper = self.idle().pop()?;
        let found = helper.mask(index, state);
        self.idle().push(helper);
        if found.is_some() {
            self.masks.fetch_add(1, Ordering::Relaxed);
        }
        found
    }
}

impl Helper {
    fn mask(&mut self, index: &LazyIndex, state: u32) -> Option<Arc<[u32]>> {
        let row = self.row_of(index, state)?;
        let accepting = *index.memo().accepting.get(state as usize)?;
        let mask: Arc<[u32]> = index.compute(&mut self.engine, row, accepting).into();
        if self.engine.dfa.exceeded() {
            index.mark_exceeded();
            return None;
        }
        index.remember(state, mask.clone());
        Some(mask)
    }

    /// This helper's DFA row of the index's `state`: from the nearest state whose row it
    /// knows, along the tokens that first reached `state`.
    fn row_of(&mut self, index: &LazyIndex, state: u32) -> Option<u32> {
        let mut path = Vec::new();
        let start = {
            let memo = index.memo();
            let mut s = state;
            while !self.rows.contains_key(&s) {
                let &(parent, token) = memo.parents.get(s as usize)?;
                path.push((s, token));
                s = parent;
            }
            s
        };
        let mut row = self.rows[&start];
        for &(s, token) in path.iter().rev() {
            row = self.engine.dfa.walk(row, index.tokens.get(token));
            if row == DEAD || self.engine.dfa.exceeded() {
                return None;
            }
            self.rows.insert(s, row);
        }
        Some(row)
    }
}

#[cfg(test)]
mod tests {
    use crate::{LazyIndex, Mode, NaiveIndex, TokenAutomaton, Vocabulary};

    fn vocab() -> Vocabulary {
        let words = [
            "</s>", "a", "b", "ab", "ba", "1", "12", "\"", "x\"", "{", "}", ":", " ",
        ];
        let tokens: Vec<&[u8]> = words.iter().map(|w| w.as_bytes()).collect();
        Vocabulary::new(&tokens, 0, &[]).unwrap()
    }

    /// The tokens that first reached `state` from the start.
    fn path_to(lazy: &LazyIndex, state: u32) -> Vec<u32> {
        let memo = lazy.memo();
        let mut path = Vec::new();
        let mut s = state;
        while s != 0 {
            let (parent, token) = memo.parents[s as usize];
            path.push(token);
            s = parent;
        }
        path.reverse();
        path
    }

    /// States `depth` tokens deep, numbered by the index (its engine numbers them).
    fn states(lazy: &LazyIndex, depth: usize) -> Vec<u32> {
        let mut found = vec![0];
        let mut frontier = vec![0];
        for _ in 0..depth {
            let mut next = Vec::new();
            for &s in &frontier {
                for t in 1..lazy.vocab_len() as u32 {
                    if let Some(n) = lazy.next_state(s, t) {
                        if !found.contains(&n) {
                            found.push(n);
                            next.push(n);
                        }
                    }
                }
            }
            frontier = next;
        }
        found
    }

    #[test]
    fn a_first_visit_beside_a_busy_engine_takes_a_helper_and_its_mask() {
        let v = vocab();
        let p = r#"\{"[ab]{1,4}": ([0-9]+|"[abx]*")\}"#;
        let lazy = LazyIndex::new(p, &v, Mode::Exact).unwrap();
        let naive = NaiveIndex::new(p, &v).unwrap();
        let early = states(&lazy, 2); // the copy knows their rows
        lazy.prepare_threads(2);
        assert_eq!(lazy.stats().helpers, 1);
        let all = states(&lazy, 5); // a helper follows their tokens to its own rows
        assert!(all.len() > early.len() + 5);
        let busy = lazy.engine(); // another thread's first visit, say
        std::thread::scope(|scope| {
            scope.spawn(|| {
                for &s in &all {
                    let mask = lazy.mask(s).unwrap();
                    let mut naive_state = naive.initial_state();
                    let path = path_to(&lazy, s);
                    for t in path {
                        naive_state = naive.next_state(naive_state, t).unwrap();
                    }
                    assert_eq!(crate::ones(&mask), naive.allowed(naive_state), "state {s}");
                }
            });
        });
        drop(busy);
        let stats = lazy.stats();
        assert_eq!(stats.helper_masks as usize, all.len(), "{stats:?}");
        // memoized: the engine finds the helper's masks
        let mut out = vec![0u32; v.mask_words()];
        assert!(all.iter().all(|&s| lazy.fill_cached(s, &mut out)));
    }
}
