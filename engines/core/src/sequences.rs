//! A server's batch kept in one place: for each sequence the automaton of its spec, its
//! start state and its state now. A decoding step is one call, [`Sequences::step`]:
//! every sequence takes the token sampled for it, then every next mask is written, on
//! the calling thread and the workers of its crew; a finished sequence is
//! [`Sequences::reset`] for the next request. The caller does no per-sequence work, which
//! a batch of matcher objects cannot avoid (a Python loop over 256 of them costs more
//! than a second thread saves).
//!
//! Rows are independent: row `i` takes its token by its automaton's `next_state` and
//! writes its mask by its `fill_mask`, whoever runs it, so a step equals single steps
//! bit for bit. (EOS, a special token, has no state after it in any automaton: taking it
//! is refused, and a caller asks `is_accepting` instead.)

use rustc_hash::FxHashSet;

use crate::automaton::TokenAutomaton;
use crate::batch::{share, RUN};
use crate::error::Error;

/// What a [`Sequences`] row holds its automaton by (an index object of the caller's).
pub trait Holder: Send + Sync {
    fn automaton(&self) -> &(dyn TokenAutomaton + Sync);
}

impl Holder for std::sync::Arc<dyn TokenAutomaton + Send + Sync> {
    fn automaton(&self) -> &(dyn TokenAutomaton + Sync) {
        &**self
    }
}

/// The sequences of a batch (see the module doc).
pub struct Sequences<H> {
    rows: Vec<H>,
    starts: Vec<u32>,
    states: Vec<u32>,
    /// A row of each distinct automaton, to prepare each once for a threaded step.
    distinct: Vec<usize>,
    words: usize,
}

/// One run of rows as a thread takes it: holders, states, whether each moved, tokens,
/// mask rows.
type Run<'a, H> = (
    &'a [H],
    &'a mut [u32],
    &'a mut [bool],
    Option<&'a [Option<u32>]>,
    &'a mut [u32],
);

impl<H: Holder> Sequences<H> {
    /// The sequences of `rows`, each at its automaton's start; an error if their
    /// vocabularies differ in width.
    pub fn new(rows: Vec<H>) -> Result<Self, Error> {
        let words = rows
            .first()
            .map_or(0, |h| h.automaton().vocab_len().div_ceil(32));
        let mut seen = FxHashSet::default();
        let mut distinct = Vec::new();
        for (i, h) in rows.iter().enumerate() {
            let a = h.automaton();
            if a.vocab_len().div_ceil(32) != words {
                return Err(Error::Option(format!(
                    "batch row {i}: a vocabulary of {} mask words among ones of {words}",
                    a.vocab_len().div_ceil(32)
                )));
            }
            if seen.insert(a as *const (dyn TokenAutomaton + Sync) as *const ()) {
                distinct.push(i);
            }
        }
        let starts: Vec<u32> = rows.iter().map(|h| h.automaton().initial_state()).collect();
        Ok(Sequences {
            rows,
            states: starts.clone(),
            starts,
            distinct,
            words,
        })
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Mask words of a row.
    pub fn words(&self) -> usize {
        self.words
    }

    /// Each sequence's state now.
    pub fn states(&self) -> &[u32] {
        &self.states
    }

    /// The holders of the rows' automata.
    pub fn holders(&self) -> &[H] {
        &self.rows
    }

    /// One decoding step: sequence `i` takes `tokens[i]` where its automaton allows it
    /// (`None`, or no tokens at all: it takes none, as a new request's first step), then
    /// row `i` of `out` gets its mask. Returns whether each moved; one that did not
    /// stays where it was. On `threads` threads (1: the calling thread, in order).
    pub fn step(
        &mut self,
        tokens: Option<&[Option<u32>]>,
        out: &mut [u32],
        threads: usize,
    ) -> Result<Vec<bool>, Error> {
        let n = self.rows.len();
        if let Some(t) = tokens.filter(|t| t.len() != n) {
            return Err(Error::Option(format!(
                "{} tokens for a batch of {n}",
                t.len()
            )));
        }
        if out.len() != n * self.words {
            return Err(Error::Option(format!(
                "the mask buffer has {} words; {n} rows of {} need {}",
                out.len(),
                self.words,
                n * self.words
            )));
        }
        let mut moved = vec![false; n];
        if n == 0 {
            return Ok(moved);
        }
        let whole: Run<'_, H> = (&self.rows, &mut self.states, &mut moved, tokens, out);
        if threads <= 1 {
            step_run(whole, self.words);
            return Ok(moved);
        }
        for &i in &self.distinct {
            self.rows[i].automaton().prepare_threads(threads);
        }
        let words = self.words;
        share(runs(whole, words), threads, |_, run| step_run(run, words))?;
        Ok(moved)
    }

    /// Put the sequences of `rows` back at their start.
    pub fn reset(&mut self, rows: &[usize]) -> Result<(), Error> {
        if let Some(bad) = rows.iter().find(|r| **r >= self.rows.len()) {
            return Err(Error::Option(format!(
                "no row {bad} in a batch of {}",
                self.rows.len()
            )));
        }
        for &r in rows {
            self.states[r] = self.starts[r];
        }
        Ok(())
    }
}

/// A step's rows in runs of [`RUN`].
fn runs<H>(whole: Run<'_, H>, words: usize) -> Vec<Run<'_, H>> {
    let (rows, states, moved, tokens, out) = whole;
    let mut token_runs = tokens.map(|t| t.chunks(RUN));
    rows.chunks(RUN)
        .zip(states.chunks_mut(RUN))
        .zip(moved.chunks_mut(RUN))
        .zip(out.chunks_mut(words * RUN))
        .map(|(((r, s), m), o)| (r, s, m, token_runs.as_mut().and_then(Iterator::next), o))
        .collect()
}

/// Take each row's token, then write its mask.
fn step_run<H: Holder>(run: Run<'_, H>, words: usize) {
    let (rows, states, moved, tokens, out) = run;
    for (i, ((holder, state), mask)) in rows
        .iter()
        .zip(states.iter_mut())
        .zip(out.chunks_mut(words))
        .enumerate()
    {
        let automaton = holder.automaton();
        if let Some(token) = tokens.and_then(|t| t[i]) {
            if let Some(next) = automaton.next_state(*state, token) {
                *state = next;
                moved[i] = true;
            }
        }
        automaton.fill_mask(*state, mask);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::batch::tests::vocab;
    use crate::{Index, LazyIndex, Mode, Vocabulary};

    /// Eager and lazy rows, many of them (several runs), stepped along one token list at
    /// 1, 2 and 3 threads: every step equals single steps of each row's automaton.
    #[test]
    fn steps_equal_single_steps_at_any_thread_count() {
        let v = vocab();
        let words = v.mask_words();
        let eager = Arc::new(Index::new("(ab)+1?", &v, Mode::Exact).unwrap());
        let lazy = Arc::new(LazyIndex::new("\"[a-z]*\"|[0-9]+", &v, Mode::Exact).unwrap());
        let all: Vec<Arc<dyn TokenAutomaton + Send + Sync>> = vec![eager, lazy];
        let n = 4 * RUN + 3;
        let row_of = |i: usize| all[i % 2].clone();
        let plans: [&[Option<u32>]; 4] = [
            &[Some(3), Some(6)],
            &[Some(4), None],
            &[Some(1)],
            &[Some(0)],
        ];
        for threads in [1, 2, 3] {
            let mut seqs = Sequences::new((0..n).map(row_of).collect()).unwrap();
            let mut single: Vec<u32> = (0..n).map(|i| row_of(i).initial_state()).collect();
            let mut out = vec![u32::MAX; n * words];
            seqs.step(None, &mut out, threads).unwrap();
            for plan in plans {
                let tokens: Vec<Option<u32>> = (0..n).map(|i| plan[i % plan.len()]).collect();
                let moved = seqs.step(Some(&tokens), &mut out, threads).unwrap();
                for i in 0..n {
                    let a = row_of(i);
                    let next = tokens[i].and_then(|t| a.next_state(single[i], t));
                    assert_eq!(moved[i], next.is_some(), "row {i}, {threads} threads");
                    single[i] = next.unwrap_or(single[i]);
                    let mut one = vec![0u32; words];
                    a.fill_mask(single[i], &mut one);
                    assert_eq!(&out[i * words..(i + 1) * words], &one[..], "row {i}");
                }
                assert_eq!(seqs.states(), &single[..]);
            }
        }
    }

    #[test]
    fn reset_rows_start_over_and_bad_calls_are_errors() {
        let v = vocab();
        let eager = Arc::new(Index::new("(ab)+1?", &v, Mode::Exact).unwrap());
        let rows: Vec<Arc<dyn TokenAutomaton + Send + Sync>> = vec![eager.clone(), eager.clone()];
        let mut seqs = Sequences::new(rows).unwrap();
        let mut out = vec![0u32; 2 * v.mask_words()];
        let moved = seqs.step(Some(&[Some(3), Some(3)]), &mut out, 1).unwrap();
        assert_eq!(moved, vec![true, true]);
        seqs.reset(&[1]).unwrap();
        assert_eq!(seqs.states()[1], eager.initial_state());
        assert_ne!(seqs.states()[0], eager.initial_state());
        assert!(seqs.reset(&[2]).is_err());
        assert!(seqs.step(Some(&[Some(1)]), &mut out, 1).is_err());
        assert!(seqs.step(None, &mut out[1..], 2).is_err());
    }

    #[test]
    fn rows_over_vocabularies_of_different_widths_are_an_error() {
        let small = vocab();
        let tokens: Vec<Vec<u8>> = (0..40u8).map(|b| vec![b'a' + b % 26, b]).collect();
        let refs: Vec<&[u8]> = tokens.iter().map(|t| t.as_slice()).collect();
        let wide = Vocabulary::new(&refs, 0, &[]).unwrap();
        let a = Arc::new(Index::new("a", &small, Mode::Exact).unwrap());
        let b = Arc::new(Index::new("a", &wide, Mode::Exact).unwrap());
        let rows: Vec<Arc<dyn TokenAutomaton + Send + Sync>> = vec![a, b];
        assert!(Sequences::new(rows).is_err());
    }
}
