//! The lazy index's NFA and its subset construction, one transition at a time.
//!
//! [`Nfa`] is a Thompson automaton compiled from an [`Ast`]: states read one literal byte,
//! or one character of a class (through its shared [`ClassAuto`]), or split without
//! reading, or match. Compilation runs back to front (each piece is compiled knowing its
//! successor), so no state is patched except a loop's entry. Pieces that match nothing
//! (an empty class) vanish at compile time: a concatenation holding one matches nothing,
//! an alternation drops it, a repetition of it keeps only its zero-copy form. Hence every
//! state left can reach the match state. States are hash-consed as they are made (a
//! state reading the same thing into the same successors is the existing one, and node
//! `n` followed by state `q` is compiled once): with the tree's own interning
//! ([`crate::regex_ast`]), a piece the pattern repeats with the same continuation is one
//! set of states, and subset construction makes one DFA state for all its copies.
//!
//! [`Determinizer`] builds a DFA state from a set of *elements*: an NFA state, and for a
//! class state, the class automaton's state inside the current character. Sets are
//! epsilon-closed, sorted and hash-consed. Since every element can still reach the match
//! state, a set is live iff it is not empty; it accepts iff it holds the match state
//! (state 0, so the first element). Cost of a transition: one step per element, the
//! closure of what they lead to, a sort and a hash lookup.

use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::classauto::{DONE, NONE};
use crate::dfa::DEAD;
use crate::error::Error;
use crate::lazydfa::DfaTable;
use crate::regex_ast::{Ast, Node};

/// No state: the piece matches nothing.
const FAIL: u32 = u32::MAX;
/// NFA states allowed at construction (12 bytes each), and entries of the map of
/// compiled pieces.
pub const NFA_STATE_LIMIT: usize = 1 << 25;
/// The same, while the start state's closure compiles pieces on demand: what a start
/// state may cost is far less than what a pattern may (at this limit the NFA and its
/// maps take about a gigabyte).
pub const START_STATE_LIMIT: usize = 1 << 22;
/// The same, once walks compile pieces on demand (the start state built): what one
/// index may hold, about two gigabytes with its maps. Past it the index is broken
/// ([`Determinizer::exceeded`]) and its owner must discard it, where it would otherwise
/// grow without bound on a tree standing for terabytes of text.
pub const WALK_STATE_LIMIT: usize = 1 << 23;
/// Repetitions with more copies than this are unrolled on demand. (Debug builds, where
/// the tests run unoptimized, compile nearly everything on demand, to exercise it.)
const UNROLL: u32 = if cfg!(debug_assertions) { 1 } else { 4 };
/// Nodes that would compile to more states than this are compiled on demand.
const LAZY_NODE: u32 = if cfg!(debug_assertions) { 2 } else { 48 };
/// `Lazy::min` of a pending node that is not a repetition.
const WHOLE: u32 = u32::MAX;
/// `Lazy::min` of a pending pair of a counted automaton: `sub` is the `Graph` node,
/// `max` the count and `at` the automaton's state.
const PAIR: u32 = u32::MAX - 1;

/// An NFA state, 12 bytes: `kind` says how to read `a` and `b`.
#[derive(Clone, Copy, Debug)]
pub struct NState {
    kind: u8,
    byte: u8,
    a: u32,
    b: u32,
}

const MATCH: u8 = 0;
/// Reads `byte`, then `a`.
const BYTE: u8 = 1;
/// Reads one character of class `a`, then `b`.
const CLASS: u8 = 2;
/// Goes to each of `alts[a..a + b]` without reading.
const SPLIT: u8 = 3;
/// Goes, without reading, to the compiled form of `lazies[a]`, compiled on first use.
const LAZY: u8 = 4;

/// `sub{min,max}` (or node `sub` itself when `min == WHOLE`, or a counted automaton's
/// pair when `min == PAIR`) followed by `next`, not compiled yet (`start == UNCOMPILED`).
#[derive(Clone, Copy, Debug)]
struct Lazy {
    sub: u32,
    min: u32,
    max: u32,
    at: u32,
    next: u32,
    start: u32,
}

const UNCOMPILED: u32 = u32::MAX - 1;

/// The states, split targets and pending repetitions of an NFA, hash-consed: a state
/// that reads the same thing and leads to the same states as one already made is that
/// state (see [`Compiler::push`]).
#[derive(Default)]
pub struct Body {
    states: Vec<NState>,
    alts: Vec<u32>,
    lazies: Vec<Lazy>,
    /// `BYTE` and `CLASS` states by `(kind, byte, a, b)`.
    made: FxHashMap<(u8, u8, u32, u32), u32>,
    /// `LAZY` states by their pending piece's `(sub, min, max, at, next)`.
    pendings: FxHashMap<(u32, u32, u32, u32, u32), u32>,
    /// `SPLIT` states by their targets.
    splits: FxHashMap<Box<[u32]>, u32>,
    /// The compiled form of node `id` followed by state `next`.
    compiled: FxHashMap<(u32, u32), u32>,
}

pub struct Nfa {
    ast: Ast,
    /// Per AST node: some string matches it, and about how many states it compiles to.
    matchable: Vec<bool>,
    size: Vec<u32>,
    body: Body,
    /// `FAIL` when the pattern matches nothing.
    pub start: u32,
    /// Pieces compiled on demand count against [`START_STATE_LIMIT`] while the start
    /// state is built ([`Determinizer::new`]), so a pattern whose start alone would
    /// pass it is refused instead of taking all memory (a schema tree printing
    /// 8 * 10^18 bytes of regex took 14 GB there); later, against [`WALK_STATE_LIMIT`].
    limited: bool,
    /// The limit once `limited` is off.
    walk_limit: usize,
    /// A piece compiled on demand passed its limit: the automaton is wrong from there on,
    /// and must be discarded ([`Determinizer::new`] reports it at the start,
    /// [`Determinizer::exceeded`] later).
    exceeded: bool,
}

impl Nfa {
    /// Compile `ast`: only what the start state needs; larger pieces, and repetitions of
    /// more than [`UNROLL`] copies, are compiled when the DFA first reaches them.
    pub fn compile(ast: Ast) -> Result<Nfa, Error> {
        let (matchable, size) = matchable(&ast);
        let mut body = Body::default();
        body.states.reserve(ast.bytes.len() + ast.nodes.len());
        body.alts.reserve(ast.kids.len());
        body.states.push(NState {
            kind: MATCH,
            byte: 0,
            a: 0,
            b: 0,
        });
        let start = Compiler {
            ast: &ast,
            matchable: &matchable,
            size: &size,
            body: &mut body,
            limit: NFA_STATE_LIMIT,
        }
        .node(ast.root, 0)?;
        Ok(Nfa {
            ast,
            matchable,
            size,
            body,
            start,
            limited: true,
            walk_limit: WALK_STATE_LIMIT,
            exceeded: false,
        })
    }

    /// The state a `LAZY` state stands for, compiling it on first use.
    fn resolve_lazy(&mut self, lazy: u32) -> u32 {
        let l = self.body.lazies[lazy as usize];
        if l.start != UNCOMPILED {
            return l.start;
        }
        let start = Compiler {
            ast: &self.ast,
            matchable: &self.matchable,
            size: &self.size,
            body: &mut self.body,
            limit: if self.limited {
                START_STATE_LIMIT
            } else {
                self.walk_limit
            },
        }
        .unrolled_once(l)
        .unwrap_or_else(|_| {
            self.exceeded = true;
            FAIL
        });
        self.body.lazies[lazy as usize].start = start;
        start
    }

    pub fn num_states(&self) -> usize {
        self.body.states.len()
    }

    /// The byte classes: bytes no state tells apart share one (from the tree, so that
    /// states compiled later need no other classes).
    pub fn byte_classes(&self) -> ([u8; 256], usize) {
        let mut boundary = [false; 256];
        for &byte in &self.ast.bytes {
            boundary[byte as usize] = true;
            if byte < 255 {
                boundary[byte as usize + 1] = true;
            }
        }
        for c in &self.ast.classes {
            c.mark_boundaries(&mut boundary);
        }
        let mut classes = [0u8; 256];
        let mut k = 0usize;
        for b in 1..256 {
            if boundary[b] {
                k += 1;
            }
            classes[b] = k as u8;
        }
        (classes, k + 1)
    }

    pub fn memory_bytes(&self) -> usize {
        self.body.states.capacity() * std::mem::size_of::<NState>()
            + self.body.alts.capacity() * 4
            + self.body.lazies.capacity() * std::mem::size_of::<Lazy>()
            + (self.body.made.capacity() + self.body.compiled.capacity()) * 24
            + self.body.pendings.capacity() * 24
            + self.body.splits.capacity() * 24
            + self.body.alts.len() * 4
            + self.ast.nodes.capacity() * std::mem::size_of::<Node>()
            + self.ast.bytes.capacity()
            + self.ast.kids.capacity() * 4
            + self
                .ast
                .classes
                .iter()
                .map(|c| c.memory_bytes())
                .sum::<usize>()
    }
}

/// Per node of `ast` (children come before parents): whether some string matches it, and
/// about how many states compiling it makes.
fn matchable(ast: &Ast) -> (Vec<bool>, Vec<u32>) {
    let mut m = vec![false; ast.nodes.len()];
    let mut size = vec![0u32; ast.nodes.len()];
    for (i, node) in ast.nodes.iter().enumerate() {
        (m[i], size[i]) = match *node {
            Node::Fail => (false, 0),
            Node::Empty => (true, 0),
            Node::Bytes { len, .. } => (true, len),
            Node::Class(_) => (true, 1),
            Node::Concat { at, len } => {
                let kids = ast.slice_kids(at, len);
                let s = kids
                    .iter()
                    .fold(0u32, |a, &k| a.saturating_add(size[k as usize]));
                (kids.iter().all(|&k| m[k as usize]), s)
            }
            Node::Alt { at, len } => {
                let kids = ast.slice_kids(at, len);
                let s = kids
                    .iter()
                    .fold(1u32, |a, &k| a.saturating_add(size[k as usize]));
                (kids.iter().any(|&k| m[k as usize]), s)
            }
            Node::Repeat { sub, min, max } => {
                let copies = if max == u32::MAX {
                    min.saturating_add(1)
                } else {
                    max
                };
                let s = if copies > UNROLL {
                    1
                } else {
                    (size[sub as usize] + 1).saturating_mul(copies)
                };
                (min == 0 || m[sub as usize], s)
            }
            // always compiled on demand, a pair at a time
            Node::Graph(g) => (ast.graphs[g as usize].counted.feasible(0, 0), u32::MAX),
        };
    }
    (m, size)
}

struct Compiler<'a> {
    ast: &'a Ast,
    matchable: &'a [bool],
    size: &'a [u32],
    body: &'a mut Body,
    /// The most states, and entries of the compiled pieces' map, allowed
    /// ([`NFA_STATE_LIMIT`] at construction, [`START_STATE_LIMIT`] for the start
    /// state's closure, [`WALK_STATE_LIMIT`] for later unrolling).
    limit: usize,
}

impl Compiler<'_> {
    /// The state reading `byte` or class `a` (by `kind`) then going to `a` or `b`: an
    /// existing one when one reads and leads the same (the pattern's repeated pieces,
    /// such as a JSON object's optional properties written after each possible first
    /// one, then share their states, and subset construction makes one DFA state where
    /// it would make one per copy).
    fn push(&mut self, kind: u8, byte: u8, a: u32, b: u32) -> Result<u32, Error> {
        let key = (kind, byte, a, b);
        if let Some(&s) = self.body.made.get(&key) {
            return Ok(s);
        }
        let s = self.push_new(kind, byte, a, b)?;
        self.body.made.insert(key, s);
        Ok(s)
    }

    /// An error once the states, or the compiled pieces (many pieces compile to states
    /// that exist already), reach the limit.
    fn within_limit(&self) -> Result<(), Error> {
        if self.body.states.len().max(self.body.compiled.len()) >= self.limit {
            return Err(Error::LimitExceeded(format!(
                "the pattern's NFA exceeds {} states",
                self.limit
            )));
        }
        Ok(())
    }

    /// A new state, never shared (a loop's entry, patched once its body is compiled).
    fn push_new(&mut self, kind: u8, byte: u8, a: u32, b: u32) -> Result<u32, Error> {
        self.within_limit()?;
        self.body.states.push(NState { kind, byte, a, b });
        Ok((self.body.states.len() - 1) as u32)
    }

    /// A split to the live ones of `alts` (no state for a single one).
    fn split(&mut self, alts: &[u32]) -> Result<u32, Error> {
        let at = self.body.alts.len();
        for &t in alts {
            if t != FAIL && self.body.alts[at..].last() != Some(&t) {
                self.body.alts.push(t);
            }
        }
        match self.body.alts.len() - at {
            0 => Ok(FAIL),
            1 => Ok(self.body.alts.pop().unwrap_or(FAIL)),
            n => {
                if let Some(&s) = self.body.splits.get(&self.body.alts[at..]) {
                    self.body.alts.truncate(at);
                    return Ok(s);
                }
                let s = self.push_new(SPLIT, 0, at as u32, n as u32)?;
                let key: Box<[u32]> = self.body.alts[at..].into();
                self.body.splits.insert(key, s);
                Ok(s)
            }
        }
    }

    /// Compile node `id` followed by state `next`, or a `LAZY` state standing for that
    /// when it is large; its first state.
    fn node(&mut self, id: u32, next: u32) -> Result<u32, Error> {
        if next == FAIL || !self.matchable[id as usize] {
            return Ok(FAIL);
        }
        if let Some(&s) = self.body.compiled.get(&(id, next)) {
            return Ok(s);
        }
        let s = if self.size[id as usize] > LAZY_NODE {
            self.pending(Lazy {
                sub: id,
                min: WHOLE,
                max: 0,
                at: 0,
                next,
                start: UNCOMPILED,
            })?
        } else {
            self.node_now(id, next)?
        };
        self.within_limit()?;
        self.body.compiled.insert((id, next), s);
        Ok(s)
    }

    /// The `LAZY` state of a pending piece: the existing one for the same piece.
    fn pending(&mut self, lazy: Lazy) -> Result<u32, Error> {
        let key = (lazy.sub, lazy.min, lazy.max, lazy.at, lazy.next);
        if let Some(&s) = self.body.pendings.get(&key) {
            return Ok(s);
        }
        self.body.lazies.push(lazy);
        let s = self.push_new(LAZY, 0, (self.body.lazies.len() - 1) as u32, 0)?;
        self.body.pendings.insert(key, s);
        Ok(s)
    }

    /// Compile node `id` (its large parts pending) followed by state `next`.
    fn node_now(&mut self, id: u32, next: u32) -> Result<u32, Error> {
        let ast = self.ast;
        match ast.nodes[id as usize] {
            Node::Empty => Ok(next),
            Node::Fail => Ok(FAIL),
            Node::Bytes { at, len } => {
                let mut cur = next;
                for &byte in ast.slice_bytes(at, len).iter().rev() {
                    cur = self.push(BYTE, byte, cur, 0)?;
                }
                Ok(cur)
            }
            Node::Class(class) => self.push(CLASS, 0, class, next),
            Node::Concat { at, len } => {
                let mut cur = next;
                for &item in ast.slice_kids(at, len).iter().rev() {
                    cur = self.node(item, cur)?;
                }
                Ok(cur)
            }
            Node::Alt { at, len } => {
                let starts = ast
                    .slice_kids(at, len)
                    .iter()
                    .map(|&item| self.node(item, next))
                    .collect::<Result<Vec<u32>, Error>>()?;
                self.split(&starts)
            }
            Node::Repeat { sub, min, max } => self.repeat(sub, min, max, next),
            Node::Graph(_) => self.pair(id, 0, 0, next),
        }
    }

    /// State `q` of the counted automaton of node `id` at count `k`, followed by `next`:
    /// `next` where the string may stop, and each edge's label followed by its target's
    /// pair, pending, where that pair is feasible ([`crate::counted`]). The caller
    /// ensures `(q, k)` itself is feasible, so some alternative is live.
    fn pair(&mut self, id: u32, q: u32, k: u32, next: u32) -> Result<u32, Error> {
        let ast = self.ast;
        let Node::Graph(g) = ast.nodes[id as usize] else {
            unreachable!("pairs are made of Graph nodes only");
        };
        let graph = &ast.graphs[g as usize];
        let c = &graph.counted;
        let mut alts = Vec::new();
        if c.stops(q, k) {
            alts.push(next);
        }
        if c.may_read(k) {
            let k2 = c.next_count(k);
            let edges = c.targets[q as usize].iter().zip(&graph.labels[q as usize]);
            for (&t, &label) in edges {
                if c.feasible(t, k2) {
                    let then = self.pending(Lazy {
                        sub: id,
                        min: PAIR,
                        max: k2,
                        at: t,
                        next,
                        start: UNCOMPILED,
                    })?;
                    alts.push(self.node(label, then)?);
                }
            }
        }
        self.split(&alts)
    }

    /// `sub{min,max}` followed by `next` (`max == u32::MAX`: unbounded). Few copies are
    /// unrolled (`min` copies, then nested optional ones `(x(x)?)?` or a loop); more
    /// become a `LAZY` state, unrolled one copy at a time as the DFA reaches them.
    fn repeat(&mut self, sub: u32, min: u32, max: u32, next: u32) -> Result<u32, Error> {
        if !self.matchable[sub as usize] {
            return Ok(if min == 0 { next } else { FAIL });
        }
        let copies = if max == u32::MAX { min } else { max };
        if copies > UNROLL {
            return self.pending(Lazy {
                sub,
                min,
                max,
                at: 0,
                next,
                start: UNCOMPILED,
            });
        }
        let mut cur = if max == u32::MAX {
            self.star(sub, next)?
        } else {
            let mut opt = next;
            for _ in min..max {
                let body = self.node(sub, opt)?;
                opt = self.split(&[body, next])?;
            }
            opt
        };
        for _ in 0..min {
            cur = self.node(sub, cur)?;
        }
        Ok(cur)
    }

    /// `sub*` followed by `next`: a split entering the body or leaving.
    fn star(&mut self, sub: u32, next: u32) -> Result<u32, Error> {
        let entry = self.push_new(SPLIT, 0, 0, 0)?;
        let body = self.node(sub, entry)?;
        let at = self.body.alts.len() as u32;
        self.body
            .alts
            .extend([body, next].into_iter().filter(|&a| a != FAIL));
        let n = self.body.alts.len() as u32 - at;
        self.body.states[entry as usize] = NState {
            kind: SPLIT,
            byte: 0,
            a: at,
            b: n,
        };
        Ok(entry)
    }

    /// One copy of a pending repetition, the rest pending again. `sub` is matchable and
    /// `next` live, so the result is never `FAIL`; an error only past the limit, when
    /// it is enforced (`Nfa::limited`).
    fn unrolled_once(&mut self, l: Lazy) -> Result<u32, Error> {
        if l.min == WHOLE {
            return self.node_now(l.sub, l.next);
        }
        if l.min == PAIR {
            return self.pair(l.sub, l.at, l.max, l.next);
        }
        if l.max == 0 {
            return Ok(l.next);
        }
        if l.min == 0 && l.max == u32::MAX {
            return self.star(l.sub, l.next);
        }
        let rest = Lazy {
            min: l.min.saturating_sub(1),
            max: if l.max == u32::MAX { l.max } else { l.max - 1 },
            start: UNCOMPILED,
            ..l
        };
        let rest = self.pending(rest)?;
        let copy = self.node(l.sub, rest)?;
        if l.min > 0 {
            Ok(copy)
        } else {
            self.split(&[copy, l.next])
        }
    }
}

/// Subset construction over the NFA (see the module doc).
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

    /// The limit of what later transitions compile, [`WALK_STATE_LIMIT`] by default.
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
#[derive(Default)]
pub struct RunScratch {
    lower: FxHashMap<u32, u32>,
    upper: FxHashMap<u32, u32>,
    /// Closures under exploration, end to end.
    buf: Vec<u32>,
    stack: Vec<u32>,
}

/// One run-bounds computation: the NFA, memoized bounds per NFA state and a budget.
struct Runs<'a> {
    nfa: &'a mut Nfa,
    mark: &'a mut Vec<u32>,
    epoch: &'a mut u32,
    s: &'a mut RunScratch,
    class: &'a [(u32, u32)],
    cap: u32,
    budget: u32,
}

/// Memo mark of a state whose bound is being computed (a cycle when met again).
const IN_PROGRESS: u32 = u32::MAX;

impl Runs<'_> {
    /// The lower bound from the buffer's elements, 0 once the budget is spent.
    fn lower_bound(&mut self) -> u32 {
        let n = self.s.buf.len();
        let lower = self.lower(0, n, 0).min(self.cap);
        if self.budget == 0 {
            0
        } else {
            lower
        }
    }

    /// Push the reading states of the closure of `p` (start of a character) on `s.buf`
    /// and return where they start, or `None` once the budget is spent.
    fn closure(&mut self, p: u32) -> Option<usize> {
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
