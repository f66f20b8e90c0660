//! Recursion under `oneOf`: a cut branch is kept only where excluding the other
//! branches stays exact up to the recursion bound, and a cycle that reaches the same
//! `oneOf` again and again costs one widened reading per surroundings.

mod common;

use common::{check_in, check_tree};
use tokensdfa_schema::{compile, Dialect};

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

/// A node of `n` properties, each the node again, under a `oneOf` of integer or node.
fn branching(n: usize) -> String {
    let props: Vec<String> = (0..n)
        .map(|i| format!(r##""p{i}":{{"$ref":"#/$defs/t"}}"##))
        .collect();
    format!(
        r##"{{"$defs":{{"t":{{"oneOf":[{{"type":"integer"}},{{"type":"object","properties":{{{}}},"additionalProperties":false}}]}}}},"$ref":"#/$defs/t"}}"##,
        props.join(",")
    )
}

/// Eight properties reach the `oneOf` 1 + 8 + 64 + 512 = 585 times within the default
/// bound of 3, past the 512 widened readings allowed; they are read in four
/// surroundings (one per depth), so the schema compiles, exactly up to the bound.
/// Thirteen properties reach it 2,380 times: refused as a limit naming the `oneOf`,
/// before the work grows with the tree.
#[test]
fn a_one_of_reached_again_is_widened_once_per_surroundings() {
    check_tree(
        &branching(8),
        &[
            "1",
            "{}",
            "{\"p7\":1}",
            "{\"p0\":{\"p1\":{\"p2\":{}}},\"p3\":2}",
        ],
        &[
            "\"a\"",
            "{\"p0\":\"a\"}",
            "{\"q\":1}",
            "{\"p0\":{\"p1\":{\"p2\":{\"p3\":{}}}}}",
        ],
    );
    let e = compile(&branching(13), &Dialect::default())
        .expect_err("thirteen properties")
        .to_string();
    assert!(
        e.contains("/$defs/t/oneOf") && e.contains("more than 2048 times"),
        "{e}"
    );
}
