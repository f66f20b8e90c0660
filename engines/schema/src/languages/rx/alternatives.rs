//! The alternatives of one alternation, each kept once: what [`rx::alt`] gathers.
//!
//! Single characters join into one class; every other alternative is kept in first-seen
//! order, once. Nodes are compared by structure when they print at most 256 bytes, by
//! address otherwise; past a few dozen alternatives earlier ones are found through a
//! hash of their structure ([`hashed`]), so an alternation of many values stays linear.
//! [`hashed`] also keys the key languages a compilation interns
//! ([`crate::context::Ctx::interned`]).
//!
//! [`rx::alt`]: crate::languages::rx::alt

use std::hash::{Hash, Hasher};
use std::rc::Rc;
use std::sync::Arc;

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet, FxHasher};

use crate::languages::charset::CharSet;
use crate::languages::rx::{lit, set, Kind, Node, Rx};

fn single_or_set(s: CharSet) -> Rx {
    match s.as_single() {
        Some(c) => lit(c.encode_utf8(&mut [0; 4])),
        None => set(s),
    }
}

/// The alternatives of one [`alt`](crate::languages::rx::alt) call as they are gathered: single characters joined
/// into one class, and each other alternative kept once. Only nodes printing at most
/// 256 bytes are compared by structure (bounding the cost of comparing one); larger
/// ones are deduplicated when they are the same shared node. Past [`SCAN_LIMIT`]
/// alternatives, earlier ones are found through a hash of their structure
/// ([`structure_hash`]) rather than a scan, so an alternation of many values (an
/// `enum` of 200,000 numbers) costs linear time, not quadratic.
#[derive(Default)]
pub struct Alternatives {
    out: Vec<Rx>,
    chars: CharSet,
    /// Built once `out` passes [`SCAN_LIMIT`]: addresses of the nodes in `out` (kept
    /// alive there, so an address is never reused while recorded), and the indices
    /// in `out` of the small nodes by structure hash.
    index: Option<AltIndex>,
}

/// Addresses of the kept nodes, and indices of the small ones by structure hash.
type AltIndex = (HashSet<*const Node>, HashMap<u64, Vec<usize>>);

/// Below this many alternatives a scan is cheaper than hashing each new one.
const SCAN_LIMIT: usize = 32;

impl Alternatives {
    pub fn push(&mut self, x: Rx) {
        match &x.kind {
            Kind::Set(s) => self.chars = self.chars.union(s),
            Kind::Lit(s) if s.chars().count() == 1 => {
                self.chars = self
                    .chars
                    .union(&CharSet::single(s.chars().next().unwrap()))
            }
            _ => {
                if !self.is_new(&x) {
                    return;
                }
                if self.out.len() == SCAN_LIMIT {
                    self.index = Some(Default::default());
                    for i in 0..self.out.len() {
                        self.record(i);
                    }
                }
                self.out.push(x);
                if self.index.is_some() {
                    self.record(self.out.len() - 1);
                }
            }
        }
    }

    fn is_new(&self, x: &Rx) -> bool {
        let small = x.len <= 256;
        match &self.index {
            None => !self
                .out
                .iter()
                .any(|y| Rc::ptr_eq(y, x) || (small && y.len == x.len && **y == **x)),
            Some((pointers, structures)) => {
                if pointers.contains(&Rc::as_ptr(x)) {
                    return false;
                }
                !small
                    || structures
                        .get(&hashed(x))
                        .is_none_or(|same| !same.iter().any(|&i| *self.out[i] == **x))
            }
        }
    }

    fn record(&mut self, i: usize) {
        let x = &self.out[i];
        let (pointers, structures) = self.index.as_mut().unwrap();
        pointers.insert(Rc::as_ptr(x));
        if x.len <= 256 {
            structures.entry(hashed(x)).or_default().push(i);
        }
    }

    pub fn finish(mut self) -> Vec<Rx> {
        if !self.chars.is_empty() {
            self.out.insert(0, single_or_set(self.chars));
        }
        self.out
    }
}

/// A hash of `x`'s structure ([`structure_hash`]).
pub fn hashed(x: &Node) -> u64 {
    let mut h = FxHasher::default();
    structure_hash(x, &mut h);
    h.finish()
}

/// Hashes what [`Node`]'s equality compares: equal nodes hash alike. A graph hashes
/// by its automaton's address, which its equality also requires to be shared.
fn structure_hash(x: &Node, h: &mut FxHasher) {
    std::mem::discriminant(&x.kind).hash(h);
    x.len.hash(h);
    match &x.kind {
        Kind::Never | Kind::Empty => {}
        Kind::Rule(n) => n.hash(h),
        Kind::Lit(s) => s.hash(h),
        Kind::Set(s) => s.hash(h),
        Kind::Concat(v) | Kind::Alt(v) => {
            v.len().hash(h);
            v.iter().for_each(|y| structure_hash(y, h));
        }
        Kind::Repeat(y, lo, hi) => {
            (lo, hi).hash(h);
            structure_hash(y, h);
        }
        Kind::Graph(g) => Arc::as_ptr(&g.counted).hash(h),
    }
}
