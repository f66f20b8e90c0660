//! The reference against an exact oracle on random *recursive* grammars: rules refer to
//! any rule (left, right and nullable cycles, ambiguity), terminals are finite or
//! infinite regexes over `{a, b, c}` (some matching the empty string), sometimes one is
//! `%ignore`d. The oracle (`reference_support::Oracle`, a Bar-Hillel fixpoint) decides
//! viability and membership of each prefix exactly, so every token is checked at every
//! state up to three tokens deep.

mod reference_support;

use proptest::prelude::*;
use reference_support::{build, check_exact, raw_rules, token, Oracle, REGEXES};
use tokensdfa_core::Vocabulary;
use tokensdfa_grammar::{Error, GrammarOptions, NaiveGrammarIndex};

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn masks_equal_the_exact_oracle(
        raw in raw_rules(),
        terms in prop::collection::vec(prop::sample::select(REGEXES), 1..=4),
        ignore in prop::bool::weighted(0.2),
        toks in prop::collection::vec(token(), 1..=8),
        special in any::<bool>(),
    ) {
        let g = build(&raw, &terms, ignore);
        let oracle = Oracle::new(&g);
        let mut tokens: Vec<&[u8]> = vec![b"<eos>"];
        tokens.extend(toks.iter().map(|t| t.as_slice()));
        let specials: Vec<u32> = if special { vec![1] } else { vec![] };
        let v = Vocabulary::new(&tokens, 0, &specials).unwrap();
        match NaiveGrammarIndex::new(&g, &v, GrammarOptions::default()) {
            Err(Error::Invalid(m)) => prop_assert!(!oracle.judge(&[]).0, "{}", m),
            Err(e) => prop_assert!(false, "{:?}", e),
            Ok(ix) => {
                prop_assert!(oracle.judge(&[]).0);
                check_exact(&ix, &oracle, &tokens, &specials, 3);
            }
        }
    }
}
