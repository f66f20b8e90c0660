//! A byte DFA determinized on demand, in the table layout every mask walk reads.
//!
//! [`DfaTable`] is a flat transition table with *premultiplied* state ids: state `s` is
//! the row offset `s * stride` (`stride` a power of two at least the number of byte
//! classes), so one step is `table[row + class[byte]]` with no multiplication. An entry
//! is a row, [`DEAD`] (no full match is reachable any more) or [`UNKNOWN`](crate::util::table::UNKNOWN) (not computed
//! yet).
//!
//! [`LazyDfa`] fills the table as walks ask for transitions, by subset construction over
//! the pattern's NFA ([`crate::nfa`]): its states are epsilon-closed sets of NFA states,
//! hash-consed, its classes the bytes no NFA state tells apart. A set is live iff it is not
//! empty and accepts iff it holds the match state (see [`crate::nfa`] for why). So
//! construction is the parse ([`crate::nfa::ast`]), the NFA compilation (both linear in
//! the pattern) and the start state's closure; nothing is determinized up front, and a
//! multi-megabyte regex costs only the states the walks reach.
//!
//! Look-around assertions (`^`, `$`, ASCII word boundaries) have no NFA state here: a
//! pattern with any is determinized up front with [`ByteDfa`] (live-pruned, exact) and
//! copied into a complete table instead. That determinization is bounded by
//! [`FALLBACK_DFA_BYTES`] (about 4 s on a 1.4 MB schema regex): past it the index is not
//! built ([`Error::LimitExceeded`]), so such a pattern fails fast instead of stalling.
//!
//! Cost of a miss: one NFA subset step (see [`crate::nfa`]); the table grows by one row
//! (`stride` words) per new state.
//!
//! The eager index determinizes with the same machinery, run to completion
//! ([`minimal_dfa`]): on the hash-consed NFA, far faster than a Thompson NFA's subset
//! construction on the repetitive regexes JSON schemas give.

use std::sync::Arc;
use std::time::Instant;

use regex_syntax::hir::Hir;

use crate::dfa::recognizer::{start_table, Recognizer, Source};
use crate::dfa::runs::stepped_run_bounds;
use crate::dfa::ByteDfa;
use crate::error::Error;
use crate::nfa::ast::{fast_parse, from_hir, Ast};
use crate::nfa::{ByteClasses, Determinizer, Forest, Nfa};
use crate::util::syntax::parse;
use crate::util::table::{DfaTable, Stepper, DEAD};
use crate::util::ticks::{seconds_per_tick, ticks};
use crate::walk::survival::Survival;

/// Bytes regex-automata may use to determinize a pattern with look-around up front (see
/// the module doc): 32 MiB, a few seconds; the eager index's default is 256 MiB.
pub const FALLBACK_DFA_BYTES: usize = 32 << 20;

/// The DFA built on demand (see the module doc).
#[derive(Clone)]
pub struct LazyDfa {
    table: DfaTable,
    pub(crate) det: Option<Source>,
    /// Per class: how many bytes it holds, and its smallest byte.
    class_size: Vec<u16>,
    class_rep: Vec<u8>,
    /// Transitions computed, and the ticks ([`crate::util::ticks`]) they took.
    pub misses: u64,
    det_ticks: u64,
    pub build: Build,
}

impl LazyDfa {
    /// Seconds spent computing transitions since construction.
    pub fn determinize_s(&self) -> f64 {
        self.det_ticks as f64 * seconds_per_tick()
    }
}

/// How a [`LazyDfa`] was built.
#[derive(Clone, Copy, Debug, Default)]
pub struct Build {
    /// Parsed by the fast road (else `regex-syntax`'s, see [`crate::nfa::ast`]).
    pub fast_parse: bool,
    pub parse_ns: u64,
    /// NFA compilation and the start state.
    pub compile_ns: u64,
}

impl Stepper for LazyDfa {
    #[inline]
    fn dfa(&self) -> &DfaTable {
        &self.table
    }

    fn resolve(&mut self, row: u32, class: u8) -> u32 {
        let det = self
            .det
            .as_mut()
            .expect("only a lazily built table has UNKNOWN entries");
        let t0 = ticks();
        let byte = self.class_rep[class as usize];
        let next = det.next(&mut self.table, row, byte);
        self.table.table[row as usize + class as usize] = next;
        self.misses += 1;
        self.det_ticks += ticks().wrapping_sub(t0);
        next
    }
}

impl LazyDfa {
    /// The start state (row 0) and nothing else, or, for a pattern with look-around
    /// assertions, the whole DFA (see the module doc).
    pub fn new(pattern: &str) -> Result<Self, Error> {
        let t0 = Instant::now();
        let mut d = match fast_parse(pattern) {
            Ok(ast) => {
                let mut d = Self::from_ast(ast)?;
                d.build.fast_parse = true;
                d
            }
            Err(_) => Self::from_hir(&parse(pattern)?)?,
        };
        d.build.parse_ns = (Instant::now() - t0).as_nanos() as u64 - d.build.compile_ns;
        Ok(d)
    }

    /// As [`LazyDfa::new`], from a parsed pattern: its tree's start state, or, with
    /// look-around, the whole DFA.
    pub fn from_hir(hir: &Hir) -> Result<Self, Error> {
        match from_hir(hir) {
            Ok(ast) => Self::from_ast(ast),
            Err(_) => {
                let dfa = ByteDfa::from_hir_limited(hir, true, FALLBACK_DFA_BYTES)?;
                Ok(Self::with_table(DfaTable::from_byte_dfa(&dfa), None))
            }
        }
    }

    /// The start state of the tree's automaton (no look-around in a tree).
    pub fn from_ast(ast: Ast) -> Result<Self, Error> {
        let t1 = Instant::now();
        Self::from_nfa(Nfa::compile(Arc::new(ast))?, t1)
    }

    /// [`LazyDfa::from_ast`] of the tree at `root` of a forest (a grammar's terminal),
    /// with its byte classes ([`Forest::byte_classes`]).
    pub fn from_forest(forest: &Forest, root: u32, classes: ByteClasses) -> Result<Self, Error> {
        let t1 = Instant::now();
        Self::from_nfa(Nfa::compile_in(forest, root, classes)?, t1)
    }

    fn from_nfa(nfa: Nfa, t1: Instant) -> Result<Self, Error> {
        let (classes, n_classes) = nfa.byte_classes();
        let mut table = DfaTable::empty(classes, n_classes);
        let det = Determinizer::new(nfa, &mut table)?;
        let mut d = Self::with_table(table, Some(Source::Nfa(Box::new(det))));
        d.build = Build {
            fast_parse: false,
            parse_ns: 0,
            compile_ns: t1.elapsed().as_nanos() as u64,
        };
        Ok(d)
    }

    /// The start state of a recognizer's automaton ([`Recognizer`]), computed on demand.
    pub fn from_recognizer(recognizer: Box<dyn Recognizer>) -> Self {
        let t0 = Instant::now();
        let table = start_table(recognizer.as_ref());
        let mut d = Self::with_table(table, Some(Source::Other(recognizer)));
        d.build.compile_ns = t0.elapsed().as_nanos() as u64;
        d
    }

    fn with_table(table: DfaTable, det: Option<Source>) -> Self {
        let mut class_size = vec![0u16; table.n_classes];
        let mut class_rep = vec![0u8; table.n_classes];
        for b in (0..=255u8).rev() {
            let c = table.classes[b as usize] as usize;
            class_size[c] += 1;
            class_rep[c] = b;
        }
        LazyDfa {
            table,
            det,
            class_size,
            class_rep,
            misses: 0,
            det_ticks: 0,
            build: Build::default(),
        }
    }

    /// Whether states are computed on demand (false: determinized up front).
    pub fn is_lazy(&self) -> bool {
        self.det.is_some()
    }

    /// Whether another front end's automaton computes the states (a recognizer).
    pub fn is_recognizer(&self) -> bool {
        matches!(self.det, Some(Source::Other(_)))
    }

    /// Bounds on runs of characters of `class` from `row` ([`Determinizer::run_bounds`],
    /// or for a recognizer's table stepped, `crate::dfa::runs`); `None` for a table
    /// determinized up front.
    pub fn run_bounds(&mut self, row: u32, class: &[(u32, u32)], cap: u32) -> Option<(u32, u32)> {
        let state = self.table.state(row);
        match self.det.as_mut()? {
            Source::Other(_) => Some(self.recognizer_bounds(row, class, cap, true)),
            det => det.run_bounds(state, class, cap),
        }
    }

    /// A recognizer's run bounds: its own lower bound ([`Recognizer::run_lower`]), and
    /// where that falls short of `cap`, the table stepped (`crate::dfa::runs`, making
    /// states only when `fresh`).
    fn recognizer_bounds(
        &mut self,
        row: u32,
        class: &[(u32, u32)],
        cap: u32,
        fresh: bool,
    ) -> (u32, u32) {
        let state = self.table.state(row);
        let own = (self.det.as_mut())
            .and_then(|d| d.recognizer_lower(state, class, cap))
            .map_or(0, |l| l.min(cap));
        if own >= cap {
            return (cap, cap); // every run asked about lives: no bound needed
        }
        if own == 0 {
            // Stepping found no longer lower bound there (5,997 searches on MaskBench's
            // and the grammar corpus's paths), and an upper one takes no slice whole.
            return (0, cap);
        }
        let (lower, upper) = stepped_run_bounds(self, LazyDfa::nfa_states, row, class, cap, fresh);
        (lower.max(own), upper.max(lower.max(own)))
    }

    /// The lower run bound alone ([`Determinizer::run_lower`]); `None` for a table
    /// determinized up front.
    pub fn run_lower(&mut self, row: u32, class: &[(u32, u32)], cap: u32) -> Option<u32> {
        let state = self.table.state(row);
        match self.det.as_mut()? {
            Source::Other(_) => Some(self.recognizer_bounds(row, class, cap, false).0),
            det => det.run_lower(state, class, cap),
        }
    }

    /// Strings the state at `row` surely survives ([`crate::walk::survival`]): a
    /// recognizer's word; None for a regex, or where the recognizer wants no skips.
    pub fn survivals(&mut self, row: u32) -> Option<Vec<Survival>> {
        let state = self.table.state(row);
        self.det.as_mut().and_then(|d| d.survivals(state))
    }

    /// The NFA's states, or a recognizer's.
    pub fn nfa_states(&self) -> usize {
        self.det.as_ref().map_or(0, Source::states)
    }

    /// See [`crate::lazy::LazyOptions::walk_limit`].
    pub fn set_walk_limit(&mut self, limit: usize) {
        if let Some(det) = self.det.as_mut() {
            det.set_limit(limit);
        }
    }

    /// Whether determinizing passed the NFA's walk limit ([`crate::nfa::WALK_STATE_LIMIT`]),
    /// or a recognizer its own: transitions computed since may be wrong.
    pub fn exceeded(&self) -> bool {
        self.det.as_ref().is_some_and(Source::exceeded)
    }

    /// Follow `bytes` from `row`; `DEAD` as soon as no match is reachable.
    pub fn walk(&mut self, mut row: u32, bytes: &[u8]) -> u32 {
        for &b in bytes {
            row = self.step(row, self.table.classes[b as usize]);
            if row == DEAD {
                return DEAD;
            }
        }
        row
    }

    /// The forced run from `row` (as [`ByteDfa::forced_from`]): the longest byte string
    /// every continuation starts with, stopping at a full match or a second choice.
    pub fn forced_from(&mut self, mut row: u32, limit: usize) -> Vec<u8> {
        let mut out = Vec::new();
        while out.len() < limit && !self.table.is_accepting(row) {
            let mut only = None;
            let mut live_bytes = 0;
            for c in 0..self.table.n_classes {
                let next = self.step(row, c as u8);
                if next != DEAD {
                    live_bytes += self.class_size[c] as usize;
                    only = Some((c, next));
                }
            }
            let Some((c, next)) = only.filter(|_| live_bytes == 1) else {
                break;
            };
            out.push(self.class_rep[c]);
            row = next;
        }
        out
    }

    pub fn memory_bytes(&self) -> usize {
        self.table.memory_bytes() + self.det.as_ref().map_or(0, Source::memory_bytes)
    }

    /// Compute every transition of every reachable state, within `bytes` of memory (the
    /// table and the determinizer's sets and NFA together).
    fn complete(&mut self, bytes: usize) -> Result<(), Error> {
        let (stride, k) = (self.table.stride(), self.table.n_classes);
        let mut row = 0;
        while row < self.table.table.len() {
            for class in 0..k {
                self.step(row as u32, class as u8);
            }
            row += stride;
            // Checked every 1,024 states: the NFA part of the sum walks its classes.
            if (row / stride) % 1024 == 0 && self.memory_bytes() > bytes {
                return Err(Error::LimitExceeded(format!(
                    "determinizing the pattern passed {} MiB at {} states",
                    bytes >> 20,
                    row / stride
                )));
            }
        }
        Ok(())
    }
}

/// The minimized DFA of a pattern, for the eager index: subset construction over the
/// lazy index's NFA run to completion ([`LazyDfa`]), then Hopcroft ([`ByteDfa::minimized`]).
/// The tree and the NFA are hash-consed ([`crate::nfa::ast`], [`crate::nfa`]), so the
/// copies of a repeated piece (a JSON schema's regex writes each optional property's
/// value once per possible first property before it) share NFA states and give one DFA
/// state, not one per copy: the determinized DFA is near its minimal size, where a
/// Thompson NFA's is up to 60 times larger (156,913 states minimized to 2,579 on
/// schemastore's setuptools schema). A pattern with look-around goes through
/// regex-automata ([`ByteDfa::from_hir_limited`]). `bytes` bounds determinization either
/// way.
pub fn minimal_dfa(pattern: &str, bytes: usize) -> Result<ByteDfa, Error> {
    match fast_parse(pattern) {
        Ok(ast) => minimal_dfa_of_ast(ast, bytes),
        Err(_) => minimal_dfa_of_hir(&parse(pattern)?, bytes),
    }
}

/// [`minimal_dfa`] of a parsed pattern.
pub fn minimal_dfa_of_hir(hir: &Hir, bytes: usize) -> Result<ByteDfa, Error> {
    match from_hir(hir) {
        Ok(ast) => minimal_dfa_of_ast(ast, bytes),
        Err(_) => ByteDfa::from_hir_limited(hir, true, bytes),
    }
}

fn minimal_dfa_of_ast(ast: Ast, bytes: usize) -> Result<ByteDfa, Error> {
    let mut d = LazyDfa::from_ast(ast)?;
    d.complete(bytes)?;
    let t = &d.table;
    let shift = t.shift;
    let mut raw = Vec::with_capacity(t.num_states() * t.n_classes);
    for row in t.table.chunks(t.stride()) {
        raw.extend(
            row[..t.n_classes]
                .iter()
                .map(|&r| if r == DEAD { DEAD } else { r >> shift }),
        );
    }
    Ok(ByteDfa::from_raw(&raw, &t.accepting, t.n_classes, &t.classes).minimized())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lazy(p: &str) -> LazyDfa {
        LazyDfa::new(p).unwrap()
    }

    fn full_match(d: &mut LazyDfa, text: &str) -> bool {
        let r = d.walk(0, text.as_bytes());
        r != DEAD && d.dfa().is_accepting(r)
    }

    #[test]
    fn agrees_with_the_eager_dfa_on_prefixes() {
        for p in [
            "(a|ab)c*",
            "[a&&b]",
            "a[a&&b]|b",
            "é+x?",
            r"\d{2,3}",
            "(ab|cd)+",
            "",
        ] {
            let mut d = lazy(p);
            assert!(d.is_lazy(), "{p}");
            let e = ByteDfa::from_regex(p).unwrap();
            for text in [
                "", "a", "ab", "abc", "b", "é", "éx", "12", "1234", "abcd", "x",
            ] {
                let (lr, er) = (d.walk(0, text.as_bytes()), e.walk(0, text.as_bytes()));
                assert_eq!(lr == DEAD, er == DEAD, "{p} {text}");
                if er != DEAD {
                    assert_eq!(d.dfa().is_accepting(lr), e.is_accepting(er), "{p} {text}");
                }
            }
        }
    }

    #[test]
    fn empty_language_start_accepts_nothing() {
        let mut d = lazy("[a&&b]");
        assert!(!d.dfa().is_accepting(0));
        assert_eq!(d.walk(0, b"a"), DEAD);
        assert!(!full_match(&mut d, ""));
    }

    #[test]
    fn look_around_falls_back_to_a_complete_table() {
        let mut d = lazy(r"^ab$");
        assert!(!d.is_lazy());
        assert!(full_match(&mut d, "ab"));
        assert!(!full_match(&mut d, "a"));
        let mut d = lazy(r"a$b|c");
        assert_eq!(d.walk(0, b"a"), DEAD);
    }

    #[test]
    fn forced_runs_stop_at_branches_and_full_matches() {
        let mut d = lazy(r"abc(d|e)f?");
        assert_eq!(d.forced_from(0, 100), b"abc");
        let mut d = lazy("é!");
        assert_eq!(d.forced_from(0, 100), "é!".as_bytes());
    }

    #[test]
    fn minimal_dfa_equals_the_thompson_dfa_minimized() {
        // Plain and odd patterns, both parse roads, look-around (regex-automata's road),
        // the empty language, and a JSON object's optional properties in schema order.
        let object = r#"\{("a":[0-9]+(,"b":(true|false))?(,"c":"[a-z]*")?|"b":(true|false)(,"c":"[a-z]*")?|"c":"[a-z]*")?\}"#;
        for p in [
            "(a|ab)c*",
            r"\d{2,3}x{0,7}",
            "(ab|cd)+é",
            r"(?u)\w+@\w+",
            r"^ab$|c",
            "[a&&b]",
            "",
            object,
        ] {
            let ours = minimal_dfa(p, 1 << 26).unwrap();
            let theirs = ByteDfa::from_regex(p).unwrap().minimized();
            assert_eq!(ours.num_states(), theirs.num_states(), "{p}");
            for text in [
                "",
                "a",
                "abc",
                "cdé",
                "12xx",
                "ab",
                "c",
                "x@y",
                "{}",
                r#"{"b":true}"#,
                r#"{"a":1,"c":"x"}"#,
                r#"{"c":"x","a":1}"#,
                r#"{"a":1,"b":false,"c":""}"#,
            ] {
                let (o, t) = (
                    ours.walk(0, text.as_bytes()),
                    theirs.walk(0, text.as_bytes()),
                );
                assert_eq!(o == DEAD, t == DEAD, "{p} {text}");
                if t != DEAD {
                    assert_eq!(ours.is_accepting(o), theirs.is_accepting(t), "{p} {text}");
                }
            }
        }
        // The copies of each optional property share NFA states: subset construction
        // makes no more states than the minimal DFA has (regex-automata's makes more).
        let mut d = LazyDfa::new(object).unwrap();
        d.complete(1 << 26).unwrap();
        let minimal = ByteDfa::from_regex(object)
            .unwrap()
            .minimized()
            .num_states();
        assert!(
            d.dfa().num_states() <= minimal + 1,
            "{}",
            d.dfa().num_states()
        );
        assert!(ByteDfa::from_regex(object).unwrap().num_states() > minimal + 1);
    }

    #[test]
    fn states_are_built_only_when_asked() {
        let mut d = lazy(r"[a-z]{1,200}");
        assert_eq!(d.dfa().num_states(), 1);
        d.walk(0, b"abc");
        assert_eq!(d.dfa().num_states(), 4);
    }
}
