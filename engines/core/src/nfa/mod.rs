//! The regex front end and the NFA every DFA here but [`crate::dfa::ByteDfa`] is built from.
//!
//! - [`ast`]: a pattern as a small tree ([`ast::Ast`]) of byte strings, classes,
//!   concatenations, alternations, counted repetitions and counted automata, by the fast
//!   parser or from `regex-syntax`'s `Hir`; the schema compiler builds such trees too;
//! - [`classauto`]: one character of a class, read byte by byte (shared by content);
//! - [`counted`]: counted automata, whose `(state, count)` pairs the NFA forms as the
//!   walks reach them;
//! - this module: [`Forest`], many trees as the roots of one (a grammar's terminals);
//!   [`Nfa`], the hash-consed Thompson automaton of a tree or of a forest's root; `compile`, its
//!   compiler, back to front and partly on demand; `determinize`, [`Determinizer`], the
//!   subset construction one transition at a time, and run bounds; `joint`, run bounds
//!   where a closure's states read the class between them.
//!
//! The lazy index's NFA and its subset construction, one transition at a time.
//!
//! [`Nfa`] is a Thompson automaton compiled from an [`Ast`]: states read one literal byte,
//! or one character of a class (through its shared [`ClassAuto`](classauto::ClassAuto)), or split without
//! reading, or match. Compilation runs back to front (each piece is compiled knowing its
//! successor), so no state is patched except a loop's entry. Pieces that match nothing
//! (an empty class) vanish at compile time: a concatenation holding one matches nothing,
//! an alternation drops it, a repetition of it keeps only its zero-copy form. Hence every
//! state left can reach the match state. States are hash-consed as they are made (a
//! state reading the same thing into the same successors is the existing one, and node
//! `n` followed by state `q` is compiled once): with the tree's own interning
//! ([`crate::nfa::ast`]), a piece the pattern repeats with the same continuation is one
//! set of states, and subset construction makes one DFA state for all its copies.
//!
//! [`Determinizer`] builds a DFA state from a set of *elements*: an NFA state, and for a
//! class state, the class automaton's state inside the current character. Sets are
//! epsilon-closed, sorted and hash-consed. Since every element can still reach the match
//! state, a set is live iff it is not empty; it accepts iff it holds the match state
//! (state 0, so the first element). Cost of a transition: one step per element, the
//! closure of what they lead to, a sort and a hash lookup.
//!
//! Here: the states and the NFA's growth on demand; `compile`: the compiler from tree
//! nodes to states; `determinize`: the subset construction and run bounds.

use std::sync::Arc;

use rustc_hash::{FxHashMap, FxHashSet};

use crate::error::Error;
use crate::nfa::ast::{classes_of_cuts, mark_cuts, Ast, Node};

pub mod ast;
pub mod classauto;
mod compile;
pub mod counted;
mod determinize;
mod joint;

use compile::{matchable, Compiler};
pub use determinize::Determinizer;

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
#[derive(Clone, Default)]
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

/// Byte classes: per byte its class, and how many classes.
pub type ByteClasses = ([u8; 256], usize);

/// Per AST node: some string matches it, and about how many states it compiles to
/// (shared by the NFAs of one tree's roots, [`Forest`]).
pub(crate) struct Facts {
    matchable: Vec<bool>,
    size: Vec<u32>,
}

#[derive(Clone)]
pub struct Nfa {
    /// Shared with the NFA's clones (a lazy index's helpers, `crate::lazy`), and with
    /// the other roots' NFAs of a [`Forest`].
    ast: Arc<Ast>,
    facts: Arc<Facts>,
    /// The byte classes of what `start` reaches.
    classes: ByteClasses,
    /// Whether the tree is this NFA's alone (else its memory is the forest's).
    owns_ast: bool,
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
    pub fn compile(ast: Arc<Ast>) -> Result<Nfa, Error> {
        let (matchable, size) = matchable(&ast);
        let facts = Arc::new(Facts { matchable, size });
        let (root, classes) = (ast.root, ast.byte_classes());
        Self::compile_root(ast, facts, root, classes, true)
    }

    /// Compile the tree at `root` of a forest (see [`Nfa::compile`]), whose byte classes
    /// ([`Forest::byte_classes`]) the caller has found.
    pub fn compile_in(forest: &Forest, root: u32, classes: ByteClasses) -> Result<Nfa, Error> {
        Self::compile_root(
            forest.ast.clone(),
            forest.facts.clone(),
            root,
            classes,
            false,
        )
    }

    fn compile_root(
        ast: Arc<Ast>,
        facts: Arc<Facts>,
        root: u32,
        classes: ByteClasses,
        owns_ast: bool,
    ) -> Result<Nfa, Error> {
        let mut body = Body::default();
        if owns_ast {
            body.states.reserve(ast.bytes.len() + ast.nodes.len());
            body.alts.reserve(ast.kids.len());
        }
        body.states.push(NState {
            kind: MATCH,
            byte: 0,
            a: 0,
            b: 0,
        });
        let start = Compiler {
            ast: &ast,
            matchable: &facts.matchable,
            size: &facts.size,
            body: &mut body,
            limit: NFA_STATE_LIMIT,
        }
        .node(root, 0)?;
        Ok(Nfa {
            ast,
            facts,
            classes,
            owns_ast,
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
            matchable: &self.facts.matchable,
            size: &self.facts.size,
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
    /// states compiled later need no other classes; see [`Ast::byte_classes`]).
    pub fn byte_classes(&self) -> ByteClasses {
        self.classes
    }

    pub fn memory_bytes(&self) -> usize {
        self.body.states.capacity() * std::mem::size_of::<NState>()
            + self.body.alts.capacity() * 4
            + self.body.lazies.capacity() * std::mem::size_of::<Lazy>()
            + (self.body.made.capacity() + self.body.compiled.capacity()) * 24
            + self.body.pendings.capacity() * 24
            + self.body.splits.capacity() * 24
            + self.body.alts.len() * 4
            + if self.owns_ast {
                self.ast.memory_bytes()
            } else {
                0
            }
    }
}

/// Many regexes as the roots of one tree: a grammar's terminals, whose shared pieces
/// (a schema's string, its numbers) are built and interned once for all of them rather
/// than once per terminal (on a Kubernetes schema of 496 terminals, building a tree per
/// terminal was a third of the time to first mask). What the NFA compiler reads off the
/// tree ([`Facts`]) is found once too; each root's NFA ([`Nfa::compile_in`]) compiles
/// only what its root reaches, with that part's own byte classes.
pub struct Forest {
    ast: Arc<Ast>,
    facts: Arc<Facts>,
    empty: Vec<Option<bool>>,
}

impl Forest {
    pub fn new(ast: Ast) -> Forest {
        let (matchable, size) = matchable(&ast);
        let empty = ast.empty_matches();
        Forest {
            ast: Arc::new(ast),
            facts: Arc::new(Facts { matchable, size }),
            empty,
        }
    }

    /// Whether the tree at `root` matches some string (exact).
    pub fn matches_some(&self, root: u32) -> bool {
        self.facts.matchable[root as usize]
    }

    /// Whether the tree at `root` matches the empty string ([`Ast::empty_matches`]).
    pub fn matches_empty(&self, root: u32) -> Option<bool> {
        self.empty[root as usize]
    }

    /// The byte classes of the tree at `root`: the literal bytes and classes of the
    /// nodes it reaches ([`Ast::byte_classes`]).
    pub fn byte_classes(&self, root: u32) -> ByteClasses {
        let mut cuts = [false; 256];
        self.mark_cuts_from(root, &mut cuts);
        classes_of_cuts(&cuts)
    }

    /// Mark in `cuts` where any of the forest's trees tells a byte from the one below
    /// it: its literal bytes and classes, read off the tree's arrays with no walk. Every
    /// node the schema compiler or a grammar's regex puts in a forest is some terminal's,
    /// so this is where the terminals' cuts together fall (a node none reaches would cut
    /// finer, which tells no step apart wrongly). Walking the terminals' roots for them
    /// was 2% of building a schema's index.
    pub fn mark_all_cuts(&self, cuts: &mut [bool; 256]) {
        let ast = &*self.ast;
        mark_cuts(&ast.bytes, ast.classes.iter().map(|c| &**c), cuts);
    }

    /// The literal bytes and classes of the nodes reachable from `root`, marked in
    /// `cuts`.
    fn mark_cuts_from(&self, root: u32, cuts: &mut [bool; 256]) {
        let ast = &*self.ast;
        let mut seen = FxHashSet::default();
        let mut stack = vec![root];
        let (mut bytes, mut classes) = (Vec::new(), Vec::new());
        while let Some(n) = stack.pop() {
            if !seen.insert(n) {
                continue;
            }
            match ast.nodes[n as usize] {
                Node::Bytes { at, len } => bytes.extend_from_slice(ast.slice_bytes(at, len)),
                Node::Class(c) => classes.push(c),
                Node::Concat { at, len } | Node::Alt { at, len } => {
                    stack.extend_from_slice(ast.slice_kids(at, len))
                }
                Node::Repeat { sub, .. } => stack.push(sub),
                Node::Graph(g) => stack.extend(ast.graphs[g as usize].labels.iter().flatten()),
                Node::Fail | Node::Empty => {}
            }
        }
        mark_cuts(
            &bytes,
            classes.iter().map(|&c| &*ast.classes[c as usize]),
            cuts,
        );
    }

    pub fn memory_bytes(&self) -> usize {
        self.ast.memory_bytes() + self.facts.matchable.len() * 5 + self.empty.len() * 2
    }
}
