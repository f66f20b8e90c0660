//! The pushdown mode's slices on JSON schemas, where its Earley sets give run bounds of
//! their own (`Recognizer::run_lower`, read off each item's terminal): at a key beside
//! many declared keys, whose other keys are one terminal however long, and inside a
//! string with `maxLength`, the vocabulary's string slices are taken whole and only the
//! tokens outside them are walked, with every mask the reference's.

mod pushdown_support;

use pushdown_support::{walk_both, BUDGET};
use tokensdfa_core::{LazyIndex, LazyOptions, TokenAutomaton, Vocabulary};
use tokensdfa_grammar::{
    schema_language, schema_pushdown_index, GrammarOptions, Leaves, NaiveGrammarIndex,
};
use tokensdfa_schema::Dialect;

/// Forty declared keys of 30 characters: their complement prints far past the grammar
/// mode's cut of 8 KB.
fn keys() -> Vec<String> {
    (0..40)
        .map(|i| format!("declared_key_number_{i:02}_abcdef"))
        .collect()
}

/// An object of the forty keys, each of `value`, and a string of at most 300 characters.
fn object(value: &str) -> String {
    let props: Vec<String> = keys().iter().map(|k| format!(r#""{k}":{value}"#)).collect();
    format!(
        r#"{{"type":"object","properties":{{{},"version":{{"type":"string","maxLength":300}}}}}}"#,
        props.join(",")
    )
}

fn schema() -> String {
    object(r#"{"type":"integer"}"#)
}

/// Tokens of every length class the slices tell apart (single characters, pairs, words,
/// runs of 13, 20 and 30 letters), JSON's punctuation, and pieces of the keys.
fn vocab() -> (Vocabulary, Vec<Vec<u8>>) {
    let mut tokens: Vec<Vec<u8>> = vec![b"<eos>".to_vec()];
    tokens.extend((0x20u8..0x7F).map(|b| vec![b]));
    for a in b'a'..=b'z' {
        for b in [b'a', b'e', b'k', b'r', b'y', b'_'] {
            tokens.push(vec![a, b]);
        }
    }
    for t in [
        "{\"",
        "\":",
        "\",\"",
        "\"}",
        "\":\"",
        ",\"",
        "declared",
        "_key",
        "_number",
        "_ab",
        "cdef",
        "version",
        "abcdefghijklm",
        "abcdefghijklmnopqrst",
        "abcdefghijklmnopqrstuvwxyzabcd",
        "é",
        "\\n",
        "\\\"",
    ] {
        tokens.push(t.as_bytes().to_vec());
    }
    let refs: Vec<&[u8]> = tokens.iter().map(|t| t.as_slice()).collect();
    (Vocabulary::new(&refs, 0, &[]).unwrap(), tokens)
}

/// The ids of `text` read greedily, longest token first.
fn tokenize(text: &str, tokens: &[Vec<u8>]) -> Vec<u32> {
    let mut out = Vec::new();
    let mut rest = text.as_bytes();
    while !rest.is_empty() {
        let (id, len) = (tokens.iter().enumerate().skip(1))
            .filter(|(_, t)| rest.starts_with(t))
            .map(|(i, t)| (i as u32, t.len()))
            .max_by_key(|&(_, len)| len)
            .expect("a token for every byte");
        out.push(id);
        rest = &rest[len..];
    }
    out
}

/// Trie nodes the mask of `state` walked when first computed, and whether the slices
/// were decided by run bounds.
fn first_mask_cost(push: &LazyIndex, state: u32) -> (u64, bool) {
    let before = push.stats();
    push.allowed(state);
    let after = push.stats();
    (
        after.nodes_visited - before.nodes_visited,
        after.run_verdicts > before.run_verdicts,
    )
}

#[test]
fn other_keys_are_one_terminal_however_long() {
    let d = Dialect::default();
    let g = schema_language(&schema(), &d, Leaves::Text)
        .unwrap()
        .expect("a grammar");
    let longest = g.terminals.iter().map(|t| t.regex.len()).max().unwrap();
    assert!(
        longest > 8192,
        "the other keys were cut ({longest} bytes at most)"
    );
}

/// At `{"` (a key: one of forty, or any other; the dialect writes declared keys in the
/// schema's order, others last) and inside the `maxLength` string, the
/// slices are taken whole on the sets' run bounds, and the walk meets only the tokens
/// outside them; every mask along an instance is the reference's.
#[test]
fn keys_and_bounded_strings_take_their_slices_whole() {
    let d = Dialect::default();
    let (v, tokens) = vocab();
    let text = format!(
        r#"{{"{}":1,"version":"abcdefghijklmnopqrstuvwxyzabcd","other_abcdefghijklmnopqrst":{{"x":[1]}}}}"#,
        keys()[7]
    );
    let ids = tokenize(&text, &tokens);
    let g = schema_language(&schema(), &d, Leaves::Text)
        .unwrap()
        .unwrap();
    let naive = NaiveGrammarIndex::new(&g, &v, GrammarOptions::default()).unwrap();
    let push = schema_pushdown_index(&schema(), &d, &v, LazyOptions::default(), BUDGET).unwrap();
    let (_, at_key) = walk_both(&naive, &push, &ids[..1]);
    assert_eq!(tokens[ids[0] as usize], b"{\"");
    let (walked, by_runs) = first_mask_cost(&push, at_key);
    assert!(by_runs, "no run bounds at the key");
    assert!(
        walked < v.len() as u64 / 4,
        "{walked} nodes walked at the key"
    );
    let quote = text.find("abcdefghijklmnopqrstuvwxyzabcd").unwrap(); // "version":"
    let into = tokenize(&text[..quote], &tokens).len();
    assert_eq!(&tokenize(&text[..quote], &tokens)[..], &ids[..into]);
    let (_, in_string) = walk_both(&naive, &push, &ids[..into]);
    let (walked, by_runs) = first_mask_cost(&push, in_string);
    assert!(by_runs, "no run bounds in the string");
    assert!(
        walked < v.len() as u64 / 4,
        "{walked} nodes walked in the string"
    );
    let (n, p) = walk_both(&naive, &push, &ids);
    assert!(naive.is_accepting(n) && push.is_accepting(p));
    assert!(!push.exceeded());
}

/// Six objects, each with its own forty keys and so its own other keys as one terminal:
/// each grouped terminal is its own language (the trees' builder knows nodes by address,
/// and a group dropped early lent its address to a later one, which then read as the
/// first: on a MaskBench schema a mask differed from the reference's in some runs).
#[test]
fn each_object_keeps_its_own_key_terminal() {
    let d = Dialect::default();
    let (v, tokens) = vocab();
    let objects: Vec<String> = (0..6)
        .map(|i| object(r#"{"type":"boolean"}"#).replace("declared_", &format!("o{i}_")))
        .collect();
    let props: Vec<String> = (0..6)
        .map(|i| format!(r#""p{i}":{}"#, objects[i]))
        .collect();
    let schema = format!(
        r#"{{"type":"object","properties":{{{}}}}}"#,
        props.join(",")
    );
    let members: Vec<String> = (0..6)
        .map(|i| format!(r#""p{i}":{{"other_ab":1,"o{i}_xy":true}}"#))
        .collect();
    let text = format!("{{{}}}", members.join(","));
    let ids = tokenize(&text, &tokens);
    let g = schema_language(&schema, &d, Leaves::Text).unwrap().unwrap();
    let naive = NaiveGrammarIndex::new(&g, &v, GrammarOptions::default()).unwrap();
    let push = schema_pushdown_index(&schema, &d, &v, LazyOptions::default(), BUDGET).unwrap();
    let (n, p) = walk_both(&naive, &push, &ids);
    assert!(naive.is_accepting(n) && push.is_accepting(p));
}
