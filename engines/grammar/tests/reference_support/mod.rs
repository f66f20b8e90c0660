//! Test support for the reference: a small grammar notation to build [`Grammar`] values
//! (the crate's readers are not used, so these tests hold the index alone), two oracles
//! independent of the Earley recognizer (the language up to a length, by a fixpoint over
//! sets of strings; and [`Oracle`], exact viability and membership of a prefix by the
//! Bar-Hillel construction), and walks comparing the index with them at every reachable
//! state.
//!
//! Notation: `grammar("s", &[("s", "a 'x' | B |"), ("a", "/[0-9]+/")], &[("B", "b+")])`:
//! alternatives split on `|` (an empty one derives the empty string), symbols on spaces:
//! a lowercase word is a rule, an uppercase word a named terminal, `'lit'` a literal
//! (`\s` in it stands for a space), `/re/` a regex terminal.

#![allow(dead_code)]

use std::collections::{BTreeSet, HashSet};

use proptest::prelude::*;
use tokensdfa_core::{ByteDfa, Vocabulary};
use tokensdfa_grammar::{Grammar, NaiveGrammarIndex, Rule, Symbol, Terminal};

pub fn grammar(start: &str, rules: &[(&str, &str)], terms: &[(&str, &str)]) -> Grammar {
    let mut g = Grammar {
        rules: rules
            .iter()
            .map(|(n, _)| Rule {
                name: n.to_string(),
                alternatives: vec![],
            })
            .collect(),
        terminals: terms
            .iter()
            .map(|(n, r)| Terminal::of_regex(n.to_string(), r.to_string()))
            .collect(),
        start: 0,
        ignore: vec![],
    };
    g.start = rule_id(&g, start);
    for (r, (_, body)) in rules.iter().enumerate() {
        let alts = body
            .split('|')
            .map(|alt| alt.split_whitespace().map(|w| symbol(&mut g, w)).collect())
            .collect();
        g.rules[r].alternatives = alts;
    }
    g
}

/// The grammar with the named terminals as `%ignore`.
pub fn with_ignore(mut g: Grammar, names: &[&str]) -> Grammar {
    g.ignore = names
        .iter()
        .map(|n| g.terminals.iter().position(|t| t.name == *n).unwrap() as u32)
        .collect();
    g
}

fn rule_id(g: &Grammar, name: &str) -> u32 {
    g.rules
        .iter()
        .position(|r| r.name == name)
        .unwrap_or_else(|| panic!("no rule {name}")) as u32
}

fn terminal(g: &mut Grammar, name: String, regex: String) -> Symbol {
    if let Some(i) = g.terminals.iter().position(|t| t.regex == regex) {
        return Symbol::Terminal(i as u32);
    }
    g.terminals.push(Terminal::of_regex(name, regex));
    Symbol::Terminal(g.terminals.len() as u32 - 1)
}

fn symbol(g: &mut Grammar, w: &str) -> Symbol {
    if let Some(lit) = w.strip_prefix('\'').and_then(|w| w.strip_suffix('\'')) {
        let lit = lit.replace("\\s", " ");
        terminal(g, format!("{lit:?}"), regex_syntax::escape(&lit))
    } else if let Some(re) = w.strip_prefix('/').and_then(|w| w.strip_suffix('/')) {
        terminal(g, w.to_string(), re.to_string())
    } else if w.starts_with(|c: char| c.is_ascii_uppercase()) {
        let i = g.terminals.iter().position(|t| t.name == w);
        Symbol::Terminal(i.unwrap_or_else(|| panic!("no terminal {w}")) as u32)
    } else {
        Symbol::Rule(rule_id(g, w))
    }
}

pub fn vocab(tokens: &[&[u8]]) -> Vocabulary {
    Vocabulary::new(tokens, 0, &[]).unwrap()
}

/// Every string over `alphabet` of length at most `n`.
pub fn strings_upto(alphabet: &[u8], n: usize) -> Vec<Vec<u8>> {
    let mut all = vec![vec![]];
    let mut layer = vec![vec![]];
    for _ in 0..n {
        let mut next = Vec::new();
        for s in &layer {
            for &c in alphabet {
                let mut t: Vec<u8> = s.clone();
                t.push(c);
                next.push(t);
            }
        }
        all.extend(next.iter().cloned());
        layer = next;
    }
    all
}

/// The sentences of `g` (with `%ignore` read as "any run of ignore matches before every
/// terminal and at the end") of at most `n` bytes over `alphabet`: terminal languages by
/// testing every string with the terminal's DFA, rule languages by a fixpoint.
pub fn language_upto(g: &Grammar, alphabet: &[u8], n: usize) -> BTreeSet<Vec<u8>> {
    let universe = strings_upto(alphabet, n);
    let term_lang: Vec<BTreeSet<Vec<u8>>> = g
        .terminals
        .iter()
        .map(|t| {
            let dfa = ByteDfa::from_regex(&t.regex).unwrap();
            universe
                .iter()
                .filter(|s| {
                    let st = dfa.walk(0, s);
                    st != tokensdfa_core::dfa::DEAD && dfa.is_accepting(st)
                })
                .cloned()
                .collect()
        })
        .collect();
    // IGN* up to n bytes
    let mut ign: BTreeSet<Vec<u8>> = [vec![]].into();
    loop {
        let mut grown = ign.clone();
        for &t in &g.ignore {
            grown.extend(concat(&ign, &term_lang[t as usize], n));
        }
        if grown == ign {
            break;
        }
        ign = grown;
    }
    let term_lang: Vec<BTreeSet<Vec<u8>>> = if g.ignore.is_empty() {
        term_lang
    } else {
        term_lang.iter().map(|l| concat(&ign, l, n)).collect()
    };
    let mut rules: Vec<BTreeSet<Vec<u8>>> = vec![BTreeSet::new(); g.rules.len()];
    loop {
        let mut changed = false;
        for r in 0..g.rules.len() {
            for alt in &g.rules[r].alternatives {
                let mut acc: BTreeSet<Vec<u8>> = [vec![]].into();
                for s in alt {
                    let l = match *s {
                        Symbol::Rule(q) => &rules[q as usize],
                        Symbol::Terminal(t) => &term_lang[t as usize],
                    };
                    acc = concat(&acc, l, n);
                }
                for s in acc {
                    changed |= rules[r].insert(s);
                }
            }
        }
        if !changed {
            break;
        }
    }
    let start = rules[g.start as usize].clone();
    if g.ignore.is_empty() {
        start
    } else {
        concat(&start, &ign, n)
    }
}

fn concat(a: &BTreeSet<Vec<u8>>, b: &BTreeSet<Vec<u8>>, n: usize) -> BTreeSet<Vec<u8>> {
    let mut out = BTreeSet::new();
    for x in a {
        for y in b {
            if x.len() + y.len() <= n {
                let mut s = x.clone();
                s.extend_from_slice(y);
                out.insert(s);
            }
        }
    }
    out
}

/// Compare the index with the oracle `lang` at every state reachable within `depth`
/// tokens whose prefix is at most `check_len` bytes, for the tokens `t` with
/// `|p·t| <= check_len` (the oracle's language must hold every sentence of at most `n`
/// bytes with `n` large enough that each such viable `p·t` has a completion in it).
/// Returns the number of states checked.
pub fn check_against(
    ix: &NaiveGrammarIndex,
    tokens: &[&[u8]],
    special: &[u32],
    lang: &BTreeSet<Vec<u8>>,
    depth: usize,
    check_len: usize,
) -> usize {
    let mut prefixes: HashSet<&[u8]> = HashSet::new();
    for s in lang {
        for k in 0..=s.len() {
            prefixes.insert(&s[..k]);
        }
    }
    let mut frontier = vec![(ix.initial_state(), Vec::<u8>::new())];
    let mut checked = 0;
    for level in 0..=depth {
        let mut next = Vec::new();
        for (state, p) in frontier {
            checked += 1;
            assert_eq!(
                ix.is_accepting(state),
                lang.contains(&p),
                "accepting at {:?}",
                String::from_utf8_lossy(&p)
            );
            let allowed: HashSet<u32> = ix.allowed(state).unwrap().into_iter().collect();
            assert_eq!(allowed.contains(&0), lang.contains(&p), "EOS at {p:?}");
            for (t, &bytes) in tokens.iter().enumerate().skip(1) {
                let t = t as u32;
                let mut pt = p.clone();
                pt.extend_from_slice(bytes);
                if pt.len() > check_len {
                    continue;
                }
                let want = !special.contains(&t) && !bytes.is_empty() && prefixes.contains(&pt[..]);
                let got = allowed.contains(&t);
                assert_eq!(got, want, "token {t} {bytes:?} at prefix {p:?}");
                let step = ix.next_state(state, t).unwrap();
                assert_eq!(step.is_some(), want, "next_state {t} at {p:?}");
                if let (Some(s), true) = (step, level < depth) {
                    next.push((s, pt));
                }
            }
        }
        frontier = next;
    }
    checked
}

/// An exact oracle for any grammar (recursive, nullable, ambiguous), independent of the
/// Earley recognizer: whether `q` is a viable prefix and a sentence, by the Bar-Hillel
/// construction — the least fixpoint of "rule `A` derives a string spanning positions
/// `i..j` of `q`", where the position after the last, `STAR`, stands for "past `q`,
/// anything". `%ignore` is read through `expand_ignore`.
pub struct Oracle {
    g: Grammar,
    dfas: Vec<ByteDfa>,
}

impl Oracle {
    pub fn new(g: &Grammar) -> Oracle {
        let g = g.expand_ignore();
        let dfas = g
            .terminals
            .iter()
            .map(|t| ByteDfa::from_regex(&t.regex).unwrap())
            .collect();
        Oracle { g, dfas }
    }

    /// Does terminal `t` match a string spanning `i..j` (`j == star`: `q[i..]` and more)?
    fn terminal(&self, t: usize, q: &[u8], i: usize, j: usize) -> bool {
        let (dfa, star) = (&self.dfas[t], q.len() + 1);
        let live = |s: u32| s != tokensdfa_core::dfa::DEAD;
        if i == star {
            return dfa.is_accepting(0) || (0..=255u8).any(|b| live(dfa.next(0, b)));
        }
        let end = if j == star { q.len() } else { j };
        let s = dfa.walk(0, &q[i..end]);
        live(s) && (j == star || dfa.is_accepting(s))
    }

    /// `(viable, sentence)` for the prefix `q`.
    pub fn judge(&self, q: &[u8]) -> (bool, bool) {
        let (n, star) = (q.len(), q.len() + 1);
        let positions = n + 2;
        let idx = |r: usize, i: usize, j: usize| (r * positions + i) * positions + j;
        let mut ok = vec![false; self.g.rules.len() * positions * positions];
        let mut changed = true;
        while changed {
            changed = false;
            for (r, rule) in self.g.rules.iter().enumerate() {
                for alt in &rule.alternatives {
                    for i in 0..positions {
                        let mut reach = vec![false; positions];
                        reach[i] = true;
                        for s in alt {
                            let mut next = vec![false; positions];
                            for a in (0..positions).filter(|&a| reach[a]) {
                                for (b, slot) in next.iter_mut().enumerate().skip(a) {
                                    *slot |= match *s {
                                        Symbol::Rule(q2) => ok[idx(q2 as usize, a, b)],
                                        Symbol::Terminal(t) => self.terminal(t as usize, q, a, b),
                                    };
                                }
                            }
                            reach = next;
                        }
                        for j in (0..positions).filter(|&j| reach[j]) {
                            if !ok[idx(r, i, j)] {
                                ok[idx(r, i, j)] = true;
                                changed = true;
                            }
                        }
                    }
                }
            }
        }
        let s = self.g.start as usize;
        (ok[idx(s, 0, star)] || ok[idx(s, 0, n)], ok[idx(s, 0, n)])
    }
}

/// Compare the index with the [`Oracle`] at every state reachable within `depth` tokens,
/// for every token. Returns the number of states checked.
pub fn check_exact(
    ix: &NaiveGrammarIndex,
    oracle: &Oracle,
    tokens: &[&[u8]],
    special: &[u32],
    depth: usize,
) -> usize {
    let mut frontier = vec![(ix.initial_state(), Vec::<u8>::new())];
    let mut checked = 0;
    for level in 0..=depth {
        let mut next = Vec::new();
        for (state, p) in frontier {
            checked += 1;
            let sentence = oracle.judge(&p).1;
            assert_eq!(ix.is_accepting(state), sentence, "accepting at {p:?}");
            let allowed: HashSet<u32> = ix.allowed(state).unwrap().into_iter().collect();
            assert_eq!(allowed.contains(&0), sentence, "EOS at {p:?}");
            for (t, &bytes) in tokens.iter().enumerate().skip(1) {
                let t = t as u32;
                let mut pt = p.clone();
                pt.extend_from_slice(bytes);
                let want = !special.contains(&t) && !bytes.is_empty() && oracle.judge(&pt).0;
                assert_eq!(allowed.contains(&t), want, "token {t} {bytes:?} at {p:?}");
                let step = ix.next_state(state, t).unwrap();
                assert_eq!(step.is_some(), want, "next_state {t} at {p:?}");
                if let (Some(s), true) = (step, level < depth) {
                    next.push((s, pt));
                }
            }
        }
        frontier = next;
    }
    checked
}

// The random recursive grammars of `reference_recursive` and `pushdown`.

/// Terminal regexes of the random recursive grammars (some match the empty string).
pub const REGEXES: &[&str] = &[
    "a", "b", "c", "ab", "a+", "(ab)*", "b?", "[a-c]", "", "ca|b", "a*b", "[ab]{2}", "cc?",
];

pub type RawRules = Vec<Vec<Vec<(bool, usize)>>>;

/// Up to 4 rules of up to 3 alternatives of up to 3 symbols, each naming any rule or
/// terminal (left, right and nullable cycles, ambiguity).
pub fn raw_rules() -> impl Strategy<Value = RawRules> {
    let sym = (any::<bool>(), 0..16usize);
    let alt = prop::collection::vec(sym, 0..=3);
    prop::collection::vec(prop::collection::vec(alt, 1..=3), 1..=4)
}

/// The grammar of `raw` over `terms` (rule 0 the start; terminal 0 `%ignore`d if asked).
pub fn build(raw: &RawRules, terms: &[&str], ignore: bool) -> Grammar {
    let n = raw.len();
    let rules = raw
        .iter()
        .enumerate()
        .map(|(i, alts)| Rule {
            name: format!("r{i}"),
            alternatives: alts
                .iter()
                .map(|alt| {
                    alt.iter()
                        .map(|&(is_rule, k)| {
                            if is_rule {
                                Symbol::Rule((k % n) as u32)
                            } else {
                                Symbol::Terminal((k % terms.len()) as u32)
                            }
                        })
                        .collect()
                })
                .collect(),
        })
        .collect();
    Grammar {
        rules,
        terminals: terms
            .iter()
            .enumerate()
            .map(|(i, r)| Terminal::of_regex(format!("T{i}"), r.to_string()))
            .collect(),
        start: 0,
        ignore: if ignore { vec![0] } else { vec![] },
    }
}

/// A token of 0 to 3 bytes over `{a, b, c}`.
pub fn token() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(prop::sample::select(b"abc".to_vec()), 0..=3)
}
