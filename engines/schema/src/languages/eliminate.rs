//! From a DFA back to a regex, by state elimination (Brzozowski-McCluskey).
//!
//! The DFA becomes a graph whose edges carry regexes, with a fresh entry before state 0
//! and a fresh exit after every accepting state. States are removed one at a time; each
//! removal of `k` replaces every path `i -> k -> j` by the edge
//! `R(i,k) R(k,k)* R(k,j)` joined to `R(i,j)`. When only entry and exit remain, their
//! edge is the language. The next state removed is the one with the fewest
//! (in-degree x out-degree) paths through it, which keeps chains and trees linear.
//! Edges are `Rc`-shared regexes, so the work is proportional to the number of paths,
//! not to the printed size (the caller's size guard judges that).
//!
//! A counted automaton ([`rx::Graph`]) goes the same way once each of its feasible
//! `(state, count)` pairs is a state ([`graph_rx`]); only the printer does that.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use rustc_hash::FxHashMap as HashMap;

use crate::languages::automaton::Dfa;
use crate::languages::rx::{self, Rx};
use tokensdfa_core::counted::{Counted, UNBOUNDED};

/// The most states of a string automaton turned back into a regex; a larger one is
/// kept as an automaton (a string constraint's language, [`crate::shapes::scalars`], or
/// a pattern's look-aheads, `lookahead` in [`crate::languages::ecma`]).
pub const MAX_ELIMINATED: usize = 2_000;

/// The most 64-bit words of a counted automaton's reach table ([`tokensdfa_core::counted`]):
/// 32 MiB.
const MAX_REACH_WORDS: usize = 1 << 22;

/// The longest regex [`to_rx_or_graph`] stands in the tree as written: 4 KiB. A number
/// automaton's eliminated regex grows exponentially with its states (multiples of 33
/// from 100 write megabytes), and the lazy index compiles a regex's positions once for
/// every place it stands (every item of every array that holds it), where it compiles
/// an automaton's states once: four MaskBench schemas broke its walk limit at their
/// first byte that way.
const MAX_WRITTEN: usize = 4096;

/// The most paths [`to_rx_or_graph`]'s state elimination composes (`i -> k -> j` for
/// every state `k` removed): a dense automaton's elimination is cubic in its states, and
/// its regex far too long to print anyway. The multiples of 499 from 10^6 (a dense
/// automaton of about 500 states) took 18 s and 384 MB; the multiples of 211, 0.9 s.
const MAX_ELIMINATED_PATHS: usize = 1 << 18;

/// `dfa`'s language: its regex by state elimination ([`to_rx`]), or where that is longer
/// than [`MAX_WRITTEN`], the automaton itself carrying that regex ([`rx::Graph::text`]):
/// the regex text prints the same either way. Where the elimination would compose more
/// than [`MAX_ELIMINATED_PATHS`] paths, the automaton without a regex, which the tree
/// serves and the regex text refuses. `None` where neither can be built. `dfa` is
/// minimal (the caller minimized it; this does not again).
pub fn to_rx_or_graph(dfa: &Dfa) -> Option<Rx> {
    let text = eliminate(labelled(dfa), &dfa.accept, MAX_ELIMINATED_PATHS);
    if let Some(x) = text.as_ref().filter(|x| x.printed_len() <= MAX_WRITTEN) {
        return Some(x.clone());
    }
    dfa_graph(dfa, (0, UNBOUNDED), text.clone()).or(text)
}

/// `d`'s strings of `lo..=hi` characters as a counted automaton ([`rx::Graph`]) with
/// `d`'s edges, carrying `text` ([`rx::Graph::text`]); `None` where its lengths are too
/// irregular to count within a reach table of [`MAX_REACH_WORDS`].
pub fn dfa_graph(d: &Dfa, (lo, hi): (u32, u32), text: Option<Rx>) -> Option<Rx> {
    let targets = d
        .edges
        .iter()
        .map(|v| v.iter().map(|e| e.1 as u32).collect());
    let labels = d
        .edges
        .iter()
        .map(|v| v.iter().map(|e| rx::set(e.0.clone())).collect());
    let max_terms = MAX_REACH_WORDS / d.len().div_ceil(64).max(1);
    let c = Counted::new(targets.collect(), d.accept.clone(), lo, hi, max_terms).ok()?;
    Some(rx::graph(rx::Graph {
        counted: Arc::new(c),
        labels: labels.collect(),
        text,
    }))
}

/// `dfa`'s language as a regex by state elimination, or `None` where the elimination
/// would compose more than [`MAX_ELIMINATED_PATHS`] paths: a dense automaton of a few
/// thousand states (the keys `^(a|b)*a(a|b){12}$` leaves out: 8,192) ran for minutes
/// before that bound, and its regex could never be printed anyway.
pub fn to_rx(dfa: &Dfa) -> Option<Rx> {
    let dfa = dfa.minimize();
    eliminate(labelled(&dfa), &dfa.accept, MAX_ELIMINATED_PATHS)
}

/// `dfa`'s edges, each labelled by its character set.
fn labelled(dfa: &Dfa) -> Vec<Vec<(Rx, usize)>> {
    dfa.edges
        .iter()
        .map(|v| {
            v.iter()
                .map(|(set, t)| (rx::set(set.clone()), *t))
                .collect()
        })
        .collect()
}

/// The regex of a counted automaton: its feasible pairs reached from `(0, 0)`, as a
/// graph, by state elimination. Its size grows with the count bounds; the printer
/// alone calls it.
pub fn graph_rx(g: &rx::Graph) -> Rx {
    let c = &g.counted;
    let mut ids: HashMap<(u32, u32), usize> = HashMap::from_iter([((0, 0), 0)]);
    let mut pairs = vec![(0u32, 0u32)];
    let (mut edges, mut accept) = (Vec::new(), Vec::new());
    let mut at = 0;
    while let Some(&(q, k)) = pairs.get(at) {
        at += 1;
        accept.push(c.stops(q, k));
        let mut out = Vec::new();
        if c.may_read(k) {
            let k2 = c.next_count(k);
            for (&t, label) in c.targets[q as usize].iter().zip(&g.labels[q as usize]) {
                if c.feasible(t, k2) {
                    let id = *ids.entry((t, k2)).or_insert_with(|| {
                        pairs.push((t, k2));
                        pairs.len() - 1
                    });
                    out.push((label.clone(), id));
                }
            }
        }
        edges.push(out);
    }
    eliminate(edges, &accept, usize::MAX).expect("no bound on the paths")
}

/// The language of a graph with regex-labelled edges from state 0 (`edges[i]`: label
/// and target), written out where its elimination composes at most
/// [`MAX_ELIMINATED_PATHS`] paths: the regex a counted automaton built over values
/// rather than characters carries ([`rx::Graph::text`]).
pub fn written(edges: Vec<Vec<(Rx, usize)>>, accept: &[bool]) -> Option<Rx> {
    eliminate(edges, accept, MAX_ELIMINATED_PATHS)
}

/// The language of a graph with regex-labelled edges, from state 0; `None` once more than
/// `max_paths` paths have been composed.
fn eliminate(edges: Vec<Vec<(Rx, usize)>>, accept: &[bool], max_paths: usize) -> Option<Rx> {
    let n = accept.len();
    let (entry, exit) = (n, n + 1);
    let mut out: Vec<BTreeMap<usize, Rx>> = vec![BTreeMap::new(); n + 2];
    let mut inn: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); n + 2];
    let add = |out: &mut Vec<BTreeMap<usize, Rx>>,
               inn: &mut Vec<BTreeSet<usize>>,
               i: usize,
               j: usize,
               x: Rx| {
        let joined = match out[i].remove(&j) {
            Some(old) => rx::alt([old, x]),
            None => x,
        };
        out[i].insert(j, joined);
        inn[j].insert(i);
    };
    add(&mut out, &mut inn, entry, 0, rx::empty());
    for (s, v) in edges.into_iter().enumerate() {
        for (x, t) in v {
            add(&mut out, &mut inn, s, t, x);
        }
        if accept[s] {
            add(&mut out, &mut inn, s, exit, rx::empty());
        }
    }
    let mut alive: BTreeSet<usize> = (0..n).collect();
    let mut paths = 0usize;
    while let Some(k) = cheapest(&alive, &out, &inn) {
        alive.remove(&k);
        let self_loop = out[k].remove(&k).map(rx::star).unwrap_or_else(rx::empty);
        inn[k].remove(&k);
        let preds: Vec<usize> = inn[k].iter().copied().collect();
        let succs: Vec<(usize, Rx)> = out[k].iter().map(|(j, x)| (*j, x.clone())).collect();
        paths = paths.saturating_add(preds.len() * succs.len());
        if paths > max_paths {
            return None;
        }
        for &i in &preds {
            let into = out[i].remove(&k).expect("edge recorded in both maps");
            for (j, from) in &succs {
                let path = rx::concat([into.clone(), self_loop.clone(), from.clone()]);
                add(&mut out, &mut inn, i, *j, path);
            }
        }
        for (j, _) in &succs {
            inn[*j].remove(&k);
        }
        out[k].clear();
        inn[k].clear();
    }
    Some(out[entry].remove(&exit).unwrap_or_else(rx::never))
}

fn cheapest(
    alive: &BTreeSet<usize>,
    out: &[BTreeMap<usize, Rx>],
    inn: &[BTreeSet<usize>],
) -> Option<usize> {
    alive.iter().copied().min_by_key(|&k| {
        let loops = out[k].contains_key(&k) as usize;
        let (i, o) = (inn[k].len() - loops, out[k].len() - loops);
        (i * o, i + o)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::languages::charset::CharSet;
    use crate::languages::rx::print;

    #[test]
    fn round_trip_keeps_the_language() {
        let digit = rx::set(CharSet::range('0' as u32, '9' as u32));
        let x = rx::alt([
            rx::concat([rx::lit("a"), rx::star(digit.clone())]),
            rx::lit("b"),
        ]);
        let d = Dfa::from_rx(&x).unwrap();
        let back = Dfa::from_rx(&to_rx(&d).unwrap()).unwrap();
        for s in ["a", "a12", "b", "b1", "", "ab"] {
            assert_eq!(
                d.accepts(s),
                back.accepts(s),
                "{s}: {}",
                print(&to_rx(&d).unwrap())
            );
        }
    }

    /// A counted automaton prints as its pairs eliminated: `(ab|c)*` of 3 to 5 characters.
    #[test]
    fn a_counted_automaton_prints_its_bounded_language() {
        use std::sync::Arc;
        use tokensdfa_core::counted::Counted;
        let counted = Counted::new(vec![vec![1, 0], vec![0]], vec![true, false], 3, 5, 64);
        let g = rx::Graph {
            counted: Arc::new(counted.unwrap()),
            labels: vec![vec![rx::lit("a"), rx::lit("c")], vec![rx::lit("b")]],
            text: None,
        };
        let d = Dfa::from_rx(&graph_rx(&g)).unwrap();
        for s in ["abc", "cab", "ccccc", "ababc"] {
            assert!(d.accepts(s), "{s}");
        }
        for s in ["ab", "cc", "cccccc", "ababcc", "aba", "abcb", ""] {
            assert!(!d.accepts(s), "{s}");
        }
        assert!(
            print(&rx::graph(g)).starts_with('('),
            "grouped where it stands"
        );
    }

    #[test]
    fn an_empty_language_is_never() {
        let d = Dfa::from_rx(&rx::lit("a")).unwrap();
        let none = d.intersect(&Dfa::from_rx(&rx::lit("b")).unwrap()).unwrap();
        assert!(rx::is_never(&to_rx(&none).unwrap()));
    }
}
