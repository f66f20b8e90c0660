//! `tokensdfa.PushdownIndex`: TokensDFA's pushdown mode, a lazy index whose automaton is
//! a grammar's hash-consed Earley sets (the grammar crate's `pushdown` module). It is a
//! `LazyIndex` in every call (masks, steps, stats, batches); only how it is built differs.
//! `schema_grammar` shows the grammar a JSON schema is read as.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::PyDict;

use tokensdfa_core as core;
use tokensdfa_grammar as grammar;

use crate::grammar::{grammar_error, read};
use crate::indexes::PyLazyIndex;
use crate::schema::{dialect_from, schema_error};
use crate::vocab::PyVocabulary;

/// The pushdown mode of TokensDFA over a context-free grammar.
#[pyclass(name = "PushdownIndex", module = "tokensdfa", extends = PyLazyIndex, frozen)]
pub(crate) struct PyPushdownIndex;

#[pymethods]
impl PyPushdownIndex {
    /// The index of `text`, a grammar in `notation` ("gbnf", "lark" or "ebnf"), read as
    /// the reference reads it by default (every terminal at every length, `%ignore` text
    /// around every terminal): the reference's masks at every state. `item_budget`: most
    /// Earley items one new set may create (default 50 million); `cache_limit_bytes`
    /// caps the memoized masks. GrammarError / UnsupportedGrammarError for a grammar it
    /// cannot read (an empty language included); past a bound, later calls raise
    /// LimitError.
    #[staticmethod]
    #[pyo3(signature = (text, vocab, notation = "gbnf", item_budget = None,
                        cache_limit_bytes = None))]
    fn from_grammar(
        py: Python<'_>,
        text: &str,
        vocab: &PyVocabulary,
        notation: &str,
        item_budget: Option<usize>,
        cache_limit_bytes: Option<usize>,
    ) -> PyResult<Py<PyPushdownIndex>> {
        let g = read(text, notation)?;
        let opts = core::LazyOptions {
            cache_limit: cache_limit_bytes.unwrap_or(core::DEFAULT_CACHE_LIMIT),
            ..core::LazyOptions::default()
        };
        let budget = item_budget.unwrap_or(grammar::GrammarOptions::default().item_budget);
        let v = vocab.inner.clone();
        let inner = py
            .allow_threads(move || grammar::pushdown_index(&g, &v, opts, budget))
            .map_err(grammar_error)?;
        wrap(py, inner, vocab)
    }

    /// The index of a JSON schema compiled by the schema compiler's grammar mode: the
    /// texts of `LazyIndex.from_schema(schema, vocab, dialect)` and those nesting
    /// unconstrained values deeper than its `any_depth`, or recursive `$ref`s deeper
    /// than its `max_recursion` (neither is read here). A schema with neither is
    /// regular and gets `from_schema`'s automaton.
    /// PatternError / UnsupportedPatternError / LimitError as `from_schema`;
    /// GrammarError where the grammar's terminals fail the core's limits. The arguments
    /// are `LazyIndex.from_schema`'s, then `from_grammar`'s `item_budget`.
    #[staticmethod]
    #[pyo3(signature = (schema, vocab, dialect = None, cache_limit_bytes = None,
                        item_budget = None))]
    fn from_schema(
        py: Python<'_>,
        schema: &str,
        vocab: &PyVocabulary,
        dialect: Option<&Bound<'_, PyDict>>,
        cache_limit_bytes: Option<usize>,
        item_budget: Option<usize>,
    ) -> PyResult<Py<PyPushdownIndex>> {
        let dialect = dialect_from(dialect)?;
        let opts = core::LazyOptions {
            cache_limit: cache_limit_bytes.unwrap_or(core::DEFAULT_CACHE_LIMIT),
            ..core::LazyOptions::default()
        };
        let budget = item_budget.unwrap_or(grammar::GrammarOptions::default().item_budget);
        let v = vocab.inner.clone();
        let schema = schema.to_owned();
        let inner = py
            .allow_threads(move || {
                grammar::schema_pushdown_index(&schema, &dialect, &v, opts, budget)
            })
            .map_err(index_error)?;
        wrap(py, inner, vocab)
    }
}

/// The grammar `PushdownIndex.from_schema` reads `schema` as, written in Lark; None
/// where the schema is regular (no unconstrained value). Its terminals are regex text:
/// LimitError where a string's counted automaton has none short enough (`from_schema`
/// keeps that terminal as the compiler's tree).
#[pyfunction]
#[pyo3(signature = (schema, dialect = None))]
pub(crate) fn schema_grammar(
    schema: &str,
    dialect: Option<&Bound<'_, PyDict>>,
) -> PyResult<Option<String>> {
    let dialect = dialect_from(dialect)?;
    let g =
        grammar::schema_language(schema, &dialect, grammar::Leaves::Text).map_err(index_error)?;
    g.map(|g| grammar::to_lark(&g))
        .transpose()
        .map_err(grammar_error)
}

fn index_error(e: grammar::SchemaIndexError) -> PyErr {
    match e {
        grammar::SchemaIndexError::Schema(e) => schema_error(e),
        grammar::SchemaIndexError::Grammar(e) => grammar_error(e),
    }
}

fn wrap(
    py: Python<'_>,
    inner: core::LazyIndex,
    vocab: &PyVocabulary,
) -> PyResult<Py<PyPushdownIndex>> {
    let base = PyLazyIndex {
        inner: Arc::new(inner),
        words: vocab.inner.mask_words(),
    };
    Py::new(
        py,
        PyClassInitializer::from(base).add_subclass(PyPushdownIndex),
    )
}
