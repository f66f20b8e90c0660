//! The lexing modes of the reference (`GrammarOptions::lexing`, `leading_ignore`,
//! `trailing_ignore`) by brute force against an independent lexeme-level oracle
//! (`reference_lexing/oracle.rs`) on random finite grammars with ignore terminals, in
//! every mode, three tokens deep (the oracle's two readings checked against each other
//! where both apply). llguidance's measured answers are `reference_lexing_cases.rs`.

#[path = "reference_lexing/oracle.rs"]
mod oracle;
mod reference_support;

use std::collections::{BTreeSet, HashSet};

use oracle::LexOracle;
use proptest::prelude::*;
use tokensdfa_core::Vocabulary;
use tokensdfa_grammar::{
    Error, Grammar, GrammarOptions, Lexing, NaiveGrammarIndex, Rule, Symbol, Terminal,
    TrailingIgnore,
};

use TrailingIgnore::{Always, Never, WhereALexemeMayFollow as MayFollow};

fn options(lexing: Lexing, leading: bool, trailing: TrailingIgnore) -> GrammarOptions {
    GrammarOptions {
        lexing,
        leading_ignore: leading,
        trailing_ignore: trailing,
        ..GrammarOptions::default()
    }
}

// ---- brute force on random finite grammars ----

const POOL: &[&str] = &["", "a", "b", "c", "ab", "ba", "bc", "abc", "cc", "aab"];
const IGNORE_POOL: &[&str] = &["", "c", "cc", "ac", " ", "  "];
const MAX_SENTENCES: usize = 2_000;

fn regex_of(words: &BTreeSet<&str>) -> String {
    if words.is_empty() {
        return "[a&&b]".to_string();
    }
    let alts: Vec<String> = words.iter().map(|w| regex_syntax::escape(w)).collect();
    format!("(?:{})", alts.join("|"))
}

type RawRules = Vec<Vec<Vec<(bool, usize)>>>;

fn raw_rules() -> impl Strategy<Value = RawRules> {
    let sym = (any::<bool>(), 0..8usize);
    let alt = prop::collection::vec(sym, 0..=3);
    prop::collection::vec(prop::collection::vec(alt, 1..=3), 1..=4)
}

/// Rule `i` refers to later rules only; terminals `k % terms.len()`.
fn build(raw: &RawRules, terms: &[BTreeSet<&str>], ignore: Option<usize>) -> Grammar {
    let n = raw.len();
    let sym = |i: usize, (is_rule, k): (bool, usize)| {
        if is_rule && i + 1 < n {
            Symbol::Rule((i + 1 + k % (n - i - 1)) as u32)
        } else {
            Symbol::Terminal((k % terms.len()) as u32)
        }
    };
    Grammar {
        rules: raw
            .iter()
            .enumerate()
            .map(|(i, alts)| Rule {
                name: format!("r{i}"),
                alternatives: alts
                    .iter()
                    .map(|alt| alt.iter().map(|&s| sym(i, s)).collect())
                    .collect(),
            })
            .collect(),
        terminals: terms
            .iter()
            .enumerate()
            .map(|(i, w)| Terminal::of_regex(format!("T{i}"), regex_of(w)))
            .collect(),
        start: 0,
        ignore: ignore.into_iter().map(|t| t as u32).collect(),
    }
}

/// The terminal sentences (sequences of terminal ids), using only `usable` terminals,
/// and leaving out at will each occurrence of an `optional` one; None past the cap.
fn terminal_sentences(
    g: &Grammar,
    usable: &[bool],
    optional: &[bool],
) -> Option<BTreeSet<Vec<usize>>> {
    let mut langs: Vec<BTreeSet<Vec<usize>>> = vec![BTreeSet::new(); g.rules.len()];
    for r in (0..g.rules.len()).rev() {
        let mut out = BTreeSet::new();
        for alt in &g.rules[r].alternatives {
            let mut acc: BTreeSet<Vec<usize>> = [vec![]].into();
            for s in alt {
                let words: BTreeSet<Vec<usize>> = match *s {
                    Symbol::Rule(q) => langs[q as usize].clone(),
                    Symbol::Terminal(t) => {
                        let t = t as usize;
                        let one = usable[t].then(|| vec![t]);
                        let none = optional[t].then(Vec::new);
                        one.into_iter().chain(none).collect()
                    }
                };
                acc = acc
                    .iter()
                    .flat_map(|x| words.iter().map(move |y| [x.clone(), y.clone()].concat()))
                    .collect();
                if acc.len() > MAX_SENTENCES {
                    return None;
                }
            }
            out.extend(acc);
        }
        langs[r] = out;
    }
    Some(langs.swap_remove(0))
}

/// The oracle's `(live, sentence)` for `p`, per parser state; where trailing ignore is
/// `Always` or `Never`, checked against the per-sequence reading.
fn judge(o: &LexOracle, p: &[u8]) -> (bool, bool) {
    let got = o.judge(p);
    if o.trailing != MayFollow {
        assert_eq!(
            got,
            o.judge_per_path(p),
            "the oracle's two readings at {p:?}"
        );
    }
    got
}

/// Compare the index with the oracle at every state within `depth` tokens.
fn check_walk(ix: &NaiveGrammarIndex, o: &LexOracle, tokens: &[&[u8]], depth: usize) -> usize {
    let mut frontier = vec![(ix.initial_state(), Vec::<u8>::new())];
    let mut checked = 0;
    for level in 0..=depth {
        let mut next = Vec::new();
        for (state, p) in frontier {
            checked += 1;
            let sentence = judge(o, &p).1;
            assert_eq!(ix.is_accepting(state), sentence, "accepting at {p:?}");
            assert_eq!(ix.accepts(&p).unwrap(), sentence, "accepts {p:?}");
            let allowed: HashSet<u32> = ix.allowed(state).unwrap().into_iter().collect();
            assert_eq!(allowed.contains(&0), sentence, "EOS at {p:?}");
            for (t, &bytes) in tokens.iter().enumerate().skip(1) {
                let pt = [p.as_slice(), bytes].concat();
                let want = !bytes.is_empty() && judge(o, &pt).0;
                assert_eq!(
                    allowed.contains(&(t as u32)),
                    want,
                    "token {bytes:?} at {p:?}"
                );
                let step = ix.next_state(state, t as u32).unwrap();
                assert_eq!(step.is_some(), want, "next_state {bytes:?} at {p:?}");
                if let (Some(s), true) = (step, level < depth) {
                    next.push((s, pt));
                }
            }
        }
        frontier = next;
    }
    checked
}

fn word_sets(terms: &[BTreeSet<&str>]) -> Vec<BTreeSet<Vec<u8>>> {
    terms
        .iter()
        .map(|w| w.iter().map(|s| s.as_bytes().to_vec()).collect())
        .collect()
}

fn token() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(prop::sample::select(b"abc ".to_vec()), 0..=4)
}

fn terminal(pool: &'static [&'static str]) -> impl Strategy<Value = BTreeSet<&'static str>> {
    prop::collection::btree_set(prop::sample::select(pool), 0..=3)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn masks_equal_brute_force_in_every_mode(
        raw in raw_rules(),
        mut terms in prop::collection::vec(terminal(POOL), 1..=4),
        ignore in prop::option::of(terminal(IGNORE_POOL)),
        toks in prop::collection::vec(token(), 1..=10),
        greedy in any::<bool>(),
        leading in any::<bool>(),
        trailing in prop::sample::select(vec![Always, Never, MayFollow]),
    ) {
        let ign = ignore.map(|w| {
            terms.push(w);
            terms.len() - 1
        });
        let g = build(&raw, &terms, ign);
        let words = word_sets(&terms);
        let usable: Vec<bool> = words
            .iter()
            .map(|w| w.iter().any(|s| !greedy || !s.is_empty()))
            .collect();
        // greedy: a terminal that also matches the empty string may be left out
        // (src/lexemes.rs), its lexemes being its non-empty words
        let optional: Vec<bool> = words.iter().map(|w| greedy && w.contains(&vec![])).collect();
        let Some(sentences) = terminal_sentences(&g, &usable, &optional) else { return Ok(()) };
        let ignore: Vec<usize> = ign.filter(|&t| usable[t]).into_iter().collect();
        let o = LexOracle::new(words, ignore, sentences, (greedy, leading, trailing));
        let mut tokens: Vec<&[u8]> = vec![b"<eos>"];
        tokens.extend(toks.iter().map(|t| t.as_slice()));
        let v = Vocabulary::new(&tokens, 0, &[]).unwrap();
        let lexing = if greedy { Lexing::Greedy } else { Lexing::Scannerless };
        match NaiveGrammarIndex::new(&g, &v, options(lexing, leading, trailing)) {
            Err(Error::Invalid(m)) => prop_assert!(o.sentences.is_empty(), "{}", m),
            Err(e) => prop_assert!(false, "{:?}", e),
            Ok(ix) => {
                prop_assert!(!o.sentences.is_empty());
                prop_assert!(check_walk(&ix, &o, &tokens, 3) >= 1);
            }
        }
    }
}
