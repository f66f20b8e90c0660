//! An eager build that would exceed its budget fails fast with `LimitExceeded`, naming
//! the budget; within the defaults, ordinary regexes build.

use tokensdfa_core::{Error, Index, Limits, Mode, TokenAutomaton};

mod common;
use common::vocab;

fn small_vocab() -> tokensdfa_core::Vocabulary {
    let toks: Vec<Vec<u8>> = [
        "a", "b", "ab", "abc", "c", "0", "1", "12", "\"", "{", "}", " ",
    ]
    .iter()
    .map(|t| t.as_bytes().to_vec())
    .collect();
    vocab(&toks)
}

fn build(pattern: &str, limits: Limits) -> Result<Index, Error> {
    Index::with_limits(pattern, &small_vocab(), Mode::Exact, Some(1), limits)
}

#[test]
fn the_work_budget_stops_the_walks() {
    let tight = Limits {
        work: 10,
        ..Limits::default()
    };
    let err = build("[abc]{1,40}", tight).err().unwrap();
    assert!(matches!(err, Error::LimitExceeded(_)), "{err:?}");
    assert!(err.to_string().contains("max_work"), "{err}");
    let canonical = Index::with_limits(
        "[abc]{1,40}",
        &small_vocab(),
        Mode::CanonicalLiterals,
        Some(1),
        tight,
    );
    assert!(matches!(canonical.err().unwrap(), Error::LimitExceeded(_)));
}

#[test]
fn the_determinization_budget_stops_the_dfa() {
    let tight = Limits {
        dfa_bytes: 10_000,
        ..Limits::default()
    };
    let err = build(r"(a|b)*a(a|b){12}", tight).err().unwrap();
    assert!(matches!(err, Error::LimitExceeded(_)), "{err:?}");
}

#[test]
fn the_mask_budget_stops_the_store() {
    let tight = Limits {
        mask_bytes: 8,
        ..Limits::default()
    };
    let err = build("a[bc]1", tight).err().unwrap();
    assert!(matches!(err, Error::LimitExceeded(_)), "{err:?}");
    assert!(err.to_string().contains("max_mask_bytes"), "{err}");
}

#[test]
fn defaults_build_ordinary_regexes() {
    let ix = build(r#"\{"(ab|c)+" [0-9]{1,3}\}"#, Limits::default()).unwrap();
    assert!(ix.num_states() > 5, "{}", ix.num_states());
    assert!(ix.stats().work > 0);
}
