//! An oracle for the lexing modes, independent of the Earley recognizer and of
//! `expand_ignore`: texts are cut into *lexemes* (a grammar terminal or an ignore
//! terminal, each a finite set of words), and the lexeme sequences are judged against the
//! grammar's finite language of terminal sequences. Two readings, which must agree where
//! both apply:
//!
//! ## Per sequence ([`LexOracle::judge_per_path`], trailing ignore `Always` or `Never`)
//!
//! - A lexeme sequence `u` is *viable* when its grammar terminals (ignores dropped) are a
//!   prefix of a terminal sentence, it does not start with an ignore when leading ignore
//!   is off, and, when trailing ignore is off and it ends with an ignore, a grammar
//!   terminal can still follow. It is a *sentence* when its grammar terminals are a
//!   terminal sentence, it does not start (leading off) or end (trailing off) with an
//!   ignore.
//! - Scannerless: a prefix is live iff some cut of it into lexemes and a last partial
//!   one (a prefix of a word) is viable; empty grammar-terminal lexemes are allowed,
//!   empty ignore lexemes add nothing and are left out.
//! - Greedy: lexemes are non-empty, and the cut is forced: at a lexeme start the allowed
//!   set is every lexeme kind that extends some viable sequence read so far; the lexeme
//!   runs while some allowed kind has the text read as a prefix of a word, and ends
//!   where none takes the next byte (if no allowed kind takes the first byte, or no kind
//!   matches the lexeme, the text is dead). A prefix is live iff it is not dead.
//!
//! ## Per parser state ([`LexOracle::judge`], every mode)
//!
//! The *state* at a lexeme boundary is the set of all sequences cutting the text read so
//! far exactly, each kept as its grammar terminals `s` and how it ends: with a grammar
//! terminal (or nothing), or with an ignore run that may end the text or not. A lexeme
//! of grammar terminal `t` takes the sequences with `s·t` a prefix of a sentence. An
//! ignore lexeme (not as the first lexeme without leading ignore) takes a sequence
//! ending with a grammar terminal, by trailing ignore:
//!
//! - `Always`: every one, its run may end the text;
//! - `Never`: those with `s` a proper prefix of a sentence, runs never end the text;
//! - `WhereALexemeMayFollow`: those with `s` a proper prefix (an ignore before a next
//!   terminal), and, where the *state* has some `s'` that is a proper prefix (the parser
//!   allows a lexeme here), those with `s` a sentence; a run may end the text iff `s` is
//!   a sentence and the state allowed a lexeme where it started;
//!
//! and a sequence ending with an ignore run, the run going on (as the same kind of
//! run). A text is a sentence iff its final state has a sequence with `s` a sentence,
//! ending with a grammar terminal or a run that may end the text. Scannerless: the
//! states at every position, forward (empty grammar-terminal lexemes closing a state
//! first); a prefix is live iff its state is non-empty or some state before takes a
//! lexeme of which the rest of the text is a prefix. Greedy: the cut is forced as above,
//! the allowed set being the kinds that take some sequence of the state.

use std::collections::{BTreeSet, HashSet};

use tokensdfa_grammar::TrailingIgnore;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    Gram(usize),
    Ign(usize),
}

pub struct LexOracle {
    /// Each terminal's words.
    pub words: Vec<BTreeSet<Vec<u8>>>,
    pub ignore: Vec<usize>,
    /// Terminal sentences (grammar terminal ids) and all their prefixes, with whether
    /// the prefix is proper (some sentence is longer).
    pub sentences: BTreeSet<Vec<usize>>,
    prefixes: HashSet<Vec<usize>>,
    proper: HashSet<Vec<usize>>,
    pub greedy: bool,
    pub leading: bool,
    pub trailing: TrailingIgnore,
}

/// A lexeme sequence as the per-state reading keeps it: its grammar terminals, and how
/// it ends (None: with a grammar terminal or nothing; Some(may_end): with an ignore run,
/// which may end the text or not).
type Seq = (Vec<usize>, Option<bool>);

impl LexOracle {
    /// `sentences` must only use terminals that can match (non-empty words when greedy).
    pub fn new(
        words: Vec<BTreeSet<Vec<u8>>>,
        ignore: Vec<usize>,
        sentences: BTreeSet<Vec<usize>>,
        (greedy, leading, trailing): (bool, bool, TrailingIgnore),
    ) -> LexOracle {
        let mut prefixes = HashSet::new();
        let mut proper = HashSet::new();
        for s in &sentences {
            for k in 0..=s.len() {
                prefixes.insert(s[..k].to_vec());
                if k < s.len() {
                    proper.insert(s[..k].to_vec());
                }
            }
        }
        LexOracle {
            words,
            ignore,
            sentences,
            prefixes,
            proper,
            greedy,
            leading,
            trailing,
        }
    }

    fn kinds(&self) -> Vec<Kind> {
        let mut k: Vec<Kind> = (0..self.words.len()).map(Kind::Gram).collect();
        k.extend(self.ignore.iter().map(|&t| Kind::Ign(t)));
        k
    }

    fn words_of(&self, k: Kind) -> &BTreeSet<Vec<u8>> {
        match k {
            Kind::Gram(t) | Kind::Ign(t) => &self.words[t],
        }
    }

    fn strip(u: &[Kind]) -> Vec<usize> {
        u.iter()
            .filter_map(|k| match *k {
                Kind::Gram(t) => Some(t),
                Kind::Ign(_) => None,
            })
            .collect()
    }

    /// A leading ignore where they are off.
    fn bad_lead(&self, u: &[Kind]) -> bool {
        !self.leading && matches!(u.first(), Some(Kind::Ign(_)))
    }

    /// A trailing ignore where they are off.
    fn bad_tail(&self, u: &[Kind]) -> bool {
        self.trailing == TrailingIgnore::Never && matches!(u.last(), Some(Kind::Ign(_)))
    }

    pub fn viable(&self, u: &[Kind]) -> bool {
        let s = Self::strip(u);
        self.prefixes.contains(&s)
            && !self.bad_lead(u)
            && (!self.bad_tail(u) || self.proper.contains(&s))
    }

    pub fn sentence(&self, u: &[Kind]) -> bool {
        self.sentences.contains(&Self::strip(u)) && !self.bad_lead(u) && !self.bad_tail(u)
    }

    fn is_prefix(&self, k: Kind, s: &[u8]) -> bool {
        self.words_of(k).iter().any(|w| w.starts_with(s))
    }

    /// `(live, sentence)` for the text `p`, per sequence (trailing ignore `Always` or
    /// `Never` only).
    pub fn judge_per_path(&self, p: &[u8]) -> (bool, bool) {
        assert_ne!(self.trailing, TrailingIgnore::WhereALexemeMayFollow);
        if self.greedy {
            self.judge_greedy(p)
        } else {
            let live = self.dfs(p, 0, &mut Vec::new(), false, &mut HashSet::new());
            let sentence = self.dfs(p, 0, &mut Vec::new(), true, &mut HashSet::new());
            (live, sentence)
        }
    }

    /// Scannerless: is there a cut of `p[i..]` after `u` (`full`: into whole lexemes
    /// making a sentence; else with a last partial lexeme, viable)?
    fn dfs(
        &self,
        p: &[u8],
        i: usize,
        u: &mut Vec<Kind>,
        full: bool,
        seen: &mut HashSet<(usize, Vec<Kind>)>,
    ) -> bool {
        if !seen.insert((i, u.clone())) {
            return false;
        }
        if i == p.len()
            && (if full {
                self.sentence(u)
            } else {
                self.viable(u)
            })
        {
            return true;
        }
        for k in self.kinds() {
            u.push(k);
            if self.viable(u) {
                if !full && i < p.len() && self.is_prefix(k, &p[i..]) {
                    u.pop();
                    return true;
                }
                let min = usize::from(matches!(k, Kind::Ign(_)));
                for j in i + min..=p.len() {
                    if self.words_of(k).contains(&p[i..j]) && self.dfs(p, j, u, full, seen) {
                        u.pop();
                        return true;
                    }
                }
            }
            u.pop();
        }
        false
    }

    fn judge_greedy(&self, p: &[u8]) -> (bool, bool) {
        let mut paths: BTreeSet<Vec<Kind>> = [vec![]].into();
        let mut i = 0;
        if p.is_empty() {
            return (true, paths.iter().any(|u| self.sentence(u)));
        }
        loop {
            let extend = |k: Kind| {
                paths.iter().filter_map(move |u| {
                    let mut v = u.clone();
                    v.push(k);
                    self.viable(&v).then_some(v)
                })
            };
            let allowed: Vec<Kind> = self
                .kinds()
                .into_iter()
                .filter(|&k| extend(k).next().is_some())
                .collect();
            let mut j = i;
            while allowed.iter().any(|&k| self.is_prefix(k, &p[i..=j])) {
                j += 1;
                if j == p.len() {
                    let sentence = allowed.iter().any(|&k| {
                        self.words_of(k).contains(&p[i..]) && extend(k).any(|v| self.sentence(&v))
                    });
                    return (true, sentence);
                }
            }
            if j == i {
                return (false, false);
            }
            let next: BTreeSet<Vec<Kind>> = allowed
                .iter()
                .filter(|&&k| self.words_of(k).contains(&p[i..j]))
                .flat_map(|&k| extend(k))
                .collect();
            if next.is_empty() {
                return (false, false);
            }
            paths = next;
            i = j;
        }
    }

    // ---- per parser state ----

    /// The state after one more lexeme of kind `k` from `state` (see the module doc).
    fn step(&self, state: &BTreeSet<Seq>, k: Kind) -> BTreeSet<Seq> {
        match k {
            Kind::Gram(t) => state
                .iter()
                .filter_map(|(s, _)| {
                    let mut v = s.clone();
                    v.push(t);
                    self.prefixes.contains(&v).then_some((v, None))
                })
                .collect(),
            Kind::Ign(_) => {
                let lexeme_allowed = state.iter().any(|(s, _)| self.proper.contains(s));
                state
                    .iter()
                    .filter_map(|(s, end)| {
                        let first = s.is_empty() && end.is_none();
                        if first && !self.leading {
                            return None;
                        }
                        let proper = self.proper.contains(s);
                        let may_end = match (self.trailing, *end) {
                            (TrailingIgnore::Always, _) => true,
                            (TrailingIgnore::Never, _) => false,
                            (TrailingIgnore::WhereALexemeMayFollow, Some(may_end)) => may_end,
                            (TrailingIgnore::WhereALexemeMayFollow, None) => {
                                lexeme_allowed && self.sentences.contains(s)
                            }
                        };
                        let takes = match self.trailing {
                            TrailingIgnore::Always => true,
                            _ => proper || may_end,
                        };
                        takes.then(|| (s.clone(), Some(may_end)))
                    })
                    .collect()
            }
        }
    }

    fn state_accepts(&self, state: &BTreeSet<Seq>) -> bool {
        state
            .iter()
            .any(|(s, end)| self.sentences.contains(s) && end.unwrap_or(true))
    }

    /// `(live, sentence)` for the text `p`, per parser state.
    pub fn judge(&self, p: &[u8]) -> (bool, bool) {
        let start: BTreeSet<Seq> = [(vec![], None)].into();
        if self.greedy {
            self.judge_states_greedy(p, start)
        } else {
            self.judge_states_scannerless(p, start)
        }
    }

    fn judge_states_scannerless(&self, p: &[u8], start: BTreeSet<Seq>) -> (bool, bool) {
        let n = p.len();
        let mut states: Vec<BTreeSet<Seq>> = vec![BTreeSet::new(); n + 1];
        states[0] = start;
        let mut live = false;
        for i in 0..=n {
            // empty grammar-terminal lexemes
            loop {
                let before = states[i].len();
                for t in 0..self.words.len() {
                    if self.words[t].contains(&[][..]) {
                        let more = self.step(&states[i], Kind::Gram(t));
                        states[i].extend(more);
                    }
                }
                if states[i].len() == before {
                    break;
                }
            }
            if states[i].is_empty() {
                continue;
            }
            for k in self.kinds() {
                let next = self.step(&states[i], k);
                if next.is_empty() {
                    continue;
                }
                live |= i < n && self.is_prefix(k, &p[i..]);
                for j in i + 1..=n {
                    if self.words_of(k).contains(&p[i..j]) {
                        states[j].extend(next.iter().cloned());
                    }
                }
            }
        }
        (
            live || !states[n].is_empty(),
            self.state_accepts(&states[n]),
        )
    }

    fn judge_states_greedy(&self, p: &[u8], mut state: BTreeSet<Seq>) -> (bool, bool) {
        let mut i = 0;
        if p.is_empty() {
            return (true, self.state_accepts(&state));
        }
        loop {
            let allowed: Vec<(Kind, BTreeSet<Seq>)> = self
                .kinds()
                .into_iter()
                .map(|k| (k, self.step(&state, k)))
                .filter(|(_, next)| !next.is_empty())
                .collect();
            let mut j = i;
            while allowed.iter().any(|&(k, _)| self.is_prefix(k, &p[i..=j])) {
                j += 1;
                if j == p.len() {
                    let sentence = allowed.iter().any(|(k, next)| {
                        self.words_of(*k).contains(&p[i..]) && self.state_accepts(next)
                    });
                    return (true, sentence);
                }
            }
            if j == i {
                return (false, false);
            }
            let next: BTreeSet<Seq> = allowed
                .into_iter()
                .filter(|&(k, _)| self.words_of(k).contains(&p[i..j]))
                .flat_map(|(_, next)| next)
                .collect();
            if next.is_empty() {
                return (false, false);
            }
            state = next;
            i = j;
        }
    }
}
