//! Exact mode's builder: every reachable state of the minimized DFA, its mask computed by
//! walking the vocabulary's prepared byte trie, slices taken whole where they apply.
//!
//! A token-level state is a state of the regex's minimized [`ByteDfa`] (determinized by
//! [`crate::dfa::lazy::minimal_dfa`], minimized by Hopcroft, [`ByteDfa::minimized`]), so the
//! index has exactly the naive index's states. From the start, a breadth-first search:
//! each chunk of the frontier is computed in parallel, then numbered in order (next
//! states sorted by DFA state), so numbering does not depend on threads. For one state:
//! 1. the slices are classified ([`crate::walk::masks::classify`]): a slice the state allows
//!    whole contributes its precomputed mask, and its tokens' next states come from the
//!    product search (which answers "whole" only when it knows them); a slice the state
//!    allows none of is skipped;
//! 2. the other slices' tries and the rest are walked (the full trie when no slice is
//!    taken whole), each allowed token setting its bit and recording where it leads;
//! 3. the mask is hashed for [`MaskStore`].
//!
//! No class trie is built, so a regex with few states costs a few walks and nothing more.
//! Transitions are not stored: a token's next state is where its bytes lead in the DFA
//! (a few table reads), mapped to the state's number.
//!
//! Cost of a state: the product pairs plus the trie nodes reached alive, all counted
//! against the work budget ([`Limits::work`]).

use std::time::Instant;

use rayon::prelude::*;

use crate::dfa::ByteDfa;
use crate::eager::build::{mask_hash, Built, Limits, MaskStore, Stats, CHUNK};
use crate::error::Error;
use crate::util::bitmask::{copy_mask, set_bit};
use crate::util::table::DEAD;
use crate::util::table::{DfaTable, Frozen};
use crate::vocab::{Tokens, Vocabulary};
use crate::walk::masks::{classify, joint_classes, walk, ProductScratch, Sink};
use crate::walk::slices::{low_bits, Prepared};

const NONE: u32 = u32::MAX;

/// Build the exact index of a pattern whose minimized DFA is `dfa` (see the module doc).
pub(crate) fn build(
    dfa: ByteDfa,
    vocab: &Vocabulary,
    limits: &Limits,
    stats: &mut Stats,
) -> Result<Built<WalkNext>, Error> {
    stats.dfa_states = dfa.num_states();
    stats.byte_classes = dfa.num_classes();
    stats.dead_bytes = dfa.dead_bytes().iter().filter(|&&d| d).count();
    let (prepared, prep_s) = vocab.prepared_with_time();
    stats.vocab_prepare_s += prep_s;

    let t = Instant::now();
    let table = DfaTable::from_byte_dfa(&dfa);
    let ctx = Ctx {
        table: &table,
        p: prepared,
        joint: joint_classes(&prepared.family, &table.classes),
        words: vocab.mask_words(),
        eos: vocab.eos_id(),
        build: {
            static BUILDS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
            BUILDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        },
    };
    let mut dfa_state = vec![0u32];
    let mut state_of = vec![NONE; dfa.num_states()];
    state_of[0] = 0;
    let mut store = MaskStore::new(ctx.words, limits.mask_bytes);
    let mut mask_of = Vec::new();
    let mut pos = 0;
    while pos < dfa_state.len() {
        let end = (pos + CHUNK).min(dfa_state.len());
        let outs: Vec<StateOut> = dfa_state[pos..end]
            .par_iter()
            .map(|&d| ctx.state(d << table.shift, dfa.is_accepting(d)))
            .collect();
        for o in outs {
            stats.work += o.work;
            limits.check_work(stats.work)?;
            stats.slice_hits += o.hits;
            stats.slice_skips += o.skips;
            mask_of.push(store.intern(&o.mask, o.hash)?);
            for &row in &o.ends {
                let d = table.state(row);
                if state_of[d as usize] == NONE {
                    state_of[d as usize] = dfa_state.len() as u32;
                    dfa_state.push(d);
                }
            }
        }
        pos = end;
    }
    stats.walk_s = t.elapsed().as_secs_f64();
    stats.states = dfa_state.len();
    stats.distinct_masks = store.len();
    let accepting = dfa_state.iter().map(|&d| dfa.is_accepting(d)).collect();
    Ok(Built {
        accepting,
        mask_of,
        masks: store.into_masks(),
        next: WalkNext {
            dfa,
            dfa_state,
            state_of,
            tokens: vocab.tokens(),
        },
    })
}

/// Exact mode's transitions: a token leads where its bytes lead in the DFA.
pub(crate) struct WalkNext {
    dfa: ByteDfa,
    /// Token-level state -> DFA state, and back (`NONE` for DFA states never reached).
    dfa_state: Vec<u32>,
    state_of: Vec<u32>,
    tokens: Tokens,
}

impl WalkNext {
    /// The state after `token` from state `s`, the token being allowed there.
    pub fn next_state(&self, s: usize, token: u32) -> u32 {
        let d = self.dfa.walk(self.dfa_state[s], self.tokens.get(token));
        debug_assert_ne!(d, DEAD, "an allowed token keeps a match reachable");
        self.state_of[d as usize]
    }

    pub fn forced_bytes(&self, state: u32) -> Vec<u8> {
        self.dfa
            .forced_from(self.dfa_state[state as usize], 1 << 16)
            .0
    }

    pub fn memory_bytes(&self) -> usize {
        self.dfa.memory_bytes() + (self.dfa_state.len() + self.state_of.len()) * 4
    }
}

/// What computing one state needs, shared by the workers.
struct Ctx<'a> {
    table: &'a DfaTable,
    p: &'a Prepared,
    joint: Vec<Vec<u8>>,
    words: usize,
    eos: u32,
    /// This build's number, unique in the process.
    build: u64,
}

/// One state's mask, its hash, the rows its tokens lead to, and its counts.
struct StateOut {
    mask: Vec<u32>,
    hash: u64,
    ends: Vec<u32>,
    work: u64,
    hits: u64,
    skips: u64,
}

/// A worker's buffers, reused from state to state.
#[derive(Default)]
struct Scratch {
    /// The build these buffers serve (`seen` is reset for another).
    owner: u64,
    /// Per DFA state, the number of the last walk that recorded it.
    seen: Vec<u32>,
    walk: u32,
    ends: Vec<u32>,
    stack: Vec<u32>,
    product: ProductScratch,
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
}

/// Sets each allowed token's bit and records, once, each state a token leads to.
struct EndSink<'a> {
    mask: &'a mut [u32],
    /// Record where tokens end (not needed where successors come off the DFA row).
    record: bool,
    seen: &'a mut [u32],
    walk: u32,
    shift: u32,
    ends: &'a mut Vec<u32>,
}

impl Sink for EndSink<'_> {
    #[inline(always)]
    fn token(&mut self, tok: u32, next: u32) {
        self.mask[(tok >> 5) as usize] |= 1 << (tok & 31);
        if !self.record {
            return;
        }
        let seen = &mut self.seen[(next >> self.shift) as usize];
        if *seen != self.walk {
            *seen = self.walk;
            self.ends.push(next);
        }
    }
}

impl Ctx<'_> {
    /// The mask of `row` and the rows its tokens lead to (see the module doc).
    fn state(&self, row: u32, accepting: bool) -> StateOut {
        SCRATCH.with(|s| {
            let s = &mut *s.borrow_mut();
            if s.owner != self.build || s.seen.len() < self.table.num_states() {
                s.seen.clear();
                s.seen.resize(self.table.num_states(), 0);
                s.walk = 0;
                s.owner = self.build;
            }
            s.walk = s.walk.wrapping_add(1);
            if s.walk == 0 {
                s.seen.fill(0);
                s.walk = 1;
            }
            s.ends.clear();
            self.state_with(row, accepting, s)
        })
    }

    /// The live rows one byte leads `row` to. With a byte-complete vocabulary these are
    /// the state's successors in the token automaton, as the naive index finds them: every
    /// live byte string is a sequence of allowed one-byte tokens, so every DFA state is a
    /// token-level state, and each is reached from the start by some path of single bytes.
    fn successors(&self, row: u32) -> Vec<u32> {
        let t = self.table;
        let r = row as usize;
        t.table[r..r + t.n_classes]
            .iter()
            .copied()
            .filter(|&n| n != DEAD)
            .collect()
    }

    fn state_with(&self, row: u32, accepting: bool, s: &mut Scratch) -> StateOut {
        let p = self.p;
        let mut fz = Frozen(self.table);
        let mut slice_ends: Vec<(u8, u32)> = Vec::new();
        // Deciding a slice of unbounded strings can take a search as deep as the state's
        // own bound (a `maxLength` of thousands): such slices are walked instead.
        let (family, ignore) = (&p.family, p.family.unbounded);
        // Where every byte is a token, a state's successors are its DFA row's (see
        // `successors`): a slice is taken whole even when its tokens end in many states.
        let ends_wanted = (!p.byte_complete).then_some(&mut slice_ends);
        let verdict = classify(
            &mut fz,
            family,
            &self.joint,
            row,
            ignore,
            ends_wanted,
            &mut s.product,
        );
        let mut mask = vec![0u32; self.words];
        let mut sink = EndSink {
            mask: &mut mask,
            record: !p.byte_complete,
            seen: &mut s.seen,
            walk: s.walk,
            shift: self.table.shift,
            ends: &mut s.ends,
        };
        let mut work = verdict.pairs as u64;
        let n = p.slices.len();
        let (all, none) = (verdict.all & low_bits(n), verdict.none & low_bits(n));
        if all == 0 {
            work += walk(&mut fz, &p.full, row, &mut sink, &mut s.stack);
        } else {
            let lead = (!all).trailing_zeros().min(n as u32) as usize;
            if lead > 0 {
                copy_mask(sink.mask, &p.slices[lead - 1].prefix_mask);
            }
            for (k, slice) in p.slices.iter().enumerate() {
                if all >> k & 1 == 1 {
                    if k >= lead {
                        for (m, s) in sink.mask.iter_mut().zip(&slice.mask) {
                            *m |= s;
                        }
                    }
                } else if none >> k & 1 == 0 {
                    work += walk(&mut fz, &slice.trie, row, &mut sink, &mut s.stack);
                }
            }
            work += walk(&mut fz, &p.rest, row, &mut sink, &mut s.stack);
        }
        let mut ends = if p.byte_complete {
            self.successors(row)
        } else {
            s.ends.clone()
        };
        ends.extend(slice_ends.iter().map(|e| e.1));
        ends.sort_unstable();
        ends.dedup();
        if accepting {
            set_bit(&mut mask, self.eos);
        }
        let hash = mask_hash(&mask);
        StateOut {
            mask,
            hash,
            ends,
            work,
            hits: all.count_ones() as u64,
            skips: (none & !all).count_ones() as u64,
        }
    }
}
