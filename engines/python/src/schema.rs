//! `schema_to_regex` and the dialect options it shares with `LazyIndex.from_schema`.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use tokensdfa_schema as schema;
use tokensdfa_schema::{Dialect, Draft, Escapes, Formats, Keys, NegativeZero, Numbers, Whitespace};

use crate::{LimitError, PatternError, UnsupportedPatternError};

/// The JSON-schema compiler's exception, by kind: PatternError (the schema is not valid
/// JSON or not a schema), UnsupportedPatternError (a keyword it cannot express exactly),
/// LimitError (the regex would exceed a limit).
pub(crate) fn schema_error(e: schema::SchemaError) -> PyErr {
    let message = e.to_string();
    match e {
        schema::SchemaError::InvalidSchema { .. } => PatternError::new_err(message),
        schema::SchemaError::Unsupported { .. } => UnsupportedPatternError::new_err(message),
        schema::SchemaError::LimitExceeded { .. } => LimitError::new_err(message),
    }
}

/// The value `got` names in `table`; ValueError naming `what` and the names known.
fn named<T: Copy>(what: &str, got: &str, table: &[(&str, T)]) -> PyResult<T> {
    table
        .iter()
        .find(|(n, _)| *n == got)
        .map(|&(_, v)| v)
        .ok_or_else(|| {
            let known: Vec<&str> = table.iter().map(|&(n, _)| n).collect();
            PyValueError::new_err(format!("{what} {got:?} is not one of {}", known.join(", ")))
        })
}

/// The regex whose full matches are exactly the JSON texts valid against `schema` (a
/// JSON document) in the named dialect: `whitespace` "none", "optional-space" (one
/// optional space after `,` and `:`, as outlines-core) or "any" (JSON whitespace between
/// tokens, runs of at most `max_whitespace_run` if given); `draft` for a schema without
/// `$schema`; `formats` "assert" or "annotate"; `escapes` "all", "required" or
/// "minimal" (llguidance's: U+007F escaped too, `"` and `\` only as `\"` and `\\`),
/// "raw" (none; an `enum` or `const` listing a string that needs one is refused) or
/// "free-strings-only" (every escape in unconstrained strings, none in constrained ones,
/// `enum` and `const` strings in one spelling, as "canonical-del-escaped" keys: xgrammar);
/// `numbers` "decimal", "exponent-where-exact" or "exponent-when-unbounded"; `integers`
/// "decimal" (`3.0` is an integer) or "no-fraction"; `negative_zero` "allowed",
/// "unbounded-only" (no `-0`, `-0.0` on bounded numbers, as llguidance) or
/// "with-fraction-when-bounded" (never a bare `-0` on integers or bounded numbers, as
/// xgrammar); `keys` "as-strings" (declared keys spelled as `escapes` says) or
/// "canonical" (one spelling, as `json.dumps(ensure_ascii=False)`: llguidance) or
/// "canonical-del-escaped" (U+007F as `\u007f` too: xgrammar); `undeclared_keys`
/// "as-strings" or "minimal-unicode" (every `\uXXXX` escape too: llguidance), which
/// `escapes` also takes; `max_recursion`, how often a recursive `$ref` is entered inside
/// itself (default 3); `any_depth`, how deeply a value the schema leaves unconstrained
/// nests arrays and objects (default 2); a regex longer than `max_regex_bytes` (default
/// 4 MiB) is refused. Raises PatternError, UnsupportedPatternError or LimitError (see
/// `schema_error`).
#[pyfunction]
#[pyo3(signature = (
    schema, whitespace = "none", max_whitespace_run = None, draft = "2020-12",
    formats = "assert", escapes = "all", numbers = "decimal", max_regex_bytes = None,
    any_depth = None, integers = "decimal", negative_zero = "allowed", max_recursion = None,
    keys = "as-strings", undeclared_keys = "as-strings"
))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn schema_to_regex(
    py: Python<'_>,
    schema: &str,
    whitespace: &str,
    max_whitespace_run: Option<u32>,
    draft: &str,
    formats: &str,
    escapes: &str,
    numbers: &str,
    max_regex_bytes: Option<usize>,
    any_depth: Option<u32>,
    integers: &str,
    negative_zero: &str,
    max_recursion: Option<u32>,
    keys: &str,
    undeclared_keys: &str,
) -> PyResult<String> {
    let dialect = dialect_of(
        whitespace,
        max_whitespace_run,
        draft,
        formats,
        escapes,
        numbers,
        max_regex_bytes,
        any_depth,
        integers,
        negative_zero,
        max_recursion,
        keys,
        undeclared_keys,
    )?;
    let schema = schema.to_owned();
    py.allow_threads(move || schema::compile(&schema, &dialect))
        .map_err(schema_error)
}

/// The names of each dialect option's values, as `schema_to_regex` takes them.
const DRAFTS: [(&str, Draft); 3] = [
    ("2020-12", Draft::Draft2020),
    ("draft-07", Draft::Draft7),
    ("7", Draft::Draft7),
];
const FORMATS: [(&str, Formats); 2] =
    [("assert", Formats::Assert), ("annotate", Formats::Annotate)];
const ESCAPES: [(&str, Escapes); 6] = [
    ("all", Escapes::All),
    ("required", Escapes::Required),
    ("minimal", Escapes::Minimal),
    ("raw", Escapes::Raw),
    ("free-strings-only", Escapes::FreeStringsOnly),
    ("minimal-unicode", Escapes::MinimalUnicode),
];
const NUMBERS: [(&str, Numbers); 3] = [
    ("decimal", Numbers::Decimal),
    ("exponent-where-exact", Numbers::ExponentWhereExact),
    ("exponent-when-unbounded", Numbers::ExponentWhenUnbounded),
];
const INTEGERS_WITHOUT_FRACTION: [(&str, bool); 2] = [("decimal", false), ("no-fraction", true)];
const NEGATIVE_ZERO: [(&str, NegativeZero); 3] = [
    ("allowed", NegativeZero::Allowed),
    ("unbounded-only", NegativeZero::UnboundedOnly),
    (
        "with-fraction-when-bounded",
        NegativeZero::WithFractionWhenBounded,
    ),
];
const UNDECLARED_KEYS: [(&str, Option<Escapes>); 2] = [
    ("as-strings", None),
    ("minimal-unicode", Some(Escapes::MinimalUnicode)),
];
const KEYS: [(&str, Keys); 3] = [
    ("as-strings", Keys::AsStrings),
    ("canonical", Keys::Canonical),
    ("canonical-del-escaped", Keys::CanonicalDelEscaped),
];

/// The whitespace `whitespace` names, runs of at most `max_run` for "any".
fn whitespace_of(whitespace: &str, max_run: Option<u32>) -> PyResult<Whitespace> {
    named(
        "whitespace",
        whitespace,
        &[
            ("none", Whitespace::None),
            ("optional-space", Whitespace::OptionalSpace),
            ("any", Whitespace::Any { max_run }),
        ],
    )
}

/// The dialect `schema_to_regex`'s keyword arguments name (see there).
#[allow(clippy::too_many_arguments)]
fn dialect_of(
    whitespace: &str,
    max_whitespace_run: Option<u32>,
    draft: &str,
    formats: &str,
    escapes: &str,
    numbers: &str,
    max_regex_bytes: Option<usize>,
    any_depth: Option<u32>,
    integers: &str,
    negative_zero: &str,
    max_recursion: Option<u32>,
    keys: &str,
    undeclared_keys: &str,
) -> PyResult<Dialect> {
    let defaults = Dialect::default();
    Ok(Dialect {
        whitespace: whitespace_of(whitespace, max_whitespace_run)?,
        draft: named("draft", draft, &DRAFTS)?,
        formats: named("formats", formats, &FORMATS)?,
        escapes: named("escapes", escapes, &ESCAPES)?,
        numbers: named("numbers", numbers, &NUMBERS)?,
        integers_without_fraction: named("integers", integers, &INTEGERS_WITHOUT_FRACTION)?,
        negative_zero: named("negative_zero", negative_zero, &NEGATIVE_ZERO)?,
        max_recursion: max_recursion.unwrap_or(defaults.max_recursion),
        undeclared_keys: named("undeclared_keys", undeclared_keys, &UNDECLARED_KEYS)?,
        keys: named("keys", keys, &KEYS)?,
        max_regex_len: max_regex_bytes.unwrap_or(defaults.max_regex_len),
        any_depth: any_depth.unwrap_or(defaults.any_depth),
        ..defaults
    })
}

/// The dialect a dict of `schema_to_regex`'s keyword arguments names; ValueError for a
/// key it does not take.
pub(crate) fn dialect_from(options: Option<&Bound<'_, PyDict>>) -> PyResult<Dialect> {
    const KNOWN: [&str; 13] = [
        "whitespace",
        "max_whitespace_run",
        "draft",
        "formats",
        "escapes",
        "numbers",
        "max_regex_bytes",
        "any_depth",
        "integers",
        "negative_zero",
        "max_recursion",
        "keys",
        "undeclared_keys",
    ];
    let get = |key: &str| -> PyResult<Option<Bound<'_, PyAny>>> {
        match options {
            Some(d) => d.get_item(key),
            None => Ok(None),
        }
    };
    if let Some(d) = options {
        for key in d.keys() {
            let key: String = key.extract()?;
            if !KNOWN.contains(&key.as_str()) {
                return Err(PyValueError::new_err(format!(
                    "dialect option {key:?} is not one of {}",
                    KNOWN.join(", ")
                )));
            }
        }
    }
    let text = |key: &str, default: &str| -> PyResult<String> {
        Ok(get(key)?
            .map(|v| v.extract())
            .transpose()?
            .unwrap_or_else(|| default.to_owned()))
    };
    let number =
        |key: &str| -> PyResult<Option<u64>> { get(key)?.map(|v| v.extract()).transpose() };
    dialect_of(
        &text("whitespace", "none")?,
        number("max_whitespace_run")?.map(|n| n as u32),
        &text("draft", "2020-12")?,
        &text("formats", "assert")?,
        &text("escapes", "all")?,
        &text("numbers", "decimal")?,
        number("max_regex_bytes")?.map(|n| n as usize),
        number("any_depth")?.map(|n| n as u32),
        &text("integers", "decimal")?,
        &text("negative_zero", "allowed")?,
        number("max_recursion")?.map(|n| n as u32),
        &text("keys", "as-strings")?,
        &text("undeclared_keys", "as-strings")?,
    )
}
