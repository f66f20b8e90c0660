//! LazyIndex against the naive reference: the same mask, acceptance and fate of every
//! token on every state reachable from the start, with slices on and off, from one thread
//! or several at once.

use std::sync::Arc;

use proptest::prelude::*;
use tokensdfa_core::dfa::{OnDemandDfa, DEAD};
use tokensdfa_core::{LazyIndex, LazyOptions, Mode, NaiveIndex, TokenAutomaton, Vocabulary};

mod common;
use common::{
    assert_same, cases, known_vocab, options, regex_strategy, vocab, vocab_strategy, wordy_vocab,
    KNOWN, WORDS,
};

/// Slices that small vocabularies of `a`, `b`, `c`, `1`, `é` actually fill.
const SMALL_SLICES: [&str; 4] = ["[ab]{1,2}", "[a-c]{3,}", "[^b]+", "é|1"];
/// Tiers of one class by length, the shape whose verdicts come from run bounds.
const TIER_SLICES: [&str; 4] = ["[a-cé]", "[a-cé]{2}", "[a-cé]{3,4}", "[a-cé]{5,9}"];

fn vocab_with_slices(tokens: &[Vec<u8>], slices: &[&str]) -> Vocabulary {
    let mut all: Vec<&[u8]> = vec![b"</s>"];
    all.extend(tokens.iter().map(|t| t.as_slice()));
    let s: Vec<String> = slices.iter().map(|s| s.to_string()).collect();
    Vocabulary::with_slices(&all, 0, &[], &s).unwrap()
}

fn check(pattern: &str, v: &Vocabulary) {
    for slices in [true, false] {
        let lazy = LazyIndex::with_options(pattern, v, Mode::Exact, options(slices)).unwrap();
        assert_same(pattern, v, &lazy);
    }
}

#[test]
fn lazy_matches_naive_on_known_regexes_with_json_slices() {
    let v = vocab(&known_vocab());
    for p in KNOWN {
        check(p, &v);
    }
}

#[test]
fn lazy_matches_naive_on_known_regexes_with_small_slices() {
    let v = vocab_with_slices(&known_vocab(), &SMALL_SLICES);
    for p in KNOWN {
        check(p, &v);
    }
}

#[test]
fn lazy_matches_naive_on_known_regexes_with_tier_slices() {
    let v = vocab_with_slices(&known_vocab(), &TIER_SLICES);
    for p in KNOWN {
        check(p, &v);
    }
    for p in [
        "[a-cé]{0,3}x",
        "([a-c]|é)*",
        "(a|b|c|é){2,6}",
        "[^x]{1,5}|a{7}",
        ".*",
        "[a-cé]{3}[ab]{2}",
    ] {
        check(p, &v);
    }
}

#[test]
fn run_bounds_decide_tier_slices_without_a_product() {
    let v = vocab_with_slices(&known_vocab(), &TIER_SLICES);
    for p in ["[a-cé]{0,3}x", "[a-cé]*b|[a-c]"] {
        let lazy = LazyIndex::new(p, &v, Mode::Exact).unwrap();
        assert_same(p, &v, &lazy);
        let s = lazy.stats();
        assert!(s.run_verdicts >= 3, "{p}: {s:?}");
    }
}

/// Where no state of the start reads every character but they do between them (a key
/// that is any string but a few declared ones, as a schema's other keys are read), the
/// joint run bound a terminal's DFA reads (`OnDemandDfa::run_lower`) finds that every
/// run lives, where the chains of the lazy index's own bounds find none.
#[test]
fn joint_coverage_bounds_a_key_beside_declared_ones() {
    let c = r#"[^"\\\x00-\x1F\x7F-\x9F"#;
    let but = |x: &str| format!(r#"[^{x}"\\\x00-\x1F\x7F-\x9F]"#);
    let (not_l, not_a) = (but("l"), but("a"));
    let pattern = format!("(al{c}]*|a{not_l}{c}]*|a|{not_a}{c}]*)x");
    let class = [(0x20, 0x21), (0x23, 0x5B), (0x5D, 0x7E), (0xA0, 0x10FFFF)];
    let mut d = OnDemandDfa::new(&pattern).unwrap();
    assert_eq!(d.run_lower(0, &class, 40), 40);
    let v = wordy_vocab(&WORDS);
    let lazy = LazyIndex::with_options(&pattern, &v, Mode::Exact, options(true)).unwrap();
    assert_same(&pattern, &v, &lazy);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    /// Joint run bounds hold: from states a few strings reach, every string of at most
    /// the bound's characters of the class (here `a` to `c`, up to four) stays live.
    #[test]
    fn joint_run_bounds_hold(pattern in regex_strategy()) {
        let Ok(mut d) = OnDemandDfa::new(&pattern) else { return Ok(()) };
        for pre in ["", "a", "b", "c", "ab", "ca", "é", "1"] {
            let s = pre.bytes().fold(0, |s, b| d.next(s, b));
            if s == DEAD {
                continue;
            }
            let lower = d.run_lower(s, &[(0x61, 0x63)], 8).min(4);
            let mut layer = vec![s];
            for _ in 0..lower {
                let mut next = Vec::new();
                for &q in &layer {
                    for b in b'a'..=b'c' {
                        let n = d.next(q, b);
                        prop_assert!(n != DEAD, "{pattern} after {pre:?}: bound {lower}");
                        next.push(n);
                    }
                }
                next.sort_unstable();
                next.dedup();
                layer = next;
            }
        }
    }
}

/// A class that leaves out characters no token holds (ECMA's `.` refuses U+2028 and
/// U+2029) still has its slices decided by run bounds, the tiers leaving out what no
/// slice token holds; with a token that holds U+2028 in a slice, the same state's
/// slices are not all allowed, and the masks are the naive index's either way.
#[test]
fn tiers_leave_out_spaces_no_token_holds() {
    let pattern = r#"[^"\\\x00-\x1F\x7F-\x9F\x{2028}\x{2029}]*x"#;
    let v = wordy_vocab(&WORDS);
    let lazy = LazyIndex::with_options(pattern, &v, Mode::Exact, options(true)).unwrap();
    assert_same(pattern, &v, &lazy);
    let s = lazy.stats();
    assert!(
        s.run_verdicts >= 1 && s.pruned_masks == 0 && s.product_pairs == 0,
        "{s:?}"
    );
    let mut held: Vec<Vec<u8>> = vec![
        b"x".to_vec(),
        b"ab".to_vec(),
        "a\u{2028}b".as_bytes().to_vec(),
    ];
    held.push("\u{2028}".as_bytes().to_vec());
    let v = vocab(&held);
    let lazy = LazyIndex::with_options(pattern, &v, Mode::Exact, options(true)).unwrap();
    assert_same(pattern, &v, &lazy);
}

/// Syntax at the edges of the fast parser's subset: it either gives up (the full parser
/// reads it) or reads it the same way.
#[test]
fn odd_syntax_reads_as_regex_syntax_reads_it() {
    let v = vocab(&known_vocab());
    for p in [
        r"\x{1F600}|a",
        r"[\]a]+",
        r"[^]a]b",
        "a{0}b",
        "(?:)a",
        r"\pL{2}",
        r"\p{Greek}|é",
        r"[a-]+",
        r"\\\{",
        r"\ a",
        "#&~-",
        "a{2}?b",
        "(a)(?:b)|c",
        r"[\d\-]{1,3}",
        r"(?i)ab",
        "a|",
        "(|a)b",
        r"\u{e9}",
        r"[\x{1C}-\x{1F}]",
        "((((a))))",
        "é{2,}",
        r"\d+\.\d*",
    ] {
        check(p, &v);
    }
}

#[test]
fn json_string_states_take_the_slice_shortcut() {
    let v = vocab(&known_vocab());
    let p = r#""([^"\\\x00-\x1F\x7F-\x9F]|\\["\\])*""#;
    let lazy = LazyIndex::new(p, &v, Mode::Exact).unwrap();
    let quote = (0..v.len() as u32).find(|&t| v.token(t) == b"\"").unwrap();
    let inside = lazy.next_state(0, quote).unwrap();
    lazy.allowed(inside);
    assert!(lazy.stats().slice_hits >= 1, "{:?}", lazy.stats());
    assert_same(p, &v, &lazy);
}

#[test]
fn construction_builds_nothing_but_the_start() {
    let v = vocab(&known_vocab());
    let lazy = LazyIndex::new(r"[a-z]{1,500}", &v, Mode::Exact).unwrap();
    let s = lazy.stats();
    assert_eq!((s.states, s.dfa_states, s.masks_computed), (1, 1, 0));
    assert!(s.lazy_dfa);
}

#[test]
fn canonical_literals_is_refused_with_a_reason() {
    let v = vocab(&known_vocab());
    let err = LazyIndex::new("abc", &v, Mode::CanonicalLiterals)
        .err()
        .unwrap();
    assert!(err.to_string().contains("only mode \"exact\""), "{err}");
}

#[test]
fn a_tiny_cache_evicts_and_recomputes_the_same_masks() {
    let v = vocab(&known_vocab());
    let p = r"(ab|c)*\d";
    let lazy = LazyIndex::with_options(
        p,
        &v,
        Mode::Exact,
        LazyOptions {
            slices: true,
            cache_limit: v.mask_words() * 4 * 2,
            ..LazyOptions::default()
        },
    )
    .unwrap();
    assert_same(p, &v, &lazy);
    assert_same(p, &v, &lazy);
    let s = lazy.stats();
    assert!(s.evictions > 0 && s.cached_masks <= 2, "{s:?}");
}

/// Random token walks from several threads at once on one shared index, whose first
/// visits helper engines share with its own (`prepare_threads`).
#[test]
fn concurrent_walks_see_the_naive_masks() {
    let v = Arc::new(vocab(&known_vocab()));
    for p in [
        r"(https?://)?[a-z\.]+",
        r#"\{"a": "[^"]*"\}"#,
        r"\d{4}-\d{2}|(ab|cd)+e?",
    ] {
        let naive = Arc::new(NaiveIndex::new(p, &v).unwrap());
        let lazy = Arc::new(LazyIndex::new(p, &v, Mode::Exact).unwrap());
        lazy.prepare_threads(4);
        assert_eq!(lazy.stats().helpers, 3);
        let handles: Vec<_> = (0..4u64)
            .map(|seed| {
                let (v, naive, lazy) = (v.clone(), naive.clone(), lazy.clone());
                std::thread::spawn(move || random_walks(&v, &naive, &lazy, seed))
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
    }
}

fn random_walks(v: &Vocabulary, naive: &NaiveIndex, lazy: &LazyIndex, seed: u64) {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut mask = vec![0u32; v.mask_words()];
    for _ in 0..50 {
        let (mut n, mut l) = (naive.initial_state(), lazy.initial_state());
        for _ in 0..20 {
            lazy.fill_mask(l, &mut mask);
            let allowed = naive.allowed(n);
            assert_eq!(tokensdfa_core::ones(&mask), allowed);
            let text: Vec<u32> = allowed.into_iter().filter(|&t| t != v.eos_id()).collect();
            if text.is_empty() {
                break;
            }
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let t = text[(x % text.len() as u64) as usize];
            n = naive.next_state(n, t).unwrap();
            l = lazy.next_state(l, t).unwrap();
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn lazy_equals_naive(pattern in regex_strategy(), t in vocab_strategy()) {
        check(&pattern, &vocab(&t));
    }

    #[test]
    fn slices_on_and_off_agree_with_naive(pattern in regex_strategy(), t in vocab_strategy()) {
        check(&pattern, &vocab_with_slices(&t, &SMALL_SLICES));
    }

    #[test]
    fn tier_slices_agree_with_naive(pattern in regex_strategy(), t in vocab_strategy()) {
        check(&pattern, &vocab_with_slices(&t, &TIER_SLICES));
    }
}

/// A pruned state where most runs of string characters die past a few (the `(ab|ba)+`
/// branch leaves their length unbounded): every subtree that dies is cleared from the
/// mask.
#[test]
fn pruned_masks_clear_what_dies() {
    let v = wordy_vocab(&WORDS);
    // No one state reads every character at the start (`m` is apart): run bounds are
    // (0, unbounded) there and a product search has to go deep to find a death.
    let c = r#"[^"\\\x00-\x1F\x7F-\x9F"#;
    let pattern = format!(
        "({}|{c}m]{c}]{{0,2}}[0-9]|m[0-9]|(ab|ba)+)x",
        WORDS.join("|")
    );
    let lazy = LazyIndex::with_options(&pattern, &v, Mode::Exact, options(true)).unwrap();
    assert_same(&pattern, &v, &lazy);
    assert!(
        lazy.stats().pruned_masks >= 1,
        "{pattern} {:?}",
        lazy.stats()
    );
}

/// A tree whose start state alone needs more NFA states compiled on demand than
/// `START_STATE_LIMIT` (2^22) is refused with `LimitExceeded` naming the start, instead
/// of compiling until memory runs out: 8,388,608 optional bytes, every one of which the
/// start state's closure passes through (so every copy is compiled while it is built).
#[test]
fn a_start_state_past_its_limit_is_refused() {
    use tokensdfa_core::{Ast, Error};
    let mut ast = Ast::default();
    let a = ast.bytes_node(b"a");
    let optional = ast.repeat_node(a, 0, Some(1));
    let inner = ast.repeat_node(optional, 2048, Some(2048));
    ast.root = ast.repeat_node(inner, 4096, Some(4096));
    let v = vocab(&[b"a".to_vec(), b"aa".to_vec()]);
    let err = LazyIndex::from_ast(ast, &v, LazyOptions::default())
        .err()
        .expect("refused");
    assert!(
        matches!(&err, Error::LimitExceeded(m) if m.contains("at its start")),
        "{err:?}"
    );
}

/// A walk that compiles past the walk limit breaks the index, which says so
/// (`exceeded`), rather than growing without bound: `a{100000}` compiles a state or
/// two per copy as the walk reaches it, so a limit of 2,000 passes within 2,000 `a`s
/// while the start alone stays far below it.
#[test]
fn a_walk_past_the_walk_limit_breaks_the_index() {
    use tokensdfa_core::Ast;
    let build = || {
        let mut ast = Ast::default();
        let a = ast.bytes_node(b"a");
        ast.root = ast.repeat_node(a, 100_000, Some(100_000));
        ast
    };
    let v = vocab(&[b"a".to_vec()]);
    let opts = LazyOptions {
        walk_limit: 2_000,
        ..LazyOptions::default()
    };
    let lazy = LazyIndex::from_ast(build(), &v, opts).unwrap();
    let mut s = lazy.initial_state();
    let mut steps = 0;
    while !lazy.exceeded() && steps < 5_000 {
        match lazy.next_state(s, 1) {
            Some(n) => s = n,
            None => break,
        }
        steps += 1;
    }
    assert!(lazy.exceeded(), "no limit hit in {steps} steps");
    assert!(steps < 5_000);
    // the same walk without the low limit stays whole
    let whole = LazyIndex::from_ast(build(), &v, LazyOptions::default()).unwrap();
    let mut s = whole.initial_state();
    for _ in 0..steps + 10 {
        s = whole.next_state(s, 1).expect("a stays allowed");
    }
    assert!(!whole.exceeded());
}
