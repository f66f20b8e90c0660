//! The reference: a token-level automaton built by brute force.
//!
//! From the start state, every reachable DFA state is tried with every text token, byte by
//! byte. Token `t` is allowed in state `s` iff its bytes lead `s` to a live state (some
//! continuation still makes a full match). Nothing is shared between tokens or states, so
//! the result is easy to trust; TokensDFA is checked against it.

use rustc_hash::FxHashMap;

use crate::bitmask::{set_bit, Mask};
use crate::dfa::{ByteDfa, DEAD};
use crate::error::Error;
use crate::vocab::Vocabulary;

pub struct NaiveIndex {
    /// Per token-level state: token id -> next state.
    transitions: Vec<FxHashMap<u32, u32>>,
    accepting: Vec<bool>,
    eos_id: u32,
    vocab_len: usize,
}

impl NaiveIndex {
    pub fn new(pattern: &str, vocab: &Vocabulary) -> Result<Self, Error> {
        Ok(Self::from_dfa(&ByteDfa::from_regex(pattern)?, vocab))
    }

    pub fn from_dfa(dfa: &ByteDfa, vocab: &Vocabulary) -> Self {
        let text_ids: Vec<u32> = vocab.text_ids().collect();
        let mut ids: FxHashMap<u32, u32> = FxHashMap::default();
        let mut order: Vec<u32> = vec![0];
        ids.insert(0, 0);
        let mut transitions = Vec::new();
        let mut i = 0;
        while i < order.len() {
            let s = order[i];
            let mut map = FxHashMap::default();
            for &t in &text_ids {
                let next = dfa.walk(s, vocab.token(t));
                if next == DEAD {
                    continue;
                }
                let id = *ids.entry(next).or_insert_with(|| {
                    order.push(next);
                    (order.len() - 1) as u32
                });
                map.insert(t, id);
            }
            transitions.push(map);
            i += 1;
        }
        NaiveIndex {
            transitions,
            accepting: order.iter().map(|&s| dfa.is_accepting(s)).collect(),
            eos_id: vocab.eos_id(),
            vocab_len: vocab.len(),
        }
    }

    pub fn initial_state(&self) -> u32 {
        0
    }

    pub fn num_states(&self) -> usize {
        self.transitions.len()
    }

    pub fn next_state(&self, state: u32, token: u32) -> Option<u32> {
        self.transitions.get(state as usize)?.get(&token).copied()
    }

    pub fn is_accepting(&self, state: u32) -> bool {
        self.accepting.get(state as usize).copied().unwrap_or(false)
    }

    pub fn vocab_len(&self) -> usize {
        self.vocab_len
    }

    /// Write the allowed-token bitmask of `state` into `out` (zeroed first).
    pub fn fill_mask(&self, state: u32, out: &mut Mask) {
        out.fill(0);
        let Some(map) = self.transitions.get(state as usize) else {
            return;
        };
        for &t in map.keys() {
            set_bit(out, t);
        }
        if self.accepting[state as usize] {
            set_bit(out, self.eos_id);
        }
    }

    /// Allowed token ids of `state`, sorted, EOS included when accepting.
    pub fn allowed(&self, state: u32) -> Vec<u32> {
        let mut v: Vec<u32> = self.transitions[state as usize].keys().copied().collect();
        if self.accepting[state as usize] {
            v.push(self.eos_id);
        }
        v.sort_unstable();
        v
    }

    pub fn memory_bytes(&self) -> usize {
        // hashbrown: one control byte plus the (u32, u32) entry per bucket
        self.transitions
            .iter()
            .map(|m| m.capacity() * 9 + std::mem::size_of::<FxHashMap<u32, u32>>())
            .sum::<usize>()
            + self.accepting.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vocab(tokens: &[&str]) -> Vocabulary {
        let t: Vec<&[u8]> = tokens.iter().map(|s| s.as_bytes()).collect();
        Vocabulary::new(&t, 0, &[]).unwrap()
    }

    fn id(tokens: &[&str], s: &str) -> u32 {
        tokens.iter().position(|t| *t == s).unwrap() as u32
    }

    fn walk(ix: &NaiveIndex, toks: &[u32]) -> Option<u32> {
        toks.iter()
            .try_fold(ix.initial_state(), |s, &t| ix.next_state(s, t))
    }

    #[test]
    fn every_alternative_counts() {
        let toks = ["</s>", "a", "b", "ab"];
        let ix = NaiveIndex::new("(a|ab)", &vocab(&toks)).unwrap();
        let s0 = ix.initial_state();
        assert!(ix.next_state(s0, id(&toks, "ab")).is_some());
        let after_a = ix.next_state(s0, id(&toks, "a")).unwrap();
        assert!(ix.next_state(after_a, id(&toks, "b")).is_some());
        assert!(ix.is_accepting(after_a));
    }

    #[test]
    fn continuation_after_a_full_match_is_allowed() {
        let toks = ["</s>", "a", "."];
        let ix = NaiveIndex::new(r"a(\.a)*", &vocab(&toks)).unwrap();
        let s = walk(&ix, &[1]).unwrap();
        assert!(ix.is_accepting(s));
        assert_eq!(ix.allowed(s), vec![0, 2]);
        assert!(walk(&ix, &[1, 2, 1, 2, 1]).is_some());
    }

    #[test]
    fn date_regex_allows_four_digit_years() {
        let mut toks = vec!["</s>", "-", "2024", "20", "24", "01", "15"];
        for d in ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"] {
            toks.push(d);
        }
        let v = vocab(&toks);
        let ix = NaiveIndex::new(r"(\d{4})-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])", &v).unwrap();
        let year = walk(&ix, &[id(&toks, "2024")]).unwrap();
        assert!(ix.next_state(year, id(&toks, "-")).is_some());
        let path = [
            id(&toks, "20"),
            id(&toks, "24"),
            id(&toks, "-"),
            id(&toks, "01"),
            id(&toks, "-"),
            id(&toks, "15"),
        ];
        assert!(ix.is_accepting(walk(&ix, &path).unwrap()));
    }

    #[test]
    fn eos_only_where_the_prefix_fully_matches() {
        let toks = ["</s>", "a", "b"];
        let ix = NaiveIndex::new("ab", &vocab(&toks)).unwrap();
        assert!(!ix.allowed(ix.initial_state()).contains(&0));
        let s = walk(&ix, &[1]).unwrap();
        assert!(!ix.allowed(s).contains(&0));
        let s = walk(&ix, &[1, 2]).unwrap();
        assert_eq!(ix.allowed(s), vec![0]);
    }

    #[test]
    fn special_ids_are_never_allowed_even_if_their_text_matches() {
        let toks: Vec<&[u8]> = vec![b"</s>", b"<s>", b"<", b"s", b">"];
        let v = Vocabulary::new(&toks, 0, &[1]).unwrap();
        let ix = NaiveIndex::new(r"<s>|</s>", &v).unwrap();
        let allowed = ix.allowed(ix.initial_state());
        assert_eq!(allowed, vec![2]);
    }

    #[test]
    fn multibyte_character_split_across_tokens() {
        // "é" is C3 A9: neither half is valid UTF-8 on its own.
        let toks: Vec<&[u8]> = vec![b"</s>", b"\xC3", b"\xA9", b"\xC3\xA9", b"e"];
        let v = Vocabulary::new(&toks, 0, &[]).unwrap();
        let ix = NaiveIndex::new("é+", &v).unwrap();
        let s0 = ix.initial_state();
        assert_eq!(ix.allowed(s0), vec![1, 3]);
        let half = ix.next_state(s0, 1).unwrap();
        assert_eq!(ix.allowed(half), vec![2]);
        let full = ix.next_state(half, 2).unwrap();
        assert!(ix.is_accepting(full));
    }

    #[test]
    fn mask_layout_is_bit_i_mod_32_of_word_i_div_32() {
        let mut toks = vec!["</s>".to_string()];
        for i in 1..40 {
            toks.push(format!("x{i}"));
        }
        toks[33] = "y".into();
        let t: Vec<&[u8]> = toks.iter().map(|s| s.as_bytes()).collect();
        let v = Vocabulary::new(&t, 0, &[]).unwrap();
        let ix = NaiveIndex::new("y", &v).unwrap();
        let mut mask = vec![0u32; v.mask_words()];
        ix.fill_mask(0, &mut mask);
        assert_eq!(mask, vec![0, 1 << 1]);
    }
}
