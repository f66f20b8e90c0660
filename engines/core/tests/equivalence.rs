//! TokensDFA against the naive reference: exact mode must agree on every reachable state;
//! canonical-literals mode must allow a subset and still produce every string.

use std::collections::{HashMap, VecDeque};

use proptest::prelude::*;
use tokensdfa_core::{Index, Mode, NaiveIndex, TokenAutomaton, Vocabulary};

mod common;
use common::{cases, known_vocab, regex_strategy, vocab, vocab_strategy, KNOWN};

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

#[test]
fn exact_mode_matches_naive_on_known_regexes() {
    let v = vocab(&known_vocab());
    for p in KNOWN {
        assert_exact(p, &v);
    }
}

/// `tokens` with every byte as a token of its own, as in byte-level BPE vocabularies: the
/// eager index then reads a state's successors off its DFA row instead of its tokens' ends.
fn byte_complete(mut tokens: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
    tokens.extend((0..=255u8).map(|b| vec![b]));
    tokens
}

#[test]
fn exact_mode_matches_naive_on_a_byte_complete_vocabulary() {
    let v = vocab(&byte_complete(known_vocab()));
    for p in KNOWN {
        assert_exact(p, &v);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn exact_index_equals_naive(
        pattern in regex_strategy(),
        t in vocab_strategy(),
        complete in any::<bool>(),
    ) {
        let t = if complete { byte_complete(t) } else { t };
        assert_exact(&pattern, &vocab(&t));
    }
}
