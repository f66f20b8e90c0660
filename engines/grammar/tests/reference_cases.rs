//! Hand-written cases of the reference: recursion, nullable rules, `%ignore`, terminals
//! matching the empty string, Unicode split across tokens, the budget, empty languages;
//! each checked against the oracle of `reference_support` or by explicit expectations.

mod reference_support;

use reference_support::{check_against, grammar, language_upto, vocab, with_ignore};
use tokensdfa_core::Vocabulary;
use tokensdfa_grammar::{Error, Grammar, GrammarOptions, NaiveGrammarIndex};

fn index(g: &Grammar, v: &Vocabulary) -> NaiveGrammarIndex {
    NaiveGrammarIndex::new(g, v, GrammarOptions::default()).unwrap()
}

/// Index `g` over `tokens` (id 0 is EOS) and compare it with the oracle: sentences up
/// to `n` bytes over `alphabet`, states up to `depth` tokens, prefixes up to `check`.
fn check(g: &Grammar, tokens: &[&[u8]], alphabet: &[u8], n: usize, depth: usize, check: usize) {
    let v = vocab(tokens);
    let ix = index(g, &v);
    let lang = language_upto(g, alphabet, n);
    let states = check_against(&ix, tokens, &[], &lang, depth, check);
    assert!(states > 1);
}

#[test]
fn left_recursion() {
    let g = grammar("e", &[("e", "e '+' t | t"), ("t", "'x' | '(' e ')'")], &[]);
    let toks: &[&[u8]] = &[b"<eos>", b"x", b"+", b"(", b")", b"x+", b"+x", b")+", b"(("];
    check(&g, toks, b"x+()", 9, 4, 4);
    let v = vocab(toks);
    let ix = index(&g, &v);
    let s = ix.next_state(0, 1).unwrap().unwrap();
    assert!(ix.is_accepting(s));
    assert_eq!(ix.allowed(s).unwrap(), vec![0, 2, 6]);
}

#[test]
fn right_recursion_and_ambiguity() {
    let g = grammar(
        "s",
        &[("s", "a s | a | s s"), ("a", "'a' | 'a' 'a' | /a+/")],
        &[],
    );
    check(&g, &[b"<eos>", b"a", b"aa", b"b", b"aaa"], b"ab", 6, 4, 5);
}

#[test]
fn nullable_rules_and_cycles() {
    let g = grammar(
        "s",
        &[
            ("s", "n 'x' n n 'y' n | n"),
            ("n", "n | | m n 'z' | m"),
            ("m", "n | "),
        ],
        &[],
    );
    check(
        &g,
        &[b"<eos>", b"x", b"y", b"z", b"xy", b"zx", b"zz"],
        b"xyz",
        7,
        4,
        4,
    );
    let v = vocab(&[b"<eos>", b"x"]);
    assert!(index(&g, &v).is_accepting(0));
}

#[test]
fn terminal_matching_the_empty_string() {
    let g = grammar("s", &[("s", "/b*/ 'a' /c?/ /b*/")], &[]);
    check(
        &g,
        &[b"<eos>", b"a", b"b", b"c", b"ab", b"ac", b"cb", b"bb"],
        b"abc",
        6,
        4,
        5,
    );
}

#[test]
fn ignore_before_between_and_after_terminals() {
    let g = grammar(
        "s",
        &[("s", "'a' item | "), ("item", "'b' 'c'")],
        &[("WS", "[ ]+")],
    );
    let g = with_ignore(g, &["WS"]);
    let toks: &[&[u8]] = &[b"<eos>", b"a", b"b", b"c", b" ", b"a b", b" c ", b"bc"];
    check(&g, toks, b"abc ", 9, 4, 5);
    let v = vocab(toks);
    let ix = index(&g, &v);
    // leading and, with the nullable start, lone ignores are sentences
    let sp = ix.next_state(0, 4).unwrap().unwrap();
    assert!(ix.is_accepting(sp));
    let mut s = 0;
    for t in [4, 5, 4, 3, 4] {
        s = ix.next_state(s, t).unwrap().unwrap();
    }
    assert!(ix.is_accepting(s)); // " a b c " is a sentence
}

#[test]
fn unicode_terminals_split_across_tokens() {
    // "é" is C3 A9, "€" is E2 82 AC
    let g = grammar("s", &[("s", "'é' s | /[€é]/")], &[]);
    let toks: &[&[u8]] = &[
        b"<eos>",
        b"\xC3",
        b"\xA9",
        b"\xC3\xA9",
        b"\xE2\x82",
        b"\xAC",
        b"e",
    ];
    let v = vocab(toks);
    let ix = index(&g, &v);
    assert_eq!(ix.allowed(0).unwrap(), vec![1, 3, 4]);
    let half = ix.next_state(0, 1).unwrap().unwrap();
    assert_eq!(ix.allowed(half).unwrap(), vec![2]);
    let full = ix.next_state(half, 2).unwrap().unwrap();
    assert!(ix.is_accepting(full));
    let euro = ix.next_state(0, 4).unwrap().unwrap();
    assert_eq!(ix.allowed(euro).unwrap(), vec![5]);
    assert_eq!(ix.next_state(0, 6).unwrap(), None);
}

#[test]
fn item_budget_is_an_error_not_a_hang() {
    let g = grammar("s", &[("s", "s s | 'a' | ")], &[]);
    let toks: Vec<Vec<u8>> = (1..=64).map(|k| vec![b'a'; k]).collect();
    let mut refs: Vec<&[u8]> = vec![b"<eos>"];
    refs.extend(toks.iter().map(|t| t.as_slice()));
    let v = vocab(&refs);
    let ix = NaiveGrammarIndex::new(
        &g,
        &v,
        GrammarOptions {
            item_budget: 2_000,
            ..GrammarOptions::default()
        },
    )
    .unwrap();
    let mut out = vec![0u32; v.mask_words()];
    match ix.fill_mask(0, &mut out) {
        Err(Error::Budget(m)) => assert!(m.contains("2000"), "{m}"),
        other => panic!("expected a budget error, got {other:?}"),
    }
    match ix.next_state(0, 64) {
        Err(Error::Budget(_)) => {}
        other => panic!("expected a budget error, got {other:?}"),
    }
    assert!(index(&g, &v).allowed(0).unwrap().len() == 65);
}

#[test]
fn empty_language_is_refused_naming_the_rule() {
    let v = vocab(&[b"<eos>", b"a"]);
    let g = grammar("s", &[("s", "a"), ("a", "a")], &[]);
    let e = NaiveGrammarIndex::new(&g, &v, GrammarOptions::default())
        .err()
        .unwrap();
    let Error::Invalid(m) = e else {
        panic!("{e:?}")
    };
    assert!(
        m.contains("language is empty") && m.contains("rule s") && m.contains("rule a"),
        "{m}"
    );
    let g = grammar("s", &[("s", "'x' /[^\\x00-\\x{10FFFF}]/")], &[]);
    let m = g.trimmed().unwrap_err().to_string();
    assert!(m.contains("matches nothing"), "{m}");
}

#[test]
fn bad_terminal_regex_is_named() {
    let g = grammar("s", &[("s", "'x' BAD")], &[("BAD", "a(")]);
    let m = g.trimmed().unwrap_err().to_string();
    assert!(m.contains("terminal BAD"), "{m}");
}

#[test]
fn trimming_drops_unproductive_and_unreachable() {
    let g = grammar(
        "s",
        &[
            ("s", "'a' | 'b' loop"),
            ("loop", "'c' loop"),
            ("unused", "'d'"),
        ],
        &[],
    );
    let t = g.trimmed().unwrap();
    assert_eq!(t.rules.len(), 1);
    assert_eq!(t.rules[0].alternatives.len(), 1);
    assert_eq!(t.terminals.len(), 1);
    assert_eq!(t.terminals[0].regex, "a");
}

#[test]
fn expand_ignore_without_ignores_is_a_clone() {
    let g = grammar("s", &[("s", "'a'")], &[]);
    assert_eq!(g.expand_ignore(), g);
}

#[test]
fn specials_eos_and_unknown_tokens_are_refused() {
    let g = grammar("s", &[("s", "/[a-z<>\\/]+/")], &[]);
    let toks: &[&[u8]] = &[b"</s>", b"<s>", b"a", b""];
    let v = Vocabulary::new(toks, 0, &[1]).unwrap();
    let ix = index(&g, &v);
    assert_eq!(ix.allowed(0).unwrap(), vec![2]);
    for t in [0, 1, 3, 99] {
        assert_eq!(ix.next_state(0, t).unwrap(), None);
    }
    assert!(ix.fill_mask(7, &mut [0]).is_err());
    let s = ix.next_state(0, 2).unwrap().unwrap();
    assert_eq!(ix.next_state(0, 2).unwrap(), Some(s));
    assert_eq!(ix.num_states(), 2);
    assert!(ix.memory_bytes() > 0);
}

#[test]
fn accepts_whole_texts() {
    let g = grammar("e", &[("e", "e '+' t | t"), ("t", "'x' | '(' e ')'")], &[]);
    let ix = index(&g, &vocab(&[b"<eos>"]));
    for (text, ok) in [
        ("x+(x+x)", true),
        ("x+", false),
        ("", false),
        ("((x))", true),
    ] {
        assert_eq!(ix.accepts(text.as_bytes()).unwrap(), ok, "{text}");
    }
}
