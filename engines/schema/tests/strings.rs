//! Full-match checks of compiled regexes: strings (lengths in characters, escapes and
//! key spellings, ECMA-262 patterns, formats, length bounds as counted automata).

mod common;

use common::{check, check_in, refused, Tree};
use tokensdfa_schema::{compile, Dialect, Escapes, Keys, SchemaError};

#[test]
fn strings_count_characters_not_escapes() {
    let s = r#"{"type":"string","minLength":2,"maxLength":3}"#;
    check(
        s,
        &["\"ab\"", "\"a\\nb\"", "\"\\u00e9\\u00e9\"", "\"😀😀\""],
        &["\"a\"", "\"abcd\"", "\"\\u00e\""],
    );
    let required = Dialect {
        escapes: Escapes::Required,
        ..Dialect::default()
    };
    check_in(
        &required,
        s,
        &["\"a\\\"\"", "\"é/\""],
        &["\"\\/a\"", "\"\\u0041b\""],
    );
}

#[test]
fn llguidance_spelling_escapes_only_what_must_be_and_del() {
    let minimal = Dialect {
        escapes: Escapes::Minimal,
        ..Dialect::default()
    };
    check_in(
        &minimal,
        r#"{"type":"string","maxLength":2}"#,
        &[
            "\"a\\\"\"",
            "\"\\\\\"",
            "\"\\n\\u000a\"",
            "\"\\u007F\"",
            "\"é/\"",
        ],
        &[
            "\"\u{7f}\"",
            "\"\\u0022\"",
            "\"\\u005c\"",
            "\"\\/\"",
            "\"\\u0041\"",
        ],
    );
    check_in(
        &minimal,
        r#"{"enum":["a\u007f\"b"]}"#,
        &["\"a\\u007f\\\"b\""],
        &["\"a\u{7f}\\\"b\"", "\"a\\u007f\\u0022b\""],
    );
}

#[test]
fn escapes_only_in_free_strings() {
    let d = Dialect {
        escapes: Escapes::FreeStringsOnly,
        ..Dialect::default()
    };
    let s = r#"{"type":"object","properties":{"free":{"type":"string"},"short":{"type":"string","maxLength":2}},"required":["free","short"],"additionalProperties":false}"#;
    check_in(
        &d,
        s,
        &["{\"free\":\"\\u0041\\n\",\"short\":\"ab\"}"],
        &[
            "{\"free\":\"a\",\"short\":\"\\n\"}",
            "{\"free\":\"a\",\"short\":\"\\u0061\"}",
        ],
    );
    // keys limited by a key language are constrained strings too (as xgrammar 0.2.8
    // reads them); keys left free take every escape
    let patterned = r#"{"type":"object","patternProperties":{"^[a-z]+$":{"type":"integer"}},"additionalProperties":false}"#;
    check_in(&d, patterned, &[r#"{"ab":1}"#], &[r#"{"\u0061b":1}"#]);
    let named = r#"{"type":"object","propertyNames":{"pattern":"^[a-z]+$"}}"#;
    check_in(&d, named, &[r#"{"ab":1}"#], &[r#"{"\u0061b":1}"#]);
    let free = r#"{"type":"object","properties":{"x":{"type":"integer"}},"additionalProperties":{"type":"integer"}}"#;
    check_in(&d, free, &[r#"{"\u0061b":1}"#, r#"{"x":1,"a\tb":2}"#], &[]);
}

#[test]
fn listed_strings_take_one_spelling_where_constrained_strings_take_no_escape() {
    // xgrammar 0.2.8 writes an `enum` or `const` string as a JSON literal: `"` `\` and
    // `\b \f \n \r \t` short, other control characters and U+007F as `\u00xx`, the rest
    // raw; these values were once left out, as raw strings that cannot hold them
    let d = Dialect {
        escapes: Escapes::FreeStringsOnly,
        ..Dialect::default()
    };
    let s = r#"{"type":"object","properties":{"k":{"type":"string"},
        "e":{"enum":["\"\"\"\nx","b\\c","t\t\u0001\u001f\u007f/é😀",3]},
        "c":{"const":"q\"\b"}},"required":["k","e","c"]}"#;
    let text = |e: &str, c: &str| format!(r#"{{"k":"","e":{e},"c":{c}}}"#);
    let c = r#""q\"\b""#;
    let good = [
        text(r#""\"\"\"\nx""#, c),
        text(r#""b\\c""#, c),
        text("\"t\\t\\u0001\\u001f\\u007f/é😀\"", c),
        text("3", c),
    ];
    let bad = [
        text(r#""\u0022\"\"\nx""#, c),
        text(r#""\"\"\"\u000ax""#, c),
        text("\"\"\"\"\nx\"", c),
        text(r#""b\u005cc""#, c),
        text("\"t\\u0009\\u0001\\u001f\\u007f/é😀\"", c),
        text("\"t\\t\\u0001\\u001F\\u007f/é😀\"", c),
        text("\"t\\t\\u0001\\u001f\\u007F/é😀\"", c),
        text("\"t\\t\\u0001\\u001f\u{7f}/é😀\"", c),
        text("\"t\\t\\u0001\\u001f\\u007f\\/é😀\"", c),
        text("\"t\\t\\u0001\\u001f\\u007f/\\u00e9😀\"", c),
        text(r#""b\\c""#, r#""q\"\u0008""#),
    ];
    let good: Vec<&str> = good.iter().map(String::as_str).collect();
    let bad: Vec<&str> = bad.iter().map(String::as_str).collect();
    check_in(&d, s, &good, &bad);
    let tree = Tree::new(s, &d).unwrap();
    assert!(good.iter().all(|t| tree.accepts(t)) && !bad.iter().any(|t| tree.accepts(t)));
    // the other constraints still choose among the listed values
    let short = r#"{"type":"string","enum":["a\"","\n"],"maxLength":1}"#;
    check_in(&d, short, &[r#""\n""#], &[r#""a\"""#, r#""\u000a""#]);
}

#[test]
fn listed_strings_without_escapes_are_refused_where_the_dialect_writes_none() {
    let raw = Dialect {
        escapes: Escapes::Raw,
        ..Dialect::default()
    };
    let at = |schema: &str, d: &Dialect| match compile(schema, d).expect_err(schema) {
        SchemaError::Unsupported {
            keyword, pointer, ..
        } => (keyword, pointer),
        e => panic!("{schema}: {e}"),
    };
    let listed = r#"{"properties":{"e":{"enum":["a","b\"c"]}}}"#;
    assert_eq!(at(listed, &raw), ("enum".into(), "/properties/e".into()));
    let key = r#"{"items":{"const":[{"k\n":1}]}}"#;
    assert_eq!(at(key, &raw), ("const".into(), "/items".into()));
    let canonical = Dialect {
        keys: Keys::Canonical,
        ..raw.clone()
    };
    check_in(&canonical, key, &[r#"[[{"k\n":1}]]"#], &["[[{\"k\n\":1}]]"]);
    check_in(
        &raw,
        r#"{"enum":["a/é\u007f",1]}"#,
        &["\"a/é\u{7f}\"", "1"],
        &[],
    );
}

#[test]
fn undeclared_keys_may_take_their_own_escapes() {
    let d = Dialect {
        escapes: Escapes::Minimal,
        undeclared_keys: Some(Escapes::MinimalUnicode),
        ..Dialect::default()
    };
    let s = r#"{"type":"object","properties":{"a":{"type":"integer"}}}"#;
    check_in(
        &d,
        s,
        &[
            r#"{"\u0062":"\n"}"#,
            r#"{"a":1,"\ud83d\ude00":2}"#,
            r#"{"\n":1}"#,
        ],
        // an escaped spelling of a declared key is that key, not an undeclared one
        &[
            r#"{"\u0061":"x"}"#,
            r#"{"x\/":1}"#,
            "{\"\u{7f}\":1}",
            r#"{"b":"\u0041"}"#,
        ],
    );
    // an object that declares no key spells its keys as other strings
    check_in(
        &d,
        r#"{"type":"object"}"#,
        &[r#"{"\n":1}"#],
        &[r#"{"\u0062":1}"#],
    );
}

#[test]
fn canonical_keys_have_one_spelling() {
    let d = Dialect {
        keys: Keys::Canonical,
        ..Dialect::default()
    };
    check_in(
        &d,
        r#"{"type":"object","properties":{"é\n":{"type":"string"}},"required":["é\n"],"additionalProperties":false}"#,
        &["{\"é\\n\":\"\\u00e9\"}"],
        &["{\"\\u00e9\\n\":\"x\"}", "{\"é\\u000a\":\"x\"}"],
    );
}

#[test]
fn patterns_are_ecma_and_unanchored() {
    check(
        r#"{"type":"string","pattern":"^[a-z]+\\d$"}"#,
        &["\"ab1\""],
        &["\"ab\"", "\"Ab1\"", "\"ab١\""],
    );
    check(
        r#"{"type":"string","pattern":"x+"}"#,
        &["\"axxb\"", "\"x\""],
        &["\"ab\""],
    );
    check(
        r#"{"type":"string","pattern":"^a","maxLength":2}"#,
        &["\"a\"", "\"ab\""],
        &["\"abc\"", "\"ba\""],
    );
    assert_eq!(
        refused(r#"{"pattern":"(a)\\1"}"#).keyword(),
        Some("pattern")
    );
}

#[test]
fn formats_have_real_grammars() {
    check(
        r#"{"format":"date","type":"string"}"#,
        &["\"2024-02-29\""],
        &["\"2023-02-29\"", "\"2024-13-01\""],
    );
    check(
        r#"{"format":"uuid","type":"string"}"#,
        &["\"123e4567-e89b-12d3-a456-426614174000\""],
        &["\"123e4567\""],
    );
    check(
        r#"{"format":"ipv4","type":"string"}"#,
        &["\"10.0.0.255\""],
        &["\"10.0.0.256\""],
    );
    check(
        r#"{"format":"ipv6","type":"string"}"#,
        &["\"::1\"", "\"fe80::1\""],
        &["\"1::2::3\""],
    );
    check(
        r#"{"format":"date-time","type":"string"}"#,
        &["\"2020-01-01T00:00:00Z\""],
        &["\"2020-01-01 00:00:00\""],
    );
    check(
        r#"{"format":"email","type":"string"}"#,
        &["\"a.b@c.org\""],
        &["\"a..b@c.org\"", "\"abc\""],
    );
    check(
        r#"{"format":"uri","type":"string"}"#,
        &["\"https://x.org/a?b#c\""],
        &["\"no scheme\""],
    );
    assert_eq!(
        refused(r#"{"format":"idn-hostname"}"#).keyword(),
        Some("format")
    );
}

/// A format is asserted only by the drafts that define it; elsewhere it is an unknown
/// format, which that draft's validators ignore (`date` came with draft-07, `uuid`
/// with 2019-09, so a draft-04 `date` or a draft-07 `uuid` constrains nothing).
#[test]
fn formats_are_asserted_by_the_drafts_that_define_them() {
    let under = |draft: &str, format: &str| {
        format!(r#"{{"$schema":"{draft}","type":"string","format":"{format}"}}"#)
    };
    let d4 = "http://json-schema.org/draft-04/schema#";
    let d7 = "http://json-schema.org/draft-07/schema#";
    let d2019 = "https://json-schema.org/draft/2019-09/schema";
    check(
        &under(d4, "date"),
        &["\"Invalid Date\"", "\"2019-12-31\""],
        &["1"],
    );
    check(&under(d7, "date"), &["\"2019-12-31\""], &["\"2019-12-32\""]);
    check(&under(d7, "uuid"), &["\"not-a-uuid\""], &[]);
    let uuid = "\"123e4567-e89b-12d3-a456-426614174000\"";
    check(&under(d2019, "uuid"), &[uuid], &["\"not-a-uuid\""]);
    check(
        &under(d4, "date-time"),
        &["\"2019-12-31T00:00:00Z\""],
        &["\"2019-12-31\""],
    );
    // `regex` counts in every draft (jsonschema checks it in every draft): refused
    assert_eq!(refused(&under(d4, "regex")).keyword(), Some("format"));
    assert_eq!(refused(&under(d7, "regex")).keyword(), Some("format"));
}

/// A pattern or format beside a length bound whose product is too large to print (an
/// e-mail address of at most 1,024 characters, a URI of at most 65,536, the words of
/// MaskBench's GOV.UK schemas) is served by the tree as a counted automaton, exactly:
/// the bounds count decoded characters, an escape or a multi-byte character as one.
/// The regex text refuses it, saying why.
#[test]
fn a_pattern_beside_a_large_length_bound_is_a_counted_automaton() {
    let email = r#"{"type":"string","format":"email","maxLength":1024}"#;
    let err = common::compile_err(email);
    assert!(err.contains("automaton"), "{err}");
    let at = |n: usize, tail: &str| format!("\"{}@ex.com{tail}\"", "a".repeat(n));
    common::check_tree(
        email,
        &[&at(1, ""), &at(1017, "")],
        &[&at(1018, ""), "\"a\""],
    );
    let words = r#"{"type":"string","pattern":"^(?:\\S+\\s+){0,49}\\S+$","maxLength":500}"#;
    let text = |k: usize, word: &str, sep: &str| format!("\"{}\"", vec![word; k].join(sep));
    common::check_tree(
        words,
        &[
            &text(50, "\\u00e9xxxxxxxx", " "),
            &text(50, "éxxxxxxxx", "\\n"),
            &text(50, "xxxxxxxx", "\\t"),
        ],
        &[
            &text(50, "\\u00e9xxxxxxxxx", " "),
            &text(51, "x", " "),
            &text(50, "xxxxxxxxx", "\\t\\t"),
        ],
    );
    let uri = r#"{"type":"string","format":"uri","minLength":600}"#;
    let long = |n: usize| format!("\"http://e.com/{}\"", "a".repeat(n - 13));
    common::check_tree(uri, &[&long(600), &long(5000)], &[&long(599), "\"x\""]);
}

/// A pattern that admits every string leaves the length alone: `([A-Z]+)?` unanchored
/// is found in any string, so `maxLength: 4096` is a counted repetition, not 4,097
/// automaton states.
#[test]
fn a_pattern_every_string_contains_leaves_the_length_alone() {
    check(
        r#"{"type":"string","pattern":"([A-Z]+)?","maxLength":4096}"#,
        &["\"\"", "\"abc\"", &format!("\"{}\"", "x".repeat(4096))],
        &[&format!("\"{}\"", "x".repeat(4097))],
    );
}

/// `hostname` is RFC 1123's: labels of at most 63 characters, at most 253 in all (a
/// bound the string's length counter holds, so the whole is a counted automaton, not a
/// product of thousands of states), less the labels RFC 5890 reserves (`--` in the 3rd
/// and 4th characters, where IDNA's A-labels live: a documented restriction). A
/// `maxLength` below 253 tightens it; `not` admits a well-formed name that is too long.
#[test]
fn hostnames_are_rfc_1123_labels_within_253_characters() {
    let host = r#"{"type":"string","format":"hostname"}"#;
    let q = |s: &str| format!("\"{s}\"");
    let label = |c: char, n: usize| c.to_string().repeat(n);
    // 4 labels of 63 and a dot between: 255 characters; 61 in the last: 253
    let names = |last: usize| {
        let mut v = vec![label('a', 63); 3];
        v.push(label('b', last));
        v.join(".")
    };
    assert_eq!(names(61).len(), 253);
    common::check_tree(
        host,
        &[
            &q("www.example.com"),
            &q("1host"),
            &q("a--b.com"),
            &q("A-0.b-c"),
            &q(&names(61)),
            &q(&format!("{}.com", label('a', 63))),
        ],
        &[
            &q(""),
            &q("."),
            &q("example."),
            &q(".example"),
            &q("-a.com"),
            &q("a-.com"),
            &q("host_name"),
            &q("xn--9n2bp8q"),
            &q("ab--c.com"),
            &q(&names(62)),
            &q(&format!("{}.com", label('a', 64))),
            "1",
        ],
    );
    let short = r#"{"type":"string","format":"hostname","maxLength":5}"#;
    common::check_tree(short, &[&q("a.b.c")], &[&q("a.b.cd")]);
    let not = r#"{"type":"string","not":{"format":"hostname"}}"#;
    common::check_tree(
        not,
        &[&q(&names(62)), &q("xn--9n2bp8q"), &q("a_b")],
        &[&q(&names(61)), &q("a.b")],
    );
}
