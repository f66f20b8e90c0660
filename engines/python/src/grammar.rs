//! The grammar surface: `NaiveGrammarIndex` (the exact context-free reference of
//! `tokensdfa-grammar`), the writers (`grammar_to_lark`, `grammar_to_gbnf`), the
//! minimizer's one-step smaller grammars (`grammar_reductions`), and
//! `grammar_summary` / `grammar_accepts` / `grammar_samples` (what the reference reads a
//! text as, and sentences drawn from it).
//!
//! A grammar text is read with `tokensdfa_grammar::read` in its notation ("gbnf",
//! "lark", "ebnf"). Errors, by the grammar crate's kind, with its one-line message:
//! `GrammarError` (a `ValueError`: the text does not parse, or is no usable grammar:
//! unknown rule, empty language, bad terminal), `UnsupportedGrammarError` (a
//! `GrammarError`: a construct the front end does not implement), `LimitError` (a bound
//! of the front end) and `BudgetError` (a `LimitError`: a state needed more Earley items
//! than the index's budget). A bad argument (unknown notation, wrong mask width) raises
//! `ValueError`, an unknown state `IndexError`.

use std::sync::Arc;

use numpy::PyReadwriteArray1;
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use tokensdfa_core as core;
use tokensdfa_grammar as grammar;

use crate::vocab::PyVocabulary;
use crate::{check_state, mask_slice, LimitError};

create_exception!(
    tokensdfa,
    GrammarError,
    PyValueError,
    "The grammar does not parse in its notation, or is no usable grammar (an unknown \
     rule, no start rule, an empty language, a terminal whose regex does not compile)."
);
create_exception!(
    tokensdfa,
    UnsupportedGrammarError,
    GrammarError,
    "The grammar uses a construct of its notation that tokensdfa does not implement."
);
create_exception!(
    tokensdfa,
    BudgetError,
    LimitError,
    "A state of the grammar reference needed more Earley items than its item budget."
);

/// The Python exception of a grammar error, with its message.
pub(crate) fn grammar_error(e: grammar::Error) -> PyErr {
    let message = e.to_string();
    match e {
        grammar::Error::Syntax { .. } | grammar::Error::Invalid(_) => {
            GrammarError::new_err(message)
        }
        grammar::Error::Unsupported { .. } => UnsupportedGrammarError::new_err(message),
        grammar::Error::Limit(_) => LimitError::new_err(message),
        grammar::Error::Budget(_) => BudgetError::new_err(message),
        grammar::Error::Argument(_) => PyValueError::new_err(message),
    }
}

/// Read `text` in the notation named `notation`.
pub(crate) fn read(text: &str, notation: &str) -> PyResult<grammar::Grammar> {
    let n = grammar::Notation::parse(notation).ok_or_else(|| {
        PyValueError::new_err(format!(
            "unknown notation {notation:?}: expected \"gbnf\", \"lark\" or \"ebnf\""
        ))
    })?;
    grammar::read(text, n).map_err(grammar_error)
}

/// The exact reference for a context-free grammar: states made on demand (the initial
/// one and each `next_state` returns), masks computed on first request and memoized.
#[pyclass(name = "NaiveGrammarIndex", module = "tokensdfa", frozen)]
pub(crate) struct PyNaiveGrammarIndex {
    inner: Arc<grammar::NaiveGrammarIndex>,
    words: usize,
}

#[pymethods]
impl PyNaiveGrammarIndex {
    /// `item_budget`: most Earley items one mask fill or token step may create (default
    /// 50 million); past it, BudgetError. `lexing`: "scannerless" (every terminal at
    /// every length) or "greedy" (maximal munch over the terminals allowed where a lexeme
    /// starts, as llguidance lexes); `leading_ignore`: whether `%ignore` text may come
    /// before the first terminal; `trailing_ignore`: after the last, True (always, or
    /// "always"), False (never, or "never") or "where-a-lexeme-may-follow" (llguidance:
    /// only where the parser state there expects another terminal, and then the text is
    /// a sentence iff it was one before the ignore text).
    #[new]
    #[pyo3(signature = (text, vocab, notation = "gbnf", item_budget = None,
                        lexing = "scannerless", leading_ignore = true,
                        trailing_ignore = TrailingArg::Flag(true)))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        text: &str,
        vocab: &PyVocabulary,
        notation: &str,
        item_budget: Option<usize>,
        lexing: &str,
        leading_ignore: bool,
        trailing_ignore: TrailingArg,
    ) -> PyResult<Self> {
        let g = read(text, notation)?;
        let options = grammar_options(item_budget, lexing, leading_ignore, trailing_ignore)?;
        let v = vocab.inner.clone();
        let inner = py
            .allow_threads(move || grammar::NaiveGrammarIndex::new(&g, &v, options))
            .map_err(grammar_error)?;
        Ok(PyNaiveGrammarIndex {
            inner: Arc::new(inner),
            words: vocab.inner.mask_words(),
        })
    }

    #[getter]
    fn initial_state(&self) -> u32 {
        self.inner.initial_state()
    }

    /// States so far: the initial one and each state `next_state` has returned.
    #[getter]
    fn num_states(&self) -> usize {
        self.inner.num_states()
    }

    #[getter]
    fn memory_bytes(&self) -> usize {
        self.inner.memory_bytes()
    }

    /// The state after `token`, or None if the token is not allowed (EOS, specials and
    /// unknown states included).
    fn next_state(&self, py: Python<'_>, state: u32, token: u32) -> PyResult<Option<u32>> {
        if (state as usize) >= self.inner.num_states() {
            return Ok(None);
        }
        let inner = self.inner.clone();
        py.allow_threads(move || inner.next_state(state, token))
            .map_err(grammar_error)
    }

    fn is_accepting(&self, state: u32) -> bool {
        self.inner.is_accepting(state)
    }

    /// The bytes the grammar forces after `state` (at most `limit`; see the core's docs).
    #[pyo3(signature = (state, limit = 256))]
    fn forced_bytes<'py>(
        &self,
        py: Python<'py>,
        state: u32,
        limit: usize,
    ) -> PyResult<Bound<'py, PyBytes>> {
        check_state(state, self.inner.num_states())?;
        let forced = py
            .allow_threads(|| self.inner.forced_bytes(state, limit))
            .map_err(grammar_error)?;
        Ok(PyBytes::new(py, &forced))
    }

    /// Write the state's mask into `out` (computed with the GIL released on first use).
    fn fill_mask(
        &self,
        py: Python<'_>,
        state: u32,
        mut out: PyReadwriteArray1<'_, i32>,
    ) -> PyResult<()> {
        check_state(state, self.inner.num_states())?;
        let slice = mask_slice(&mut out, self.words)?;
        let inner = self.inner.clone();
        py.allow_threads(move || inner.fill_mask(state, slice))
            .map_err(grammar_error)
    }

    /// Sorted allowed token ids (EOS included where accepting), for tests and repros.
    fn allowed(&self, py: Python<'_>, state: u32) -> PyResult<Vec<u32>> {
        check_state(state, self.inner.num_states())?;
        let inner = self.inner.clone();
        py.allow_threads(move || inner.allowed(state))
            .map_err(grammar_error)
    }

    /// Whether the bytes `text` are a sentence of the grammar as this index reads it
    /// (its lexing and ignore options). Errors: the item budget (BudgetError).
    fn accepts(&self, py: Python<'_>, text: Vec<u8>) -> PyResult<bool> {
        let inner = self.inner.clone();
        py.allow_threads(move || inner.accepts(&text))
            .map_err(grammar_error)
    }

    /// Whether the bytes `text` are a viable prefix: some continuation makes them a
    /// sentence. Errors: the item budget (BudgetError).
    fn viable(&self, py: Python<'_>, text: Vec<u8>) -> PyResult<bool> {
        let inner = self.inner.clone();
        py.allow_threads(move || inner.viable(&text))
            .map_err(grammar_error)
    }

    /// Figures of the state's mask fill (None before it is filled): Earley items
    /// created, trie nodes visited and live, seconds.
    fn fill_stats<'py>(&self, py: Python<'py>, state: u32) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some(s) = self.inner.fill_stats(state) else {
            return Ok(None);
        };
        let d = PyDict::new(py);
        d.set_item("items", s.items)?;
        d.set_item("nodes_visited", s.nodes_visited)?;
        d.set_item("nodes_live", s.nodes_live)?;
        d.set_item("seconds", s.seconds)?;
        Ok(Some(d))
    }
}

/// `text` (in `notation`) written in Lark.
#[pyfunction]
#[pyo3(signature = (text, notation = "gbnf"))]
pub(crate) fn grammar_to_lark(text: &str, notation: &str) -> PyResult<String> {
    grammar::to_lark(&read(text, notation)?).map_err(grammar_error)
}

/// `text` (in `notation`) written in GBNF; GrammarError where GBNF cannot say it.
#[pyfunction]
#[pyo3(signature = (text, notation = "gbnf"))]
pub(crate) fn grammar_to_gbnf(text: &str, notation: &str) -> PyResult<String> {
    grammar::to_gbnf(&read(text, notation)?).map_err(grammar_error)
}

/// The one-step smaller grammars of `text` (`Grammar::reductions`: an `%ignore`
/// terminal, an alternative or a symbol dropped, then trimmed), each written in
/// `notation`'s family (Lark for Lark, GBNF for GBNF and EBNF), largest cut first; a
/// step the writer cannot say is left out.
#[pyfunction]
#[pyo3(signature = (text, notation = "gbnf"))]
pub(crate) fn grammar_reductions(
    py: Python<'_>,
    text: &str,
    notation: &str,
) -> PyResult<Vec<String>> {
    let g = read(text, notation)?;
    let lark = notation == "lark";
    Ok(py.allow_threads(move || {
        g.reductions()
            .iter()
            .filter_map(|r| {
                if lark {
                    grammar::to_lark(r).ok()
                } else {
                    grammar::to_gbnf(r).ok()
                }
            })
            .collect()
    }))
}

/// Counts of the grammar as the reference reads it, trimmed: `rules`, `terminals`,
/// `ignore` (the `%ignore` terminals), `start` (the start rule's name).
#[pyfunction]
#[pyo3(signature = (text, notation = "gbnf"))]
pub(crate) fn grammar_summary<'py>(
    py: Python<'py>,
    text: &str,
    notation: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let g = read(text, notation)?;
    let t = py
        .allow_threads(move || g.trimmed())
        .map_err(grammar_error)?;
    let d = PyDict::new(py);
    d.set_item("rules", t.rules.len())?;
    d.set_item("terminals", t.terminals.len())?;
    d.set_item("ignore", t.ignore.len())?;
    d.set_item("start", t.rule(t.start).name.clone())?;
    Ok(d)
}

/// `trailing_ignore` as Python passes it: a bool (True: "always", False: "never") or
/// one of `TrailingIgnore`'s names.
#[derive(FromPyObject)]
pub(crate) enum TrailingArg {
    Flag(bool),
    Name(String),
}

/// The reference's options from the Python keywords; an unknown `lexing` or
/// `trailing_ignore` name is a ValueError naming the choices.
fn grammar_options(
    item_budget: Option<usize>,
    lexing: &str,
    leading_ignore: bool,
    trailing_ignore: TrailingArg,
) -> PyResult<grammar::GrammarOptions> {
    let lexing = grammar::Lexing::parse(lexing).ok_or_else(|| {
        PyValueError::new_err(format!(
            "unknown lexing {lexing:?}: expected \"scannerless\" or \"greedy\""
        ))
    })?;
    let trailing_ignore = match trailing_ignore {
        TrailingArg::Flag(allowed) => grammar::TrailingIgnore::from(allowed),
        TrailingArg::Name(name) => grammar::TrailingIgnore::parse(&name).ok_or_else(|| {
            PyValueError::new_err(format!(
                "unknown trailing_ignore {name:?}: expected True, False, \"always\", \
                 \"never\" or \"where-a-lexeme-may-follow\""
            ))
        })?,
    };
    let default = grammar::GrammarOptions::default();
    Ok(grammar::GrammarOptions {
        item_budget: item_budget.unwrap_or(default.item_budget),
        lexing,
        leading_ignore,
        trailing_ignore,
    })
}

/// Whether each of `sentences` (bytes) is a sentence of the grammar, by the reference's
/// Earley recognizer (`item_budget` per sentence, default 50 million: BudgetError;
/// `lexing`, `leading_ignore`, `trailing_ignore` as for NaiveGrammarIndex).
#[pyfunction]
#[pyo3(signature = (text, notation, sentences, item_budget = None,
                    lexing = "scannerless", leading_ignore = true,
                    trailing_ignore = TrailingArg::Flag(true)))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn grammar_accepts(
    py: Python<'_>,
    text: &str,
    notation: &str,
    sentences: Vec<Vec<u8>>,
    item_budget: Option<usize>,
    lexing: &str,
    leading_ignore: bool,
    trailing_ignore: TrailingArg,
) -> PyResult<Vec<bool>> {
    let g = read(text, notation)?;
    let options = grammar_options(item_budget, lexing, leading_ignore, trailing_ignore)?;
    py.allow_threads(move || {
        let v = core::Vocabulary::new(&[b""], 0, &[])?;
        let ix = grammar::NaiveGrammarIndex::new(&g, &v, options)?;
        sentences
            .iter()
            .map(|s| ix.accepts(s))
            .collect::<Result<Vec<bool>, grammar::Error>>()
    })
    .map_err(grammar_error)
}

/// Up to `count` sentences drawn from the grammar at random (see the grammar crate's
/// `sample`), deterministic in `seed`; draws longer than its bound are dropped.
#[pyfunction]
#[pyo3(signature = (text, notation, count, seed = 0))]
pub(crate) fn grammar_samples(
    py: Python<'_>,
    text: &str,
    notation: &str,
    count: usize,
    seed: u64,
) -> PyResult<Vec<Vec<u8>>> {
    let g = read(text, notation)?;
    py.allow_threads(move || {
        let sampler = grammar::Sampler::new(&g)?;
        let options = grammar::SampleOptions::default();
        Ok((0..count as u64)
            .filter_map(|i| {
                sampler.sample(
                    seed.wrapping_add(i.wrapping_mul(0xD1B5_4A32_D192_ED03)),
                    options,
                )
            })
            .collect())
    })
    .map_err(grammar_error)
}

/// `text` (in `notation`) written in Lark with every terminal one character (terminal
/// regexes as rules, `%ignore` explicit), so Lark's Earley parser with
/// `lexer="dynamic_complete"` reads it exactly as the reference does; GrammarError where
/// it cannot be said (look-around, byte classes).
#[pyfunction]
#[pyo3(signature = (text, notation = "gbnf"))]
pub(crate) fn grammar_to_lark_scannerless(text: &str, notation: &str) -> PyResult<String> {
    grammar::to_lark_scannerless(&read(text, notation)?).map_err(grammar_error)
}

/// `text` (in `notation`) written in KBNF (the kbnf crate's notation, start rule `start`);
/// GrammarError where KBNF cannot say it.
#[pyfunction]
#[pyo3(signature = (text, notation = "gbnf"))]
pub(crate) fn grammar_to_kbnf(text: &str, notation: &str) -> PyResult<String> {
    grammar::to_kbnf(&read(text, notation)?).map_err(grammar_error)
}
