//! Earley sets, the chart view over them, and the two steps: closing a set and scanning
//! a byte into the next (see the parent module for the algorithm).

use std::sync::Arc;

use rustc_hash::FxHashSet;
use tokensdfa_core::dfa::DEAD;

use super::{Compiled, Next};
use crate::error::Error;

/// The dot at `pos` in an alternative started at byte `origin`; `dfa`: the state of the
/// terminal after the dot (0 unless the dot is before a terminal with bytes read).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Item {
    pub pos: u32,
    pub origin: u32,
    pub dfa: u32,
}

/// The closed items at one byte position.
#[derive(Debug, Default, Clone)]
pub(crate) struct Set {
    items: Vec<Item>,
    /// Indices of the items whose dot is before a terminal.
    scanning: Vec<u32>,
    /// `(rule, item index)` of the items whose dot is before a rule, sorted.
    waiting: Vec<(u32, u32)>,
    accepting: bool,
    /// The items scanned into this set (the first `kernel`; 0 in the initial set): the
    /// terminal matches that have read at least one byte. Greedy lexing reads them.
    kernel: u32,
}

impl Set {
    /// Whether a start alternative is complete with origin 0: the prefix is a sentence.
    pub fn accepting(&self) -> bool {
        self.accepting
    }

    pub fn memory_bytes(&self) -> usize {
        self.items.capacity() * std::mem::size_of::<Item>()
            + self.scanning.capacity() * 4
            + self.waiting.capacity() * 8
            + std::mem::size_of::<Set>()
    }

    /// The item at `index` (as `waiting_on` names it).
    pub(crate) fn item(&self, index: u32) -> Item {
        self.items[index as usize]
    }

    /// The items whose dot is before a terminal.
    pub(crate) fn scanning(&self) -> impl Iterator<Item = Item> + '_ {
        self.scanning.iter().map(|&k| self.items[k as usize])
    }

    /// Items held.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether the set has no item: its prefix is dead.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Sort the kernel (a set just scanned, not closed yet: all its items) into the one
    /// order every equal kernel has, and return it: the key the pushdown mode hash-conses
    /// sets by (`crate::pushdown`).
    pub fn sorted_kernel(&mut self) -> &[Item] {
        let k = self.kernel as usize;
        self.items[..k].sort_unstable();
        &self.items[..k]
    }

    fn clear(&mut self) {
        self.items.clear();
        self.scanning.clear();
        self.waiting.clear();
        self.accepting = false;
        self.kernel = 0;
    }

    /// The items of the closed set waiting on `rule`: `(rule, index into items)`.
    pub(crate) fn waiting_on(&self, rule: u32) -> &[(u32, u32)] {
        let lo = self.waiting.partition_point(|&(r, _)| r < rule);
        let hi = self.waiting.partition_point(|&(r, _)| r <= rule);
        &self.waiting[lo..hi]
    }
}

/// Where the sets items' origins name are found: a chart by byte position, or the
/// pushdown mode's hash-consed sets by number (`crate::pushdown`).
pub(crate) trait Origins {
    /// The closed set `origin` names (never the set being closed).
    fn origin(&self, origin: u32) -> &Set;

    /// An item of set `set` with origin `origin`, as named from a later set (the
    /// pushdown mode names a set's own position by a marker inside it; a chart's
    /// positions are absolute).
    fn rebased(&self, set: u32, origin: u32) -> u32 {
        let _ = set;
        origin
    }
}

impl Origins for Chart<'_> {
    fn origin(&self, origin: u32) -> &Set {
        self.get(origin as usize)
    }
}

/// The sets before a position: shared closed sets (`base`), then a stack of this
/// walk's own sets, reused between trie branches (`pool` keeps popped ones' buffers).
pub(crate) struct Chart<'a> {
    base: &'a [Arc<Set>],
    own: Vec<Set>,
    pool: Vec<Set>,
}

impl<'a> Chart<'a> {
    /// `base` must be non-empty: at least the initial set.
    pub fn new(base: &'a [Arc<Set>]) -> Self {
        Chart {
            base,
            own: Vec::new(),
            pool: Vec::new(),
        }
    }

    /// Number of sets: one more than the bytes read.
    pub fn len(&self) -> usize {
        self.base.len() + self.own.len()
    }

    fn get(&self, i: usize) -> &Set {
        if i < self.base.len() {
            &self.base[i]
        } else {
            &self.own[i - self.base.len()]
        }
    }

    pub fn last(&self) -> &Set {
        self.get(self.len() - 1)
    }

    /// Drop own sets down to `len` sets in all (never below the base).
    pub fn truncate(&mut self, len: usize) {
        while self.len() > len.max(self.base.len()) {
            let s = self.own.pop().unwrap();
            self.pool.push(s);
        }
    }

    /// The own sets, in order (what a new token-level state keeps).
    pub fn into_own(self) -> Vec<Set> {
        self.own
    }
}

/// What a recognizer keeps between sets to deduplicate items: per dotted position, the
/// stamp of the last set that held an item there and that item's origin and terminal
/// state (most positions hold one item per set: those need no hashing), and a hash set
/// for the items after the first at a position; and per rule whether the set has
/// predicted it yet. Kept across calls by the pushdown mode (its tables grow once).
#[derive(Debug, Default, Clone)]
pub(crate) struct Scratch {
    seen: FxHashSet<Item>,
    /// Per dotted position: [stamp, origin, terminal state] of its first item here.
    first: Vec<[u32; 3]>,
    /// Per rule, the stamp of the last set it was predicted in.
    predicted: Vec<u32>,
    stamp: u32,
}

impl Scratch {
    /// Start deduplicating a new set's items.
    fn begin(&mut self, positions: usize) {
        self.seen.clear();
        if self.first.is_empty() {
            // zeroed pages: a grammar's positions run to tens of thousands, few touched
            self.first = vec![[0; 3]; positions];
        } else if self.first.len() < positions {
            self.first.resize(positions, [0; 3]);
        }
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.first.fill([0; 3]);
            self.predicted.fill(0);
            self.stamp = 1;
        }
    }

    /// Whether `rule` is predicted in this set for the first time, noting it (its
    /// alternatives at this set are the same items whichever item predicts it).
    #[inline]
    fn first_prediction(&mut self, rule: u32) -> bool {
        let r = rule as usize;
        if self.predicted.len() <= r {
            self.predicted.resize(r + 1, 0);
        }
        let new = self.predicted[r] != self.stamp;
        self.predicted[r] = self.stamp;
        new
    }

    /// Whether `item` is new to the set, noting it.
    #[inline]
    fn insert(&mut self, item: Item) -> bool {
        let slot = &mut self.first[item.pos as usize];
        if slot[0] != self.stamp {
            *slot = [self.stamp, item.origin, item.dfa];
            return true;
        }
        if [slot[1], slot[2]] == [item.origin, item.dfa] {
            return false;
        }
        self.seen.insert(item)
    }
}

/// The recognizer over one compiled grammar, with its item budget for one call.
pub(crate) struct Earley<'g> {
    g: &'g Compiled,
    scratch: Scratch,
    /// Items created so far in this call, and the most allowed.
    pub created: usize,
    budget: usize,
}

impl<'g> Earley<'g> {
    pub fn new(g: &'g Compiled, budget: usize) -> Self {
        Earley::with_scratch(g, budget, Scratch::default())
    }

    /// A recognizer deduplicating with `scratch` (a previous call's, given back by
    /// [`Earley::into_scratch`]).
    pub fn with_scratch(g: &'g Compiled, budget: usize, scratch: Scratch) -> Self {
        Earley {
            g,
            scratch,
            created: 0,
            budget,
        }
    }

    pub fn into_scratch(self) -> Scratch {
        self.scratch
    }

    /// The initial set: the start rule predicted at origin 0, closed.
    pub fn initial(&mut self) -> Result<Set, Error> {
        self.initial_at(&Chart::new(&[]), 0)
    }

    /// The initial set with `here` naming its own position (the pushdown mode names a
    /// set's own items' origin by a marker: `crate::pushdown`).
    pub fn initial_at(&mut self, origins: &impl Origins, here: u32) -> Result<Set, Error> {
        let mut set = Set::default();
        self.scratch.begin(self.g.next.len());
        for item in self.g.initial_items() {
            self.add(
                &mut set,
                Item {
                    origin: here,
                    ..item
                },
            )?;
        }
        self.close(origins, here, here, &mut set)?;
        Ok(set)
    }

    /// Scan `byte` from the chart's last set and push the closed result; returns false
    /// (pushing nothing) when it is empty: the prefix is dead.
    pub fn push_byte(&mut self, chart: &mut Chart<'_>, byte: u8) -> Result<bool, Error> {
        let mut set = chart.pool.pop().unwrap_or_default();
        set.clear();
        self.scan(chart.last(), byte, &mut set, |item| item.origin)?;
        if set.items.is_empty() {
            chart.pool.push(set);
            return Ok(false);
        }
        let here = chart.len() as u32;
        self.close(chart, here, 0, &mut set)?;
        chart.own.push(set);
        Ok(true)
    }

    /// Start `set` (cleared) with the kernel scanning `byte` from `prev` gives, each
    /// item's origin the one `rebase` gives for the item of `prev` (the pushdown mode
    /// names `prev`'s own position by a marker, which becomes `prev`'s number here, and
    /// then names the origin by its canonical equal); `set.kernel` is set.
    pub fn scan(
        &mut self,
        prev: &Set,
        byte: u8,
        set: &mut Set,
        mut rebase: impl FnMut(Item) -> u32,
    ) -> Result<(), Error> {
        self.scratch.begin(self.g.next.len());
        // Greedy: while a scan of the current lexeme takes `byte`, the lexeme goes on and
        // nothing that followed its end here (the closure's items) may scan.
        let scanning = if self.g.greedy && self.lexeme_goes_on(prev, byte) {
            &prev.scanning[..prev.kernel as usize]
        } else {
            &prev.scanning[..]
        };
        for &k in scanning {
            let it = prev.items[k as usize];
            let Next::Terminal(t) = self.g.next[it.pos as usize] else {
                unreachable!("a scanning item is before a terminal")
            };
            let next = self.g.dfas.next(t, it.dfa, byte);
            if next != DEAD {
                let origin = rebase(it);
                self.add(
                    set,
                    Item {
                        dfa: next,
                        origin,
                        ..it
                    },
                )?;
            }
        }
        set.kernel = set.items.len() as u32;
        Ok(())
    }

    /// Whether some scan of the set's kernel (the lexeme being read: in greedy mode all
    /// its scans started at one position) takes `byte`.
    fn lexeme_goes_on(&self, set: &Set, byte: u8) -> bool {
        set.items[..set.kernel as usize].iter().any(|it| {
            let Next::Terminal(t) = self.g.next[it.pos as usize] else {
                unreachable!("a kernel item is before a terminal")
            };
            self.g.dfas.next(t, it.dfa, byte) != DEAD
        })
    }

    fn add(&mut self, set: &mut Set, item: Item) -> Result<(), Error> {
        if self.scratch.insert(item) {
            set.items.push(item);
            self.created += 1;
            if self.created > self.budget {
                return Err(Error::Budget(format!(
                    "one step of the grammar reference needed {} Earley items, more than the \
                     budget of {} (raise item_budget, or simplify the grammar)",
                    self.created, self.budget
                )));
            }
        }
        Ok(())
    }

    /// Add `item`, derived by the closure: noting whether the set expects a lexeme of
    /// the grammar proper (see the module doc's trailing ignore).
    fn derive(&mut self, set: &mut Set, item: Item, expects: &mut bool) -> Result<(), Error> {
        *expects |= self.g.expects[item.pos as usize];
        self.add(set, item)
    }

    /// Close `set`, the set at position `here` (`origins` holds the sets before it):
    /// prediction, terminal acceptance and completion until nothing new, then index it.
    /// A completed start alternative with origin `start` (the initial set's name) makes
    /// it accepting. The tail rule (if any) is predicted only once the rest is closed and
    /// the set expects a lexeme (see the module doc). Every origin but `here` is a set
    /// `origins` holds.
    pub fn close(
        &mut self,
        origins: &impl Origins,
        here: u32,
        start: u32,
        set: &mut Set,
    ) -> Result<(), Error> {
        let g = self.g;
        // the initial set's items (no kernel) are all derived: the start alternatives
        let mut expects = set.kernel == 0 && set.items.iter().any(|it| g.expects[it.pos as usize]);
        let mut held: Vec<Item> = Vec::new();
        let mut tail_open = false;
        let mut k = 0;
        loop {
            while k < set.items.len() {
                let it = set.items[k];
                k += 1;
                let advanced = Item {
                    pos: it.pos + 1,
                    origin: it.origin,
                    dfa: 0,
                };
                match g.next[it.pos as usize] {
                    Next::Rule(b) if !tail_open && Some(b) == g.tail => held.push(advanced),
                    Next::Rule(b) => {
                        let alts = if self.scratch.first_prediction(b) {
                            &g.alts[b as usize][..]
                        } else {
                            &[]
                        };
                        for &pos in alts {
                            let origin = here;
                            let item = Item {
                                pos,
                                origin,
                                dfa: 0,
                            };
                            self.derive(set, item, &mut expects)?;
                        }
                        if g.nullable[b as usize] {
                            self.derive(set, advanced, &mut expects)?;
                        }
                    }
                    Next::Terminal(t) => {
                        // Greedy: only a match of at least one byte (a kernel item) ends,
                        // and it ends here only if the lexeme stops here (see `push_byte`).
                        let read = !g.greedy || k <= set.kernel as usize;
                        if read && g.dfas.is_accepting(t, it.dfa) {
                            self.derive(set, advanced, &mut expects)?;
                        }
                    }
                    Next::End(lhs) => {
                        if lhs == g.start && it.origin == start {
                            set.accepting = true;
                        }
                        // (origin here: a rule derived the empty string here, which
                        // prediction already passed over: see the module doc)
                        if it.origin != here {
                            let from = origins.origin(it.origin);
                            for &(_, w) in from.waiting_on(lhs) {
                                let wi = from.items[w as usize];
                                let pos = wi.pos + 1;
                                let origin = origins.rebased(it.origin, wi.origin);
                                let item = Item {
                                    pos,
                                    origin,
                                    dfa: 0,
                                };
                                self.derive(set, item, &mut expects)?;
                            }
                        }
                    }
                }
            }
            // The rest is closed: open the tail where a lexeme may follow, and run on.
            let (Some(tail), false, true) = (g.tail, held.is_empty(), expects) else {
                break;
            };
            tail_open = true;
            self.open_tail(set, here, tail, std::mem::take(&mut held))?;
        }
        self.index(set);
        Ok(())
    }

    /// Predict the tail rule at `here`, moving the `held` items waiting on it over it if
    /// it is nullable (see `close`).
    fn open_tail(
        &mut self,
        set: &mut Set,
        here: u32,
        tail: u32,
        held: Vec<Item>,
    ) -> Result<(), Error> {
        for &pos in &self.g.alts[tail as usize] {
            let item = Item {
                pos,
                origin: here,
                dfa: 0,
            };
            self.add(set, item)?;
        }
        if self.g.nullable[tail as usize] {
            for advanced in held {
                self.add(set, advanced)?;
            }
        }
        Ok(())
    }

    /// Index a closed set: its scanning items, and its items waiting on a rule sorted.
    fn index(&self, set: &mut Set) {
        for (i, it) in set.items.iter().enumerate() {
            match self.g.next[it.pos as usize] {
                Next::Rule(b) => set.waiting.push((b, i as u32)),
                Next::Terminal(_) => set.scanning.push(i as u32),
                Next::End(_) => {}
            }
        }
        set.waiting.sort_unstable();
    }
}
