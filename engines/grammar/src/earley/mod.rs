//! The byte-level Earley recognizer with regular terminals.
//!
//! ## Items and sets
//!
//! A trimmed [`Grammar`] is compiled ([`Compiled`]) into one flat array of *dotted
//! positions*: each alternative's symbols followed by an end marker, so an item's
//! alternative and dot are one number, `pos`. An [`Item`] is `(pos, origin, dfa)`: the
//! dot at `pos`, the alternative started at byte `origin`, and, when the symbol after
//! the dot is a terminal, the state of that terminal's minimized live-pruned
//! [`ByteDfa`] after the bytes of it read so far (0, its start, when none). A [`Set`]
//! holds the items at one byte position, deduplicated, closed under:
//!
//! - *prediction*: dot before rule `B` adds `B`'s alternatives with origin here; if `B`
//!   is nullable the dot also moves over it (Aycock–Horspool, so no completion with
//!   origin here is ever needed: such a rule derived the empty string and is nullable);
//! - *terminal acceptance*: dot before terminal `X` whose DFA state accepts (a nullable
//!   terminal at its start, or a match just read) also moves the dot over `X`;
//! - *completion*: dot at the end, origin `j` earlier: every item of set `j` waiting on
//!   the rule moves its dot over it (each closed set keeps its waiting items sorted by
//!   rule).
//!
//! *Scanning* a byte steps every terminal item's DFA; those not `DEAD` seed the next set
//! (keeping the terminal open for longer matches; acceptance is the closure's). The
//! seeds are the set's *kernel* (its first items).
//!
//! ## Greedy lexing
//!
//! With [`Compiled::greedy`], a terminal match is one lexeme of a maximal-munch lexer
//! over the terminals allowed where it starts (see `index`): terminal acceptance in the
//! closure applies to kernel items only (a match of at least one byte; a predicted item
//! never accepts), and scanning byte `b` from a set first asks whether some kernel item
//! takes `b`. If one does, the lexeme goes on: only the kernel scans, and what the
//! closure derived from matches ending here (completions, predictions, the new scans
//! started here) is left unused. If none does, the lexeme ended here: the whole set
//! scans (its kernel dies on `b` anyway). A set is thus always closed as if the lexeme
//! ended at it, which is exact for both cases: when it goes on, no later item has its
//! origin here, so no completion ever reads this set's extra items. Since a lexeme's end
//! is forced, all kernel items of a set come from scans started at one position (the
//! lexeme's start), so "a scan of this lexeme takes `b`" is "a kernel item takes `b`".
//! Rules are nullable through rules only (a terminal never matches empty).
//!
//! ## Trailing ignore where a lexeme may follow
//!
//! With [`Compiled::tail`] (`TrailingIgnore::WhereALexemeMayFollow`, see `transform`),
//! the tail rule `TAIL` (a non-empty run of ignore matches, after the start rule: the
//! grammar says `START ::= S | S TAIL`) is predicted in a set only if its closure also
//! *expects* a terminal outside the ignore rules: derived (by prediction, completion or
//! terminal acceptance, or as a start item) some item before such a terminal. So the
//! closure runs to its fixpoint with `TAIL` held back, then, if the set expects one,
//! predicts it and runs on (nothing `TAIL` adds expects one, or completes anything but
//! the start rule). A set's closure is its parser state as if a lexeme ended at it
//! (greedy: see above; scannerless: the items derived there are those after terminal
//! matches ending there), so "expects" is "the parser allows some lexeme here", over
//! every parse at once, as llguidance's parser state is. Items carried past the ignore
//! text are the `IGN` runs before the expected terminals, as between terminals.
//!
//! ## Contract
//!
//! On a trimmed grammar every item in the set after prefix `p` lies on some derivation
//! of a sentence starting with `p` (DFA states are live, rules productive), so the set
//! after `p` is non-empty iff `p` is a viable prefix, and `p` is a sentence iff the set
//! holds a completed start alternative with origin 0 ([`Set::accepting`]). Greedy: the
//! set is non-empty iff the lexer and parser have not failed on `p` (a viable prefix of
//! terminals, the last lexeme possibly unfinished), and `accepting` iff `p` is a
//! sentence with its last lexeme ending at the end. Left and
//! right recursion, nullable cycles and ambiguity need nothing special: items are
//! deduplicated per set, and every set is finite.
//!
//! ## Sharing
//!
//! Completion reads earlier sets by origin, so a chart is a sequence of sets. A closed
//! set is immutable: token-level states share their prefix's sets (`Arc<Set>`), and a
//! trie walk reads them through a [`Chart`] (shared sets below, its own stack of
//! reusable sets above), pushing and popping one set per byte. Every item created
//! counts against a budget ([`Earley`]), so no call runs unbounded.

mod set;
mod terms;

pub(crate) use set::{Chart, Earley, Item, Origins, Scratch, Set};
pub(crate) use terms::{trimmed_on_demand, Terms};

use crate::ir::{Grammar, Symbol};

/// What follows the dot at a dotted position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Next {
    Rule(u32),
    Terminal(u32),
    /// The end of an alternative of this rule.
    End(u32),
}

/// A trimmed grammar laid out for the recognizer.
pub(crate) struct Compiled {
    /// Per dotted position, the symbol after the dot.
    pub next: Vec<Next>,
    /// Per rule, the dotted positions its alternatives start at.
    pub alts: Vec<Vec<u32>>,
    /// Per dotted position, the rule whose alternative holds it.
    pub lhs: Vec<u32>,
    pub nullable: Vec<bool>,
    pub dfas: Terms,
    pub start: u32,
    /// Per dotted position, whether the dot is before a terminal outside the rules that
    /// read ignore text (a lexeme of the grammar proper).
    pub expects: Vec<bool>,
    /// The trailing ignore rule, predicted only where a set expects a lexeme.
    pub tail: Option<u32>,
    /// Greedy lexing (see the module doc): a terminal matches non-empty text only, and a
    /// match ends only where no scan of its lexeme takes the next byte.
    pub greedy: bool,
}

impl Compiled {
    /// `grammar` must be trimmed and `dfas` its terminals' DFAs (trimmed for non-empty
    /// matches when `greedy`; whole DFAs then); `ignore` the rules reading ignore text (`tail` among
    /// them), `tail` the trailing ignore rule to gate (see the module doc).
    pub fn new(
        grammar: &Grammar,
        dfas: Terms,
        greedy: bool,
        ignore: &[u32],
        tail: Option<u32>,
    ) -> Compiled {
        let mut next = Vec::new();
        let mut lhs = Vec::new();
        let mut expects = Vec::new();
        let mut alts = Vec::with_capacity(grammar.rules.len());
        for (r, rule) in grammar.rules.iter().enumerate() {
            let mut starts = Vec::with_capacity(rule.alternatives.len());
            let proper = !ignore.contains(&(r as u32));
            for alt in &rule.alternatives {
                starts.push(next.len() as u32);
                for s in alt {
                    next.push(match *s {
                        Symbol::Rule(q) => Next::Rule(q),
                        Symbol::Terminal(t) => Next::Terminal(t),
                    });
                    expects.push(proper && matches!(s, Symbol::Terminal(_)));
                }
                next.push(Next::End(r as u32));
                expects.push(false);
                lhs.resize(next.len(), r as u32);
            }
            alts.push(starts);
        }
        let nullable = nullable_rules(grammar, &dfas, greedy);
        Compiled {
            next,
            alts,
            lhs,
            nullable,
            dfas,
            start: grammar.start,
            expects,
            tail,
            greedy,
        }
    }

    /// The items the recognizer starts from: the start rule's alternatives at origin 0.
    pub fn initial_items(&self) -> impl Iterator<Item = Item> + '_ {
        self.alts[self.start as usize].iter().map(|&pos| Item {
            pos,
            origin: 0,
            dfa: 0,
        })
    }

    pub fn memory_bytes(&self) -> usize {
        self.next.len() * (std::mem::size_of::<Next>() + 5)
            + self.alts.iter().map(|a| a.len() * 4 + 24).sum::<usize>()
            + self.nullable.len()
            + self.dfas.memory_bytes()
    }
}

/// Rules deriving the empty string; a terminal counts as nullable when its regex
/// matches the empty string (never when `greedy`: a lexeme is never empty).
fn nullable_rules(grammar: &Grammar, dfas: &Terms, greedy: bool) -> Vec<bool> {
    let mut nullable = vec![false; grammar.rules.len()];
    let mut changed = true;
    while changed {
        changed = false;
        for (r, rule) in grammar.rules.iter().enumerate() {
            if nullable[r] {
                continue;
            }
            let empty = rule.alternatives.iter().any(|alt| {
                alt.iter().all(|s| match *s {
                    Symbol::Rule(q) => nullable[q as usize],
                    Symbol::Terminal(t) => !greedy && dfas.is_accepting(t, 0),
                })
            });
            if empty {
                nullable[r] = true;
                changed = true;
            }
        }
    }
    nullable
}
