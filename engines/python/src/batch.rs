//! Batch steps across indexes (`tokensdfa.fill_masks`, `tokensdfa.next_states`): many
//! (index, state) pairs in one call, with the GIL released and the core's thread pool
//! ([`tokensdfa_core::batch`]); row `i` is what the pair's own `fill_mask` writes.

use numpy::PyReadwriteArray2;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

use tokensdfa_core::batch::{self, Item};
use tokensdfa_core::TokenAutomaton;

use crate::indexes::{PyIndex, PyLazyIndex, PyNaiveIndex};
use crate::value_error;
use pyo3::exceptions::PyValueError;

/// An index object of the batch, held while the GIL is released.
enum Held {
    Naive(Py<PyNaiveIndex>),
    Eager(Py<PyIndex>),
    Lazy(Py<PyLazyIndex>),
}

impl Held {
    fn of(index: &Bound<'_, PyAny>) -> PyResult<Held> {
        if let Ok(i) = index.downcast::<PyIndex>() {
            return Ok(Held::Eager(i.clone().unbind()));
        }
        if let Ok(i) = index.downcast::<PyLazyIndex>() {
            return Ok(Held::Lazy(i.clone().unbind()));
        }
        if let Ok(i) = index.downcast::<PyNaiveIndex>() {
            return Ok(Held::Naive(i.clone().unbind()));
        }
        Err(PyTypeError::new_err(format!(
            "a batch holds Index, LazyIndex or NaiveIndex objects, not {}",
            index.get_type().name()?
        )))
    }

    fn automaton(&self) -> &(dyn TokenAutomaton + Sync) {
        match self {
            Held::Naive(i) => &i.get().inner,
            Held::Eager(i) => &i.get().inner,
            Held::Lazy(i) => &*i.get().inner,
        }
    }

    fn healthy(&self) -> PyResult<()> {
        match self {
            Held::Lazy(i) => i.get().healthy(),
            _ => Ok(()),
        }
    }
}

fn hold(indexes: &[Bound<'_, PyAny>], rows: usize) -> PyResult<Vec<Held>> {
    if indexes.len() != rows {
        return Err(PyValueError::new_err(format!(
            "{} indexes for a batch of {rows}",
            indexes.len()
        )));
    }
    indexes.iter().map(Held::of).collect()
}

fn items<'a>(held: &'a [Held], states: &[u32]) -> Vec<Item<'a>> {
    held.iter()
        .zip(states)
        .map(|(h, s)| (h.automaton(), *s))
        .collect()
}

/// Write the mask of `states[i]` in `indexes[i]` into row `i` of `out`, a C-contiguous
/// int32 array of shape (len(states), mask words), on `threads` threads (1: the calling
/// thread, in order). Raises ValueError for a batch of the wrong shape, an unknown state
/// or indexes over vocabularies of different widths; LimitError where a lazy index passed
/// its walk limit.
#[pyfunction]
#[pyo3(signature = (indexes, states, out, threads = 1))]
pub(crate) fn fill_masks(
    py: Python<'_>,
    indexes: Vec<Bound<'_, PyAny>>,
    states: Vec<u32>,
    mut out: PyReadwriteArray2<'_, i32>,
    threads: usize,
) -> PyResult<()> {
    let held = hold(&indexes, states.len())?;
    let shape = out.as_array().shape().to_vec();
    let slice = out.as_slice_mut().map_err(|_| {
        PyValueError::new_err("the batch's mask buffer must be a C-contiguous int32 array")
    })?;
    if let Some(h) = held.first() {
        let words = h.automaton().vocab_len().div_ceil(32);
        if shape != [states.len(), words] {
            return Err(PyValueError::new_err(format!(
                "the batch's mask buffer has shape {shape:?}; ({}, {words}) is needed",
                states.len()
            )));
        }
    }
    // i32 and u32 have the same size and alignment; the core only writes whole words.
    let words: &mut [u32] =
        unsafe { std::slice::from_raw_parts_mut(slice.as_mut_ptr() as *mut u32, slice.len()) };
    let batch = items(&held, &states);
    py.allow_threads(|| batch::fill_masks(&batch, words, threads))
        .map_err(value_error)?;
    held.iter().try_for_each(Held::healthy)
}

/// The state after `tokens[i]` from `states[i]` of `indexes[i]` (None where the token is
/// not allowed), on `threads` threads.
#[pyfunction]
#[pyo3(signature = (indexes, states, tokens, threads = 1))]
pub(crate) fn next_states(
    py: Python<'_>,
    indexes: Vec<Bound<'_, PyAny>>,
    states: Vec<u32>,
    tokens: Vec<u32>,
    threads: usize,
) -> PyResult<Vec<Option<u32>>> {
    let held = hold(&indexes, states.len())?;
    for (h, s) in held.iter().zip(&states) {
        crate::check_state(*s, h.automaton().num_states())?;
    }
    let batch = items(&held, &states);
    let next = py
        .allow_threads(|| batch::next_states(&batch, &tokens, threads))
        .map_err(value_error)?;
    held.iter().try_for_each(Held::healthy)?;
    Ok(next)
}
