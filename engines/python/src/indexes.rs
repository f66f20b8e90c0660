//! The index classes: `NaiveIndex`, `Index`, `LazyIndex` and `ByteDfa`.

use std::sync::Arc;

use numpy::ndarray::ArrayView1;
use numpy::{PyArray1, PyReadwriteArray1};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use tokensdfa_core as core;
use tokensdfa_core::TokenAutomaton;
use tokensdfa_schema as schema;

use crate::schema::{dialect_from, schema_error};
use crate::vocab::PyVocabulary;
use crate::{check_state, mask_slice, value_error, LimitError};

#[pyclass(name = "NaiveIndex", module = "tokensdfa", frozen)]
pub(crate) struct PyNaiveIndex {
    pub(crate) inner: core::NaiveIndex,
    words: usize,
}

token_automaton_methods!(PyNaiveIndex {
    #[new]
    fn new(py: Python<'_>, regex: &str, vocab: &PyVocabulary) -> PyResult<Self> {
        let v = vocab.inner.clone();
        let regex = regex.to_owned();
        let inner = py
            .allow_threads(move || core::NaiveIndex::new(&regex, &v))
            .map_err(value_error)?;
        Ok(PyNaiveIndex {
            inner,
            words: vocab.inner.mask_words(),
        })
    }
});

#[pyclass(name = "Index", module = "tokensdfa", frozen)]
pub(crate) struct PyIndex {
    pub(crate) inner: core::Index,
    words: usize,
}

token_automaton_methods!(PyIndex {
    /// `mode` is "exact" (masks equal the naive index's) or "canonical_literals" (literal
    /// runs only in their minimal tokenization). `threads` sizes the build's pool. The
    /// build is bounded (LimitError past a bound): `max_work` trie nodes and product pairs
    /// visited over all states (default 3e9, about 20 s on two cores), `max_dfa_bytes`
    /// for determinization (default 256 MiB, about 12 s), `max_mask_bytes` of distinct
    /// masks (default 2 GiB).
    #[new]
    #[pyo3(signature = (
        regex, vocab, mode = "exact", threads = None, max_work = None, max_dfa_bytes = None,
        max_mask_bytes = None
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        regex: &str,
        vocab: &PyVocabulary,
        mode: &str,
        threads: Option<usize>,
        max_work: Option<u64>,
        max_dfa_bytes: Option<usize>,
        max_mask_bytes: Option<usize>,
    ) -> PyResult<Self> {
        let mode: core::Mode = mode.parse().map_err(value_error)?;
        let d = core::Limits::default();
        let limits = core::Limits {
            work: max_work.unwrap_or(d.work),
            dfa_bytes: max_dfa_bytes.unwrap_or(d.dfa_bytes),
            mask_bytes: max_mask_bytes.unwrap_or(d.mask_bytes),
        };
        let v = vocab.inner.clone();
        let regex = regex.to_owned();
        let inner = py
            .allow_threads(move || core::Index::with_limits(&regex, &v, mode, threads, limits))
            .map_err(value_error)?;
        Ok(PyIndex {
            inner,
            words: vocab.inner.mask_words(),
        })
    }

    /// A read-only int32 numpy view of the state's stored mask (no copy); it keeps the
    /// index alive.
    fn mask_view<'py>(slf: Bound<'py, Self>, state: u32) -> PyResult<Bound<'py, PyArray1<i32>>> {
        let this = slf.get();
        this.check_state(state)?;
        let words = this.inner.mask(state);
        // SAFETY: the index is frozen and never mutated, and `container` keeps it alive
        // for as long as the array exists; u32 and i32 share size and alignment.
        let view = unsafe { ArrayView1::from_shape_ptr(words.len(), words.as_ptr() as *const i32) };
        let arr = unsafe { PyArray1::borrow_from_array(&view, slf.clone().into_any()) };
        arr.getattr("flags")?.setattr("writeable", false)?;
        Ok(arr)
    }

    /// The text the regex forces from `state` (empty where EOS or two bytes are possible).
    fn forced_bytes<'py>(&self, py: Python<'py>, state: u32) -> PyResult<Bound<'py, PyBytes>> {
        self.check_state(state)?;
        Ok(PyBytes::new(py, &self.inner.forced_bytes(state)))
    }

    /// Figures of each construction stage: counts, and seconds per stage.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.inner.stats();
        let d = PyDict::new(py);
        d.set_item("mode", s.mode)?;
        d.set_item("threads", s.threads)?;
        d.set_item("dead_bytes", s.dead_bytes)?;
        d.set_item("byte_classes", s.byte_classes)?;
        d.set_item("text_tokens", s.text_tokens)?;
        d.set_item("tokens_dropped", s.tokens_dropped)?;
        d.set_item("token_classes", s.token_classes)?;
        d.set_item("vocab_trie_nodes", s.vocab_trie_nodes)?;
        d.set_item("class_trie_nodes", s.class_trie_nodes)?;
        d.set_item("dfa_states", s.dfa_states)?;
        d.set_item("states", s.states)?;
        d.set_item("distinct_masks", s.distinct_masks)?;
        d.set_item("transitions_stored", s.transitions_stored)?;
        d.set_item("muted_literals", s.muted_literals)?;
        d.set_item("ghosts", s.ghosts)?;
        d.set_item("work", s.work)?;
        d.set_item("slice_hits", s.slice_hits)?;
        d.set_item("slice_skips", s.slice_skips)?;
        d.set_item("vocab_prepare_s", s.vocab_prepare_s)?;
        d.set_item("dfa_s", s.dfa_s)?;
        d.set_item("mute_s", s.mute_s)?;
        d.set_item("classes_s", s.classes_s)?;
        d.set_item("walk_s", s.walk_s)?;
        d.set_item("masks_s", s.masks_s)?;
        d.set_item("total_s", s.total_s)?;
        Ok(d)
    }
});

/// The token-level automaton computed lazily: a state's mask on its first visit,
/// memoized after (see the core's `lazy` module).
#[pyclass(name = "LazyIndex", module = "tokensdfa", frozen, subclass)]
pub(crate) struct PyLazyIndex {
    pub(crate) inner: Arc<core::LazyIndex>,
    pub(crate) words: usize,
}

token_automaton_methods!(lazy PyLazyIndex {
    /// `mode` must be "exact" (canonical_literals needs the whole regex: ValueError).
    /// `slices` turns the slice shortcut on or off (same masks either way);
    /// `cache_limit_bytes` caps the memoized masks (default 1 GiB; past it the least
    /// recently read are dropped and recomputed when visited again).
    #[new]
    #[pyo3(signature = (regex, vocab, mode = "exact", slices = true, cache_limit_bytes = None))]
    fn new(
        py: Python<'_>,
        regex: &str,
        vocab: &PyVocabulary,
        mode: &str,
        slices: bool,
        cache_limit_bytes: Option<usize>,
    ) -> PyResult<Self> {
        let mode: core::Mode = mode.parse().map_err(value_error)?;
        let opts = core::LazyOptions {
            slices,
            cache_limit: cache_limit_bytes.unwrap_or(core::DEFAULT_CACHE_LIMIT),
            ..core::LazyOptions::default()
        };
        let v = vocab.inner.clone();
        let regex = regex.to_owned();
        let inner = py
            .allow_threads(move || core::LazyIndex::with_options(&regex, &v, mode, opts))
            .map_err(value_error)?;
        Ok(PyLazyIndex {
            inner: Arc::new(inner),
            words: vocab.inner.mask_words(),
        })
    }

    /// The index of a JSON schema compiled by the schema compiler straight into the regex
    /// tree (no regex text printed or parsed): the same language as
    /// `LazyIndex(schema_to_regex(schema, **dialect), vocab)`, and the same schemas
    /// refused (PatternError, UnsupportedPatternError, LimitError). `dialect`: a dict of
    /// `schema_to_regex`'s keyword arguments.
    #[staticmethod]
    #[pyo3(signature = (schema, vocab, dialect = None, cache_limit_bytes = None))]
    fn from_schema(
        py: Python<'_>,
        schema: &str,
        vocab: &PyVocabulary,
        dialect: Option<&Bound<'_, PyDict>>,
        cache_limit_bytes: Option<usize>,
    ) -> PyResult<Self> {
        let dialect = dialect_from(dialect)?;
        let opts = core::LazyOptions {
            slices: true,
            cache_limit: cache_limit_bytes.unwrap_or(core::DEFAULT_CACHE_LIMIT),
            ..core::LazyOptions::default()
        };
        let v = vocab.inner.clone();
        let schema = schema.to_owned();
        let ast = py
            .allow_threads(move || schema::compile_ast(&schema, &dialect))
            .map_err(schema_error)?;
        let v2 = v.clone();
        let inner = py
            .allow_threads(move || core::LazyIndex::from_ast(ast, &v2, opts))
            .map_err(value_error)?;
        Ok(PyLazyIndex {
            inner: Arc::new(inner),
            words: v.mask_words(),
        })
    }

    /// Write the state's mask into `out`: a copy when memoized, else computed with the
    /// GIL released.
    fn fill_mask(
        &self,
        py: Python<'_>,
        state: u32,
        mut out: PyReadwriteArray1<'_, i32>,
    ) -> PyResult<()> {
        self.check_state(state)?;
        self.healthy()?;
        let slice = mask_slice(&mut out, self.words)?;
        if !self.inner.fill_cached(state, slice) {
            let inner = self.inner.clone();
            py.allow_threads(move || inner.fill_mask(state, slice));
        }
        self.healthy()
    }

    /// Sorted allowed token ids (EOS included where accepting), for tests and repros.
    fn allowed(&self, py: Python<'_>, state: u32) -> PyResult<Vec<u32>> {
        self.check_state(state)?;
        let inner = self.inner.clone();
        let allowed = py.allow_threads(move || inner.allowed(state));
        self.healthy()?;
        Ok(allowed)
    }

    /// The text the regex forces from `state` (empty where EOS or two bytes are possible).
    fn forced_bytes<'py>(&self, py: Python<'py>, state: u32) -> PyResult<Bound<'py, PyBytes>> {
        self.check_state(state)?;
        let forced = self.inner.forced_bytes(state);
        self.healthy()?;
        Ok(PyBytes::new(py, &forced))
    }

    /// Counters so far: states, DFA states, walks, nodes visited, slice tests and hits,
    /// cache bytes and evictions, seconds in determinization and in mask computations.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.inner.stats();
        let d = PyDict::new(py);
        d.set_item("mode", "exact")?;
        d.set_item("states", s.states)?;
        d.set_item("dfa_states", s.dfa_states)?;
        d.set_item("lazy_dfa", s.lazy_dfa)?;
        d.set_item("nfa_states", s.nfa_states)?;
        d.set_item("byte_classes", s.byte_classes)?;
        d.set_item("masks_computed", s.masks_computed)?;
        d.set_item("helpers", s.helpers)?;
        d.set_item("helper_masks", s.helper_masks)?;
        d.set_item("trie_walks", s.trie_walks)?;
        d.set_item("nodes_visited", s.nodes_visited)?;
        d.set_item("slice_tests", s.slice_tests)?;
        d.set_item("slice_hits", s.slice_hits)?;
        d.set_item("product_pairs", s.product_pairs)?;
        d.set_item("run_verdicts", s.run_verdicts)?;
        d.set_item("pruned_masks", s.pruned_masks)?;
        d.set_item("kept_subtrees", s.kept_subtrees)?;
        d.set_item("survived_subtrees", s.survived_subtrees)?;
        d.set_item("cache_bytes", s.cache_bytes)?;
        d.set_item("cached_masks", s.cached_masks)?;
        d.set_item("evictions", s.evictions)?;
        d.set_item("dfa_bytes", s.dfa_bytes)?;
        d.set_item("build_s", s.build_s)?;
        d.set_item("fast_parse", s.fast_parse)?;
        d.set_item("parse_s", s.parse_s)?;
        d.set_item("compile_s", s.compile_s)?;
        d.set_item("transitions_computed", s.transitions_computed)?;
        d.set_item("determinize_s", s.determinize_s)?;
        d.set_item("walk_s", s.walk_s)?;
        d.set_item("slice_s", s.slice_s)?;
        d.set_item("mask_s", s.mask_s)?;
        Ok(d)
    }
});

impl PyLazyIndex {
    /// LimitError once a walk has passed the NFA's limit (the core's
    /// `LazyIndex::exceeded`): the index's masks and states may be wrong from then on, so
    /// every later call fails too, and the caller discards the index.
    pub(crate) fn healthy(&self) -> PyResult<()> {
        if self.inner.exceeded() {
            return Err(LimitError::new_err(
                "limit exceeded: the lazy index's automaton passed its walk limit \
                 (about two gigabytes; for a grammar, also an Earley item budget); \
                 discard this index",
            ));
        }
        Ok(())
    }
}

/// The byte-level DFA of a regex (the automaton every index starts from), for the
/// differ's byte-granular questions: does a byte string keep a match reachable, is it a
/// full match.
#[pyclass(name = "ByteDfa", module = "tokensdfa", frozen)]
pub(crate) struct PyByteDfa {
    inner: core::ByteDfa,
}

#[pymethods]
impl PyByteDfa {
    #[new]
    fn new(py: Python<'_>, regex: &str) -> PyResult<Self> {
        let regex = regex.to_owned();
        let inner = py
            .allow_threads(move || core::ByteDfa::from_regex(&regex))
            .map_err(value_error)?;
        Ok(PyByteDfa { inner })
    }

    #[getter]
    fn initial_state(&self) -> u32 {
        0
    }

    #[getter]
    fn num_states(&self) -> usize {
        self.inner.num_states()
    }

    /// The state after `data`, or None once no full match is reachable.
    fn walk(&self, state: u32, data: &[u8]) -> PyResult<Option<u32>> {
        self.check_state(state)?;
        let next = self.inner.walk(state, data);
        Ok((next != core::dfa::DEAD).then_some(next))
    }

    fn is_accepting(&self, state: u32) -> PyResult<bool> {
        self.check_state(state)?;
        Ok(self.inner.is_accepting(state))
    }
}

impl PyByteDfa {
    fn check_state(&self, state: u32) -> PyResult<()> {
        check_state(state, self.inner.num_states())
    }
}
