//! What a lazy index's first visits mutate: its DFA, the numbering of token-level
//! states, scratch buffers and counters ([`Engine`]); the index's own sits behind its
//! mutex, each helper has one (`super::helpers`).

use std::time::Instant;

use rustc_hash::FxHashMap;

use crate::dfa::lazy::LazyDfa;
use crate::util::table::Stepper;
use crate::walk::masks::{joint_classes, prune, walk, walk_skipping, MaskSink, ProductScratch};
use crate::walk::slices::Prepared;
use crate::walk::survival::{searched_survival, take_whole, Survival};
use crate::walk::walktrie::WalkTrie;

use super::LAZY_MAX_PAIRS;

/// Transitions a mask's survival search may compute beyond those known
/// ([`searched_survival`]): a loop one byte away needs a few dozen; a state
/// where strings die soon gives up within this many.
const SEARCH_BUDGET: usize = 64;

/// ASCII bytes a survival covers for a mask walk to test it (half of them).
const BROAD_ASCII: u32 = 64;

/// Survivals a mask walk tests (each is a test per trie node).
const MAX_SURVIVALS: usize = 4;

/// What first visits mutate: the DFA, the numbering, scratch buffers and counters.
pub(super) struct Engine {
    pub(super) dfa: LazyDfa,
    /// DFA row -> token-level state, for the rows that are one.
    pub(super) number: FxHashMap<u32, u32>,
    pub(super) stack: Vec<u32>,
    pub(super) product: ProductScratch,
    pub(super) joint: Vec<Vec<u8>>,
    pub(super) masks_computed: u64,
    pub(super) trie_walks: u64,
    pub(super) nodes_visited: u64,
    pub(super) slice_tests: u64,
    pub(super) slice_hits: u64,
    pub(super) product_pairs: u64,
    pub(super) run_verdicts: u64,
    pub(super) pruned_masks: u64,
    /// Subtrees walks took whole where their state survives them ([`Engine::walk_surviving`]).
    pub(super) survived_subtrees: u64,
    pub(super) kept_subtrees: u64,
    /// DFA row -> whether every run of the slices' class up to their longest token
    /// keeps it alive (asked by pruning walks, answered once per row).
    pub(super) keeps_runs: FxHashMap<u32, bool>,
    pub(super) verdict_ns: u64,
    pub(super) walk_ns: u64,
    pub(super) mask_ns: u64,
}

impl Engine {
    pub(super) fn new(dfa: LazyDfa, prepared: &Prepared) -> Engine {
        let joint = joint_classes(&prepared.family, &dfa.dfa().classes);
        Engine {
            dfa,
            number: FxHashMap::from_iter([(0, 0)]),
            stack: Vec::new(),
            product: ProductScratch::with_max_pairs(LAZY_MAX_PAIRS),
            joint,
            masks_computed: 0,
            trie_walks: 0,
            nodes_visited: 0,
            slice_tests: 0,
            slice_hits: 0,
            product_pairs: 0,
            run_verdicts: 0,
            pruned_masks: 0,
            survived_subtrees: 0,
            kept_subtrees: 0,
            keeps_runs: FxHashMap::default(),
            verdict_ns: 0,
            walk_ns: 0,
            mask_ns: 0,
        }
    }

    /// Walk `trie` from `row` into `mask`, counted and timed.
    pub(super) fn walk(&mut self, trie: &WalkTrie, row: u32, mask: &mut [u32]) {
        let t0 = Instant::now();
        self.nodes_visited += walk(
            &mut self.dfa,
            trie,
            row,
            &mut MaskSink(mask),
            &mut self.stack,
        );
        self.trie_walks += 1;
        self.walk_ns += t0.elapsed().as_nanos() as u64;
    }

    /// The broad survivals the automaton vouches for at `row` (text, a comment's
    /// inside: at least [`BROAD_ASCII`] ASCII bytes; a narrow one, digits or a name's
    /// letters, takes few subtrees and its test costs a walk at every node), at most
    /// [`MAX_SURVIVALS`]; None where it wants no survival skips.
    pub(super) fn broad_survivals(&mut self, row: u32) -> Option<Vec<Survival>> {
        let mut survivals = self.dfa.survivals(row)?;
        survivals.retain(|s| s.ascii.count_ones() >= BROAD_ASCII);
        survivals.truncate(MAX_SURVIVALS);
        Some(survivals)
    }

    /// Walk the full trie from `row` into `mask`, taking whole the subtrees whose tokens
    /// the state surely survives ([`crate::walk::survival`]): `survivals` (from
    /// [`Engine::broad_survivals`]), else a search of the table (a loop of single
    /// bytes); a plain walk where nothing vouches.
    pub(super) fn walk_surviving(
        &mut self,
        p: &Prepared,
        row: u32,
        survivals: Option<Vec<Survival>>,
        mask: &mut [u32],
    ) {
        let t0 = Instant::now();
        let Some(mut survivals) = survivals else {
            return self.walk(&p.full, row, mask);
        };
        if survivals.is_empty() {
            let searched = searched_survival(&mut self.dfa, row, SEARCH_BUDGET);
            survivals.extend(searched.filter(|s| s.ascii.count_ones() >= BROAD_ASCII));
        }
        self.walk_ns += t0.elapsed().as_nanos() as u64;
        if survivals.is_empty() {
            return self.walk(&p.full, row, mask);
        }
        let (tb, trie) = (&p.full_bytes, &p.full);
        let mut taken = 0u64;
        if !take_whole(&survivals, tb, trie, 0, mask) {
            self.nodes_visited += walk_skipping(
                &mut self.dfa,
                trie,
                row,
                &mut MaskSink(mask),
                &mut self.stack,
                |_, i, sink| {
                    let whole = take_whole(&survivals, tb, trie, i, sink.0);
                    taken += whole as u64;
                    whole
                },
            );
        } else {
            taken = 1;
        }
        self.survived_subtrees += taken;
        self.trie_walks += 1;
        self.walk_ns += t0.elapsed().as_nanos() as u64;
    }

    /// Prune the slices' tokens from `row` in `mask` ([`crate::walk::masks::prune`]): a subtree is kept
    /// whole where the NFA's run bounds show that every run of the slices' class as long
    /// as their longest token keeps the state alive (the tokens below a node whose bytes
    /// are whole characters are such runs after it).
    pub(super) fn prune(&mut self, p: &Prepared, row: u32, mask: &mut [u32]) {
        let Some(tiers) = &p.family.tiers else {
            return;
        };
        let t0 = Instant::now();
        let need = tiers.decisive();
        let (keeps_runs, kept) = (&mut self.keeps_runs, &mut self.kept_subtrees);
        let mut keeps_all = |dfa: &mut LazyDfa, r: u32| {
            let keeps = *keeps_runs
                .entry(r)
                .or_insert_with(|| dfa.run_lower(r, &tiers.class, need + 1).unwrap_or(0) >= need);
            *kept += keeps as u64;
            keeps
        };
        self.nodes_visited += prune(
            &mut self.dfa,
            &p.sliced,
            &p.sliced_ranges,
            row,
            mask,
            &mut self.stack,
            &mut keeps_all,
        );
        self.trie_walks += 1;
        self.walk_ns += t0.elapsed().as_nanos() as u64;
    }
}
