//! LazyIndex on counted automata in the tree: the `(state, count)` pairs the NFA forms
//! itself give the naive index's masks on the language written out, bounds and all, on a
//! fixed automaton and on random ones.

use std::sync::Arc;

use proptest::prelude::*;
use tokensdfa_core::{Ast, Counted, LazyIndex, UNBOUNDED};

mod common;
use common::{assert_same, cases, options, vocab};

/// `(ab|é)*` as a counted automaton: 0 -a-> 1 -b-> 0, 0 -é-> 0, and a dead state 2
/// (1 -a-> 2, 2 -a-> 2) the counts must never enter.
fn units_graph(lo: u32, hi: u32) -> Ast {
    let targets = vec![vec![1, 0], vec![0, 2], vec![2]];
    let counted = Counted::new(targets, vec![true, false, false], lo, hi, 64).unwrap();
    let mut ast = Ast::default();
    let (a, b, e) = (
        ast.bytes_node(b"a"),
        ast.bytes_node(b"b"),
        ast.class_node(vec![(0xE9, 0xE9)]),
    );
    let labels = vec![vec![a, e], vec![b, a], vec![a]];
    ast.root = ast.graph_node(Arc::new(counted), labels);
    ast
}

/// The unit sequences of `(ab|é)*` from `from` characters, as regex alternatives: with
/// `hi` finite every one of `lo..=hi` characters; without, the shortest ones reaching
/// `lo`, each followed by any more units.
fn unit_strings(lo: u32, hi: u32) -> String {
    let mut out = Vec::new();
    let mut todo = vec![(String::new(), 0u32)];
    while let Some((s, n)) = todo.pop() {
        if n >= lo && hi == UNBOUNDED {
            out.push(format!("{s}(?:ab|é)*"));
            continue;
        }
        if n >= lo {
            out.push(s.clone());
        }
        for (u, len) in [("ab", 2), ("é", 1)] {
            if hi == UNBOUNDED || n + len <= hi {
                todo.push((format!("{s}{u}"), n + len));
            }
        }
    }
    format!("(?:{})", out.join("|"))
}

/// The lazy index forms a counted automaton's `(state, count)` pairs itself: the same
/// masks as the naive index on the language written out, bounds and all, where lengths
/// the units cannot make (3 from state 1 with `ab` pairs) and the dead state must be
/// left out for every kept state to stay live.
#[test]
fn a_counted_automaton_matches_its_language_written_out() {
    let tokens: Vec<Vec<u8>> = ["a", "b", "ab", "ba", "é", "aé", "éa", "ééé", "abab"]
        .iter()
        .map(|t| t.as_bytes().to_vec())
        .chain([vec![0xC3], vec![0xA9], vec![b'b', 0xC3]])
        .collect();
    let v = vocab(&tokens);
    let unbounded = UNBOUNDED;
    for (lo, hi) in [
        (0, 0),
        (0, 5),
        (3, 3),
        (3, 7),
        (4, 4),
        (0, unbounded),
        (5, unbounded),
    ] {
        let pattern = unit_strings(lo, hi);
        for slices in [true, false] {
            let lazy = LazyIndex::from_ast(units_graph(lo, hi), &v, options(slices)).unwrap();
            assert_same(&pattern, &v, &lazy);
        }
    }
}

/// A random counted automaton over `a`, `b`, `é`: `(targets, labels, accept)` per state,
/// each label an index into [`UNITS`].
type RandomGraph = Vec<(Vec<(u32, usize)>, bool)>;

const UNITS: [&str; 3] = ["a", "b", "é"];

fn graph_strategy() -> impl Strategy<Value = (RandomGraph, u32, u32)> {
    let state = |n: u32| {
        (
            prop::collection::vec((0..n, 0..3usize), 0..4),
            any::<bool>(),
        )
    };
    (1..5u32)
        .prop_flat_map(move |n| prop::collection::vec(state(n), n as usize))
        .prop_flat_map(|g| (Just(g), 0..4u32, 0..3u32))
        .prop_map(|(g, lo, extra)| (g, lo, lo + extra + 1))
}

/// The strings of `units` (each one character) the graph accepts with `lo..=hi` units,
/// by walking every path: a finite language, written out as a regex.
fn written_out(g: &RandomGraph, lo: u32, hi: u32) -> String {
    let mut out = std::collections::BTreeSet::new();
    let mut todo = vec![(0u32, String::new(), 0u32)];
    while let Some((q, s, k)) = todo.pop() {
        let (edges, accept) = &g[q as usize];
        if *accept && k >= lo {
            out.insert(s.clone());
        }
        if k < hi {
            for &(t, u) in edges {
                todo.push((t, format!("{s}{}", UNITS[u]), k + 1));
            }
        }
    }
    if out.is_empty() {
        return "[^\\s\\S]".into();
    }
    let alts: Vec<String> = out.into_iter().collect();
    format!("(?:{})", alts.join("|"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    /// Random counted automata (nondeterministic, with dead states and lengths some
    /// states cannot make) against the naive index on their language written out.
    #[test]
    fn random_counted_automata_match_their_languages((g, lo, hi) in graph_strategy()) {
        let targets = g.iter().map(|(e, _)| e.iter().map(|x| x.0).collect()).collect();
        let accept = g.iter().map(|s| s.1).collect();
        let counted = Counted::new(targets, accept, lo, hi, 1 << 10).unwrap();
        let mut ast = Ast::default();
        let units: Vec<u32> = UNITS.iter().map(|u| ast.bytes_node(u.as_bytes())).collect();
        let labels = g.iter().map(|(e, _)| e.iter().map(|x| units[x.1]).collect()).collect();
        ast.root = ast.graph_node(Arc::new(counted), labels);
        let tokens: Vec<Vec<u8>> = ["a", "b", "ab", "é", "bé", "aaa"]
            .iter()
            .map(|t| t.as_bytes().to_vec())
            .chain([vec![0xC3]])
            .collect();
        let v = vocab(&tokens);
        let pattern = written_out(&g, lo, hi);
        let lazy = LazyIndex::from_ast(ast, &v, options(true)).unwrap();
        assert_same(&pattern, &v, &lazy);
    }
}
