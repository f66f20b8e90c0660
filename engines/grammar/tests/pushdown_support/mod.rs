//! Test support for the pushdown mode: lockstep walks holding it to the reference.

#![allow(dead_code)]

use tokensdfa_core::{LazyIndex, LazyOptions, TokenAutomaton, Vocabulary};
use tokensdfa_grammar::{pushdown_index, Grammar, GrammarOptions, NaiveGrammarIndex};

pub const BUDGET: usize = 50_000_000;

/// Walk both indexes breadth first from their start, `depth` tokens deep, and compare
/// them at every state; returns the states compared.
pub fn lockstep(g: &Grammar, v: &Vocabulary, depth: usize) -> usize {
    let naive = NaiveGrammarIndex::new(g, v, GrammarOptions::default()).unwrap();
    let push = pushdown_index(g, v, LazyOptions::default(), BUDGET).unwrap();
    let mut frontier = vec![(
        naive.initial_state(),
        push.initial_state(),
        Vec::<u32>::new(),
    )];
    let mut compared = 0;
    for level in 0..=depth {
        let mut next = Vec::new();
        for (n, p, path) in frontier {
            compared += 1;
            assert_eq!(
                push.is_accepting(p),
                naive.is_accepting(n),
                "accepting after {path:?}"
            );
            assert_eq!(
                push.allowed(p),
                naive.allowed(n).unwrap(),
                "mask after {path:?}"
            );
            for t in 0..v.len() as u32 {
                let (ns, ps) = (naive.next_state(n, t).unwrap(), push.next_state(p, t));
                assert_eq!(ps.is_some(), ns.is_some(), "token {t} after {path:?}");
                if let (Some(ns), Some(ps), true) = (ns, ps, level < depth) {
                    let mut longer = path.clone();
                    longer.push(t);
                    next.push((ns, ps, longer));
                }
            }
        }
        frontier = next;
    }
    assert!(!push.exceeded());
    compared
}

/// Walk `path` through both indexes, holding the pushdown index to the reference's mask
/// at every state before a token; the states after it.
pub fn walk_both(naive: &NaiveGrammarIndex, push: &LazyIndex, path: &[u32]) -> (u32, u32) {
    let (mut n, mut p) = (naive.initial_state(), push.initial_state());
    for &t in path {
        assert_eq!(push.allowed(p), naive.allowed(n).unwrap(), "{path:?}");
        n = naive.next_state(n, t).unwrap().unwrap();
        p = push.next_state(p, t).unwrap();
    }
    (n, p)
}

/// Hold the pushdown index of `g` over `tokens` to the reference in lockstep `depth`
/// tokens deep (over a thousand states), then along each of `paths`, which both must
/// accept; the sets it made along the paths.
pub fn sets_along(
    g: &Grammar,
    tokens: &[Vec<u8>],
    depth: usize,
    paths: impl Iterator<Item = Vec<u32>>,
) -> usize {
    let refs: Vec<&[u8]> = tokens.iter().map(|t| t.as_slice()).collect();
    let v = Vocabulary::new(&refs, 0, &[]).unwrap();
    assert!(lockstep(g, &v, depth) > 1000);
    let naive = NaiveGrammarIndex::new(g, &v, GrammarOptions::default()).unwrap();
    let push = pushdown_index(g, &v, LazyOptions::default(), BUDGET).unwrap();
    for path in paths {
        let (n, p) = walk_both(&naive, &push, &path);
        assert!(push.is_accepting(p) && naive.is_accepting(n), "{path:?}");
    }
    push.stats().dfa_states
}
