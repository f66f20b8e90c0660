//! [`NaiveGrammarIndex`]: the exact reference for context-free grammars over a vocabulary.
//!
//! ## Contract
//!
//! At a prefix `p` (the bytes of the tokens taken so far) a text token `t` is allowed
//! iff some string `s` makes `p·t·s` a sentence of the grammar; EOS is allowed iff `p`
//! is a sentence; special ids never. The grammar is read with `%ignore` made explicit
//! and trimmed (see `transform`), so the byte-level Earley recognizer (`earley`) answers
//! "is this prefix viable" by "is its set non-empty".
//!
//! ## Lexing modes ([`GrammarOptions`])
//!
//! - [`Lexing::Scannerless`] (default): the contract above; every terminal matches at
//!   every length its regex does, `%ignore` text may come around every terminal.
//! - [`Lexing::Greedy`]: how a lexer-based engine (llguidance) reads the grammar. A
//!   lexeme starting at `i` is read by every terminal allowed at `i` (by any parse of
//!   the text so far, ignore terminals included) together; it ends at `j` only if none
//!   of them takes byte `j` (maximal munch over the allowed set, not per terminal), or
//!   the text ends there; it is then any of them that matches it; lexemes are never
//!   empty (a terminal that matches the empty string may be left out instead: `lexemes`,
//!   llguidance's reading). The cut into
//!   lexemes is thus forced. A sentence is a text so cut into a sentence of terminals.
//!   A token is allowed iff the lexer and parser have not failed by the end of `p·t`:
//!   the text so far is cut into lexemes as above, the last one possibly unfinished,
//!   and that is a viable prefix of terminals. This is *not* "some `s` makes `p·t·s` a
//!   sentence" (with `start: A B; A: /a+/; B: "a"` every `a…` is live though no text is
//!   a sentence: the lexer never looks ahead, like the engines; whether some
//!   continuation exists is not decidable in general under this lexing). EOS is exact.
//! - `leading_ignore: false`: no `%ignore` text before the text's first terminal
//!   occurrence. `trailing_ignore` ([`TrailingIgnore`]), after its last: `Always`
//!   (default), `Never`, or `WhereALexemeMayFollow`, llguidance's reading (measured on
//!   1.9.1): ignore text is a lexeme allowed exactly where the parser allows some other
//!   lexeme, and reading it leaves the parser state as it was. So ignore text may follow
//!   the last terminal only where the parser state there (the set of all parses of the
//!   text so far) expects another terminal, and the text is then a sentence iff it was
//!   one before the ignore text: with `start: "x"+` "x " is a sentence, with
//!   `start: "x" "y"` "xy " is not even viable (nothing may follow "y"), and after a
//!   complete JSON value no whitespace may follow, though inside `[0` it may. Between
//!   terminals nothing changes (ignore text before any terminal occurrence). The
//!   condition is on the state, not per parse: where one parse of the text is complete
//!   and another expects more, ignore text and then EOS are allowed. Viability is
//!   `Never`'s; only which texts are sentences differs. A text of ignore text only is
//!   a sentence only with leading ignore, and trailing ignore `Always` or (where the
//!   empty text is a sentence and another may follow it) `WhereALexemeMayFollow` (see
//!   `Grammar::expand_ignore_for`). Under greedy lexing the ignore terminals are in the
//!   allowed set of a lexeme exactly where another terminal is, as between terminals.
//!
//! Same cost in every mode: greedy lexing only decides which completions a set makes
//! and which items scan (one check of the set's kernel per byte); `leading_ignore: false`
//! adds a copy of each rule (at most twice the rules); `WhereALexemeMayFollow` one rule
//! and one flag per set closure.
//!
//! ## How
//!
//! A token-level state is the Earley chart of its prefix: one closed set per byte, the
//! prefix's sets shared with the parent state (`Arc`). States are numbered from 0 (the
//! initial one, the empty prefix) and made on demand by [`NaiveGrammarIndex::next_state`]
//! (memoized per `(state, token)`). [`NaiveGrammarIndex::fill_mask`] walks the
//! vocabulary's token trie depth-first from the state's chart, pushing one Earley set per
//! trie node and popping back by depth, skipping a node's subtree as soon as its set is
//! empty; the tokens ending at live nodes are allowed. Masks are memoized per state.
//! Both calls run outside the lock (the index is `Send + Sync`), and count the Earley
//! items they create against `item_budget`: past it, [`Error::Budget`], never a hang.
//!
//! ## Cost
//!
//! A fill costs (trie nodes visited) x (items per set): nodes visited are the live
//! nodes plus the children tried under them (the whole trie at worst), and a set holds
//! the items of one byte position (tens for a JSON grammar). A state keeps its own sets
//! (12 bytes per item, plus their indexes), one pointer per byte of its prefix and its
//! mask (vocabulary / 8 bytes); the index keeps one copy of the token trie and texts.
//! Measured (release, one core of the 2-core dev box, `tests/reference_cost.rs`, run
//! with `--ignored`): a JSON grammar walked along a 100-byte JSON text on a 128,000-token
//! BPE vocabulary (deepseek's) fills a state in 6.5 ms on average (111,000 items over
//! 108,000 trie nodes), 17 ms at worst (inside a string, where nearly every token is
//! live: 272,000 items); between values it visits about 2,400 nodes and takes 0.4 ms.
//! On its first 50,000 tokens: 2.3 ms per fill on average, 5.8 ms at worst. Memory:
//! 6.4 MB for the index (the trie and token copies), then about 17 KB per state, 16 KB
//! of it the mask.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use rustc_hash::FxHashMap;
use tokensdfa_core::{copy_mask, ones, set_bit, TokenTrie, Vocabulary};

use crate::earley::{trimmed_on_demand, Chart, Compiled, Earley, Set, Terms};
use crate::error::Error;
use crate::ir::Grammar;
use crate::options::{GrammarOptions, Lexing};

/// Figures of one mask fill.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct FillStats {
    /// Earley items created (over all trie nodes visited).
    pub items: usize,
    /// Trie nodes whose set was computed, and those of them whose set was non-empty.
    pub nodes_visited: usize,
    pub nodes_live: usize,
    pub seconds: f64,
}

struct StateData {
    /// One closed set per byte of the prefix, plus the initial one.
    sets: Arc<Vec<Arc<Set>>>,
    /// Bytes of the sets this state made itself (the rest are its parent's).
    own_bytes: usize,
    mask: Option<Arc<[u32]>>,
    fill: Option<FillStats>,
}

#[derive(Default)]
struct Inner {
    states: Vec<StateData>,
    next: FxHashMap<(u32, u32), Option<u32>>,
}

/// `grammar` read as `options` say, laid out for the recognizer: `%ignore` expanded,
/// `rewrite` applied (a change of form that keeps the language: the pushdown mode's
/// stars, `crate::pushdown`), trimmed (an empty language is [`Error::Invalid`]; with
/// greedy lexing, terminals match non-empty strings only, and one that also matches the
/// empty string may be left out: `lexemes`), terminals compiled: whole, or `on_demand`
/// (scannerless only; `crate::earley::Terms`). The reference and the pushdown mode read
/// this one layout, so they read one language.
pub(crate) fn compile(
    grammar: &Grammar,
    options: &GrammarOptions,
    rewrite: impl FnOnce(Grammar) -> Grammar,
    on_demand: bool,
) -> Result<Compiled, Error> {
    let greedy = options.lexing == Lexing::Greedy;
    let optional;
    let read = if greedy {
        // before the ignore text is placed: a left-out terminal is no occurrence
        optional = grammar.empty_terminals_optional()?;
        &optional
    } else {
        grammar
    };
    let (expanded, ignore_rules) =
        read.expand_ignore_for(options.leading_ignore, options.trailing_ignore);
    let rewritten = rewrite(expanded);
    let (trimmed, dfas, renumbered) = if on_demand && !greedy {
        trimmed_on_demand(&rewritten)?
    } else {
        let (g, dfas, renumbered) = rewritten.trimmed_with_dfas_for(greedy)?;
        (g, Terms::Whole(dfas), renumbered)
    };
    let kept = |r: u32| Some(renumbered[r as usize]).filter(|&n| n != u32::MAX);
    let ignore: Vec<u32> = ignore_rules
        .iter()
        .flat_map(|i| [Some(i.ign), i.tail])
        .flatten()
        .filter_map(kept)
        .collect();
    let tail = ignore_rules.and_then(|i| i.tail).and_then(kept);
    Ok(Compiled::new(&trimmed, dfas, greedy, &ignore, tail))
}

pub struct NaiveGrammarIndex {
    g: Compiled,
    trie: TokenTrie,
    /// Token texts: `bytes[offsets[i]..offsets[i + 1]]`.
    bytes: Vec<u8>,
    offsets: Vec<u32>,
    special: Vec<bool>,
    eos: u32,
    words: usize,
    budget: usize,
    inner: Mutex<Inner>,
}

impl NaiveGrammarIndex {
    /// `%ignore` expanded (as `options` say), trimmed (an empty language is
    /// [`Error::Invalid`]; with greedy lexing, terminals match non-empty strings only, and
    /// one that also matches the empty string may be left out: `lexemes`), terminals
    /// compiled, the initial chart built.
    pub fn new(
        grammar: &Grammar,
        vocab: &Vocabulary,
        options: GrammarOptions,
    ) -> Result<Self, Error> {
        let g = compile(grammar, &options, |g| g, false)?;
        let initial = Earley::new(&g, options.item_budget).initial()?;
        let t = vocab.trie();
        let trie = TokenTrie {
            nodes: t.nodes.clone(),
            sorted_ids: t.sorted_ids.clone(),
            max_depth: t.max_depth,
        };
        let mut bytes = Vec::new();
        let mut offsets = vec![0u32];
        for id in 0..vocab.len() as u32 {
            bytes.extend_from_slice(vocab.token(id));
            offsets.push(bytes.len() as u32);
        }
        let own_bytes = initial.memory_bytes();
        let inner = Inner {
            states: vec![StateData {
                sets: Arc::new(vec![Arc::new(initial)]),
                own_bytes,
                mask: None,
                fill: None,
            }],
            next: FxHashMap::default(),
        };
        Ok(NaiveGrammarIndex {
            g,
            trie,
            bytes,
            offsets,
            special: (0..vocab.len() as u32)
                .map(|t| vocab.is_special(t))
                .collect(),
            eos: vocab.eos_id(),
            words: vocab.mask_words(),
            budget: options.item_budget,
            inner: Mutex::new(inner),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn token(&self, id: u32) -> &[u8] {
        let i = id as usize;
        &self.bytes[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }

    fn sets(&self, state: u32) -> Result<Arc<Vec<Arc<Set>>>, Error> {
        self.lock()
            .states
            .get(state as usize)
            .map(|s| s.sets.clone())
            .ok_or_else(|| Error::Argument(format!("no state {state}")))
    }

    pub fn initial_state(&self) -> u32 {
        0
    }

    pub fn vocab_len(&self) -> usize {
        self.special.len()
    }

    /// States made so far: the initial one and each `next_state` has returned.
    pub fn num_states(&self) -> usize {
        self.lock().states.len()
    }

    /// Whether the state's prefix is a sentence (false for an unknown state).
    pub fn is_accepting(&self, state: u32) -> bool {
        self.lock()
            .states
            .get(state as usize)
            .is_some_and(|s| s.sets.last().is_some_and(|set| set.accepting()))
    }

    /// The state after `token`, or None where it is not allowed (EOS, specials, unknown
    /// or empty tokens included). Errors: an unknown state, the item budget.
    pub fn next_state(&self, state: u32, token: u32) -> Result<Option<u32>, Error> {
        if let Some(&known) = self.lock().next.get(&(state, token)) {
            return Ok(known);
        }
        let sets = self.sets(state)?;
        let text = (token as usize) < self.special.len() && !self.special[token as usize];
        let bytes = if text { self.token(token) } else { &[] };
        if bytes.is_empty() {
            self.lock().next.insert((state, token), None);
            return Ok(None);
        }
        let mut earley = Earley::new(&self.g, self.budget);
        let mut chart = Chart::new(&sets);
        for &b in bytes {
            if !earley.push_byte(&mut chart, b)? {
                self.lock().next.insert((state, token), None);
                return Ok(None);
            }
        }
        let own = chart.into_own();
        let own_bytes = own.iter().map(Set::memory_bytes).sum();
        let mut all = Vec::with_capacity(sets.len() + own.len());
        all.extend(sets.iter().cloned());
        all.extend(own.into_iter().map(Arc::new));
        let mut inner = self.lock();
        if let Some(&known) = inner.next.get(&(state, token)) {
            return Ok(known); // another thread got there first
        }
        let id = inner.states.len() as u32;
        inner.states.push(StateData {
            sets: Arc::new(all),
            own_bytes,
            mask: None,
            fill: None,
        });
        inner.next.insert((state, token), Some(id));
        Ok(Some(id))
    }

    /// Write the state's mask (`vocab_len` bits, EOS where accepting) into `out`, of
    /// `ceil(vocab_len / 32)` words. Errors: unknown state, wrong width, item budget.
    pub fn fill_mask(&self, state: u32, out: &mut [u32]) -> Result<(), Error> {
        if out.len() != self.words {
            return Err(Error::Argument(format!(
                "mask buffer has {} words, the vocabulary needs {}",
                out.len(),
                self.words
            )));
        }
        copy_mask(out, &self.mask(state)?);
        Ok(())
    }

    /// Sorted allowed token ids, EOS included where accepting.
    pub fn allowed(&self, state: u32) -> Result<Vec<u32>, Error> {
        Ok(ones(&self.mask(state)?))
    }

    /// The bytes the grammar forces after `state`, at most `limit`: while the text is no
    /// sentence and exactly one byte keeps it viable (under greedy lexing: not failed
    /// yet), that byte. What jump-forward inserts and `canonical-forced` engines spell.
    pub fn forced_bytes(&self, state: u32, limit: usize) -> Result<Vec<u8>, Error> {
        let sets = self.sets(state)?;
        let mut earley = Earley::new(&self.g, self.budget);
        let mut chart = Chart::new(&sets);
        let mut out = Vec::new();
        while out.len() < limit && !chart.last().accepting() {
            let here = chart.len();
            let mut only = None;
            for b in 0..=255u8 {
                let live = earley.push_byte(&mut chart, b)?;
                chart.truncate(here);
                if live {
                    if only.is_some() {
                        return Ok(out);
                    }
                    only = Some(b);
                }
            }
            let Some(b) = only else { break };
            earley.push_byte(&mut chart, b)?;
            out.push(b);
        }
        Ok(out)
    }

    /// Whether `text` is a sentence (the recognizer run from the initial state; no
    /// state is made). Errors: the item budget.
    pub fn accepts(&self, text: &[u8]) -> Result<bool, Error> {
        Ok(self.recognize(text)? == Some(true))
    }

    /// Whether `text` is a viable prefix: some continuation makes it a sentence (the
    /// grammar is trimmed, so a live chart after its last byte says so). No state is
    /// made; triage asks this of texts that are not token paths. Errors: the item budget.
    pub fn viable(&self, text: &[u8]) -> Result<bool, Error> {
        Ok(self.recognize(text)?.is_some())
    }

    /// The recognizer run over `text` from the initial state: None where a byte leaves
    /// no live item, else whether the text is a sentence.
    fn recognize(&self, text: &[u8]) -> Result<Option<bool>, Error> {
        let sets = self.sets(0)?;
        let mut earley = Earley::new(&self.g, self.budget);
        let mut chart = Chart::new(&sets);
        for &b in text {
            if !earley.push_byte(&mut chart, b)? {
                return Ok(None);
            }
        }
        Ok(Some(chart.last().accepting()))
    }

    /// The figures of the state's mask fill, once filled.
    pub fn fill_stats(&self, state: u32) -> Option<FillStats> {
        self.lock().states.get(state as usize).and_then(|s| s.fill)
    }

    /// The state's mask, memoized.
    fn mask(&self, state: u32) -> Result<Arc<[u32]>, Error> {
        if let Some(m) = self
            .lock()
            .states
            .get(state as usize)
            .and_then(|s| s.mask.clone())
        {
            return Ok(m);
        }
        let sets = self.sets(state)?;
        let (mask, stats) = self.compute_mask(&sets)?;
        let mask: Arc<[u32]> = mask.into();
        let mut inner = self.lock();
        let data = &mut inner.states[state as usize];
        data.mask = Some(mask.clone());
        data.fill = Some(stats);
        Ok(mask)
    }

    /// The trie walk from the chart `sets` (see the module doc).
    fn compute_mask(&self, sets: &[Arc<Set>]) -> Result<(Vec<u32>, FillStats), Error> {
        let t0 = Instant::now();
        let mut earley = Earley::new(&self.g, self.budget);
        let mut chart = Chart::new(sets);
        let mut mask = vec![0u32; self.words];
        let mut stats = FillStats::default();
        let nodes = &self.trie.nodes;
        let mut i = 1;
        while i < nodes.len() {
            let node = nodes[i];
            chart.truncate(sets.len() + node.depth as usize - 1);
            stats.nodes_visited += 1;
            if earley.push_byte(&mut chart, node.byte)? {
                stats.nodes_live += 1;
                for &t in self.trie.tokens_at(i) {
                    set_bit(&mut mask, t);
                }
                i += 1;
            } else {
                i += node.subtree as usize;
            }
        }
        if sets.last().is_some_and(|s| s.accepting()) {
            set_bit(&mut mask, self.eos);
        }
        stats.items = earley.created;
        stats.seconds = t0.elapsed().as_secs_f64();
        Ok((mask, stats))
    }

    /// The compiled grammar, the trie and token copies, and every state's own sets,
    /// set pointers, mask and transitions.
    pub fn memory_bytes(&self) -> usize {
        let inner = self.lock();
        let states: usize = inner
            .states
            .iter()
            .map(|s| {
                s.own_bytes + s.sets.len() * 8 + s.mask.as_ref().map_or(0, |m| m.len() * 4) + 64
            })
            .sum();
        self.g.memory_bytes()
            + self.trie.memory_bytes()
            + self.bytes.len()
            + self.offsets.len() * 4
            + self.special.len()
            + states
            + inner.next.len() * 16
    }
}
