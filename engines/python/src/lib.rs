//! Python bindings of `tokensdfa-core`, imported as the module `tokensdfa`.
//!
//! Only conversion lives here: Python values in, core calls (with the GIL released while
//! building), results and errors out. Masks are written straight into the caller's int32
//! numpy buffer.
//!
//! A regex (or, for `schema_to_regex`, a JSON schema) that cannot be compiled raises one
//! of three `ValueError` subclasses, by the core's error kind: `PatternError`
//! (malformed), `UnsupportedPatternError` (a feature the core lacks) and `LimitError` (a
//! size limit was hit). Other bad arguments raise `ValueError` itself.

use std::sync::Arc;

use numpy::ndarray::ArrayView1;
use numpy::{PyArray1, PyReadwriteArray1};
use pyo3::create_exception;
use pyo3::exceptions::{PyIndexError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use tokensdfa_core as core;
use tokensdfa_core::TokenAutomaton;

create_exception!(
    tokensdfa,
    PatternError,
    PyValueError,
    "The regex does not parse or is malformed."
);
create_exception!(
    tokensdfa,
    UnsupportedPatternError,
    PyValueError,
    "The regex is valid but uses a feature tokensdfa does not implement (look-around, \
     back-references, Unicode word boundaries, matching invalid UTF-8)."
);
create_exception!(
    tokensdfa,
    LimitError,
    PyValueError,
    "Compiling the regex hit a size limit (nesting depth, NFA or DFA size, or an eager \
     build's work or mask budget)."
);

/// The Python exception of a core error, with the core's message.
fn value_error(e: core::Error) -> PyErr {
    let message = e.to_string();
    match e {
        core::Error::InvalidPattern(_) => PatternError::new_err(message),
        core::Error::Unsupported(_) => UnsupportedPatternError::new_err(message),
        core::Error::LimitExceeded(_) => LimitError::new_err(message),
        core::Error::Vocabulary(_) | core::Error::Option(_) => PyValueError::new_err(message),
    }
}

/// `IndexError` unless `state` is one of the `num_states` states.
fn check_state(state: u32, num_states: usize) -> PyResult<()> {
    if (state as usize) < num_states {
        Ok(())
    } else {
        Err(PyIndexError::new_err(format!("no state {state}")))
    }
}

/// Borrow the caller's int32 buffer as the u32 words the core writes.
fn mask_slice<'a>(
    out: &'a mut PyReadwriteArray1<'_, i32>,
    words: usize,
) -> PyResult<&'a mut [u32]> {
    let slice = out
        .as_slice_mut()
        .map_err(|_| PyValueError::new_err("mask buffer must be a contiguous int32 array"))?;
    if slice.len() != words {
        return Err(PyValueError::new_err(format!(
            "mask buffer has {} int32 words, the vocabulary needs {words}",
            slice.len()
        )));
    }
    // i32 and u32 have the same size and alignment; the core only sets bits.
    Ok(unsafe { std::slice::from_raw_parts_mut(slice.as_mut_ptr() as *mut u32, words) })
}

#[pyclass(name = "Vocabulary", module = "tokensdfa", frozen)]
struct PyVocabulary {
    inner: Arc<core::Vocabulary>,
}

#[pymethods]
impl PyVocabulary {
    /// `slices`: the regexes cutting the tokens into slices for the lazy index's shortcut
    /// (None: JSON string content by length, `tokensdfa.JSON_SLICES`).
    #[new]
    #[pyo3(signature = (tokens, eos_id, special_ids, slices = None))]
    fn new(
        tokens: Vec<Vec<u8>>,
        eos_id: u32,
        special_ids: Vec<u32>,
        slices: Option<Vec<String>>,
    ) -> PyResult<Self> {
        let refs: Vec<&[u8]> = tokens.iter().map(|t| t.as_slice()).collect();
        let slices =
            slices.unwrap_or_else(|| core::JSON_SLICES.iter().map(|s| s.to_string()).collect());
        let inner = core::Vocabulary::with_slices(&refs, eos_id, &special_ids, &slices)
            .map_err(value_error)?;
        Ok(PyVocabulary {
            inner: Arc::new(inner),
        })
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }

    #[getter]
    fn eos_id(&self) -> u32 {
        self.inner.eos_id()
    }

    #[getter]
    fn mask_words(&self) -> usize {
        self.inner.mask_words()
    }

    /// Build the token trie, the walk tries and the slices now (else the first index
    /// builds them); returns the seconds their construction took, the same figure on
    /// every call.
    fn prepare(&self, py: Python<'_>) -> f64 {
        let inner = self.inner.clone();
        py.allow_threads(move || inner.trie_with_time().1 + inner.prepared_with_time().1)
    }

    /// The slice patterns of this vocabulary.
    #[getter]
    fn slices(&self) -> Vec<String> {
        self.inner.slice_patterns().to_vec()
    }

    /// Bytes held by the token strings plus, once prepared, the tries.
    #[getter]
    fn memory_bytes(&self) -> usize {
        self.inner.memory_bytes()
    }
}

/// The methods the index classes share, written once over [`core::TokenAutomaton`]:
/// `token_automaton_methods!(Class { own methods })` emits the class's one `#[pymethods]`
/// block, its own methods followed by the shared ones. The class holds the automaton in
/// `inner` and the vocabulary's mask width in `words`. With `lazy Class { ... }` the
/// class brings its own `fill_mask` and `allowed` (the lazy index releases the GIL while
/// it computes a mask; the eager ones copy, where releasing it would cost more than the
/// copy).
macro_rules! token_automaton_methods {
    ($class:ident { $($own:tt)* }) => {
        token_automaton_methods!(lazy $class {
            $($own)*

            fn fill_mask(&self, state: u32, mut out: PyReadwriteArray1<'_, i32>) -> PyResult<()> {
                self.check_state(state)?;
                self.inner.fill_mask(state, mask_slice(&mut out, self.words)?);
                Ok(())
            }

            /// Sorted allowed token ids (EOS included where accepting), for tests and repros.
            fn allowed(&self, state: u32) -> PyResult<Vec<u32>> {
                self.check_state(state)?;
                Ok(self.inner.allowed(state))
            }
        });

        impl $class {
            /// The eager indexes are whole from construction.
            fn healthy(&self) -> PyResult<()> {
                Ok(())
            }
        }
    };
    (lazy $class:ident { $($own:tt)* }) => {
        #[pymethods]
        impl $class {
            $($own)*

            #[getter]
            fn initial_state(&self) -> u32 {
                self.inner.initial_state()
            }

            /// States so far (the lazy index: the start and each state `next_state` has
            /// returned).
            #[getter]
            fn num_states(&self) -> usize {
                self.inner.num_states()
            }

            #[getter]
            fn memory_bytes(&self) -> usize {
                self.inner.memory_bytes()
            }

            /// The state after `token`, or None if the token is not allowed (EOS and
            /// specials included).
            fn next_state(&self, state: u32, token: u32) -> PyResult<Option<u32>> {
                let next = self.inner.next_state(state, token);
                self.healthy()?;
                Ok(next)
            }

            fn is_accepting(&self, state: u32) -> bool {
                self.inner.is_accepting(state)
            }
        }

        impl $class {
            fn check_state(&self, state: u32) -> PyResult<()> {
                check_state(state, self.inner.num_states())
            }
        }
    };
}

#[pyclass(name = "NaiveIndex", module = "tokensdfa", frozen)]
struct PyNaiveIndex {
    inner: core::NaiveIndex,
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
struct PyIndex {
    inner: core::Index,
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
#[pyclass(name = "LazyIndex", module = "tokensdfa", frozen)]
struct PyLazyIndex {
    inner: Arc<core::LazyIndex>,
    words: usize,
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
            .allow_threads(move || core::schema::compile_ast(&schema, &dialect))
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
        d.set_item("trie_walks", s.trie_walks)?;
        d.set_item("nodes_visited", s.nodes_visited)?;
        d.set_item("slice_tests", s.slice_tests)?;
        d.set_item("slice_hits", s.slice_hits)?;
        d.set_item("product_pairs", s.product_pairs)?;
        d.set_item("run_verdicts", s.run_verdicts)?;
        d.set_item("pruned_masks", s.pruned_masks)?;
        d.set_item("kept_subtrees", s.kept_subtrees)?;
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
    fn healthy(&self) -> PyResult<()> {
        if self.inner.exceeded() {
            return Err(LimitError::new_err(
                "limit exceeded: the lazy index's NFA passed its walk limit \
                 (about two gigabytes); discard this index",
            ));
        }
        Ok(())
    }
}

/// The byte-level DFA of a regex (the automaton every index starts from), for the
/// differ's byte-granular questions: does a byte string keep a match reachable, is it a
/// full match.
#[pyclass(name = "ByteDfa", module = "tokensdfa", frozen)]
struct PyByteDfa {
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

/// The JSON-schema compiler's exception, by kind: PatternError (the schema is not valid
/// JSON or not a schema), UnsupportedPatternError (a keyword it cannot express exactly),
/// LimitError (the regex would exceed a limit).
fn schema_error(e: core::schema::SchemaError) -> PyErr {
    let message = e.to_string();
    match e {
        core::schema::SchemaError::InvalidSchema { .. } => PatternError::new_err(message),
        core::schema::SchemaError::Unsupported { .. } => UnsupportedPatternError::new_err(message),
        core::schema::SchemaError::LimitExceeded { .. } => LimitError::new_err(message),
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
/// "raw" (none) or "free-strings-only" (every escape in unconstrained strings, none in
/// constrained ones: xgrammar);
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
fn schema_to_regex(
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
    py.allow_threads(move || core::schema::compile(&schema, &dialect))
        .map_err(schema_error)
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
) -> PyResult<core::schema::Dialect> {
    use core::schema::{Dialect, Draft, Escapes, Formats, Keys, NegativeZero, Numbers, Whitespace};
    let defaults = Dialect::default();
    let dialect = Dialect {
        whitespace: named(
            "whitespace",
            whitespace,
            &[
                ("none", Whitespace::None),
                ("optional-space", Whitespace::OptionalSpace),
                (
                    "any",
                    Whitespace::Any {
                        max_run: max_whitespace_run,
                    },
                ),
            ],
        )?,
        draft: named(
            "draft",
            draft,
            &[
                ("2020-12", Draft::Draft2020),
                ("draft-07", Draft::Draft7),
                ("7", Draft::Draft7),
            ],
        )?,
        formats: named(
            "formats",
            formats,
            &[("assert", Formats::Assert), ("annotate", Formats::Annotate)],
        )?,
        escapes: named(
            "escapes",
            escapes,
            &[
                ("all", Escapes::All),
                ("required", Escapes::Required),
                ("minimal", Escapes::Minimal),
                ("raw", Escapes::Raw),
                ("free-strings-only", Escapes::FreeStringsOnly),
                ("minimal-unicode", Escapes::MinimalUnicode),
            ],
        )?,
        numbers: named(
            "numbers",
            numbers,
            &[
                ("decimal", Numbers::Decimal),
                ("exponent-where-exact", Numbers::ExponentWhereExact),
                ("exponent-when-unbounded", Numbers::ExponentWhenUnbounded),
            ],
        )?,
        integers_without_fraction: named(
            "integers",
            integers,
            &[("decimal", false), ("no-fraction", true)],
        )?,
        negative_zero: named(
            "negative_zero",
            negative_zero,
            &[
                ("allowed", NegativeZero::Allowed),
                ("unbounded-only", NegativeZero::UnboundedOnly),
                (
                    "with-fraction-when-bounded",
                    NegativeZero::WithFractionWhenBounded,
                ),
            ],
        )?,
        max_recursion: max_recursion.unwrap_or(defaults.max_recursion),
        undeclared_keys: named(
            "undeclared_keys",
            undeclared_keys,
            &[
                ("as-strings", None),
                ("minimal-unicode", Some(Escapes::MinimalUnicode)),
            ],
        )?,
        keys: named(
            "keys",
            keys,
            &[
                ("as-strings", Keys::AsStrings),
                ("canonical", Keys::Canonical),
                ("canonical-del-escaped", Keys::CanonicalDelEscaped),
            ],
        )?,
        max_regex_len: max_regex_bytes.unwrap_or(defaults.max_regex_len),
        any_depth: any_depth.unwrap_or(defaults.any_depth),
        ..defaults
    };
    Ok(dialect)
}

/// The dialect a dict of `schema_to_regex`'s keyword arguments names; ValueError for a
/// key it does not take.
fn dialect_from(options: Option<&Bound<'_, PyDict>>) -> PyResult<core::schema::Dialect> {
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

/// Parse `regex` with the dialect every index uses, without building anything: returns
/// None, or raises PatternError (it does not parse), UnsupportedPatternError (it uses a
/// feature the indexes lack) or LimitError (it nests too deep). A cheap validity check.
#[pyfunction]
fn check_pattern(regex: &str) -> PyResult<()> {
    core::dfa::parse(regex).map(|_| ()).map_err(value_error)
}

#[pymodule]
fn tokensdfa(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(check_pattern, m)?)?;
    m.add_function(wrap_pyfunction!(schema_to_regex, m)?)?;
    m.add_class::<PyVocabulary>()?;
    m.add_class::<PyNaiveIndex>()?;
    m.add_class::<PyIndex>()?;
    m.add_class::<PyLazyIndex>()?;
    m.add_class::<PyByteDfa>()?;
    let py = m.py();
    m.add("PatternError", py.get_type::<PatternError>())?;
    m.add(
        "UnsupportedPatternError",
        py.get_type::<UnsupportedPatternError>(),
    )?;
    m.add("LimitError", py.get_type::<LimitError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("JSON_SLICES", core::JSON_SLICES.to_vec())?;
    Ok(())
}
