//! [`OnDemandDfa`]: a regex's byte DFA computed one transition at a time, for a front end
//! outside this crate that holds many regexes of which a run meets few (the grammar
//! crate's pushdown mode, whose terminals a JSON schema makes by the hundred).
//!
//! It is the lazy index's own automaton (`LazyDfa`): row 0 is the start, a transition
//! is subset construction over the regex's NFA on first use, and [`DEAD`] means no full
//! match is reachable any more, exactly as in a whole [`crate::dfa::ByteDfa`] of the
//! same regex. Building one parses the regex and compiles its NFA: no determinization.

use crate::dfa::lazy::LazyDfa;
use crate::dfa::{parse, ByteDfa};
use crate::error::Error;
use crate::nfa::ast::fast_parse;
use crate::util::table::{Stepper, DEAD};

/// A regex's byte DFA, built on demand (see the module doc). States are row numbers.
#[derive(Clone)]
pub struct OnDemandDfa(LazyDfa);

impl OnDemandDfa {
    /// The start state of `pattern`'s DFA (the syntax of [`crate::dfa::parse`]).
    pub fn new(pattern: &str) -> Result<Self, Error> {
        LazyDfa::new(pattern).map(OnDemandDfa)
    }

    /// [`OnDemandDfa::new`], and whether the pattern matches some string (decided on
    /// its parsed form, exactly: no determinization).
    pub fn with_emptiness(pattern: &str) -> Result<(Self, bool), Error> {
        if let Ok(ast) = fast_parse(pattern) {
            // a parsed pattern holds no counted automaton, whose emptiness is its own
            let some = ast.matches_some().unwrap_or(true);
            return Ok((OnDemandDfa(LazyDfa::from_ast(ast)?), some));
        }
        let hir = parse(pattern)?;
        let props = hir.properties();
        let some = if props.look_set().is_empty() {
            props.minimum_len().is_some()
        } else {
            let whole = ByteDfa::from_hir(&hir, false)?;
            (0..whole.num_states()).any(|s| whole.is_accepting(s as u32))
        };
        Ok((OnDemandDfa(LazyDfa::from_hir(&hir)?), some))
    }

    /// The state after `byte` from `state`, [`DEAD`] where no full match remains.
    #[inline]
    pub fn next(&mut self, state: u32, byte: u8) -> u32 {
        if state == DEAD {
            return DEAD;
        }
        let class = self.0.dfa().classes[byte as usize];
        self.0.step(state, class)
    }

    #[inline]
    pub fn is_accepting(&self, state: u32) -> bool {
        self.0.dfa().is_accepting(state)
    }

    /// The byte classes: two bytes of one class lead every state to the same state.
    pub fn classes(&self) -> &[u8; 256] {
        &self.0.dfa().classes
    }

    /// Whether determinizing passed the NFA's walk limit (transitions since may be wrong).
    pub fn exceeded(&self) -> bool {
        self.0.exceeded()
    }

    pub fn memory_bytes(&self) -> usize {
        self.0.memory_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Emptiness and steps agree with the whole DFA of the same pattern, on patterns
    /// the fast parser reads, ones only regex-syntax reads, and ones with look-around.
    #[test]
    fn emptiness_and_steps_agree_with_the_whole_dfa() {
        let patterns = [
            "a",
            "",
            "[^\\x00-\\x{10FFFF}]",
            "a[^\\s\\S]",
            "(?:[^\\s\\S])*",
            "(?:[^\\s\\S])+b",
            "a|[^\\s\\S]",
            "(?:ab|c)*d?",
            "\\p{Greek}+",
            "^a$",
            "a^b",
            "(?-u:\\b)x(?-u:\\b)",
        ];
        let texts: [&[u8]; 7] = [b"", b"a", b"b", b"abd", b"x", "\u{3b1}".as_bytes(), b"ab"];
        for p in patterns {
            let whole = ByteDfa::from_regex(p).unwrap();
            let some = (0..whole.num_states()).any(|s| whole.is_accepting(s as u32));
            let (mut lazy, got) = OnDemandDfa::with_emptiness(p).unwrap();
            assert_eq!(got, some, "{p}");
            for text in texts {
                let (mut w, mut l) = (0u32, 0u32);
                for &b in text {
                    w = if w == DEAD { DEAD } else { whole.next(w, b) };
                    l = lazy.next(l, b);
                    assert_eq!(w == DEAD, l == DEAD, "{p} on {text:?}");
                }
                let accepts = |d: bool, s: u32| s != DEAD && d;
                assert_eq!(
                    accepts(w != DEAD && whole.is_accepting(w), w),
                    accepts(l != DEAD && lazy.is_accepting(l), l),
                    "{p} accepts {text:?}"
                );
            }
        }
    }
}
