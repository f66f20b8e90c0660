//! Mask walks: a walk trie read from one automaton state, and the slice decision.
//!
//! [`walk`] visits the trie in depth-first layout order keeping, per depth, the state
//! reached by the node's bytes (`stack[depth]`); a node whose byte leads to [`DEAD`]
//! skips its whole subtree, and every token at a node reached alive goes to the
//! [`Sink`]. One step is a node read, a class lookup and a table read; a miss in a lazily
//! built table computes the transition ([`Stepper::resolve`]).
//!
//! [`classify`] decides, for every slice at once, whether the state allows all of its
//! tokens, none of them, or some (see [`crate::walk::slices`]). It is a search over pairs
//! (family state, automaton state) reachable from (0, start), following only automaton
//! states that are alive. With `F` the family automaton, `A_k` its states where a string
//! falls in slice `k`, and `toward_k` those from which `A_k` is reachable:
//! - *all*: no reachable pair has a byte leading the automaton to `DEAD` and the family
//!   into `toward_k`. Then every prefix of every string of `A_k` keeps a match reachable
//!   (a prefix reaching `DEAD` would be such a byte, read from a reachable pair), and the
//!   slice's tokens are strings of `A_k`. Conversely such a byte gives a string of `A_k`
//!   whose prefix dies, so the test is not merely sufficient but exact for `A_k`.
//! - *none*: no reachable pair with a live automaton state is in `A_k`; an allowed token
//!   of the slice would give one.
//!
//! Cost: pairs x joint classes steps, capped by [`MAX_PAIRS`] (beyond it every slice is
//! "some", which only costs walks). The search stops as soon as no slice can be "all":
//! "none" only spares walking a slice's trie when another slice is taken whole (with no
//! slice taken, one walk of the full trie is cheapest).
//!
//! The exact index also needs where each slice token leads. When asked, [`classify`]
//! records the automaton state paired with each family state where some token ends; if
//! that pairing is one-to-one, it is where every token ending there leads (the family
//! state after a token then determines the automaton state), and these are the slice's
//! next states. A slice whose pairing is not is reported "some".

use rustc_hash::{FxHashMap, FxHashSet};

use crate::util::table::DEAD;
use crate::util::table::{DfaTable, Stepper, UNKNOWN};
use crate::walk::slices::{Family, NO_SLICE};
use crate::walk::walktrie::{TokenRanges, WalkTrie, MULTI, NO_TOKEN};

/// Product pairs explored before a containment test gives up.
pub const MAX_PAIRS: usize = 4096;

/// Receives each allowed token and the state its bytes lead to.
pub trait Sink {
    fn token(&mut self, tok: u32, next: u32);
}

/// Sets the allowed tokens' bits.
pub struct MaskSink<'a>(pub &'a mut [u32]);

impl Sink for MaskSink<'_> {
    #[inline(always)]
    fn token(&mut self, tok: u32, _next: u32) {
        self.0[(tok >> 5) as usize] |= 1 << (tok & 31);
    }
}

/// Walk `trie` from `start` into `sink`; returns the number of nodes visited.
pub fn walk<S: Stepper, K: Sink>(
    dfa: &mut S,
    trie: &WalkTrie,
    start: u32,
    sink: &mut K,
    stack: &mut Vec<u32>,
) -> u64 {
    walk_skipping(dfa, trie, start, sink, stack, |_, _, _| false)
}

/// [`walk`], offering each node first to `skip(parent state, node, sink)`, which may
/// take the node's subtree whole (reporting its tokens itself) and return true; the walk
/// then passes over it (the survival skips of [`crate::walk::survival`]).
pub fn walk_skipping<S: Stepper, K: Sink>(
    dfa: &mut S,
    trie: &WalkTrie,
    start: u32,
    sink: &mut K,
    stack: &mut Vec<u32>,
    mut skip: impl FnMut(u32, usize, &mut K) -> bool,
) -> u64 {
    if stack.len() <= trie.max_depth {
        stack.resize(trie.max_depth + 1, 0);
    }
    stack[0] = start;
    let mut p = 1;
    let mut visited = 0u64;
    // The table is borrowed for a run of known transitions; a miss ends the run, is
    // resolved, and the walk resumes at the same node.
    while let Some((row, class)) = walk_run(
        dfa.dfa(),
        trie,
        sink,
        stack,
        &mut p,
        &mut visited,
        &mut skip,
    ) {
        dfa.resolve(row, class);
    }
    visited
}

/// A *pruning* walk of `trie` from `start`, into a mask that already holds every token of
/// the trie: it clears the tokens that are not allowed. A node whose byte leads to
/// [`DEAD`] clears its subtree's tokens (`ranges`) and is skipped; a node whose byte
/// string is whole characters and whose state `keeps_all` vouches for (every token below
/// it stays alive) is skipped with its tokens kept; any other node is entered. The mask
/// then holds exactly the allowed tokens of the trie, as a [`walk`] would have set them,
/// while a state that keeps most tokens alive costs only the nodes above where it is
/// vouched for. Returns the number of nodes visited.
pub fn prune<S: Stepper>(
    dfa: &mut S,
    trie: &WalkTrie,
    ranges: &TokenRanges,
    start: u32,
    mask: &mut [u32],
    stack: &mut Vec<u32>,
    keeps_all: &mut impl FnMut(&mut S, u32) -> bool,
) -> u64 {
    if stack.len() <= trie.max_depth {
        stack.resize(trie.max_depth + 1, 0);
    }
    stack[0] = start;
    let (nodes, mut i, mut visited) = (&trie.nodes[..], 1, 0u64);
    while i < nodes.len() {
        let n = nodes[i];
        visited += 1;
        let class = dfa.dfa().classes[n.byte as usize];
        let next = dfa.step(stack[n.depth as usize - 1], class);
        if next == DEAD {
            for &t in ranges.below(trie, i) {
                mask[(t >> 5) as usize] &= !(1 << (t & 31));
            }
            i += n.subtree as usize;
        } else if n.whole && n.subtree > 1 && keeps_all(dfa, next) {
            i += n.subtree as usize;
        } else {
            stack[n.depth as usize] = next;
            i += 1;
        }
    }
    visited
}

/// Walk from node `*p` while every transition met is known; `Some((row, class))` at the
/// first unknown one (the node is not consumed), `None` at the end of the trie.
#[inline(always)]
fn walk_run<K: Sink>(
    dfa: &DfaTable,
    trie: &WalkTrie,
    sink: &mut K,
    stack: &mut [u32],
    p: &mut usize,
    visited: &mut u64,
    skip: &mut impl FnMut(u32, usize, &mut K) -> bool,
) -> Option<(u32, u8)> {
    let (table, classes, nodes) = (&dfa.table[..], &dfa.classes, &trie.nodes[..]);
    let mut i = *p;
    let mut count = 0u64;
    let mut miss = None;
    while i < nodes.len() {
        let n = nodes[i];
        let parent = stack[n.depth as usize - 1];
        if skip(parent, i, sink) {
            count += 1;
            i += n.subtree as usize;
            continue;
        }
        let class = classes[n.byte as usize];
        let next = table[parent as usize + class as usize];
        if next >= UNKNOWN {
            if next == UNKNOWN {
                miss = Some((parent, class));
                break;
            }
            count += 1;
            i += n.subtree as usize;
            continue;
        }
        count += 1;
        stack[n.depth as usize] = next;
        if n.tok != NO_TOKEN {
            if n.tok & MULTI == 0 {
                sink.token(n.tok, next);
            } else {
                for &t in trie.multi_tokens(n.tok) {
                    sink.token(t, next);
                }
            }
        }
        i += 1;
    }
    *p = i;
    *visited += count;
    miss
}

/// Per class of the family automaton, the distinct classes of the automaton its bytes
/// fall in.
pub fn joint_classes(family: &Family, classes: &[u8; 256]) -> Vec<Vec<u8>> {
    family
        .class_bytes
        .iter()
        .map(|bytes| {
            let mut v: Vec<u8> = bytes.iter().map(|&b| classes[b as usize]).collect();
            v.sort_unstable();
            v.dedup();
            v
        })
        .collect()
}

/// Reusable buffers of [`classify`], and its budget.
pub struct ProductScratch {
    /// Pairs a search explores before it gives up ([`MAX_PAIRS`] by default).
    pub max_pairs: usize,
    seen: FxHashSet<(u32, u32)>,
    stack: Vec<(u32, u32)>,
    /// Family state -> the automaton state paired with it (`DEAD` once there are two).
    end_row: FxHashMap<u32, u32>,
}

impl Default for ProductScratch {
    fn default() -> Self {
        ProductScratch::with_max_pairs(MAX_PAIRS)
    }
}

impl ProductScratch {
    pub fn with_max_pairs(max_pairs: usize) -> Self {
        ProductScratch {
            max_pairs,
            seen: FxHashSet::default(),
            stack: Vec::new(),
            end_row: FxHashMap::default(),
        }
    }
}

/// Which slices a state allows entirely (`all`) or not at all (`none`), as bit sets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Verdict {
    pub all: u64,
    pub none: u64,
    /// Pairs explored.
    pub pairs: usize,
    /// The search stopped at its pair budget (every slice is then "some").
    pub gave_up: bool,
}

/// Classify every slice from `start` (see the module doc), exploring at most the
/// scratch's `max_pairs` pairs (then `gave_up`, every slice "some"); the slices in `ignore` are
/// left undecided ("some"), and the search does not go where only they lie ahead. With
/// `ends`, also push the (slice, next state) pairs of the slices found "all", which are
/// then only those whose next states are known.
pub fn classify<S: Stepper>(
    dfa: &mut S,
    family: &Family,
    joint: &[Vec<u8>],
    start: u32,
    ignore: u64,
    ends: Option<&mut Vec<(u8, u32)>>,
    scratch: &mut ProductScratch,
) -> Verdict {
    let ProductScratch {
        max_pairs,
        seen,
        stack,
        end_row,
    } = scratch;
    seen.clear();
    stack.clear();
    end_row.clear();
    seen.insert((0, start));
    stack.push((0, start));
    let (mut dead_toward, mut reached, mut ambiguous) = (0u64, 0u64, 0u64);
    while let Some((a, r)) = stack.pop() {
        let k = family.slice_of[a as usize];
        if k != NO_SLICE {
            reached |= 1 << k;
            if ends.is_some() && family.ends[a as usize] {
                let slot = end_row.entry(a).or_insert(r);
                if *slot != r {
                    ambiguous |= 1 << k;
                }
            }
        }
        for (ck, dclasses) in joint.iter().enumerate() {
            let a2 = family.next(a, ck);
            if a2 == DEAD {
                continue;
            }
            let toward = family.toward[a2 as usize];
            if toward & !ignore == 0 {
                continue; // only ignored slices lie ahead
            }
            for &c in dclasses {
                let r2 = dfa.step(r, c);
                if r2 == DEAD {
                    dead_toward |= toward;
                    if (dead_toward | ignore) & family.every == family.every {
                        // No slice can be "all"; "none" alone does not spare a walk.
                        return Verdict {
                            pairs: seen.len(),
                            ..Verdict::default()
                        };
                    }
                } else if seen.insert((a2, r2)) {
                    if seen.len() > *max_pairs {
                        return Verdict {
                            pairs: seen.len(),
                            gave_up: true,
                            ..Verdict::default()
                        };
                    }
                    stack.push((a2, r2));
                }
            }
        }
    }
    let all = !dead_toward & !ambiguous & !ignore;
    if let Some(out) = ends {
        for (&a, &r) in end_row.iter() {
            let k = family.slice_of[a as usize];
            if all >> k & 1 == 1 {
                out.push((k, r));
            }
        }
    }
    Verdict {
        all,
        none: !reached & !ignore,
        pairs: seen.len(),
        gave_up: false,
    }
}
