//! Strategies shared by the property tests: regexes in the dialect every engine shares,
//! and small vocabularies with the awkward tokens real ones have.

use proptest::prelude::*;
use tokensdfa_core::Vocabulary;

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
