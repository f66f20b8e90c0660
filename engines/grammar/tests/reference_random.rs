//! The reference against brute force on random *finite* grammars: rules only refer to
//! later rules (no recursion), terminals are finite sets of strings over `{a, b, c}`
//! (sometimes with the empty string, sometimes empty: unproductive), and the language is
//! enumerated exactly. A random vocabulary (multi-byte tokens spanning terminals, empty
//! tokens, a special id) is walked three tokens deep; at every state the mask, the
//! transitions and acceptance must equal "t is allowed at p iff some sentence starts
//! with p·t" and "EOS iff p is a sentence".

mod reference_support;

use std::collections::BTreeSet;

use proptest::prelude::*;
use reference_support::check_against;
use tokensdfa_core::Vocabulary;
use tokensdfa_grammar::{
    Error, Grammar, GrammarOptions, NaiveGrammarIndex, Rule, Symbol, Terminal,
};

const POOL: &[&str] = &["", "a", "b", "c", "ab", "ba", "bc", "abc", "cc", "aab"];
const MAX_LANGUAGE: usize = 3_000;

/// A terminal: a set of pool strings (empty set: matches nothing).
fn terminal() -> impl Strategy<Value = BTreeSet<&'static str>> {
    prop::collection::btree_set(prop::sample::select(POOL), 0..=3)
}

fn regex_of(words: &BTreeSet<&str>) -> String {
    if words.is_empty() {
        return "[a&&b]".to_string();
    }
    let alts: Vec<&str> = words.iter().copied().collect();
    format!("(?:{})", alts.join("|"))
}

/// Raw rules: per rule, alternatives of symbol choices `(is_rule, k)`, resolved so that
/// rule `i` only refers to rules after it.
type RawRules = Vec<Vec<Vec<(bool, usize)>>>;

fn raw_rules() -> impl Strategy<Value = RawRules> {
    let sym = (any::<bool>(), 0..8usize);
    let alt = prop::collection::vec(sym, 0..=3);
    prop::collection::vec(prop::collection::vec(alt, 1..=3), 1..=4)
}

fn build(raw: &RawRules, terms: &[BTreeSet<&str>]) -> Grammar {
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
                            if is_rule && i + 1 < n {
                                Symbol::Rule((i + 1 + k % (n - i - 1)) as u32)
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
            .map(|(i, w)| Terminal::of_regex(format!("T{i}"), regex_of(w)))
            .collect(),
        start: 0,
        ignore: vec![],
    }
}

/// The exact language, bottom-up (rules only refer to later ones); None past the cap.
fn language(raw: &Grammar, terms: &[BTreeSet<&str>]) -> Option<BTreeSet<Vec<u8>>> {
    let mut langs: Vec<BTreeSet<Vec<u8>>> = vec![BTreeSet::new(); raw.rules.len()];
    for r in (0..raw.rules.len()).rev() {
        let mut out = BTreeSet::new();
        for alt in &raw.rules[r].alternatives {
            let mut acc: BTreeSet<Vec<u8>> = [vec![]].into();
            for s in alt {
                let words: BTreeSet<Vec<u8>> = match *s {
                    Symbol::Rule(q) => langs[q as usize].clone(),
                    Symbol::Terminal(t) => terms[t as usize]
                        .iter()
                        .map(|w| w.as_bytes().to_vec())
                        .collect(),
                };
                let mut next = BTreeSet::new();
                for x in &acc {
                    for y in &words {
                        let mut z = x.clone();
                        z.extend_from_slice(y);
                        next.insert(z);
                    }
                }
                if next.len() > MAX_LANGUAGE {
                    return None;
                }
                acc = next;
            }
            out.extend(acc);
        }
        langs[r] = out;
    }
    Some(langs.swap_remove(0))
}

fn token() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(prop::sample::select(b"abc".to_vec()), 0..=4)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn masks_equal_brute_force(
        raw in raw_rules(),
        terms in prop::collection::vec(terminal(), 1..=4),
        toks in prop::collection::vec(token(), 1..=12),
        special in any::<bool>(),
    ) {
        let g = build(&raw, &terms);
        let Some(lang) = language(&g, &terms) else { return Ok(()) };
        let mut tokens: Vec<&[u8]> = vec![b"<eos>"];
        tokens.extend(toks.iter().map(|t| t.as_slice()));
        let specials: Vec<u32> = if special { vec![1] } else { vec![] };
        let v = Vocabulary::new(&tokens, 0, &specials).unwrap();
        match NaiveGrammarIndex::new(&g, &v, GrammarOptions::default()) {
            Err(Error::Invalid(m)) => {
                prop_assert!(lang.is_empty(), "refused a non-empty language: {}", m);
                prop_assert!(m.contains("language is empty"), "{}", m);
            }
            Err(e) => prop_assert!(false, "{:?}", e),
            Ok(ix) => {
                prop_assert!(!lang.is_empty());
                check_against(&ix, &tokens, &specials, &lang, 3, usize::MAX);
                let mut mask = vec![0u32; v.mask_words()];
                ix.fill_mask(0, &mut mask).unwrap();
                prop_assert_eq!(tokensdfa_core::ones(&mask), ix.allowed(0).unwrap());
            }
        }
    }

    #[test]
    fn trimming_keeps_the_language(
        raw in raw_rules(),
        terms in prop::collection::vec(terminal(), 1..=4),
    ) {
        let g = build(&raw, &terms);
        let Some(lang) = language(&g, &terms) else { return Ok(()) };
        match g.trimmed() {
            Err(_) => prop_assert!(lang.is_empty()),
            Ok(t) => {
                let kept: Vec<BTreeSet<&str>> = t
                    .terminals
                    .iter()
                    .map(|k| terms[g.terminals.iter().position(|x| x == k).unwrap()].clone())
                    .collect();
                prop_assert!(kept.iter().all(|w| !w.is_empty()));
                // trimmed rules keep their relative order, so they still only refer forward
                prop_assert_eq!(language(&t, &kept), Some(lang));
            }
        }
    }
}
