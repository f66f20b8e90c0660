//! [`CharRuns`]: how many whole characters of a class a state of one byte DFA surely
//! survives, for a recognizer whose states are made of such DFAs' states (the grammar
//! crate's Earley sets, whose items each carry a terminal DFA's state).
//!
//! A recognizer's own run bounds (`runs`) step the recognizer, which makes its states
//! (an Earley set each, the costly part), so they stop early: inside a string with
//! `maxLength` every character is a new set, and at a key position beside any other key
//! the run branches at once. Both left the slices undecided and the mask walked the whole
//! trie (MaskBench, llama3: 268,000 nodes, over a millisecond). A terminal's DFA answers
//! the same question for one item at a fraction of the cost: its states are made without
//! a closure, and they recur across positions, so each state's successors under one
//! character are stepped once ([`CharRuns`] memoizes them) and a later question is a
//! walk over that memo.
//!
//! The question is the *lower* bound of the run bounds: the largest `k` such that every
//! string of at most `k` characters of the class keeps the state live. From a state, the
//! breadth-first search by characters finds each state's least depth; the bound is the
//! least depth of a state some character kills (a character read byte by byte along its
//! UTF-8 sequences: a byte that kills it mid-character kills it). Exact, as the walks it
//! stands for are: a DFA state is [`DEAD`] iff no full match is reachable. Budgeted in
//! steps; past the budget the bound is the depth every state so far was cleared to,
//! which is still a bound that holds.

use std::collections::hash_map::Entry;

use regex_syntax::utf8::Utf8Sequences;
use rustc_hash::{FxHashMap, FxHashSet};

use crate::util::table::DEAD;

/// Per UTF-8 sequence of a class, per byte position, one byte of each byte class of the
/// DFA in that position's range: stepping them reads every character of the class.
type Sequences = Vec<Vec<Vec<u8>>>;

/// The run lower bounds of one byte DFA for one class of characters (see the module
/// doc), with each state's successors under one character memoized.
#[derive(Clone, Debug)]
pub struct CharRuns {
    class: Vec<(u32, u32)>,
    seqs: Sequences,
    /// Per state: the states one character of the class leads to, or None where some
    /// character kills it.
    succ: FxHashMap<u32, Option<Box<[u32]>>>,
    /// Per state: the bound found and the cap it was found under.
    found: FxHashMap<u32, (u32, u32)>,
}

impl CharRuns {
    /// For the class `class` (ranges of scalar values) over a DFA whose bytes fall in
    /// `classes` (per byte, its class): bytes of one class step alike, so one stands for
    /// all.
    pub fn new(class: &[(u32, u32)], classes: &[u8; 256]) -> CharRuns {
        let mut seqs = Vec::new();
        for &(a, b) in class {
            let (Some(a), Some(b)) = (char::from_u32(a), char::from_u32(b)) else {
                continue;
            };
            for seq in Utf8Sequences::new(a, b) {
                let positions = seq
                    .as_slice()
                    .iter()
                    .map(|r| {
                        let mut seen = [false; 256];
                        (r.start..=r.end)
                            .filter(|&x| {
                                !std::mem::replace(&mut seen[classes[x as usize] as usize], true)
                            })
                            .collect()
                    })
                    .collect();
                seqs.push(positions);
            }
        }
        CharRuns {
            class: class.to_vec(),
            seqs,
            succ: FxHashMap::default(),
            found: FxHashMap::default(),
        }
    }

    /// The class these bounds are for.
    pub fn class(&self) -> &[(u32, u32)] {
        &self.class
    }

    /// The largest `k` at most `cap` such that every string of at most `k` characters of
    /// the class keeps `start` live, as far as `budget` DFA steps find (see the module
    /// doc), and whether the budget cut the search short (a larger one may find more);
    /// `next` steps the DFA by one byte.
    pub fn lower(
        &mut self,
        start: u32,
        cap: u32,
        budget: usize,
        mut next: impl FnMut(u32, u8) -> u32,
    ) -> (u32, bool) {
        if start == DEAD {
            return (0, false);
        }
        if let Some(&(lower, at)) = self.found.get(&start) {
            if at == cap {
                return (lower, false);
            }
        }
        let mut budget = budget;
        let mut seen = FxHashSet::default();
        seen.insert(start);
        let mut layer = vec![start];
        let mut lower = cap;
        let mut spent = false;
        'depth: for k in 0..cap {
            let mut deeper = Vec::new();
            for &s in &layer {
                match self.successors(s, &mut budget, &mut next) {
                    Some(Some(after)) => {
                        deeper.extend(after.iter().copied().filter(|&n| seen.insert(n)));
                    }
                    // a character kills `s` (least depth `k`), or the budget ran out
                    // with every state above depth `k` cleared
                    found => {
                        (lower, spent) = (k, found.is_none());
                        break 'depth;
                    }
                }
            }
            if deeper.is_empty() {
                break; // every state the runs reach is cleared: runs of any length live
            }
            layer = deeper;
        }
        if !spent {
            self.found.insert(start, (lower, cap));
        }
        (lower, spent)
    }

    /// `s`'s successors under one character (memoized); Some(None) where one kills it,
    /// None when `budget` runs out first.
    fn successors(
        &mut self,
        s: u32,
        budget: &mut usize,
        next: &mut impl FnMut(u32, u8) -> u32,
    ) -> Option<Option<&[u32]>> {
        let entry = match self.succ.entry(s) {
            Entry::Occupied(o) => return Some(o.into_mut().as_deref()),
            Entry::Vacant(v) => v,
        };
        let mut out: Vec<u32> = Vec::new();
        for seq in &self.seqs {
            let mut front = vec![s];
            for bytes in seq {
                let mut after = Vec::with_capacity(front.len());
                for &r in &front {
                    for &b in bytes {
                        *budget = budget.checked_sub(1)?;
                        let n = next(r, b);
                        if n == DEAD {
                            return Some(entry.insert(None).as_deref());
                        }
                        after.push(n);
                    }
                }
                after.sort_unstable();
                after.dedup();
                front = after;
            }
            out.extend(front);
        }
        out.sort_unstable();
        out.dedup();
        Some(entry.insert(Some(out.into())).as_deref())
    }

    pub fn memory_bytes(&self) -> usize {
        let succ: usize = self
            .succ
            .values()
            .map(|v| 24 + v.as_ref().map_or(0, |s| s.len() * 4))
            .sum();
        succ + self.found.capacity() * 16
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dfa::ByteDfa;

    const JSON_CHAR: [(u32, u32); 4] = [(0x20, 0x21), (0x23, 0x5B), (0x5D, 0x7E), (0xA0, 0x10FFFF)];

    fn lower_of(pattern: &str, prefix: &[u8], cap: u32, budget: usize) -> u32 {
        let dfa = ByteDfa::from_regex(pattern).unwrap();
        let mut s = 0;
        for &b in prefix {
            s = dfa.next(s, b);
        }
        let (lower, _) =
            CharRuns::new(&JSON_CHAR, dfa.classes()).lower(s, cap, budget, |q, b| dfa.next(q, b));
        lower
    }

    #[test]
    fn a_bounded_string_survives_what_is_left_of_its_length() {
        assert_eq!(lower_of(r#""[^"\\]{1,40}""#, b"\"", 100, 1 << 16), 40);
        assert_eq!(lower_of(r#""[^"\\]{1,40}""#, b"\"abcde", 100, 1 << 16), 35);
        // the cap bounds the answer, an unbounded string reaches it
        assert_eq!(lower_of(r#""[^"\\]{1,40}""#, b"\"", 20, 1 << 16), 20);
        assert_eq!(lower_of(r#""([^"\\]|\\.)*""#, b"\"", 100, 1 << 16), 100);
    }

    #[test]
    fn one_character_the_state_refuses_bounds_it_at_its_depth() {
        // digits only: the first letter dies
        assert_eq!(lower_of(r#""[0-9]*""#, b"\"", 100, 1 << 16), 0);
        // any character but "x" after two: strings of two live, some of three die
        assert_eq!(lower_of(r#""..[^x]*""#, b"\"", 100, 1 << 16), 2);
        // a character dying inside its UTF-8 sequence (only ASCII allowed)
        assert_eq!(lower_of(r#""[ -~]*""#, b"\"", 100, 1 << 16), 0);
    }

    #[test]
    fn a_key_beside_declared_ones_survives_every_run() {
        // any key but "id", as a schema's other keys are read: the run "id" still lives
        let other = r#""([^i"\\][^"\\]*|i|i[^d"\\][^"\\]*|id[^"\\]+)?""#;
        assert_eq!(lower_of(other, b"\"", 64, 1 << 16), 64);
    }

    #[test]
    fn a_spent_budget_gives_a_smaller_bound_that_still_holds() {
        let full = lower_of(r#""[^"\\]{1,40}""#, b"\"", 100, 1 << 16);
        let cut = lower_of(r#""[^"\\]{1,40}""#, b"\"", 100, 50);
        assert!(cut < full, "{cut} {full}");
    }
}
