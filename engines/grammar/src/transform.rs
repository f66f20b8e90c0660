//! Grammar-to-grammar rewrites the reference (and the writers) read through.
//!
//! - [`Grammar::expand_ignore`]: Lark's `%ignore` made explicit. Lark's dynamic lexer
//!   (`lark/parsers/xearley.py`, the scannerless Earley parser) tries every ignore
//!   terminal at every position `i` of the text; where one matches, it carries the items
//!   still waiting for a terminal (`to_scan`) past the match, and also the start rule's
//!   completed items ("if we're ignoring up to the end of the file"). At position 0 the
//!   items waiting for a terminal are the predicted ones, so ignores are accepted before
//!   the first terminal, between any two, and after the last (also when the start rule
//!   derives the empty string: the completed start item is carried). We read that as:
//!   any number of ignore matches before every terminal occurrence and at the end. It is
//!   made explicit with a fresh rule `IGN ::= "" | X IGN` (one alternative per ignore
//!   terminal `X`) put before every terminal occurrence, and a fresh start rule
//!   `START ::= S IGN`. (Lark matches an ignore terminal greedily, one match per
//!   position, where this reading takes every length its regex matches; they agree for
//!   the usual whitespace and comment terminals.)
//! - [`Grammar::expand_ignore_with`]: the same with leading and trailing ignore text
//!   optional. Without trailing: `START ::= S` (ignore text only before a terminal
//!   occurrence). Without leading: `START ::= S' IGN?` (and `START ::= ""` where `S`
//!   derives the empty string through rules alone), where each rule `A` has a copy `A'`
//!   deriving the derivations of `A` with at least one terminal occurrence and no `IGN`
//!   before the first: per alternative `Y1..Ym` and each `k` such that `Y1..Yk-1` derive
//!   the empty string through rules alone, `Yk' Yk+1..Ym` (a terminal's copy is itself,
//!   the rest expanded as usual). "First" is by derivation: a terminal matching the empty
//!   string counts (only under scannerless lexing; greedy lexemes are never empty).
//! - [`Grammar::expand_ignore_for`]: the same, where trailing ignore text is one of
//!   [`TrailingIgnore`]'s readings. `Always` and `Never` are the two above.
//!   `WhereALexemeMayFollow` (llguidance's reading) cannot be said by a grammar alone (it
//!   asks whether the *parser state* after the last terminal expects another terminal,
//!   a property of the set of parses, not of one), so the grammar is
//!   `START ::= S | S TAIL` (`S'` for `S` without leading ignore), with a fresh rule
//!   `TAIL ::= X IGN` (one alternative per ignore terminal `X`: a non-empty run of
//!   ignore matches), and the recognizer predicts `TAIL` only in a set that also
//!   expects some terminal outside the ignore rules (see `earley`). The rules reading
//!   ignore text (`IGN`, `TAIL`) are returned with the grammar.
//! - [`Grammar::trimmed`]: unproductive symbols (a terminal whose regex matches nothing,
//!   a rule that derives no finite string) and the alternatives using them dropped, then
//!   the unreachable rules and terminals; what is left is renumbered. On a trimmed
//!   grammar every Earley item is part of some sentence, which is what makes "the set is
//!   non-empty" mean "the prefix is viable". An empty language is refused, naming the
//!   start rule and the rules that only recurse.

use tokensdfa_core::ByteDfa;

use crate::error::Error;
use crate::ir::{Grammar, Rule, Symbol};
use crate::options::TrailingIgnore;

/// The rules [`Grammar::expand_ignore_for`] adds that read ignore text (numbered in its
/// result): `ign` (`IGN ::= "" | X IGN`, before every terminal occurrence) and, for
/// [`TrailingIgnore::WhereALexemeMayFollow`], `tail` (`TAIL ::= X IGN`, after the start
/// rule; the recognizer predicts it only where some other terminal is expected).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct IgnoreRules {
    pub ign: u32,
    pub tail: Option<u32>,
}

impl Grammar {
    /// The grammar with `%ignore` made explicit (see the module doc); `ignore` is empty
    /// in the result. Without ignore terminals, a clone. Same as
    /// `expand_ignore_with(true, true)`.
    pub fn expand_ignore(&self) -> Grammar {
        self.expand_ignore_with(true, true)
    }

    /// [`Grammar::expand_ignore`], where `leading: false` allows no ignore text before
    /// the text's first terminal occurrence and `trailing: false` none after its last
    /// (see the module doc). A text of ignore matches only is a sentence only with both.
    pub fn expand_ignore_with(&self, leading: bool, trailing: bool) -> Grammar {
        let trailing = if trailing {
            TrailingIgnore::Always
        } else {
            TrailingIgnore::Never
        };
        self.expand_ignore_for(leading, trailing).0
    }

    /// [`Grammar::expand_ignore_with`] with trailing ignore text read as `trailing` says,
    /// and the rules reading ignore text (None without ignore terminals: a clone). Under
    /// [`TrailingIgnore::WhereALexemeMayFollow`] the grammar alone says more than it
    /// means (its language is `Always`'s): the recognizer gates `tail` (module doc).
    pub(crate) fn expand_ignore_for(
        &self,
        leading: bool,
        trailing: TrailingIgnore,
    ) -> (Grammar, Option<IgnoreRules>) {
        if self.ignore.is_empty() {
            return (self.clone(), None);
        }
        let ign = self.rules.len() as u32;
        let mut rules: Vec<Rule> = self
            .rules
            .iter()
            .map(|r| Rule {
                name: r.name.clone(),
                alternatives: r.alternatives.iter().map(|a| with_ign(a, ign)).collect(),
            })
            .collect();
        let mut alternatives = vec![vec![]];
        for &t in &self.ignore {
            alternatives.push(vec![Symbol::Terminal(t), Symbol::Rule(ign)]);
        }
        rules.push(Rule {
            name: self.fresh_name("__ignore"),
            alternatives,
        });
        // leading: START ::= S tail; else START ::= S' tail (| "" if S derives it without
        // terminals), S' the copy of S at `first + S` (see `first_copies`); the tail is
        // IGN (Always), nothing (Never), or nothing | TAIL (WhereALexemeMayFollow), TAIL
        // numbered after the copies
        let first = ign + 2;
        let head = Symbol::Rule(if leading {
            self.start
        } else {
            first + self.start
        });
        let copies = if leading { 0 } else { self.rules.len() as u32 };
        let tail = first + copies;
        let mut start_alternatives = match trailing {
            TrailingIgnore::Always => vec![vec![head, Symbol::Rule(ign)]],
            TrailingIgnore::Never => vec![vec![head]],
            TrailingIgnore::WhereALexemeMayFollow => {
                vec![vec![head], vec![head, Symbol::Rule(tail)]]
            }
        };
        if !leading && self.terminal_free_nullable()[self.start as usize] {
            start_alternatives.push(vec![]);
        }
        rules.push(Rule {
            name: self.fresh_name("__start"),
            alternatives: start_alternatives,
        });
        if !leading {
            rules.extend(self.first_copies(ign, first));
        }
        let tail = (trailing == TrailingIgnore::WhereALexemeMayFollow).then(|| {
            rules.push(Rule {
                name: self.fresh_name("__trailing_ignore"),
                alternatives: self
                    .ignore
                    .iter()
                    .map(|&t| vec![Symbol::Terminal(t), Symbol::Rule(ign)])
                    .collect(),
            });
            tail
        });
        debug_assert!(tail.is_none_or(|t| t as usize + 1 == rules.len()));
        let grammar = Grammar {
            start: ign + 1,
            rules,
            terminals: self.terminals.clone(),
            ignore: Vec::new(),
        };
        (grammar, Some(IgnoreRules { ign, tail }))
    }

    /// Per rule `A`, its copy `A'` (numbered `first + A`): the derivations of `A` with at
    /// least one terminal occurrence, the first one without ignore text before it (the
    /// symbols before it derive the empty string without any terminal; rule `ign` is the
    /// ignore rule put before the other terminal occurrences).
    fn first_copies(&self, ign: u32, first: u32) -> Vec<Rule> {
        let free = self.terminal_free_nullable();
        self.rules
            .iter()
            .map(|r| {
                let mut alternatives: Vec<Vec<Symbol>> = Vec::new();
                for alt in &r.alternatives {
                    for (k, &s) in alt.iter().enumerate() {
                        let head = match s {
                            Symbol::Terminal(t) => Symbol::Terminal(t),
                            Symbol::Rule(q) => Symbol::Rule(first + q),
                        };
                        let a = [vec![head], with_ign(&alt[k + 1..], ign)].concat();
                        if !alternatives.contains(&a) {
                            alternatives.push(a);
                        }
                        if !matches!(s, Symbol::Rule(q) if free[q as usize]) {
                            break;
                        }
                    }
                }
                Rule {
                    name: format!("{}__first", r.name),
                    alternatives,
                }
            })
            .collect()
    }

    /// Rules deriving the empty string through rules alone (no terminal occurrence).
    fn terminal_free_nullable(&self) -> Vec<bool> {
        let mut free = vec![false; self.rules.len()];
        let mut changed = true;
        while changed {
            changed = false;
            for (r, rule) in self.rules.iter().enumerate() {
                if !free[r]
                    && rule.alternatives.iter().any(|alt| {
                        alt.iter()
                            .all(|s| matches!(*s, Symbol::Rule(q) if free[q as usize]))
                    })
                {
                    free[r] = true;
                    changed = true;
                }
            }
        }
        free
    }

    /// A rule name no rule has yet: `base`, else `base_2`, `base_3`, ...
    fn fresh_name(&self, base: &str) -> String {
        let taken = |n: &str| self.rules.iter().any(|r| r.name == n);
        if !taken(base) {
            return base.to_string();
        }
        (2..)
            .map(|k| format!("{base}_{k}"))
            .find(|n| !taken(n))
            .unwrap()
    }

    /// The grammar without unproductive and unreachable symbols (see the module doc).
    /// Errors: a terminal whose regex does not compile (named), an empty language.
    pub fn trimmed(&self) -> Result<Grammar, Error> {
        Ok(self.trimmed_with_dfas()?.0)
    }

    /// [`Grammar::trimmed`], with the minimized DFA of each kept terminal (same order).
    pub(crate) fn trimmed_with_dfas(&self) -> Result<(Grammar, Vec<ByteDfa>), Error> {
        let (g, dfas, _) = self.trimmed_with_dfas_for(false)?;
        Ok((g, dfas))
    }

    /// [`Grammar::trimmed_with_dfas`], and each rule's number in the result (`u32::MAX`
    /// where dropped); with `nonempty_matches`, a terminal is read as matching non-empty
    /// strings only (greedy lexing), so one matching only the empty string is
    /// unproductive.
    pub(crate) fn trimmed_with_dfas_for(
        &self,
        nonempty_matches: bool,
    ) -> Result<(Grammar, Vec<ByteDfa>, Vec<u32>), Error> {
        let dfas = self.terminal_dfas()?;
        let term_ok: Vec<bool> = dfas
            .iter()
            .map(|d| language_nonempty(d) && (!nonempty_matches || matches_nonempty(d)))
            .collect();
        self.trimmed_by(dfas, &term_ok)
    }

    /// The grammar trimmed (see [`Grammar::trimmed`]) where the terminals `term_ok`
    /// says are productive, with each kept terminal's `dfas` entry, and each rule's
    /// number in the result (`u32::MAX` where dropped).
    pub(crate) fn trimmed_by<T>(
        &self,
        dfas: Vec<T>,
        term_ok: &[bool],
    ) -> Result<(Grammar, Vec<T>, Vec<u32>), Error> {
        let rule_ok = self.productive_rules(term_ok);
        if !rule_ok[self.start as usize] {
            return Err(self.empty_language(term_ok, &rule_ok));
        }
        let usable = |s: &Symbol| match *s {
            Symbol::Rule(r) => rule_ok[r as usize],
            Symbol::Terminal(t) => term_ok[t as usize],
        };
        // Reachable from the start (and the ignore terminals), through usable alternatives.
        let mut rule_seen = vec![false; self.rules.len()];
        let mut term_seen = vec![false; self.terminals.len()];
        let mut stack = vec![self.start];
        rule_seen[self.start as usize] = true;
        while let Some(r) = stack.pop() {
            for alt in &self.rule(r).alternatives {
                if !alt.iter().all(usable) {
                    continue;
                }
                for &s in alt {
                    match s {
                        Symbol::Rule(q) if !rule_seen[q as usize] => {
                            rule_seen[q as usize] = true;
                            stack.push(q);
                        }
                        Symbol::Terminal(t) => term_seen[t as usize] = true,
                        Symbol::Rule(_) => {}
                    }
                }
            }
        }
        for &t in &self.ignore {
            term_seen[t as usize] |= term_ok[t as usize];
        }
        Ok(self.renumbered(&rule_seen, &term_seen, dfas, usable))
    }

    /// Keep the `rule_keep` rules and `term_keep` terminals, and the alternatives whose
    /// symbols are all `usable`, renumbered in order; with each rule's new number.
    fn renumbered<T>(
        &self,
        rule_keep: &[bool],
        term_keep: &[bool],
        dfas: Vec<T>,
        usable: impl Fn(&Symbol) -> bool,
    ) -> (Grammar, Vec<T>, Vec<u32>) {
        let renumber = |keep: &[bool]| {
            let mut next = 0u32;
            keep.iter()
                .map(|&k| {
                    let id = next;
                    next += u32::from(k);
                    if k {
                        id
                    } else {
                        u32::MAX
                    }
                })
                .collect::<Vec<u32>>()
        };
        let rule_id = renumber(rule_keep);
        let term_id = renumber(term_keep);
        let map = |s: &Symbol| match *s {
            Symbol::Rule(r) => Symbol::Rule(rule_id[r as usize]),
            Symbol::Terminal(t) => Symbol::Terminal(term_id[t as usize]),
        };
        let rules = self
            .rules
            .iter()
            .zip(rule_keep)
            .filter(|(_, &k)| k)
            .map(|(r, _)| Rule {
                name: r.name.clone(),
                alternatives: r
                    .alternatives
                    .iter()
                    .filter(|alt| alt.iter().all(&usable))
                    .map(|alt| alt.iter().map(map).collect())
                    .collect(),
            })
            .collect();
        let (terminals, dfas): (Vec<_>, Vec<_>) = self
            .terminals
            .iter()
            .zip(dfas)
            .zip(term_keep)
            .filter(|(_, &k)| k)
            .map(|((t, d), _)| (t.clone(), d))
            .unzip();
        let grammar = Grammar {
            rules,
            terminals,
            start: rule_id[self.start as usize],
            ignore: self
                .ignore
                .iter()
                .map(|&t| term_id[t as usize])
                .filter(|&t| t != u32::MAX)
                .collect(),
        };
        (grammar, dfas, rule_id)
    }

    /// Each terminal's minimized DFA; a regex that does not compile is named.
    pub(crate) fn terminal_dfas(&self) -> Result<Vec<ByteDfa>, Error> {
        self.terminals
            .iter()
            .map(|t| {
                ByteDfa::from_regex(t.regex_text()?)
                    .map(|d| d.minimized())
                    .map_err(|e| {
                        let m = format!("terminal {} (/{}/): {e}", t.name, t.regex);
                        match e {
                            tokensdfa_core::Error::LimitExceeded(_) => Error::Limit(m),
                            _ => Error::Invalid(m),
                        }
                    })
            })
            .collect()
    }

    /// Rules deriving some finite string of productive terminals (a least fixpoint).
    fn productive_rules(&self, term_ok: &[bool]) -> Vec<bool> {
        let mut ok = vec![false; self.rules.len()];
        let mut changed = true;
        while changed {
            changed = false;
            for (r, rule) in self.rules.iter().enumerate() {
                if ok[r] {
                    continue;
                }
                let derives = rule.alternatives.iter().any(|alt| {
                    alt.iter().all(|s| match *s {
                        Symbol::Rule(q) => ok[q as usize],
                        Symbol::Terminal(t) => term_ok[t as usize],
                    })
                });
                if derives {
                    ok[r] = true;
                    changed = true;
                }
            }
        }
        ok
    }

    /// The empty-language error: names the start rule, the unproductive rules reachable
    /// from it that recurse into themselves, and the terminals that match nothing.
    fn empty_language(&self, term_ok: &[bool], rule_ok: &[bool]) -> Error {
        let reach = |from: u32| {
            let mut seen = vec![false; self.rules.len()];
            let mut stack = vec![from];
            let mut terms = Vec::new();
            while let Some(r) = stack.pop() {
                for s in self.rule(r).alternatives.iter().flatten() {
                    match *s {
                        Symbol::Rule(q) if !rule_ok[q as usize] && !seen[q as usize] => {
                            seen[q as usize] = true;
                            stack.push(q);
                        }
                        Symbol::Terminal(t) if !term_ok[t as usize] => terms.push(t),
                        _ => {}
                    }
                }
            }
            (seen, terms)
        };
        let (from_start, mut dead_terms) = reach(self.start);
        let mut message = format!(
            "the grammar's language is empty: the start rule {} derives no finite string",
            self.rule(self.start).name
        );
        let cyclic: Vec<&str> = (0..self.rules.len() as u32)
            .filter(|&r| (r == self.start || from_start[r as usize]) && reach(r).0[r as usize])
            .map(|r| self.rule(r).name.as_str())
            .collect();
        if !cyclic.is_empty() {
            message += &format!(
                "; rule {} only recurses (every alternative leads back to it without end)",
                cyclic.join(", ")
            );
        }
        dead_terms.sort_unstable();
        dead_terms.dedup();
        if !dead_terms.is_empty() {
            let names: Vec<&str> = dead_terms
                .iter()
                .map(|&t| self.terminal(t).name.as_str())
                .collect();
            message += &format!("; terminal {} matches nothing", names.join(", "));
        }
        Error::Invalid(message)
    }
}

/// Whether the DFA accepts some string: its start accepts, or leads to a live state (in
/// a live-pruned DFA every non-`DEAD` state reaches a match).
fn language_nonempty(dfa: &ByteDfa) -> bool {
    dfa.is_accepting(0) || matches_nonempty(dfa)
}

/// Whether the DFA accepts some non-empty string.
fn matches_nonempty(dfa: &ByteDfa) -> bool {
    (0..=255u8).any(|b| dfa.next(0, b) != tokensdfa_core::dfa::DEAD)
}

/// `alt` with the ignore rule `ign` before each terminal occurrence.
fn with_ign(alt: &[Symbol], ign: u32) -> Vec<Symbol> {
    let mut out = Vec::with_capacity(alt.len() * 2);
    for &s in alt {
        if let Symbol::Terminal(_) = s {
            out.push(Symbol::Rule(ign));
        }
        out.push(s);
    }
    out
}
