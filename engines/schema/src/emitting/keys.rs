//! Key languages: every string but an object's declared keys.
//!
//! Contract: [`not_in`] matches exactly the strings that are none of its keys, with
//! the regex read off the keys' trie (linear in their length, nesting one group per
//! branching node).

use std::collections::BTreeMap;

use crate::languages::charset::CharSet;
use crate::languages::rx::{self, Rx};

/// Every string but `keys`, as a character-level regex read off their trie: a string
/// not among them either leaves the trie at some node by a character no key continues
/// with (anything may follow), or ends at a node that is not a key. Linear in the keys'
/// length where complementing their automaton, minimizing it and eliminating its states
/// took half the compiler's time on MaskBench. A run of single-child nodes is written
/// flat (one alternative per node, each spelling the run's prefix), so the regex nests
/// one level per branching node, not per character: long keys stay within the parsers'
/// nesting limit.
pub fn not_in(keys: &[&str]) -> Rx {
    let mut root = Trie::default();
    for k in keys {
        root.insert(k);
    }
    rx::alt([
        rx::concat([root.leave(), rx::star(rx::set(CharSet::full()))]),
        root.short(),
    ])
}

#[derive(Default)]
struct Trie {
    key: bool,
    next: BTreeMap<char, Trie>,
}

impl Trie {
    fn insert(&mut self, key: &str) {
        let mut t = self;
        for c in key.chars() {
            t = t.next.entry(c).or_default();
        }
        t.key = true;
    }

    /// The run of single-child nodes from this one: each node with the text leading to
    /// it, ending at the first node with no child or several.
    fn run(&self) -> Vec<(String, &Trie)> {
        let (mut text, mut t) = (String::new(), self);
        let mut out = vec![(text.clone(), t)];
        while t.next.len() == 1 {
            let (&c, child) = t.next.iter().next().expect("one child");
            text.push(c);
            t = child;
            out.push((text.clone(), t));
        }
        out
    }

    /// From this node: one character no key continues with, or continuing characters
    /// and then the same from a later node.
    fn leave(&self) -> Rx {
        self.along(
            |t| {
                let taken = t.next.keys().map(|&c| (c as u32, c as u32)).collect();
                Some(rx::set(CharSet::from_ranges(taken).complement()))
            },
            Trie::leave,
        )
    }

    /// From this node: the paths to nodes that are not keys.
    fn short(&self) -> Rx {
        self.along(|t| (!t.key).then(rx::empty), Trie::short)
    }

    /// The alternatives along this node's run: for each node of the run, the run's text
    /// up to it and then `here(node)` (none where it gives None); where the run ends at a
    /// branching node, the text, then each branch's character and `deeper(child)`.
    fn along(&self, here: impl Fn(&Trie) -> Option<Rx>, deeper: fn(&Trie) -> Rx) -> Rx {
        let run = self.run();
        let mut alts: Vec<Rx> = run
            .iter()
            .filter_map(|(text, t)| Some(rx::concat([rx::lit(text), here(t)?])))
            .collect();
        let (text, end) = run.last().expect("a run has its first node");
        if end.next.len() > 1 {
            let branches = end
                .next
                .iter()
                .map(|(&c, t)| rx::concat([rx::lit(c.encode_utf8(&mut [0; 4])), deeper(t)]));
            alts.push(rx::concat([
                rx::lit(text),
                rx::alt(branches.collect::<Vec<_>>()),
            ]));
        }
        rx::alt(alts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::languages::rx::print;
    use crate::testing::full_match;

    /// Every string of up to four characters over a small alphabet (the keys' own
    /// characters, one they lack, and a non-ASCII one).
    fn strings() -> Vec<String> {
        let alphabet = ['a', 'b', 'c', 'd', 'é', '"'];
        let mut out = vec![String::new()];
        let mut last = vec![String::new()];
        for _ in 0..4 {
            let next: Vec<String> = last
                .iter()
                .flat_map(|s| alphabet.iter().map(move |c| format!("{s}{c}")))
                .collect();
            out.extend(next.iter().cloned());
            last = next;
        }
        out
    }

    #[test]
    fn not_in_is_exactly_the_other_strings() {
        let sets: [&[&str]; 7] = [
            &[],
            &[""],
            &["a"],
            &["a", "ab", "b"],
            &["", "ab", "aé", "bbb"],
            &["é\"", "a"],
            &["abcd", "abce", "ab", "xyz"],
        ];
        for keys in sets {
            let re = print(&not_in(keys));
            for s in strings() {
                let member = keys.contains(&s.as_str());
                assert_eq!(full_match(&re, &s), !member, "keys {keys:?}, {s:?}, {re}");
            }
        }
    }
}
