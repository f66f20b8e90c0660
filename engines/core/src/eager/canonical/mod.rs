//! The `canonical_literals` builder: TokensDFA over the class-string trie, with ghosts.
//!
//! Construction, stage by stage (each timed in [`Stats`]):
//! 1. the literal runs of the regex are replaced by ghost symbols (`literals`),
//!    and the muted regex becomes a minimized [`ByteDfa`] (size-limited);
//! 2. *dead bytes*: tokens holding a byte no live transition uses are dropped;
//! 3. *token classes* and the *prefix graph*: the [`ClassTrie`];
//! 4. a breadth-first search over token-level states, each chunk of the frontier walked in
//!    parallel (rayon) and numbered in a fixed order, so the result does not depend on
//!    threads; every trie node visited counts against the build's work budget;
//! 5. the *table*: each distinct mask stored once (bitsets hashed, then compared); the
//!    next state of a state is one default target plus the groups that go elsewhere.
//!
//! A token-level state is a set of DFA states: with ghosts a token can be read two ways at
//! once (its own bytes, or its ghost standing for part of a literal), and the set holds
//! both outcomes: a token is allowed if any member allows it, and EOS if any member
//! accepts. Ghosts need the class strings (a ghost is a class string with no real token),
//! which is why this mode keeps the class trie that exact mode no longer builds.
//!
//! Here: the stages and [`GroupNext`], the transitions it stores; `literals`: literal
//! muting and ghosts (stage 1); `classtrie`: the class-string trie (stage 3); `table`:
//! stage 5.

use std::time::Instant;

use rayon::prelude::*;
use regex_syntax::hir::Hir;
use rustc_hash::FxHashMap;

use crate::dfa::ByteDfa;
use crate::eager::build::{Built, Limits, Stats, CHUNK};
use crate::eager::canonical::classtrie::{ClassTrie, NONE};
use crate::eager::canonical::literals::{mute, Ghost, Muted};
use crate::error::Error;
use crate::util::table::DEAD;
use crate::vocab::Vocabulary;
use crate::walk::trie::TokenTrie;

mod classtrie;
mod literals;
mod table;
use table::table_stage;

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
    /// Trie nodes visited.
    work: u64,
}

/// Walk the class trie from DFA state `start`: every group whose class string keeps a
/// match reachable, with the state it leads to, in group order. Returns the nodes visited.
fn walk(trie: &ClassTrie, dfa: &ByteDfa, start: u32, out: &mut Vec<(u32, u32)>) -> u64 {
    let nodes = &trie.nodes;
    let table = dfa.table();
    let k = dfa.num_classes();
    let mut stack = vec![0u32; trie.max_depth + 1];
    stack[0] = start;
    let mut p = 1;
    let mut visited = 0u64;
    while p < nodes.len() {
        let n = nodes[p];
        visited += 1;
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
    visited
}

fn expand(members: &[u32], trie: &ClassTrie, dfa: &ByteDfa) -> Expansion {
    let mut pairs = Vec::new();
    let mut work = 0;
    for &d in members {
        work += walk(trie, dfa, d, &mut pairs);
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
    Expansion {
        rows,
        overrides,
        work,
    }
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

/// Build the canonical-literals index of `hir` (see the module doc).
pub(crate) fn build(
    hir: &Hir,
    vocab: &Vocabulary,
    limits: &Limits,
    stats: &mut Stats,
) -> Result<Built<GroupNext>, Error> {
    let vtrie = vocab.trie();
    let (dfa, muted) = dfa_stage(hir, vtrie, limits, stats)?;
    let (dead, ghosts) = dead_bytes_stage(&dfa, muted, stats);
    let trie = class_trie_stage(vtrie, &dfa, &dead, &ghosts, vocab, stats);
    let walked = parallel_stage(&trie, &dfa, limits, stats)?;
    let ghost_width = ghosts.first().map_or(0, |g| g.code.len());
    let ghost_text: FxHashMap<Vec<u8>, Vec<u8>> = ghosts
        .iter()
        .map(|g| (g.code.clone(), vocab.token(g.token_ids[0]).to_vec()))
        .collect();
    let table = table_stage(&walked, &trie, vocab, limits, stats)?;
    Ok(Built {
        accepting: walked.accepting,
        mask_of: table.mask_of,
        masks: table.masks,
        next: GroupNext {
            eos_id: vocab.eos_id(),
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
        },
    })
}

/// Transitions of the canonical index: per state a default target, the groups that go
/// elsewhere, and the tokens read through a ghost; and what forced runs need.
pub(crate) struct GroupNext {
    eos_id: u32,
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
}

impl GroupNext {
    /// The state after `token` from `s`, which the caller checked; `allowed` is the
    /// token's bit in the state's mask.
    pub fn next_state(&self, s: usize, token: u32, allowed: bool) -> Option<u32> {
        if token == self.eos_id {
            return None;
        }
        let over = &self.over[self.over_off[s] as usize..self.over_off[s + 1] as usize];
        if let Ok(i) = over.binary_search_by_key(&token, |p| p.0) {
            return Some(over[i].1);
        }
        if !allowed {
            return None;
        }
        let g = self.tok_group[token as usize];
        let exc = &self.exc[self.exc_off[s] as usize..self.exc_off[s + 1] as usize];
        match exc.binary_search_by_key(&g, |p| p.0) {
            Ok(i) => Some(exc[i].1),
            Err(_) => Some(self.default_next[s]),
        }
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

    pub fn memory_bytes(&self) -> usize {
        self.tok_group.len() * 4
            + self.default_next.len() * 4
            + (self.exc_off.len() + self.over_off.len()) * 4
            + (self.exc.len() + self.over.len()) * 8
            + self.dfa.memory_bytes()
            + self.members.len() * std::mem::size_of::<NextSet>()
    }
}

/// Stage 1, the DFA: the literals are muted, and the muted regex becomes a minimized
/// [`ByteDfa`]; the muting is returned for the next stage.
fn dfa_stage(
    hir: &Hir,
    vtrie: &TokenTrie,
    limits: &Limits,
    stats: &mut Stats,
) -> Result<(ByteDfa, Option<Muted>), Error> {
    // The parser only accepts patterns that match UTF-8 text, so ghosts are spelled with
    // bytes that valid UTF-8 never holds.
    let t = Instant::now();
    let muted = mute(hir, vtrie, &never_in_utf8());
    stats.mute_s = t.elapsed().as_secs_f64();

    let t = Instant::now();
    let dfa = ByteDfa::from_hir_limited(
        muted.as_ref().map_or(hir, |m| &m.hir),
        true,
        limits.dfa_bytes,
    )?;
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
fn parallel_stage(
    trie: &ClassTrie,
    dfa: &ByteDfa,
    limits: &Limits,
    stats: &mut Stats,
) -> Result<Walked, Error> {
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
            stats.work += e.work;
            limits.check_work(stats.work)?;
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
    Ok(Walked {
        sets: ids.sets,
        rows,
        overs,
        accepting,
    })
}

/// Bytes that occur in no valid UTF-8 text.
fn never_in_utf8() -> [bool; 256] {
    let mut never = [false; 256];
    for b in [0xC0, 0xC1].into_iter().chain(0xF5..=0xFF) {
        never[b as usize] = true;
    }
    never
}
