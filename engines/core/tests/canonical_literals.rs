//! canonical_literals mode: every mask is a subset of the naive one (soundness) and every
//! string of the language can still be produced (completeness), on the literal shapes
//! that break naive ghost schemes.

use std::collections::{HashSet, VecDeque};

use proptest::prelude::*;
use tokensdfa_core::{Index, Mode, NaiveIndex, TokenAutomaton, Vocabulary};

mod common;
use common::{cases, regex_strategy, vocab_strategy};

fn vocab_of(words: &[&[u8]]) -> Vocabulary {
    let mut all: Vec<&[u8]> = vec![b"</s>"];
    all.extend_from_slice(words);
    Vocabulary::new(&all, 0, &[]).unwrap()
}

/// Every (canonical state, naive state) pair reachable by the same tokens.
fn assert_sound(pattern: &str, v: &Vocabulary) {
    let naive = NaiveIndex::new(pattern, v).unwrap();
    let canon = Index::new(pattern, v, Mode::CanonicalLiterals).unwrap();
    let start = (canon.initial_state(), naive.initial_state());
    let mut seen = HashSet::from([start]);
    let mut queue = VecDeque::from([start]);
    while let Some((c, n)) = queue.pop_front() {
        let reference: HashSet<u32> = naive.allowed(n).into_iter().collect();
        for t in canon.allowed(c) {
            assert!(
                reference.contains(&t),
                "{pattern:?}: token {t} allowed beyond the reference"
            );
            if t == v.eos_id() {
                assert!(naive.is_accepting(n));
                continue;
            }
            let pair = (
                canon.next_state(c, t).unwrap(),
                naive.next_state(n, t).unwrap(),
            );
            if seen.insert(pair) {
                queue.push_back(pair);
            }
        }
    }
}

/// Some tokenization of `text` walks the canonical index to an accepting state.
fn produces(ix: &Index, v: &Vocabulary, state: u32, text: &[u8]) -> bool {
    if text.is_empty() {
        return ix.is_accepting(state);
    }
    ix.allowed(state).into_iter().any(|t| {
        let tok = v.token(t);
        t != v.eos_id()
            && text.starts_with(tok)
            && produces(ix, v, ix.next_state(state, t).unwrap(), &text[tok.len()..])
    })
}

fn check_with(pattern: &str, v: &Vocabulary, strings: &[&str]) -> Index {
    assert_sound(pattern, v);
    let ix = Index::new(pattern, v, Mode::CanonicalLiterals).unwrap();
    for s in strings {
        assert!(
            produces(&ix, v, 0, s.as_bytes()),
            "{pattern:?} cannot produce {s:?}"
        );
    }
    ix
}

fn check(pattern: &str, v: &Vocabulary, strings: &[&str]) {
    let ix = check_with(pattern, v, strings);
    assert!(ix.stats().muted_literals > 0, "{pattern:?} muted nothing");
}

fn common() -> Vocabulary {
    vocab_of(&[
        b"a",
        b"b",
        b"c",
        b"e",
        b"h",
        b"l",
        b"o",
        b"p",
        b"r",
        b"s",
        b"t",
        b":",
        b"/",
        b".",
        b"+",
        b"\\",
        b"\x1C",
        b"1",
        b"2",
        b"ab",
        b"abc",
        b"bc",
        b"ca",
        b"cat",
        b"car",
        b"http",
        b"https",
        b"://",
        b"tp",
        "é".as_bytes(),
        &[0xC3],
        &[0xA9],
        b"h\xC3",
        b"ll",
        b"lo",
        b"\x1C1",
        b"\x1Cab",
        b"ab",
        b"A",
        b"B",
        b"C",
        b"Ab",
    ])
}

#[test]
fn literals_under_quantifiers() {
    let v = common();
    check("abc+", &v, &["abc", "abccc"]);
    check("(abc)?", &v, &["", "abc"]);
    check("(ab){2,3}", &v, &["abab", "ababab"]);
    check(
        "x?(abc)*",
        &vocab_of(&[b"a", b"b", b"c", b"abc", b"x"]),
        &["", "abcabc", "xabc"],
    );
}

#[test]
fn alternations_with_shared_prefixes() {
    let v = common();
    check("cat|car", &v, &["cat", "car"]);
    check("ca(t|r)s?", &v, &["cat", "cars"]);
    // the literal competes with a class at the same position: both readings must survive
    check(
        r"(https?://)?[a-z\.]+",
        &v,
        &["http", "https://a.b", "hello", "httpa", "tp.a"],
    );
}

#[test]
fn case_insensitive_escapes_and_multibyte() {
    let v = common();
    // case-insensitive letters are classes, not literals: nothing to mute, still exact
    let ix = check_with("(?i:abc)", &v, &["abc", "ABC", "AbC"]);
    assert_eq!(ix.stats().muted_literals, 0);
    check(r"a\.b\+c\\", &v, &["a.b+c\\"]);
    check("héllo", &v, &["héllo"]);
    check("é+ab", &v, &["éab", "ééab"]);
}

#[test]
fn ghost_bytes_do_not_collide_with_0x1c() {
    let v = common();
    check("\u{1C}1ab|\u{1C}ab", &v, &["\u{1C}1ab", "\u{1C}ab"]);
    check("ab\u{1C}ab", &v, &["ab\u{1C}ab"]);
}

#[test]
fn more_than_a_hundred_literals_do_not_alias() {
    let words: Vec<String> = (0..150).map(|i| format!("k{i}z")).collect();
    let mut toks: Vec<Vec<u8>> = words.iter().map(|w| w.as_bytes().to_vec()).collect();
    for b in b"kz0123456789" {
        toks.push(vec![*b]);
    }
    let refs: Vec<&[u8]> = toks.iter().map(|t| t.as_slice()).collect();
    let v = vocab_of(&refs);
    let pattern = format!("({})-?", words.join("|"));
    let strings: Vec<&str> = words.iter().map(|s| s.as_str()).collect();
    check(&pattern, &v, &strings);
    let ix = Index::new(&pattern, &v, Mode::CanonicalLiterals).unwrap();
    assert_eq!(ix.stats().muted_literals, 150);
    // exactly one token (the literal's own) starts each alternative
    assert_eq!(ix.allowed(0).len(), 150);
}

#[test]
fn canonical_mode_allows_only_the_minimal_tokenization() {
    let v = common();
    let ix = Index::new("abc", &v, Mode::CanonicalLiterals).unwrap();
    let exact = Index::new("abc", &v, Mode::Exact).unwrap();
    let abc = 21; // b"abc" (id = position + 1)
    assert_eq!(ix.allowed(0), vec![abc]);
    assert!(exact.allowed(0).len() > 1);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn canonical_masks_are_subsets_of_naive(pattern in regex_strategy(), t in vocab_strategy()) {
        assert_sound(&pattern, &common::vocab(&t));
    }
}

#[test]
fn forced_bytes_read_ghosts_back_as_text() {
    let v = common();
    for mode in [Mode::Exact, Mode::CanonicalLiterals] {
        let ix = Index::new(r"https://(ab|ca)t", &v, mode).unwrap();
        assert_eq!(ix.forced_bytes(0), b"https://", "{mode:?}");
        let ix = Index::new("héllo", &v, mode).unwrap();
        assert_eq!(ix.forced_bytes(0), "héllo".as_bytes(), "{mode:?}");
    }
    // exact mode forces the shared prefix; canonical mode reads `cat` and `car` as two
    // distinct whole-token ghosts, so its run stops before the literal
    let exact = Index::new("cat|car", &v, Mode::Exact).unwrap();
    assert_eq!(exact.forced_bytes(0), b"ca");
    let canon = Index::new("cat|car", &v, Mode::CanonicalLiterals).unwrap();
    assert_eq!(canon.forced_bytes(0), b"");
    // a state standing for two readings forces only what both agree on
    let ix = Index::new(r"(https?://)?[a-z]+", &v, Mode::CanonicalLiterals).unwrap();
    let s = ix.next_state(0, 26).unwrap(); // b"http" as a whole token
    assert_eq!(ix.forced_bytes(s), b"");
}
