//! Full-match checks of compiled regexes: types, enumerated values, numbers (bounds,
//! `multipleOf`, exponents, integers) and whitespace.

mod common;

use common::{check, check_in, refused};
use tokensdfa_schema::{Dialect, NegativeZero, Numbers, Whitespace};

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

/// Under draft-03 and draft-04 `exclusiveMinimum`/`exclusiveMaximum` are booleans that
/// make `minimum`/`maximum` exclusive; later drafts refuse a boolean there (naming it)
/// rather than guess, and draft-03's `type` may say `any`.
#[test]
fn draft_04_exclusive_bounds_are_booleans() {
    let draft4 = |rest: &str| {
        format!(r#"{{"$schema":"http://json-schema.org/draft-04/schema#","type":"number",{rest}}}"#)
    };
    check(
        &draft4(r#""minimum":0,"exclusiveMinimum":true,"maximum":10,"exclusiveMaximum":true"#),
        &["0.5", "9.99", "0.001"],
        &["0", "10", "-0.0", "10.0"],
    );
    check(
        &draft4(r#""minimum":0,"exclusiveMinimum":false,"exclusiveMaximum":true"#),
        &["0", "12345"],
        &["-1"],
    );
    let e = refused(r#"{"type":"number","minimum":0,"exclusiveMinimum":true}"#);
    assert_eq!(e.keyword(), Some("exclusiveMinimum"), "{e}");
    assert!(e.to_string().contains("draft-04"), "{e}");
    let draft3 = r#"{"$schema":"http://json-schema.org/draft-03/schema#","type":["any"]}"#;
    check(draft3, &["1", "\"a\"", "null", "[]"], &[]);
    let union = r#"{"$schema":"http://json-schema.org/draft-03/schema#","type":["string",{"type":"integer"}]}"#;
    assert_eq!(refused(union).keyword(), Some("type"));
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

/// A modulus past the automata's limit (8721, the least common multiple of four
/// fractions) between two bounds: the few multiples in range are listed.
#[test]
fn large_moduli_between_bounds_list_their_multiples() {
    let s = r#"{"type":"number","allOf":[{"multipleOf":6.75},{"multipleOf":19},{"multipleOf":9.5},{"multipleOf":2.125}],"not":{"anyOf":[{"multipleOf":2},{"multipleOf":5}]},"exclusiveMinimum":-100000,"exclusiveMaximum":-10000}"#;
    check(
        s,
        &["-26163", "-61047", "-26163.0", "-95931"],
        &["-17442", "-43605", "-26164", "-8721", "-104652", "26163"],
    );
    // unbounded, the same modulus is still refused
    let open = r#"{"type":"number","multipleOf":8721.5}"#;
    assert_eq!(common::refused(open).keyword(), Some("multipleOf"));
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

/// A number automaton whose regex is long stands in the tree as the automaton: the
/// multiples of 33 from 100 write a regex of about 3 * 10^14 bytes (shared, so the
/// tree is small, but the lazy index would compile its positions as the walk reaches
/// them, past its walk limit at the first item), while the automaton has a few dozen
/// states. The regex text still prints the written regex where it fits (multiples of 7,
/// about 26 KB) and means the same.
#[test]
fn long_number_regexes_stand_in_the_tree_as_automata() {
    let of_33 = r#"{"type":"integer","multipleOf":33,"minimum":100}"#;
    assert!(common::compile_err(of_33).contains("bytes long"));
    let nested = format!(r#"{{"type":"array","items":{{"type":"array","items":{of_33}}}}}"#);
    common::check_tree(
        &nested,
        &["[]", "[[132,165],[],[99990]]", "[[3300,132.0]]"],
        &["[[99]]", "[[133]]", "[[0]]", "[[-132]]"],
    );
    // a dense automaton (multiples of 499 from 10^6, about 500 states) is not written
    // out at all (its elimination is cubic: 18 s): the tree serves it, the text refuses it
    let of_499 = r#"{"type":"integer","multipleOf":499,"minimum":1000000}"#;
    assert!(common::compile_err(of_499).contains("far too long"));
    common::check_tree(
        of_499,
        &["1000495", "1000994", "499000000"],
        &["998002", "1000496", "-1000495"],
    );
    let of_7 = r#"{"type":"array","items":{"type":"integer","multipleOf":7,"minimum":0}}"#;
    let (good, bad) = (["[0,7,14,700,7000007]"], ["[1]", "[-7]", "[7000008]"]);
    check(of_7, &good, &bad);
    common::check_tree(of_7, &good, &bad);
}
