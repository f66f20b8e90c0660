//! Test-only language checks for the read/write tests: a small Earley recognizer over
//! bytes with DFA terminals, a random sentence generator, and the corpus files. Kept
//! apart from the crate's own Earley reference on purpose (an independent check).

#![allow(dead_code)]

use std::collections::{HashSet, VecDeque};
use std::path::PathBuf;

use tokensdfa_core::dfa::DEAD;
use tokensdfa_core::ByteDfa;
use tokensdfa_grammar::{Grammar, Notation, Symbol};

/// Every corpus grammar file: (path, notation).
pub fn corpus() -> Vec<(PathBuf, Notation)> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpora/grammars");
    let mut out = Vec::new();
    for (dir, notation) in [
        ("gbnf", Notation::Gbnf),
        ("ebnf", Notation::Ebnf),
        ("lark", Notation::Lark),
    ] {
        let mut v: Vec<PathBuf> = std::fs::read_dir(root.join(dir))
            .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
        v.retain(|p| p.extension().is_some_and(|x| x == dir));
        v.sort();
        out.extend(v.into_iter().map(|p| (p, notation)));
    }
    out
}

pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// A grammar with `%ignore` expanded and its terminals compiled.
pub struct Lang {
    pub g: Grammar,
    dfas: Vec<ByteDfa>,
    nullable: Vec<bool>,
    height: Vec<u32>,
}

impl Lang {
    pub fn new(g: &Grammar) -> Lang {
        let g = g.expand_ignore();
        let dfas: Vec<ByteDfa> = g
            .terminals
            .iter()
            .map(|t| ByteDfa::from_regex(&t.regex).expect("terminal compiles"))
            .collect();
        let mut nullable = vec![false; g.rules.len()];
        let mut height = vec![u32::MAX; g.rules.len()];
        loop {
            let mut changed = false;
            for (i, r) in g.rules.iter().enumerate() {
                for alt in &r.alternatives {
                    let n = alt.iter().all(|s| match *s {
                        Symbol::Rule(j) => nullable[j as usize],
                        Symbol::Terminal(t) => dfas[t as usize].is_accepting(0),
                    });
                    if n && !nullable[i] {
                        nullable[i] = true;
                        changed = true;
                    }
                    let h = alt.iter().map(|s| match *s {
                        Symbol::Rule(j) => height[j as usize],
                        Symbol::Terminal(_) => 0,
                    });
                    let h = h.max().unwrap_or(0).saturating_add(1);
                    if h < height[i] {
                        height[i] = h;
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
        Lang {
            g,
            dfas,
            nullable,
            height,
        }
    }

    /// Whether `input` is a sentence of the grammar.
    pub fn accepts(&self, input: &[u8]) -> bool {
        type Item = (u32, u32, u32, u32);
        let n = input.len();
        let mut chart: Vec<Vec<Item>> = vec![Vec::new(); n + 1];
        let mut seen: Vec<HashSet<Item>> = vec![HashSet::new(); n + 1];
        let add =
            |chart: &mut Vec<Vec<Item>>, seen: &mut Vec<HashSet<Item>>, k: usize, it: Item| {
                if seen[k].insert(it) {
                    chart[k].push(it);
                }
            };
        let s = self.g.start;
        for a in 0..self.g.rule(s).alternatives.len() {
            add(&mut chart, &mut seen, 0, (s, a as u32, 0, 0));
        }
        for i in 0..=n {
            let mut k = 0;
            while k < chart[i].len() {
                let (r, a, d, o) = chart[i][k];
                k += 1;
                let alt = &self.g.rule(r).alternatives[a as usize];
                if (d as usize) < alt.len() {
                    match alt[d as usize] {
                        Symbol::Rule(q) => {
                            for b in 0..self.g.rule(q).alternatives.len() {
                                add(&mut chart, &mut seen, i, (q, b as u32, 0, i as u32));
                            }
                            if self.nullable[q as usize] {
                                add(&mut chart, &mut seen, i, (r, a, d + 1, o));
                            }
                        }
                        Symbol::Terminal(t) => {
                            let dfa = &self.dfas[t as usize];
                            let mut st = 0u32;
                            if dfa.is_accepting(st) {
                                add(&mut chart, &mut seen, i, (r, a, d + 1, o));
                            }
                            for (j, &byte) in input.iter().enumerate().skip(i) {
                                st = dfa.next(st, byte);
                                if st == DEAD {
                                    break;
                                }
                                if dfa.is_accepting(st) {
                                    add(&mut chart, &mut seen, j + 1, (r, a, d + 1, o));
                                }
                            }
                        }
                    }
                } else {
                    let parents: Vec<Item> = chart[o as usize].clone();
                    for (pr, pa, pd, po) in parents {
                        let palt = &self.g.rule(pr).alternatives[pa as usize];
                        if palt.get(pd as usize) == Some(&Symbol::Rule(r)) {
                            add(&mut chart, &mut seen, i, (pr, pa, pd + 1, po));
                        }
                    }
                }
            }
        }
        chart[n].iter().any(|&(r, a, d, o)| {
            r == s && o == 0 && d as usize == self.g.rule(r).alternatives[a as usize].len()
        })
    }

    /// A random sentence (derivations cut to the shortest past `depth`), at most `cap` bytes.
    pub fn sample(&self, rng: &mut Rng, depth: u32, cap: usize) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        let mut budget = 5_000usize;
        self.derive(self.g.start, rng, depth, cap, &mut out, &mut budget)
            .then_some(out)
    }

    fn derive(
        &self,
        r: u32,
        rng: &mut Rng,
        depth: u32,
        cap: usize,
        out: &mut Vec<u8>,
        budget: &mut usize,
    ) -> bool {
        if *budget == 0 || out.len() > cap || self.height[r as usize] == u32::MAX {
            return false;
        }
        *budget -= 1;
        let alts = &self.g.rule(r).alternatives;
        let ok: Vec<usize> = (0..alts.len())
            .filter(|&a| {
                alts[a]
                    .iter()
                    .all(|s| !matches!(s, Symbol::Rule(j) if self.height[*j as usize] == u32::MAX))
            })
            .collect();
        let pick = if depth == 0 {
            *ok.iter()
                .min_by_key(|&&a| {
                    alts[a]
                        .iter()
                        .map(|s| match s {
                            Symbol::Rule(j) => self.height[*j as usize],
                            _ => 0,
                        })
                        .max()
                        .unwrap_or(0)
                })
                .unwrap_or(&0)
        } else {
            ok[rng.below(ok.len())]
        };
        for s in alts[pick].clone() {
            let ok = match s {
                Symbol::Rule(j) => self.derive(j, rng, depth.saturating_sub(1), cap, out, budget),
                Symbol::Terminal(t) => self.word(t, rng, out),
            };
            if !ok {
                return false;
            }
        }
        true
    }

    fn word(&self, t: u32, rng: &mut Rng, out: &mut Vec<u8>) -> bool {
        let dfa = &self.dfas[t as usize];
        let mut st = 0u32;
        for step in 0..64 {
            if dfa.is_accepting(st) && (step > 6 || rng.below(3) == 0) {
                return true;
            }
            let live: Vec<u8> = (0..=255u8).filter(|&b| dfa.next(st, b) != DEAD).collect();
            if live.is_empty() {
                return dfa.is_accepting(st);
            }
            let b = if step > 6 {
                self.toward_accept(dfa, st).unwrap_or(live[0])
            } else {
                live[rng.below(live.len())]
            };
            out.push(b);
            st = dfa.next(st, b);
        }
        dfa.is_accepting(st)
    }

    /// The first byte of a shortest path from `st` to an accepting state.
    fn toward_accept(&self, dfa: &ByteDfa, st: u32) -> Option<u8> {
        let mut seen = HashSet::from([st]);
        let mut q = VecDeque::from([(st, None::<u8>)]);
        while let Some((s, first)) = q.pop_front() {
            if dfa.is_accepting(s) && first.is_some() {
                return first;
            }
            for b in 0..=255u8 {
                let t = dfa.next(s, b);
                if t != DEAD && seen.insert(t) {
                    q.push_back((t, first.or(Some(b))));
                }
            }
        }
        None
    }
}

/// Samples of `a` and of `b`, and byte mutations of them: the strings two languages are
/// compared on.
pub fn probes(a: &Lang, b: &Lang, seed: u64, n: usize) -> Vec<Vec<u8>> {
    let mut rng = Rng(seed | 1);
    let mut out = vec![Vec::new()];
    for i in 0..n {
        let lang = if i % 2 == 0 { a } else { b };
        if let Some(s) = lang.sample(&mut rng, 4 + (i % 6) as u32, 160) {
            out.push(s);
        }
    }
    let base = out.clone();
    for s in &base {
        if s.is_empty() {
            continue;
        }
        let mut m = s.clone();
        m.truncate(rng.below(s.len()));
        out.push(m);
        let mut m = s.clone();
        m.remove(rng.below(s.len()));
        out.push(m);
        let mut m = s.clone();
        let pos = rng.below(s.len());
        m.insert(pos, s[rng.below(s.len())]);
        out.push(m);
    }
    out
}
