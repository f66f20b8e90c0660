//! DFA minimization by Hopcroft's partition refinement.
//!
//! The input is a flat table of `n` states by `k` classes whose missing transitions are
//! [`DEAD`]: an implicit sink no state is equivalent to, since every listed state can
//! still reach an accepting one (the table is live-pruned). Starting from {accepting},
//! {non-accepting}, a block `B` taken from the worklist splits every block `Y` whose
//! states disagree on whether class `c` leads into `B`; of the two halves, the smaller is
//! relabelled and queued. Each state is relabelled O(log n) times, and each relabelling
//! costs its in-degree, so the whole is O(k n log n) where Moore's refinement, which
//! rehashes every state each round, is O(k n²) on long chains of states.
//!
//! The sink never enters the worklist: with a total transition function the universe
//! splits nothing, so stability with respect to every other initial block implies it for
//! the sink's block too. Transitions into the sink are simply never inverted.
//!
//! Invariant: states are in the same final block iff no byte string tells them apart
//! (the coarsest partition compatible with acceptance, which is unique).

use crate::util::table::DEAD;

/// Block of each of the `accepting.len()` states in the coarsest stable partition.
pub fn coarsest_partition(table: &[u32], accepting: &[bool], k: usize) -> Vec<u32> {
    let n = accepting.len();
    let inv = Inverse::new(table, n, k);
    let mut p = Partition::new(accepting);
    let mut work: Vec<u32> = (0..p.num_blocks() as u32).collect();
    let mut in_work = vec![true; p.num_blocks()];
    let mut members: Vec<u32> = Vec::new();
    let mut buckets: Vec<Vec<u32>> = vec![Vec::new(); k];
    let mut used: Vec<usize> = Vec::new();
    while let Some(b) = work.pop() {
        in_work[b as usize] = false;
        members.clear();
        members.extend_from_slice(p.members(b));
        for &t in &members {
            for (c, s) in inv.of(t) {
                if buckets[c].is_empty() {
                    used.push(c);
                }
                buckets[c].push(s);
            }
        }
        for &c in &used {
            for &s in &buckets[c] {
                p.mark(s);
            }
            buckets[c].clear();
            for nb in p.split_marked() {
                // The new block is the smaller half: queue it (its sibling is queued
                // already, or was a splitter of which this is the smaller part).
                in_work.push(true);
                work.push(nb);
            }
        }
        used.clear();
    }
    p.block
}

/// Reversed transitions grouped by target: `(class, source)` pairs into each state.
struct Inverse {
    off: Vec<u32>,
    src: Vec<u32>,
    cls: Vec<u8>,
}

impl Inverse {
    fn new(table: &[u32], n: usize, k: usize) -> Self {
        let mut off = vec![0u32; n + 1];
        for &t in table {
            if t != DEAD {
                off[t as usize + 1] += 1;
            }
        }
        for i in 0..n {
            off[i + 1] += off[i];
        }
        let total = off[n] as usize;
        let mut fill = off.clone();
        let mut src = vec![0u32; total];
        let mut cls = vec![0u8; total];
        for (i, &t) in table.iter().enumerate() {
            if t != DEAD {
                let at = fill[t as usize] as usize;
                src[at] = (i / k) as u32;
                cls[at] = (i % k) as u8;
                fill[t as usize] += 1;
            }
        }
        Inverse { off, src, cls }
    }

    fn of(&self, t: u32) -> impl Iterator<Item = (usize, u32)> + '_ {
        let r = self.off[t as usize] as usize..self.off[t as usize + 1] as usize;
        self.cls[r.clone()]
            .iter()
            .zip(&self.src[r])
            .map(|(&c, &s)| (c as usize, s))
    }
}

/// Blocks as contiguous runs of a permutation of the states; the marked states of a
/// block sit at the front of its run.
struct Partition {
    elems: Vec<u32>,
    loc: Vec<u32>,
    block: Vec<u32>,
    start: Vec<u32>,
    end: Vec<u32>,
    marked: Vec<u32>,
    touched: Vec<u32>,
}

impl Partition {
    /// {accepting}, {non-accepting}, leaving out an empty one.
    fn new(accepting: &[bool]) -> Self {
        let n = accepting.len();
        let mut elems: Vec<u32> = (0..n as u32).filter(|&s| accepting[s as usize]).collect();
        let n_acc = elems.len();
        elems.extend((0..n as u32).filter(|&s| !accepting[s as usize]));
        let mut bounds = vec![0u32];
        if n_acc > 0 && n_acc < n {
            bounds.push(n_acc as u32);
        }
        if n > 0 {
            bounds.push(n as u32);
        }
        let blocks = bounds.len() - 1;
        let mut block = vec![0u32; n];
        let mut loc = vec![0u32; n];
        for b in 0..blocks {
            for i in bounds[b]..bounds[b + 1] {
                let s = elems[i as usize] as usize;
                block[s] = b as u32;
                loc[s] = i;
            }
        }
        Partition {
            elems,
            loc,
            block,
            start: bounds[..blocks].to_vec(),
            end: bounds[1..].to_vec(),
            marked: vec![0; blocks],
            touched: Vec::new(),
        }
    }

    fn num_blocks(&self) -> usize {
        self.start.len()
    }

    fn members(&self, b: u32) -> &[u32] {
        &self.elems[self.start[b as usize] as usize..self.end[b as usize] as usize]
    }

    /// Move `s` to the marked front of its block (once).
    fn mark(&mut self, s: u32) {
        let b = self.block[s as usize] as usize;
        let i = self.loc[s as usize];
        let j = self.start[b] + self.marked[b];
        if i < j {
            return;
        }
        let other = self.elems[j as usize];
        self.elems.swap(i as usize, j as usize);
        self.loc[other as usize] = i;
        self.loc[s as usize] = j;
        if self.marked[b] == 0 {
            self.touched.push(b as u32);
        }
        self.marked[b] += 1;
    }

    /// Split every block holding both marked and unmarked states; the smaller half
    /// becomes a new block. Returns the new blocks.
    fn split_marked(&mut self) -> Vec<u32> {
        let mut created = Vec::new();
        for b in std::mem::take(&mut self.touched) {
            let b = b as usize;
            let m = self.marked[b];
            self.marked[b] = 0;
            let size = self.end[b] - self.start[b];
            if m == size {
                continue;
            }
            let nb = self.start.len() as u32;
            let cut = self.start[b] + m;
            if m <= size - m {
                self.start.push(self.start[b]);
                self.end.push(cut);
                self.start[b] = cut;
            } else {
                self.start.push(cut);
                self.end.push(self.end[b]);
                self.end[b] = cut;
            }
            self.marked.push(0);
            let (lo, hi) = (self.start[nb as usize], self.end[nb as usize]);
            for i in lo..hi {
                self.block[self.elems[i as usize] as usize] = nb;
            }
            created.push(nb);
        }
        created
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Moore's refinement, the obviously correct O(k n²) reference.
    fn moore(table: &[u32], accepting: &[bool], k: usize) -> Vec<u32> {
        let n = accepting.len();
        let mut block: Vec<u32> = accepting.iter().map(|&a| a as u32).collect();
        let mut count = 0;
        loop {
            let mut ids = std::collections::HashMap::new();
            let next: Vec<u32> = (0..n)
                .map(|s| {
                    let mut sig = vec![block[s]];
                    for &t in &table[s * k..(s + 1) * k] {
                        sig.push(if t == DEAD { DEAD } else { block[t as usize] });
                    }
                    let len = ids.len() as u32;
                    *ids.entry(sig).or_insert(len)
                })
                .collect();
            block = next;
            if ids.len() == count {
                return block;
            }
            count = ids.len();
        }
    }

    /// Transitions into states that cannot reach acceptance become DEAD, as in a
    /// [`crate::ByteDfa`].
    fn live_pruned(mut table: Vec<u32>, accepting: &[bool], k: usize) -> Vec<u32> {
        let n = accepting.len();
        let mut live = accepting.to_vec();
        loop {
            let before = live.iter().filter(|&&l| l).count();
            for s in 0..n {
                if table[s * k..(s + 1) * k]
                    .iter()
                    .any(|&t| t != DEAD && live[t as usize])
                {
                    live[s] = true;
                }
            }
            if live.iter().filter(|&&l| l).count() == before {
                break;
            }
        }
        for (i, t) in table.iter_mut().enumerate() {
            if !live[i / k] || (*t != DEAD && !live[*t as usize]) {
                *t = DEAD;
            }
        }
        table
    }

    fn same_partition(a: &[u32], b: &[u32]) -> bool {
        (0..a.len()).all(|i| (0..a.len()).all(|j| (a[i] == a[j]) == (b[i] == b[j])))
    }

    #[test]
    fn agrees_with_moore_on_random_tables() {
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut rand = move |m: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % m
        };
        for _ in 0..300 {
            let n = 1 + rand(40) as usize;
            let k = 1 + rand(4) as usize;
            let table: Vec<u32> = (0..n * k)
                .map(|_| {
                    if rand(4) == 0 {
                        DEAD
                    } else {
                        rand(n as u64) as u32
                    }
                })
                .collect();
            let accepting: Vec<bool> = (0..n).map(|_| rand(3) == 0).collect();
            let table = live_pruned(table, &accepting, k);
            let h = coarsest_partition(&table, &accepting, k);
            assert!(same_partition(&h, &moore(&table, &accepting, k)));
        }
    }

    #[test]
    fn a_long_chain_stays_a_chain() {
        // a{n}: n+1 distinct states, the worst case for Moore (n rounds).
        let n = 2000;
        let mut table = vec![DEAD; n + 1];
        for (s, t) in table.iter_mut().enumerate().take(n) {
            *t = s as u32 + 1;
        }
        let mut acc = vec![false; n + 1];
        acc[n] = true;
        let b = coarsest_partition(&table, &acc, 1);
        let mut distinct = b.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), n + 1);
    }
}
