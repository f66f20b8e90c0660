//! Walk tries: compact depth-first byte tries over a subset of a vocabulary's tokens,
//! the layout every mask walk reads.
//!
//! A walk trie is the [`TokenTrie`] restricted to some token ids: a node is kept iff its
//! subtree holds one of them, so the layout stays depth-first and a subtree stays a
//! contiguous run of `subtree` nodes (a rejected prefix skips it with one addition). A
//! node is 12 bytes: its byte, its depth (which slot of the walk's state stack holds its
//! parent's state) and the token that ends there. Tokens sharing one byte string (rare)
//! are listed apart, the node pointing at the list.
//!
//! Building one is a linear pass over the byte trie with prefix sums; it is done once per
//! vocabulary ([`crate::Vocabulary::prepared`]).

use crate::trie::TokenTrie;

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
        for (i, node) in trie.nodes.iter().enumerate() {
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::Vocabulary;

    #[test]
    fn keeps_only_paths_to_selected_tokens() {
        let toks: Vec<&[u8]> = vec![b"<eos>", b"ab", b"a", b"b", b"abc", b"ab", b"xyz"];
        let v = Vocabulary::new(&toks, 0, &[]).unwrap();
        let full = TokenTrie::build(&v);
        let all = WalkTrie::build(&full, |_| true);
        assert_eq!(all.nodes.len(), full.nodes.len());
        assert_eq!(all.tokens, 6);
        let some = WalkTrie::build(&full, |t| t == 4 || t == 3);
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
}
