//! Strategies and fixtures shared by the tests: regexes in the dialect every engine
//! shares, small vocabularies with the awkward tokens real ones have, the known regexes
//! with their vocabulary, and the lockstep walk of a lazy index against the naive one
//! ([`assert_same`]). The schema crate's tree tests include this module too.

// Each test crate includes this module and uses a part of it.
#![allow(dead_code)]

use std::collections::{HashSet, VecDeque};

use proptest::prelude::*;
use tokensdfa_core::{LazyIndex, LazyOptions, NaiveIndex, TokenAutomaton, Vocabulary};

pub fn vocab(tokens: &[Vec<u8>]) -> Vocabulary {
    let mut all: Vec<&[u8]> = vec![b"</s>"];
    all.extend(tokens.iter().map(|t| t.as_slice()));
    Vocabulary::new(&all, 0, &[]).unwrap()
}

pub fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200)
}

pub fn regex_strategy() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        "[abc]{1,3}",
        Just("[a-c]".to_string()),
        Just(r"\d".to_string()),
        Just(".".to_string()),
        Just("é".to_string()),
        Just("\u{1C}".to_string()),
        Just("[^b]".to_string()),
        Just("abc".to_string()),
        Just("ca".to_string()),
        Just("\u{1C}1".to_string()),
        Just(r"\x61".to_string()),
        Just(r"[^a\x{1C}]".to_string()),
        Just(r"\.".to_string()),
        Just(r"\u00e9".to_string()),
    ];
    leaf.prop_recursive(3, 12, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 1..3).prop_map(|v| v.join("")),
            prop::collection::vec(inner.clone(), 2..3).prop_map(|v| format!("({})", v.join("|"))),
            inner.clone().prop_map(|r| format!("({r})*")),
            inner.clone().prop_map(|r| format!("({r})?")),
            inner.clone().prop_map(|r| format!("({r}){{1,2}}")),
            inner.clone().prop_map(|r| format!("(?:{r}){{0,6}}")),
            inner.clone().prop_map(|r| format!("({r}){{5,}}?")),
            inner.prop_map(|r| format!("({r}){{2,7}}")),
        ]
    })
}

pub fn vocab_strategy() -> impl Strategy<Value = Vec<Vec<u8>>> {
    let token = prop_oneof![
        prop::sample::select(vec![
            b"a".to_vec(),
            b"b".to_vec(),
            b"c".to_vec(),
            b"1".to_vec(),
            b"ab".to_vec(),
            b"abc".to_vec(),
            b"\x1C".to_vec(),
            vec![0xC3],
            vec![0xA9],
            "é".as_bytes().to_vec(),
            "éa".as_bytes().to_vec(),
            b"ca".to_vec(),
            b"12".to_vec(),
        ]),
        prop::collection::vec(prop::sample::select(b"abc1\x1C".to_vec()), 1..5),
    ];
    prop::collection::vec(token, 1..14).prop_map(|mut v| {
        // single bytes keep every string producible
        for b in [b'a', b'b', b'c', b'1', 0x1C, 0xC3, 0xA9] {
            v.push(vec![b]);
        }
        v
    })
}

fn toks(words: &[&str]) -> Vec<Vec<u8>> {
    words.iter().map(|w| w.as_bytes().to_vec()).collect()
}

/// The vocabulary the known regexes run on: digits, words of the patterns, their
/// pieces, lone UTF-8 bytes and a duplicate byte string.
pub fn known_vocab() -> Vec<Vec<u8>> {
    let mut words: Vec<String> = (0..=9).map(|d| d.to_string()).collect();
    for w in [
        "a",
        "b",
        "ab",
        "abc",
        "c",
        ".",
        "-",
        "20",
        "24",
        "01",
        "2024",
        "http",
        "https",
        "://",
        "s",
        ":",
        "/",
        "www",
        "é",
        "\u{1C}",
        "ca",
        "cat",
        "car",
        "t",
        "r",
        " ",
        "\"",
        "{",
        "}",
        "hello world",
        "\"a",
        "a\"",
        "\\",
        "abcdefghijklmnopqrstuvwxyzabcdefghij",
    ] {
        words.push(w.to_string());
    }
    let refs: Vec<&str> = words.iter().map(|s| s.as_str()).collect();
    let mut t = toks(&refs);
    t.push(vec![0xC3]);
    t.push(vec![0xA9]);
    t.push(vec![0xE2, 0x80]);
    t.push(b"ab".to_vec()); // a duplicate byte string
    t
}

/// Regexes every index must get exactly right: alternatives that share a prefix,
/// finish-and-continue, counted repetition, case folding, multi-byte characters, control
/// bytes, empty classes, JSON strings, anchors.
pub const KNOWN: [&str; 20] = [
    "(a|ab)",
    r"a(\.a)*",
    r"\d{4}-\d{2}",
    "(ab|cd)+e?",
    "cat|car",
    "abc+",
    "(abc)?",
    "(ab){2,3}",
    "(?i:abc)",
    "é+",
    r"(https?://)?[a-z\.]+",
    "[^a]*",
    "\u{1C}a",
    "",
    "[a&&b]",
    "a[a&&b]|b",
    r#"\{"a": "([^"\\\x00-\x1F\x7F-\x9F]|\\["\\])*"\}"#,
    r#""[^"\\\x00-\x1F\x7F-\x9F]{0,12}""#,
    r"^(ab|c)$",
    r#"\{"a": "[^"]*"\}"#,
];

/// Lazy index options with the slice shortcut on or off.
pub fn options(slices: bool) -> LazyOptions {
    LazyOptions {
        slices,
        ..LazyOptions::default()
    }
}

/// Walk the naive index and `lazy` in lockstep over every reachable pair of states.
pub fn assert_same(pattern: &str, v: &Vocabulary, lazy: &LazyIndex) {
    let naive = NaiveIndex::new(pattern, v).unwrap();
    let start = (naive.initial_state(), lazy.initial_state());
    let mut seen = HashSet::from([start]);
    let mut queue = VecDeque::from([start]);
    while let Some((n, l)) = queue.pop_front() {
        let allowed = naive.allowed(n);
        assert_eq!(allowed, lazy.allowed(l), "{pattern:?}: masks differ");
        let mut mask = vec![0u32; v.mask_words()];
        lazy.fill_mask(l, &mut mask);
        assert_eq!(
            tokensdfa_core::ones(&mask),
            allowed,
            "{pattern:?}: fill_mask"
        );
        assert_eq!(naive.is_accepting(n), lazy.is_accepting(l), "{pattern:?}");
        for t in 0..v.len() as u32 {
            let (nn, ln) = (naive.next_state(n, t), lazy.next_state(l, t));
            assert_eq!(nn.is_some(), ln.is_some(), "{pattern:?}: token {t}");
            if let (Some(nn), Some(ln)) = (nn, ln) {
                if seen.insert((nn, ln)) {
                    queue.push_back((nn, ln));
                }
            }
        }
    }
}

/// Letters and letter pairs, words, their quoted and colon-ended forms, digits and JSON
/// punctuation: enough slice tokens that a state with a large live region of letters
/// gives up the product search and prunes.
pub fn wordy_vocab(words: &[&str]) -> Vocabulary {
    let mut tokens: Vec<Vec<u8>> = Vec::new();
    let letters: Vec<char> = ('a'..='z').collect();
    for &a in &letters {
        tokens.push(a.to_string().into_bytes());
        for &b in &letters[..8] {
            tokens.push(format!("{a}{b}").into_bytes());
        }
    }
    for w in words {
        tokens.push(w.as_bytes().to_vec());
        tokens.push(format!("{w}\"").into_bytes());
        tokens.push(format!("\"{w}\":").into_bytes());
        tokens.push(format!("{w}zz").into_bytes());
    }
    for t in [
        "{", "}", "\"", ":", ",", "0", "1", "9", "x", "é", "\\", "\\u", "00", "\"\"", " ",
    ] {
        tokens.push(t.as_bytes().to_vec());
    }
    tokens.sort();
    tokens.dedup();
    vocab(&tokens)
}

pub const WORDS: [&str; 24] = [
    "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa",
    "lambda", "mu", "nu", "xi", "omicron", "pi", "rho", "sigma", "tau", "upsilon", "phi", "chi",
    "psi", "omega",
];
