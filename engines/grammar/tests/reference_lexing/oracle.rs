//! An oracle for the lexing modes, independent of the Earley recognizer and of
//! `expand_ignore`: texts are cut into *lexemes* (a grammar terminal or an ignore
//! terminal, each a finite set of words), and the lexeme sequence is judged against the
//! grammar's finite language of terminal sequences.
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

use std::collections::{BTreeSet, HashSet};

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
    pub trailing: bool,
}

impl LexOracle {
    /// `sentences` must only use terminals that can match (non-empty words when greedy).
    pub fn new(
        words: Vec<BTreeSet<Vec<u8>>>,
        ignore: Vec<usize>,
        sentences: BTreeSet<Vec<usize>>,
        (greedy, leading, trailing): (bool, bool, bool),
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
        !self.trailing && matches!(u.last(), Some(Kind::Ign(_)))
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

    /// `(live, sentence)` for the text `p`.
    pub fn judge(&self, p: &[u8]) -> (bool, bool) {
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
}
