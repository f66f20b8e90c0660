//! Stage 5 of the `canonical_literals` build (see [`crate::eager::canonical`]): the walked
//! token-level states stored as a table, each distinct mask once and each state's
//! transitions as one default target plus the exceptions.

use std::time::Instant;

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::Walked;
use crate::eager::build::{mask_hash, Limits, MaskStore, Stats, CHUNK};
use crate::eager::canonical::classtrie::{ClassTrie, NONE};
use crate::error::Error;
use crate::util::bitmask::set_bit;
use crate::vocab::Vocabulary;

/// The stored form of the states' masks and transitions.
pub(super) struct Table {
    pub(super) mask_of: Vec<u32>,
    pub(super) masks: Vec<u32>,
    pub(super) default_next: Vec<u32>,
    pub(super) exc_off: Vec<u32>,
    pub(super) exc: Vec<(u32, u32)>,
    pub(super) over_off: Vec<u32>,
    pub(super) over: Vec<(u32, u32)>,
}

/// Stage 5, the minimized table: each distinct mask stored once, and the transitions of
/// a state as one default target plus the groups and ghost tokens that go elsewhere.
pub(super) fn table_stage(
    walked: &Walked,
    trie: &ClassTrie,
    vocab: &Vocabulary,
    limits: &Limits,
    stats: &mut Stats,
) -> Result<Table, Error> {
    let t = Instant::now();
    let (mask_of, masks, distinct) = distinct_masks(walked, trie, vocab, limits)?;
    let mut default_next = Vec::with_capacity(walked.rows.len());
    let mut exc_off = vec![0u32];
    let mut exc = Vec::new();
    for r in &walked.rows {
        let d = most_common_target(r);
        default_next.push(d);
        exc.extend(r.iter().filter(|p| p.1 != d));
        exc_off.push(exc.len() as u32);
    }
    let mut over_off = vec![0u32];
    let mut over = Vec::new();
    for o in &walked.overs {
        over.extend_from_slice(o);
        over_off.push(over.len() as u32);
    }
    stats.masks_s = t.elapsed().as_secs_f64();
    stats.states = walked.rows.len();
    stats.distinct_masks = distinct;
    stats.transitions_stored = exc.len() + over.len() + default_next.len();
    Ok(Table {
        mask_of,
        masks,
        default_next,
        exc_off,
        exc,
        over_off,
        over,
    })
}

/// Each state's mask (its allowed groups' tokens, EOS where accepting) built in parallel
/// a chunk at a time, and stored once ([`MaskStore`]). Returns each state's mask number,
/// the masks laid end to end, and how many there are.
fn distinct_masks(
    walked: &Walked,
    trie: &ClassTrie,
    vocab: &Vocabulary,
    limits: &Limits,
) -> Result<(Vec<u32>, Vec<u32>, usize), Error> {
    let words = vocab.mask_words();
    let eos = vocab.eos_id();
    let mut store = MaskStore::new(words, limits.mask_bytes);
    let mut mask_of = Vec::with_capacity(walked.rows.len());
    let states: Vec<usize> = (0..walked.rows.len()).collect();
    for chunk in states.chunks(CHUNK) {
        let built: Vec<(Vec<u32>, u64)> = chunk
            .par_iter()
            .map(|&s| {
                let mut m = vec![0u32; words];
                for &(g, _) in &walked.rows[s] {
                    for &tok in trie.group(g) {
                        set_bit(&mut m, tok);
                    }
                }
                if walked.accepting[s] {
                    set_bit(&mut m, eos);
                }
                let h = mask_hash(&m);
                (m, h)
            })
            .collect();
        for (m, h) in built {
            mask_of.push(store.intern(&m, h)?);
        }
    }
    let n = store.len();
    Ok((mask_of, store.into_masks(), n))
}

fn most_common_target(row: &[(u32, u32)]) -> u32 {
    let mut counts: FxHashMap<u32, usize> = FxHashMap::default();
    for p in row {
        *counts.entry(p.1).or_default() += 1;
    }
    counts
        .into_iter()
        .max_by_key(|&(next, n)| (n, std::cmp::Reverse(next)))
        .map(|(next, _)| next)
        .unwrap_or(NONE)
}
