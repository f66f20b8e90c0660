//! Walk tries: compact depth-first byte tries over a subset of a vocabulary's tokens,
//! the layout every mask walk reads.
//!
//! A walk trie is the [`TokenTrie`] restricted to some token ids: a node is kept iff its
//! subtree holds one of them, so the layout stays depth-first and a subtree stays a
//! contiguous run of `subtree` nodes (a rejected prefix skips it with one addition). A
//! node is 12 bytes: its byte, its depth (which slot of the walk's state stack holds its
//! parent's state), whether its byte string is whole UTF-8 characters, and the token that
//! ends there. Tokens sharing one byte string (rare)
//! are listed apart, the node pointing at the list.
//!
//! Building one is a linear pass over the byte trie with prefix sums; it is done once per
//! vocabulary ([`crate::Vocabulary::prepared`]).

use crate::walk::trie::TokenTrie;

/// `WalkNode::tok` of a node where no token ends.
pub const NO_TOKEN: u32 = u32::MAX;
/// Flag of `WalkNode::tok`: the low bits index [`WalkTrie::multi`], where a count
/// precedes the token ids.
pub const MULTI: u32 = 1 << 31;

#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct WalkNode {
    /// Number of nodes in this subtree, the node included.
    pub subtree: u32,
    /// The token ending here, `NO_TOKEN`, or `MULTI | index` for several.
    pub tok: u32,
    pub byte: u8,
    /// The node's byte string is whole UTF-8 characters (it ends at a character
    /// boundary and holds no stray byte), so what follows it in a token starts one.
    pub whole: bool,
    /// Length of the node's byte string (the root has depth 0).
    pub depth: u16,
}

#[derive(Clone, Debug)]
pub struct WalkTrie {
    pub nodes: Vec<WalkNode>,
    /// Runs of `count, id, id, ...` for nodes holding several tokens.
    pub multi: Vec<u32>,
    pub max_depth: usize,
    /// Number of tokens in the trie.
    pub tokens: usize,
}

impl WalkTrie {
    /// The trie of the tokens `keep` selects among those of `trie`.
    pub fn build(trie: &TokenTrie, keep: impl Fn(u32) -> bool) -> WalkTrie {
        let n = trie.nodes.len();
        // own[i]: kept tokens ending at node i; prefix sums give subtree counts.
        let mut sum_tokens = vec![0u32; n + 1];
        for i in 0..n {
            let own = trie.tokens_at(i).iter().filter(|&&t| keep(t)).count() as u32;
            sum_tokens[i + 1] = sum_tokens[i] + own;
        }
        let kept =
            |i: usize| i == 0 || sum_tokens[i + trie.nodes[i].subtree as usize] > sum_tokens[i];
        let mut sum_nodes = vec![0u32; n + 1];
        for i in 0..n {
            sum_nodes[i + 1] = sum_nodes[i] + kept(i) as u32;
        }
        let mut nodes = Vec::with_capacity(sum_nodes[n] as usize);
        let mut multi = Vec::new();
        let mut max_depth = 0;
        // owed[d]: continuation bytes the node at depth d still owes its character
        // (BROKEN once a byte string is not UTF-8).
        let mut owed = vec![0u8; trie.max_depth + 1];
        for (i, node) in trie.nodes.iter().enumerate() {
            if i > 0 {
                let d = node.depth as usize;
                owed[d] = utf8_owed(owed[d - 1], node.byte);
            }
            if !kept(i) {
                continue;
            }
            let ids: Vec<u32> = trie
                .tokens_at(i)
                .iter()
                .copied()
                .filter(|&t| keep(t))
                .collect();
            let tok = match ids.len() {
                0 => NO_TOKEN,
                1 => ids[0],
                k => {
                    let at = multi.len() as u32;
                    multi.push(k as u32);
                    multi.extend_from_slice(&ids);
                    MULTI | at
                }
            };
            let end = i + node.subtree as usize;
            nodes.push(WalkNode {
                subtree: sum_nodes[end] - sum_nodes[i],
                tok,
                byte: node.byte,
                whole: owed[node.depth as usize] == 0,
                depth: node.depth,
            });
            max_depth = max_depth.max(node.depth as usize);
        }
        WalkTrie {
            nodes,
            multi,
            max_depth,
            tokens: sum_tokens[n] as usize,
        }
    }

    /// The tokens of a `MULTI` node.
    #[inline]
    pub fn multi_tokens(&self, tok: u32) -> &[u32] {
        let at = (tok & !MULTI) as usize;
        let k = self.multi[at] as usize;
        &self.multi[at + 1..at + 1 + k]
    }

    pub fn memory_bytes(&self) -> usize {
        self.nodes.len() * std::mem::size_of::<WalkNode>() + self.multi.len() * 4
    }

    /// The trie's tokens in layout order, and where each node's subtree starts in it:
    /// the tokens below node `i` (itself included) are
    /// `order[before[i]..before[i + nodes[i].subtree]]`.
    pub fn token_ranges(&self) -> TokenRanges {
        let mut order = Vec::with_capacity(self.tokens);
        let mut before = Vec::with_capacity(self.nodes.len() + 1);
        for n in &self.nodes {
            before.push(order.len() as u32);
            match n.tok {
                NO_TOKEN => {}
                t if t & MULTI == 0 => order.push(t),
                t => order.extend_from_slice(self.multi_tokens(t)),
            }
        }
        before.push(order.len() as u32);
        TokenRanges { order, before }
    }
}

/// Each subtree's tokens as one run of a list ([`WalkTrie::token_ranges`]).
#[derive(Clone, Debug)]
pub struct TokenRanges {
    pub order: Vec<u32>,
    pub before: Vec<u32>,
}

impl TokenRanges {
    /// The tokens below node `i` of `trie`, itself included.
    #[inline]
    pub fn below(&self, trie: &WalkTrie, i: usize) -> &[u32] {
        let end = i + trie.nodes[i].subtree as usize;
        &self.order[self.before[i] as usize..self.before[end] as usize]
    }

    pub fn memory_bytes(&self) -> usize {
        (self.order.len() + self.before.len()) * 4
    }
}

/// `owed` marks a byte string that is not UTF-8.
const BROKEN: u8 = u8::MAX;

/// The continuation bytes still owed after `byte`, given those owed before it.
fn utf8_owed(owed: u8, byte: u8) -> u8 {
    match (owed, byte) {
        (BROKEN, _) => BROKEN,
        (0, 0x00..=0x7F) => 0,
        (0, 0xC2..=0xDF) => 1,
        (0, 0xE0..=0xEF) => 2,
        (0, 0xF0..=0xF4) => 3,
        (k, 0x80..=0xBF) if k > 0 => k - 1,
        _ => BROKEN,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::Vocabulary;

    #[test]
    fn keeps_only_paths_to_selected_tokens() {
        let toks: Vec<&[u8]> = vec![b"<eos>", b"ab", b"a", b"b", b"abc", b"ab", b"xyz"];
        let v = Vocabulary::new(&toks, 0, &[]).unwrap();
        let full = v.trie();
        let all = WalkTrie::build(full, |_| true);
        assert_eq!(all.nodes.len(), full.nodes.len());
        assert_eq!(all.tokens, 6);
        let some = WalkTrie::build(full, |t| t == 4 || t == 3);
        // root, a, ab, abc, b
        let bytes: Vec<u8> = some.nodes[1..].iter().map(|n| n.byte).collect();
        assert_eq!(bytes, b"abcb");
        assert_eq!(some.nodes[0].subtree, 5);
        assert_eq!(some.nodes[1].subtree, 3);
        assert_eq!(some.nodes[1].tok, NO_TOKEN);
        assert_eq!(some.nodes[3].tok, 4);
        let dup = all
            .nodes
            .iter()
            .find(|n| n.tok & MULTI != 0 && n.tok != NO_TOKEN);
        assert_eq!(all.multi_tokens(dup.unwrap().tok), &[1, 5]);
    }

    #[test]
    fn marks_whole_characters_and_lists_subtree_tokens() {
        let toks: Vec<&[u8]> = vec![
            b"<eos>",
            "é".as_bytes(),
            "éa".as_bytes(),
            b"\xC3",
            b"\x80a",
            b"e",
        ];
        let v = Vocabulary::new(&toks, 0, &[]).unwrap();
        let all = WalkTrie::build(v.trie(), |_| true);
        let whole = |bytes: &[u8]| {
            let mut depth_of = Vec::new();
            for (i, n) in all.nodes.iter().enumerate().skip(1) {
                depth_of.truncate(n.depth as usize - 1);
                depth_of.push(n.byte);
                if depth_of == bytes {
                    return (i, n.whole);
                }
            }
            panic!("no node {bytes:?}");
        };
        assert!(whole(b"e").1 && whole("é".as_bytes()).1 && whole("éa".as_bytes()).1);
        assert!(!whole(b"\xC3").1); // a lead byte owes one more
        assert!(!whole(b"\x80").1 && !whole(b"\x80a").1); // a stray byte breaks the rest
        let ranges = all.token_ranges();
        let (c3, _) = whole(b"\xC3");
        let mut below = ranges.below(&all, c3).to_vec();
        below.sort_unstable();
        assert_eq!(below, vec![1, 2, 3]);
        assert_eq!(ranges.below(&all, 0).len(), all.tokens);
    }
}
