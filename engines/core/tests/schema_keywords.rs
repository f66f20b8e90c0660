//! Keyword-by-keyword full-match checks of compiled regexes.

#[path = "schema_common/mod.rs"]
mod common;

use tokensdfa_core::schema::{
    compile, Dialect, Draft, Escapes, Keys, NegativeZero, Numbers, SchemaError, Whitespace,
};

fn check_in(d: &Dialect, schema: &str, good: &[&str], bad: &[&str]) {
    let re = compile(schema, d).unwrap_or_else(|e| panic!("{schema}: {e}"));
    let m = common::matcher(&re).unwrap();
    for t in good {
        assert!(m.is_match(*t), "{schema} should accept {t}\n{re}");
    }
    for t in bad {
        assert!(!m.is_match(*t), "{schema} should reject {t}\n{re}");
    }
}

fn check(schema: &str, good: &[&str], bad: &[&str]) {
    check_in(&Dialect::default(), schema, good, bad);
}

fn refused(schema: &str) -> SchemaError {
    compile(schema, &Dialect::default()).expect_err(schema)
}

#[test]
fn types_and_type_lists() {
    check(r#"{"type":"null"}"#, &["null"], &["nul", "0", "\"\""]);
    check(
        r#"{"type":["integer","string"]}"#,
        &["1", "-0", "2.0", "\"x\""],
        &["1.5", "null", "[]"],
    );
    check(r#"{"type":"boolean"}"#, &["true", "false"], &["1"]);
    check("true", &["1", "{\"a\":[null]}"], &["", "nul"]);
    check("false", &[], &["1", "null", ""]);
}

#[test]
fn enum_and_const_take_any_values() {
    check(
        r#"{"enum":[1,"a",[1,{"b":null}],{"x":true}]}"#,
        &[
            "1",
            "1.0",
            "\"a\"",
            "\"\\u0061\"",
            "[1,{\"b\":null}]",
            "{\"x\":true}",
        ],
        &["2", "\"b\"", "[1]", "{\"x\":false}", "{}"],
    );
    check(
        r#"{"const":0.5,"type":"number"}"#,
        &["0.5", "0.50"],
        &["0.6", "-0.5", "5e-1"],
    );
    check(
        r#"{"enum":["a","b"],"minLength":2}"#,
        &[],
        &["\"a\"", "\"b\""],
    );
}

#[test]
fn integer_bounds_are_exact_at_any_size() {
    let s = r#"{"type":"integer","minimum":-12,"exclusiveMaximum":123456789012345678901234567890}"#;
    check(
        s,
        &["-12", "0", "123456789012345678901234567889", "7.000"],
        &["-13", "123456789012345678901234567890", "1.5"],
    );
    check(
        r#"{"type":"number","exclusiveMinimum":1.5,"maximum":2}"#,
        &["1.51", "2", "2.000", "1.5000001"],
        &["1.5", "2.01", "1"],
    );
}

#[test]
fn multiple_of_small_steps() {
    check(
        r#"{"type":"integer","multipleOf":3,"minimum":0,"maximum":20}"#,
        &["0", "3", "18"],
        &["2", "21", "-3"],
    );
    check(
        r#"{"type":"number","multipleOf":0.25}"#,
        &["1.25", "-0.5", "3"],
        &["0.1", "1.255"],
    );
}

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
fn exponents_only_on_unbounded_numbers_and_integers_without_fraction() {
    let engines = Dialect {
        numbers: Numbers::ExponentWhenUnbounded,
        integers_without_fraction: true,
        ..Dialect::default()
    };
    check_in(
        &engines,
        r#"{"type":"number"}"#,
        &["1e5", "-2.5E-3", "0"],
        &["1e"],
    );
    check_in(
        &engines,
        r#"{"type":"number","minimum":0}"#,
        &["1.5", "0"],
        &["1e5", "-1"],
    );
    check_in(
        &engines,
        r#"{"type":"integer","minimum":-3}"#,
        &["-3", "-0", "12"],
        &["3.0", "1e2", "-4"],
    );
    let llguidance = Dialect {
        negative_zero: NegativeZero::UnboundedOnly,
        ..engines.clone()
    };
    check_in(
        &llguidance,
        r#"{"type":"number"}"#,
        &["-0", "-0.0", "-0e1"],
        &[],
    );
    check_in(&llguidance, r#"{"type":"integer"}"#, &["-0"], &[]);
    for bounded in [
        r#"{"type":"number","minimum":0,"maximum":1}"#,
        r#"{"type":"number","minimum":-5}"#,
        r#"{"type":"integer","maximum":3}"#,
    ] {
        check_in(&llguidance, bounded, &["0"], &["-0", "-0.0", "-0.00"]);
    }
    check_in(
        &llguidance,
        r#"{"type":"number","minimum":-5}"#,
        &["-0.5", "-5"],
        &[],
    );
    let xgrammar = Dialect {
        negative_zero: NegativeZero::WithFractionWhenBounded,
        ..engines
    };
    check_in(&xgrammar, r#"{"type":"number"}"#, &["-0", "-0.0"], &[]);
    check_in(&xgrammar, r#"{"type":"integer"}"#, &["0"], &["-0"]);
    check_in(
        &xgrammar,
        r#"{"type":"number","maximum":0}"#,
        &["-0.0", "0", "-0.5"],
        &["-0"],
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
        refused(r#"{"format":"hostname"}"#).keyword(),
        Some("format")
    );
}

#[test]
fn objects_follow_schema_order() {
    let s = r#"{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"string"},"c":{"type":"null"}},"required":["b"],"additionalProperties":false}"#;
    check(
        s,
        &[
            "{\"b\":\"x\"}",
            "{\"a\":1,\"b\":\"x\",\"c\":null}",
            "{\"b\":\"\",\"c\":null}",
        ],
        &[
            "{}",
            "{\"a\":1}",
            "{\"b\":\"x\",\"a\":1}",
            "{\"b\":\"x\",\"d\":1}",
            "{\"a\":1,,\"b\":\"x\"}",
        ],
    );
    let open = r#"{"properties":{"a":{"type":"integer"}},"additionalProperties":{"type":"boolean"},"type":"object"}"#;
    check(
        open,
        &["{}", "{\"a\":1,\"z\":true}", "{\"z\":false,\"y\":true}"],
        &["{\"a\":true}", "{\"z\":1}", "{\"z\":true,\"a\":1}"],
    );
}

#[test]
fn optional_required_and_undeclared_members_combine() {
    let s = r#"{"type":"object","properties":{"a":{"type":"null"},"b":{"type":"null"},"c":{"type":"null"}},"required":["b"],"additionalProperties":{"type":"integer"}}"#;
    check(
        s,
        &[
            "{\"b\":null}",
            "{\"a\":null,\"b\":null}",
            "{\"b\":null,\"c\":null,\"z\":1}",
            "{\"a\":null,\"b\":null,\"x\":1,\"y\":2}",
        ],
        &[
            "{}",
            "{\"a\":null}",
            "{\"z\":1}",
            "{\"b\":null,\"z\":null}",
            "{\"b\":null,\"a\":null}",
            "{\"a\":null,,\"b\":null}",
            "{\"b\":null,\"z\":1,\"c\":null}",
        ],
    );
    let all_optional = r#"{"type":"object","properties":{"a":{"type":"null"},"b":{"type":"null"}},"additionalProperties":{"type":"integer"}}"#;
    check(
        all_optional,
        &[
            "{}",
            "{\"b\":null}",
            "{\"z\":1}",
            "{\"a\":null,\"z\":1}",
            "{\"y\":2,\"z\":1}",
        ],
        &["{,\"z\":1}", "{\"z\":1,\"a\":null}"],
    );
}

#[test]
fn pattern_properties_split_keys() {
    let s = r#"{"type":"object","patternProperties":{"^x":{"type":"integer"}},"additionalProperties":{"type":"string"}}"#;
    check(
        s,
        &["{\"xa\":1,\"b\":\"s\"}"],
        &["{\"xa\":\"s\"}", "{\"b\":1}"],
    );
}

#[test]
fn property_counts() {
    check(
        r#"{"type":"object","minProperties":1,"maxProperties":2}"#,
        &["{\"a\":1}", "{\"a\":1,\"b\":2}"],
        &["{}", "{\"a\":1,\"b\":2,\"c\":3}"],
    );
    // `minProperties: 1` over optional keys: not empty
    let s = r#"{"type":"object","properties":{"a":{},"b":{}},"additionalProperties":false,"minProperties":1}"#;
    check(
        s,
        &["{\"a\":1}", "{\"b\":1}", "{\"a\":1,\"b\":2}"],
        &["{}", "{\"c\":1}"],
    );
    check(
        r#"{"type":"object","properties":{"a":{}},"minProperties":1}"#,
        &["{\"a\":1}", "{\"c\":1}", "{\"a\":1,\"c\":1}"],
        &["{}"],
    );
    // a count beyond one depends on which optional keys are present
    let two = r#"{"type":"object","properties":{"a":{},"b":{}},"minProperties":2}"#;
    assert_eq!(refused(two).keyword(), Some("minProperties"));
}

#[test]
fn arrays_positional_and_bounded() {
    let s =
        r#"{"type":"array","prefixItems":[{"type":"integer"},{"type":"string"}],"items":false}"#;
    check(
        s,
        &["[]", "[1]", "[1,\"a\"]"],
        &["[\"a\"]", "[1,\"a\",2]", "[1,2]"],
    );
    let d7 = Dialect {
        draft: Draft::Draft7,
        ..Dialect::default()
    };
    check_in(
        &d7,
        r#"{"items":[{"type":"integer"}],"additionalItems":{"type":"boolean"},"minItems":2}"#,
        &["[1,true]", "[1,false,true]"],
        &["[1]", "[1,2]"],
    );
    check(
        r#"{"type":"array","items":{"type":"null"},"minItems":1,"maxItems":2}"#,
        &["[null]", "[null,null]"],
        &["[]", "[null,null,null]"],
    );
    assert_eq!(
        refused(r#"{"type":"array","uniqueItems":true}"#).keyword(),
        Some("uniqueItems")
    );
}

#[test]
fn refs_and_recursion() {
    let s = r##"{"$defs":{"n":{"type":"object","properties":{"next":{"$ref":"#/$defs/n"}},"additionalProperties":false}},"$ref":"#/$defs/n"}"##;
    let d = Dialect {
        max_recursion: 2,
        ..Dialect::default()
    };
    check_in(
        &d,
        s,
        &["{}", "{\"next\":{}}", "{\"next\":{\"next\":{}}}"],
        &["{\"next\":1}"],
    );
    assert_eq!(
        refused(r#"{"$ref":"http://example.com/x.json"}"#).keyword(),
        Some("$ref")
    );
}

/// A nested `$id` changes the base its subschemas' references resolve against: a
/// pointer fragment is then within that resource, and an anchor within it is found by
/// the resource's URI.
#[test]
fn ids_change_the_base_of_references() {
    let nested = r##"{"$id":"http://example.com/root.json",
        "$defs":{"a":{"$id":"nested/a.json","$defs":{"b":{"type":"integer"}},"$ref":"#/$defs/b"},
                 "s":{"$id":"http://example.com/s.json","$anchor":"str","type":"string"}},
        "properties":{"x":{"$ref":"nested/a.json"},"y":{"$ref":"s.json#str"},"z":{"$ref":"#/$defs/s"}}}"##;
    check(
        nested,
        &["{\"x\":1,\"y\":\"a\",\"z\":\"b\"}"],
        &["{\"x\":\"a\"}", "{\"y\":1}", "{\"z\":1}"],
    );
    // relative to the document's own place when it has no id
    check(
        r##"{"$defs":{"a":{"$id":"a.json","type":"boolean"}},"$ref":"a.json"}"##,
        &["true"],
        &["1"],
    );
    // draft-07: an `$id` beside `$ref` is ignored, so `#/definitions/t` stays the root's
    let d7 = r##"{"$schema":"http://json-schema.org/draft-07/schema#","definitions":{"t":{"type":"null"}},
        "allOf":[{"$id":"http://example.com/other.json","$ref":"#/definitions/t"}]}"##;
    check(d7, &["null"], &["1"]);
    assert_eq!(
        refused(r##"{"$ref":"http://example.com/elsewhere.json#/x"}"##).keyword(),
        Some("$ref")
    );
}

#[test]
fn recursion_cut_under_one_of_only_where_branches_are_disjoint() {
    let d = Dialect {
        max_recursion: 1,
        ..Dialect::default()
    };
    // a tree whose `oneOf` branches differ by type: the cut keeps it exact up to the bound
    let tree = r##"{"$defs":{"t":{"oneOf":[{"type":"integer"},{"type":"array","items":{"$ref":"#/$defs/t"}}]}},"$ref":"#/$defs/t"}"##;
    check_in(
        &d,
        tree,
        &["1", "[]", "[1,[]]"],
        &["\"a\"", "[\"a\"]", "[1,[2]]"],
    );
    // the cut tree and a deep array look disjoint, but the full tree holds [[[[1]]]],
    // valid against both branches: the tree is met with the complement of the deep
    // array, the deep array with that of the tree widened (its cut admitting all)
    let deep = r#"{"type":"array","minItems":1,"items":{"type":"array","minItems":1,"items":{"type":"array","minItems":1,"items":{"type":"array","minItems":1,"items":{"type":"integer"}}}}}"#;
    let overlapping = format!(
        r##"{{"$defs":{{"t":{{"oneOf":[{{"type":"integer"}},{{"type":"array","items":{{"$ref":"#/$defs/t"}}}}]}}}},"oneOf":[{{"$ref":"#/$defs/t"}},{deep}]}}"##
    );
    check_in(
        &d,
        &overlapping,
        &["1", "[]", "[1,[]]"],
        &["[[[[1]]]]", "\"a\""],
    );
    // a cycle with no members in it: widening admits shallow values, so refused
    let flat = r##"{"$defs":{"t":{"anyOf":[{"type":"integer"},{"allOf":[{"$ref":"#/$defs/t"}]}]}},"oneOf":[{"$ref":"#/$defs/t"},{"minimum":5}]}"##;
    let e = compile(flat, &d).expect_err(flat).to_string();
    assert!(
        e.contains("/oneOf") && e.contains("without properties or items"),
        "{e}"
    );
    // under `not` a cut is still refused
    let negated = r##"{"$defs":{"t":{"type":"array","items":{"$ref":"#/$defs/t"}}},"not":{"$ref":"#/$defs/t"}}"##;
    let e = compile(negated, &d).expect_err(negated).to_string();
    assert!(e.contains("under `not` or `if`"), "{e}");
}

#[test]
fn applicators() {
    check(
        r#"{"anyOf":[{"type":"integer"},{"type":"string","maxLength":1}]}"#,
        &["1", "\"a\""],
        &["\"ab\"", "null"],
    );
    check(
        r#"{"allOf":[{"type":"integer"},{"minimum":3}]}"#,
        &["3"],
        &["2", "3.5"],
    );
    check(
        r#"{"oneOf":[{"type":"integer"},{"type":"string"}]}"#,
        &["1", "\"a\""],
        &["null"],
    );
    // overlapping branches: each meets the complements of the others
    check(
        r#"{"oneOf":[{"type":"integer"},{"minimum":2}]}"#,
        &["1", "-3", "2.5", "\"a\"", "null"],
        &["2", "3", "1.5"],
    );
    check(
        r#"{"type":"object","oneOf":[{"required":["a"]},{"required":["b"]}]}"#,
        &["{\"a\":1}", "{\"b\":1,\"c\":2}"],
        &["{}", "{\"a\":1,\"b\":2}", "{\"b\":1,\"a\":2}"],
    );
    check(
        r#"{"oneOf":[{"type":"string","pattern":"a","maxLength":3},{"type":"string","pattern":"b"}]}"#,
        &["\"a\"", "\"b\"", "\"abab\"", "\"bbbb\""],
        &["\"ab\"", "\"c\"", "\"aaaa\""],
    );
    check(
        r#"{"oneOf":[{"type":"array","items":{"type":"integer"}},{"type":"array","maxItems":1}]}"#,
        &["[1,2]", "[\"a\"]"],
        &["[]", "[1]", "[\"a\",\"b\"]"],
    );
    // ... and where a complement cannot be built, `oneOf` is refused
    let both = r#"{"oneOf":[{"type":"array","uniqueItems":true,"maxItems":1},{"type":"array","minItems":1}]}"#;
    assert_eq!(refused(both).keyword(), Some("oneOf"));
    check(r#"{"not":{"type":"string"}}"#, &["1", "null"], &["\"a\""]);
    check(r#"{"type":"integer","not":{"minimum":5}}"#, &["4"], &["5"]);
    let tagged = r#"{"oneOf":[{"type":"object","properties":{"k":{"const":"a"},"v":{"type":"integer"}},"required":["k"]},{"type":"object","properties":{"k":{"const":"b"}},"required":["k"]}]}"#;
    check(
        tagged,
        &["{\"k\":\"a\",\"v\":1}", "{\"k\":\"b\"}"],
        &["{\"k\":\"c\"}"],
    );
}

#[test]
fn contains_one_matching_item() {
    check(
        r#"{"type":"array","items":{"type":"integer"},"contains":{"minimum":5}}"#,
        &["[5]", "[1,7]", "[9,1,2]", "[1,2,6,3]"],
        &["[]", "[1,2]", "[1,\"a\",6]", "[5.5]"],
    );
    check(
        r#"{"contains":{"const":"x"},"minContains":0}"#,
        &["[]", "[1]"],
        &[],
    );
    let counted = r#"{"contains":{"const":1},"maxContains":2}"#;
    assert_eq!(refused(counted).keyword(), Some("contains"));
    // draft-04 had no `contains`
    check(
        r#"{"$schema":"http://json-schema.org/draft-04/schema#","contains":{"const":1}}"#,
        &["[]", "[2]"],
        &[],
    );
}

#[test]
fn negated_strings() {
    check(
        r#"{"type":"string","not":{"pattern":"^a","maxLength":2}}"#,
        &["\"b\"", "\"abc\"", "\"\""],
        &["\"a\"", "\"ab\""],
    );
    check(
        r#"{"type":"string","not":{"anyOf":[{"enum":["x","y"]},{"minLength":3}]}}"#,
        &["\"z\"", "\"xy\"", "\"\""],
        &["\"x\"", "\"abc\""],
    );
}

#[test]
fn negated_numbers() {
    check(
        r#"{"not":{"multipleOf":20}}"#,
        &["3", "21.5", "-1"],
        &["40", "0", "-20", "\"a\"", "null"],
    );
    check(
        r#"{"not":{"enum":[1,2,3]}}"#,
        &["4", "1.5", "\"a\"", "null", "0"],
        &["1", "2.0", "3"],
    );
    check(
        r#"{"not":{"anyOf":[{"type":"integer"},{"minimum":2}]}}"#,
        &["1.5", "-0.5"],
        &["1", "2.5", "2", "\"a\""],
    );
    check(
        r#"{"type":"integer","not":{"multipleOf":3,"minimum":0}}"#,
        &["-3", "4", "-1"],
        &["0", "3", "9", "1.5"],
    );
}

#[test]
fn negated_objects_and_arrays() {
    let s = r#"{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"not":{"required":["a","b"]}}"#;
    check(s, &["{}", "{\"a\":1}", "{\"b\":2}"], &["{\"a\":1,\"b\":2}"]);
    let v = r#"{"type":"object","properties":{"f":{"type":"array"}},"not":{"properties":{"f":{"maxItems":0}}}}"#;
    check(v, &["{\"f\":[1]}"], &["{}", "{\"f\":[]}", "{\"g\":1}"]);
    check(
        r#"{"type":"object","not":{"minProperties":1}}"#,
        &["{}"],
        &["{\"a\":1}"],
    );
    check(
        r#"{"type":"object","not":{"maxProperties":1}}"#,
        &["{\"a\":1,\"b\":2}", "{\"a\":1,\"b\":2,\"c\":3}"],
        &["{}", "{\"a\":1}"],
    );
    check(
        r#"{"not":{"type":"array","minItems":2}}"#,
        &["1", "[]", "[1]"],
        &["[1,2]"],
    );
}

#[test]
fn negated_key_rules_and_names_ask_for_a_witness_key() {
    check(
        r#"{"type":"object","not":{"properties":{"a":{}},"additionalProperties":false}}"#,
        &[
            "{\"b\":1}",
            "{\"a\":1,\"b\":2}",
            "{\"a\":1,\"b\":2,\"c\":3}",
        ],
        &["{}", "{\"a\":1}", "1"],
    );
    check(
        r#"{"type":"object","not":{"additionalProperties":{"type":"integer"}}}"#,
        &[
            "{\"x\":\"s\"}",
            "{\"x\":1,\"y\":null}",
            "{\"y\":null,\"x\":1}",
        ],
        &["{}", "{\"x\":1}", "{\"x\":1,\"y\":2}"],
    );
    check(
        r#"{"type":"object","not":{"patternProperties":{"^a":{"type":"string"},"b$":false}}}"#,
        &[
            "{\"ab\":\"s\"}",
            "{\"a\":1}",
            "{\"x\":1,\"b\":2}",
            "{\"a\":\"s\",\"xb\":null}",
        ],
        &["{}", "{\"a\":\"s\"}", "{\"x\":1}"],
    );
    check(
        r#"{"type":"object","not":{"propertyNames":{"maxLength":2}}}"#,
        &["{\"abc\":1}", "{\"a\":1,\"abc\":2}"],
        &["{}", "{\"ab\":1}"],
    );
    // a witness may be a key the other side declares
    check(
        r#"{"type":"object","properties":{"b":{"type":"integer"}},"not":{"additionalProperties":false}}"#,
        &["{\"b\":1}", "{\"c\":1}", "{\"b\":1,\"c\":null}"],
        &["{}", "{\"b\":\"x\"}"],
    );
    // overlapping `oneOf` objects: exactly one branch
    check(
        r#"{"oneOf":[{"type":"object","properties":{"a":{"type":"integer"}},"additionalProperties":false},
            {"type":"object","properties":{"b":{"type":"integer"}},"additionalProperties":false}]}"#,
        &["{\"a\":1}", "{\"b\":2}"],
        &["{}", "{\"a\":1,\"b\":2}", "{\"c\":1}", "{\"a\":\"x\"}"],
    );
    // witnesses another implies are dropped: three become one
    check(
        r#"{"type":"object","allOf":[{"not":{"additionalProperties":false}},{"not":{"additionalProperties":false}},
            {"not":{"additionalProperties":{"type":"integer"}}}]}"#,
        &["{\"a\":\"s\"}", "{\"a\":1,\"b\":null}"],
        &["{}", "{\"a\":1}"],
    );
    // the complement of a witness is a key rule
    check(
        r#"{"type":"object","not":{"allOf":[{"not":{"additionalProperties":{"type":"integer"}}},{"required":["a"]}]}}"#,
        &["{}", "{\"b\":\"s\"}", "{\"a\":1}", "{\"a\":1,\"b\":2}"],
        &[
            "{\"a\":\"s\"}",
            "{\"a\":1,\"b\":\"s\"}",
            "{\"b\":\"s\",\"a\":1}",
        ],
    );
    // two witnesses: one key that is both, or one of each in either order
    check(
        r#"{"type":"object","allOf":[{"not":{"additionalProperties":{"type":"integer"}}},
            {"not":{"additionalProperties":{"type":"string"}}}]}"#,
        &[
            "{\"a\":null}",
            "{\"a\":\"s\",\"b\":1}",
            "{\"b\":1,\"a\":\"s\"}",
            "{\"c\":1,\"a\":\"s\",\"d\":2,\"b\":1}",
        ],
        &[
            "{\"a\":\"s\"}",
            "{}",
            "{\"a\":1,\"b\":2}",
            "{\"a\":\"s\",\"b\":\"t\"}",
        ],
    );
    check(
        r#"{"type":"object","maxProperties":2,"not":{"additionalProperties":false}}"#,
        &["{\"a\":1}", "{\"a\":1,\"b\":2}"],
        &["{}", "{\"a\":1,\"b\":2,\"c\":3}"],
    );
}

#[test]
fn negated_item_schemas_ask_for_an_item_outside_them() {
    check(
        r#"{"type":"array","not":{"items":{"type":"integer"}}}"#,
        &["[1,\"a\"]", "[\"a\"]", "[null,2,3]"],
        &["[]", "[1,2]", "[1]"],
    );
    check(
        r#"{"type":"array","not":{"prefixItems":[{"type":"integer"}],"items":false}}"#,
        &["[\"a\"]", "[1,2]", "[\"a\",2]"],
        &["[]", "[1]"],
    );
    check(
        r#"{"type":"array","not":{"contains":{"type":"string"}}}"#,
        &["[]", "[1,2]"],
        &["[\"a\"]", "[1,\"a\"]"],
    );
    check(
        r#"{"oneOf":[{"type":"array","items":{"type":"integer"}},{"type":"array","minItems":2}]}"#,
        &["[1]", "[]", "[\"a\",\"b\"]", "[1,\"b\",3]"],
        &["[1,2]", "[\"a\"]"],
    );
    check(
        r#"{"type":"array","contains":{"const":1},"minItems":3,"maxItems":4}"#,
        &["[1,2,3]", "[2,2,1,2]", "[1,1,1]", "[2,2,1]"],
        &["[2,2,2]", "[1,1]", "[1,1,1,1,1]", "[]"],
    );
    check(
        r#"{"type":"array","allOf":[{"contains":{"type":"integer"}},{"contains":{"minimum":5}}]}"#,
        &["[7]", "[1,\"a\",5.5]", "[5.5,1]", "[\"a\",6,\"b\"]"],
        &["[]", "[1,2]", "[5.5]", "[\"a\"]"],
    );
    check(
        r#"{"oneOf":[{"items":{"multipleOf":10,"maximum":20}},{"items":{"multipleOf":5,"maximum":80}},
            {"items":{"multipleOf":5,"maximum":60}}]}"#,
        &["[70]", "[5,65]", "[75,null]"],
        &["[10]", "[]", "[5]", "[90]", "[50]"],
    );
    check(
        r#"{"type":"array","contains":{"const":1},"minItems":3}"#,
        &["[1,2,3]", "[2,2,2,2,2,1]", "[2,2,1]", "[2,1,2,2]"],
        &["[2,2,2]", "[1,1]", "[2,2,2,2]"],
    );
}

#[test]
fn key_rules_of_merged_schemas_all_apply() {
    check(
        r#"{"allOf":[{"type":"object","patternProperties":{"^a":{"type":"integer"}},"additionalProperties":false},
            {"type":"object","patternProperties":{"1$":{"maximum":8}},"additionalProperties":{"minimum":5}}]}"#,
        &["{}", "{\"a1\":7}", "{\"ab\":5,\"a1\":2}"],
        &["{\"a1\":9}", "{\"ab\":3}", "{\"b\":7}", "{\"a1\":\"x\"}"],
    );
}

#[test]
fn optional_members_are_written_a_bounded_number_of_times() {
    let props: Vec<String> = (0..40)
        .map(|i| format!(r#""k{i}":{{"type":"integer"}}"#))
        .collect();
    let schema = format!(
        r#"{{"type":"object","properties":{{{}}},"additionalProperties":false}}"#,
        props.join(",")
    );
    let re = compile(&schema, &Dialect::default()).unwrap();
    // starting the body at each member wrote member 17 eighteen times
    assert!(re.matches("\"k17\"").count() <= 4, "{}", re.len());
    check(
        &schema,
        &[
            "{}",
            "{\"k16\":1}",
            "{\"k0\":1,\"k17\":2,\"k39\":3}",
            "{\"k3\":1,\"k15\":2,\"k16\":3,\"k20\":4,\"k35\":5}",
        ],
        &[
            "{\"k17\":1,\"k0\":2}",
            "{\"k40\":1}",
            "{\"k1\":1,\"k1\":2}",
            "{\"k16\":1,}",
            "{,\"k16\":1}",
        ],
    );
}

#[test]
fn many_exclusive_patterns_split_keys_one_region_each() {
    let pats: Vec<String> = (0..12)
        .map(|i| format!(r#""^k{i}$":{{"type":"integer","minimum":{i}}}"#))
        .collect();
    let schema = format!(
        r#"{{"type":"object","patternProperties":{{{},"^k":{{"maximum":20}}}},"additionalProperties":false}}"#,
        pats.join(",")
    );
    check(
        &schema,
        &["{}", "{\"k3\":3,\"k11\":20}", "{\"kx\":\"s\"}"],
        &["{\"k3\":2}", "{\"k11\":21}", "{\"k1\":1.5}", "{\"x\":1}"],
    );
    // seven patterns that overlap freely make 128 regions: refused, not approximated
    let free: Vec<String> = "abcdefg"
        .chars()
        .map(|c| format!(r#""{c}":{{"not":{{"const":"{c}"}}}}"#))
        .collect();
    let many = format!(r#"{{"patternProperties":{{{}}}}}"#, free.join(","));
    assert_eq!(refused(&many).keyword(), Some("patternProperties"));
}

#[test]
fn a_negated_negation_needs_no_complement() {
    // an enumerated object's complement is not built; `not not` reads it as it is
    check(
        r#"{"not":{"not":{"enum":[{"a":true}]},"description":"annotation"}}"#,
        &["{\"a\":true}"],
        &["{\"a\":false}", "{}", "true"],
    );
    // not (A and not Y) = not A or Y
    check(
        r#"{"type":"integer","not":{"minimum":3,"not":{"enum":[5]}}}"#,
        &["2", "5", "-1"],
        &["3", "4", "6"],
    );
    // draft-07 ignores the siblings of `$ref`, this `not` among them
    check(
        r##"{"$schema":"http://json-schema.org/draft-07/schema#","type":"integer",
            "not":{"$ref":"#/definitions/small","not":{"enum":[1]}},
            "definitions":{"small":{"maximum":2}}}"##,
        &["3", "7"],
        &["1", "2"],
    );
}

#[test]
fn whitespace_dialects() {
    let s = r#"{"type":"object","properties":{"a":{"type":"array","items":{"type":"integer"}}},"required":["a"],"additionalProperties":false}"#;
    let space = Dialect {
        whitespace: Whitespace::OptionalSpace,
        ..Dialect::default()
    };
    check_in(
        &space,
        s,
        &["{\"a\": [1, 2]}", "{\"a\":[1,2]}"],
        &["{ \"a\": [1]}", "{\"a\":  [1]}"],
    );
    let any = Dialect {
        whitespace: Whitespace::Any { max_run: Some(2) },
        ..Dialect::default()
    };
    check_in(
        &any,
        s,
        &["{ \"a\" :\n[ 1 ,2 ] }", "{\"a\":[]}", "{\"a\":[  ]}"],
        &["{\"a\":[   ]}", " {\"a\":[]}", "{\"a\":[1,   2]}"],
    );
}

#[test]
fn exponents_only_where_exact() {
    let e = Dialect {
        numbers: Numbers::ExponentWhereExact,
        ..Dialect::default()
    };
    check_in(
        &e,
        r#"{"type":"number","exclusiveMinimum":0}"#,
        &["1e5", "2.5E-3"],
        &["0", "-1e5", "0e9"],
    );
    check_in(
        &e,
        r#"{"type":"number","maximum":10}"#,
        &["10", "9.5"],
        &["1e1"],
    );
}

#[test]
fn errors_name_keyword_and_pointer() {
    let e = refused(r#"{"properties":{"a":{"unevaluatedItems":false}}}"#);
    assert_eq!(
        e.to_string(),
        "unsupported keyword \"unevaluatedItems\" at /properties/a: this assertion is not implemented"
    );
    assert!(matches!(
        refused(r#"{"type":"strin"}"#),
        SchemaError::InvalidSchema { .. }
    ));
    assert!(matches!(refused("{"), SchemaError::InvalidSchema { .. }));
}

#[test]
fn keywords_newer_than_the_schemas_draft_are_not_keywords() {
    let conditional = |draft: &str| {
        format!(
            r#"{{"$schema":"http://json-schema.org/{draft}/schema#","type":"object","properties":{{"a":{{"type":"string"}},"b":{{}}}},"if":{{"required":["a"]}},"then":{{"required":["b"]}}}}"#
        )
    };
    check(&conditional("draft-04"), &[r#"{"a":"x"}"#], &[]);
    check(&conditional("draft-06"), &[r#"{"a":"x"}"#], &[]);
    check(
        &conditional("draft-07"),
        &[r#"{"a":"x","b":1}"#],
        &[r#"{"a":"x"}"#],
    );
    check(
        r#"{"$schema":"http://json-schema.org/draft-04/schema#","type":"integer","const":1}"#,
        &["1", "2"],
        &[],
    );
    check(
        r#"{"$schema":"http://json-schema.org/draft-06/schema#","type":"integer","const":1}"#,
        &["1"],
        &["2"],
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
