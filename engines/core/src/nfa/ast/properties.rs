//! What is read off a tree without compiling it: whether each node matches the empty
//! string, and the byte classes (the pushdown mode asks these of every terminal, and
//! compiles a terminal's NFA only at its first step).

use super::{Ast, Node};
use crate::nfa::classauto::ClassAuto;

impl Ast {
    /// Per node, whether it matches the empty string: exact on the structure (children
    /// come before parents in `nodes`); None where that hangs on a counted automaton.
    /// (Whether a node matches some string is the NFA compiler's `matchable`.)
    pub fn empty_matches(&self) -> Vec<Option<bool>> {
        let mut empty: Vec<Option<bool>> = Vec::with_capacity(self.nodes.len());
        for node in &self.nodes {
            let kids = |at, len| self.slice_kids(at, len).iter().map(|&k| empty[k as usize]);
            let e = match *node {
                Node::Fail | Node::Class(_) => Some(false),
                Node::Empty => Some(true),
                Node::Bytes { len, .. } => Some(len == 0),
                Node::Concat { at, len } => kids(at, len)
                    .try_fold(Some(true), |acc, k| match k {
                        Some(false) => Err(()),
                        Some(true) => Ok(acc),
                        None => Ok(None),
                    })
                    .unwrap_or(Some(false)),
                Node::Alt { at, len } => kids(at, len)
                    .try_fold(Some(false), |acc, k| match k {
                        Some(true) => Err(()),
                        Some(false) => Ok(acc),
                        None => Ok(None),
                    })
                    .unwrap_or(Some(true)),
                Node::Repeat { sub, min, .. } => {
                    if min == 0 {
                        Some(true)
                    } else {
                        empty[sub as usize]
                    }
                }
                Node::Graph(_) => None,
            };
            empty.push(e);
        }
        empty
    }

    /// The byte classes of the tree's automaton: two bytes share one iff no literal
    /// byte and no class of the tree tells them apart, so every NFA state compiled from
    /// the tree, now or later, reads them alike. Read off the tree alone, before any
    /// compiling.
    pub fn byte_classes(&self) -> ([u8; 256], usize) {
        classes_of(&self.bytes, self.classes.iter().map(|c| &**c))
    }
}

/// Byte classes telling apart `bytes` (as literals) and what `classes` read: two bytes
/// share a class iff none of them separates the two.
pub(crate) fn classes_of<'a>(
    bytes: &[u8],
    classes: impl Iterator<Item = &'a ClassAuto>,
) -> ([u8; 256], usize) {
    let mut cuts = [false; 256];
    mark_cuts(bytes, classes, &mut cuts);
    classes_of_cuts(&cuts)
}

/// Mark in `cuts` where `bytes` (as literals) and what `classes` read separate a byte
/// from the one below it (`cuts[b]`: `b - 1` and `b` may differ).
pub(crate) fn mark_cuts<'a>(
    bytes: &[u8],
    classes: impl Iterator<Item = &'a ClassAuto>,
    cuts: &mut [bool; 256],
) {
    for &byte in bytes {
        cuts[byte as usize] = true;
        if byte < 255 {
            cuts[byte as usize + 1] = true;
        }
    }
    for c in classes {
        c.mark_boundaries(cuts);
    }
}

/// The byte classes cut at `cuts`: runs of bytes with no cut between them share one.
/// (Every class map this crate builds is such runs, so the classes of many automata
/// together are the runs cut where any of theirs is, [`mark_class_cuts`].)
pub fn classes_of_cuts(cuts: &[bool; 256]) -> ([u8; 256], usize) {
    let mut out = [0u8; 256];
    let mut k = 0usize;
    for b in 1..256 {
        if cuts[b] {
            k += 1;
        }
        out[b] = k as u8;
    }
    (out, k + 1)
}

/// Mark in `cuts` where the class map `classes` changes from one byte to the next
/// (for a map not of runs this cuts finer than it, which only adds classes).
pub fn mark_class_cuts(classes: &[u8; 256], cuts: &mut [bool; 256]) {
    for b in 1..256 {
        if classes[b] != classes[b - 1] {
            cuts[b] = true;
        }
    }
}
