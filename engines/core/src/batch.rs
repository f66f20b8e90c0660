//! Batch steps: the masks of many (automaton, state) pairs written into one buffer, and
//! the state after one token for each pair, on a pool of threads: what a server does
//! for every structured sequence of its batch at each decoding step.
//!
//! Rows are independent: row `i` of the buffer is what `fill_mask` of pair `i` writes,
//! by that automaton's own `fill_mask`, so a batch fill equals single fills bit for bit
//! by construction; the threads only decide who writes which run of rows (`share`: the
//! calling thread and `threads - 1` pool jobs take runs of [`RUN`] rows until none is
//! left). The automata
//! may differ (a batch mixes specs) or repeat (sequences of one spec share one index).
//! With one thread the rows are filled on the calling thread, in order: no dispatch.
//!
//! Threads and the lazy index: a row whose state's mask is memoized is a copy under a
//! read lock, so such rows run concurrently; a first visit takes the index's engine, or
//! when it is busy one of the helper engines the index makes for the batch's thread
//! count (`prepare_threads`, once per automaton and call), so first visits of one lazy
//! index run in parallel too ([`crate::LazyIndex`], "Threads").

use std::sync::Mutex;

use rustc_hash::FxHashSet;

use crate::automaton::TokenAutomaton;
use crate::error::Error;
use crate::util::crew::crew;

/// One sequence of a batch: the automaton of its spec and its current state.
pub type Item<'a> = (&'a (dyn TokenAutomaton + Sync), u32);

/// Mask words of an automaton's vocabulary.
fn words_of(automaton: &(dyn TokenAutomaton + Sync)) -> usize {
    automaton.vocab_len().div_ceil(32)
}

/// Check the batch's shape: every automaton over vocabularies of one mask width, every
/// state known, `out` that width times the batch. Returns the width.
pub(crate) fn check(items: &[Item<'_>], out_len: usize) -> Result<usize, Error> {
    let words = items.first().map(|(a, _)| words_of(*a)).unwrap_or(0);
    for (i, (automaton, state)) in items.iter().enumerate() {
        if words_of(*automaton) != words {
            return Err(Error::Option(format!(
                "batch row {i}: a vocabulary of {} mask words among ones of {words}",
                words_of(*automaton)
            )));
        }
        if *state as usize >= automaton.num_states() {
            return Err(Error::Option(format!("batch row {i}: no state {state}")));
        }
    }
    if out_len != items.len() * words {
        return Err(Error::Option(format!(
            "the mask buffer has {out_len} words; {} rows of {words} need {}",
            items.len(),
            items.len() * words
        )));
    }
    Ok(words)
}

/// Batches smaller than this take their next states on the calling thread whatever the
/// threads asked: a step is a table lookup of the eager index (tens of nanoseconds) and
/// the lazy index walks its DFA under its engine lock, so sharing them out costs more
/// than it saves (256 rows: 71 us on one thread, 76-90 us shared on two).
const PARALLEL_STEPS_MIN: usize = 4096;

/// Rows a thread takes at a time: few enough that a first visit's row (milliseconds)
/// does not hold up a run of others, many enough that taking a run (an uncontended lock)
/// costs little beside copying it (under a microsecond a row).
pub(crate) const RUN: usize = 4;

/// Call `work(i, part)` for each of `parts`, on the calling thread and the `threads - 1`
/// workers of its crew ([`crate::util::crew`]). The parts are cut into one contiguous
/// block per thread, and each thread takes the parts of its own block from the front,
/// then those left in the others' from the back. So at every step of a batch the same
/// rows go to the same thread while the work is even (their mask rows stay in that
/// core's cache: 256 rows of 16 KB took 72 us on two threads where runs taken from one
/// shared queue took 84-97 us), and a thread held up by a slow row (a lazy index's first
/// visit) has its other rows taken from it. The calling thread starts at once, so a
/// batch too small for the workers to join in costs about what one thread does.
/// Measured on llama3 (2 cores of a virtual machine), 256 rows: 145 us on one thread,
/// 72 us on two; a rayon pool gave 62-115 us, slow whenever its workers slept between
/// calls (their wake-up took longer than the whole fill).
pub(crate) fn share<T: Send>(
    parts: Vec<T>,
    threads: usize,
    work: impl Fn(usize, T) + Sync,
) -> Result<(), Error> {
    let n = parts.len();
    let blocks_n = threads.min(n).max(1);
    let mut numbered = parts.into_iter().enumerate();
    let blocks: Vec<Mutex<std::vec::IntoIter<(usize, T)>>> = (0..blocks_n)
        .map(|b| {
            let size = (b + 1) * n / blocks_n - b * n / blocks_n;
            let block: Vec<(usize, T)> = numbered.by_ref().take(size).collect();
            Mutex::new(block.into_iter())
        })
        .collect();
    let take = |b: usize, front: bool| {
        let mut block = blocks[b].lock().unwrap_or_else(|p| p.into_inner());
        if front {
            block.next()
        } else {
            block.next_back()
        }
    };
    let drain = |me: usize| loop {
        let own = (me < blocks_n).then(|| take(me, true)).flatten();
        let next = own.or_else(|| (1..=blocks_n).find_map(|d| take((me + d) % blocks_n, false)));
        let Some((i, part)) = next else { break };
        work(i, part);
    };
    crew(threads)?.run(&drain)
}

/// Fill row `i` of `out` with the mask of `items[i]`, on `threads` threads.
pub fn fill_masks(items: &[Item<'_>], out: &mut [u32], threads: usize) -> Result<(), Error> {
    let words = check(items, out.len())?;
    if words == 0 {
        return Ok(());
    }
    if threads <= 1 {
        for ((automaton, state), row) in items.iter().zip(out.chunks_mut(words)) {
            automaton.fill_mask(*state, row);
        }
        return Ok(());
    }
    let mut prepared: FxHashSet<*const ()> = FxHashSet::default();
    for (automaton, _) in items {
        if prepared.insert(*automaton as *const (dyn TokenAutomaton + Sync) as *const ()) {
            automaton.prepare_threads(threads);
        }
    }
    let runs: Vec<&mut [u32]> = out.chunks_mut(words * RUN).collect();
    share(runs, threads, |k, rows| {
        let run = &items[k * RUN..];
        for ((automaton, state), row) in run.iter().zip(rows.chunks_mut(words)) {
            automaton.fill_mask(*state, row);
        }
    })
}

/// The state after `tokens[i]` from `items[i]` (None where the token is not allowed),
/// on `threads` threads.
pub fn next_states(
    items: &[Item<'_>],
    tokens: &[u32],
    threads: usize,
) -> Result<Vec<Option<u32>>, Error> {
    if tokens.len() != items.len() {
        return Err(Error::Option(format!(
            "{} tokens for a batch of {}",
            tokens.len(),
            items.len()
        )));
    }
    let mut out = vec![None; items.len()];
    let step = |i: usize| items[i].0.next_state(items[i].1, tokens[i]);
    if threads <= 1 || items.len() < PARALLEL_STEPS_MIN {
        for (i, o) in out.iter_mut().enumerate() {
            *o = step(i);
        }
        return Ok(out);
    }
    let runs: Vec<&mut [Option<u32>]> = out.chunks_mut(RUN).collect();
    share(runs, threads, |k, run| {
        for (j, o) in run.iter_mut().enumerate() {
            *o = step(k * RUN + j);
        }
    })?;
    Ok(out)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::{Index, LazyIndex, Mode, Vocabulary};

    /// Eight tokens, EOS first: the vocabulary of the batch and sequence tests.
    pub(crate) fn vocab() -> Vocabulary {
        let tokens: Vec<Vec<u8>> = ["<eos>", "a", "b", "ab", "1", "12", "\"", "x\""]
            .iter()
            .map(|t| t.as_bytes().to_vec())
            .collect();
        let refs: Vec<&[u8]> = tokens.iter().map(|t| t.as_slice()).collect();
        Vocabulary::new(&refs, 0, &[]).unwrap()
    }

    #[test]
    fn batch_rows_equal_single_fills_at_any_thread_count() {
        let v = vocab();
        let eager = Index::new("(ab)+1?", &v, Mode::Exact).unwrap();
        let lazy = LazyIndex::new("\"[a-z]*\"|[0-9]+", &v, Mode::Exact).unwrap();
        let s1 = eager.next_state(0, 3).unwrap();
        let s2 = lazy.next_state(0, 6).unwrap();
        let items: Vec<Item<'_>> = vec![
            (&eager, 0),
            (&lazy, 0),
            (&eager, s1),
            (&lazy, s2),
            (&lazy, 0),
        ];
        let words = v.mask_words();
        let mut single = vec![0u32; items.len() * words];
        for ((a, s), row) in items.iter().zip(single.chunks_mut(words)) {
            a.fill_mask(*s, row);
        }
        for threads in [1, 2, 3] {
            let mut out = vec![u32::MAX; items.len() * words];
            fill_masks(&items, &mut out, threads).unwrap();
            assert_eq!(out, single, "{threads} threads");
            let next = next_states(&items, &[3, 6, 4, 1, 5], threads).unwrap();
            let expected: Vec<Option<u32>> = items
                .iter()
                .zip([3, 6, 4, 1, 5])
                .map(|((a, s), t)| a.next_state(*s, t))
                .collect();
            assert_eq!(next, expected);
        }
    }

    #[test]
    fn a_large_batch_takes_its_steps_on_threads_and_equals_single_steps() {
        let v = vocab();
        let eager = Index::new("(ab)+1?", &v, Mode::Exact).unwrap();
        let lazy = LazyIndex::new("\"[a-z]*\"|[0-9]+", &v, Mode::Exact).unwrap();
        let n = PARALLEL_STEPS_MIN + 7;
        let items: Vec<Item<'_>> = (0..n)
            .map(|i| -> Item<'_> {
                if i % 3 == 0 {
                    (&lazy, 0)
                } else {
                    (&eager, 0)
                }
            })
            .collect();
        let tokens: Vec<u32> = (0..n as u32).map(|i| 1 + i % 7).collect();
        let single: Vec<Option<u32>> = items
            .iter()
            .zip(&tokens)
            .map(|((a, s), &t)| a.next_state(*s, t))
            .collect();
        assert_eq!(next_states(&items, &tokens, 2).unwrap(), single);
        let mut out = vec![0u32; n * v.mask_words()];
        fill_masks(&items, &mut out, 3).unwrap();
        let mut one = vec![0u32; v.mask_words()];
        for (row, (a, s)) in out.chunks(v.mask_words()).zip(&items) {
            a.fill_mask(*s, &mut one);
            assert_eq!(row, &one[..]);
        }
    }

    #[test]
    fn a_batch_of_the_wrong_shape_is_an_error() {
        let v = vocab();
        let eager = Index::new("a", &v, Mode::Exact).unwrap();
        let words = v.mask_words();
        let mut short = vec![0u32; words];
        assert!(fill_masks(&[(&eager, 0), (&eager, 0)], &mut short, 2).is_err());
        assert!(fill_masks(&[(&eager, 99)], &mut short, 1).is_err());
        assert!(next_states(&[(&eager, 0)], &[1, 2], 1).is_err());
    }
}
