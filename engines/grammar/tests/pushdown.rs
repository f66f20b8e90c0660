//! TokensDFA's pushdown mode against the reference, in lockstep: at every token-level
//! state reachable within a few tokens, the same mask, the same acceptance, and a next
//! state exactly where the reference has one. On random recursive grammars (left, right
//! and nullable cycles, ambiguity, empty terminals, `%ignore`; `reference_support`, whose
//! grammars the reference is held to an exact oracle on) and on a JSON grammar walked
//! along nested texts past any fixed depth, over vocabularies of multi-byte tokens; and
//! on JSON schemas in the schema compiler's grammar mode, whose unconstrained values nest
//! without bound where the regex modes stop at `any_depth`. Comments: `pushdown_comments`.

mod pushdown_support;
mod reference_support;

use proptest::prelude::*;
use pushdown_support::{lockstep, sets_along, walk_both, BUDGET};
use reference_support::{build, grammar, raw_rules, token, with_ignore, REGEXES};
use tokensdfa_core::{LazyOptions, TokenAutomaton, Vocabulary};
use tokensdfa_grammar::{
    pushdown_index, schema_language, schema_pushdown_index, Error, Grammar, GrammarOptions, Leaves,
    NaiveGrammarIndex,
};
use tokensdfa_schema::Dialect;

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn random_recursive_grammars_give_the_references_masks(
        raw in raw_rules(),
        terms in prop::collection::vec(prop::sample::select(REGEXES), 1..=4),
        ignore in prop::bool::weighted(0.2),
        toks in prop::collection::vec(token(), 1..=8),
        special in any::<bool>(),
    ) {
        let g = build(&raw, &terms, ignore);
        let mut tokens: Vec<&[u8]> = vec![b"<eos>"];
        tokens.extend(toks.iter().map(|t| t.as_slice()));
        let specials: Vec<u32> = if special { vec![1] } else { vec![] };
        let v = Vocabulary::new(&tokens, 0, &specials).unwrap();
        match NaiveGrammarIndex::new(&g, &v, GrammarOptions::default()) {
            // an empty language: both refuse it
            Err(Error::Invalid(_)) => {
                let refused = pushdown_index(&g, &v, LazyOptions::default(), BUDGET).is_err();
                prop_assert!(refused);
            }
            Err(e) => prop_assert!(false, "{:?}", e),
            Ok(_) => {
                lockstep(&g, &v, 3);
            }
        }
    }
}

fn json() -> Grammar {
    let g = grammar(
        "value",
        &[
            (
                "value",
                "object | array | STRING | NUMBER | 'true' | 'false' | 'null'",
            ),
            ("object", "'{' '}' | '{' members '}'"),
            ("members", "pair | pair ',' members"),
            ("pair", "STRING ':' value"),
            ("array", "'[' ']' | '[' elements ']'"),
            ("elements", "value | elements ',' value"),
        ],
        &[
            ("STRING", r#""([^"\\]|\\["\\/bfnrt])*""#),
            ("NUMBER", r"-?(0|[1-9][0-9]*)(\.[0-9]+)?"),
            ("WS", r"[ \n]+"),
        ],
    );
    with_ignore(g, &["WS"])
}

fn json_vocab() -> (Vocabulary, Vec<Vec<u8>>) {
    let mut tokens: Vec<Vec<u8>> = vec![b"<eos>".to_vec()];
    for t in [
        "{", "}", "[", "]", ",", ":", "\"", " ", "\n", "a", "b", "1", "0", "-", ".", "\\", "e",
        "{\"", "\":", "\",", "\"}", "[[", "]]", "[{", "}]", "true", "null", "ab", "12", ", ", ": ",
        "\"a", "b\"", "1,", "0]", " {", "\\\"", "[\"", "\"]", "tr", "ue", "fal", "se",
    ] {
        tokens.push(t.as_bytes().to_vec());
    }
    let refs: Vec<&[u8]> = tokens.iter().map(|t| t.as_slice()).collect();
    (Vocabulary::new(&refs, 0, &[]).unwrap(), tokens)
}

#[test]
fn a_json_grammar_gives_the_references_masks_near_the_start() {
    let (v, _) = json_vocab();
    assert!(lockstep(&json(), &v, 2) > 100);
}

/// Along texts nesting arrays and objects 12 deep (no regex unrolled to a fixed depth
/// could follow them), the masks, acceptance and steps of the two indexes agree at every
/// token, and a revisit of a state (the same text walked again) costs no new set.
#[test]
fn nested_json_texts_give_the_references_masks_at_every_token() {
    let (v, tokens) = json_vocab();
    let g = json();
    let naive = NaiveGrammarIndex::new(&g, &v, GrammarOptions::default()).unwrap();
    let push = pushdown_index(&g, &v, LazyOptions::default(), BUDGET).unwrap();
    let deep = format!("{}1{}", "[{\"a\": ".repeat(12), "}]".repeat(12));
    let texts = [
        deep.as_str(),
        r#"{"ab": [true, null, -1.0, "a\"b"], "b": {}}"#,
        "[[[[]]]]",
    ];
    for text in texts {
        let ids = greedy_tokens(text.as_bytes(), &tokens);
        let (mut n, mut p) = (naive.initial_state(), push.initial_state());
        for (k, &t) in ids.iter().enumerate() {
            assert_eq!(push.allowed(p), naive.allowed(n).unwrap(), "{text} at {k}");
            assert_eq!(push.is_accepting(p), naive.is_accepting(n), "{text} at {k}");
            n = naive
                .next_state(n, t)
                .unwrap()
                .expect("the reference takes the text");
            p = push
                .next_state(p, t)
                .expect("the pushdown mode takes the text");
        }
        assert!(
            push.is_accepting(p) && naive.is_accepting(n),
            "{text} is a sentence"
        );
        let states = push.stats().dfa_states;
        let mut again = push.initial_state();
        for &t in &ids {
            again = push.next_state(again, t).unwrap();
        }
        assert_eq!(
            (again, push.stats().dfa_states),
            (p, states),
            "{text} walked again"
        );
    }
}

/// The longest-first tokenization of `text` over `tokens` (every byte has a token).
fn greedy_tokens(text: &[u8], tokens: &[Vec<u8>]) -> Vec<u32> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < text.len() {
        let (id, len) = (1..tokens.len())
            .filter(|&i| text[at..].starts_with(&tokens[i]))
            .map(|i| (i as u32, tokens[i].len()))
            .max_by_key(|&(_, len)| len)
            .expect("a token for every byte");
        out.push(id);
        at += len;
    }
    out
}

/// Star rules (`%ignore` runs, `x*`) are read left-recursively, so whitespace of any
/// length leads back to a few sets: after runs of 1 to 40 spaces between two values the
/// pushdown mode holds the reference's masks and has made a bounded number of sets,
/// where right recursion made one per length.
#[test]
fn runs_of_ignored_text_of_every_length_reuse_their_sets() {
    let g = json();
    let mut tokens: Vec<Vec<u8>> = vec![b"<eos>".to_vec(), b"[".to_vec(), b"1".to_vec()];
    tokens.push(b",".to_vec());
    tokens.push(b"]".to_vec());
    tokens.extend((1..=40).map(|n| vec![b' '; n]));
    let refs: Vec<&[u8]> = tokens.iter().map(|t| t.as_slice()).collect();
    let v = Vocabulary::new(&refs, 0, &[]).unwrap();
    let naive = NaiveGrammarIndex::new(&g, &v, GrammarOptions::default()).unwrap();
    // no slices: their decisions step a few sets of their own (`tokensdfa_core::dfa`'s
    // run bounds), which is not what this counts
    let opts = LazyOptions {
        slices: false,
        ..LazyOptions::default()
    };
    let push = pushdown_index(&g, &v, opts, BUDGET).unwrap();
    for spaces in 5..45u32 {
        let path = [1, 2, spaces, 3, spaces, 2, 4];
        let (_, p) = walk_both(&naive, &push, &path);
        assert!(push.is_accepting(p));
    }
    let sets = push.stats().dfa_states;
    assert!(sets < 40, "{sets} sets for 40 lengths of whitespace");
}

/// A string whose characters are one-character terminals under a repetition, as GBNF
/// and EBNF grammars write it: the rule of a character is predicted at every byte, so
/// each kernel names the previous byte's set as an origin. Named by what they give back
/// (`pushdown`'s `Canon`), the sets inside the string recur: the reference's masks along
/// strings of every length, from a bounded number of sets.
#[test]
fn strings_of_one_character_terminals_reuse_their_sets() {
    let g = grammar(
        "array",
        &[
            ("array", "'[' items ']'"),
            ("items", "string | string ',' items"),
            ("string", "'\"' chars '\"'"),
            ("chars", "char chars |"),
            ("char", "CHAR | '\\' ESC"),
        ],
        &[("CHAR", r#"[^"\\]"#), ("ESC", r#"["\\n]"#)],
    );
    let mut tokens: Vec<Vec<u8>> = ["<eos>", "[", "]", ",", "\"", "\\", "n", "\",\""]
        .iter()
        .map(|t| t.as_bytes().to_vec())
        .collect();
    tokens.extend((1..=30).map(|n| vec![b'a'; n]));
    tokens.push("é".as_bytes().to_vec());
    // [" a..a \n é a..a "," a..a "]
    let paths = (8..38u32).map(|a| vec![1, 4, a, 5, 6, 38, a, 7, a, 4, 2]);
    let sets = sets_along(&g, &tokens, 4, paths);
    assert!(sets < 60, "{sets} sets for strings of 30 lengths");
}

/// The pushdown index of `schema` holds the reference's masks over its grammar `g`
/// (written as text) near the start and along `deep`, which it takes whole; the lazy
/// index of the bounded regex refuses `deep`.
fn past_the_regex_modes(schema: &str, g: &Grammar, deep: &str) {
    let d = Dialect::default();
    let (v, tokens) = json_vocab();
    let compared = lockstep(g, &v, 6);
    assert!(compared > 20, "{compared} states compared");
    let naive = NaiveGrammarIndex::new(g, &v, GrammarOptions::default()).unwrap();
    let push = schema_pushdown_index(schema, &d, &v, LazyOptions::default(), BUDGET).unwrap();
    let ids = greedy_tokens(deep.as_bytes(), &tokens);
    let (mut n, mut p) = (naive.initial_state(), push.initial_state());
    for (k, &t) in ids.iter().enumerate() {
        assert_eq!(push.allowed(p), naive.allowed(n).unwrap(), "{deep} at {k}");
        n = naive
            .next_state(n, t)
            .unwrap()
            .expect("the reference takes it");
        p = push.next_state(p, t).expect("the pushdown mode takes it");
    }
    assert!(push.is_accepting(p) && naive.is_accepting(n));
    let ast = tokensdfa_schema::compile_ast(schema, &d).unwrap();
    let bounded = tokensdfa_core::LazyIndex::from_ast(ast, &v, LazyOptions::default()).unwrap();
    let walked = ids
        .iter()
        .try_fold(bounded.initial_state(), |s, &t| bounded.next_state(s, t));
    assert!(walked.is_none_or(|s| !bounded.is_accepting(s)));
}

/// A schema whose members hold unconstrained values is a grammar, not a regex: near the
/// start and along a text nesting 14 levels (past the regex modes' `any_depth` of 2),
/// the pushdown index of the schema holds the reference's masks over the same grammar;
/// the lazy index of the bounded regex refuses that text, and a schema with no
/// unconstrained value stays regular.
#[test]
fn schemas_with_unconstrained_values_nest_without_bound() {
    let schema = r#"{"type":"object","properties":{"a":{"type":"array"},"b":{}},"required":["a"]}"#;
    let d = Dialect::default();
    let g = schema_language(schema, &d, Leaves::Text)
        .unwrap()
        .expect("a grammar");
    // the pushdown mode's own reading gives its terminals as trees, which only it reads
    let trees = schema_language(schema, &d, Leaves::Trees).unwrap().unwrap();
    assert!(trees.terminals.iter().all(|t| t.tree.is_some()));
    assert!(NaiveGrammarIndex::new(&trees, &json_vocab().0, GrammarOptions::default()).is_err());
    let deep = format!(
        "{{\"a\":[{}1{}],\"b\":{{}}}}",
        "[{\"a\":".repeat(7),
        "}]".repeat(7)
    );
    past_the_regex_modes(schema, &g, &deep);
    let plain =
        r#"{"type":"object","properties":{"a":{"type":"integer"}},"additionalProperties":false}"#;
    assert!(schema_language(plain, &d, Leaves::Trees).unwrap().is_none());
}

/// A recursive `$ref` is a rule of the pushdown mode's grammar, not expanded
/// `max_recursion` (3) times: along a tree nested 7 levels, the schema's pushdown index
/// holds the reference's masks over the grammar written as text, where the lazy index
/// of the bounded regex refuses the text. Recursion meeting an intersection or a
/// complement, which take no rule, is read expanded as before: regular under `allOf`,
/// refused under `not`.
#[test]
fn recursive_refs_are_rules_without_bound() {
    let schema = r##"{"$defs":{"node":{"type":"object","properties":{"a":{"type":"integer"},
        "b":{"type":"array","items":{"$ref":"#/$defs/node"}}},"required":["a"],
        "additionalProperties":false}},"$ref":"#/$defs/node"}"##;
    let d = Dialect::default();
    let g = schema_language(schema, &d, Leaves::Text)
        .unwrap()
        .expect("a grammar: the recursion is a rule");
    let deep = format!(
        "{}{{\"a\":1}}{}",
        "{\"a\":1,\"b\":[".repeat(7),
        "]}".repeat(7)
    );
    past_the_regex_modes(schema, &g, &deep);
    let merged = r##"{"$defs":{"n":{"type":"object","properties":{"k":{"allOf":[
        {"$ref":"#/$defs/n"},{"required":["k"]}]}},"additionalProperties":false}},
        "$ref":"#/$defs/n"}"##;
    assert!(schema_language(merged, &d, Leaves::Trees)
        .unwrap()
        .is_none());
    let negated = r##"{"$defs":{"n":{"type":"array","items":{"not":{"$ref":"#/$defs/n"}}}},
        "$ref":"#/$defs/n"}"##;
    // the expanded reading's own refusal: a cut under `not` would admit too much
    let err = schema_language(negated, &d, Leaves::Trees).unwrap_err();
    assert!(format!("{err:?}").contains("unbounded depth"), "{err:?}");
}
