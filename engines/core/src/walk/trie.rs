//! The token trie: every text token of a vocabulary in one prefix tree, laid flat in
//! depth-first order.
//!
//! Depth-first layout means a node's subtree is the contiguous run of `subtree` nodes
//! starting at it, so a walk skips a whole subtree with one addition as soon as its prefix
//! is rejected. Tokens are sorted by their bytes, which is the same order, so the tokens
//! that end at a node are a contiguous range of [`TokenTrie::sorted_ids`].

#[derive(Clone, Copy, Debug)]
pub struct TrieNode {
    pub byte: u8,
    /// Length of the node's byte string (the root has depth 0).
    pub depth: u16,
    /// Number of nodes in this subtree, the node included.
    pub subtree: u32,
    /// `sorted_ids[tok_lo..tok_hi]` are the tokens whose bytes end here.
    pub tok_lo: u32,
    pub tok_hi: u32,
}

pub struct TokenTrie {
    pub nodes: Vec<TrieNode>,
    pub sorted_ids: Vec<u32>,
    pub max_depth: usize,
}

impl TokenTrie {
    /// The trie of the tokens `ids`, whose bytes `token` gives (a vocabulary's text
    /// tokens: [`crate::Vocabulary::trie`] builds it once).
    pub fn build<'t>(mut ids: Vec<u32>, token: impl Fn(u32) -> &'t [u8]) -> Self {
        ids.sort_unstable_by(|&a, &b| token(a).cmp(token(b)).then(a.cmp(&b)));

        let root = TrieNode {
            byte: 0,
            depth: 0,
            subtree: 0,
            tok_lo: 0,
            tok_hi: 0,
        };
        let mut nodes = vec![root];
        // stack[d] = index of the node at depth d on the current path
        let mut stack: Vec<usize> = vec![0];
        let mut path: &[u8] = &[];
        let mut max_depth = 0;
        for (pos, &id) in ids.iter().enumerate() {
            let bytes = token(id);
            let lcp = path.iter().zip(bytes).take_while(|(a, b)| a == b).count();
            while stack.len() > lcp + 1 {
                let i = stack.pop().unwrap();
                nodes[i].subtree = (nodes.len() - i) as u32;
            }
            for (d, &b) in bytes.iter().enumerate().skip(lcp) {
                stack.push(nodes.len());
                nodes.push(TrieNode {
                    byte: b,
                    depth: (d + 1) as u16,
                    subtree: 0,
                    tok_lo: 0,
                    tok_hi: 0,
                });
            }
            let last = *stack.last().unwrap();
            let node = &mut nodes[last];
            if node.tok_hi != pos as u32 || node.tok_lo == node.tok_hi {
                node.tok_lo = pos as u32;
            }
            node.tok_hi = pos as u32 + 1;
            max_depth = max_depth.max(bytes.len());
            path = bytes;
        }
        while let Some(i) = stack.pop() {
            nodes[i].subtree = (nodes.len() - i) as u32;
        }
        TokenTrie {
            nodes,
            sorted_ids: ids,
            max_depth,
        }
    }

    /// Token ids whose bytes are exactly those of node `i`.
    #[inline]
    pub fn tokens_at(&self, i: usize) -> &[u32] {
        let n = &self.nodes[i];
        &self.sorted_ids[n.tok_lo as usize..n.tok_hi as usize]
    }

    pub fn memory_bytes(&self) -> usize {
        self.nodes.len() * std::mem::size_of::<TrieNode>() + self.sorted_ids.len() * 4
    }
}

#[cfg(test)]
mod tests {
    use crate::vocab::Vocabulary;

    fn vocab(tokens: &[&[u8]]) -> Vocabulary {
        Vocabulary::new(tokens, 0, &[]).unwrap()
    }

    #[test]
    fn depth_first_layout_with_subtree_sizes() {
        let v = vocab(&[b"<eos>", b"ab", b"a", b"b", b"abc", b"ab"]);
        let t = v.trie();
        // root, a, ab, abc, b
        let bytes: Vec<u8> = t.nodes[1..].iter().map(|n| n.byte).collect();
        assert_eq!(bytes, b"abcb");
        assert_eq!(t.nodes[0].subtree, 5);
        assert_eq!(t.nodes[1].subtree, 3);
        assert_eq!(t.tokens_at(1), &[2]);
        assert_eq!(t.tokens_at(2), &[1, 5]); // duplicate byte strings share a node
        assert_eq!(t.tokens_at(3), &[4]);
        assert_eq!(t.nodes[3].depth, 3);
        assert!(t.tokens_at(0).is_empty());
    }

    #[test]
    fn intermediate_nodes_hold_no_tokens() {
        let v = vocab(&[b"<eos>", b"xyz"]);
        let t = v.trie();
        assert_eq!(t.nodes.len(), 4);
        assert!(t.tokens_at(1).is_empty() && t.tokens_at(2).is_empty());
        assert_eq!(t.tokens_at(3), &[1]);
    }
}
