//! `tokensdfa.PushdownIndex`: TokensDFA's pushdown mode, a lazy index whose automaton is
//! a grammar's hash-consed Earley sets (the grammar crate's `pushdown` module). It is a
//! `LazyIndex` in every call (masks, steps, stats, batches); only how it is built differs.

use std::sync::Arc;

use pyo3::prelude::*;

use tokensdfa_core as core;
use tokensdfa_grammar as grammar;

use crate::grammar::{grammar_error, read};
use crate::indexes::PyLazyIndex;
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
        let base = PyLazyIndex {
            inner: Arc::new(inner),
            words: vocab.inner.mask_words(),
        };
        Py::new(
            py,
            PyClassInitializer::from(base).add_subclass(PyPushdownIndex),
        )
    }
}
