//! Sets of Unicode scalar values, the alphabet of every string-level language here.
//!
//! A [`CharSet`] is a sorted list of disjoint, non-adjacent inclusive ranges of code
//! points. The surrogates U+D800-U+DFFF are never members: they are not scalar values, so
//! no decoded JSON string holds one (a surrogate *pair* escape decodes to one scalar
//! above U+FFFF). Every constructor and operation keeps that invariant, so two sets are
//! equal iff their range lists are.

use rustc_hash::FxHashMap as HashMap;

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

/// A partition block: which input sets it lies in, and its ranges.
type Block = (Vec<usize>, Vec<(u32, u32)>);

/// Splits several sets into the coarsest partition of their union whose blocks each lie
/// inside or outside every input set: the alphabet classes of an automaton's edges.
pub fn partition(sets: &[&CharSet]) -> Vec<CharSet> {
    partition_keyed(sets).into_iter().map(|(_, s)| s).collect()
}

/// [`partition`], each block with the indices of the sets that hold it (the subset
/// construction's seeds, without asking every set again). One sweep over the ranges'
/// ends keeps the sets that hold the current window and a hash of them (a sum of a
/// mixed value per set), so a window whose holders are already a block costs no
/// allocation; on equal hashes the holders are compared.
pub fn partition_keyed(sets: &[&CharSet]) -> Vec<(Vec<usize>, CharSet)> {
    let mut events: Vec<(u32, bool, usize)> = Vec::new(); // (at, opens, set)
    for (i, s) in sets.iter().enumerate() {
        for &(a, b) in s.ranges() {
            events.push((a, true, i));
            events.push((b + 1, false, i));
        }
    }
    events.sort_unstable();
    let mix = |i: usize| {
        (i as u64 + 1)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .rotate_left(29)
    };
    let mut holds = vec![false; sets.len()];
    let (mut held, mut hash) = (0usize, 0u64);
    let mut blocks: Vec<Block> = Vec::new();
    let mut by_hash: HashMap<u64, Vec<usize>> = HashMap::default();
    let mut e = 0;
    while e < events.len() {
        let at = events[e].0;
        while e < events.len() && events[e].0 == at {
            let (_, opens, i) = events[e];
            holds[i] = opens;
            if opens {
                held += 1;
                hash = hash.wrapping_add(mix(i));
            } else {
                held -= 1;
                hash = hash.wrapping_sub(mix(i));
            }
            e += 1;
        }
        if held == 0 || e == events.len() {
            continue;
        }
        let window = (at, events[e].0 - 1);
        let same = |b: &usize| blocks[*b].0.len() == held && blocks[*b].0.iter().all(|&i| holds[i]);
        let found = by_hash
            .get(&hash)
            .and_then(|v| v.iter().copied().find(same));
        match found {
            Some(b) => blocks[b].1.push(window),
            None => {
                let key = (0..sets.len()).filter(|&i| holds[i]).collect();
                by_hash.entry(hash).or_default().push(blocks.len());
                blocks.push((key, vec![window]));
            }
        }
    }
    blocks
        .into_iter()
        .map(|(k, r)| (k, CharSet::from_ranges(r)))
        .filter(|(_, s)| !s.is_empty())
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

    proptest::proptest! {
        /// Every block lies in exactly the sets it names (each of its characters),
        /// blocks are disjoint, no two share their holders, and together they are the
        /// union of the sets.
        #[test]
        fn keyed_partition_blocks_lie_in_exactly_their_holders(
            raw in proptest::collection::vec(
                proptest::collection::vec((0u32..60, 0u32..8), 0..4), 0..7),
        ) {
            let sets: Vec<CharSet> = raw
                .iter()
                .map(|rs| CharSet::from_ranges(rs.iter().map(|&(a, w)| (a, a + w)).collect()))
                .collect();
            let refs: Vec<&CharSet> = sets.iter().collect();
            let blocks = partition_keyed(&refs);
            let mut seen = CharSet::empty();
            let mut keys = std::collections::HashSet::new();
            for (holders, block) in &blocks {
                proptest::prop_assert!(keys.insert(holders.clone()));
                proptest::prop_assert!(seen.intersect(block).is_empty());
                seen = seen.union(block);
                for &(a, b) in block.ranges() {
                    for c in a..=b {
                        let inside: Vec<usize> =
                            (0..sets.len()).filter(|&k| sets[k].contains(c)).collect();
                        proptest::prop_assert_eq!(&inside, holders);
                    }
                }
            }
            let union = sets.iter().fold(CharSet::empty(), |u, s| u.union(s));
            proptest::prop_assert_eq!(seen, union);
        }
    }
}
