//! What both eager builders share, below the index that runs them: the build's bounds
//! ([`Limits`]) and figures ([`Stats`]), the frontier chunk size, the mask store that
//! keeps each distinct mask once ([`MaskStore`], [`mask_hash`]), and what a builder
//! hands the index ([`Built`]).

use rustc_hash::FxHashMap;

use crate::error::Error;

/// Figures of each construction stage.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    pub mode: &'static str,
    pub threads: usize,
    pub dead_bytes: usize,
    pub byte_classes: usize,
    pub text_tokens: usize,
    pub tokens_dropped: usize,
    pub token_classes: usize,
    pub vocab_trie_nodes: usize,
    pub class_trie_nodes: usize,
    pub dfa_states: usize,
    pub states: usize,
    pub distinct_masks: usize,
    pub transitions_stored: usize,
    pub muted_literals: usize,
    pub ghosts: usize,
    /// Trie nodes and product pairs visited (the work budget's count).
    pub work: u64,
    /// Slices taken whole, and skipped as allowing none of their tokens (exact mode).
    pub slice_hits: u64,
    pub slice_skips: u64,
    pub vocab_prepare_s: f64,
    pub dfa_s: f64,
    pub mute_s: f64,
    pub classes_s: f64,
    pub walk_s: f64,
    pub masks_s: f64,
    pub total_s: f64,
}

/// Bounds of an eager build ([`crate::Index`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Bytes regex-automata may use to determinize (its DFA and its working memory).
    pub dfa_bytes: usize,
    /// Trie nodes and product pairs the walks may visit, summed over all states.
    pub work: u64,
    /// Bytes of the distinct masks stored.
    pub mask_bytes: usize,
}

impl Default for Limits {
    /// Measured on llama3 with two cores: a unit of work costs about 6.6 ns of wall time
    /// and regex-automata determinizes about 20 MiB a second, so 3e9 units (about 20 s)
    /// and 256 MiB (about 12 s) keep a build near 30 s at worst; 2 GiB of masks is
    /// 131,000 llama3 masks.
    fn default() -> Self {
        Limits {
            dfa_bytes: 256 << 20,
            work: 3_000_000_000,
            mask_bytes: 2 << 30,
        }
    }
}

impl Limits {
    pub(crate) fn check_work(&self, work: u64) -> Result<(), Error> {
        if work > self.work {
            return Err(Error::LimitExceeded(format!(
                "the build's walks exceeded the work budget of {} trie nodes and product \
                 pairs (max_work); the lazy index builds only the states it visits",
                self.work
            )));
        }
        Ok(())
    }
}

/// Frontier states expanded at once: bounds the memory of walk results in flight.
pub(crate) const CHUNK: usize = 128;

/// What a builder hands the index: per state its acceptance and mask number, the
/// distinct masks end to end, and `next`, how the builder finds a token's next state.
pub(crate) struct Built<N> {
    pub accepting: Vec<bool>,
    pub mask_of: Vec<u32>,
    pub masks: Vec<u32>,
    pub next: N,
}

impl<N> Built<N> {
    /// The same build with its next-state part turned into `M`.
    pub fn map_next<M>(self, f: impl FnOnce(N) -> M) -> Built<M> {
        Built {
            accepting: self.accepting,
            mask_of: self.mask_of,
            masks: self.masks,
            next: f(self.next),
        }
    }
}

/// Distinct masks laid end to end, found again by their hash ([`mask_hash`]) and an
/// exact comparison, so two states share a mask iff their bitsets are equal.
pub(crate) struct MaskStore {
    words: usize,
    masks: Vec<u32>,
    by_hash: FxHashMap<u64, Vec<u32>>,
    limit: usize,
}

impl MaskStore {
    pub fn new(words: usize, limit: usize) -> Self {
        MaskStore {
            words,
            masks: Vec::new(),
            by_hash: FxHashMap::default(),
            limit,
        }
    }

    pub fn len(&self) -> usize {
        self.masks.len() / self.words.max(1)
    }

    /// The number of `mask` (whose hash is `hash`), stored if new.
    pub fn intern(&mut self, mask: &[u32], hash: u64) -> Result<u32, Error> {
        let w = self.words;
        let ids = self.by_hash.entry(hash).or_default();
        for &id in ids.iter() {
            if self.masks[id as usize * w..(id as usize + 1) * w] == *mask {
                return Ok(id);
            }
        }
        if (self.masks.len() + w) * 4 > self.limit {
            return Err(Error::LimitExceeded(format!(
                "the distinct masks exceed {} bytes (max_mask_bytes)",
                self.limit
            )));
        }
        let id = (self.masks.len() / w.max(1)) as u32;
        self.masks.extend_from_slice(mask);
        ids.push(id);
        Ok(id)
    }

    pub fn into_masks(self) -> Vec<u32> {
        self.masks
    }
}

/// A hash of a bitset: four independent multiply-xor lanes over 64-bit words.
pub(crate) fn mask_hash(m: &[u32]) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut h = [1u64, 2, 3, 4];
    for (i, pair) in m.chunks(2).enumerate() {
        let w = pair[0] as u64 | (pair.get(1).copied().unwrap_or(0) as u64) << 32;
        h[i & 3] = (h[i & 3] ^ w).wrapping_mul(K);
    }
    h.iter().fold(m.len() as u64, |a, &x| {
        (a ^ x).wrapping_mul(K).rotate_left(29)
    })
}
