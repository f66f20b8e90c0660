//! Full-match checks of listed values (`enum`, `const`) that are arrays or objects, in
//! the dialects that write them differently: xgrammar's writes one compact literal.

mod common;

use common::check_in;
use tokensdfa_schema::{Dialect, Escapes, Keys, Whitespace};

/// xgrammar 0.2.8's dialect, as far as listed values go.
fn xgrammar() -> Dialect {
    Dialect {
        whitespace: Whitespace::Any { max_run: None },
        escapes: Escapes::FreeStringsOnly,
        keys: Keys::CanonicalDelEscaped,
        ..Dialect::default()
    }
}

#[test]
fn listed_containers_take_no_whitespace_inside_under_free_strings_only() {
    // xgrammar 0.2.8 writes a listed array or object as one JSON literal, `[1,2]`,
    // refusing whitespace anywhere inside it (nested containers included) but taking it
    // around the whole value; the dialect's whitespace once held inside them too
    let s = r#"{"type":"object","properties":{"e":{"enum":[[1,{"a":[true,null]},[]],{"k":"v","b":{}},"z"]}},"required":["e"],"additionalProperties":false}"#;
    let good = [
        r#"{"e":[1,{"a":[true,null]},[]]}"#,
        r#"{ "e" : [1,{"a":[true,null]},[]] }"#,
        r#"{"e":{"k":"v","b":{}}}"#,
        "{\"e\":\n{\"k\":\"v\",\"b\":{}}\t}",
        r#"{"e":"z"}"#,
    ];
    let bad = [
        r#"{"e":[1, {"a":[true,null]},[]]}"#,
        r#"{"e":[ 1,{"a":[true,null]},[]]}"#,
        r#"{"e":[1,{"a":[true,null]},[] ]}"#,
        r#"{"e":[1,{"a": [true,null]},[]]}"#,
        r#"{"e":[1,{ "a":[true,null]},[]]}"#,
        r#"{"e":[1,{"a":[true, null]},[]]}"#,
        r#"{"e":[1,{"a":[true,null]},[ ]]}"#,
        r#"{"e":{"k" :"v","b":{}}}"#,
        r#"{"e":{"k":"v","b":{ }}}"#,
        r#"{"e":{"b":{},"k":"v"}}"#,
    ];
    check_in(&xgrammar(), s, &good, &bad);
    // the same literal at the root, met with the schema's other keywords, and under a
    // `const`; strings inside in their one spelling
    let root = r#"{"type":"array","items":{"type":"integer"},"enum":[[1,2],[3]]}"#;
    check_in(
        &xgrammar(),
        root,
        &["[1,2]", "[3]"],
        &["[1, 2]", "[ 3]", "[3 ]"],
    );
    let c = r#"{"const":{"a\"\n":["x\u007f"]}}"#;
    let good = [r#"{"a\"\n":["x\u007f"]}"#];
    let bad = [
        r#"{"a\"\n": ["x\u007f"]}"#,
        r#"{"a\"\n":["x\u007F"]}"#,
        r#"{"a\u0022\n":["x\u007f"]}"#,
    ];
    check_in(&xgrammar(), c, &good, &bad);
}

#[test]
fn listed_containers_keep_the_dialect_whitespace_elsewhere() {
    // llguidance's dialect (escapes minimal, keys canonical) takes whitespace inside a
    // listed container, as llguidance 1.x does; so does xgrammar's around containers
    // the schema does not list
    let d = Dialect {
        whitespace: Whitespace::Any { max_run: None },
        escapes: Escapes::Minimal,
        keys: Keys::Canonical,
        ..Dialect::default()
    };
    let s = r#"{"enum":[[1,{"a":[]}]]}"#;
    check_in(&d, s, &["[1,{\"a\":[]}]", "[ 1 , { \"a\" : [ ] } ]"], &[]);
    let free = r#"{"type":"array","items":{"type":"object"},"not":{"const":[{}]}}"#;
    check_in(
        &xgrammar(),
        free,
        &["[ { } , {} ]", "[ {\"a\" : 1} ]"],
        &["[{}]"],
    );
}

#[test]
fn keys_a_property_names_lists_are_spelled_as_listed_strings_under_free_strings_only() {
    // xgrammar 0.2.8 writes the keys of `propertyNames: {"enum": [...]}` (or `const`) as
    // JSON literals, `"k\"\n\u007f"`; the dialect once spelled them as keys a language
    // limits, with no escape, so keys needing one were left out
    let s = r#"{"type":"object","propertyNames":{"enum":["k\"\n\u007f","a","é/"]},"additionalProperties":{"type":"integer"}}"#;
    let good = [
        r#"{"k\"\n\u007f":1}"#,
        r#"{"a":1,"é/":2}"#,
        r#"{ "é/" : 1 }"#,
        "{}",
    ];
    let bad = [
        "{\"k\\\"\\n\u{7f}\":1}",
        r#"{"k\u0022\n\u007f":1}"#,
        r#"{"k\"\n\u007F":1}"#,
        r#"{"\u0061":1}"#,
        r#"{"é\/":1}"#,
        r#"{"b":1}"#,
        r#"{"a":"x"}"#,
    ];
    check_in(&xgrammar(), s, &good, &bad);
    let c = r#"{"type":"object","propertyNames":{"const":"q\"\t"}}"#;
    check_in(
        &xgrammar(),
        c,
        &[r#"{"q\"\t":[]}"#],
        &[r#"{"q\"\u0009":[]}"#],
    );
    // beside `patternProperties` the keys stay constrained strings, with no escape
    let p = r#"{"type":"object","propertyNames":{"enum":["a\"b","ab"]},"patternProperties":{"^a":{"type":"integer"}}}"#;
    check_in(&xgrammar(), p, &[r#"{"ab":1}"#], &[r#"{"a\"b":1}"#]);
}
