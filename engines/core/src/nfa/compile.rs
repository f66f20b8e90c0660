//! Compiling the tree's nodes to NFA states, back to front, some on demand.

use crate::error::Error;
use crate::nfa::ast::{Ast, Node};

use super::{
    Body, Lazy, NState, BYTE, CLASS, FAIL, LAZY, LAZY_NODE, PAIR, SPLIT, UNCOMPILED, UNROLL, WHOLE,
};

/// Per node of `ast` (children come before parents): whether some string matches it, and
/// about how many states compiling it makes.
pub(crate) fn matchable(ast: &Ast) -> (Vec<bool>, Vec<u32>) {
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

pub(super) struct Compiler<'a> {
    pub(super) ast: &'a Ast,
    pub(super) matchable: &'a [bool],
    pub(super) size: &'a [u32],
    pub(super) body: &'a mut Body,
    /// The most states, and entries of the compiled pieces' map, allowed
    /// ([`super::NFA_STATE_LIMIT`] at construction, [`super::START_STATE_LIMIT`] for the
    /// start state's closure, [`super::WALK_STATE_LIMIT`] for later unrolling).
    pub(super) limit: usize,
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
    pub(super) fn node(&mut self, id: u32, next: u32) -> Result<u32, Error> {
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
    /// pair, pending, where that pair is feasible ([`crate::nfa::counted`]). The caller
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
    pub(super) fn unrolled_once(&mut self, l: Lazy) -> Result<u32, Error> {
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
