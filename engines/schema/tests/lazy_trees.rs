//! Trees compiled straight from schemas ([`compile_ast`]) against the naive index on
//! their printed regexes: the same masks, acceptance and moves on every reachable state,
//! their own size limits, and pruned masks on key positions.

use tokensdfa_core::{LazyIndex, LazyOptions};
use tokensdfa_schema::{compile, compile_ast, Dialect, Escapes, Keys};

// The lazy index's fixtures (vocabularies, the lockstep walk against the naive index),
// shared with the core's tests.
#[path = "../../core/tests/common/mod.rs"]
mod index_common;
use index_common::{assert_same, options, vocab, wordy_vocab, WORDS};

/// A schema compiled straight into the lazy index's tree (`schema::compile_ast`) is the
/// index of its printed regex: same masks, acceptance and moves as the naive index on
/// that regex, on every reachable state (shared subtrees, recursion, Unicode sets that
/// must leave out the surrogates, escapes in several dialects).
#[test]
fn schema_trees_match_naive_on_their_printed_regex() {
    let tokens: Vec<Vec<u8>> = [
        "{", "}", "[", "]", "\"", ":", ",", "a", "b", "1", "-", "0", ".", "\\", "u", "n", "e", "é",
        "\u{7f}", "\"a\":", "null", "true", "00", "7f", "d8", "\\u", " ", "\u{fffd}",
    ]
    .iter()
    .map(|t| t.as_bytes().to_vec())
    .chain([vec![0xED, 0xA0, 0x80]]) // a UTF-8-encoded surrogate: no string holds it
    .collect();
    let v = vocab(&tokens);
    let minimal = Dialect {
        escapes: Escapes::Minimal,
        keys: Keys::Canonical,
        ..Dialect::default()
    };
    let shallow = Dialect {
        any_depth: 1,
        ..Dialect::default()
    };
    // the text of a long length-bounded product nests deep
    let deep = Dialect {
        max_nesting: 10_000,
        ..Dialect::default()
    };
    let cases = [
        (
            Dialect::default(),
            r#"{"type":"object","properties":{"a":{"type":"integer","minimum":-3},"b":{"type":"string","maxLength":2}},"required":["a"]}"#,
        ),
        (shallow, "{}"),
        (
            Dialect::default(),
            r#"{"type":"string","pattern":"^[é1]+$"}"#,
        ),
        (
            Dialect::default(),
            r##"{"$defs":{"n":{"type":"array","items":{"$ref":"#/$defs/n"},"maxItems":2}},"$ref":"#/$defs/n"}"##,
        ),
        (
            minimal,
            r#"{"type":"object","properties":{"a":{"enum":["a\u007f",1,null]}}}"#,
        ),
        // a set that starts inside the surrogates: only its scalars are characters
        (
            Dialect::default(),
            r#"{"type":"string","pattern":"^[^\\u0000-\\uD7FF]$"}"#,
        ),
        // a pattern within a length bound: a product of 41 states, a regex in the text and
        // an automaton in the tree (past its 64 states when the bound is 70)
        (
            Dialect::default(),
            r#"{"type":"string","pattern":"^[ab1]+$","maxLength":40}"#,
        ),
        (
            deep.clone(),
            r#"{"type":"string","pattern":"^[ab1]+$","maxLength":70}"#,
        ),
        (
            deep.clone(),
            r#"{"type":"array","items":{"type":"string","pattern":"^[ab]*1[ab1]*$","minLength":3,"maxLength":70}}"#,
        ),
        // uniqueItems over enumerated values: an automaton over the sets of values in the
        // tree, its written regex in the text; values compare as JSON values (1 and 1.0)
        (
            Dialect::default(),
            r#"{"type":"array","items":{"enum":["a","b",1,null,true]},"uniqueItems":true,"maxItems":4}"#,
        ),
        (
            Dialect::default(),
            r#"{"type":"object","properties":{"a":{"type":"array","prefixItems":[{"enum":[1,"b"]}],"items":{"enum":[1.0,"a","b"]},"uniqueItems":true,"minItems":2}}}"#,
        ),
    ];
    for (dialect, schema) in cases {
        let printed = compile(schema, &dialect).unwrap();
        let tree = compile_ast(schema, &dialect).unwrap();
        let lazy = LazyIndex::from_ast(tree, &v, LazyOptions::default()).unwrap();
        assert_same(&printed, &v, &lazy);
    }
}

/// A tree has its own limits, not the printed text's length or nesting: a
/// schema that shares one definition in many places is refused as text under a tight
/// `max_regex_len` (and `max_nesting`), and compiled as a tree whose language is the
/// regex printed without those limits; a tree that passes its own limits (distinct
/// nodes, and the text it stands for) is refused naming them.
#[test]
fn schema_trees_have_their_own_limits_not_the_texts() {
    let v = vocab(
        &[
            "{", "}", "\"", ":", ",", "a", "b", "x", "1", "0", "null", "\"a\":", "\"b\":",
        ]
        .iter()
        .map(|t| t.as_bytes().to_vec())
        .collect::<Vec<_>>(),
    );
    let schema = r##"{"$defs":{"p":{"type":"object","properties":{"a":{"type":"integer"},"b":{"enum":["x",null]}}},
        "q":{"type":"object","properties":{"a":{"$ref":"#/$defs/p"},"b":{"$ref":"#/$defs/p"}}},
        "r":{"type":"object","properties":{"a":{"$ref":"#/$defs/q"},"b":{"$ref":"#/$defs/q"}}}},
        "$ref":"#/$defs/r"}"##;
    let roomy = Dialect::default();
    let printed = compile(schema, &roomy).unwrap();
    let tight = Dialect {
        max_regex_len: printed.len() / 3,
        max_nesting: 2,
        ..Dialect::default()
    };
    let refused = compile(schema, &tight).unwrap_err().to_string();
    assert!(refused.contains("bytes long"), "{refused}");
    let tree = compile_ast(schema, &tight).unwrap();
    assert!(tree.nodes.len() * 3 < printed.len(), "{}", tree.nodes.len());
    let lazy = LazyIndex::from_ast(tree, &v, LazyOptions::default()).unwrap();
    assert_same(&printed, &v, &lazy);
    let few = Dialect {
        max_tree_nodes: 8,
        ..tight
    };
    let refused = compile_ast(schema, &few).err().unwrap().to_string();
    assert!(refused.contains("tree would have"), "{refused}");
    let short = Dialect {
        max_tree_text_len: printed.len() - 1,
        ..tight
    };
    let refused = compile_ast(schema, &short).err().unwrap().to_string();
    assert!(refused.contains("stands for"), "{refused}");
}

/// A key position beside any other key (every string of letters stays alive, but only a
/// search through every declared key's prefixes proves it) is pruned: started from every
/// slice token, kept whole below the states whose run bounds vouch for them, and equal
/// to the naive index's mask.
#[test]
fn pruned_masks_keep_what_run_bounds_vouch_for() {
    let v = wordy_vocab(&WORDS);
    let props: Vec<String> = WORDS
        .iter()
        .map(|w| format!("\"{w}\":{{\"type\":\"integer\"}}"))
        .collect();
    let schema = format!(
        "{{\"type\":\"object\",\"properties\":{{{}}}}}",
        props.join(",")
    );
    let dialect = Dialect::default();
    let printed = compile(&schema, &dialect).unwrap();
    let lazy =
        LazyIndex::from_ast(compile_ast(&schema, &dialect).unwrap(), &v, options(true)).unwrap();
    assert_same(&printed, &v, &lazy);
    let s = lazy.stats();
    assert!(s.pruned_masks >= 1 && s.kept_subtrees >= 1, "{s:?}");
}
