//! Token slices: a vocabulary's tokens split by a few regexes, each part with its own
//! walk trie and precomputed mask, so a state that allows a whole part takes its mask at
//! once, and a state that allows none of it skips it, instead of walking it (llguidance's
//! "slicer", extended with the "none" verdict).
//!
//! Slice `k` holds the text tokens whose bytes fully match its pattern `R_k` and no
//! earlier slice's; the *rest* holds every other text token. The default patterns cut
//! JSON string content (characters every converter's dialect lets a string hold
//! unescaped) by length in characters: one slice per length up to 12, then 13-16, 17-24
//! and 25 or more, so that a string with `maxLength` still takes every slice but one:
//!
//! ```text
//! C{1}  C{2}  ...  C{12}  C{13,16}  C{17,24}  C{25,}      C = [^"\\\x00-\x1F\x7F-\x9F]
//! ```
//!
//! On llama3 they hold 121,785 of the 128,000 text tokens: a state inside a JSON string
//! walks only the rest (quotes, escapes, controls, pieces of UTF-8 characters).
//!
//! All slices are decided by one product search ([`crate::walk::masks::classify`]) against the
//! *family automaton*: the product of the slices' DFAs, whose state after a byte string
//! tells which slice (if any) that string would fall in. Exactness is argued there; masks
//! are the same with slices on or off.
//!
//! Here: the slices, their walk tries and masks ([`Prepared`]); `family`: the family
//! automaton ([`Family`]) and the tiers that decide slices of one character class by
//! length.

use crate::dfa::ByteDfa;
use crate::util::bitmask::set_bit;
use crate::util::table::DEAD;
use crate::walk::survival::TokenBytes;
use crate::walk::trie::TokenTrie;
use crate::walk::walktrie::{TokenRanges, WalkTrie};

mod family;
pub use family::{low_bits, Family, NO_SLICE, SPACES};

/// The default slice patterns (see the module doc).
pub const JSON_SLICES: [&str; 15] = [
    r#"[^"\\\x00-\x1F\x7F-\x9F]"#,
    r#"[^"\\\x00-\x1F\x7F-\x9F]{2}"#,
    r#"[^"\\\x00-\x1F\x7F-\x9F]{3}"#,
    r#"[^"\\\x00-\x1F\x7F-\x9F]{4}"#,
    r#"[^"\\\x00-\x1F\x7F-\x9F]{5}"#,
    r#"[^"\\\x00-\x1F\x7F-\x9F]{6}"#,
    r#"[^"\\\x00-\x1F\x7F-\x9F]{7}"#,
    r#"[^"\\\x00-\x1F\x7F-\x9F]{8}"#,
    r#"[^"\\\x00-\x1F\x7F-\x9F]{9}"#,
    r#"[^"\\\x00-\x1F\x7F-\x9F]{10}"#,
    r#"[^"\\\x00-\x1F\x7F-\x9F]{11}"#,
    r#"[^"\\\x00-\x1F\x7F-\x9F]{12}"#,
    r#"[^"\\\x00-\x1F\x7F-\x9F]{13,16}"#,
    r#"[^"\\\x00-\x1F\x7F-\x9F]{17,24}"#,
    r#"[^"\\\x00-\x1F\x7F-\x9F]{25,}"#,
];

/// At most this many slices (their sets are 64-bit masks).
pub const MAX_SLICES: usize = 64;

pub struct Slice {
    pub pattern: String,
    pub trie: WalkTrie,
    /// The slice's tokens as a mask (no EOS).
    pub mask: Vec<u32>,
    /// Union of the masks of this slice and every earlier one.
    pub prefix_mask: Vec<u32>,
}

/// What every index needs of a vocabulary, built once: the full walk trie, the slices
/// with their family automaton, and the trie of the tokens no slice holds.
pub struct Prepared {
    /// Per token id: never text (EOS, a special id, or empty).
    pub never_text: std::sync::Arc<[bool]>,
    pub full: WalkTrie,
    pub family: Family,
    pub slices: Vec<Slice>,
    /// The trie of every slice's tokens, and its subtrees as runs of tokens: what a
    /// pruning walk reads ([`crate::walk::masks::prune`]).
    pub sliced: WalkTrie,
    pub sliced_ranges: TokenRanges,
    pub rest: WalkTrie,
    /// Every byte is a text token of its own (byte-level BPE vocabularies): then every
    /// live state a byte string reaches is reached by tokens too.
    pub byte_complete: bool,
    /// What the full trie's tokens are made of, for survival skips
    /// ([`crate::walk::survival`]; pushdown-mode masks).
    pub full_bytes: TokenBytes,
}

impl Prepared {
    /// `dfas[k]` is the minimized DFA of `patterns[k]`.
    pub fn build(
        trie: &TokenTrie,
        vocab_len: usize,
        patterns: &[String],
        dfas: &[ByteDfa],
    ) -> Self {
        let mut family = Family::build(patterns, dfas);
        // The slice of each text token (NO_SLICE for the rest), by its end state.
        let mut slice_of = vec![NO_SLICE; vocab_len];
        let mut never_text = vec![true; vocab_len];
        let mut bytes = Vec::new();
        let mut longest = vec![0u32; patterns.len()];
        let mut held = [false; SPACES.len()];
        let mut single_bytes = 0;
        // Token bytes are recovered along the depth-first order of the byte trie.
        for (i, node) in trie.nodes.iter().enumerate().skip(1) {
            bytes.truncate(node.depth as usize - 1);
            bytes.push(node.byte);
            if trie.tokens_at(i).is_empty() {
                continue;
            }
            single_bytes += (node.depth == 1) as usize;
            let end = family.walk(&bytes);
            let k = if end == DEAD {
                NO_SLICE
            } else {
                family.slice_of[end as usize]
            };
            if k != NO_SLICE {
                family.ends[end as usize] = true;
                let chars = bytes
                    .iter()
                    .filter(|&&b| !(0x80..0xC0).contains(&b))
                    .count();
                longest[k as usize] = longest[k as usize].max(chars as u32);
                mark_spaces(&bytes, &mut held);
            }
            for &t in trie.tokens_at(i) {
                slice_of[t as usize] = k;
                never_text[t as usize] = false;
            }
        }
        if let Some(t) = &mut family.tiers {
            t.bound(&longest);
            t.narrow(&held);
        }
        let words = vocab_len.div_ceil(32);
        let mut prefix = vec![0u32; words];
        let slices = (0..patterns.len())
            .map(|k| {
                let mut mask = vec![0u32; words];
                for (t, &s) in slice_of.iter().enumerate() {
                    if s == k as u8 {
                        set_bit(&mut mask, t as u32);
                    }
                }
                for (p, m) in prefix.iter_mut().zip(&mask) {
                    *p |= m;
                }
                Slice {
                    pattern: patterns[k].clone(),
                    trie: WalkTrie::build(trie, |t| slice_of[t as usize] == k as u8),
                    mask,
                    prefix_mask: prefix.clone(),
                }
            })
            .collect();
        let rest = WalkTrie::build(trie, |t| {
            slice_of[t as usize] == NO_SLICE && !never_text[t as usize]
        });
        let sliced = WalkTrie::build(trie, |t| slice_of[t as usize] != NO_SLICE);
        let full = WalkTrie::build(trie, |_| true);
        Prepared {
            never_text: never_text.into(),
            sliced_ranges: sliced.token_ranges(),
            sliced,
            full_bytes: TokenBytes::build(&full),
            full,
            family,
            slices,
            rest,
            byte_complete: single_bytes == 256,
        }
    }

    pub fn memory_bytes(&self) -> usize {
        self.full_bytes.memory_bytes()
            + self.full.memory_bytes()
            + self.rest.memory_bytes()
            + self.sliced.memory_bytes()
            + self.sliced_ranges.memory_bytes()
            + self.family.table.len() * 4
            + self.family.num_states() * 10
            + self
                .slices
                .iter()
                .map(|s| s.trie.memory_bytes() + s.mask.len() * 8)
                .sum::<usize>()
    }
}

/// Mark in `held` the characters of [`SPACES`] a slice token's bytes hold.
fn mark_spaces(bytes: &[u8], held: &mut [bool]) {
    if bytes.is_ascii() {
        return;
    }
    for c in std::str::from_utf8(bytes).unwrap_or_default().chars() {
        if let Ok(i) = SPACES.binary_search(&(c as u32)) {
            held[i] = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::util::bitmask::ones;
    use crate::vocab::Vocabulary;

    #[test]
    fn tokens_go_to_the_first_slice_they_match() {
        let toks: Vec<&[u8]> = vec![
            b"<eos>",
            b"abc",
            b"\"a",
            b"0123456789ab",
            b"\xC3",
            "é".as_bytes(),
            b"\x1C",
            b"abcdefghijklmnopqrstuvwxyz",
        ];
        let v = Vocabulary::new(&toks, 0, &[]).unwrap();
        let p = v.prepared();
        assert_eq!(ones(&p.slices[0].mask), vec![5]);
        assert_eq!(ones(&p.slices[2].mask), vec![1]);
        assert_eq!(ones(&p.slices[11].mask), vec![3]);
        assert_eq!(ones(&p.slices[11].prefix_mask), vec![1, 3, 5]);
        // a quote, a lone lead byte, a control byte
        assert_eq!(p.rest.tokens, 3);
        assert_eq!(p.full.tokens, 7);
        assert!(p.never_text[0] && !p.never_text[1]);
        let tiers = p.family.tiers.as_ref().unwrap();
        assert_eq!((tiers.bounds[0], tiers.bounds[13]), ((1, 1), (17, 24)));
        assert_eq!((tiers.bounds[14], tiers.max), ((25, 26), 26)); // the 26 letters
        assert_eq!(
            tiers.verdict(9, 9),
            (0b1_1111_1111, !0b1_1111_1111 & 0x7FFF)
        );
        // no token holds a space past ASCII: the tiers' class leaves them out
        let holds = |c: u32| tiers.class.iter().any(|&(a, b)| a <= c && c <= b);
        assert!(holds('é' as u32) && holds(0x2027) && holds(0x202A));
        assert!(!holds(0x2028) && !holds(0x2029) && !holds(0xA0));
    }

    #[test]
    fn the_tiers_keep_the_spaces_a_slice_token_holds() {
        let toks: Vec<&[u8]> = vec![b"<eos>", "a\u{2028}".as_bytes(), b"ab"];
        let p = Vocabulary::new(&toks, 0, &[]).unwrap().prepared();
        let tiers = p.family.tiers.as_ref().unwrap();
        let holds = |c: u32| tiers.class.iter().any(|&(a, b)| a <= c && c <= b);
        assert!(holds(0x2028) && !holds(0x2029));
    }
}
