//! Full-match checks of compiled regexes: references and recursion, applicators,
//! negations, errors, and keywords by draft.

mod common;

use common::{check, check_in, check_tree, refused};
use tokensdfa_schema::{Dialect, SchemaError};

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

/// A chain of distinct references nests without bound although the document is flat:
/// reading stops at 512 nested subschemas with a limit naming where, rather than
/// exhausting the stack (2,000 levels crashed the process), and a chain of 200
/// properties (400 nested subschemas) still compiles to its exact language, on the 2
/// MiB stack of a test thread.
#[test]
fn reference_chains_nest_within_a_bound() {
    let chain = |n: usize| {
        let defs: Vec<String> = (0..n)
            .map(|i| {
                format!(
                    r##""d{i}":{{"type":"object","properties":{{"x":{{"$ref":"#/$defs/d{}"}}}},"required":["x"],"additionalProperties":false}}"##,
                    i + 1
                )
            })
            .collect();
        format!(
            r##"{{"$defs":{{{},"d{n}":{{"type":"integer"}}}},"$ref":"#/$defs/d0"}}"##,
            defs.join(",")
        )
    };
    let deep = |n: usize, leaf: &str| format!("{}{leaf}{}", "{\"x\":".repeat(n), "}".repeat(n));
    check_tree(
        &chain(200),
        &[&deep(200, "7")],
        &[&deep(199, "7"), &deep(200, "\"7\"")],
    );
    let e = refused(&chain(2_000));
    assert!(
        matches!(&e, SchemaError::LimitExceeded { what, .. } if what.contains("nested more than 512 deep")),
        "{e}"
    );
    assert!(
        e.to_string().contains(" at /$defs/d255/properties/x:"),
        "{e}"
    );
}

/// A `oneOf` of enumerations is exclusive by value: a value listed by two branches is in
/// neither (strings and numbers alike, `1` and `1.0` one value), and branches sharing no
/// value are their union. Such branches are compared through their values, not a meet
/// per pair.
#[test]
fn one_of_enumerations_exclude_values_listed_twice() {
    check(
        r#"{"oneOf":[{"enum":["a","b"]},{"const":"b"},{"const":"c"}]}"#,
        &["\"a\"", "\"c\""],
        &["\"b\""],
    );
    check(
        r#"{"oneOf":[{"const":1},{"enum":[1.0,"x"]},{"const":2}]}"#,
        &["2", "\"x\""],
        &["1", "1.0"],
    );
    check(
        r#"{"oneOf":[{"const":"a"},{"const":1},{"enum":["b",2]}]}"#,
        &["\"a\"", "1", "\"b\"", "2"],
        &["\"c\"", "3"],
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
    // ... unless the branch only met what stands beside `oneOf`: outside the met
    // branch, within the siblings' values, is outside the branch as written
    let beside = r#"{"type":"object","properties":{"tags":{"type":"array","items":{"enum":["x","y"]},"uniqueItems":true},"a":{"type":"integer"},"b":{"type":"integer"}},"oneOf":[{"required":["a"]},{"required":["b"]}]}"#;
    common::check_tree(
        beside,
        &[
            r#"{"a":1}"#,
            r#"{"b":1}"#,
            r#"{"tags":["y","x"],"a":1}"#,
            r#"{"tags":[],"b":1,"c":null}"#,
        ],
        &[
            "{}",
            r#"{"a":1,"b":2}"#,
            r#"{"tags":["x","x"],"a":1}"#,
            r#"{"tags":["x"],"a":1,"b":2}"#,
            r#"{"tags":["x"]}"#,
        ],
    );
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
    // refused where the array is written out, after reading: still named where it stands
    let e = refused(
        r#"{"properties":{"tags":{"type":"array","items":{"type":"string"},"uniqueItems":true}}}"#,
    );
    assert_eq!(e.keyword(), Some("uniqueItems"));
    assert!(
        e.to_string().contains(" at /properties/tags/uniqueItems:"),
        "{e}"
    );
    // ... and an allOf part that bounds the array to one item lifts it
    check(
        r#"{"allOf":[{"type":"array","uniqueItems":true},{"maxItems":1}]}"#,
        &["[]", "[1]"],
        &["[1,2]"],
    );
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

/// Two lists of alternatives meet pairwise, and the limits are on the pairs tried
/// (8,192) and the alternatives kept (512), not on the first alone: 40 by 40 number
/// ranges try 1,600 meets and keep the 40 that are not empty; 100 by 100 try too many.
#[test]
fn merges_are_bounded_by_the_meets_tried_and_the_alternatives_kept() {
    let ranges = |n: usize, width: usize| {
        let alts: Vec<String> = (0..n)
            .map(|i| format!(r#"{{"minimum":{},"maximum":{}}}"#, 10 * i, 10 * i + width))
            .collect();
        format!(r#"{{"type":"integer","anyOf":[{}]}}"#, alts.join(","))
    };
    let both = |n: usize| format!(r#"{{"allOf":[{},{}]}}"#, ranges(n, 5), ranges(n, 6));
    check(&both(40), &["0", "395"], &["6", "396", "400"]);
    let e = refused(&both(100));
    assert!(
        matches!(&e, SchemaError::LimitExceeded { what, .. } if what.contains("merging 100 by 100")),
        "{e}"
    );
    // the same subschema read twice is one interned shape: meeting it with itself is no merge
    let twice = format!(r#"{{"allOf":[{0},{0}]}}"#, ranges(100, 5));
    check(&twice, &["0", "995"], &["6", "996", "1000"]);
}
