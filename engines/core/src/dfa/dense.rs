//! The byte-level automaton every index is built from.
//!
//! A regex is compiled by `regex-automata` into a dense DFA with *all-matches* semantics
//! (every alternative counts, no leftmost-first preference) and an anchored start. We then
//! copy it into [`ByteDfa`], a plain table that holds only *live* states, those from which
//! a full match is still reachable; every transition into a non-live state becomes
//! [`DEAD`]. Acceptance is read through the end-of-input transition, because
//! `regex-automata` reports a match one byte late: state `s` accepts iff the text read so
//! far is a full match.
//!
//! The byte classes are recomputed on the pruned table: two bytes share a class iff they
//! lead every live state to the same place. This is the coarsest partition for the
//! language, and all bytes no live transition uses fall into one *dead class*.

use regex_automata::dfa::{dense, Automaton, StartKind};
use regex_automata::nfa::thompson::{self, WhichCaptures};
use regex_automata::util::start;
use regex_automata::{Anchored, MatchKind};
use regex_syntax::hir::Hir;
use rustc_hash::FxHashMap;

use crate::error::Error;
use crate::util::syntax::parse;
use crate::util::table::{DfaTable, DEAD};

/// Guard against regexes whose determinization would exhaust memory.
const SIZE_LIMIT: usize = 4 << 30;

/// A pruned, class-compressed DFA. State 0 is the start state.
#[derive(Clone, Debug)]
pub struct ByteDfa {
    classes: [u8; 256],
    n_classes: usize,
    dead_class: Option<u8>,
    table: Vec<u32>,
    accepting: Vec<bool>,
    /// Per class: how many bytes it holds, and its smallest byte.
    class_size: Vec<u16>,
    class_rep: Vec<u8>,
}

impl ByteDfa {
    pub fn from_regex(pattern: &str) -> Result<Self, Error> {
        Self::from_hir(&parse(pattern)?, false)
    }

    /// `minimize` runs Hopcroft's algorithm on the pruned DFA: fewer states to walk for a
    /// build cost (O(k n log n)) that is small next to a walk over the vocabulary.
    pub fn from_hir(hir: &Hir, minimize: bool) -> Result<Self, Error> {
        Self::from_hir_limited(hir, minimize, SIZE_LIMIT)
    }

    /// As [`ByteDfa::from_hir`], with regex-automata's DFA and determinization limited
    /// to `dfa_bytes` (past it, [`Error::LimitExceeded`]).
    pub fn from_hir_limited(hir: &Hir, minimize: bool, dfa_bytes: usize) -> Result<Self, Error> {
        let nfa = thompson::Compiler::new()
            .configure(
                thompson::Config::new()
                    .utf8(false)
                    .which_captures(WhichCaptures::None)
                    .nfa_size_limit(Some(SIZE_LIMIT)),
            )
            .build_from_hir(hir)
            .map_err(|e| Error::from(&e))?;
        let dfa = dense::Builder::new()
            .configure(
                dense::Config::new()
                    .match_kind(MatchKind::All)
                    .start_kind(StartKind::Anchored)
                    .byte_classes(true)
                    .minimize(false)
                    .dfa_size_limit(Some(dfa_bytes))
                    .determinize_size_limit(Some(dfa_bytes)),
            )
            .build_from_nfa(&nfa)
            .map_err(|e| Error::from(&e))?;
        let live = Self::copy_live(&dfa);
        Ok(if minimize { live.minimized() } else { live })
    }

    /// Merge states no continuation can tell apart: Hopcroft's partition refinement
    /// (`hopcroft`), O(k n log n) on the pruned, class-compressed table. Blocks
    /// are numbered in order of their first state, so the start state stays 0.
    pub fn minimized(&self) -> ByteDfa {
        let n = self.num_states();
        let k = self.n_classes;
        let block = crate::dfa::hopcroft::coarsest_partition(&self.table, &self.accepting, k);
        let blocks = block.iter().map(|&b| b as usize + 1).max().unwrap_or(0);
        let mut renum = vec![DEAD; blocks];
        let mut rep = Vec::with_capacity(blocks);
        for (s, &b) in block.iter().enumerate().take(n) {
            let b = b as usize;
            if renum[b] == DEAD {
                renum[b] = rep.len() as u32;
                rep.push(s);
            }
        }
        let mut table = Vec::with_capacity(rep.len() * k);
        for &s in &rep {
            for &t in &self.table[s * k..(s + 1) * k] {
                table.push(if t == DEAD {
                    DEAD
                } else {
                    renum[block[t as usize] as usize]
                });
            }
        }
        let accepting = rep.iter().map(|&s| self.accepting[s]).collect();
        let mut out = self.clone();
        out.table = table;
        out.accepting = accepting;
        out
    }

    /// Copy the live part of `dfa` (states from which a full match is reachable), then
    /// merge the byte classes that no longer differ.
    fn copy_live(dfa: &dense::DFA<Vec<u32>>) -> Self {
        let reps: Vec<u8> = dfa
            .byte_classes()
            .representatives(0..=255)
            .filter_map(|u| u.as_u8())
            .collect();
        let (raw, accepting) = reachable_table(dfa, &reps);
        let mut column = [0u8; 256];
        for b in 0..=255u8 {
            column[b as usize] = dfa.byte_classes().get(b);
        }
        Self::from_raw(&raw, &accepting, reps.len(), &column)
    }

    /// The DFA of a complete table whose state 0 is the start: `raw[s * k + c]` is the
    /// successor of state `s` on column `c` (or [`DEAD`]), `column[b]` the column of byte
    /// `b`. Pruned to the states from which a match is reachable, columns no state tells
    /// apart merged into one class.
    pub(crate) fn from_raw(raw: &[u32], accepting: &[bool], k: usize, column: &[u8; 256]) -> Self {
        let live = live_states(raw, accepting, k);
        let (table, accepting) = keep_live(raw, accepting, &live, k);
        let merged = merge_columns(&table, accepting.len(), k);
        let n_classes = merged.n_classes;
        let mut classes = [0u8; 256];
        for b in 0..=255u8 {
            classes[b as usize] = merged.class_map[column[b as usize] as usize];
        }
        let mut class_size = vec![0u16; n_classes];
        let mut class_rep = vec![0u8; n_classes];
        for b in (0..=255u8).rev() {
            class_size[classes[b as usize] as usize] += 1;
            class_rep[classes[b as usize] as usize] = b;
        }
        ByteDfa {
            classes,
            n_classes,
            dead_class: merged.dead_class,
            table: merged.table,
            accepting,
            class_size,
            class_rep,
        }
    }

    pub fn num_states(&self) -> usize {
        self.accepting.len()
    }

    pub fn num_classes(&self) -> usize {
        self.n_classes
    }

    #[inline]
    pub fn class_of(&self, byte: u8) -> u8 {
        self.classes[byte as usize]
    }

    /// The byte -> class map, for walking class strings.
    pub fn classes(&self) -> &[u8; 256] {
        &self.classes
    }

    /// The flat transition table, `state * num_classes() + class`.
    pub fn table(&self) -> &[u32] {
        &self.table
    }

    #[inline]
    pub fn next(&self, state: u32, byte: u8) -> u32 {
        self.table[state as usize * self.n_classes + self.classes[byte as usize] as usize]
    }

    #[inline]
    pub fn next_class(&self, state: u32, class: u8) -> u32 {
        self.table[state as usize * self.n_classes + class as usize]
    }

    /// Follow `bytes` from `state`; `DEAD` as soon as no match is reachable.
    #[inline]
    pub fn walk(&self, mut state: u32, bytes: &[u8]) -> u32 {
        for &b in bytes {
            state = self.next(state, b);
            if state == DEAD {
                return DEAD;
            }
        }
        state
    }

    #[inline]
    pub fn is_accepting(&self, state: u32) -> bool {
        self.accepting[state as usize]
    }

    /// Bytes that no live transition uses: a token holding one is never allowed.
    pub fn dead_bytes(&self) -> [bool; 256] {
        let mut dead = [false; 256];
        if let Some(dc) = self.dead_class {
            for (d, &c) in dead.iter_mut().zip(&self.classes) {
                *d = c == dc;
            }
        }
        dead
    }

    pub fn memory_bytes(&self) -> usize {
        self.table.len() * 4 + self.accepting.len() + 256 + self.class_size.len() * 3
    }

    /// The forced run from `state`: the longest byte string every continuation starts
    /// with, stopping where two bytes are possible or the text so far is a full match
    /// (EOS is then a second choice). Returns the bytes and the state they lead to.
    pub fn forced_from(&self, mut state: u32, limit: usize) -> (Vec<u8>, u32) {
        let k = self.n_classes;
        let mut out = Vec::new();
        while out.len() < limit && !self.accepting[state as usize] {
            let row = &self.table[state as usize * k..(state as usize + 1) * k];
            let mut only = None;
            let mut live_bytes = 0;
            for (c, &next) in row.iter().enumerate() {
                if next != DEAD {
                    live_bytes += self.class_size[c] as usize;
                    only = Some(c);
                }
            }
            let Some(c) = only.filter(|_| live_bytes == 1) else {
                break;
            };
            out.push(self.class_rep[c]);
            state = row[c];
        }
        (out, state)
    }
}

/// Breadth-first copy of the part of `dfa` reachable from its anchored start, one column
/// per class of regex-automata's (`reps` holds a byte of each): the flat table, with the
/// dead and quit states as `DEAD`, and whether each state accepts.
fn reachable_table(dfa: &dense::DFA<Vec<u32>>, reps: &[u8]) -> (Vec<u32>, Vec<bool>) {
    let start = dfa
        .start_state(&start::Config::new().anchored(Anchored::Yes))
        .expect("anchored start state exists: the DFA was built with StartKind::Anchored");
    let mut ids = FxHashMap::default();
    let mut order = vec![start];
    ids.insert(start, 0u32);
    let mut raw: Vec<u32> = Vec::new();
    let mut i = 0;
    while i < order.len() {
        let sid = order[i];
        for &b in reps {
            let next = dfa.next_state(sid, b);
            if dfa.is_dead_state(next) || dfa.is_quit_state(next) {
                raw.push(DEAD);
                continue;
            }
            let id = *ids.entry(next).or_insert_with(|| {
                order.push(next);
                (order.len() - 1) as u32
            });
            raw.push(id);
        }
        i += 1;
    }
    let accepting = order
        .iter()
        .map(|&s| dfa.is_match_state(dfa.next_eoi_state(s)))
        .collect();
    (raw, accepting)
}

/// Live states of a `k`-column table: those that reach an accepting state (a search
/// backwards from the accepting ones).
fn live_states(raw: &[u32], accepting: &[bool], k: usize) -> Vec<bool> {
    let n = accepting.len();
    let mut rev: Vec<Vec<u32>> = vec![Vec::new(); n];
    for s in 0..n {
        for &t in &raw[s * k..(s + 1) * k] {
            if t != DEAD {
                rev[t as usize].push(s as u32);
            }
        }
    }
    let mut live = accepting.to_vec();
    let mut stack: Vec<u32> = (0..n as u32).filter(|&s| live[s as usize]).collect();
    while let Some(t) = stack.pop() {
        for &s in &rev[t as usize] {
            if !live[s as usize] {
                live[s as usize] = true;
                stack.push(s);
            }
        }
    }
    live
}

/// The table restricted to live states (plus the start, kept even when dead), renumbered
/// in order; transitions into other states become `DEAD`. Returns it and acceptance.
fn keep_live(raw: &[u32], accepting: &[bool], live: &[bool], k: usize) -> (Vec<u32>, Vec<bool>) {
    let n = accepting.len();
    let mut renum = vec![DEAD; n];
    let mut next_id = 0u32;
    for s in 0..n {
        if live[s] || s == 0 {
            renum[s] = next_id;
            next_id += 1;
        }
    }
    let m = next_id as usize;
    let mut table = vec![DEAD; m * k];
    let mut acc = vec![false; m];
    for s in 0..n {
        let ns = renum[s];
        if ns == DEAD {
            continue;
        }
        acc[ns as usize] = accepting[s];
        if !live[s] {
            continue; // the start of an empty language keeps no transitions
        }
        for c in 0..k {
            let t = raw[s * k + c];
            if t != DEAD && live[t as usize] {
                table[ns as usize * k + c] = renum[t as usize];
            }
        }
    }
    (table, acc)
}

/// A table whose identical columns were merged.
struct MergedColumns {
    /// Old column -> new class.
    class_map: Vec<u8>,
    n_classes: usize,
    /// The class whose column is all `DEAD`, if any.
    dead_class: Option<u8>,
    /// `state * n_classes + class`.
    table: Vec<u32>,
}

/// Coarsest byte classes of an `m`-state, `k`-column table: identical columns merge.
fn merge_columns(table: &[u32], m: usize, k: usize) -> MergedColumns {
    let mut column_ids: FxHashMap<Vec<u32>, u8> = FxHashMap::default();
    let mut class_map = vec![0u8; k];
    let mut dead_class = None;
    for (c, slot) in class_map.iter_mut().enumerate() {
        let col: Vec<u32> = (0..m).map(|s| table[s * k + c]).collect();
        let all_dead = col.iter().all(|&t| t == DEAD);
        let len = column_ids.len() as u8;
        let id = *column_ids.entry(col).or_insert(len);
        if all_dead {
            dead_class = Some(id);
        }
        *slot = id;
    }
    let n_classes = column_ids.len();
    let mut new_table = vec![DEAD; m * n_classes];
    for s in 0..m {
        for c in 0..k {
            new_table[s * n_classes + class_map[c] as usize] = table[s * k + c];
        }
    }
    MergedColumns {
        class_map,
        n_classes,
        dead_class,
        table: new_table,
    }
}

impl DfaTable {
    /// A complete table holding `dfa` (state `s` becomes row `s << shift`).
    pub fn from_byte_dfa(dfa: &ByteDfa) -> Self {
        let mut t = Self::empty(*dfa.classes(), dfa.num_classes());
        let stride = 1usize << t.shift;
        t.table = vec![DEAD; dfa.num_states() * stride];
        for s in 0..dfa.num_states() {
            for c in 0..dfa.num_classes() {
                let next = dfa.next_class(s as u32, c as u8);
                t.table[s * stride + c] = if next == DEAD { DEAD } else { next << t.shift };
            }
        }
        t.accepting = (0..dfa.num_states() as u32)
            .map(|s| dfa.is_accepting(s))
            .collect();
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full_match(dfa: &ByteDfa, text: &str) -> bool {
        let s = dfa.walk(0, text.as_bytes());
        s != DEAD && dfa.is_accepting(s)
    }

    #[test]
    fn all_alternatives_count() {
        let dfa = ByteDfa::from_regex("(a|ab)").unwrap();
        assert!(full_match(&dfa, "a"));
        assert!(full_match(&dfa, "ab"));
        assert!(!full_match(&dfa, "abb"));
    }

    #[test]
    fn acceptance_is_full_match_not_one_byte_late() {
        let dfa = ByteDfa::from_regex("ab").unwrap();
        assert!(!dfa.is_accepting(dfa.walk(0, b"a")));
        assert!(dfa.is_accepting(dfa.walk(0, b"ab")));
    }

    #[test]
    fn states_without_a_reachable_match_are_pruned() {
        let dfa = ByteDfa::from_regex("a[0-9]|b").unwrap();
        assert_eq!(dfa.walk(0, b"c"), DEAD);
        assert_ne!(dfa.walk(0, b"a"), DEAD);
        assert_eq!(dfa.walk(0, b"ba"), DEAD);
    }

    #[test]
    fn bytes_with_identical_columns_share_a_class() {
        let dfa = ByteDfa::from_regex("[a-z]+").unwrap();
        assert_eq!(dfa.class_of(b'a'), dfa.class_of(b'q'));
        assert_ne!(dfa.class_of(b'a'), dfa.class_of(b'0'));
        let dead = dfa.dead_bytes();
        assert!(dead[b'0' as usize] && !dead[b'z' as usize]);
    }

    #[test]
    fn forced_runs_stop_at_branches_and_full_matches() {
        let dfa = ByteDfa::from_regex(r"abc(d|e)f?").unwrap();
        assert_eq!(dfa.forced_from(0, 100).0, b"abc");
        let s = dfa.walk(0, b"abcd");
        assert_eq!(dfa.forced_from(s, 100).0, b""); // accepting: EOS competes with f
        let dfa = ByteDfa::from_regex(r"x(yz)?w").unwrap();
        assert_eq!(dfa.forced_from(0, 100).0, b"x");
        let dfa = ByteDfa::from_regex("é!").unwrap();
        assert_eq!(dfa.forced_from(0, 100).0, "é!".as_bytes());
        let dfa = ByteDfa::from_regex("[ab]c").unwrap();
        assert_eq!(dfa.forced_from(0, 100).0, b"");
        assert_eq!(dfa.forced_from(dfa.walk(0, b"a"), 100).0, b"c");
    }

    #[test]
    fn minimization_merges_equivalent_states_and_keeps_the_language() {
        let raw = ByteDfa::from_hir(&parse("(ab|cb)c|xbc").unwrap(), false).unwrap();
        let min = raw.minimized();
        assert!(min.num_states() < raw.num_states());
        assert_eq!(min.num_states(), 4);
        for text in ["abc", "cbc", "xbc", "ab", "abcc", "bc"] {
            let (a, b) = (raw.walk(0, text.as_bytes()), min.walk(0, text.as_bytes()));
            assert_eq!(a == DEAD, b == DEAD, "{text}");
            if a != DEAD {
                assert_eq!(raw.is_accepting(a), min.is_accepting(b), "{text}");
            }
        }
    }

    #[test]
    fn empty_language_has_a_lone_start() {
        let dfa = ByteDfa::from_regex("[a&&b]").unwrap();
        assert_eq!(dfa.num_states(), 1);
        assert!(!dfa.is_accepting(0));
        assert_eq!(dfa.walk(0, b"a"), DEAD);
    }

    #[test]
    fn patterns_matching_invalid_utf8_are_refused() {
        let err = ByteDfa::from_regex(r"(?-u:\xFF)").unwrap_err();
        assert!(matches!(err, Error::Unsupported(_)), "{err:?}");
        assert!(err.to_string().contains("invalid UTF-8"), "{err}");
    }

    #[test]
    fn invalid_regex_reports_the_parser_message() {
        let err = ByteDfa::from_regex("(").unwrap_err();
        assert!(matches!(err, Error::InvalidPattern(_)), "{err:?}");
        assert!(err.to_string().contains("unclosed group"), "{err}");
    }
}
