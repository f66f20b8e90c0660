//! Survival skips: a walk from a state that surely survives every string of some byte
//! set (inside a comment, free text, a string of a grammar) takes whole the subtrees
//! whose tokens are all such strings, instead of stepping every node of them.
//!
//! A [`Survival`] of a state says: every byte string that is a prefix of strictly valid
//! UTF-8 (see [`utf8_step`]), whose ASCII bytes all lie in `ascii` and which holds no
//! byte of 0x80 or more unless `chars`, keeps the state alive. Two sources vouch for
//! one: the state's automaton (a recognizer's `survivals`: the grammar crate reads them
//! off the terminal automata of an Earley set's items, where a line comment's terminal
//! survives every string without a newline), or a search of the table itself where a
//! state that loops is near ([`searched_survival`]: a comment written one character at a
//! time). Every token that is such a string is then allowed, as a walk would find: the
//! walk's automata are live, a state not [`DEAD`] can still reach a match.
//!
//! [`TokenBytes`] holds, per node of a walk trie, the ASCII bytes of every token below
//! it (their whole strings, the node's path included) and whether any of them has a byte
//! of 0x80 or more or breaks UTF-8. A node *fits* a survival when those tokens are all its
//! strings ([`Survival::fits`]); the walk then sets their bits and skips the subtree.
//! The test reads no state, so it holds at every depth; a walk checks it before stepping
//! a node. Masks equal the plain walk's; the skipped tokens' next states, which a mask
//! does not need, are not reported, so only mask walks skip.
//!
//! On llama3 (274,520 trie nodes), a state that survives everything but a newline
//! reaches a few thousand nodes; one that survives everything, the root alone.

use crate::util::table::{Stepper, DEAD, UNKNOWN};
use crate::walk::walktrie::{TokenRanges, WalkTrie};

/// Flag of [`TokenBytes`]: some token below the node has a byte of 0x80 or more.
const HIGH: u8 = 1;
/// Flag: some token below the node is no prefix of valid UTF-8.
const BROKEN_BELOW: u8 = 2;

/// Per node of a walk trie, what its tokens are made of (see the module doc), and the
/// subtrees' token runs a skip sets.
pub struct TokenBytes {
    ascii: Vec<u128>,
    flags: Vec<u8>,
    pub ranges: TokenRanges,
}

impl TokenBytes {
    pub fn build(trie: &WalkTrie) -> Self {
        let nodes = &trie.nodes;
        let n = nodes.len();
        let mut ascii = vec![0u128; n];
        let mut flags = vec![0u8; n];
        let mut parent = vec![0u32; n];
        // path[d]: the node at depth d on the current path and the UTF-8 state there
        let mut path = vec![(0u32, 0u8); trie.max_depth + 1];
        for (i, node) in nodes.iter().enumerate().skip(1) {
            let d = node.depth as usize;
            let (p, before) = path[d - 1];
            let state = if before == BROKEN {
                BROKEN
            } else {
                utf8_step(before, node.byte)
            };
            path[d] = (i as u32, state);
            parent[i] = p;
            // the path's bytes, then the subtree's folded in below
            let (up_ascii, up_flags) = (ascii[p as usize], flags[p as usize]);
            ascii[i] = up_ascii | if node.byte < 0x80 { 1 << node.byte } else { 0 };
            let high = if node.byte >= 0x80 { HIGH } else { 0 };
            let broken = if state == BROKEN { BROKEN_BELOW } else { 0 };
            flags[i] = up_flags | high | broken;
        }
        // Children follow their parent in the layout: fold each into it, last first.
        for i in (1..n).rev() {
            let p = parent[i] as usize;
            ascii[p] |= ascii[i];
            flags[p] |= flags[i];
        }
        TokenBytes {
            ascii,
            flags,
            ranges: trie.token_ranges(),
        }
    }

    pub fn memory_bytes(&self) -> usize {
        self.ascii.len() * 16 + self.flags.len() + self.ranges.memory_bytes()
    }
}

/// Strings a state surely survives (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Survival {
    /// The ASCII bytes the strings may hold.
    pub ascii: u128,
    /// Whether they may hold multi-byte characters (any valid one).
    pub chars: bool,
}

impl Survival {
    /// Whether every token below node `i` is a string this survival covers.
    #[inline(always)]
    pub fn fits(&self, tb: &TokenBytes, i: usize) -> bool {
        let flags = tb.flags[i];
        tb.ascii[i] & !self.ascii == 0
            && flags & BROKEN_BELOW == 0
            && (self.chars || flags & HIGH == 0)
    }

    /// Whether every string of characters in `class` (inclusive ranges of scalar
    /// values) is one this survival covers.
    pub fn covers(&self, class: &[(u32, u32)]) -> bool {
        class.iter().all(|&(lo, hi)| {
            let ascii =
                (lo.min(128)..hi.saturating_add(1).min(128)).all(|c| self.ascii >> c & 1 == 1);
            ascii && (hi < 128 || self.chars)
        })
    }

    /// Whether `other` covers every string this one does.
    pub fn within(&self, other: &Survival) -> bool {
        self.ascii & !other.ascii == 0 && (other.chars || !self.chars)
    }

    /// A wide survival of state `start` of an automaton stepped by `next` (a byte at a
    /// time, [`DEAD`] past a match), or None when nothing is left or the search gives
    /// up. The bytes that kill `start` itself are left out first; then a search over
    /// (UTF-8 state, automaton state) pairs looks for a string the survival covers that
    /// dies, and leaves out the byte it *began* with, since that byte led into the region
    /// where strings die (inside a string, the closing quote, after which every byte
    /// kills), or every multi-byte character if one began it or a byte of one kills it;
    /// then searches again. At most eight rounds of at most `max_pairs` pairs each (past
    /// them with multi-byte characters, it searches again without them).
    pub fn search(
        start: u32,
        max_pairs: usize,
        mut next: impl FnMut(u32, u8) -> u32,
    ) -> Option<Survival> {
        let mut s = Survival {
            ascii: (0..128u8)
                .filter(|&b| next(start, b) != DEAD)
                .fold(0, |m, b| m | 1 << b),
            chars: true,
        };
        for _round in 0..8 {
            match first_death(start, &s, max_pairs, &mut next) {
                Some(None) => return (s.ascii != 0 || s.chars).then_some(s),
                Some(Some(b)) if b < 0x80 => s.ascii &= !(1u128 << b),
                // a character that dies, or too many pairs inside characters: ASCII alone
                Some(Some(_)) => s.chars = false,
                None if s.chars => s.chars = false,
                None => return None,
            }
        }
        None
    }
}

/// The first byte of a string `s` covers that dies, read from `start`, or the byte of a
/// character that kills it (None: none dies); `None` outright (the outer option) past
/// `max_pairs` pairs.
fn first_death(
    start: u32,
    s: &Survival,
    max_pairs: usize,
    next: &mut impl FnMut(u32, u8) -> u32,
) -> Option<Option<u8>> {
    // (UTF-8 state, automaton state, the byte the string began with; start's own: none)
    const NONE: u16 = u16::MAX;
    let mut seen: Vec<(u8, u32)> = vec![(0, start)];
    let mut todo = vec![(0u8, start, NONE)];
    while let Some((u, q, first)) = todo.pop() {
        // ASCII only at a character boundary; the rest only if characters are covered
        let ascii_end = if u == 0 { 0x80u32 } else { 0 };
        let high_end = if s.chars { 0x100u32 } else { 0x80 };
        let covered = (0..ascii_end).filter(|&b| s.ascii >> b & 1 == 1);
        for b in covered.chain(0x80..high_end).map(|b| b as u8) {
            let u2 = utf8_step(u, b);
            if u2 == BROKEN {
                continue;
            }
            let began = if first == NONE { b as u16 } else { first };
            let q2 = next(q, b);
            if q2 == DEAD {
                // a byte of a character kills: characters go, whatever came before
                return Some(Some(if b >= 0x80 { b } else { began as u8 }));
            }
            if !seen.contains(&(u2, q2)) {
                if seen.len() >= max_pairs {
                    return None;
                }
                seen.push((u2, q2));
                todo.push((u2, q2, began));
            }
        }
    }
    Some(None)
}

/// A byte string that is no prefix of valid UTF-8.
const BROKEN: u8 = u8::MAX;

/// Strict UTF-8 (no overlong form, surrogate or code point past U+10FFFF), one byte at a
/// time. States: 0 at a character boundary; 1, 2, 3 continuation bytes (0x80-0xBF) still
/// owed; after E0, ED, F0, F4 the one next byte whose range is narrower (4, 5, 6, 7);
/// [`BROKEN`].
pub fn utf8_step(state: u8, b: u8) -> u8 {
    match (state, b) {
        (0, 0x00..=0x7F) => 0,
        (0, 0xC2..=0xDF) => 1,
        (0, 0xE0) => 4,
        (0, 0xED) => 5,
        (0, 0xE1..=0xEF) => 2,
        (0, 0xF0) => 6,
        (0, 0xF1..=0xF3) => 3,
        (0, 0xF4) => 7,
        (1..=3, 0x80..=0xBF) => state - 1,
        (4, 0xA0..=0xBF) | (5, 0x80..=0x9F) => 1,
        (6, 0x90..=0xBF) | (7, 0x80..=0x8F) => 2,
        _ => BROKEN,
    }
}

/// (UTF-8 state, row) pairs [`searched_survival`] explores: a comment's loop needs a
/// handful.
const SEARCHED_PAIRS: usize = 64;

/// Steps [`loop_near`] follows from a row looking for a loop, and the most states the
/// row may go to on ASCII bytes.
const NEAR_STEPS: usize = 4;
const NEAR_WAYS: usize = 4;

/// A survival of the state at `row` of a table, found by searching the table itself
/// ([`Survival::search`]) where a loop is near ([`loop_near`]), computing at most
/// `budget` missing transitions: past it a missing one counts as a death, which only
/// leaves bytes out (the survival returned was searched to the end with real
/// transitions). What a comment gives that a grammar writes one character at a time,
/// whose set loops on every byte but `*` while no terminal survives two bytes.
pub fn searched_survival<S: Stepper>(dfa: &mut S, row: u32, mut budget: usize) -> Option<Survival> {
    if !loop_near(dfa, row) {
        return None;
    }
    Survival::search(row, SEARCHED_PAIRS, |q, b| {
        let class = dfa.dfa().classes[b as usize];
        let next = dfa.dfa().table[q as usize + class as usize];
        if next != UNKNOWN {
            next
        } else if budget == 0 {
            DEAD
        } else {
            budget -= 1;
            dfa.resolve(q, class)
        }
    })
}

/// Whether a loop is near `row`: a state going back to itself on at least half the
/// ASCII bytes, reached from the row by a few steps each taken on at least a quarter of
/// them (a comment's inside, after the byte that may end it), the row going to few
/// states. A state that goes to many (a code position: every keyword's prefix), or
/// reaches its successors on a byte or two each, would cost a search their rows, and
/// strings die soon after.
fn loop_near<S: Stepper>(dfa: &mut S, row: u32) -> bool {
    let mut bulk = row;
    for depth in 0..NEAR_STEPS {
        // (successor, ASCII bytes leading to it)
        let mut to: Vec<(u32, u32)> = Vec::new();
        for b in 0..128u8 {
            let next = dfa.step(bulk, dfa.dfa().classes[b as usize]);
            if next == DEAD {
                continue;
            }
            if let Some((_, n)) = to.iter_mut().find(|(s, _)| *s == next) {
                *n += 1;
            } else if depth == 0 && to.len() == NEAR_WAYS {
                return false;
            } else {
                to.push((next, 1));
            }
        }
        match to.iter().max_by_key(|&&(_, n)| n) {
            Some(&(s, n)) if s == bulk && n >= 64 => return true,
            Some(&(s, n)) if n >= 32 && s != bulk => bulk = s,
            _ => return false,
        }
    }
    false
}

/// Take node `i`'s subtree whole if one of `survivals` fits it: set its tokens in
/// `mask`; true if taken (the walk's skip, [`crate::walk::masks::walk_skipping`]).
#[inline(always)]
pub fn take_whole(
    survivals: &[Survival],
    tb: &TokenBytes,
    trie: &WalkTrie,
    i: usize,
    mask: &mut [u32],
) -> bool {
    if !survivals.iter().any(|s| s.fits(tb, i)) {
        return false;
    }
    for &t in tb.ranges.below(trie, i) {
        mask[(t >> 5) as usize] |= 1 << (t & 31);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::Vocabulary;

    fn run(bytes: &[u8]) -> u8 {
        bytes.iter().fold(
            0,
            |s, &b| {
                if s == BROKEN {
                    BROKEN
                } else {
                    utf8_step(s, b)
                }
            },
        )
    }

    #[test]
    fn strict_utf8_agrees_with_std() {
        let probe: Vec<u8> = (0..=255u8)
            .step_by(5)
            .chain([
                0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC1, 0xC2, 0xE0, 0xED, 0xF0, 0xF4,
            ])
            .collect();
        for &a in &probe {
            for &b in &probe {
                for &c in &probe {
                    let s = [a, b, c];
                    let (valid, prefix) = match std::str::from_utf8(&s) {
                        Ok(_) => (true, true),
                        Err(e) => (false, e.error_len().is_none()),
                    };
                    assert_eq!(run(&s) == 0, valid, "{s:x?}");
                    assert_eq!(run(&s) != BROKEN, prefix, "{s:x?}");
                }
            }
        }
    }

    /// A line comment's inside: every byte but a newline goes back to it; a byte past
    /// 0x7F goes to a state that only a continuation byte leaves (a UTF-8 reader).
    fn line_comment(q: u32, b: u8) -> u32 {
        match (q, b) {
            (0, b'\n') => DEAD,
            (0, 0..=0x7F) => 0,
            (0, 0xC2..=0xDF) => 1,
            (0, _) => DEAD,
            (1, 0x80..=0xBF) => 0,
            _ => DEAD,
        }
    }

    #[test]
    fn search_drops_the_bytes_that_kill() {
        let s = Survival::search(0, 64, line_comment).unwrap();
        assert_eq!(s.ascii, !(1u128 << b'\n'));
        // three-byte characters die
        assert!(!s.chars);
        let every = Survival::search(0, 64, |_, _| 0).unwrap();
        assert!(every.chars && every.ascii == !0u128);
        assert_eq!(Survival::search(0, 64, |_, _| DEAD), None);
        // inside a string whose closing quote ends the match: the quote is left out,
        // not every byte that dies after it
        let inside = |q: u32, b: u8| match (q, b) {
            (0, b'"') => 1,
            (0, 0..=0x7F) => 0,
            _ => DEAD,
        };
        let s = Survival::search(0, 64, inside).unwrap();
        assert_eq!((s.ascii, s.chars), (!(1u128 << b'"'), false));
        // past the pair budget: no claim
        assert_eq!(Survival::search(0, 3, |q, _| q + 1), None);
    }

    #[test]
    fn a_survival_fits_the_subtrees_of_its_strings_only() {
        let toks: Vec<&[u8]> = vec![
            b"<eos>",
            b"ab",
            b"a\n",
            b"a",
            "é".as_bytes(),
            b"\xC3",
            b"\x80",
        ];
        let v = Vocabulary::new(&toks, 0, &[]).unwrap();
        let trie = WalkTrie::build(v.trie(), |t| t != 0);
        let tb = TokenBytes::build(&trie);
        let node = |bytes: &[u8]| {
            let mut path = Vec::new();
            for (i, n) in trie.nodes.iter().enumerate().skip(1) {
                path.truncate(n.depth as usize - 1);
                path.push(n.byte);
                if path == bytes {
                    return i;
                }
            }
            panic!("no node {bytes:?}")
        };
        let no_newline = Survival {
            ascii: !(1u128 << b'\n'),
            chars: true,
        };
        assert!(!no_newline.fits(&tb, node(b"a"))); // "a\n" is below
        assert!(no_newline.fits(&tb, node(b"ab")));
        assert!(no_newline.fits(&tb, node(b"\xC3"))); // "é" and its first byte
        assert!(!no_newline.fits(&tb, node(b"\x80"))); // a stray continuation byte
        let ascii_only = Survival {
            chars: false,
            ..no_newline
        };
        assert!(!ascii_only.fits(&tb, node(b"\xC3")));
        assert!(ascii_only.within(&no_newline) && !no_newline.within(&ascii_only));
        // JSON string content (the default slices' class) without a quote or backslash
        let class = [(0x20, 0x21), (0x23, 0x5B), (0x5D, 0x7E), (0xA0, 0x10FFFF)];
        assert!(no_newline.covers(&class) && !ascii_only.covers(&class));
        let no_quote = Survival {
            ascii: !(1u128 << b'"'),
            chars: true,
        };
        assert!(no_quote.covers(&class) && !no_quote.covers(&[(0x21, 0x23)]));
        let mut mask = vec![0u32; 1];
        assert!(take_whole(
            &[ascii_only, no_newline],
            &tb,
            &trie,
            node(b"\xC3"),
            &mut mask
        ));
        assert_eq!(mask[0], 1 << 4 | 1 << 5);
    }
}
