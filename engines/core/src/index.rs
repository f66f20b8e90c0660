//! TokensDFA: the token-level automaton built up front, every reachable state's mask
//! computed once at construction.
//!
//! A state of the index is a state of the regex's minimized [`ByteDfa`] (exact mode), or
//! a set of them (`canonical_literals` mode, [`crate::canonical`]). Exact mode
//! ([`crate::eager`]) walks the vocabulary's prepared byte trie from each state, taking
//! whole token slices where the state provably allows them; both modes search states
//! breadth-first, a chunk of the frontier in parallel, numbered in a fixed order, so the
//! result does not depend on threads. Each distinct mask is stored once: masks are
//! hashed as bitsets ([`MaskStore`]) and compared on a hash match.
//!
//! A build is bounded ([`Limits`]): determinization by the bytes regex-automata may use,
//! the walks by a *work* budget (trie nodes and product pairs visited, summed over every
//! state), the stored masks by their bytes. Exhausting one is [`Error::LimitExceeded`],
//! raised as soon as it happens (the counts are deterministic, so the same regex fails
//! the same way on every machine). The defaults keep a build under about 30 s on a
//! 128k-token vocabulary on two cores; the lazy index ([`crate::LazyIndex`]) has no such
//! limit, as it only builds the states it visits.

use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use regex_syntax::hir::Hir;
use rustc_hash::FxHashMap;

use crate::automaton::TokenAutomaton;
use crate::bitmask::{get_bit, ones, Mask};
use crate::canonical::GroupNext;
use crate::dfa::parse;
use crate::eager::WalkNext;
use crate::error::Error;
use crate::lazydfa::{minimal_dfa, minimal_dfa_of_hir};
use crate::vocab::Vocabulary;

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

/// Bounds of an eager build (see the module doc).
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

/// What a builder hands the index.
pub(crate) struct Built {
    pub accepting: Vec<bool>,
    pub mask_of: Vec<u32>,
    pub masks: Vec<u32>,
    pub next: Next,
}

/// How a token's next state is found.
pub(crate) enum Next {
    /// Exact mode: where the token's bytes lead in the DFA.
    Walk(Box<WalkNext>),
    /// Canonical mode: stored per state, by group and ghost token.
    Groups(Box<GroupNext>),
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

pub struct Index {
    eos_id: u32,
    vocab_len: usize,
    words: usize,
    accepting: Vec<bool>,
    mask_of: Vec<u32>,
    masks: Vec<u32>,
    next: Next,
    stats: Stats,
}

/// What an index is built from: exact mode determinizes a pattern by its own road
/// ([`minimal_dfa`]), so it need not be parsed by `regex-syntax` first.
#[derive(Clone, Copy)]
enum Source<'a> {
    Pattern(&'a str),
    Hir(&'a Hir),
}

/// The pool builds share when no size is given, one per process. Not rayon's global pool:
/// a process forked after that pool started inherits its bookkeeping but none of its
/// threads, so every build in the child would wait forever (the differ forks a child per
/// spec, after building indexes itself).
fn process_pool() -> Result<Arc<rayon::ThreadPool>, Error> {
    static POOL: Mutex<Option<(u32, Arc<rayon::ThreadPool>)>> = Mutex::new(None);
    let pid = std::process::id();
    let mut slot = POOL.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some((owner, pool)) = slot.as_ref() {
        if *owner == pid {
            return Ok(pool.clone());
        }
    }
    let pool = Arc::new(
        rayon::ThreadPoolBuilder::new()
            .build()
            .map_err(|e| Error::Option(format!("cannot start the build pool: {e}")))?,
    );
    if let Some(inherited) = slot.replace((pid, pool.clone())) {
        // Its threads live in the parent; dropping it here would wait for them forever.
        std::mem::forget(inherited);
    }
    Ok(pool)
}

impl Index {
    pub fn new(pattern: &str, vocab: &Vocabulary, mode: Mode) -> Result<Index, Error> {
        Self::with_threads(pattern, vocab, mode, None)
    }

    /// Build on a pool of `threads` workers (this process's shared pool when `None`).
    pub fn with_threads(
        pattern: &str,
        vocab: &Vocabulary,
        mode: Mode,
        threads: Option<usize>,
    ) -> Result<Index, Error> {
        Self::with_limits(pattern, vocab, mode, threads, Limits::default())
    }

    /// Build within `limits` on a pool of `threads` workers.
    pub fn with_limits(
        pattern: &str,
        vocab: &Vocabulary,
        mode: Mode,
        threads: Option<usize>,
        limits: Limits,
    ) -> Result<Index, Error> {
        let build = || Self::build(Source::Pattern(pattern), vocab, mode, &limits);
        match threads {
            None => process_pool()?.install(build),
            Some(n) => rayon::ThreadPoolBuilder::new()
                .num_threads(n.max(1))
                .build()
                .map_err(|e| Error::Option(format!("cannot start {n} threads: {e}")))?
                .install(build),
        }
    }

    /// Build the index of a parsed regex with the default limits.
    pub fn from_hir(hir: &Hir, vocab: &Vocabulary, mode: Mode) -> Result<Index, Error> {
        Self::from_hir_limited(hir, vocab, mode, &Limits::default())
    }

    /// Build the index of a parsed regex (see the module doc).
    pub fn from_hir_limited(
        hir: &Hir,
        vocab: &Vocabulary,
        mode: Mode,
        limits: &Limits,
    ) -> Result<Index, Error> {
        Self::build(Source::Hir(hir), vocab, mode, limits)
    }

    fn build(
        source: Source<'_>,
        vocab: &Vocabulary,
        mode: Mode,
        limits: &Limits,
    ) -> Result<Index, Error> {
        let t_start = Instant::now();
        let mut stats = Stats {
            mode: mode.as_str(),
            threads: rayon::current_num_threads(),
            ..Stats::default()
        };
        let (vtrie, prep_s) = vocab.trie_with_time();
        stats.vocab_prepare_s = *prep_s;
        stats.vocab_trie_nodes = vtrie.nodes.len();
        stats.text_tokens = vtrie.sorted_ids.len();
        let built = match mode {
            Mode::Exact => {
                let t = Instant::now();
                let dfa = match source {
                    Source::Pattern(p) => minimal_dfa(p, limits.dfa_bytes)?,
                    Source::Hir(hir) => minimal_dfa_of_hir(hir, limits.dfa_bytes)?,
                };
                stats.dfa_s = t.elapsed().as_secs_f64();
                crate::eager::build(dfa, vocab, limits, &mut stats)?
            }
            Mode::CanonicalLiterals => {
                let parsed;
                let hir = match source {
                    Source::Pattern(p) => {
                        parsed = parse(p)?;
                        &parsed
                    }
                    Source::Hir(hir) => hir,
                };
                crate::canonical::build(hir, vocab, limits, &mut stats)?
            }
        };
        stats.total_s = t_start.elapsed().as_secs_f64();
        Ok(Index {
            eos_id: vocab.eos_id(),
            vocab_len: vocab.len(),
            words: vocab.mask_words(),
            accepting: built.accepting,
            mask_of: built.mask_of,
            masks: built.masks,
            next: built.next,
            stats,
        })
    }

    /// The state's mask, stored once and shared by every state with the same mask.
    #[inline]
    pub fn mask(&self, state: u32) -> &[u32] {
        let m = self.mask_of[state as usize] as usize * self.words;
        &self.masks[m..m + self.words]
    }

    /// The text the regex forces from `state` (jump-forward): the longest byte string
    /// every continuation starts with, empty where EOS or two bytes are possible. In
    /// canonical mode, ghost codes are read back as the literal text they spell, and a
    /// run stops before a literal whose candidate ghosts differ (`cat|car` forces "ca" in
    /// exact mode only).
    pub fn forced_bytes(&self, state: u32) -> Vec<u8> {
        if state as usize >= self.accepting.len() {
            return Vec::new();
        }
        match &self.next {
            Next::Walk(w) => w.forced_bytes(state),
            Next::Groups(g) => g.forced_bytes(state),
        }
    }

    pub fn stats(&self) -> &Stats {
        &self.stats
    }
}

impl TokenAutomaton for Index {
    fn initial_state(&self) -> u32 {
        0
    }

    fn num_states(&self) -> usize {
        self.accepting.len()
    }

    fn is_accepting(&self, state: u32) -> bool {
        self.accepting.get(state as usize).copied().unwrap_or(false)
    }

    #[inline]
    fn fill_mask(&self, state: u32, out: &mut Mask) {
        out.copy_from_slice(self.mask(state));
    }

    fn allowed(&self, state: u32) -> Vec<u32> {
        ones(self.mask(state))
    }

    fn next_state(&self, state: u32, token: u32) -> Option<u32> {
        let s = state as usize;
        if s >= self.num_states() || token as usize >= self.vocab_len || token == self.eos_id {
            return None;
        }
        let allowed = get_bit(self.mask(state), token);
        match &self.next {
            Next::Walk(w) => allowed.then(|| w.next_state(s, token)),
            Next::Groups(g) => g.next_state(s, token, allowed),
        }
    }

    fn vocab_len(&self) -> usize {
        self.vocab_len
    }

    fn memory_bytes(&self) -> usize {
        self.masks.len() * 4
            + self.mask_of.len() * 4
            + self.accepting.len()
            + match &self.next {
                Next::Walk(w) => w.memory_bytes(),
                Next::Groups(g) => g.memory_bytes(),
            }
    }
}
