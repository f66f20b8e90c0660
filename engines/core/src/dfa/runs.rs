//! Run bounds read off a DFA by stepping it: for an automaton with no NFA beside it (a
//! recognizer's, [`crate::dfa::recognizer::Recognizer`], such as the grammar crate's
//! Earley sets), the bounds the vocabulary's slices are decided by
//! ([`crate::nfa::Determinizer::run_bounds`] gives them for an NFA's).
//!
//! From a state, the states reached after `k` whole characters of the class are a set
//! `L_k` (`L_0` the state itself; each character read byte by byte along its UTF-8
//! sequences, every byte class of each byte range). `lower` is the first `k` at which
//! some character read from some state of `L_k` dies on one of its bytes (every string
//! of at most `k` characters then lives, and some of `k + 1` does not), `upper` the last
//! `k` with `L_k` non-empty. A set seen before means the runs go on forever: the bounds
//! are then what was found, with `cap` for what was not. Both are exact, as the walks
//! they stand for are: a state is [`DEAD`] iff no full match is reachable.
//!
//! Budgeted in steps and in the states it makes: stepping a recognizer makes its states
//! (an Earley set each, whose closure is the costly part). New states are allowed only
//! while every layer so far is one state, a run that does not branch: inside a string
//! seen for the first time, the set after one character (and those inside a multi-byte
//! one), which the mask walk would make anyway, after which a character leads back to
//! the state it left. Once a layer branches (declared keys begin here: a state per key
//! letter) no state is made any more: reading every character of such a class would
//! make a state per key prefix that no token of the vocabulary needs (allowing 8 new
//! states per decision regardless made three times the Earley sets on a Kubernetes
//! schema's instance, llama3, for no faster mask). Past the step budget, or at a state
//! a frozen search would make, the trivial bounds `(0, cap)`: the mask walk decides
//! those tokens instead.

use regex_syntax::utf8::Utf8Sequences;

use crate::util::table::{Stepper, DEAD};

/// Steps one bound computation may take.
const STEP_BUDGET: usize = 1 << 12;

/// New states one slice decision may make while its layers are single states (a
/// pruning walk's per-node questions make none: `fresh` false).
const NEW_STATES: usize = 16;

/// `(lower, upper)` run bounds of `class` (ranges of scalar values) from `row` of
/// `dfa`, both at most `cap`, making new states (as `states` counts them) only when
/// `fresh`, and only while the run does not branch (see the module doc).
pub(crate) fn stepped_run_bounds<S: Stepper>(
    dfa: &mut S,
    states: impl Fn(&S) -> usize,
    row: u32,
    class: &[(u32, u32)],
    cap: u32,
    fresh: bool,
) -> (u32, u32) {
    let seqs = byte_class_sequences(dfa, class);
    let mut budget = STEP_BUDGET;
    let mut most = states(dfa) + if fresh { NEW_STATES } else { 0 };
    let mut layer = vec![row];
    let mut seen: Vec<Vec<u32>> = vec![layer.clone()];
    let mut lower = None;
    for k in 0..cap {
        let mut next = Vec::new();
        for &s in &layer {
            let over = |d: &S| states(d) > most;
            let Some(dies) = read_char(dfa, s, &seqs, &mut next, (&mut budget, &over)) else {
                return (0, cap);
            };
            if dies && lower.is_none() {
                lower = Some(k);
            }
        }
        next.sort_unstable();
        next.dedup();
        if next.len() > 1 {
            most = most.min(states(dfa)); // the run branches: make no state from here on
        }
        if next.is_empty() {
            return (lower.unwrap_or(k), k);
        }
        if seen.contains(&next) {
            // the layers cycle: runs of every length live
            return (lower.unwrap_or(cap), cap);
        }
        seen.push(next.clone());
        layer = next;
    }
    (lower.unwrap_or(cap), cap)
}

/// Per UTF-8 sequence of the class, per byte position, the byte classes of its range.
fn byte_class_sequences<S: Stepper>(dfa: &S, class: &[(u32, u32)]) -> Vec<Vec<Vec<u8>>> {
    let classes = &dfa.dfa().classes;
    let mut out = Vec::new();
    for &(a, b) in class {
        let (Some(a), Some(b)) = (char::from_u32(a), char::from_u32(b)) else {
            continue;
        };
        for seq in Utf8Sequences::new(a, b) {
            let positions = seq
                .as_slice()
                .iter()
                .map(|r| {
                    let mut cs: Vec<u8> = (r.start..=r.end).map(|x| classes[x as usize]).collect();
                    cs.sort_unstable();
                    cs.dedup();
                    cs
                })
                .collect();
            out.push(positions);
        }
    }
    out
}

/// Every character of the class from `s`, byte by byte: the states after it go to
/// `out`; Some(whether one dies), None past the step budget or once `over` (new states).
fn read_char<S: Stepper>(
    dfa: &mut S,
    s: u32,
    seqs: &[Vec<Vec<u8>>],
    out: &mut Vec<u32>,
    (budget, over): (&mut usize, &dyn Fn(&S) -> bool),
) -> Option<bool> {
    let mut dies = false;
    for seq in seqs {
        let mut front = vec![s];
        for classes in seq {
            let mut after = Vec::with_capacity(front.len());
            for &r in &front {
                for &c in classes {
                    *budget = budget.checked_sub(1)?;
                    let n = dfa.step(r, c);
                    if over(dfa) {
                        return None;
                    }
                    if n == DEAD {
                        dies = true;
                    } else {
                        after.push(n);
                    }
                }
            }
            after.sort_unstable();
            after.dedup();
            front = after;
        }
        out.extend(front);
    }
    Some(dies)
}
