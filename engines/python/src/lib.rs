//! Python bindings of `tokensdfa-core`, imported as the module `tokensdfa`.
//!
//! Only conversion lives here: Python values in, core calls (with the GIL released while
//! building), results and errors out. Masks are written straight into the caller's int32
//! numpy buffer.
//!
//! A regex that cannot be compiled raises one of three `ValueError` subclasses, by the
//! core's error kind: `PatternError` (malformed), `UnsupportedPatternError` (a feature the
//! core lacks) and `LimitError` (a size limit was hit). Other bad arguments raise
//! `ValueError` itself.

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
    "Compiling the regex hit a size limit (nesting depth, NFA or DFA size)."
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
    #[new]
    #[pyo3(signature = (tokens, eos_id, special_ids))]
    fn new(tokens: Vec<Vec<u8>>, eos_id: u32, special_ids: Vec<u32>) -> PyResult<Self> {
        let refs: Vec<&[u8]> = tokens.iter().map(|t| t.as_slice()).collect();
        let inner = core::Vocabulary::new(&refs, eos_id, &special_ids).map_err(value_error)?;
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

    /// Build the token trie now (else the first Index builds it); returns the seconds the
    /// construction took, the same figure on every call.
    fn prepare(&self, py: Python<'_>) -> f64 {
        let inner = self.inner.clone();
        py.allow_threads(move || inner.trie_with_time().1)
    }

    /// Bytes held by the token strings plus, once prepared, the token trie.
    #[getter]
    fn memory_bytes(&self) -> usize {
        self.inner.memory_bytes()
    }
}

/// The methods both index classes share, written once over [`core::TokenAutomaton`]:
/// `token_automaton_methods!(Class { own methods })` emits the class's one `#[pymethods]`
/// block, its own methods followed by the shared ones. The class holds the automaton in
/// `inner` and the vocabulary's mask width in `words`.
macro_rules! token_automaton_methods {
    ($class:ident { $($own:tt)* }) => {
        #[pymethods]
        impl $class {
            $($own)*

            #[getter]
            fn initial_state(&self) -> u32 {
                self.inner.initial_state()
            }

            #[getter]
            fn num_states(&self) -> usize {
                self.inner.num_states()
            }

            #[getter]
            fn memory_bytes(&self) -> usize {
                self.inner.memory_bytes()
            }

            fn next_state(&self, state: u32, token: u32) -> Option<u32> {
                self.inner.next_state(state, token)
            }

            fn is_accepting(&self, state: u32) -> bool {
                self.inner.is_accepting(state)
            }

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
    /// runs only in their minimal tokenization). `threads` sizes the build's pool.
    #[new]
    #[pyo3(signature = (regex, vocab, mode = "exact", threads = None))]
    fn new(
        py: Python<'_>,
        regex: &str,
        vocab: &PyVocabulary,
        mode: &str,
        threads: Option<usize>,
    ) -> PyResult<Self> {
        let mode: core::Mode = mode.parse().map_err(value_error)?;
        let v = vocab.inner.clone();
        let regex = regex.to_owned();
        let inner = py
            .allow_threads(move || core::Index::with_threads(&regex, &v, mode, threads))
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
    m.add_class::<PyVocabulary>()?;
    m.add_class::<PyNaiveIndex>()?;
    m.add_class::<PyIndex>()?;
    m.add_class::<PyByteDfa>()?;
    let py = m.py();
    m.add("PatternError", py.get_type::<PatternError>())?;
    m.add(
        "UnsupportedPatternError",
        py.get_type::<UnsupportedPatternError>(),
    )?;
    m.add("LimitError", py.get_type::<LimitError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
