//! Sets of Unicode scalar values, the alphabet of every string-level language here.
//!
//! A [`CharSet`] is a sorted list of disjoint, non-adjacent inclusive ranges of code
//! points. The surrogates U+D800-U+DFFF are never members: they are not scalar values, so
//! no decoded JSON string holds one (a surrogate *pair* escape decodes to one scalar
//! above U+FFFF). Every constructor and operation keeps that invariant, so two sets are
//! equal iff their range lists are.

/// The largest scalar value.
pub const MAX_CHAR: u32 = 0x10FFFF;
const SURROGATES: (u32, u32) = (0xD800, 0xDFFF);

#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct CharSet {
    ranges: Vec<(u32, u32)>,
}

impl CharSet {
    pub fn empty() -> CharSet {
        CharSet { ranges: Vec::new() }
    }

    /// Every scalar value.
    pub fn full() -> CharSet {
        CharSet::from_ranges(vec![(0, MAX_CHAR)])
    }

    pub fn single(c: char) -> CharSet {
        CharSet::from_ranges(vec![(c as u32, c as u32)])
    }

    pub fn range(lo: u32, hi: u32) -> CharSet {
        CharSet::from_ranges(vec![(lo, hi)])
    }

    /// Normalizes any list of ranges (unsorted, overlapping, crossing the surrogates).
    pub fn from_ranges(mut raw: Vec<(u32, u32)>) -> CharSet {
        raw.retain(|&(a, b)| a <= b);
        raw.sort_unstable();
        let mut ranges: Vec<(u32, u32)> = Vec::with_capacity(raw.len() + 1);
        for (a, b) in raw {
            let b = b.min(MAX_CHAR);
            for (a, b) in cut_surrogates(a, b) {
                match ranges.last_mut() {
                    Some(last) if a <= last.1.saturating_add(1) => last.1 = last.1.max(b),
                    _ => ranges.push((a, b)),
                }
            }
        }
        // Ranges that only touch across the (absent) surrogate block stay separate; that
        // is still canonical, since nothing can fill the gap.
        CharSet { ranges }
    }

    pub fn ranges(&self) -> &[(u32, u32)] {
        &self.ranges
    }

    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    pub fn contains(&self, c: u32) -> bool {
        self.ranges
            .binary_search_by(|&(a, b)| {
                if b < c {
                    std::cmp::Ordering::Less
                } else if a > c {
                    std::cmp::Ordering::Greater
                } else {
                    std::cmp::Ordering::Equal
                }
            })
            .is_ok()
    }

    /// The one member, if the set has exactly one.
    pub fn as_single(&self) -> Option<char> {
        match self.ranges.as_slice() {
            [(a, b)] if a == b => char::from_u32(*a),
            _ => None,
        }
    }

    /// How many scalars the set holds.
    #[cfg(test)]
    pub fn len(&self) -> u64 {
        self.ranges.iter().map(|&(a, b)| (b - a + 1) as u64).sum()
    }

    pub fn union(&self, other: &CharSet) -> CharSet {
        let mut all = self.ranges.clone();
        all.extend_from_slice(&other.ranges);
        CharSet::from_ranges(all)
    }

    pub fn complement(&self) -> CharSet {
        let mut out = Vec::with_capacity(self.ranges.len() + 1);
        let mut next = 0u32;
        for &(a, b) in &self.ranges {
            if a > next {
                out.push((next, a - 1));
            }
            next = b + 1;
        }
        if next <= MAX_CHAR {
            out.push((next, MAX_CHAR));
        }
        CharSet::from_ranges(out)
    }

    pub fn intersect(&self, other: &CharSet) -> CharSet {
        let (mut i, mut j) = (0, 0);
        let mut out = Vec::new();
        while i < self.ranges.len() && j < other.ranges.len() {
            let (a1, b1) = self.ranges[i];
            let (a2, b2) = other.ranges[j];
            let (lo, hi) = (a1.max(a2), b1.min(b2));
            if lo <= hi {
                out.push((lo, hi));
            }
            if b1 < b2 {
                i += 1;
            } else {
                j += 1;
            }
        }
        CharSet { ranges: out }
    }

    pub fn minus(&self, other: &CharSet) -> CharSet {
        self.intersect(&other.complement())
    }
}

fn cut_surrogates(a: u32, b: u32) -> impl Iterator<Item = (u32, u32)> {
    let (s, e) = SURROGATES;
    let below = (a < s).then(|| (a, b.min(s - 1)));
    let above = (b > e).then(|| (a.max(e + 1), b));
    below.into_iter().chain(above)
}

/// Splits several sets into the coarsest partition of their union whose blocks each lie
/// inside or outside every input set: the alphabet classes of an automaton's edges.
/// A partition block: which input sets it lies in, and its ranges.
type Block = (Vec<bool>, Vec<(u32, u32)>);

pub fn partition(sets: &[&CharSet]) -> Vec<CharSet> {
    let mut bounds: Vec<u32> = Vec::new();
    for s in sets {
        for &(a, b) in s.ranges() {
            bounds.push(a);
            bounds.push(b + 1);
        }
    }
    bounds.sort_unstable();
    bounds.dedup();
    let mut blocks: Vec<Block> = Vec::new();
    for w in bounds.windows(2) {
        let (lo, hi) = (w[0], w[1] - 1);
        let key: Vec<bool> = sets.iter().map(|s| s.contains(lo)).collect();
        if !key.iter().any(|&k| k) {
            continue;
        }
        match blocks.iter_mut().find(|(k, _)| *k == key) {
            Some((_, r)) => r.push((lo, hi)),
            None => blocks.push((key, vec![(lo, hi)])),
        }
    }
    blocks
        .into_iter()
        .map(|(_, r)| CharSet::from_ranges(r))
        .filter(|s| !s.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn surrogates_are_never_members() {
        let s = CharSet::range(0xD000, 0xE000);
        assert!(!s.contains(0xD800) && s.contains(0xD7FF) && s.contains(0xE000));
        assert!(!CharSet::full().contains(0xDFFF));
        assert_eq!(CharSet::full().complement(), CharSet::empty());
    }

    #[test]
    fn set_algebra_agrees_with_membership() {
        let a = CharSet::from_ranges(vec![(10, 20), (30, 40)]);
        let b = CharSet::from_ranges(vec![(15, 35)]);
        for c in 0..50 {
            assert_eq!(a.intersect(&b).contains(c), a.contains(c) && b.contains(c));
            assert_eq!(a.union(&b).contains(c), a.contains(c) || b.contains(c));
            assert_eq!(a.minus(&b).contains(c), a.contains(c) && !b.contains(c));
        }
    }

    #[test]
    fn partition_blocks_are_uniform() {
        let a = CharSet::from_ranges(vec![(0, 9)]);
        let b = CharSet::from_ranges(vec![(5, 14)]);
        let p = partition(&[&a, &b]);
        assert_eq!(p.len(), 3);
        let total: u64 = p.iter().map(CharSet::len).sum();
        assert_eq!(total, 15);
    }
}
