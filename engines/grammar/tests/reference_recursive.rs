//! The reference against an exact oracle on random *recursive* grammars: rules refer to
//! any rule (left, right and nullable cycles, ambiguity), terminals are finite or
//! infinite regexes over `{a, b, c}` (some matching the empty string), sometimes one is
//! `%ignore`d. The oracle (`reference_support::Oracle`, a Bar-Hillel fixpoint) decides
//! viability and membership of each prefix exactly, so every token is checked at every
//! state up to three tokens deep.

mod reference_support;

use proptest::prelude::*;
use reference_support::{check_exact, Oracle};
use tokensdfa_core::Vocabulary;
use tokensdfa_grammar::{
    Error, Grammar, GrammarOptions, NaiveGrammarIndex, Rule, Symbol, Terminal,
};

const REGEXES: &[&str] = &[
    "a", "b", "c", "ab", "a+", "(ab)*", "b?", "[a-c]", "", "ca|b", "a*b", "[ab]{2}", "cc?",
];

type RawRules = Vec<Vec<Vec<(bool, usize)>>>;

fn raw_rules() -> impl Strategy<Value = RawRules> {
    let sym = (any::<bool>(), 0..16usize);
    let alt = prop::collection::vec(sym, 0..=3);
    prop::collection::vec(prop::collection::vec(alt, 1..=3), 1..=4)
}

fn build(raw: &RawRules, terms: &[&str], ignore: bool) -> Grammar {
    let n = raw.len();
    let rules = raw
        .iter()
        .enumerate()
        .map(|(i, alts)| Rule {
            name: format!("r{i}"),
            alternatives: alts
                .iter()
                .map(|alt| {
                    alt.iter()
                        .map(|&(is_rule, k)| {
                            if is_rule {
                                Symbol::Rule((k % n) as u32)
                            } else {
                                Symbol::Terminal((k % terms.len()) as u32)
                            }
                        })
                        .collect()
                })
                .collect(),
        })
        .collect();
    Grammar {
        rules,
        terminals: terms
            .iter()
            .enumerate()
            .map(|(i, r)| Terminal {
                name: format!("T{i}"),
                regex: r.to_string(),
            })
            .collect(),
        start: 0,
        ignore: if ignore { vec![0] } else { vec![] },
    }
}

fn token() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(prop::sample::select(b"abc".to_vec()), 0..=3)
}

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
