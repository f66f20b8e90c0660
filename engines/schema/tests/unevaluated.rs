//! `unevaluatedProperties` over the keys `allOf` and `$ref` evaluate in place.

mod common;

use common::{check, refused};

/// Docker Compose's shape: a service is its own `properties` and those of the
/// definitions its `allOf` references, with `patternProperties` for extensions, and
/// nothing else.
#[test]
fn unevaluated_properties_see_the_keys_of_all_of_and_references() {
    let s = r##"{"$defs":{"container":{"type":"object","properties":{"image":{"type":"string"}},"patternProperties":{"^x-":{}}},
        "workload":{"properties":{"deploy":{"type":"boolean"}}}},
        "properties":{"scale":{"type":"integer"}},
        "allOf":[{"$ref":"#/$defs/container"},{"$ref":"#/$defs/workload"}],
        "unevaluatedProperties":false}"##;
    check(
        s,
        &[
            "{}",
            r#"{"scale":1,"image":"a","deploy":true}"#,
            r#"{"image":"a","x-note":[1]}"#,
        ],
        &[
            r#"{"other":1}"#,
            r#"{"image":"a","other":1}"#,
            r#"{"scale":"a"}"#,
            r#"{"image":1}"#,
            "1",
        ],
    );
    // a schema for the keys left over; a value the object keywords do not reach
    let typed = r#"{"properties":{"a":{}},"unevaluatedProperties":{"type":"integer"}}"#;
    check(
        typed,
        &[r#"{"a":"s","b":1}"#, "\"text\"", "[1]"],
        &[r#"{"b":"s"}"#],
    );
}

/// `additionalProperties` in place evaluates every key; the keyword does not exist
/// before draft 2019-09, where validators ignore it; and where `anyOf` (or `oneOf`,
/// `if`, `dependentSchemas`) decides which keys are evaluated, it is refused.
#[test]
fn unevaluated_properties_elsewhere() {
    check(
        r#"{"allOf":[{"additionalProperties":{"type":"integer"}}],"unevaluatedProperties":false}"#,
        &[r#"{"z":1}"#],
        &[r#"{"z":"s"}"#],
    );
    check(
        r#"{"$schema":"http://json-schema.org/draft-07/schema#","properties":{"a":{}},"unevaluatedProperties":false}"#,
        &[r#"{"a":1,"b":2}"#],
        &[],
    );
    let e = refused(r#"{"anyOf":[{"properties":{"a":{}}}],"unevaluatedProperties":false}"#);
    assert_eq!(e.keyword(), Some("unevaluatedProperties"));
    assert!(e.to_string().contains("`anyOf`"), "{e}");
    let e = refused(
        r#"{"allOf":[{"dependentSchemas":{"a":{"properties":{"b":{}}}}}],"unevaluatedProperties":false}"#,
    );
    assert!(e.to_string().contains("`dependentSchemas`"), "{e}");
}
