//! The family automaton of the token slices (see [`crate::walk::slices`]): the product of the
//! slices' DFAs, whose state after a byte string tells which slice that string falls in
//! and which slices it may still grow into; and [`Tiers`], the slices read as lengths of
//! one character class, which decide a bounded string's slices without a walk.

use crate::dfa::ByteDfa;
use crate::nfa::ast::Node;
use crate::util::table::DEAD;

/// The product of the slices' DFAs, live-pruned: a state is live while some slice's
/// DFA is. State 0 is the start.
pub struct Family {
    pub classes: [u8; 256],
    pub n_classes: usize,
    /// `state * n_classes + class`, `DEAD` where every slice's DFA is dead.
    pub table: Vec<u32>,
    /// The slice a string ending here falls in (the first whose DFA accepts), or `NO_SLICE`.
    pub slice_of: Vec<u8>,
    /// Bit `k`: a string leading here is a prefix of some string of slice `k`.
    pub toward: Vec<u64>,
    /// Whether some token ends here.
    pub ends: Vec<bool>,
    /// The bytes of each class.
    pub class_bytes: Vec<Vec<u8>>,
    /// The set of all slices.
    pub every: u64,
    /// The slices whose pattern has strings of every length (its DFA has a cycle).
    pub unbounded: u64,
    /// When every slice is `C{m,n}` for one Unicode class `C`: the class, and each
    /// slice's bounds in characters.
    pub tiers: Option<Tiers>,
}

/// Slices that are runs of one character class, by length.
#[derive(Clone, Debug)]
pub struct Tiers {
    pub class: Vec<(u32, u32)>,
    /// Per slice, `(m, n)`: it holds the tokens of `m` to `n` characters of the class
    /// (for an unbounded pattern, `n` is its longest token's length).
    pub bounds: Vec<(u32, u32)>,
    /// The largest `n`.
    pub max: u32,
}

impl Tiers {
    /// `Some` when every pattern is a repetition of the same Unicode class.
    fn detect(patterns: &[String]) -> Option<Tiers> {
        let mut class: Option<Vec<(u32, u32)>> = None;
        let mut bounds = Vec::new();
        for p in patterns {
            let ast = crate::nfa::ast::fast_parse(p).ok()?;
            let (c, m, n) = match ast.nodes[ast.root as usize] {
                Node::Class(c) => (c, 1, 1),
                Node::Repeat { sub, min, max } => match ast.nodes[sub as usize] {
                    Node::Class(c) if min >= 1 => (c, min, max),
                    _ => return None,
                },
                _ => return None,
            };
            let auto = &ast.classes[c as usize];
            if auto.bytes || class.as_ref().is_some_and(|k| *k != auto.ranges) {
                return None;
            }
            class = Some(auto.ranges.clone());
            bounds.push((m, n));
        }
        Some(Tiers {
            class: class?,
            max: bounds.iter().map(|b| b.1).max()?,
            bounds,
        })
    }

    /// Leave out of the class the characters of [`SPACES`] no slice token holds
    /// (`held[i]`: some does hold `SPACES[i]`). The tiers stand for the slices' tokens,
    /// so a run bound over the narrower class decides them as well: every token of a
    /// slice is a run of characters it keeps. Patterns single these characters out (an
    /// ECMA `.` refuses U+2028 and U+2029, which llama3's tokens never hold), and over
    /// the wider class a key under `^.*$` had a bound of 0 and walked every token.
    pub(super) fn narrow(&mut self, held: &[bool]) {
        let mut out: Vec<(u32, u32)> = Vec::with_capacity(self.class.len());
        for &(lo, hi) in &self.class {
            let mut from = lo;
            for (&c, _) in SPACES
                .iter()
                .zip(held)
                .filter(|(&c, &h)| !h && lo <= c && c <= hi)
            {
                if from < c {
                    out.push((from, c - 1));
                }
                from = c + 1;
            }
            if from <= hi {
                out.push((from, hi));
            }
        }
        self.class = out;
    }

    /// Bound each unbounded slice by its longest token (`longest[k]`, in characters).
    pub(super) fn bound(&mut self, longest: &[u32]) {
        for (b, &l) in self.bounds.iter_mut().zip(longest) {
            if b.1 == u32::MAX {
                b.1 = l.max(b.0);
            }
        }
        self.max = self.bounds.iter().map(|b| b.1).max().unwrap_or(0);
    }

    /// The longest run that decides anything: the longest slice token, at most 1,024
    /// characters (run bounds are searched one character per step).
    pub fn decisive(&self) -> u32 {
        self.max.min(1 << 10)
    }

    /// The verdict of a state whose runs of the class are bounded by `(lower, upper)`:
    /// slices no longer than `lower` are allowed whole, slices longer than `upper` not
    /// at all.
    pub fn verdict(&self, lower: u32, upper: u32) -> (u64, u64) {
        let (mut all, mut none) = (0u64, 0u64);
        for (k, &(m, n)) in self.bounds.iter().enumerate() {
            if n <= lower {
                all |= 1 << k;
            }
            if m > upper {
                none |= 1 << k;
            }
        }
        (all, none)
    }
}

pub const NO_SLICE: u8 = u8::MAX;

/// Line terminators and spaces past ASCII, sorted: what character classes single out
/// beyond ASCII (ECMA `.` and `\s`, Unicode `White_Space`), and what a vocabulary's
/// tokens may never hold ([`Tiers::narrow`]).
pub const SPACES: [u32; 20] = [
    0x85, 0xA0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008,
    0x2009, 0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF,
];

/// The set of the first `n` slices.
pub fn low_bits(n: usize) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1 << n) - 1
    }
}

impl Family {
    /// The product of `dfas` (each live-pruned and minimized), by a search over tuples.
    pub fn build(patterns: &[String], dfas: &[ByteDfa]) -> Family {
        let mut family = Self::product(dfas);
        family.every = low_bits(dfas.len());
        family.tiers = Tiers::detect(patterns);
        for (k, d) in dfas.iter().enumerate() {
            if has_cycle(d) {
                family.unbounded |= 1 << k;
            }
        }
        family
    }

    fn product(dfas: &[ByteDfa]) -> Family {
        let mut ids = rustc_hash::FxHashMap::default();
        let start: Vec<u32> = vec![0; dfas.len()];
        ids.insert(start.clone(), 0u32);
        let mut tuples = vec![start];
        let mut rows: Vec<[u32; 256]> = Vec::new();
        let mut i = 0;
        while i < tuples.len() {
            let mut row = [DEAD; 256];
            for (b, slot) in row.iter_mut().enumerate() {
                let next: Vec<u32> = tuples[i]
                    .iter()
                    .zip(dfas)
                    .map(|(&s, d)| if s == DEAD { DEAD } else { d.next(s, b as u8) })
                    .collect();
                if next.iter().all(|&s| s == DEAD) {
                    continue;
                }
                let len = tuples.len() as u32;
                *slot = *ids.entry(next.clone()).or_insert_with(|| {
                    tuples.push(next);
                    len
                });
            }
            rows.push(row);
            i += 1;
        }
        let slice_of: Vec<u8> = tuples
            .iter()
            .map(|t| {
                t.iter()
                    .zip(dfas)
                    .position(|(&s, d)| s != DEAD && d.is_accepting(s))
                    .map_or(NO_SLICE, |k| k as u8)
            })
            .collect();
        Self::compress(&rows, slice_of)
    }

    /// Byte classes of the product table, and the slices each state leads toward.
    fn compress(rows: &[[u32; 256]], slice_of: Vec<u8>) -> Family {
        let n = rows.len();
        let mut col_ids = rustc_hash::FxHashMap::default();
        let mut classes = [0u8; 256];
        let mut reps = Vec::new();
        for b in 0..256 {
            let col: Vec<u32> = rows.iter().map(|r| r[b]).collect();
            let len = col_ids.len() as u8;
            classes[b] = *col_ids.entry(col).or_insert_with(|| {
                reps.push(b);
                len
            });
        }
        let k = reps.len();
        let table: Vec<u32> = rows
            .iter()
            .flat_map(|r| reps.iter().map(move |&b| r[b]))
            .collect();
        let mut toward: Vec<u64> = slice_of
            .iter()
            .map(|&s| if s == NO_SLICE { 0 } else { 1u64 << s })
            .collect();
        loop {
            let mut changed = false;
            for s in 0..n {
                let mut bits = toward[s];
                for &t in &table[s * k..(s + 1) * k] {
                    if t != DEAD {
                        bits |= toward[t as usize];
                    }
                }
                changed |= bits != toward[s];
                toward[s] = bits;
            }
            if !changed {
                break;
            }
        }
        let mut class_bytes = vec![Vec::new(); k];
        for b in 0..=255u8 {
            class_bytes[classes[b as usize] as usize].push(b);
        }
        Family {
            classes,
            n_classes: k,
            table,
            ends: vec![false; n],
            slice_of,
            toward,
            class_bytes,
            every: 0,
            unbounded: 0,
            tiers: None,
        }
    }

    #[inline]
    pub fn next(&self, state: u32, class: usize) -> u32 {
        self.table[state as usize * self.n_classes + class]
    }

    pub fn num_states(&self) -> usize {
        self.slice_of.len()
    }

    pub(super) fn walk(&self, bytes: &[u8]) -> u32 {
        let mut s = 0;
        for &b in bytes {
            s = self.next(s, self.classes[b as usize] as usize);
            if s == DEAD {
                return DEAD;
            }
        }
        s
    }
}

/// Whether some state of `dfa` can reach itself (its language is infinite: the DFA is
/// live-pruned). Kahn's algorithm: a cycle is what cannot be ordered.
fn has_cycle(dfa: &ByteDfa) -> bool {
    let n = dfa.num_states();
    let succ = |s: usize| {
        (0..dfa.num_classes())
            .map(move |c| dfa.next_class(s as u32, c as u8))
            .filter(|&t| t != DEAD)
    };
    let mut indegree = vec![0usize; n];
    for s in 0..n {
        for t in succ(s) {
            indegree[t as usize] += 1;
        }
    }
    let mut ready: Vec<usize> = (0..n).filter(|&s| indegree[s] == 0).collect();
    let mut ordered = 0;
    while let Some(s) = ready.pop() {
        ordered += 1;
        for t in succ(s) {
            indegree[t as usize] -= 1;
            if indegree[t as usize] == 0 {
                ready.push(t as usize);
            }
        }
    }
    ordered < n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_family_knows_where_each_slice_can_still_go() {
        let patterns = vec!["a".to_string(), "ab|b".to_string()];
        let dfas: Vec<ByteDfa> = patterns
            .iter()
            .map(|p| ByteDfa::from_regex(p).unwrap().minimized())
            .collect();
        let f = Family::build(&patterns, &dfas);
        assert!(f.tiers.is_none());
        assert_eq!(f.unbounded, 0);
        let unbounded: Vec<ByteDfa> = ["a+", "b{2}"]
            .iter()
            .map(|p| ByteDfa::from_regex(p).unwrap().minimized())
            .collect();
        assert!(has_cycle(&unbounded[0]) && !has_cycle(&unbounded[1]));
        let a = f.walk(b"a");
        assert_eq!(f.slice_of[a as usize], 0);
        assert_eq!(f.toward[a as usize], 0b11); // "a" is in slice 0 and a prefix of "ab"
        assert_eq!(f.slice_of[f.walk(b"ab") as usize], 1);
        assert_eq!(f.slice_of[f.walk(b"b") as usize], 1);
        assert_eq!(f.walk(b"c"), DEAD);
        assert_eq!(f.toward[0], 0b11);
    }
}
