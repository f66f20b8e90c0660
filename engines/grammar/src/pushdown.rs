//! TokensDFA's pushdown mode: a grammar's Earley recognizer determinized on demand, served
//! by the lazy index ([`tokensdfa_core::LazyIndex`]).
//!
//! ## States are hash-consed Earley sets
//!
//! The reference (`index`) keeps a whole chart per token-level state, one set per byte,
//! and walks the token trie pushing sets: each byte of each token costs a closure. Here
//! an item's origin names the *set* it started in, by number, instead of a byte position
//! ([`SELF`] for the set's own position, rewritten to the set's number when a later set
//! scans from it). A set's future is then decided by its items alone: completion reads the
//! origin sets' waiting items, themselves decided by their items. So sets are hash-consed
//! by their kernel (the items scanning a byte gives, sorted; the closure follows from it)
//! and numbered, and "the set after byte `b` from set `s`" is a deterministic, memoizable
//! transition: a DFA whose states are Earley sets, infinite in general (one set per
//! nesting context) but computed only where walks go. Its table is the lazy index's
//! ([`tokensdfa_core::dfa::recognizer`]), so a grammar gets every piece of the regex
//! machinery: a mask computed once per token-level state, then one copy; token steps as
//! table lookups once met; revisits of a loop (the inside of a string, the elements of an
//! array at one depth) free.
//!
//! ## Origins named by what they give back
//!
//! An item's origin is read once, when its rule is complete: the origin set's items
//! waiting on that rule move over it, and those of them begun in that set read it again
//! when theirs is. What a set gives back along a rule is thus a finite shape: the moved
//! items, each with its origin or a mark for the set itself, and the same for the rules
//! of the marked ones ([`Canon`]). Two sets of one shape are the same origin for an item
//! of that rule, so a scanned item names the first set seen with that shape, and sets
//! whose kernels then agree are one. Without it, a rule predicted at every byte names
//! the previous byte's set in every kernel, and no set is ever met again:
//!
//! - a string's characters as one-character terminals under a repetition
//!   (`char ::= [^"\\] | escape`, as GBNF and EBNF grammars write them): each first
//!   visit inside a string made a hundred sets and walked the whole trie;
//! - a scannerless reading where a terminal may end at any byte (a line comment, an
//!   identifier beside a keyword): the parses begun at each split point name their own
//!   set.
//!
//! The initial set keeps its own name (a start alternative begun there makes a set
//! accepting).
//!
//! ## Exact by construction
//!
//! The grammar is compiled as the reference compiles it (`index::compile`, the default
//! reading: scannerless, `%ignore` text leading and trailing), and a set is closed by the
//! reference's own closure (`earley`), which reads origins through [`Origins`]. A set is
//! non-empty iff its prefix is viable (trimmed grammar, live terminal DFAs) and accepting
//! iff a start alternative begun in the initial set is complete: the contract of the lazy
//! index's automata, so its masks equal the reference's at every state.
//!
//! ## What a set surely survives
//!
//! Each item of a set is viable, so a string its terminal's DFA survives from the item's
//! state keeps the set alive. Two questions of the lazy index are answered so, per
//! (terminal, DFA state) and memoized: which byte strings it survives (survival skips,
//! `survivals_of`), and how many characters of the slices' class (run bounds,
//! `run_lower_of`, read off the terminal's NFA). The set's answer is its best item's, a
//! bound that holds.
//!
//! ## Bounds
//!
//! Each step counts its Earley items against the item budget; the sets are held in
//! memory, counted against the index's walk limit (two gigabytes by default). Past
//! either the index is marked exceeded (the Python binding then raises `LimitError`),
//! never a hang or all memory. Sets are never evicted (state numbers must stay valid);
//! masks are, under the lazy index's cache limit.

use std::sync::Arc;

use rustc_hash::FxHashMap;
use tokensdfa_core::dfa::recognizer::Recognizer;
use tokensdfa_core::dfa::DEAD;
use tokensdfa_core::{LazyIndex, LazyOptions, Survival, Vocabulary};

use crate::earley::{Compiled, Earley, Item, Next, Origins, Scratch, Set};
use crate::error::Error;
use crate::index::compile;
use crate::ir::{Grammar, Symbol};
use crate::options::GrammarOptions;

/// The origin of items predicted in the set that holds them (a set's own position).
const SELF: u32 = u32::MAX - 1;

/// Bytes an item costs in the sets held (the item, and its share of the indexes).
const ITEM_BYTES: usize = 24;

/// Bytes per unit of the lazy index's walk limit: the NFA's states with their maps, so
/// the default limit (`WALK_STATE_LIMIT`, 2^23) stands for two gigabytes of sets here
/// as it does of NFA there.
const LIMIT_UNIT_BYTES: usize = 256;

/// (UTF-8 state, DFA state) pairs a terminal's survival search explores (a comment's
/// DFA needs a handful; an identifier's dies at its first round).
const SURVIVAL_PAIRS: usize = 128;

/// The sets made so far, by number (0: the initial set).
struct Sets<'a>(&'a [Arc<Set>]);

impl Sets<'_> {
    /// An origin of an item of set `set`, as a later set names it.
    fn rebase(set: u32, origin: u32) -> u32 {
        if origin == SELF {
            set
        } else {
            origin
        }
    }
}

impl Origins for Sets<'_> {
    fn origin(&self, origin: u32) -> &Set {
        &self.0[origin as usize]
    }

    fn rebased(&self, set: u32, origin: u32) -> u32 {
        Sets::rebase(set, origin)
    }
}

/// Marks an item, in a [`Canon`] shape, that moves with its origin the set itself.
const OWN: u32 = u32::MAX;

/// Origins named by what they give back (see the module doc): per `(set, rule)`, the
/// first set seen with the same shape.
#[derive(Clone, Default)]
struct Canon {
    of: FxHashMap<(u32, u32), u32>,
    by_shape: FxHashMap<Box<[u32]>, u32>,
    /// Words held in `by_shape`'s keys.
    words: usize,
}

impl Canon {
    /// The name of set `origin` as the origin of an item of `rule`.
    fn origin(&mut self, g: &Compiled, sets: &[Arc<Set>], origin: u32, rule: u32) -> u32 {
        if origin == 0 {
            return 0; // a start alternative begun here makes a set accepting
        }
        if let Some(&name) = self.of.get(&(origin, rule)) {
            return name;
        }
        let set = &sets[origin as usize];
        // Its shape, and what it gives back named by set numbers (one level: a set
        // whose own items are begun in `origin` is then `origin` itself, so the set
        // after a string's first character, which names the set before it, is that
        // set). Equal either way is the same origin; the first found names it.
        let keys = [
            Canon::shape(g, set, origin, rule),
            Canon::numbered(set, origin, rule),
        ];
        let found = keys.iter().find_map(|k| self.by_shape.get(&k[..]).copied());
        let name = found.unwrap_or(origin);
        for key in keys {
            let len = key.len();
            self.by_shape.entry(key.into()).or_insert_with(|| {
                self.words += len;
                name
            });
        }
        self.of.insert((origin, rule), name);
        name
    }

    /// The items set `o` moves over `rule`, sorted, each with its origin's number, then
    /// the rule and a mark that tells this key from a [`Canon::shape`].
    fn numbered(set: &Set, o: u32, rule: u32) -> Vec<u32> {
        let mut moved = Vec::new();
        Canon::moved(set, o, rule, o, &mut moved);
        let mut key: Vec<u32> = moved.into_iter().flat_map(|(p, o)| [p, o]).collect();
        key.extend([rule, OWN]);
        key
    }

    /// Into `out`, sorted: the items of set `o` waiting on `rule`, each as `(position
    /// after the rule, origin as later sets name it)`, with `own` for the origin where
    /// that is `o` itself.
    fn moved(set: &Set, o: u32, rule: u32, own: u32, out: &mut Vec<(u32, u32)>) {
        out.clear();
        out.extend(set.waiting_on(rule).iter().map(|&(_, w)| {
            let wi = set.item(w);
            let origin = Sets::rebase(o, wi.origin);
            (wi.pos + 1, if origin == o { own } else { origin })
        }));
        out.sort_unstable();
    }

    /// What set `o` gives back to an item of `rule` once it is complete: its items
    /// waiting on the rule, moved over it (sorted), each with its origin as later sets
    /// name it, or [`OWN`] where that is `o` itself; then the same for each rule such an
    /// item belongs to, in the order first met, since those items read `o` again when
    /// they are complete. Everything `o` can ever give back along `rule`, so two sets of
    /// one shape are the same origin for it (an item's rule is its position's).
    fn shape(g: &Compiled, set: &Set, o: u32, rule: u32) -> Vec<u32> {
        let mut rules = vec![rule];
        let mut shape = Vec::new();
        let mut moved: Vec<(u32, u32)> = Vec::new();
        let mut next = 0;
        while let Some(&r) = rules.get(next) {
            next += 1;
            Canon::moved(set, o, r, OWN, &mut moved);
            shape.push(moved.len() as u32);
            for &(pos, origin) in &moved {
                shape.extend([pos, origin]);
                let own = g.lhs[pos as usize];
                if origin == OWN && !rules.contains(&own) {
                    rules.push(own);
                }
            }
        }
        shape.extend([rule, rule]);
        shape
    }

    fn memory_bytes(&self) -> usize {
        self.of.capacity() * 16 + self.by_shape.capacity() * 24 + self.words * 4
    }
}

/// A grammar's Earley sets as a [`Recognizer`] (see the module doc).
#[derive(Clone)]
pub struct EarleySets {
    g: Arc<Compiled>,
    sets: Arc<Vec<Arc<Set>>>,
    ids: FxHashMap<Box<[Item]>, u32>,
    canon: Canon,
    scratch: Scratch,
    classes: [u8; 256],
    n_classes: usize,
    budget: usize,
    items: usize,
    item_limit: usize,
    exceeded: bool,
    /// Per (terminal, DFA state), the strings it surely survives (`survivals_of`).
    survive: FxHashMap<(u32, u32), Option<Survival>>,
    /// Whether mask walks take survived subtrees whole (`pushdown_index_with`).
    skips: bool,
    /// Per (terminal, DFA state), the lower run bound of the slices' class and the cap
    /// it was found under (`run_lower_of`).
    runs: FxHashMap<(u32, u32), (u32, u32)>,
}

impl EarleySets {
    /// The initial set of `grammar` read the default way, within `item_budget` items
    /// per step.
    pub fn new(grammar: &Grammar, item_budget: usize) -> Result<Self, Error> {
        let options = GrammarOptions {
            item_budget,
            ..GrammarOptions::default()
        };
        let g = compile(grammar, &options, left_stars, true)?;
        let mut earley = Earley::new(&g, item_budget);
        let initial = earley.initial_at(&Sets(&[]), SELF)?;
        let scratch = earley.into_scratch();
        let (classes, n_classes) = g.dfas.joint_classes();
        let items = initial.len();
        Ok(EarleySets {
            g: Arc::new(g),
            sets: Arc::new(vec![Arc::new(initial)]),
            ids: FxHashMap::default(),
            canon: Canon::default(),
            scratch,
            classes,
            n_classes,
            budget: item_budget,
            items,
            item_limit: usize::MAX,
            exceeded: false,
            survive: FxHashMap::default(),
            skips: true,
            runs: FxHashMap::default(),
        })
    }

    /// The set after `byte` from set `state`: its number, or None when empty; an error
    /// past the item budget.
    fn scan(&mut self, state: u32, byte: u8) -> Result<Option<u32>, Error> {
        let g = Arc::clone(&self.g);
        let scratch = std::mem::take(&mut self.scratch);
        let mut earley = Earley::with_scratch(&g, self.budget, scratch);
        let found = self.scan_with(&mut earley, state, byte);
        self.scratch = earley.into_scratch();
        found
    }

    /// What set `state` surely survives: the widest survivals of its items' terminals at
    /// their DFA states (each item is viable, so a string its terminal survives keeps the
    /// set alive: the terminal then matches on, and the grammar is trimmed), none
    /// covering another. None under greedy lexing, where an item
    /// after a lexeme's end may not scan while the lexeme goes on.
    fn survivals_of(&mut self, state: u32) -> Vec<Survival> {
        let mut out: Vec<Survival> = Vec::new();
        if self.g.greedy {
            return out;
        }
        let (g, set) = (&self.g, &self.sets[state as usize]);
        for it in set.scanning() {
            let Next::Terminal(t) = g.next[it.pos as usize] else {
                continue;
            };
            let found = *self.survive.entry((t, it.dfa)).or_insert_with(|| {
                Survival::search(it.dfa, SURVIVAL_PAIRS, |q, b| g.dfas.next(t, q, b))
            });
            let Some(s) = found else { continue };
            if out.iter().any(|o| s.within(o)) {
                continue;
            }
            out.retain(|o| !o.within(&s));
            out.push(s);
        }
        out
    }

    /// A lower bound on the runs of `class` set `state` survives: its best item's, read
    /// off the terminal's NFA at the item's state ([`tokensdfa_core::OnDemandDfa::run_lower`]:
    /// no determinizing), memoized per terminal and state. An item is viable, so a
    /// string its terminal survives keeps the set alive (`survivals_of`, which also
    /// says why there is none under greedy lexing).
    fn run_lower_of(&mut self, state: u32, class: &[(u32, u32)], cap: u32) -> Option<u32> {
        if self.g.greedy {
            return None;
        }
        let (g, set) = (&self.g, &self.sets[state as usize]);
        let mut best = 0;
        for it in set.scanning() {
            let Next::Terminal(t) = g.next[it.pos as usize] else {
                continue;
            };
            let lower = match self.runs.get(&(t, it.dfa)) {
                Some(&(lower, at)) if at == cap => lower,
                _ => {
                    let lower = g.dfas.run_lower(t, it.dfa, class, cap)?;
                    self.runs.insert((t, it.dfa), (lower, cap));
                    lower
                }
            };
            best = best.max(lower);
            if best >= cap {
                break;
            }
        }
        Some(best)
    }

    fn scan_with(
        &mut self,
        earley: &mut Earley<'_>,
        state: u32,
        byte: u8,
    ) -> Result<Option<u32>, Error> {
        let mut set = Set::default();
        let (g, sets, canon) = (&self.g, &self.sets[..], &mut self.canon);
        let name = |it: Item| {
            let origin = Sets::rebase(state, it.origin);
            canon.origin(g, sets, origin, g.lhs[it.pos as usize])
        };
        earley.scan(&sets[state as usize], byte, &mut set, name)?;
        if set.is_empty() {
            return Ok(None);
        }
        if let Some(&id) = self.ids.get(set.sorted_kernel()) {
            return Ok(Some(id));
        }
        let key: Box<[Item]> = set.sorted_kernel().into();
        earley.close(&Sets(&self.sets), SELF, 0, &mut set)?;
        let sets = Arc::make_mut(&mut self.sets);
        let id = sets.len() as u32;
        self.items += set.len() + key.len();
        sets.push(Arc::new(set));
        self.ids.insert(key, id);
        Ok(Some(id))
    }
}

impl Recognizer for EarleySets {
    fn byte_classes(&self) -> ([u8; 256], usize) {
        (self.classes, self.n_classes)
    }

    fn step(&mut self, state: u32, byte: u8) -> u32 {
        if self.exceeded {
            return DEAD;
        }
        match self.scan(state, byte) {
            Ok(Some(id)) => {
                if self.items > self.item_limit {
                    self.exceeded = true;
                }
                id
            }
            Ok(None) => DEAD,
            Err(_) => {
                self.exceeded = true;
                DEAD
            }
        }
    }

    fn is_accepting(&self, state: u32) -> bool {
        self.sets[state as usize].accepting()
    }

    fn num_states(&self) -> usize {
        self.sets.len()
    }

    fn set_limit(&mut self, limit: usize) {
        self.item_limit = limit.saturating_mul(LIMIT_UNIT_BYTES) / ITEM_BYTES;
    }

    fn exceeded(&self) -> bool {
        self.exceeded || self.g.dfas.exceeded()
    }

    fn memory_bytes(&self) -> usize {
        self.items * ITEM_BYTES
            + self.ids.capacity() * 24
            + self.canon.memory_bytes()
            + self.g.memory_bytes()
            + self.runs.capacity() * 16
    }

    fn boxed_clone(&self) -> Box<dyn Recognizer> {
        Box::new(self.clone())
    }

    fn survivals(&mut self, state: u32) -> Option<Vec<Survival>> {
        self.skips.then(|| self.survivals_of(state))
    }

    fn run_lower(&mut self, state: u32, class: &[(u32, u32)], cap: u32) -> Option<u32> {
        self.run_lower_of(state, class, cap)
    }
}

/// `grammar` with every star rule turned left-recursive: a rule whose alternatives are
/// the empty one and ones of the form `a R` (`R` itself last, nowhere in `a`) derives
/// `(a | ...)*`, as does `R ::= "" | R a | ...`. The readers write repetition that way
/// (`x*` is `R ::= x R | ""`) and so does `%ignore` (`IGN ::= "" | WS IGN`); right
/// recursion chains origins (each `a` matched starts an `R` at a new set), so every
/// length of whitespace made new sets, where the left form keeps one origin and the
/// sets recur. The language, hence every mask, is unchanged.
fn left_stars(mut grammar: Grammar) -> Grammar {
    for (r, rule) in grammar.rules.iter_mut().enumerate() {
        let me = Symbol::Rule(r as u32);
        let is_star = rule.alternatives.iter().any(Vec::is_empty)
            && rule.alternatives.iter().all(|alt| {
                alt.is_empty() || (alt.last() == Some(&me) && !alt[..alt.len() - 1].contains(&me))
            });
        if is_star && rule.alternatives.len() > 1 {
            for alt in rule.alternatives.iter_mut().filter(|a| !a.is_empty()) {
                alt.rotate_right(1);
            }
        }
    }
    grammar
}

/// The pushdown-mode index of `grammar` over `vocab` (see the module doc).
pub fn pushdown_index(
    grammar: &Grammar,
    vocab: &Vocabulary,
    opts: LazyOptions,
    item_budget: usize,
) -> Result<LazyIndex, Error> {
    pushdown_index_with(grammar, vocab, opts, item_budget, true)
}

/// [`pushdown_index`], with survival skips (`tokensdfa_core`'s `walk::survival`) on or
/// off. A JSON schema's grammar runs without: its strings are decided by slices, and at
/// the states left to a walk (a key beside declared ones, a string with a pattern) its
/// survivals are narrow or do not decide, so testing them cost the walk at every node
/// (MaskBench, llama3: slowest masks 2.9 -> 3.6 ms with them).
pub(crate) fn pushdown_index_with(
    grammar: &Grammar,
    vocab: &Vocabulary,
    opts: LazyOptions,
    item_budget: usize,
    skips: bool,
) -> Result<LazyIndex, Error> {
    let mut sets = EarleySets::new(grammar, item_budget)?;
    sets.skips = skips;
    Ok(LazyIndex::from_recognizer(Box::new(sets), vocab, opts))
}
