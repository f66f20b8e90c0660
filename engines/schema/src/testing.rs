//! What the compiler's unit tests share: a regex's full matches, decided by
//! regex-automata's dense DFA (an implementation independent of this module's).

use regex_automata::dfa::{dense, Automaton};
use regex_automata::{Anchored, Input};

use crate::languages::rx::{print, Rx};

/// Whether a text is a full match of `re` (the DFA is built once).
pub fn matcher(re: &str) -> impl Fn(&str) -> bool {
    let dfa = dense::DFA::new(&format!("^(?:{re})$")).unwrap();
    move |t: &str| {
        dfa.try_search_fwd(&Input::new(t).anchored(Anchored::Yes))
            .unwrap()
            .is_some()
    }
}

/// As [`matcher`], for a tree.
pub fn tree_matcher(x: &Rx) -> impl Fn(&str) -> bool {
    matcher(&print(x))
}

/// Whether `text` is a full match of `re`.
pub fn full_match(re: &str, text: &str) -> bool {
    matcher(re)(text)
}
