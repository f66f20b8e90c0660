//! Batch steps across indexes (`tokensdfa.fill_masks`, `tokensdfa.next_states`): many
//! (index, state) pairs in one call, with the GIL released and the core's threads
//! ([`tokensdfa_core::batch`]); row `i` is what the pair's own `fill_mask` writes.
//! `tokensdfa.Batch` keeps a server's sequences in the core ([`Sequences`]), so that a
//! step is one call with no per-row work in Python.

use numpy::PyReadwriteArray2;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

use tokensdfa_core::batch::{self, Item};
use tokensdfa_core::sequences::{Holder, Sequences};
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

impl Holder for Held {
    fn automaton(&self) -> &(dyn TokenAutomaton + Sync) {
        Held::automaton(self)
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

/// The u32 words of a batch's mask buffer: a C-contiguous int32 array of shape (rows,
/// mask words of `first`'s vocabulary).
fn batch_buffer<'a>(
    out: &'a mut PyReadwriteArray2<'_, i32>,
    first: Option<&Held>,
    rows: usize,
) -> PyResult<&'a mut [u32]> {
    let shape = out.as_array().shape().to_vec();
    let slice = out.as_slice_mut().map_err(|_| {
        PyValueError::new_err("the batch's mask buffer must be a C-contiguous int32 array")
    })?;
    if let Some(h) = first {
        let words = h.automaton().vocab_len().div_ceil(32);
        if shape != [rows, words] {
            return Err(PyValueError::new_err(format!(
                "the batch's mask buffer has shape {shape:?}; ({rows}, {words}) is needed"
            )));
        }
    }
    // i32 and u32 have the same size and alignment; the core only writes whole words.
    Ok(unsafe { std::slice::from_raw_parts_mut(slice.as_mut_ptr() as *mut u32, slice.len()) })
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
    let words = batch_buffer(&mut out, held.first(), states.len())?;
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

/// A server's batch of sequences, each an index and its state, kept in the extension:
/// a decoding step is one call for the whole batch ([`Sequences`]).
#[pyclass(name = "Batch", module = "tokensdfa")]
pub(crate) struct PyBatch {
    rows: Sequences<Held>,
}

#[pymethods]
impl PyBatch {
    /// One sequence per index (an index may repeat), each at its index's start.
    /// ValueError for indexes over vocabularies of different widths.
    #[new]
    fn new(indexes: Vec<Bound<'_, PyAny>>) -> PyResult<Self> {
        let held = hold(&indexes, indexes.len())?;
        Ok(PyBatch {
            rows: Sequences::new(held).map_err(value_error)?,
        })
    }

    fn __len__(&self) -> usize {
        self.rows.len()
    }

    /// Each sequence's state now.
    #[getter]
    fn states(&self) -> Vec<u32> {
        self.rows.states().to_vec()
    }

    /// One decoding step: sequence `i` takes `tokens[i]` where its index allows it (a
    /// negative token, or `tokens` None: it takes none), then row `i` of `out`
    /// (C-contiguous int32, shape (len, mask words)) gets its mask; on `threads` threads
    /// with the GIL released. Returns which sequences moved.
    #[pyo3(signature = (tokens, out, threads = 1))]
    fn step(
        &mut self,
        py: Python<'_>,
        tokens: Option<Vec<i64>>,
        mut out: PyReadwriteArray2<'_, i32>,
        threads: usize,
    ) -> PyResult<Vec<bool>> {
        let tokens: Option<Vec<Option<u32>>> = tokens
            .map(|t| t.into_iter().map(token_of).collect::<PyResult<_>>())
            .transpose()?;
        let words = batch_buffer(&mut out, self.rows.holders().first(), self.rows.len())?;
        let rows = &mut self.rows;
        let moved = py
            .allow_threads(|| rows.step(tokens.as_deref(), words, threads))
            .map_err(value_error)?;
        self.rows.holders().iter().try_for_each(Held::healthy)?;
        Ok(moved)
    }

    /// Put the sequences of `rows` back at their start (new requests in their places).
    fn reset(&mut self, rows: Vec<usize>) -> PyResult<()> {
        self.rows.reset(&rows).map_err(value_error)
    }
}

/// A step's token: none where negative, a ValueError past the ids a u32 holds.
fn token_of(token: i64) -> PyResult<Option<u32>> {
    if token < 0 {
        return Ok(None);
    }
    u32::try_from(token)
        .map(Some)
        .map_err(|_| PyValueError::new_err(format!("no token {token}")))
}
