//! Full-match checks of compiled regexes: objects (schema order, members, key rules,
//! counts) and arrays (positions, bounds, `contains`).

mod common;

use common::{check, check_in, check_tree, refused, Tree};
use tokensdfa_schema::{compile, Dialect, Draft};

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
    // a count beyond one depends on which optional keys are present: a counted
    // automaton over the members, which the tree serves and the regex text refuses
    let two = r#"{"type":"object","properties":{"a":{},"b":{}},"minProperties":2}"#;
    assert!(
        refused(two).keyword().is_none(),
        "a limit of the text, not a keyword"
    );
    common::check_tree(
        two,
        &[
            r#"{"a":1,"b":2}"#,
            r#"{"a":1,"c":3}"#,
            r#"{"c":1,"d":2}"#,
            r#"{"a":1,"b":2,"c":3}"#,
        ],
        &[r#"{"a":1}"#, r#"{"b":2}"#, "{}", r#"{"b":1,"a":2}"#],
    );
    let at_most = r#"{"type":"object","properties":{"a":{},"b":{},"c":{}},"required":["b"],"maxProperties":2}"#;
    common::check_tree(
        at_most,
        &[
            r#"{"b":1}"#,
            r#"{"a":1,"b":2}"#,
            r#"{"b":1,"c":2}"#,
            r#"{"b":1,"x":2}"#,
        ],
        &[
            r#"{"a":1,"b":2,"c":3}"#,
            r#"{"a":1,"c":2}"#,
            r#"{"b":1,"x":1,"y":2}"#,
            "{}",
        ],
    );
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
fn unique_items_over_enumerated_values() {
    // a state per set of values used; a small walk's regex is written too, so the regex
    // text and the tree must agree
    let letters = r#"{"type":"array","items":{"enum":["a","b","c"]},"uniqueItems":true}"#;
    let good = ["[]", r#"["a"]"#, r#"["b","a"]"#, r#"["c","a","b"]"#];
    let bad = [
        r#"["a","a"]"#,
        r#"["a","b","a"]"#,
        r#"["a","b","c","a"]"#,
        r#"["d"]"#,
    ];
    check(letters, &good, &bad);
    check_tree(letters, &good, &bad);
    let three = r#"{"type":"array","items":{"enum":["a","b","c","d"]},"uniqueItems":true,"minItems":2,"maxItems":3}"#;
    let (good, bad) = (
        [r#"["a","d"]"#, r#"["d","c","b"]"#],
        ["[]", r#"["a"]"#, r#"["a","b","c","d"]"#, r#"["b","c","b"]"#],
    );
    check(three, &good, &bad);
    check_tree(three, &good, &bad);
    // past 1,024 states the walk stays an automaton: served by the tree, refused by the
    // regex text
    let eleven: Vec<String> = (0..11).map(|i| format!("\"w{i}\"")).collect();
    let eleven = format!(
        r#"{{"type":"array","items":{{"enum":[{}]}},"uniqueItems":true}}"#,
        eleven.join(",")
    );
    assert!(refused(&eleven).keyword().is_none(), "a limit of the text");
    check_tree(&eleven, &[r#"["w10","w0"]"#], &[r#"["w3","w3"]"#]);
    // values compare as JSON values: the number 1 and the string "1" differ
    check_tree(
        r#"{"type":"array","items":{"enum":[1,"1",2]},"uniqueItems":true,"minItems":2}"#,
        &[r#"[1,"1"]"#, r#"[2,1,"1"]"#],
        &["[1,1]", "[1]", r#"["1",2,"1"]"#, "[]"],
    );
    // prefix items count towards uniqueness, and bounds cap the walk
    check_tree(
        r#"{"type":"array","prefixItems":[{"type":"boolean"},{"type":"boolean"}],"items":false,"uniqueItems":true}"#,
        &["[]", "[false]", "[true,false]", "[false,true]"],
        &["[true,true]", "[false,false]", "[true,false,true]"],
    );
    check_tree(
        r#"{"type":"array","items":{"type":["boolean","null"]},"uniqueItems":true,"maxItems":2}"#,
        &["[null,true]", "[false]"],
        &["[true,null,true]", "[null,true,false]", "[null,null]"],
    );
    // more items required than there are values: no array
    check_tree(
        r#"{"items":{"enum":["a","b"]},"uniqueItems":true,"minItems":3}"#,
        &["1", "{}"],
        &["[]", r#"["a","b"]"#, r#"["a","b","a"]"#],
    );
}

/// `uniqueItems` is refused where its values are not enumerated (unbounded strings,
/// arrays among the values), by the text and the tree alike, and by the tree past the
/// values its walk can remember.
#[test]
fn unique_items_over_unenumerated_or_many_values_is_refused() {
    // unbounded values, and arrays among the values, are not enumerated
    let strings = r#"{"type":"array","items":{"type":"string"},"uniqueItems":true}"#;
    let arrays = r#"{"type":"array","items":{"enum":[[1],[2]]},"uniqueItems":true}"#;
    for s in [strings, arrays] {
        assert!(Tree::new(s, &Dialect::default()).is_err(), "{s}");
        assert_eq!(refused(s).keyword(), Some("uniqueItems"), "{s}");
    }
    let many: Vec<String> = (0..15).map(|i| format!("\"v{i}\"")).collect();
    let many = format!(
        r#"{{"type":"array","items":{{"enum":[{}]}},"uniqueItems":true}}"#,
        many.join(",")
    );
    let e = Tree::new(&many, &Dialect::default())
        .err()
        .expect("refused");
    assert!(
        e.keyword().is_none() && e.to_string().contains("15 distinct values"),
        "{e}"
    );
}

/// The `uniqueItems` automata of one schema share one state budget: five distinct
/// arrays of 14 values exceed it, while one such array referenced from five places
/// counts once.
#[test]
fn unique_items_automata_share_one_budget() {
    let array = |tag: &str| {
        let values: Vec<String> = (0..14).map(|i| format!("\"{tag}{i}\"")).collect();
        format!(
            r#"{{"type":"array","items":{{"enum":[{}]}},"uniqueItems":true}}"#,
            values.join(",")
        )
    };
    let members = |f: &dyn Fn(usize) -> String| {
        let m: Vec<String> = (0..5).map(|i| format!("\"p{i}\":{}", f(i))).collect();
        m.join(",")
    };
    let distinct = format!(
        r#"{{"type":"object","properties":{{{}}}}}"#,
        members(&|i| array(&format!("t{i}_")))
    );
    let e = Tree::new(&distinct, &Dialect::default())
        .err()
        .expect("refused");
    assert!(e.to_string().contains("states in all"), "{e}");
    let shared = format!(
        r##"{{"type":"object","properties":{{{}}},"$defs":{{"u":{}}}}}"##,
        members(&|_| r##"{"$ref":"#/$defs/u"}"##.to_string()),
        array("v")
    );
    check_tree(
        &shared,
        &[r#"{"p0":["v1","v0"],"p4":["v0"]}"#],
        &[r#"{"p3":["v1","v1"]}"#],
    );
}

#[test]
fn several_contains_are_counted_over_the_items() {
    let three = r#"{"type":"array","allOf":[{"contains":{"const":1}},{"contains":{"const":2}},{"contains":{"const":3}}],"maxItems":4}"#;
    check_tree(
        three,
        &["[1,2,3]", "[3,1,2]", "[3,2,1,4]", "[6,1,2,3]"],
        &["[1,2]", "[1,1,2,2]", "[]", "[6,1,2,3,3]", "[1,2,4,5]"],
    );
    // `oneOf` over four arrays: each branch meets three complements, one `contains` each
    let ring = r#"{"oneOf":[{"type":"array","items":{"enum":["a","b"]}},{"type":"array","items":{"enum":["b","c"]}},{"type":"array","items":{"enum":["c","d"]}},{"type":"array","items":{"enum":["d","a"]}}]}"#;
    check_tree(
        ring,
        &[r#"["a","b"]"#, r#"["c","b"]"#, r#"["d","a","a"]"#],
        &[
            "[]",
            r#"["a"]"#,
            r#"["a","c"]"#,
            r#"["b","b"]"#,
            r#"["a","b","c"]"#,
        ],
    );
    let seven: Vec<String> = (0..7)
        .map(|i| format!(r#"{{"contains":{{"const":{i}}}}}"#))
        .collect();
    let seven = format!(r#"{{"type":"array","allOf":[{}]}}"#, seven.join(","));
    assert_eq!(refused(&seven).keyword(), Some("contains"));
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

/// Keys that must be present among the undeclared ones, beside a count: a counted
/// automaton of the members, whose state is the set of witnesses hit so far. Three
/// witnesses with a bound, two with a minimum of 3, two `contains` with a bound: all
/// were refused when only split regexes were written.
#[test]
fn witnesses_beside_counts_are_counted_over_the_members() {
    let some = |k: &str| format!(r#"{{"propertyNames":{{"not":{{"const":"{k}"}}}}}}"#);
    let three = format!(
        r#"{{"type":"object","maxProperties":4,"not":{{"anyOf":[{},{},{}]}}}}"#,
        some("a"),
        some("b"),
        some("c")
    );
    common::check_tree(
        &three,
        &[r#"{"a":1,"b":2,"c":3}"#, r#"{"c":1,"x":0,"b":2,"a":3}"#],
        &[
            r#"{"a":1,"b":2}"#,
            r#"{"a":1,"b":2,"c":3,"d":4,"e":5}"#,
            "{}",
        ],
    );
    let two = format!(
        r#"{{"type":"object","minProperties":3,"not":{{"anyOf":[{},{}]}}}}"#,
        some("a"),
        some("b")
    );
    common::check_tree(
        &two,
        &[r#"{"x":0,"b":2,"a":3}"#, r#"{"a":0,"y":[],"b":{}}"#],
        &[r#"{"a":1,"b":2}"#, r#"{"a":1,"c":2,"d":3}"#],
    );
    let contains = r#"{"type":"array","allOf":[{"contains":{"const":1}},{"contains":{"const":2}}],"maxItems":3}"#;
    common::check_tree(
        contains,
        &["[1,2]", "[2,0,1]", "[0,2,1]"],
        &["[1,1,1]", "[1,2,0,0]", "[2]", "[]"],
    );
}

/// MaskBench Github_hard---o48423: keys holding one of 30 game titles. The key
/// region's automaton is small, but its regex by state elimination is 484 MB (it can
/// double with every state) and the lazy index compiles the regex: past the dialect's
/// text limit it is refused rather than served to break mid-walk. Eight titles fit the tree (their
/// regex text, 15 MB, is past the default text limit of 4 MiB).
#[test]
fn key_regions_past_the_text_limit_are_refused() {
    let titles = "Red|Blue|Yellow|Gold|Silver|Crystal|Ruby|Sapphire|Emerald|FireRed|LeafGreen|\
                  Diamond|Pearl|Platinum|HeartGold|SoulSilver|Black|White|Black 2|White 2|X|Y|\
                  Omega Ruby|Alpha Sapphire|Sun|Moon|Ultra Sun|Ultra Moon|Let's Go Pikachu|\
                  Let's Go Eevee";
    let schema = |p: &str| {
        format!(
            r#"{{"type":"object","patternProperties":{{"{p}":{{"type":"integer"}}}},"additionalProperties":false}}"#
        )
    };
    let why = Tree::new(&schema(titles), &Dialect::default())
        .err()
        .expect("refused");
    assert!(why.to_string().contains("property-name language"), "{why}");
    check_tree(
        &schema("Red|Blue|Yellow|Gold|Silver|Crystal|Ruby|Sapphire"),
        &["{}", "{\"aRedb\":1,\"Gold\":2}"],
        &["{\"a\":1}", "{\"Red\":\"s\"}"],
    );
}

/// A key language whose automaton is dense (the keys `^(a|b)*a(a|b){12}$` leaves out:
/// 8,192 states) is refused where its regex would take too many elimination steps: it
/// ran for more than ten minutes before that bound. The same pattern with a sparse
/// automaton (`{1,40}` pairs) is served.
#[test]
fn dense_key_languages_are_refused_before_their_elimination_runs_away() {
    let schema = |p: &str| {
        format!(
            r#"{{"type":"object","patternProperties":{{"{p}":{{"type":"string"}}}},"additionalProperties":{{"type":"integer"}}}}"#
        )
    };
    let why = Tree::new(&schema("^(a|b)*a(a|b){12}$"), &Dialect::default())
        .err()
        .expect("refused");
    assert!(why.to_string().contains("property-name language"), "{why}");
    check_tree(
        &schema("^([a-c][0-2]){1,40}$"),
        &["{}", "{\"a1\":\"s\",\"x\":3}"],
        &["{\"a1\":3}", "{\"x\":\"s\"}"],
    );
}
