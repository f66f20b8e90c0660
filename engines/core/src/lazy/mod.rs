//! The lazy automaton: [`LazyIndex`], states computed on first visit.
//!
//! - this module: [`LazyIndex`] (below);
//! - `options`: [`LazyOptions`] and the counters [`LazyStats`];
//! - `token_automaton`: the index behind [`crate::TokenAutomaton`];
//! - `engine`: what a first visit mutates (the DFA, scratch, counters);
//! - `helpers`: engines of their own for first visits on several threads.
//!
//! It builds on the lazy DFA ([`crate::dfa::lazy`], over the NFA of [`crate::nfa`]) and
//! the walks of [`crate::walk`].
//!
//! LazyIndex: the token-level automaton computed state by state, on first visit.
//!
//! Construction parses the regex and compiles the part of its NFA the start state needs
//! ([`crate::nfa::ast`], [`crate::nfa`]); nothing is determinized and no trie is built, so
//! it takes microseconds for small regexes and milliseconds for multi-megabyte ones. A
//! token-level state is a state of the [`LazyDfa`] reached by tokens. Its mask is
//! computed the first time it is asked for, then memoized, so a revisit is one copy:
//! 1. the vocabulary's slices ([`crate::walk::slices`]) are decided: when they are runs of one
//!    character class by length (the JSON default), from bounds on the runs of that class
//!    the state allows, read off the NFA ([`crate::nfa::Determinizer::run_bounds`]);
//!    otherwise, or when the bounds say nothing, by a product search
//!    ([`crate::walk::masks::classify`]). A slice allowed whole contributes its precomputed mask,
//!    a slice allowed not at all is skipped;
//! 2. the remaining tries are walked from the state with the lazy DFA, computing the
//!    transitions they meet ([`crate::walk::masks::walk`]); with no slice taken whole, or
//!    where the undecided slices and the rest hold more trie nodes than the full trie,
//!    the full trie is walked once instead;
//! 3. except where the product search gives up ([`LAZY_MAX_PAIRS`]: a large region where
//!    strings of the slices' class stay alive, like a key position beside any other key,
//!    whose proof would determinize every declared key's prefixes): there the mask starts
//!    from every slice token and a *pruning* walk ([`crate::walk::masks::prune`]) clears the
//!    tokens that die, skipping each subtree below a state whose run bounds show that it
//!    keeps every such token alive; the rest trie is walked as in 2. A key position then
//!    costs the tokens that follow declared keys, not every string of the key trie.
//!
//! `next_state` follows the token's bytes in the DFA. Masks equal the naive index's on
//! every state, slices on or off (each decision is exact, see the modules above).
//!
//! States are numbered as discovered: 0 is the start, and a DFA state gets the next
//! number the first time `next_state` returns it. `num_states` is the count so far.
//!
//! Threads: every method takes `&self`. The DFA and the numbering sit behind one mutex,
//! taken by first visits, `next_state` and `forced_bytes`; memoized masks sit behind a
//! read-write lock, so revisits run concurrently and never wait on another thread's walk.
//! A first visit that finds the engine busy takes an idle *helper* (an engine over a
//! sibling DFA of the same tree, made when a batch first asks for several threads:
//! `helpers`, which says why its masks are the same and how the cache stays consistent),
//! so first visits of one index run in parallel; with no helper idle it waits for the
//! engine, and finds the mask there if another thread computed it meanwhile.
//!
//! Memory: memoized masks are capped (`cache_limit` bytes, default [`DEFAULT_CACHE_LIMIT`]);
//! past the cap the oldest masks not read since the last sweep are dropped (a clock
//! sweep) and recomputed on their next visit, identically. The DFA is never evicted (state
//! numbers must stay valid); its bytes are reported in [`LazyStats`].
//!
//! Cost of a first visit: the slice decision (a bounded search on the NFA, or product
//! pairs), then one step per trie node reached alive (or, pruning, per node above where
//! the run bounds vouch), plus a determinization step per new
//! DFA transition. Cost of a revisit: a read lock and a copy of the mask.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock, RwLockReadGuard, TryLockError};
use std::time::Instant;

use crate::automaton::Mode;
use crate::dfa::lazy::LazyDfa;
use crate::dfa::recognizer::Recognizer;
use crate::error::Error;
use crate::nfa::ast::Ast;
use crate::util::bitmask::{copy_mask, set_bit, Mask};
use crate::util::table::Stepper;
use crate::vocab::{Tokens, Vocabulary};
use crate::walk::masks::{classify, Verdict};
use crate::walk::slices::{low_bits, Prepared};

mod engine;
mod helpers;
mod options;
mod token_automaton;

use engine::Engine;
pub use options::{LazyOptions, LazyStats, DEFAULT_CACHE_LIMIT};

/// Product pairs a first visit explores deciding slices before it gives up and prunes
/// them instead: past a few hundred, the search determinizes more of the DFA (every
/// declared key's prefixes, say) than the tokens ever reach.
pub const LAZY_MAX_PAIRS: usize = 64;

pub struct LazyIndex {
    prepared: Arc<Prepared>,
    tokens: Tokens,
    special: Arc<[bool]>,
    eos_id: u32,
    vocab_len: usize,
    words: usize,
    opts: LazyOptions,
    engine: Mutex<Engine>,
    memo: RwLock<Memo>,
    /// Engines of their own for first visits beside `engine` (`helpers`).
    helpers: helpers::Helpers,
    build_s: f64,
    /// The DFA passed the NFA's walk limit ([`LazyIndex::exceeded`]).
    exceeded: AtomicBool,
}

/// Per token-level state: its DFA row and acceptance, and its mask once computed.
struct Memo {
    rows: Vec<u32>,
    /// Per state, the state and token that first reached it (state 0: itself): the
    /// path a helper follows to find its own row of the state.
    parents: Vec<(u32, u32)>,
    accepting: Vec<bool>,
    masks: Vec<Option<Arc<[u32]>>>,
    /// Read since the clock hand last passed (a second chance before eviction).
    used: Vec<AtomicBool>,
    clock: VecDeque<u32>,
    cache_bytes: usize,
    evictions: u64,
}

impl LazyIndex {
    pub fn new(pattern: &str, vocab: &Vocabulary, mode: Mode) -> Result<LazyIndex, Error> {
        Self::with_options(pattern, vocab, mode, LazyOptions::default())
    }

    pub fn with_options(
        pattern: &str,
        vocab: &Vocabulary,
        mode: Mode,
        opts: LazyOptions,
    ) -> Result<LazyIndex, Error> {
        let t0 = Instant::now();
        if mode != Mode::Exact {
            return Err(Error::Option(format!(
                "LazyIndex supports only mode \"exact\", not {:?}: canonical_literals \
                 rewrites the whole parsed regex and reads tokens two ways at once; \
                 tokensdfa.Index builds it",
                mode.as_str()
            )));
        }
        let dfa = LazyDfa::new(pattern)?;
        Ok(Self::from_dfa(dfa, vocab, opts, t0))
    }

    /// The index of a regex tree built by another front end (`tokensdfa-schema`'s
    /// `compile_ast`): the same index as for its printed regex.
    pub fn from_ast(ast: Ast, vocab: &Vocabulary, opts: LazyOptions) -> Result<LazyIndex, Error> {
        let t0 = Instant::now();
        let dfa = LazyDfa::from_ast(ast)?;
        Ok(Self::from_dfa(dfa, vocab, opts, t0))
    }

    /// The index of an automaton another front end computes on demand (the grammar
    /// crate's pushdown mode: [`crate::dfa::recognizer`]); its masks are exact as the
    /// recognizer's liveness is.
    pub fn from_recognizer(
        recognizer: Box<dyn Recognizer>,
        vocab: &Vocabulary,
        opts: LazyOptions,
    ) -> LazyIndex {
        let t0 = Instant::now();
        Self::from_dfa(LazyDfa::from_recognizer(recognizer), vocab, opts, t0)
    }

    fn from_dfa(mut dfa: LazyDfa, vocab: &Vocabulary, opts: LazyOptions, t0: Instant) -> LazyIndex {
        dfa.set_walk_limit(opts.walk_limit);
        let prepared = vocab.prepared();
        let accepting = dfa.dfa().is_accepting(0);
        let engine = Engine::new(dfa, &prepared);
        let memo = Memo {
            rows: vec![0],
            parents: vec![(0, u32::MAX)],
            accepting: vec![accepting],
            masks: vec![None],
            used: vec![AtomicBool::new(false)],
            clock: VecDeque::new(),
            cache_bytes: 0,
            evictions: 0,
        };
        LazyIndex {
            special: prepared.never_text.clone(),
            prepared,
            tokens: vocab.tokens(),
            eos_id: vocab.eos_id(),
            vocab_len: vocab.len(),
            words: vocab.mask_words(),
            opts,
            engine: Mutex::new(engine),
            memo: RwLock::new(memo),
            helpers: helpers::Helpers::default(),
            build_s: t0.elapsed().as_secs_f64(),
            exceeded: AtomicBool::new(false),
        }
    }

    /// Whether a first visit or a step passed the NFA's walk limit
    /// (`walk_limit`, by default the NFA's `WALK_STATE_LIMIT`, about two gigabytes): masks and states computed
    /// since may be wrong, and the index must be discarded (the Python binding raises
    /// `LimitError` from then on). A tree standing for terabytes of text is served
    /// within that bound or fails so, never by taking all memory.
    pub fn exceeded(&self) -> bool {
        self.exceeded.load(Ordering::Relaxed)
    }

    /// Record whether `e`'s DFA passed the walk limit; true if it did.
    fn note_exceeded(&self, e: &Engine) -> bool {
        let over = e.dfa.exceeded();
        if over {
            self.mark_exceeded();
        }
        over
    }

    fn mark_exceeded(&self) {
        self.exceeded.store(true, Ordering::Relaxed);
    }

    /// Make the helpers `threads` threads filling masks at once need (`helpers`): a batch
    /// calls it before filling on several threads.
    pub fn prepare_threads(&self, threads: usize) {
        self.helpers.prepare(self, threads);
    }

    fn engine(&self) -> MutexGuard<'_, Engine> {
        self.engine.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn memo(&self) -> RwLockReadGuard<'_, Memo> {
        self.memo.read().unwrap_or_else(|p| p.into_inner())
    }

    /// Copy the state's mask into `out` if it is memoized; false if it must be computed
    /// (cheap: callers holding a lock of their own, such as Python's, try this first).
    pub fn fill_cached(&self, state: u32, out: &mut Mask) -> bool {
        let memo = self.memo();
        match memo.masks.get(state as usize) {
            Some(Some(m)) => {
                copy_mask(out, m);
                memo.used[state as usize].store(true, Ordering::Relaxed);
                true
            }
            _ => false,
        }
    }

    /// The state's mask, computed now if not memoized; `None` for an unknown state.
    pub fn mask(&self, state: u32) -> Option<Arc<[u32]>> {
        {
            let memo = self.memo();
            match memo.masks.get(state as usize) {
                None => return None,
                Some(Some(m)) => {
                    memo.used[state as usize].store(true, Ordering::Relaxed);
                    return Some(m.clone());
                }
                Some(None) => {}
            }
        }
        let mut engine = match self.engine.try_lock() {
            Ok(engine) => engine,
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            Err(TryLockError::WouldBlock) => match self.helpers.first_visit(self, state) {
                Some(mask) => return Some(mask),
                None => self.engine(),
            },
        };
        let (row, accepting) = {
            let memo = self.memo();
            if let Some(m) = &memo.masks[state as usize] {
                return Some(m.clone());
            }
            (memo.rows[state as usize], memo.accepting[state as usize])
        };
        let mask: Arc<[u32]> = self.compute(&mut engine, row, accepting).into();
        if !self.note_exceeded(&engine) {
            self.remember(state, mask.clone());
        }
        Some(mask)
    }

    /// The mask of DFA row `row` (see the module doc).
    fn compute(&self, e: &mut Engine, row: u32, accepting: bool) -> Vec<u32> {
        let t0 = Instant::now();
        let mut mask = vec![0u32; self.words];
        let p = &*self.prepared;
        // What a recognizer's state surely survives, asked once. Where every string of
        // the slices' class survives (inside a comment, free text), a walk taking whole
        // what survives sets them and more, with no slice decided.
        let survivals = if e.dfa.is_recognizer() {
            e.broad_survivals(row)
        } else {
            None
        };
        let class = p.family.tiers.as_ref().map(|t| &t.class[..]);
        let survives = match (&survivals, class) {
            (Some(v), Some(class)) => v.iter().any(|s| s.covers(class)),
            _ => false,
        };
        let verdict = if self.opts.slices && !p.slices.is_empty() && !survives {
            self.slice_verdict(e, row)
        } else {
            Verdict::default()
        };
        let n = p.slices.len();
        let decided = (verdict.all | verdict.none) & low_bits(n);
        // Slices are taken whole only where that saves walking: the undecided slices'
        // tries and the rest, walked one by one, can hold more nodes than the full trie
        // (a key under a pattern whose single characters live: only the one-character
        // slice decided, and 409,000 nodes walked where the full trie has 268,000).
        let undecided: usize = (p.slices.iter().enumerate())
            .filter(|(k, _)| decided >> k & 1 == 0)
            .map(|(_, s)| s.trie.nodes.len())
            .sum();
        let take =
            verdict.all & low_bits(n) != 0 && undecided + p.rest.nodes.len() <= p.full.nodes.len();
        if verdict.gave_up && n > 0 && p.family.tiers.is_some() && !e.dfa.is_recognizer() {
            // A large live region of the slices' class (keys beside any other key, say):
            // start from every slice token and clear the ones that die. Not for a
            // recognizer: its run bounds, which vouch for subtrees, may make no state, so
            // they seldom do, and a pruning walk that keeps no subtree costs more than a
            // walk (Java's grammar on llama3: slowest mask 44 ms -> 13 ms, masks over
            // 1.5 ms 96 -> 63).
            copy_mask(&mut mask, &p.slices[n - 1].prefix_mask);
            e.prune(p, row, &mut mask);
            e.pruned_masks += 1;
            e.walk(&p.rest, row, &mut mask);
        } else if !take && e.dfa.is_recognizer() {
            // No slice taken whole, over a grammar: one walk of the full trie, taking
            // whole the tokens the state survives (inside a comment, free text).
            e.walk_surviving(p, row, survivals, &mut mask);
        } else if !take {
            // No slice taken whole: one walk of the full trie beats one per slice.
            e.walk(&p.full, row, &mut mask);
        } else {
            // The longest run of leading "all" slices takes one prefix union.
            let lead = (!verdict.all).trailing_zeros().min(n as u32) as usize;
            if lead > 0 {
                copy_mask(&mut mask, &p.slices[lead - 1].prefix_mask);
            }
            for (k, slice) in p.slices.iter().enumerate().skip(lead) {
                if verdict.all >> k & 1 == 1 {
                    for (m, s) in mask.iter_mut().zip(&slice.mask) {
                        *m |= s;
                    }
                } else if verdict.none >> k & 1 == 0 {
                    e.walk(&slice.trie, row, &mut mask);
                }
            }
            e.slice_hits += decided.count_ones() as u64;
            e.walk(&p.rest, row, &mut mask);
        }
        if accepting {
            set_bit(&mut mask, self.eos_id);
        }
        e.masks_computed += 1;
        e.mask_ns += t0.elapsed().as_nanos() as u64;
        mask
    }

    /// Which slices `row` allows whole or not at all: from the run bounds of the slices'
    /// class when they are tiers of one class and the bounds decide something, else from
    /// the product search.
    fn slice_verdict(&self, e: &mut Engine, row: u32) -> Verdict {
        let t0 = Instant::now();
        let v = self.slice_verdict_untimed(e, row);
        e.verdict_ns += t0.elapsed().as_nanos() as u64;
        v
    }

    fn slice_verdict_untimed(&self, e: &mut Engine, row: u32) -> Verdict {
        let family = &self.prepared.family;
        e.slice_tests += 1;
        if let Some(tiers) = &family.tiers {
            // Runs are followed one character per step of a recursion: bounded.
            let cap = tiers.decisive() + 1;
            if let Some((lower, upper)) = e.dfa.run_bounds(row, &tiers.class, cap) {
                if lower == 0 && e.dfa.is_recognizer() {
                    // A slice is taken only where one is allowed whole, which no run
                    // bound of 0 allows, and over a recognizer the product search steps
                    // its sets token by token: along MaskBench's and the grammar
                    // corpus's paths it decided no slice there (2,945 searches).
                    return Verdict::default();
                }
                if lower > 0 || upper <= tiers.max {
                    let (all, none) = tiers.verdict(lower, upper);
                    e.run_verdicts += 1;
                    return Verdict {
                        all,
                        none,
                        pairs: 0,
                        gave_up: false,
                    };
                }
            }
        }
        let v = classify(&mut e.dfa, family, &e.joint, row, 0, None, &mut e.product);
        e.product_pairs += v.pairs as u64;
        v
    }

    /// Memoize `mask` for `state`, evicting older masks past the cap.
    fn remember(&self, state: u32, mask: Arc<[u32]>) {
        let mut memo = self.memo.write().unwrap_or_else(|p| p.into_inner());
        let bytes = mask.len() * 4;
        while memo.cache_bytes + bytes > self.opts.cache_limit {
            let Some(victim) = memo.clock.pop_front() else {
                break;
            };
            if memo.used[victim as usize].swap(false, Ordering::Relaxed) {
                memo.clock.push_back(victim);
                continue;
            }
            memo.masks[victim as usize] = None;
            memo.cache_bytes -= bytes;
            memo.evictions += 1;
        }
        if memo.cache_bytes + bytes > self.opts.cache_limit {
            return; // a cap below one mask: nothing is memoized
        }
        memo.masks[state as usize] = Some(mask);
        memo.cache_bytes += bytes;
        memo.clock.push_back(state);
    }

    /// The text the regex forces from `state` (jump-forward): the longest byte string
    /// every continuation starts with, empty where EOS or two bytes are possible.
    pub fn forced_bytes(&self, state: u32) -> Vec<u8> {
        let Some(&row) = self.memo().rows.get(state as usize) else {
            return Vec::new();
        };
        let mut engine = self.engine();
        let forced = engine.dfa.forced_from(row, 1 << 16);
        self.note_exceeded(&engine);
        forced
    }

    pub fn stats(&self) -> LazyStats {
        let e = self.engine();
        let memo = self.memo();
        LazyStats {
            states: memo.rows.len(),
            dfa_states: e.dfa.dfa().num_states(),
            lazy_dfa: e.dfa.is_lazy(),
            nfa_states: e.dfa.nfa_states(),
            byte_classes: e.dfa.dfa().n_classes,
            masks_computed: e.masks_computed + self.helpers.masks.load(Ordering::Relaxed),
            helpers: self.helpers.count(),
            helper_masks: self.helpers.masks.load(Ordering::Relaxed),
            trie_walks: e.trie_walks,
            nodes_visited: e.nodes_visited,
            slice_tests: e.slice_tests,
            slice_hits: e.slice_hits,
            product_pairs: e.product_pairs,
            run_verdicts: e.run_verdicts,
            pruned_masks: e.pruned_masks,
            kept_subtrees: e.kept_subtrees,
            survived_subtrees: e.survived_subtrees,
            cache_bytes: memo.cache_bytes,
            cached_masks: memo.clock.len(),
            evictions: memo.evictions,
            dfa_bytes: e.dfa.memory_bytes() + e.number.capacity() * 12 + self.helpers.dfa_bytes(),
            build_s: self.build_s,
            fast_parse: e.dfa.build.fast_parse,
            parse_s: e.dfa.build.parse_ns as f64 * 1e-9,
            compile_s: e.dfa.build.compile_ns as f64 * 1e-9,
            transitions_computed: e.dfa.misses,
            determinize_s: e.dfa.determinize_s(),
            walk_s: e.walk_ns as f64 * 1e-9,
            slice_s: e.verdict_ns as f64 * 1e-9,
            mask_s: e.mask_ns as f64 * 1e-9,
        }
    }
}
