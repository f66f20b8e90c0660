//! Python bindings of `tokensdfa-core` (the indexes), `tokensdfa-schema` (the JSON
//! schema compiler) and `tokensdfa-grammar` (grammar front ends, writers and the
//! context-free reference, in `grammar`), imported as the module `tokensdfa`, typed by
//! `tokensdfa.pyi` beside this crate's `Cargo.toml`.
//!
//! Only conversion lives here: Python values in, core calls (with the GIL released while
//! building), results and errors out. Masks are written straight into the caller's int32
//! numpy buffer.
//!
//! A regex (or, for `schema_to_regex`, a JSON schema) that cannot be compiled raises one
//! of three `ValueError` subclasses, by the core's error kind: `PatternError`
//! (malformed), `UnsupportedPatternError` (a feature the core lacks) and `LimitError` (a
//! size limit was hit). Other bad arguments raise `ValueError` itself. Grammars have
//! their own kinds (`GrammarError`, `UnsupportedGrammarError`, `BudgetError`; see
//! `grammar`).

use numpy::PyReadwriteArray1;
use pyo3::create_exception;
use pyo3::exceptions::{PyIndexError, PyValueError};
use pyo3::prelude::*;

use tokensdfa_core as core;

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

mod batch;
mod grammar;
mod indexes;
mod pushdown;
mod schema;
mod vocab;

use grammar::{
    grammar_accepts, grammar_reductions, grammar_samples, grammar_summary, grammar_to_gbnf,
    grammar_to_kbnf, grammar_to_lark, grammar_to_lark_scannerless, BudgetError, GrammarError,
    PyNaiveGrammarIndex, UnsupportedGrammarError,
};
use indexes::{PyByteDfa, PyIndex, PyLazyIndex, PyNaiveIndex};
use schema::schema_to_regex;
use vocab::PyVocabulary;

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
    m.add_function(wrap_pyfunction!(batch::fill_masks, m)?)?;
    m.add_function(wrap_pyfunction!(batch::next_states, m)?)?;
    m.add_function(wrap_pyfunction!(schema_to_regex, m)?)?;
    m.add_function(wrap_pyfunction!(grammar_to_lark, m)?)?;
    m.add_function(wrap_pyfunction!(grammar_to_gbnf, m)?)?;
    m.add_function(wrap_pyfunction!(grammar_to_lark_scannerless, m)?)?;
    m.add_function(wrap_pyfunction!(grammar_to_kbnf, m)?)?;
    m.add_function(wrap_pyfunction!(grammar_summary, m)?)?;
    m.add_function(wrap_pyfunction!(grammar_reductions, m)?)?;
    m.add_function(wrap_pyfunction!(grammar_accepts, m)?)?;
    m.add_function(wrap_pyfunction!(grammar_samples, m)?)?;
    m.add_function(wrap_pyfunction!(pushdown::schema_grammar, m)?)?;
    m.add_class::<batch::PyBatch>()?;
    m.add_class::<PyVocabulary>()?;
    m.add_class::<PyNaiveIndex>()?;
    m.add_class::<PyIndex>()?;
    m.add_class::<PyLazyIndex>()?;
    m.add_class::<PyByteDfa>()?;
    m.add_class::<PyNaiveGrammarIndex>()?;
    m.add_class::<pushdown::PyPushdownIndex>()?;
    let py = m.py();
    m.add("PatternError", py.get_type::<PatternError>())?;
    m.add(
        "UnsupportedPatternError",
        py.get_type::<UnsupportedPatternError>(),
    )?;
    m.add("LimitError", py.get_type::<LimitError>())?;
    m.add("GrammarError", py.get_type::<GrammarError>())?;
    m.add(
        "UnsupportedGrammarError",
        py.get_type::<UnsupportedGrammarError>(),
    )?;
    m.add("BudgetError", py.get_type::<BudgetError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("JSON_SLICES", core::JSON_SLICES.to_vec())?;
    Ok(())
}
