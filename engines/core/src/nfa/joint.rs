//! Run lower bounds by *joint* coverage: where no single NFA state reads every character
//! of the class, but the states of a closure do between them.
//!
//! The run bounds of `determinize` follow chains of states each of which reads all of
//! the class (a string's character loop), which is cheap and exact for them. An object's
//! other keys (every string but its declared keys, read off the keys' trie) have no such
//! state where a key begins: one state per key's next letter, one for the characters no
//! key continues with, and every run of string characters lives only because together
//! they read every character. There the chain bound is 0, and a slice decision had to
//! determinize the whole trie (one transition per byte class per trie node).
//!
//! Here a *position* is a set of NFA states at a character start, standing for the
//! union of their closures: characters are read a class at a time, not a byte class at
//! a time. A position's class is cut into blocks by the ranges its reading states read
//! (a state reading one ASCII byte reads that character; a byte past ASCII, part of a
//! character, or a raw-byte class covers nothing, which is safe), and each block leads
//! to the position of the covering states' successors. So with `v(p)` the bound of
//! position `p`:
//!
//! ```text
//! v(p) = 0                                   if some character of the class is read by none
//! v(p) = min(cap, 1 + min over blocks b of v(next(p, b)))
//! ```
//!
//! Any solution of these equations is a bound that holds, by induction on `k`: if
//! `v(p) >= k + 1`, every character is read and leads to a position whose bound is at
//! least `k`. The greatest solution is found by starting every position at `cap` and
//! lowering values until none changes (they only decrease, so this ends); a loop that
//! reads the whole class keeps its `cap`, one through a block that dies is lowered by
//! it. A position is a set, not a state: an object's other keys are written a run of
//! the keys' trie at a time (`a(x|n(y)|nn(z)|...)`), so after `an` one state reads every
//! character but `n` and another reads `n`, and only their union lives on every run.
//! Their number is about that of the DFA's states, but each is stepped once per block
//! (two or three at a trie node) where the DFA steps once per byte class (fifty).
//!
//! Budgeted as the chain bounds are (each closure costs its states); past the budget the
//! answer is 0, the trivial bound.

use rustc_hash::FxHashMap;

use super::determinize::Runs;
use super::{BYTE, CLASS};

/// Work one joint bound may take: closures' states, and per position one unit per state
/// reading there and per cut of the class. An object's other keys beside 16 declared
/// ones (a Kubernetes `metadata`) take a few thousand; a chain bound takes at most 4,096.
const JOINT_BUDGET: u32 = 1 << 15;

/// Per block of a position, the successor states of the states reading it (sorted),
/// or None where some character of the class is read by no state.
type Blocks = Option<Vec<Vec<u32>>>;

impl Runs<'_> {
    /// The joint lower bound of the reading states `s.buf[from..to]` (see the module
    /// doc), 0 once the budget is spent.
    pub(super) fn joint_lower(&mut self, from: usize, to: usize) -> u32 {
        self.budget = JOINT_BUDGET;
        let start: Vec<u32> = self.s.buf[from..to].to_vec();
        // positions by their states (the start set apart, as 0); per position, the
        // position each of its blocks leads to
        let mut number: FxHashMap<Vec<u32>, usize> = FxHashMap::default();
        let mut next: Vec<Option<Vec<usize>>> = vec![None];
        let mut pending: Vec<(usize, Vec<u32>)> = vec![(0, start)];
        while let Some((i, reading)) = pending.pop() {
            let Some(found) = self.blocks_of(&reading) else {
                continue; // some character is read by none: stays None, bound 0
            };
            let mut ids = Vec::with_capacity(found.len());
            for states in found {
                let id = match number.get(&states) {
                    Some(&id) => id,
                    None => {
                        let id = next.len();
                        next.push(None);
                        let Some(reading) = self.closures(&states) else {
                            return 0;
                        };
                        number.insert(states, id);
                        pending.push((id, reading));
                        id
                    }
                };
                ids.push(id);
            }
            next[i] = Some(ids);
        }
        self.greatest_solution(&next)
    }

    /// The reading states of the closures of `states`, sorted; None once the budget is
    /// spent.
    fn closures(&mut self, states: &[u32]) -> Option<Vec<u32>> {
        let at = self.s.buf.len();
        for &p in states {
            self.closure(p)?;
        }
        let mut reading = self.s.buf[at..].to_vec();
        self.s.buf.truncate(at);
        reading.sort_unstable();
        reading.dedup();
        Some(reading)
    }

    /// The greatest solution of the module doc's equations, at the start position.
    fn greatest_solution(&self, next: &[Option<Vec<usize>>]) -> u32 {
        let mut v = vec![self.cap; next.len()];
        loop {
            let mut changed = false;
            for (i, ids) in next.iter().enumerate().rev() {
                let new = match ids {
                    None => 0,
                    Some(ids) => (ids.iter().map(|&j| v[j]).min())
                        .map_or(self.cap, |m| (m + 1).min(self.cap)),
                };
                if new < v[i] {
                    v[i] = new;
                    changed = true;
                }
            }
            if !changed {
                return v[0];
            }
        }
    }

    /// The blocks of the reading states `states` (see [`Blocks`]), each once.
    fn blocks_of(&mut self, states: &[u32]) -> Blocks {
        // (ranges read, successor) of each state reading whole characters
        let mut readers: Vec<(&[(u32, u32)], u32)> = Vec::new();
        let singles: Vec<[(u32, u32); 1]> = states
            .iter()
            .map(|&s| {
                let b = self.nfa.body.states[s as usize].byte as u32;
                [(b, b)]
            })
            .collect();
        for (k, &s) in states.iter().enumerate() {
            let st = self.nfa.body.states[s as usize];
            match st.kind {
                CLASS if !self.nfa.ast.classes[st.a as usize].bytes => {
                    readers.push((&self.nfa.ast.classes[st.a as usize].ranges, st.b));
                }
                BYTE if st.byte < 0x80 => readers.push((&singles[k], st.a)),
                _ => {}
            }
        }
        let mut cuts: Vec<u32> = Vec::new();
        for ranges in readers.iter().map(|r| r.0).chain([self.class]) {
            for &(lo, hi) in ranges {
                cuts.extend([lo, hi.saturating_add(1)]);
            }
        }
        cuts.sort_unstable();
        cuts.dedup();
        // a unit per reader and per cut: what sorting them costs, the checks below being
        // lookups (a budget per check ran out on a whole schema's key positions, whose
        // closures hold every declared key's next letter)
        let units = u32::try_from(readers.len() + cuts.len()).unwrap_or(u32::MAX);
        self.budget = self.budget.checked_sub(units)?;
        let within = |ranges: &[(u32, u32)], c: u32| {
            let i = ranges.partition_point(|r| r.1 < c);
            ranges.get(i).is_some_and(|r| r.0 <= c)
        };
        let mut out: Vec<Vec<u32>> = Vec::new();
        for w in cuts.windows(2) {
            // every cut of the class and of each reader is here: a block is inside or
            // outside each of them whole, so its first character decides
            if !within(self.class, w[0]) {
                continue;
            }
            let mut next: Vec<u32> = (readers.iter())
                .filter(|(ranges, _)| within(ranges, w[0]))
                .map(|r| r.1)
                .collect();
            if next.is_empty() {
                return None;
            }
            next.sort_unstable();
            next.dedup();
            if !out.contains(&next) {
                out.push(next);
            }
        }
        Some(out)
    }
}
