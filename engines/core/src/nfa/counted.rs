//! A counted automaton: a graph of states whose edges read one *unit* each (for JSON
//! strings, one decoded character, however many bytes spell it), accepting where an
//! accepting state is reached after between `lo` and `hi` units.
//!
//! Why: a string that must match a pattern *and* a length bound is the product of the
//! pattern's automaton and a counter. An e-mail address of at most 1,024 characters is
//! tens of thousands of product states, a URI of at most 65,536 millions, and as a regex
//! (state elimination) far more. Kept as the pattern's automaton plus the bounds, the
//! product is formed by the lazy index's NFA one `(state, count)` pair at a time, only
//! where the walks go (the core's `nfa` module).
//!
//! Contract: the NFA keeps only pieces that can still reach a match, so a pair
//! `(q, k)` is entered only when some path of `j` more units leads from `q` to an
//! accepting state with `lo <= k + j <= hi` ([`Counted::feasible`]). That is decided
//! from `R_j`, the states with a path of exactly `j` units to acceptance:
//! `R_0` is the accepting states and `R_{j+1}` the states with an edge into `R_j`. The
//! sequence is a function of its last term, so it repeats from some `s` with a period
//! `p`; it is stored up to its first repeat, and a query over a range of `j` looks at no
//! more than `s + p` terms. Counts past `lo` with no upper bound are all alike, so a count
//! never exceeds `max(lo, hi)` when `hi` is finite, and stops at `lo` when it is not
//! ([`Counted::next_count`]): the pairs are finite either way.

/// No upper bound on the units.
pub const UNBOUNDED: u32 = u32::MAX;

/// The states, their edges' targets and the bounds (see the module doc).
#[derive(Debug)]
pub struct Counted {
    /// Per state, the target of each edge, in the edge order of its labels.
    pub targets: Vec<Vec<u32>>,
    pub accept: Vec<bool>,
    pub lo: u32,
    /// [`UNBOUNDED`] for none.
    pub hi: u32,
    /// `R_0, R_1, ...` as bitsets, up to the first term equal to an earlier one.
    reach: Vec<Vec<u64>>,
    /// The index of the earlier term the sequence returns to.
    cycle_start: usize,
}

/// A count as a `u32` that is not [`UNBOUNDED`] (which repetitions of the lazy index's
/// tree also read as "no bound"), None when it is too large.
pub fn finite(v: u64) -> Option<u32> {
    u32::try_from(v).ok().filter(|&v| v != UNBOUNDED)
}

/// The upper bound `hi` as a count: [`UNBOUNDED`] for none, None when it is too large
/// to tell apart from none.
pub fn upper(hi: Option<u64>) -> Option<u32> {
    hi.map_or(Some(UNBOUNDED), finite)
}

/// The reach sequence did not repeat within the allowed terms.
#[derive(Debug)]
pub struct TooLong;

impl Counted {
    /// The automaton with start state 0; `Err` when the reach sequence needs more than
    /// `max_terms` terms before it repeats (the caller refuses such a language).
    pub fn new(
        targets: Vec<Vec<u32>>,
        accept: Vec<bool>,
        lo: u32,
        hi: u32,
        max_terms: usize,
    ) -> Result<Counted, TooLong> {
        let n = accept.len();
        let words = n.div_ceil(64).max(1);
        let mut first = vec![0u64; words];
        for (q, &a) in accept.iter().enumerate() {
            if a {
                first[q / 64] |= 1 << (q % 64);
            }
        }
        let mut seen: rustc_hash::FxHashMap<Vec<u64>, usize> = Default::default();
        let mut reach = vec![first.clone()];
        seen.insert(first, 0);
        let cycle_start = loop {
            if reach.len() > max_terms {
                return Err(TooLong);
            }
            let last = reach.last().expect("R_0 is present");
            let mut next = vec![0u64; words];
            for (q, ts) in targets.iter().enumerate() {
                if ts
                    .iter()
                    .any(|&t| last[t as usize / 64] >> (t % 64) & 1 == 1)
                {
                    next[q / 64] |= 1 << (q % 64);
                }
            }
            if let Some(&at) = seen.get(&next) {
                break at;
            }
            seen.insert(next.clone(), reach.len());
            reach.push(next);
        };
        Ok(Counted {
            targets,
            accept,
            lo,
            hi,
            reach,
            cycle_start,
        })
    }

    pub fn len(&self) -> usize {
        self.accept.len()
    }

    pub fn is_empty(&self) -> bool {
        self.accept.is_empty()
    }

    /// Whether state `q` reaches acceptance in exactly `j` more units.
    fn in_reach(&self, q: u32, j: u64) -> bool {
        let (s, p) = (
            self.cycle_start as u64,
            (self.reach.len() - self.cycle_start) as u64,
        );
        let term = if j < s { j } else { s + (j - s) % p };
        self.reach[term as usize][q as usize / 64] >> (q % 64) & 1 == 1
    }

    /// Whether `(q, k)` can still end in an accepted count (see the module doc).
    pub fn feasible(&self, q: u32, k: u32) -> bool {
        let from = u64::from(self.lo.saturating_sub(k));
        let to = if self.hi == UNBOUNDED {
            u64::MAX
        } else if k > self.hi {
            return false;
        } else {
            u64::from(self.hi - k)
        };
        let span = self.reach.len() as u64;
        let last = to.min(from.max(self.cycle_start as u64).saturating_add(span));
        (from..=last).any(|j| self.in_reach(q, j))
    }

    /// Whether the string may end at `(q, k)`.
    pub fn stops(&self, q: u32, k: u32) -> bool {
        self.accept[q as usize] && k >= self.lo && k <= self.hi
    }

    /// Whether another unit may be read at count `k`.
    pub fn may_read(&self, k: u32) -> bool {
        self.hi == UNBOUNDED || k < self.hi
    }

    /// The count after one more unit from `k` (capped at `lo` when unbounded above).
    pub fn next_count(&self, k: u32) -> u32 {
        if self.hi == UNBOUNDED {
            k.saturating_add(1).min(self.lo)
        } else {
            k + 1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `(ab)*` as states 0 -a-> 1 -b-> 0, 0 accepting: even lengths only.
    fn pairs(lo: u32, hi: u32) -> Counted {
        Counted::new(vec![vec![1], vec![0]], vec![true, false], lo, hi, 1 << 10).unwrap()
    }

    #[test]
    fn feasibility_follows_the_lengths_paths_can_have() {
        assert!(pairs(0, UNBOUNDED).feasible(0, 0));
        assert!(!pairs(3, 3).feasible(0, 0), "no even length is 3");
        assert!(pairs(3, 4).feasible(0, 0));
        assert!(pairs(3, 4).feasible(1, 1), "b a b: three more");
        assert!(!pairs(3, 3).feasible(1, 1), "from 1, odd lengths only");
        assert!(
            pairs(7, UNBOUNDED).feasible(1, 0),
            "any odd length from 7 on"
        );
        assert!(!pairs(0, 5).feasible(0, 6));
    }

    #[test]
    fn counts_stop_growing_past_lo_without_an_upper_bound() {
        let c = pairs(4, UNBOUNDED);
        assert_eq!(c.next_count(3), 4);
        assert_eq!(c.next_count(4), 4);
        assert!(c.may_read(4));
        let d = pairs(0, 4);
        assert_eq!(d.next_count(3), 4);
        assert!(!d.may_read(4));
        assert!(d.stops(0, 4) && !d.stops(1, 4) && !d.stops(0, 5));
    }

    /// `u32::MAX` is the "no bound" of the tree's repetitions, so no count may be it.
    #[test]
    fn counts_never_take_the_unbounded_value() {
        assert_eq!(finite(7), Some(7));
        assert_eq!(finite(u64::from(u32::MAX)), None);
        assert_eq!(finite(1 << 40), None);
        assert_eq!(upper(None), Some(UNBOUNDED));
        assert_eq!(upper(Some(u64::from(u32::MAX) - 1)), Some(u32::MAX - 1));
        assert_eq!(upper(Some(u64::from(u32::MAX))), None);
    }

    #[test]
    fn a_sequence_that_does_not_repeat_soon_enough_is_refused() {
        // a cycle of 5: R_j cycles with period 5, which needs 6 terms to see a repeat
        let ring: Vec<Vec<u32>> = (0..5).map(|q| vec![(q + 1) % 5]).collect();
        let mut accept = vec![false; 5];
        accept[0] = true;
        assert!(Counted::new(ring.clone(), accept.clone(), 0, 9, 3).is_err());
        let c = Counted::new(ring, accept, 7, 7, 16).unwrap();
        assert!(c.feasible(3, 0) && !c.feasible(2, 0));
    }
}
