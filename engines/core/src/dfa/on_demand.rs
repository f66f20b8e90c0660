//! [`OnDemandDfa`]: a regex's byte DFA computed one transition at a time, for a front end
//! outside this crate that holds many regexes of which a run meets few (the grammar
//! crate's pushdown mode, whose terminals a JSON schema makes by the hundred).
//!
//! It is the lazy index's own automaton (`LazyDfa`): row 0 is the start, a transition
//! is subset construction over the regex's NFA on first use, and [`DEAD`] means no full
//! match is reachable any more, exactly as in a whole [`crate::dfa::ByteDfa`] of the
//! same regex.
//!
//! Building one parses the regex (or takes a tree) and reads off the tree what a
//! grammar asks before any step: whether it matches some string, whether it matches the
//! empty one, its byte classes. The NFA is compiled at the first step, so a terminal a
//! run never scans costs no compiling (on a Kubernetes schema's 262 terminals, compiling
//! them all was a third of the first mask). A compile past the core's limits at that
//! step marks the DFA exceeded ([`OnDemandDfa::exceeded`]), as a step past the walk
//! limit does. Where the tree holds a counted automaton, whose empty match is its own
//! question, or where the regex has look-around (a whole DFA), it is built at once.

use std::sync::Arc;

use rustc_hash::FxHashSet;

use crate::dfa::lazy::LazyDfa;
use crate::dfa::recognizer::Source;
use crate::dfa::{parse, ByteDfa};
use crate::error::Error;
use crate::nfa::ast::{classes_of_cuts, fast_parse, mark_class_cuts};
use crate::nfa::{ByteClasses, Forest};
use crate::util::table::{Stepper, DEAD};

/// A regex's byte DFA, built on demand (see the module doc). States are row numbers.
pub struct OnDemandDfa {
    /// Whether the start state accepts (read off the tree while the DFA is pending).
    start_accepts: bool,
    /// The forest and root the DFA is compiled from (None for a pattern with
    /// look-around, built whole at once).
    tree: Option<(Arc<Forest>, u32)>,
    dfa: Built,
}

enum Built {
    /// Not stepped yet: `tree` is compiled at the first step.
    Pending,
    Ready(Box<LazyDfa>),
    /// Compiling passed the core's limits.
    Failed,
}

impl OnDemandDfa {
    /// The start state of `pattern`'s DFA (the syntax of [`crate::dfa::parse`]).
    pub fn new(pattern: &str) -> Result<Self, Error> {
        Self::with_emptiness(pattern).map(|(d, _)| d)
    }

    /// [`OnDemandDfa::new`], and whether the pattern matches some string (decided on
    /// its parsed form, exactly: no determinization).
    pub fn with_emptiness(pattern: &str) -> Result<(Self, bool), Error> {
        if let Ok(ast) = fast_parse(pattern) {
            let root = ast.root;
            return Self::from_forest(Arc::new(Forest::new(ast)), root);
        }
        let hir = parse(pattern)?;
        let props = hir.properties();
        let some = if props.look_set().is_empty() {
            props.minimum_len().is_some()
        } else {
            let whole = ByteDfa::from_hir(&hir, false)?;
            (0..whole.num_states()).any(|s| whole.is_accepting(s as u32))
        };
        let dfa = joint(LazyDfa::from_hir(&hir)?);
        let d = OnDemandDfa {
            start_accepts: dfa.dfa().is_accepting(0),
            tree: None,
            dfa: Built::Ready(Box::new(dfa)),
        };
        Ok((d, some))
    }

    /// The DFA of the tree at `root` of a forest (a grammar's terminals; the schema
    /// compiler's hold counted automata), and whether it matches some string (exact).
    pub fn from_forest(forest: Arc<Forest>, root: u32) -> Result<(Self, bool), Error> {
        let some = forest.matches_some(root);
        let (start_accepts, dfa) = match forest.matches_empty(root) {
            Some(empty) => (empty, Built::Pending),
            None => {
                let classes = forest.byte_classes(root);
                let dfa = joint(LazyDfa::from_forest(&forest, root, classes)?);
                (dfa.dfa().is_accepting(0), Built::Ready(Box::new(dfa)))
            }
        };
        let d = OnDemandDfa {
            start_accepts,
            tree: Some((forest, root)),
            dfa,
        };
        Ok((d, some))
    }

    /// The forest the DFA is compiled from, whose memory is its own: shared by the
    /// terminals of one grammar, so counted once by their holder.
    pub fn forest(&self) -> Option<&Arc<Forest>> {
        self.tree.as_ref().map(|(f, _)| f)
    }

    /// The state after `byte` from `state`, [`DEAD`] where no full match remains (and
    /// from the first step on, once compiling failed).
    #[inline]
    pub fn next(&mut self, state: u32, byte: u8) -> u32 {
        if state == DEAD {
            return DEAD;
        }
        if let Built::Pending = self.dfa {
            self.compile();
        }
        match &mut self.dfa {
            Built::Ready(d) => {
                let class = d.dfa().classes[byte as usize];
                d.step(state, class)
            }
            Built::Pending | Built::Failed => DEAD,
        }
    }

    /// A lower bound, at most `cap`, on the runs of characters of `class` (ranges of
    /// scalar values) `state` survives: every string of at most that many keeps it live.
    /// Read off the NFA as the lazy index reads its own (`Determinizer::run_lower`:
    /// budgeted, in time independent of the DFA, so a bounded string's remaining length
    /// costs no determinizing), and with joint coverage (`Determinizer::joint_runs`: a
    /// key beside declared keys); 0 once compiling failed.
    pub fn run_lower(&mut self, state: u32, class: &[(u32, u32)], cap: u32) -> u32 {
        if state == DEAD {
            return 0;
        }
        if let Built::Pending = self.dfa {
            self.compile();
        }
        match &mut self.dfa {
            Built::Ready(d) => d.run_lower(state, class, cap).unwrap_or(0),
            Built::Pending | Built::Failed => 0,
        }
    }

    /// Compile a pending tree (at the first step, or the first question).
    fn compile(&mut self) {
        // pending always has a tree (only look-around, built whole, has none)
        let compiled = (self.tree.as_ref())
            .map(|(forest, root)| LazyDfa::from_forest(forest, *root, forest.byte_classes(*root)));
        self.dfa = match compiled {
            Some(Ok(d)) => Built::Ready(Box::new(joint(d))),
            _ => Built::Failed,
        };
    }

    #[inline]
    pub fn is_accepting(&self, state: u32) -> bool {
        match &self.dfa {
            Built::Ready(d) => d.dfa().is_accepting(state),
            // no step taken: the only state handed out is the start
            Built::Pending => state == 0 && self.start_accepts,
            Built::Failed => false,
        }
    }

    /// Whether determinizing passed the NFA's walk limit, or compiling its limits
    /// (transitions since may be wrong).
    pub fn exceeded(&self) -> bool {
        match &self.dfa {
            Built::Ready(d) => d.exceeded(),
            Built::Pending => false,
            Built::Failed => true,
        }
    }

    /// The DFA's own bytes, its forest's aside ([`OnDemandDfa::forest`]).
    pub fn memory_bytes(&self) -> usize {
        match &self.dfa {
            Built::Ready(d) => d.memory_bytes(),
            Built::Pending | Built::Failed => 0,
        }
    }
}

/// The byte classes of many DFAs together: two bytes share one iff they share one in
/// every DFA (a grammar's terminals, read by one recognizer), the roots of a forest read
/// as the whole forest ([`Forest::mark_all_cuts`]), so no DFA is compiled and no tree
/// walked.
pub fn joint_classes<'a>(dfas: impl IntoIterator<Item = &'a OnDemandDfa>) -> ByteClasses {
    let mut cuts = [false; 256];
    // a schema's terminals share one forest, a grammar's regexes have one each
    let mut forests: FxHashSet<*const Forest> = FxHashSet::default();
    for d in dfas {
        match (&d.tree, &d.dfa) {
            (Some((forest, _)), _) => {
                if forests.insert(Arc::as_ptr(forest)) {
                    forest.mark_all_cuts(&mut cuts);
                }
            }
            (None, Built::Ready(whole)) => mark_class_cuts(&whole.dfa().classes, &mut cuts),
            // a DFA without a tree is built whole at once
            (None, Built::Pending | Built::Failed) => {}
        }
    }
    classes_of_cuts(&cuts)
}

/// `dfa` with its NFA's lower run bounds reading joint coverage
/// ([`crate::nfa::Determinizer::joint_runs`]): a terminal's NFA is small enough.
fn joint(mut dfa: LazyDfa) -> LazyDfa {
    if let Some(Source::Nfa(d)) = dfa.det.as_mut() {
        d.joint_runs();
    }
    dfa
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nfa::ast::Ast;

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

    /// Roots of one forest step as whole DFAs of their own patterns would, with classes
    /// of their own (a root reaching only digits tells no letters apart), emptiness and
    /// empty matches read per root, and nothing compiled before the first step.
    #[test]
    fn roots_of_a_forest_are_automata_of_their_own() {
        let mut ast = Ast::default();
        let ab = ast.bytes_node(b"ab");
        let digit = ast.class_node(vec![(u32::from(b'0'), u32::from(b'9'))]);
        let digits = ast.repeat_node(digit, 0, None);
        let ab_digits = ast.list_node(&[ab, digits], false);
        let digits_or_ab = ast.list_node(&[digits, ab], true);
        let never = ast.fail_node();
        let ab_never = ast.list_node(&[ab, never], false);
        let forest = Arc::new(Forest::new(ast));
        let roots = [
            (ab_digits, "ab[0-9]*"),
            (digits_or_ab, "[0-9]*|ab"),
            (digits, "[0-9]*"),
            (ab_never, "ab[^\\s\\S]"),
        ];
        let texts: [&[u8]; 6] = [b"", b"ab", b"ab12", b"12", b"a", b"x"];
        for (root, pattern) in roots {
            let whole = ByteDfa::from_regex(pattern).unwrap();
            let (mut d, some) = OnDemandDfa::from_forest(forest.clone(), root).unwrap();
            assert_eq!(
                some,
                (0..whole.num_states()).any(|s| whole.is_accepting(s as u32))
            );
            assert_eq!(d.memory_bytes(), 0, "{pattern}: compiled before a step");
            assert_eq!(d.is_accepting(0), whole.is_accepting(0), "{pattern}");
            for text in texts {
                let (mut w, mut l) = (0u32, 0u32);
                for &b in text {
                    w = if w == DEAD { DEAD } else { whole.next(w, b) };
                    l = d.next(l, b);
                    assert_eq!(w == DEAD, l == DEAD, "{pattern} on {text:?}");
                }
                if w != DEAD {
                    assert_eq!(
                        whole.is_accepting(w),
                        d.is_accepting(l),
                        "{pattern} {text:?}"
                    );
                }
            }
        }
        let (digits_only, _) = forest.byte_classes(digits);
        assert_eq!(digits_only[b'a' as usize], digits_only[b'z' as usize]);
        let (both, _) = forest.byte_classes(ab_digits);
        assert_ne!(both[b'a' as usize], both[b'z' as usize]);
    }

    /// Joint classes are the common refinement of the DFAs' own classes: two bytes
    /// share a joint class iff they share a class in every DFA, where the DFAs are roots
    /// reaching their whole forest between them, and only if where one's classes are not
    /// runs of bytes (a whole DFA's word-boundary classes). No DFA is compiled.
    #[test]
    fn joint_classes_refine_every_dfas_classes() {
        let mut ast = Ast::default();
        let quote = ast.bytes_node(b"\"k\"");
        let digit = ast.class_node(vec![(u32::from(b'0'), u32::from(b'9'))]);
        let greek = ast.class_node(vec![(0x3B1, 0x3C9)]);
        let digits = ast.repeat_node(digit, 1, None);
        let key_digits = ast.list_node(&[quote, digits], false);
        let forest = Arc::new(Forest::new(ast));
        let mut dfas = vec![
            OnDemandDfa::from_forest(forest.clone(), key_digits)
                .unwrap()
                .0,
            OnDemandDfa::from_forest(forest.clone(), greek).unwrap().0,
            OnDemandDfa::new("(?-u:\\b)x").unwrap(),
        ];
        let (of_roots, _) = joint_classes(&dfas[..2]);
        let (of_all, n) = joint_classes(&dfas);
        assert!(dfas[..2].iter().all(|d| d.memory_bytes() == 0), "compiled");
        let own: Vec<[u8; 256]> = dfas
            .iter_mut()
            .map(|d| {
                d.next(0, b'x'); // compiles a pending DFA
                match &d.dfa {
                    Built::Ready(l) => l.dfa().classes,
                    _ => unreachable!("compiled"),
                }
            })
            .collect();
        for a in 0..=255usize {
            for b in 0..=255usize {
                let apart = |dfas: &[[u8; 256]]| dfas.iter().any(|c| c[a] != c[b]);
                assert_eq!(of_roots[a] != of_roots[b], apart(&own[..2]), "{a} {b}");
                assert!(of_all[a] != of_all[b] || !apart(&own), "{a} {b}");
            }
        }
        assert!(of_all.iter().all(|&c| (c as usize) < n));
    }
}
