//! JSON Schema to regex.
//!
//! Contract of [`compile`]: the returned regex (regex-syntax 0.8 syntax, no
//! look-around, no back-references) matches, as a full match, exactly the texts of the
//! [`Dialect`] whose JSON value is valid against the schema; or the schema is refused
//! with a [`SchemaError`] that says why and where.
//!
//! Pipeline: [`reader`] (references, applicators), [`keywords`] (per-type
//! assertions) and [`dependencies`] (conditional object keywords) read the document into a [`shape::Shape`], merging `allOf` with
//! [`merge`], `oneOf` with [`exclusive`], `not` with [`negate`]; [`emit`] and
//! [`objects`] turn the shape into an [`rx::Rx`] tree, using [`scalars`] for strings
//! and numbers, [`spell`] for JSON string escapes, and [`automaton`] where languages
//! must be intersected or complemented; [`rx::print`] writes it.

mod anchors;
mod automaton;
mod charset;
mod context;
mod decimal;
mod dependencies;
pub mod dialect;
mod digits;
mod ecma;
mod eliminate;
mod emit;
mod error;
mod exclusive;
mod formats;
mod intern;
mod keys;
mod keywords;
mod listed_multiples;
mod lookahead;
mod member_counts;
mod merge;
mod negate;
mod numbers;
mod objects;
mod printer;
mod reader;
mod rx;
mod scalars;
mod shape;
mod spell;
#[cfg(test)]
mod testing;
mod to_ast;
mod unique;

use serde_json::Value;

pub use dialect::{Dialect, Draft, Escapes, Formats, Keys, NegativeZero, Numbers, Whitespace};
pub use error::SchemaError;

/// The regex of the dialect's texts valid against `schema_json`.
pub fn compile(schema_json: &str, dialect: &Dialect) -> Result<String, SchemaError> {
    compile_rx(schema_json, dialect).map(|x| rx::print(&x))
}

/// The same language as [`compile`]'s regex, as the lazy index's tree: no regex text
/// printed or parsed. The same schemas are refused for the same reasons, except for
/// size: the tree holds each shared piece once ([`to_ast`]), however often the text
/// would repeat it, so the text's `max_regex_len` and `max_nesting` do not apply. The
/// tree's own limits do: its distinct nodes (`max_tree_nodes`) and the text it stands
/// for (`max_tree_text_len`, unbounded by default). Many MaskBench schemas
/// (Kubernetes, GitHub) print hundreds of megabytes from trees of a few thousand nodes.
pub fn compile_ast(
    schema_json: &str,
    dialect: &Dialect,
) -> Result<crate::regex_ast::Ast, SchemaError> {
    let x = compile_unbounded(schema_json, dialect, true)?;
    if x.printed_len() > dialect.max_tree_text_len {
        return Err(SchemaError::limit(
            "",
            format!(
                "the regex tree stands for {} bytes of text",
                x.printed_len()
            ),
        ));
    }
    let ast = to_ast::to_ast(&x);
    if ast.nodes.len() > dialect.max_tree_nodes {
        return Err(SchemaError::limit(
            "",
            format!("the regex tree would have {} nodes", ast.nodes.len()),
        ));
    }
    Ok(ast)
}

fn compile_rx(schema_json: &str, dialect: &Dialect) -> Result<rx::Rx, SchemaError> {
    let x = compile_unbounded(schema_json, dialect, false)?;
    if x.has_graph() {
        return Err(SchemaError::limit(
            "",
            "a counted automaton (a string's pattern and length bound, a number's \
             multiples, a member count, or `contains` or `uniqueItems` over items) whose \
             regex would be far too long (the lazy index's tree keeps it as an automaton)",
        ));
    }
    if x.printed_len() > dialect.max_regex_len {
        return Err(SchemaError::limit(
            "",
            format!("the regex would be {} bytes long", x.printed_len()),
        ));
    }
    if x.nesting() > dialect.max_nesting {
        return Err(SchemaError::limit(
            "",
            format!("the regex would nest {} groups deep", x.nesting()),
        ));
    }
    Ok(x)
}

/// The draft `root` follows (3, 4, 6, 7, 2019 or 2020): the one its `$schema` names,
/// else the dialect's. (A `$schema` naming no draft is refused by the reader.)
fn document_draft(root: &Value, dialect: &Dialect) -> u16 {
    let named = root.get("$schema").and_then(Value::as_str).unwrap_or("");
    let drafts = [
        ("draft-03", 3),
        ("draft-04", 4),
        ("draft-06", 6),
        ("draft-07", 7),
        ("/2019-09/", 2019),
        ("/2020-12/", 2020),
    ];
    let own = drafts.iter().find(|(name, _)| named.contains(name));
    let default = if dialect.draft == Draft::Draft7 {
        7
    } else {
        2020
    };
    own.map_or(default, |&(_, n)| n)
}

/// The compiled language, before the size limits of its text or tree (`tree`: for
/// [`compile_ast`], see [`context::Ctx::tree`]).
fn compile_unbounded(
    schema_json: &str,
    dialect: &Dialect,
    tree: bool,
) -> Result<rx::Rx, SchemaError> {
    let root: Value = serde_json::from_str(schema_json)
        .map_err(|e| SchemaError::invalid("", format!("not JSON: {e}")))?;
    let mut ctx = context::Ctx::new(dialect);
    ctx.tree = tree;
    let draft = document_draft(&root, dialect);
    ctx.draft = draft;
    ctx.legacy_draft = if matches!(draft, 3 | 4 | 6) {
        draft as u8
    } else {
        0
    };
    ctx.integers_without_fraction =
        dialect.integers_without_fraction || matches!(ctx.legacy_draft, 3 | 4);
    let mut r = reader::Reader::new(&root, draft);
    r.check_meta_schema()?;
    let shape = r.read(&mut ctx, &root, "")?;
    let mut em = emit::Emitter::new(&mut ctx);
    em.value(&shape).map_err(|f| reader::fail_at("", f))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A string value's pattern and length bound stay an automaton in the tree past
    /// [`scalars::TREE_ELIMINATED`] states, where the text eliminates them to a regex
    /// (up to [`scalars::MAX_ELIMINATED`]); a key language is eliminated in both, and an
    /// infinite pattern under a bound past the text's limit is an automaton in both.
    #[test]
    fn trees_keep_string_automata_that_text_eliminates() {
        let d = Dialect::default();
        let graph =
            |schema: &str, tree: bool| compile_unbounded(schema, &d, tree).unwrap().has_graph();
        let value = r#"{"type":"string","pattern":"^[ab1]+$","maxLength":100}"#;
        assert!(graph(value, true) && !graph(value, false));
        let small = r#"{"type":"string","pattern":"^[ab1]+$","maxLength":40}"#;
        assert!(!graph(small, true));
        let long = r#"{"type":"string","pattern":"^[ab1]+$","maxLength":2000}"#;
        assert!(graph(long, true) && graph(long, false));
        let names = r#"{"type":"object","propertyNames":{"pattern":"^[ab1]+$","maxLength":100}}"#;
        assert!(!graph(names, true));
    }
}
