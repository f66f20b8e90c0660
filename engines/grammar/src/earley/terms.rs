//! The terminals' automata, as the recognizer steps them: whole DFAs built up front
//! (the reference's, [`crate::NaiveGrammarIndex`]) or DFAs built one transition at a
//! time (the pushdown mode's, where a JSON schema's grammar holds hundreds of terminals
//! and a first mask meets a few: determinizing them all up front was most of its time
//! to first mask). Both are minimal-free byte DFAs whose [`DEAD`] means no full match is
//! reachable, with state 0 the start, so the recognizer reads them alike.
//!
//! An on-demand DFA is shared by every clone of the recognizer (the lazy index's helper
//! threads), behind a lock per terminal.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use rustc_hash::FxHashSet;

use tokensdfa_core::dfa::on_demand::joint_classes;
use tokensdfa_core::dfa::{OnDemandDfa, DEAD};
use tokensdfa_core::ByteDfa;
use tokensdfa_core::{classes_of_cuts, mark_class_cuts};

use crate::error::Error;
use crate::ir::Grammar;

pub(crate) enum Terms {
    Whole(Vec<ByteDfa>),
    /// The DFAs, and whether one has passed its limits (set by the step that found it,
    /// so asking costs no lock).
    OnDemand(Vec<Mutex<OnDemandDfa>>, AtomicBool),
}

impl Terms {
    /// The state of terminal `t`'s DFA after `byte` from `state` ([`DEAD`] past a match).
    #[inline]
    pub fn next(&self, t: u32, state: u32, byte: u8) -> u32 {
        match self {
            Terms::Whole(v) => v[t as usize].next(state, byte),
            Terms::OnDemand(v, exceeded) => {
                let mut d = lock(&v[t as usize]);
                let next = d.next(state, byte);
                if d.exceeded() {
                    exceeded.store(true, Ordering::Relaxed);
                }
                next
            }
        }
    }

    #[inline]
    pub fn is_accepting(&self, t: u32, state: u32) -> bool {
        state != DEAD
            && match self {
                Terms::Whole(v) => v[t as usize].is_accepting(state),
                Terms::OnDemand(v, _) => lock(&v[t as usize]).is_accepting(state),
            }
    }

    /// A lower bound on the runs of characters of `class` terminal `t`'s DFA survives
    /// from `state` ([`OnDemandDfa::run_lower`]); None for a whole DFA (the reference's,
    /// which no lazy index reads).
    pub fn run_lower(&self, t: u32, state: u32, class: &[(u32, u32)], cap: u32) -> Option<u32> {
        match self {
            Terms::Whole(_) => None,
            Terms::OnDemand(v, _) => Some(lock(&v[t as usize]).run_lower(state, class, cap)),
        }
    }

    /// The byte classes of all the terminals together: two bytes share one iff they
    /// share one in every terminal's DFA (what the recognizer reads a byte as).
    pub fn joint_classes(&self) -> ([u8; 256], usize) {
        match self {
            Terms::Whole(v) => {
                let mut cuts = [false; 256];
                for d in v {
                    mark_class_cuts(&std::array::from_fn(|b| d.class_of(b as u8)), &mut cuts);
                }
                classes_of_cuts(&cuts)
            }
            Terms::OnDemand(v, _) => {
                let held: Vec<_> = v.iter().map(lock).collect();
                joint_classes(held.iter().map(|d| &**d))
            }
        }
    }

    /// Whether an on-demand DFA passed its limits (its transitions since may be wrong).
    pub fn exceeded(&self) -> bool {
        match self {
            Terms::Whole(_) => false,
            Terms::OnDemand(_, exceeded) => exceeded.load(Ordering::Relaxed),
        }
    }

    pub fn memory_bytes(&self) -> usize {
        match self {
            Terms::Whole(v) => v.iter().map(ByteDfa::memory_bytes).sum(),
            Terms::OnDemand(v, _) => {
                // a schema's terminals share one forest: count each forest once
                let mut forests = FxHashSet::default();
                let mut bytes = 0;
                for d in v {
                    let d = lock(d);
                    bytes += d.memory_bytes();
                    if let Some(f) = d.forest().filter(|f| forests.insert(Arc::as_ptr(f))) {
                        bytes += f.memory_bytes();
                    }
                }
                bytes
            }
        }
    }
}

/// The DFA behind `m`; a poisoned lock (a panic mid-step elsewhere) still holds a table
/// whose computed entries are right, and an entry not yet computed is computed again.
fn lock(m: &Mutex<OnDemandDfa>) -> std::sync::MutexGuard<'_, OnDemandDfa> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// `grammar` trimmed ([`Grammar::trimmed`]) with each kept terminal's on-demand DFA, and
/// each rule's number in the result. A terminal is productive iff its regex or tree
/// matches some string, decided on the tree ([`OnDemandDfa::with_emptiness`],
/// [`OnDemandDfa::from_forest`]).
pub(crate) fn trimmed_on_demand(grammar: &Grammar) -> Result<(Grammar, Terms, Vec<u32>), Error> {
    let mut dfas = Vec::with_capacity(grammar.terminals.len());
    let mut term_ok = Vec::with_capacity(grammar.terminals.len());
    for t in &grammar.terminals {
        let built = match &t.tree {
            Some(tree) => OnDemandDfa::from_forest(tree.forest.clone(), tree.root),
            None => OnDemandDfa::with_emptiness(&t.regex),
        };
        let (dfa, some) = built.map_err(|e| {
            let m = format!("terminal {} (/{}/): {e}", t.name, t.regex);
            match e {
                tokensdfa_core::Error::LimitExceeded(_) => Error::Limit(m),
                _ => Error::Invalid(m),
            }
        })?;
        term_ok.push(some);
        dfas.push(Mutex::new(dfa));
    }
    let (g, dfas, renumbered) = grammar.trimmed_by(dfas, &term_ok)?;
    Ok((g, Terms::OnDemand(dfas, AtomicBool::new(false)), renumbered))
}
