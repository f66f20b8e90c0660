//! The prefix graph of class strings.
//!
//! A token's *class string* is the DFA byte class of each of its bytes. Tokens with the
//! same class string behave identically in every state, so they form one *group* and are
//! walked once. The trie over class strings is obtained from the vocabulary's byte trie by
//! hash-consing (parent, class) pairs, skipping every byte-trie subtree whose byte is dead;
//! it is then laid flat in depth-first order, like the byte trie, so a walk that reaches
//! the dead state skips a whole subtree with one addition.
//!
//! In `canonical_literals` mode the ghost codes are inserted as extra class strings; their
//! groups hold the token ids each ghost stands for.

use rustc_hash::FxHashMap;

use crate::literals::Ghost;
use crate::trie::TokenTrie;

pub const NONE: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
pub struct ClassNode {
    pub class: u8,
    pub depth: u16,
    pub subtree: u32,
    /// The group of the tokens whose class string ends here, or `NONE`.
    pub group: u32,
}

pub struct ClassTrie {
    pub nodes: Vec<ClassNode>,
    pub max_depth: usize,
    /// Tokens of group `g`: `group_tokens[group_off[g]..group_off[g + 1]]`.
    pub group_off: Vec<u32>,
    pub group_tokens: Vec<u32>,
    /// Group each token reaches through its own bytes (`NONE` if dropped as dead).
    pub tok_group: Vec<u32>,
    /// Group each token reaches through its ghost, if it has one.
    pub tok_ghost: Vec<u32>,
    /// Tokens that have a ghost, ascending.
    pub ghost_tokens: Vec<u32>,
}

impl ClassTrie {
    pub fn build(
        trie: &TokenTrie,
        classes: &[u8; 256],
        dead: &[bool; 256],
        ghosts: &[Ghost],
        vocab_len: usize,
    ) -> Self {
        // Hash-consed nodes; node 0 is the root.
        let mut child: FxHashMap<(u32, u8), u32> = FxHashMap::default();
        let mut parent: Vec<u32> = vec![NONE];
        let mut class: Vec<u8> = vec![0];
        let mut intern = |p: u32, c: u8, parent: &mut Vec<u32>, class: &mut Vec<u8>| -> u32 {
            *child.entry((p, c)).or_insert_with(|| {
                parent.push(p);
                class.push(c);
                (parent.len() - 1) as u32
            })
        };
        let mut real_at: Vec<(u32, usize)> = Vec::new(); // (class node, byte-trie node)
        let mut stack = vec![0u32; trie.max_depth + 1];
        let nodes = &trie.nodes;
        let mut p = 1;
        while p < nodes.len() {
            let n = nodes[p];
            if dead[n.byte as usize] {
                p += n.subtree as usize;
                continue;
            }
            let d = n.depth as usize;
            let id = intern(
                stack[d - 1],
                classes[n.byte as usize],
                &mut parent,
                &mut class,
            );
            stack[d] = id;
            if n.tok_hi > n.tok_lo {
                real_at.push((id, p));
            }
            p += 1;
        }
        let mut ghost_at: Vec<(u32, usize)> = Vec::new(); // (class node, ghost index)
        for (k, g) in ghosts.iter().enumerate() {
            let mut id = 0;
            for &b in &g.code {
                id = intern(id, classes[b as usize], &mut parent, &mut class);
            }
            ghost_at.push((id, k));
        }

        // Children lists in class order, then a depth-first layout.
        let n = parent.len();
        let mut edges: Vec<(u32, u8, u32)> = (1..n as u32)
            .map(|c| (parent[c as usize], class[c as usize], c))
            .collect();
        edges.sort_unstable();
        let mut first = vec![0u32; n + 1];
        for &(p, _, _) in &edges {
            first[p as usize + 1] += 1;
        }
        for i in 0..n {
            first[i + 1] += first[i];
        }
        let mut order = Vec::with_capacity(n); // old ids in depth-first order
        let mut depth_of = vec![0u16; n];
        let mut dfs = vec![0u32];
        while let Some(v) = dfs.pop() {
            order.push(v);
            let (lo, hi) = (first[v as usize] as usize, first[v as usize + 1] as usize);
            for &(_, _, c) in edges[lo..hi].iter().rev() {
                depth_of[c as usize] = depth_of[v as usize] + 1;
                dfs.push(c);
            }
        }
        let mut new_id = vec![0u32; n];
        for (i, &v) in order.iter().enumerate() {
            new_id[v as usize] = i as u32;
        }

        // Tokens per node (real and ghost), then groups numbered in layout order.
        let mut tokens_of: Vec<Vec<u32>> = vec![Vec::new(); n];
        for &(id, bnode) in &real_at {
            tokens_of[new_id[id as usize] as usize].extend_from_slice(trie.tokens_at(bnode));
        }
        for &(id, k) in &ghost_at {
            tokens_of[new_id[id as usize] as usize].extend_from_slice(&ghosts[k].token_ids);
        }
        // Subtree sizes: every node adds its size to its parent, children first.
        let mut size = vec![1u32; n];
        for &v in order.iter().skip(1).rev() {
            size[parent[v as usize] as usize] += size[v as usize];
        }
        let mut flat: Vec<ClassNode> = order
            .iter()
            .map(|&v| ClassNode {
                class: class[v as usize],
                depth: depth_of[v as usize],
                subtree: size[v as usize],
                group: NONE,
            })
            .collect();
        let mut group_off = vec![0u32];
        let mut group_tokens = Vec::new();
        for (i, toks) in tokens_of.iter_mut().enumerate() {
            if toks.is_empty() {
                continue;
            }
            toks.sort_unstable();
            toks.dedup();
            flat[i].group = (group_off.len() - 1) as u32;
            group_tokens.extend_from_slice(toks);
            group_off.push(group_tokens.len() as u32);
        }
        let mut tok_group = vec![NONE; vocab_len];
        for &(id, bnode) in &real_at {
            let g = flat[new_id[id as usize] as usize].group;
            for &t in trie.tokens_at(bnode) {
                tok_group[t as usize] = g;
            }
        }
        let mut tok_ghost = vec![NONE; vocab_len];
        let mut ghost_tokens = Vec::new();
        for &(id, k) in &ghost_at {
            let g = flat[new_id[id as usize] as usize].group;
            for &t in &ghosts[k].token_ids {
                tok_ghost[t as usize] = g;
                ghost_tokens.push(t);
            }
        }
        ghost_tokens.sort_unstable();
        ghost_tokens.dedup();
        let max_depth = flat.iter().map(|c| c.depth as usize).max().unwrap_or(0);
        ClassTrie {
            nodes: flat,
            max_depth,
            group_off,
            group_tokens,
            tok_group,
            tok_ghost,
            ghost_tokens,
        }
    }

    pub fn num_groups(&self) -> usize {
        self.group_off.len() - 1
    }

    #[inline]
    pub fn group(&self, g: u32) -> &[u32] {
        &self.group_tokens
            [self.group_off[g as usize] as usize..self.group_off[g as usize + 1] as usize]
    }
}
