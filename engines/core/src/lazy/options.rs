//! A lazy index's options and counters.

/// Default cap on memoized mask bytes: 1 GiB, about 65,000 llama3 masks.
pub const DEFAULT_CACHE_LIMIT: usize = 1 << 30;

/// Options of a [`LazyIndex`](crate::LazyIndex).
#[derive(Clone, Copy, Debug)]
pub struct LazyOptions {
    /// Use the vocabulary's slices (masks are the same either way).
    pub slices: bool,
    /// Cap on the bytes of memoized masks.
    pub cache_limit: usize,
    /// NFA states (and compiled pieces) the walks may compile on demand before the
    /// index is broken ([`LazyIndex::exceeded`](crate::LazyIndex::exceeded)); default the
    /// NFA's `WALK_STATE_LIMIT` (2^23).
    pub walk_limit: usize,
}

impl Default for LazyOptions {
    fn default() -> Self {
        LazyOptions {
            slices: true,
            cache_limit: DEFAULT_CACHE_LIMIT,
            walk_limit: crate::nfa::WALK_STATE_LIMIT,
        }
    }
}

/// Counters of a [`LazyIndex`](crate::LazyIndex) so far.
#[derive(Clone, Debug, Default)]
pub struct LazyStats {
    /// Token-level states discovered (`num_states`).
    pub states: usize,
    pub dfa_states: usize,
    /// Whether the DFA is built on demand (false: the pattern has look-around, the DFA
    /// was determinized up front).
    pub lazy_dfa: bool,
    pub nfa_states: usize,
    pub byte_classes: usize,
    /// Masks computed (first visits, and revisits after an eviction), helpers' included.
    pub masks_computed: u64,
    /// Helper engines made for first visits on several threads, and the masks they
    /// computed ([`crate::LazyIndex`], "Threads"); the walk counters below are the
    /// index's own engine's.
    pub helpers: usize,
    pub helper_masks: u64,
    pub trie_walks: u64,
    pub nodes_visited: u64,
    pub slice_tests: u64,
    pub slice_hits: u64,
    pub product_pairs: u64,
    /// Slice verdicts decided by run bounds on the NFA, without a product search.
    pub run_verdicts: u64,
    /// Masks whose slices were pruned (the product search gave up, see the module doc).
    pub pruned_masks: u64,
    /// Subtrees a pruning walk kept whole on a state's run bounds.
    pub kept_subtrees: u64,
    /// Subtrees walks took whole where their state surely survives every token in them
    /// (a recognizer's word, [`crate::walk::survival`]).
    pub survived_subtrees: u64,
    pub cache_bytes: usize,
    pub cached_masks: usize,
    pub evictions: u64,
    pub dfa_bytes: usize,
    pub build_s: f64,
    /// Whether the regex took the fast parser (else `regex-syntax`'s).
    pub fast_parse: bool,
    /// Seconds of construction parsing the regex, and compiling its NFA.
    pub parse_s: f64,
    pub compile_s: f64,
    /// DFA transitions computed since construction.
    pub transitions_computed: u64,
    /// Seconds computing DFA transitions since construction.
    pub determinize_s: f64,
    /// Seconds walking tries (their determinization included).
    pub walk_s: f64,
    /// Seconds deciding slices (run bounds or product searches).
    pub slice_s: f64,
    /// Seconds in mask computations (their determinization included).
    pub mask_s: f64,
}
