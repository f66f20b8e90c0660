//! The reference: a token-level automaton built by brute force.
//!
//! From the start state, every reachable DFA state is tried with every text token, byte by
//! byte. Token `t` is allowed in state `s` iff its bytes lead `s` to a live state (some
//! continuation still makes a full match). Nothing is shared between tokens or states, so
//! the result is easy to trust; TokensDFA is checked against it.

use crate::automaton::TokenAutomaton;
use crate::dfa::ByteDfa;
use crate::error::Error;
use crate::util::bitmask::{copy_mask, ones, set_bit, Mask};
use crate::util::table::DEAD;
use crate::vocab::{Tokens, Vocabulary};

pub struct NaiveIndex {
    dfa: ByteDfa,
    /// Token-level state -> DFA state, and back (`DEAD` for DFA states never reached).
    dfa_state: Vec<u32>,
    state_of: Vec<u32>,
    /// One mask per state, `words` words each, EOS included where accepting.
    masks: Vec<u32>,
    words: usize,
    tokens: Tokens,
    special: Vec<bool>,
    vocab_len: usize,
}

impl NaiveIndex {
    pub fn new(pattern: &str, vocab: &Vocabulary) -> Result<Self, Error> {
        Ok(Self::from_dfa(
            ByteDfa::from_regex(pattern)?.minimized(),
            vocab,
        ))
    }

    /// Every reachable state x every text token, each token walked byte by byte. The
    /// masks are all the index stores; `next_state` walks the token again.
    pub fn from_dfa(dfa: ByteDfa, vocab: &Vocabulary) -> Self {
        let text_ids: Vec<u32> = vocab.text_ids().collect();
        let words = vocab.mask_words();
        let mut state_of = vec![DEAD; dfa.num_states()];
        let mut dfa_state = vec![0u32];
        state_of[0] = 0;
        let mut masks = Vec::new();
        let mut i = 0;
        while i < dfa_state.len() {
            let s = dfa_state[i];
            let start = masks.len();
            masks.resize(start + words, 0);
            let mask = &mut masks[start..];
            for &t in &text_ids {
                let next = dfa.walk(s, vocab.token(t));
                if next == DEAD {
                    continue;
                }
                set_bit(mask, t);
                if state_of[next as usize] == DEAD {
                    state_of[next as usize] = dfa_state.len() as u32;
                    dfa_state.push(next);
                }
            }
            if dfa.is_accepting(s) {
                set_bit(mask, vocab.eos_id());
            }
            i += 1;
        }
        NaiveIndex {
            dfa,
            dfa_state,
            state_of,
            masks,
            words,
            tokens: vocab.tokens(),
            special: (0..vocab.len() as u32)
                .map(|t| vocab.is_special(t))
                .collect(),
            vocab_len: vocab.len(),
        }
    }

    fn mask(&self, state: u32) -> &[u32] {
        let m = state as usize * self.words;
        &self.masks[m..m + self.words]
    }
}

impl TokenAutomaton for NaiveIndex {
    fn initial_state(&self) -> u32 {
        0
    }

    fn num_states(&self) -> usize {
        self.dfa_state.len()
    }

    fn next_state(&self, state: u32, token: u32) -> Option<u32> {
        let s = *self.dfa_state.get(state as usize)?;
        if token as usize >= self.vocab_len || self.special[token as usize] {
            return None;
        }
        let bytes = self.tokens.get(token);
        if bytes.is_empty() {
            return None;
        }
        match self.dfa.walk(s, bytes) {
            DEAD => None,
            next => Some(self.state_of[next as usize]),
        }
    }

    fn is_accepting(&self, state: u32) -> bool {
        self.dfa_state
            .get(state as usize)
            .is_some_and(|&s| self.dfa.is_accepting(s))
    }

    fn vocab_len(&self) -> usize {
        self.vocab_len
    }

    /// An unknown state allows nothing.
    fn fill_mask(&self, state: u32, out: &mut Mask) {
        if (state as usize) < self.num_states() {
            copy_mask(out, self.mask(state));
        } else {
            out.fill(0);
        }
    }

    fn allowed(&self, state: u32) -> Vec<u32> {
        ones(self.mask(state))
    }

    fn memory_bytes(&self) -> usize {
        self.masks.len() * 4
            + (self.dfa_state.len() + self.state_of.len()) * 4
            + self.dfa.memory_bytes()
            + self.special.len()
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
