//! # tokensdfa-schema
//!
//! JSON Schema to regex, exactly: [`compile`] returns a regex (regex-syntax 0.8 syntax,
//! no look-around, no back-references) whose full matches are exactly the texts of the
//! [`Dialect`] whose JSON value is valid against the schema; or it refuses the schema
//! with a [`SchemaError`] that says why and where. [`compile_ast`] gives the same
//! language as the lazy index's regex tree ([`tokensdfa_core::Ast`]), which holds each
//! shared piece once where the text would repeat it.
//!
//! A schema validates *values*, a regex matches *texts*: the [`Dialect`] fixes how a
//! value is written (whitespace, escapes, numbers, key order) and which draft's rules
//! read a document that names none ([`Draft`]).
//!
//! ## The stages, one folder each
//!
//! A compilation reads, merges, then writes; each stage is a folder whose `mod.rs` maps it.
//! - `reading/`: the document into a shape: references (`$ref`, ids, anchors, the
//!   recursion bound), applicators (`allOf`, `anyOf`, `oneOf`, `not`, `if`), each schema
//!   object's own keywords, the dependency keywords and `unevaluatedProperties`, as the
//!   document's [`Draft`] defines them.
//! - `shapes/`: the intermediate form, a schema's instances split by JSON type (a union
//!   of alternatives per type, each a conjunction of constraints), and its algebra:
//!   intersection (`allOf`), exclusive union (`oneOf`), complement (`not`), one shape
//!   per structure (interning), and the languages of scalar constraints and of an
//!   object's undeclared keys, which the algebra decides emptiness with.
//! - `emitting/`: a shape into the regex tree of its JSON texts: values, arrays,
//!   objects in schema order, member counts and `uniqueItems` as counted automata, JSON
//!   string spellings, and the tree handed to the lazy index.
//! - `languages/`: the regular-language toolkit the stages build with, knowing nothing
//!   of schemas: character sets, the regex tree and its printer, character automata
//!   (intersection, complement, minimization) and state elimination back to regexes,
//!   exact decimals and numeric ranges, ECMA-262 patterns and `format` grammars.
//!
//! Stages depend downward: `languages/` on no stage, `shapes/` on `languages/`,
//! `reading/` and `emitting/` on both. Beside them sit [`dialect`] (the options),
//! `error` ([`SchemaError`]) and `context`, the state one compilation shares (the
//! dialect and draft, the caches of automata, patterns, formats, merges and shapes, the
//! work counters), which every stage takes.
//!
//! This crate builds on `tokensdfa-core` for what it shares with the lazy index: the
//! tree ([`tokensdfa_core::Ast`]) and the counted automata a tree carries
//! ([`tokensdfa_core::counted`]). The core knows nothing of schemas.

mod context;
pub mod dialect;
mod emitting;
mod error;
mod languages;
mod reading;
mod shapes;
#[cfg(test)]
mod testing;

use serde_json::Value;

pub use dialect::{Dialect, Draft, Escapes, Formats, Keys, NegativeZero, Numbers, Whitespace};
pub use emitting::rules::{Leaves, Part, SchemaGrammar, ANY_COMPACT, ANY_SPACED, START};
pub use error::SchemaError;

/// The regex of the dialect's texts valid against `schema_json`.
pub fn compile(schema_json: &str, dialect: &Dialect) -> Result<String, SchemaError> {
    compile_rx(schema_json, dialect).map(|x| languages::rx::print(&x))
}

/// The same language as [`compile`]'s regex, as the lazy index's tree: no regex text
/// printed or parsed. The same schemas are refused for the same reasons, except for
/// size: the tree holds each shared piece once, however often the text
/// would repeat it, so the text's `max_regex_len` and `max_nesting` do not apply. The
/// tree's own limits do: its distinct nodes (`max_tree_nodes`) and the text it stands
/// for (`max_tree_text_len`, unbounded by default). Many MaskBench schemas
/// (Kubernetes, GitHub) print hundreds of megabytes from trees of a few thousand nodes.
pub fn compile_ast(
    schema_json: &str,
    dialect: &Dialect,
) -> Result<tokensdfa_core::Ast, SchemaError> {
    let x = compile_unbounded(schema_json, dialect, true)?;
    tree_of(&x, dialect)
}

/// A schema's language for TokensDFA's pushdown mode: the texts of [`compile_ast`] and
/// more, since unconstrained values nest without bound ([`Dialect::any_depth`] does not
/// apply), and so do recursive `$ref`s, each a rule of the grammar
/// ([`Dialect::max_recursion`] does not apply), except where the recursion meets an
/// intersection, a complement, `oneOf`, `uniqueItems` or `propertyNames`, which take no
/// rule: such a schema is read again with recursion expanded `max_recursion` times.
/// Regular where the schema has neither (the same tree as [`compile_ast`]'s), else a
/// grammar ([`emitting::rules`]) whose terminals are given as `leaves` says. The same
/// schemas are refused, and also a counted automaton over values holding unconstrained
/// values; with [`Leaves::Text`], also a string's automaton beside one that the text's
/// reading cannot write as a regex.
pub fn compile_language(
    schema_json: &str,
    dialect: &Dialect,
    leaves: Leaves,
) -> Result<Language, SchemaError> {
    let (root, draft) = parse(schema_json, dialect)?;
    let reading = Reading {
        tree: true,
        leaves,
        ref_rules: true,
    };
    match language_of(&root, draft, dialect, reading) {
        Ok(language) => Ok(language),
        Err((_, true)) => language_of(
            &root,
            draft,
            dialect,
            Reading {
                ref_rules: false,
                ..reading
            },
        )
        .map_err(|(e, _)| e),
        Err((e, false)) => Err(e),
    }
}

/// How [`grammar_mode`] reads a schema: as a tree (string automata kept whole) or as
/// text would; terminals as `leaves`; recursive `$ref`s as rules or expanded.
#[derive(Clone, Copy)]
struct Reading {
    tree: bool,
    leaves: Leaves,
    ref_rules: bool,
}

/// [`grammar_mode`] as a tree, then as text where a string's automaton kept whole has
/// no regex for a terminal (the text's reading eliminates it, or refuses it as
/// `compile` does). On failure, whether the reading met a recursive `$ref`.
fn language_of(
    root: &Value,
    draft: Draft,
    dialect: &Dialect,
    reading: Reading,
) -> Result<Language, (SchemaError, bool)> {
    match grammar_mode(root, draft, dialect, reading) {
        Err(Failed::TreeOnly(_)) if reading.tree => {
            let text = Reading {
                tree: false,
                ..reading
            };
            grammar_mode(root, draft, dialect, text).map_err(Failed::into_error)
        }
        read => read.map_err(Failed::into_error),
    }
}

const AUTOMATON_BESIDE_ANY: &str = "a counted automaton beside an unconstrained value (a \
     grammar's regex terminals cannot hold it, and its text is too long)";

/// Why a [`grammar_mode`] reading gave no language, and whether it met a recursive
/// `$ref`: it kept an automaton only a tree can hold, or an error.
enum Failed {
    TreeOnly(bool),
    Error(SchemaError, bool),
}

impl Failed {
    fn into_error(self) -> (SchemaError, bool) {
        match self {
            Failed::TreeOnly(met) => (SchemaError::limit("", AUTOMATON_BESIDE_ANY), met),
            Failed::Error(e, met) => (e, met),
        }
    }
}

/// [`compile_language`]'s reading of `root` (see [`Reading`]).
fn grammar_mode(
    root: &Value,
    draft: Draft,
    dialect: &Dialect,
    reading: Reading,
) -> Result<Language, Failed> {
    let mut ctx = context::Ctx::new(dialect, draft);
    ctx.tree = reading.tree;
    ctx.rules = true;
    ctx.ref_rules = reading.ref_rules;
    let mut r = reading::Reader::new(root, draft);
    let read = r
        .check_meta_schema()
        .and_then(|()| r.read(&mut ctx, root, ""));
    let met = r.met_rules();
    let shape = read.map_err(|e| Failed::Error(e, met))?;
    let mut em = emitting::emit::Emitter::new(&mut ctx);
    let emitted = em.value(&shape).and_then(|x| {
        let bodies = r.rule_bodies().iter().map(|(&n, s)| Ok((n, em.value(s)?)));
        Ok((x, bodies.collect::<context::Step<Vec<_>>>()?))
    });
    let (x, mut bodies) = emitted.map_err(|f| Failed::Error(reading::fail_at("", f), met))?;
    if !x.has_rule() {
        return tree_of(&x, dialect)
            .map(Language::Regular)
            .map_err(|e| Failed::Error(e, met));
    }
    // a count over members holding unconstrained values has no cut into rules as an
    // automaton: the text's reading may write it out
    let tree_only = |b: &languages::rx::Rx| {
        (reading.tree && emitting::rules::graph_over_rule(b))
            || (b.has_graph() && reading.leaves == Leaves::Text)
    };
    if tree_only(&x) || bodies.iter().any(|(_, b)| tree_only(b)) {
        return Err(Failed::TreeOnly(met));
    }
    let used = em.any_rules;
    for n in [ANY_SPACED, ANY_COMPACT] {
        if used[(n - ANY_SPACED) as usize] {
            bodies.push((n, em.any_rule_body(n)));
        }
    }
    emitting::rules::lower(&x, &bodies, dialect, reading.leaves)
        .map(Language::Grammar)
        .map_err(|f| Failed::Error(reading::fail_at("", f), met))
}

/// What [`compile_language`] gives.
pub enum Language {
    /// No unconstrained value: the lazy index's tree, as [`compile_ast`] gives it.
    Regular(tokensdfa_core::Ast),
    /// A context-free grammar over regex terminals.
    Grammar(SchemaGrammar),
}

/// The tree of `x` within the tree's limits (see [`compile_ast`]).
fn tree_of(x: &languages::rx::Rx, dialect: &Dialect) -> Result<tokensdfa_core::Ast, SchemaError> {
    emitting::to_ast::bounded_ast(x, dialect).map_err(|f| reading::fail_at("", f))
}

fn compile_rx(schema_json: &str, dialect: &Dialect) -> Result<languages::rx::Rx, SchemaError> {
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

/// The draft `root` follows: the one its `$schema` names, else the dialect's. (A
/// `$schema` naming no draft is refused by the reader.)
fn document_draft(root: &Value, dialect: &Dialect) -> Draft {
    let named = root.get("$schema").and_then(Value::as_str).unwrap_or("");
    Draft::named_by(named).unwrap_or(dialect.draft)
}

/// The document and the draft it follows.
fn parse(schema_json: &str, dialect: &Dialect) -> Result<(Value, Draft), SchemaError> {
    let root: Value = serde_json::from_str(schema_json)
        .map_err(|e| SchemaError::invalid("", format!("not JSON: {e}")))?;
    let draft = document_draft(&root, dialect);
    Ok((root, draft))
}

/// The compiled language, before the size limits of its text or tree (`tree`: for
/// [`compile_ast`], see [`context::Ctx::tree`]).
fn compile_unbounded(
    schema_json: &str,
    dialect: &Dialect,
    tree: bool,
) -> Result<languages::rx::Rx, SchemaError> {
    let (root, draft) = parse(schema_json, dialect)?;
    let mut ctx = context::Ctx::new(dialect, draft);
    ctx.tree = tree;
    let mut r = reading::Reader::new(&root, draft);
    r.check_meta_schema()?;
    let shape = r.read(&mut ctx, &root, "")?;
    let mut em = emitting::emit::Emitter::new(&mut ctx);
    em.value(&shape).map_err(|f| reading::fail_at("", f))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A string value's pattern and length bound stay an automaton in the tree past
    /// [`crate::shapes::scalars::TREE_ELIMINATED`] states, where the text eliminates them to a
    /// regex (up to [`crate::languages::eliminate::MAX_ELIMINATED`]); a key language is
    /// eliminated in both, and an
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
