//! TokensDFA: the token-level automaton built from the class-string trie.
//!
//! Construction, stage by stage (each timed in [`Stats`]):
//! 1. the regex's [`ByteDfa`]; in `canonical_literals` mode the literal runs are first
//!    replaced by ghost symbols ([`crate::literals`]);
//! 2. *dead bytes*: tokens holding a byte no live transition uses are dropped;
//! 3. *token classes* and the *prefix graph*: the [`ClassTrie`];
//! 4. a breadth-first search over token-level states, each frontier walked in parallel
//!    (rayon) and numbered in a fixed order, so the result does not depend on threads;
//! 5. the *minimized table*: each distinct mask stored once; the next state of a state is
//!    one default target plus the groups that go elsewhere.
//!
//! A token-level state is a set of DFA states. In exact mode every set is a singleton,
//! since the DFA is deterministic. With ghosts a token can be read two ways at once (its
//! own bytes, or its ghost standing for part of a literal), and the set holds both
//! outcomes: a token is allowed if any member allows it, and EOS if any member accepts.

use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use rayon::prelude::*;
use regex_syntax::hir::Hir;
use rustc_hash::FxHashMap;

use crate::automaton::TokenAutomaton;
use crate::bitmask::{ones, set_bit, Mask};
use crate::classtrie::{ClassTrie, NONE};
use crate::dfa::{parse, ByteDfa, DEAD};
use crate::error::Error;
use crate::literals::{mute, Ghost, Muted};
use crate::trie::TokenTrie;
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
    pub vocab_prepare_s: f64,
    pub dfa_s: f64,
    pub mute_s: f64,
    pub classes_s: f64,
    pub walk_s: f64,
    pub masks_s: f64,
    pub total_s: f64,
}

pub struct Index {
    eos_id: u32,
    vocab_len: usize,
    words: usize,
    accepting: Vec<bool>,
    mask_of: Vec<u32>,
    masks: Vec<u32>,
    tok_group: Vec<u32>,
    /// Per state: where allowed tokens go unless an exception says otherwise.
    default_next: Vec<u32>,
    /// Per state, `(group, next)` for groups not going to the default, by group.
    exc_off: Vec<u32>,
    exc: Vec<(u32, u32)>,
    /// Per state, `(token, next)` for tokens read through a ghost, by token.
    over_off: Vec<u32>,
    over: Vec<(u32, u32)>,
    /// Kept for forced runs: the DFA, each state's members, and ghost code -> bytes.
    dfa: ByteDfa,
    members: Vec<NextSet>,
    ghost_text: FxHashMap<Vec<u8>, Vec<u8>>,
    ghost_width: usize,
    stats: Stats,
}

/// Next DFA states of one group or token from a token-level state.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum NextSet {
    One(u32),
    Many(Box<[u32]>),
}

impl NextSet {
    fn from_sorted(mut v: Vec<u32>) -> NextSet {
        v.dedup();
        if v.len() == 1 {
            NextSet::One(v[0])
        } else {
            NextSet::Many(v.into_boxed_slice())
        }
    }

    fn members(&self) -> &[u32] {
        match self {
            NextSet::One(d) => std::slice::from_ref(d),
            NextSet::Many(v) => v,
        }
    }

    fn union(&self, other: &NextSet) -> NextSet {
        let mut v: Vec<u32> = self
            .members()
            .iter()
            .chain(other.members())
            .copied()
            .collect();
        v.sort_unstable();
        NextSet::from_sorted(v)
    }
}

struct Expansion {
    rows: Vec<(u32, NextSet)>,
    overrides: Vec<(u32, NextSet)>,
}

/// Walk the class trie from DFA state `start`: every group whose class string keeps a
/// match reachable, with the state it leads to, in group order.
fn walk(trie: &ClassTrie, dfa: &ByteDfa, start: u32, out: &mut Vec<(u32, u32)>) {
    let nodes = &trie.nodes;
    let table = dfa.table();
    let k = dfa.num_classes();
    let mut stack = vec![0u32; trie.max_depth + 1];
    stack[0] = start;
    let mut p = 1;
    while p < nodes.len() {
        let n = nodes[p];
        let d = n.depth as usize;
        let next = table[stack[d - 1] as usize * k + n.class as usize];
        if next == DEAD {
            p += n.subtree as usize;
            continue;
        }
        stack[d] = next;
        if n.group != NONE {
            out.push((n.group, next));
        }
        p += 1;
    }
}

fn expand(members: &[u32], trie: &ClassTrie, dfa: &ByteDfa) -> Expansion {
    let mut pairs = Vec::new();
    for &d in members {
        walk(trie, dfa, d, &mut pairs);
    }
    if members.len() > 1 {
        pairs.sort_unstable();
        pairs.dedup();
    }
    let mut rows: Vec<(u32, NextSet)> = Vec::new();
    let mut i = 0;
    while i < pairs.len() {
        let g = pairs[i].0;
        let mut j = i + 1;
        while j < pairs.len() && pairs[j].0 == g {
            j += 1;
        }
        let set = if j == i + 1 {
            NextSet::One(pairs[i].1)
        } else {
            NextSet::from_sorted(pairs[i..j].iter().map(|p| p.1).collect())
        };
        rows.push((g, set));
        i = j;
    }
    let lookup = |g: u32| -> Option<&NextSet> {
        rows.binary_search_by_key(&g, |r| r.0)
            .ok()
            .map(|i| &rows[i].1)
    };
    let mut overrides = Vec::new();
    for &t in &trie.ghost_tokens {
        let (real, ghost) = (trie.tok_group[t as usize], trie.tok_ghost[t as usize]);
        if real == ghost {
            continue;
        }
        if let Some(via_ghost) = lookup(ghost) {
            let set = match lookup(real) {
                Some(via_bytes) => via_bytes.union(via_ghost),
                None => via_ghost.clone(),
            };
            overrides.push((t, set));
        }
    }
    Expansion { rows, overrides }
}

/// Token-level state numbering: singletons by DFA state, larger sets by hashing.
struct StateIds {
    single: Vec<u32>,
    many: FxHashMap<Box<[u32]>, u32>,
    sets: Vec<NextSet>,
}

impl StateIds {
    fn id(&mut self, set: &NextSet, frontier: &mut Vec<u32>) -> u32 {
        let fresh = self.sets.len() as u32;
        let slot = match set {
            NextSet::One(d) => &mut self.single[*d as usize],
            NextSet::Many(v) => self.many.entry(v.clone()).or_insert(NONE),
        };
        if *slot == NONE {
            *slot = fresh;
            self.sets.push(set.clone());
            frontier.push(fresh);
        }
        *slot
    }
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

/// Frontier states expanded at once: bounds the memory of walk results in flight.
const CHUNK: usize = 128;

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
        match threads {
            None => process_pool()?.install(|| Self::from_hir(&parse(pattern)?, vocab, mode)),
            Some(n) => rayon::ThreadPoolBuilder::new()
                .num_threads(n.max(1))
                .build()
                .map_err(|e| Error::Option(format!("cannot start {n} threads: {e}")))?
                .install(|| Self::from_hir(&parse(pattern)?, vocab, mode)),
        }
    }

    /// Build the index of a parsed regex, one stage after the other (see the module doc).
    pub fn from_hir(hir: &Hir, vocab: &Vocabulary, mode: Mode) -> Result<Index, Error> {
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

        let (dfa, muted) = dfa_stage(hir, vtrie, mode, &mut stats)?;
        let (dead, ghosts) = dead_bytes_stage(&dfa, muted, &mut stats);
        let trie = class_trie_stage(vtrie, &dfa, &dead, &ghosts, vocab, &mut stats);
        let walked = parallel_stage(&trie, &dfa, &mut stats);
        let ghost_width = ghosts.first().map_or(0, |g| g.code.len());
        let ghost_text: FxHashMap<Vec<u8>, Vec<u8>> = ghosts
            .iter()
            .map(|g| (g.code.clone(), vocab.token(g.token_ids[0]).to_vec()))
            .collect();
        let table = table_stage(&walked, &trie, vocab, &mut stats);
        stats.total_s = t_start.elapsed().as_secs_f64();

        Ok(Index {
            eos_id: vocab.eos_id(),
            vocab_len: vocab.len(),
            words: vocab.mask_words(),
            accepting: walked.accepting,
            mask_of: table.mask_of,
            masks: table.masks,
            tok_group: trie.tok_group,
            default_next: table.default_next,
            exc_off: table.exc_off,
            exc: table.exc,
            over_off: table.over_off,
            over: table.over,
            dfa,
            members: walked.sets,
            ghost_text,
            ghost_width,
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
    /// every continuation starts with, empty where EOS or two bytes are possible. For a
    /// state standing for several DFA states it is their longest common forced prefix;
    /// ghost codes are read back as the literal text they spell, and a run stops before a
    /// literal whose candidate ghosts differ (`cat|car` forces "ca" in exact mode only).
    pub fn forced_bytes(&self, state: u32) -> Vec<u8> {
        const LIMIT: usize = 1 << 16;
        let Some(set) = self.members.get(state as usize) else {
            return Vec::new();
        };
        let mut common: Option<Vec<u8>> = None;
        for &d in set.members() {
            let text = self.decode_ghosts(self.dfa.forced_from(d, LIMIT).0);
            common = Some(match common {
                None => text,
                Some(c) => {
                    let n = c.iter().zip(&text).take_while(|(a, b)| a == b).count();
                    c[..n].to_vec()
                }
            });
        }
        common.unwrap_or_default()
    }

    /// Replace whole ghost codes by their text; a code cut short ends the run before it.
    fn decode_ghosts(&self, raw: Vec<u8>) -> Vec<u8> {
        if self.ghost_width == 0 {
            return raw;
        }
        let marker = self.ghost_text.keys().next().map(|c| c[0]);
        let mut out = Vec::with_capacity(raw.len());
        let mut i = 0;
        while i < raw.len() {
            if Some(raw[i]) != marker {
                out.push(raw[i]);
                i += 1;
                continue;
            }
            match raw
                .get(i..i + self.ghost_width)
                .and_then(|c| self.ghost_text.get(c))
            {
                Some(text) => out.extend_from_slice(text),
                None => break,
            }
            i += self.ghost_width;
        }
        out
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
        let over = &self.over[self.over_off[s] as usize..self.over_off[s + 1] as usize];
        if let Ok(i) = over.binary_search_by_key(&token, |p| p.0) {
            return Some(over[i].1);
        }
        if self.mask(state)[(token / 32) as usize] & (1 << (token % 32)) == 0 {
            return None;
        }
        let g = self.tok_group[token as usize];
        let exc = &self.exc[self.exc_off[s] as usize..self.exc_off[s + 1] as usize];
        match exc.binary_search_by_key(&g, |p| p.0) {
            Ok(i) => Some(exc[i].1),
            Err(_) => Some(self.default_next[s]),
        }
    }

    fn vocab_len(&self) -> usize {
        self.vocab_len
    }

    fn memory_bytes(&self) -> usize {
        self.masks.len() * 4
            + self.mask_of.len() * 4
            + self.accepting.len()
            + self.tok_group.len() * 4
            + self.default_next.len() * 4
            + (self.exc_off.len() + self.over_off.len()) * 4
            + (self.exc.len() + self.over.len()) * 8
            + self.dfa.memory_bytes()
            + self.members.len() * std::mem::size_of::<NextSet>()
    }
}

/// Stage 1, the DFA: the regex's minimized [`ByteDfa`]. In canonical mode the literals
/// are muted first, and the muting is returned for the next stage.
fn dfa_stage(
    hir: &Hir,
    vtrie: &TokenTrie,
    mode: Mode,
    stats: &mut Stats,
) -> Result<(ByteDfa, Option<Muted>), Error> {
    // The parser only accepts patterns that match UTF-8 text, so ghosts are spelled with
    // bytes that valid UTF-8 never holds.
    let t = Instant::now();
    let muted = match mode {
        Mode::Exact => None,
        Mode::CanonicalLiterals => mute(hir, vtrie, &never_in_utf8()),
    };
    stats.mute_s = t.elapsed().as_secs_f64();

    let t = Instant::now();
    let dfa = ByteDfa::from_hir(muted.as_ref().map_or(hir, |m| &m.hir), true)?;
    stats.dfa_s = t.elapsed().as_secs_f64();
    stats.dfa_states = dfa.num_states();
    stats.byte_classes = dfa.num_classes();
    Ok((dfa, muted))
}

/// Stage 2, dead bytes: those no live transition uses, plus the bytes ghosts are spelled
/// with; a token holding one is dropped. Returns them with the ghosts.
fn dead_bytes_stage(
    dfa: &ByteDfa,
    muted: Option<Muted>,
    stats: &mut Stats,
) -> ([bool; 256], Vec<Ghost>) {
    let mut dead = dfa.dead_bytes();
    let mut ghosts: Vec<Ghost> = Vec::new();
    if let Some(m) = muted {
        // a real token holding a ghost byte could otherwise walk a ghost's path
        for (d, &g) in dead.iter_mut().zip(&m.ghost_bytes) {
            *d |= g;
        }
        stats.muted_literals = m.muted_literals;
        ghosts = m.ghosts;
    }
    stats.ghosts = ghosts.len();
    stats.dead_bytes = dead.iter().filter(|&&d| d).count();
    (dead, ghosts)
}

/// Stage 3, token classes and the prefix graph: the [`ClassTrie`] of the tokens' class
/// strings (ghosts included), without the tokens holding a dead byte.
fn class_trie_stage(
    vtrie: &TokenTrie,
    dfa: &ByteDfa,
    dead: &[bool; 256],
    ghosts: &[Ghost],
    vocab: &Vocabulary,
    stats: &mut Stats,
) -> ClassTrie {
    let t = Instant::now();
    let trie = ClassTrie::build(vtrie, dfa.classes(), dead, ghosts, vocab.len());
    stats.classes_s = t.elapsed().as_secs_f64();
    stats.class_trie_nodes = trie.nodes.len();
    stats.token_classes = trie.num_groups();
    stats.tokens_dropped = trie
        .tok_group
        .iter()
        .enumerate()
        .filter(|&(t, &g)| {
            g == NONE && !vocab.is_special(t as u32) && !vocab.token(t as u32).is_empty()
        })
        .count();
    trie
}

/// The token-level states found by the search, with each one's transitions.
struct Walked {
    /// Per state, its DFA states.
    sets: Vec<NextSet>,
    /// Per state, `(group, next state)` for every group allowed, by group.
    rows: Vec<Vec<(u32, u32)>>,
    /// Per state, `(token, next state)` for tokens read through a ghost, by token.
    overs: Vec<Vec<(u32, u32)>>,
    accepting: Vec<bool>,
}

/// Stage 4, parallel construction: a breadth-first search over token-level states from
/// the start, each chunk of the frontier walked in parallel and its results numbered in
/// order, so state numbers do not depend on the threads.
fn parallel_stage(trie: &ClassTrie, dfa: &ByteDfa, stats: &mut Stats) -> Walked {
    let t = Instant::now();
    let mut ids = StateIds {
        single: vec![NONE; dfa.num_states()],
        many: FxHashMap::default(),
        sets: Vec::new(),
    };
    let mut frontier = Vec::new();
    ids.id(&NextSet::One(0), &mut frontier);
    let mut rows: Vec<Vec<(u32, u32)>> = Vec::new();
    let mut overs: Vec<Vec<(u32, u32)>> = Vec::new();
    let mut pos = 0;
    while pos < ids.sets.len() {
        let end = (pos + CHUNK).min(ids.sets.len());
        let batch: Vec<NextSet> = ids.sets[pos..end].to_vec();
        let expanded: Vec<Expansion> = batch
            .par_iter()
            .map(|set| expand(set.members(), trie, dfa))
            .collect();
        for e in expanded {
            rows.push(
                e.rows
                    .iter()
                    .map(|(g, s)| (*g, ids.id(s, &mut frontier)))
                    .collect(),
            );
            overs.push(
                e.overrides
                    .iter()
                    .map(|(t, s)| (*t, ids.id(s, &mut frontier)))
                    .collect(),
            );
        }
        pos = end;
    }
    stats.walk_s = t.elapsed().as_secs_f64();
    let accepting = ids
        .sets
        .iter()
        .map(|s| s.members().iter().any(|&d| dfa.is_accepting(d)))
        .collect();
    Walked {
        sets: ids.sets,
        rows,
        overs,
        accepting,
    }
}

/// The stored form of the states' masks and transitions.
struct Table {
    mask_of: Vec<u32>,
    masks: Vec<u32>,
    default_next: Vec<u32>,
    exc_off: Vec<u32>,
    exc: Vec<(u32, u32)>,
    over_off: Vec<u32>,
    over: Vec<(u32, u32)>,
}

/// Stage 5, the minimized table: each distinct mask stored once, and the transitions of
/// a state as one default target plus the groups and ghost tokens that go elsewhere.
fn table_stage(walked: &Walked, trie: &ClassTrie, vocab: &Vocabulary, stats: &mut Stats) -> Table {
    let t = Instant::now();
    let (mask_of, masks, distinct) = distinct_masks(walked, trie, vocab);
    let mut default_next = Vec::with_capacity(walked.rows.len());
    let mut exc_off = vec![0u32];
    let mut exc = Vec::new();
    for r in &walked.rows {
        let d = most_common_target(r);
        default_next.push(d);
        exc.extend(r.iter().filter(|p| p.1 != d));
        exc_off.push(exc.len() as u32);
    }
    let mut over_off = vec![0u32];
    let mut over = Vec::new();
    for o in &walked.overs {
        over.extend_from_slice(o);
        over_off.push(over.len() as u32);
    }
    stats.masks_s = t.elapsed().as_secs_f64();
    stats.states = walked.rows.len();
    stats.distinct_masks = distinct;
    stats.transitions_stored = exc.len() + over.len() + default_next.len();
    Table {
        mask_of,
        masks,
        default_next,
        exc_off,
        exc,
        over_off,
        over,
    }
}

/// Number the states' masks (a mask is its allowed groups and whether EOS is allowed)
/// and build each distinct one in parallel. Returns each state's mask number, the masks
/// laid end to end, and how many there are.
fn distinct_masks(
    walked: &Walked,
    trie: &ClassTrie,
    vocab: &Vocabulary,
) -> (Vec<u32>, Vec<u32>, usize) {
    let words = vocab.mask_words();
    let mut mask_ids: FxHashMap<(Vec<u32>, bool), u32> = FxHashMap::default();
    let mut keys: Vec<(Vec<u32>, bool)> = Vec::new();
    let mask_of: Vec<u32> = walked
        .rows
        .iter()
        .zip(&walked.accepting)
        .map(|(r, &acc)| {
            let key = (r.iter().map(|p| p.0).collect::<Vec<u32>>(), acc);
            let n = mask_ids.len() as u32;
            *mask_ids.entry(key.clone()).or_insert_with(|| {
                keys.push(key);
                n
            })
        })
        .collect();
    let eos = vocab.eos_id();
    let built: Vec<Vec<u32>> = keys
        .par_iter()
        .map(|(groups, acc)| {
            let mut m = vec![0u32; words];
            for &g in groups {
                for &tok in trie.group(g) {
                    set_bit(&mut m, tok);
                }
            }
            if *acc {
                set_bit(&mut m, eos);
            }
            m
        })
        .collect();
    (mask_of, built.concat(), keys.len())
}

fn most_common_target(row: &[(u32, u32)]) -> u32 {
    let mut counts: FxHashMap<u32, usize> = FxHashMap::default();
    for p in row {
        *counts.entry(p.1).or_default() += 1;
    }
    counts
        .into_iter()
        .max_by_key(|&(next, n)| (n, std::cmp::Reverse(next)))
        .map(|(next, _)| next)
        .unwrap_or(NONE)
}

/// Bytes that occur in no valid UTF-8 text.
fn never_in_utf8() -> [bool; 256] {
    let mut never = [false; 256];
    for b in [0xC0, 0xC1].into_iter().chain(0xF5..=0xFF) {
        never[b as usize] = true;
    }
    never
}
