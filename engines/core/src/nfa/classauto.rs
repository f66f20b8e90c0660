//! Class automata: one character of a character class, read byte by byte.
//!
//! A Unicode class stands for the UTF-8 encodings of its characters; `regex-syntax`'s
//! [`Utf8Sequences`] cut each range of scalar values into sequences of byte ranges, and a
//! subset construction over (sequence, position) pairs makes them deterministic. The
//! automaton's state 0 is "no byte read yet"; a step answers the next state, [`DONE`]
//! (a whole character of the class was read) or [`NONE`] (no character of the class
//! starts so). UTF-8 is prefix-free, so no byte string is both a whole character and the
//! beginning of another. A byte class (from `(?-u)`) is one step from 0 to `DONE`.
//!
//! An NFA state reading a class carries one of these states while inside a character,
//! so a class used a thousand times in a pattern is built once (and shared process-wide,
//! [`crate::nfa::ast`]). Cost of a step: one table read.

use regex_syntax::utf8::Utf8Sequences;
use rustc_hash::FxHashMap;

pub const NONE: u32 = u32::MAX;
pub const DONE: u32 = u32::MAX - 1;

#[derive(Debug)]
pub struct ClassAuto {
    /// `trans[state * 256 + byte]`: the next state, `DONE` or `NONE`.
    trans: Vec<u32>,
    /// The class: inclusive ranges of scalar values (of bytes if `bytes`), sorted.
    pub ranges: Vec<(u32, u32)>,
    pub bytes: bool,
    /// Bit `b`: some state treats byte `b` unlike `b - 1` (found once: every tree
    /// holding the class reads it for its byte classes).
    boundaries: [u64; 4],
}

impl ClassAuto {
    /// The automaton of the characters in `ranges` (inclusive scalar values).
    pub fn from_char_ranges(ranges: &[(u32, u32)]) -> Self {
        let mut seqs: Vec<Vec<(u8, u8)>> = Vec::new();
        for &(lo, hi) in ranges {
            let (Some(lo), Some(hi)) = (char::from_u32(lo), char::from_u32(hi)) else {
                continue;
            };
            for seq in Utf8Sequences::new(lo, hi) {
                seqs.push(seq.as_slice().iter().map(|r| (r.start, r.end)).collect());
            }
        }
        Self::from_sequences(&seqs, ranges, false)
    }

    /// The automaton of one byte in `ranges`.
    pub fn from_byte_ranges(ranges: &[(u32, u32)]) -> Self {
        let seqs: Vec<Vec<(u8, u8)>> = ranges
            .iter()
            .map(|&(lo, hi)| vec![(lo as u8, hi as u8)])
            .collect();
        Self::from_sequences(&seqs, ranges, true)
    }

    /// Whether every scalar value of `other` (a Unicode class) is in this class.
    pub fn contains_all(&self, other: &[(u32, u32)]) -> bool {
        !self.bytes
            && other.iter().all(|&(lo, hi)| {
                // sorted, non-adjacent ranges: one of ours must cover the whole range
                let i = self.ranges.partition_point(|r| r.1 < lo);
                self.ranges.get(i).is_some_and(|r| r.0 <= lo && hi <= r.1)
            })
    }

    /// Whether some scalar value of `other` (a Unicode class) is in this class; a byte
    /// class is compared as ASCII.
    pub fn meets(&self, other: &[(u32, u32)]) -> bool {
        self.ranges.iter().any(|&(lo, hi)| {
            let (lo, hi) = if self.bytes {
                (lo, hi.min(0x7F))
            } else {
                (lo, hi)
            };
            lo <= hi && other.iter().any(|&(a, b)| a <= hi && lo <= b)
        }) || (self.bytes && self.ranges.iter().any(|r| r.1 >= 0x80))
    }

    /// Subset construction over (sequence, position) pairs.
    fn from_sequences(seqs: &[Vec<(u8, u8)>], ranges: &[(u32, u32)], bytes: bool) -> Self {
        let start: Vec<(u32, u32)> = (0..seqs.len() as u32).map(|i| (i, 0)).collect();
        let mut ids: FxHashMap<Vec<(u32, u32)>, u32> = FxHashMap::default();
        ids.insert(start.clone(), 0);
        let mut sets = vec![start];
        let mut trans: Vec<u32> = Vec::new();
        let mut buckets: Vec<Vec<(u32, u32)>> = vec![Vec::new(); 256];
        let mut i = 0;
        while i < sets.len() {
            let mut done = [false; 256];
            for &(q, pos) in &sets[i] {
                let (lo, hi) = seqs[q as usize][pos as usize];
                let complete = pos as usize + 1 == seqs[q as usize].len();
                for b in lo..=hi {
                    if complete {
                        done[b as usize] = true;
                    } else {
                        buckets[b as usize].push((q, pos + 1));
                    }
                }
            }
            for b in 0..256 {
                let next = if done[b] {
                    buckets[b].clear();
                    DONE
                } else if buckets[b].is_empty() {
                    NONE
                } else {
                    let set = std::mem::take(&mut buckets[b]);
                    let len = sets.len() as u32;
                    *ids.entry(set).or_insert_with_key(|s| {
                        sets.push(s.clone());
                        len
                    })
                };
                trans.push(next);
            }
            i += 1;
        }
        let mut boundaries = [0u64; 4];
        for row in trans.chunks_exact(256) {
            for b in 1..256 {
                if row[b] != row[b - 1] {
                    boundaries[b / 64] |= 1 << (b % 64);
                }
            }
        }
        ClassAuto {
            trans,
            ranges: ranges.to_vec(),
            bytes,
            boundaries,
        }
    }

    #[inline]
    pub fn step(&self, state: u32, byte: u8) -> u32 {
        self.trans[state as usize * 256 + byte as usize]
    }

    #[cfg(test)]
    pub fn num_states(&self) -> usize {
        self.trans.len() / 256
    }

    /// Mark every byte `b` where some state treats `b` unlike `b - 1`.
    pub fn mark_boundaries(&self, boundary: &mut [bool; 256]) {
        for (b, mark) in boundary.iter_mut().enumerate() {
            if self.boundaries[b / 64] >> (b % 64) & 1 == 1 {
                *mark = true;
            }
        }
    }

    pub fn memory_bytes(&self) -> usize {
        self.trans.len() * 4 + self.ranges.len() * 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reads(a: &ClassAuto, bytes: &[u8]) -> u32 {
        let mut s = 0;
        for &b in bytes {
            s = a.step(s, b);
            if s == NONE || s == DONE {
                return s;
            }
        }
        s
    }

    #[test]
    fn utf8_characters_of_a_class() {
        // everything but '"', '\' and controls, as JSON strings hold them
        let a = ClassAuto::from_char_ranges(&[
            (0x20, 0x21),
            (0x23, 0x5B),
            (0x5D, 0x7E),
            (0xA0, 0x10FFFF),
        ]);
        assert_eq!(reads(&a, b"a"), DONE);
        assert_eq!(reads(&a, b"\""), NONE);
        assert_eq!(reads(&a, "é".as_bytes()), DONE);
        assert_eq!(reads(&a, "😀".as_bytes()), DONE);
        assert_eq!(reads(&a, "\u{85}".as_bytes()), NONE);
        assert!(reads(&a, &[0xE2, 0x82]) < DONE); // inside a character
        assert_eq!(reads(&a, &[0x80]), NONE);
        assert_eq!(reads(&a, &[0xED, 0xA0]), NONE); // a surrogate
    }

    #[test]
    fn byte_classes_take_one_step() {
        let a = ClassAuto::from_byte_ranges(&[(0x61, 0x63)]);
        assert_eq!(a.num_states(), 1);
        assert_eq!(a.step(0, b'b'), DONE);
        assert_eq!(a.step(0, b'd'), NONE);
    }
}
