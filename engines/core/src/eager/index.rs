//! TokensDFA: the token-level automaton built up front, every reachable state's mask
//! computed once at construction.
//!
//! A state of the index is a state of the regex's minimized [`ByteDfa`](crate::ByteDfa) (exact mode), or
//! a set of them (`canonical_literals` mode, [`crate::eager::canonical`]). Exact mode
//! ([`crate::eager::exact`]) walks the vocabulary's prepared byte trie from each state, taking
//! whole token slices where the state provably allows them; both modes search states
//! breadth-first, a chunk of the frontier in parallel, numbered in a fixed order, so the
//! result does not depend on threads. Each distinct mask is stored once: masks are
//! hashed as bitsets ([`MaskStore`](crate::eager::build::MaskStore)) and compared on a hash match.
//!
//! A build is bounded ([`Limits`]): determinization by the bytes regex-automata may use,
//! the walks by a *work* budget (trie nodes and product pairs visited, summed over every
//! state), the stored masks by their bytes. Exhausting one is [`Error::LimitExceeded`],
//! raised as soon as it happens (the counts are deterministic, so the same regex fails
//! the same way on every machine). The defaults keep a build under about 30 s on a
//! 128k-token vocabulary on two cores; the lazy index ([`crate::LazyIndex`]) has no such
//! limit, as it only builds the states it visits.

use std::time::Instant;

use regex_syntax::hir::Hir;

use crate::automaton::{Mode, TokenAutomaton};
use crate::dfa::lazy::{minimal_dfa, minimal_dfa_of_hir};
use crate::eager::build::{Limits, Stats};
use crate::eager::canonical::GroupNext;
use crate::eager::exact::WalkNext;
use crate::error::Error;
use crate::util::bitmask::{copy_mask, get_bit, ones, Mask};
use crate::util::pool::pool;
use crate::util::syntax::parse;
use crate::vocab::Vocabulary;

/// How a token's next state is found.
pub(crate) enum Next {
    /// Exact mode: where the token's bytes lead in the DFA.
    Walk(Box<WalkNext>),
    /// Canonical mode: stored per state, by group and ghost token.
    Groups(Box<GroupNext>),
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
        pool(threads)?.install(build)
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
                crate::eager::exact::build(dfa, vocab, limits, &mut stats)?
                    .map_next(|w| Next::Walk(Box::new(w)))
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
                crate::eager::canonical::build(hir, vocab, limits, &mut stats)?
                    .map_next(|g| Next::Groups(Box::new(g)))
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
        copy_mask(out, self.mask(state));
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
