//! TokensDFA against the naive reference: exact mode must agree on every reachable state;
//! canonical-literals mode must allow a subset and still produce every string.

use std::collections::{HashMap, VecDeque};

use proptest::prelude::*;
use tokensdfa_core::{Index, Mode, NaiveIndex, TokenAutomaton, Vocabulary};

mod common;
use common::{cases, regex_strategy, vocab, vocab_strategy};

/// Walk both automata in lockstep from their initial states.
fn assert_exact(pattern: &str, v: &Vocabulary) {
    let naive = NaiveIndex::new(pattern, v).unwrap();
    let fast = Index::new(pattern, v, Mode::Exact).unwrap();
    let mut seen: HashMap<u32, u32> = HashMap::new();
    let mut queue = VecDeque::from([(naive.initial_state(), fast.initial_state())]);
    seen.insert(naive.initial_state(), fast.initial_state());
    while let Some((n, f)) = queue.pop_front() {
        let allowed = naive.allowed(n);
        assert_eq!(allowed, fast.allowed(f), "{pattern:?}: masks differ");
        assert_eq!(naive.is_accepting(n), fast.is_accepting(f), "{pattern:?}");
        for t in allowed {
            if t == v.eos_id() {
                continue;
            }
            let (nn, fnext) = (
                naive.next_state(n, t).unwrap(),
                fast.next_state(f, t).unwrap(),
            );
            match seen.get(&nn) {
                Some(&prev) => assert_eq!(prev, fnext, "{pattern:?}: token {t} diverges"),
                None => {
                    seen.insert(nn, fnext);
                    queue.push_back((nn, fnext));
                }
            }
        }
    }
    assert_eq!(seen.len(), naive.num_states());
}

fn toks(words: &[&str]) -> Vec<Vec<u8>> {
    words.iter().map(|w| w.as_bytes().to_vec()).collect()
}

#[test]
fn exact_mode_matches_naive_on_known_regexes() {
    let mut words: Vec<String> = (0..=9).map(|d| d.to_string()).collect();
    for w in [
        "a", "b", "ab", "abc", "c", ".", "-", "20", "24", "01", "2024", "http", "https", "://",
        "s", ":", "/", "www", "é", "\u{1C}", "ca", "cat", "car", "t", "r", " ", "\"", "{", "}",
    ] {
        words.push(w.to_string());
    }
    let refs: Vec<&str> = words.iter().map(|s| s.as_str()).collect();
    let mut t = toks(&refs);
    t.push(vec![0xC3]);
    t.push(vec![0xA9]);
    t.push(b"ab".to_vec()); // a duplicate byte string
    let v = vocab(&t);
    for p in [
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
        r#"\{"a": "[^"]*"\}"#,
    ] {
        assert_exact(p, &v);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn exact_index_equals_naive(pattern in regex_strategy(), t in vocab_strategy()) {
        assert_exact(&pattern, &vocab(&t));
    }
}
