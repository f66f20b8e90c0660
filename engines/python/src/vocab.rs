//! `tokensdfa.Vocabulary`: token bytes, special ids and the end-of-sequence id.

use std::sync::Arc;

use pyo3::prelude::*;

use tokensdfa_core as core;

use crate::value_error;

#[pyclass(name = "Vocabulary", module = "tokensdfa", frozen)]
pub(crate) struct PyVocabulary {
    pub(crate) inner: Arc<core::Vocabulary>,
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
