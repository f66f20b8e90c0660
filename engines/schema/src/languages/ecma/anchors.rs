//! Anchors anywhere in an ECMA-262 pattern, for [`super::translate`].
//!
//! Without the `m` flag (JSON Schema has none), `^` matches only at the start of the
//! string and `$` only at its end, wherever they stand: `^(\/?[a-z]*($|\/))*$` is a
//! path whose last segment may end without a slash, `(^|,)x` an `x` at the start or
//! after a comma, `a^b` nothing at all. So a pattern's language stays regular, but not
//! node by node: whether a path through a group may pass its `$` depends on what
//! follows the group.
//!
//! [`Paths`] splits the strings a node matches by the anchors its path passes: none,
//! a `^` (so everything before it in the whole string is empty), a `$` (everything
//! after it is empty), or both. Each piece is an ordinary regex; concatenation,
//! alternation and repetition combine pieces exactly, by asking of the part on the other
//! side of an anchor that it match the empty string. [`Paths::unanchored`] then reads
//! the whole pattern as JSON Schema does, as "a match somewhere", padding each piece
//! only on the sides its anchors leave open.

use crate::languages::rx::{self, Rx};

/// Index of the piece whose paths pass a `^`.
const START: usize = 1;
/// Index of the piece whose paths pass a `$`.
const END: usize = 2;

/// Counted repetitions of a node holding an anchor are written out copy by copy (which
/// keeps them exact with no case analysis of empty iterations); past this many copies
/// the pattern is refused.
pub(super) const MAX_ANCHORED_COPIES: u32 = 256;

/// The strings a pattern node matches, by the anchors passed: `[none, ^, $, ^ and $]`.
#[derive(Clone)]
pub(super) struct Paths([Rx; 4]);

impl Paths {
    /// A node with no anchor inside.
    pub fn plain(x: Rx) -> Paths {
        Paths([x, rx::never(), rx::never(), rx::never()])
    }

    /// `^`: the empty string, at the start.
    pub fn start() -> Paths {
        Paths([rx::never(), rx::empty(), rx::never(), rx::never()])
    }

    /// `$`: the empty string, at the end.
    pub fn end() -> Paths {
        Paths([rx::never(), rx::never(), rx::empty(), rx::never()])
    }

    /// Whether some path passes an anchor.
    pub fn anchored(&self) -> bool {
        self.0[1..].iter().any(|x| !rx::is_never(x))
    }

    /// `a` then `b`: a `^` passed in `b` asks `a` to match the empty string, a `$`
    /// passed in `a` asks it of `b`.
    pub fn concat(a: &Paths, b: &Paths) -> Paths {
        let mut out: [Vec<Rx>; 4] = Default::default();
        for (i, x) in a.0.iter().enumerate() {
            for (j, y) in b.0.iter().enumerate() {
                let x = if j & START != 0 {
                    only_empty(x)
                } else {
                    x.clone()
                };
                let y = if i & END != 0 {
                    only_empty(y)
                } else {
                    y.clone()
                };
                out[i | j].push(rx::concat([x, y]));
            }
        }
        Paths(out.map(rx::alt))
    }

    pub fn alt(parts: &[Paths]) -> Paths {
        Paths(std::array::from_fn(|k| {
            rx::alt(parts.iter().map(|p| p.0[k].clone()))
        }))
    }

    /// `x{lo,hi}`. With no anchor inside, the plain repetition; otherwise `lo` copies
    /// then `hi - lo` optional ones, or then [`Paths::star`]; None past
    /// [`MAX_ANCHORED_COPIES`].
    pub fn repeat(&self, lo: u32, hi: Option<u32>) -> Option<Paths> {
        if !self.anchored() {
            return Some(Paths::plain(rx::repeat(self.0[0].clone(), lo, hi)));
        }
        if hi.unwrap_or(lo) > MAX_ANCHORED_COPIES {
            return None;
        }
        let mut out = Paths::plain(rx::empty());
        for _ in 0..lo {
            out = Paths::concat(&out, self);
        }
        match hi {
            None => Some(Paths::concat(&out, &self.star())),
            Some(hi) => {
                let optional = Paths::alt(&[self.clone(), Paths::plain(rx::empty())]);
                for _ in lo..hi {
                    out = Paths::concat(&out, &optional);
                }
                Some(out)
            }
        }
    }

    /// `x*`. Before the last iteration passing a `^` all iterations are empty, after
    /// the first passing a `$` too, so the pieces are `none*`, `^·none*`, `none*·$`, and
    /// either one iteration passing both or a `^` iteration, free ones, a `$` iteration.
    /// (Where that `$` comes first, both iterations are empty, and so is the string.)
    fn star(&self) -> Paths {
        let [none, start, end, both] = &self.0;
        let free = rx::star(none.clone());
        Paths([
            free.clone(),
            rx::concat([start.clone(), free.clone()]),
            rx::concat([free.clone(), end.clone()]),
            rx::alt([both.clone(), rx::concat([start.clone(), free, end.clone()])]),
        ])
    }

    /// The strings holding a match of the whole pattern somewhere: any string is padded
    /// before a piece with no `^` and after a piece with no `$`.
    pub fn unanchored(&self, any: &Rx) -> Rx {
        let [none, start, end, both] = &self.0;
        rx::alt([
            rx::concat([any.clone(), none.clone(), any.clone()]),
            rx::concat([start.clone(), any.clone()]),
            rx::concat([any.clone(), end.clone()]),
            both.clone(),
        ])
    }
}

/// The empty string if `x` matches it, else nothing.
fn only_empty(x: &Rx) -> Rx {
    if rx::nullable(x) {
        rx::empty()
    } else {
        rx::never()
    }
}

#[cfg(test)]
mod tests {
    use crate::languages::automaton::Dfa;
    use crate::languages::ecma::translate;
    use proptest::prelude::*;
    use regex_automata::meta::Regex;

    /// Patterns over `a`, `b`, `/` with anchors in every position a pattern may put
    /// them, printed in the syntax both ECMA-262 and regex-syntax read alike.
    fn pattern() -> impl Strategy<Value = String> {
        let leaf = prop_oneof![
            Just("a".to_string()),
            Just("b".to_string()),
            Just("/".to_string()),
            Just("[ab]".to_string()),
            Just("^".to_string()),
            Just("$".to_string()),
        ];
        leaf.prop_recursive(4, 24, 3, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 2..4).prop_map(|v| v.concat()),
                prop::collection::vec(inner.clone(), 2..4)
                    .prop_map(|v| format!("(?:{})", v.join("|"))),
                (inner, 0..6usize).prop_map(|(x, q)| {
                    let op = ["?", "*", "+", "{2}", "{1,3}", "{2,}"][q];
                    format!("(?:{x}){op}")
                }),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        /// Anchors anywhere mean what a backtracking-free regex engine finds: a match
        /// somewhere, `^` at the start of the string only, `$` at its end only.
        #[test]
        fn anchors_anywhere_match_as_regex_engines_find(
            p in pattern(),
            strings in prop::collection::vec("[ab/]{0,6}", 24),
        ) {
            let ours = Dfa::from_rx(&translate(&p).unwrap()).unwrap();
            let theirs = Regex::new(&p).unwrap();
            for s in &strings {
                prop_assert_eq!(ours.accepts(s), theirs.is_match(s), "{:?} on {:?}", p, s);
            }
        }
    }
}
