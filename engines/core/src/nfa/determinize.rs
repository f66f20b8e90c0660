//! Subset construction over the NFA, one transition at a time, and run bounds.

use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::error::Error;
use crate::nfa::classauto::{DONE, NONE};
use crate::util::table::DfaTable;
use crate::util::table::DEAD;

use super::{Nfa, BYTE, CLASS, FAIL, LAZY, SPLIT, START_STATE_LIMIT};

/// Subset construction over the NFA (see the module doc).
#[derive(Clone)]
pub struct Determinizer {
    nfa: Nfa,
    sets: Vec<Arc<[u64]>>,
    ids: FxHashMap<Arc<[u64]>, u32>,
    /// Epoch marks of the closure under construction, per NFA state.
    mark: Vec<u32>,
    epoch: u32,
    stack: Vec<u32>,
    scratch: Vec<u64>,
    runs: RunScratch,
}

impl Determinizer {
    /// Let lower run bounds read joint coverage (`joint`): a grammar's terminals, each a
    /// small NFA whose key positions it decides in a fraction of a millisecond. Not a
    /// whole schema's NFA: there a key position's closure holds every declared key's
    /// next letter beside the other keys' states, the joint bound cost 1.6 ms where the
    /// pruning walk it replaced cost 0.6 (MaskBench, llama3, a Kubernetes `metadata`).
    pub fn joint_runs(&mut self) {
        self.runs.joint = true;
    }

    /// Also creates the start state, row 0 of `table`; a limit error when the pieces
    /// its closure compiles on demand pass [`START_STATE_LIMIT`] (see `Nfa::limited`).
    pub fn new(nfa: Nfa, table: &mut DfaTable) -> Result<Self, Error> {
        let mut det = Determinizer {
            mark: vec![0; nfa.num_states()],
            nfa,
            sets: Vec::new(),
            ids: FxHashMap::default(),
            epoch: 0,
            stack: Vec::new(),
            scratch: Vec::new(),
            runs: RunScratch::default(),
        };
        det.begin();
        if det.nfa.start != FAIL {
            det.close(det.nfa.start);
        }
        if det.nfa.exceeded {
            return Err(Error::LimitExceeded(format!(
                "the pattern's NFA exceeds {START_STATE_LIMIT} states at its start"
            )));
        }
        det.nfa.limited = false;
        det.scratch.sort_unstable();
        let set: Arc<[u64]> = det.scratch.as_slice().into();
        let accepting = set.first() == Some(&0);
        det.ids.insert(set.clone(), 0);
        det.sets.push(set);
        table.push_state(accepting);
        Ok(det)
    }

    pub fn nfa_states(&self) -> usize {
        self.nfa.num_states()
    }

    /// The limit of what later transitions compile, [`super::WALK_STATE_LIMIT`] by default.
    pub fn set_walk_limit(&mut self, limit: usize) {
        self.nfa.walk_limit = limit;
    }

    /// Whether a transition compiled a piece past the walk limit: that transition and
    /// every later one may be wrong.
    pub fn exceeded(&self) -> bool {
        self.nfa.exceeded
    }

    fn begin(&mut self) {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.mark.fill(0);
            self.epoch = 1;
        }
        self.scratch.clear();
    }

    /// Add the epsilon closure of `start`: its reading and match states, at their start.
    fn close(&mut self, start: u32) {
        self.stack.push(start);
        while let Some(s) = self.stack.pop() {
            if self.mark[s as usize] == self.epoch {
                continue;
            }
            self.mark[s as usize] = self.epoch;
            let st = self.nfa.body.states[s as usize];
            match st.kind {
                SPLIT => {
                    let alts = &self.nfa.body.alts[st.a as usize..(st.a + st.b) as usize];
                    self.stack.extend(alts.iter().rev());
                }
                LAZY => {
                    let target = self.nfa.resolve_lazy(st.a);
                    if self.mark.len() < self.nfa.num_states() {
                        self.mark.resize(self.nfa.num_states(), 0);
                    }
                    if target != FAIL {
                        self.stack.push(target); // FAIL only past the limit: refused or broken
                    }
                }
                _ => self.scratch.push((s as u64) << 32),
            }
        }
    }

    /// The row after `byte` from `row`, creating the state if new.
    pub fn next(&mut self, table: &mut DfaTable, row: u32, byte: u8) -> u32 {
        let set = self.sets[table.state(row) as usize].clone();
        self.begin();
        for &e in set.iter() {
            let (s, sub) = ((e >> 32) as u32, e as u32);
            let st = self.nfa.body.states[s as usize];
            match st.kind {
                BYTE if st.byte == byte => self.close(st.a),
                CLASS => match self.nfa.ast.classes[st.a as usize].step(sub, byte) {
                    NONE => {}
                    DONE => self.close(st.b),
                    inside => self.scratch.push(((s as u64) << 32) | inside as u64),
                },
                _ => {}
            }
        }
        if self.scratch.is_empty() {
            return DEAD;
        }
        self.scratch.sort_unstable();
        self.scratch.dedup();
        if let Some(&s) = self.ids.get(self.scratch.as_slice()) {
            return s << table.shift;
        }
        let set: Arc<[u64]> = self.scratch.as_slice().into();
        let new_row = table.push_state(set[0] == 0);
        self.ids.insert(set.clone(), table.state(new_row));
        self.sets.push(set);
        new_row
    }

    pub fn memory_bytes(&self) -> usize {
        let sets: usize = self.sets.iter().map(|s| s.len() * 8 + 16).sum();
        self.nfa.memory_bytes() + self.mark.capacity() * 4 + sets * 2 + self.ids.capacity() * 24
    }
}

/// Buffers of [`Determinizer::run_bounds`], kept between calls.
#[derive(Clone, Default)]
pub struct RunScratch {
    lower: FxHashMap<u32, u32>,
    upper: FxHashMap<u32, u32>,
    /// Closures under exploration, end to end.
    pub(super) buf: Vec<u32>,
    stack: Vec<u32>,
    /// Whether lower bounds also read joint coverage (`joint`; [`Determinizer::joint_runs`]).
    joint: bool,
}

/// One run-bounds computation: the NFA, memoized bounds per NFA state and a budget.
pub(super) struct Runs<'a> {
    pub(super) nfa: &'a mut Nfa,
    mark: &'a mut Vec<u32>,
    epoch: &'a mut u32,
    pub(super) s: &'a mut RunScratch,
    pub(super) class: &'a [(u32, u32)],
    pub(super) cap: u32,
    pub(super) budget: u32,
}

/// Memo mark of a state whose bound is being computed (a cycle when met again).
const IN_PROGRESS: u32 = u32::MAX;

impl Runs<'_> {
    /// The lower bound from the buffer's elements, 0 once the budget is spent.
    fn lower_bound(&mut self) -> u32 {
        let n = self.s.buf.len();
        let lower = self.lower(0, n, 0).min(self.cap);
        if self.budget == 0 {
            return 0;
        }
        if lower >= self.cap || !self.s.joint {
            return lower;
        }
        // no chain of states reading the whole class goes far enough: the states of a
        // closure may read it between them (`joint`)
        lower.max(self.joint_lower(0, n))
    }

    /// Push the reading states of the closure of `p` (start of a character) on `s.buf`
    /// and return where they start, or `None` once the budget is spent.
    pub(super) fn closure(&mut self, p: u32) -> Option<usize> {
        *self.epoch = self.epoch.wrapping_add(1).max(1);
        let start = self.s.buf.len();
        self.s.stack.push(p);
        while let Some(s) = self.s.stack.pop() {
            if self.mark.len() <= s as usize {
                self.mark.resize(self.nfa.num_states(), 0);
            }
            if self.mark[s as usize] == *self.epoch {
                continue;
            }
            self.mark[s as usize] = *self.epoch;
            let Some(b) = self.budget.checked_sub(1) else {
                self.s.stack.clear();
                return None;
            };
            self.budget = b;
            let st = self.nfa.body.states[s as usize];
            match st.kind {
                SPLIT => {
                    let alts = &self.nfa.body.alts[st.a as usize..(st.a + st.b) as usize];
                    self.s.stack.extend(alts);
                }
                LAZY => {
                    let t = self.nfa.resolve_lazy(st.a);
                    if t != FAIL {
                        self.s.stack.push(t);
                    }
                }
                _ => self.s.buf.push(s),
            }
        }
        Some(start)
    }

    /// A lower bound of the whole characters of `class` every string of which keeps the
    /// states `s.buf[from..to]` (at character starts) live: the longest chain of states
    /// whose class holds all of `class`.
    fn lower(&mut self, from: usize, to: usize, depth: u32) -> u32 {
        let mut best = 0;
        for i in from..to {
            let st = self.nfa.body.states[self.s.buf[i] as usize];
            if st.kind == CLASS && self.nfa.ast.classes[st.a as usize].contains_all(self.class) {
                best = best.max(1 + self.lower_from(st.b, depth + 1));
                if depth + best >= self.cap {
                    break; // as long as can matter: no other element can do better
                }
            }
        }
        best
    }

    fn lower_from(&mut self, p: u32, depth: u32) -> u32 {
        if depth >= self.cap {
            return 0;
        }
        match self.s.lower.get(&p) {
            Some(&IN_PROGRESS) => return self.cap, // a cycle: any length
            Some(&v) => return v,
            None => {}
        }
        self.s.lower.insert(p, IN_PROGRESS);
        let v = match self.closure(p) {
            Some(start) => {
                let end = self.s.buf.len();
                let v = self.lower(start, end, depth).min(self.cap);
                self.s.buf.truncate(start);
                v
            }
            None => 0,
        };
        self.s.lower.insert(p, v);
        v
    }

    /// An upper bound of the whole characters of `class` any live string from the
    /// elements `(state, sub)` of `s.buf[from..to]` (sub 0: at a character start; all of
    /// them when `subs` is `None`) can hold (`cap`: unknown or unbounded).
    fn upper(&mut self, from: usize, to: usize, subs: Option<&[u64]>, depth: u32) -> u32 {
        let mut best = 0;
        for i in from..to {
            let (s, sub) = match subs {
                Some(set) => ((set[i] >> 32) as u32, set[i] as u32),
                None => (self.s.buf[i], 0),
            };
            let st = self.nfa.body.states[s as usize];
            let next = match st.kind {
                CLASS => {
                    let c = &self.nfa.ast.classes[st.a as usize];
                    if !c.meets(self.class) {
                        continue;
                    }
                    if sub != 0 || c.bytes {
                        return self.cap; // inside a character, or raw bytes: unknown
                    }
                    st.b
                }
                BYTE if st.byte >= 0x80 => return self.cap,
                BYTE if self
                    .class
                    .iter()
                    .any(|r| r.0 <= st.byte as u32 && st.byte as u32 <= r.1) =>
                {
                    st.a
                }
                _ => continue,
            };
            best = best.max(1 + self.upper_from(next, depth + 1));
            if best >= self.cap {
                return self.cap;
            }
        }
        best
    }

    fn upper_from(&mut self, p: u32, depth: u32) -> u32 {
        if depth >= self.cap {
            return self.cap;
        }
        match self.s.upper.get(&p) {
            Some(&IN_PROGRESS) => return self.cap,
            Some(&v) => return v,
            None => {}
        }
        self.s.upper.insert(p, IN_PROGRESS);
        let v = match self.closure(p) {
            Some(start) => {
                let end = self.s.buf.len();
                let v = self.upper(start, end, None, depth).min(self.cap);
                self.s.buf.truncate(start);
                v
            }
            None => self.cap,
        };
        self.s.upper.insert(p, v);
        v
    }
}

impl Determinizer {
    /// Bounds `(lower, upper)`, both at most `cap`, on runs of whole characters of the
    /// Unicode class `class` from DFA state `state`: every string of up to `lower` such
    /// characters keeps the state live, and no live string holds more than `upper`
    /// (`cap` meaning unknown). Found on the NFA in time independent of the DFA: a state
    /// reading a class that holds all of `class` reads any of its characters and then
    /// reaches at least its successor's closure, and sets of states are monotone (a
    /// superset allows every string a subset allows). Budgeted; an exhausted budget gives
    /// the trivial bounds `(0, cap)`.
    pub fn run_bounds(&mut self, state: u32, class: &[(u32, u32)], cap: u32) -> (u32, u32) {
        let set = self.sets[state as usize].clone();
        self.with_runs(&set, class, cap, |runs| {
            let lower = runs.lower_bound();
            let upper = if lower >= cap {
                cap // every run the caller asks about is allowed: no need to bound them
            } else {
                let upper = runs.upper(0, set.len(), Some(&set), 0).min(cap);
                if runs.budget == 0 {
                    cap
                } else {
                    upper
                }
            };
            (lower, upper.max(lower))
        })
    }

    /// The lower bound of [`Determinizer::run_bounds`] alone (what a pruning walk asks:
    /// does every run of up to `cap` characters keep the state alive).
    pub fn run_lower(&mut self, state: u32, class: &[(u32, u32)], cap: u32) -> u32 {
        let set = self.sets[state as usize].clone();
        self.with_runs(&set, class, cap, |runs| runs.lower_bound())
    }

    /// Run `f` on a fresh budgeted [`Runs`] whose buffer holds the elements of `set` at
    /// character starts.
    fn with_runs<T>(
        &mut self,
        set: &[u64],
        class: &[(u32, u32)],
        cap: u32,
        f: impl FnOnce(&mut Runs<'_>) -> T,
    ) -> T {
        let mut scratch = std::mem::take(&mut self.runs);
        scratch.lower.clear();
        scratch.upper.clear();
        scratch.buf.clear();
        scratch.buf.extend(
            set.iter()
                .filter(|&&e| e as u32 == 0)
                .map(|&e| (e >> 32) as u32),
        );
        let mut runs = Runs {
            nfa: &mut self.nfa,
            mark: &mut self.mark,
            epoch: &mut self.epoch,
            s: &mut scratch,
            class,
            cap,
            budget: 1 << 12,
        };
        let out = f(&mut runs);
        self.runs = scratch;
        out
    }
}
