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

use crate::eager::canonical::literals::Ghost;
use crate::walk::trie::TokenTrie;

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
    /// The prefix graph of the class strings of `trie`'s tokens (minus those holding a
    /// `dead` byte) and of the ghosts' codes, laid flat, with the token classes (groups)
    /// numbered in layout order.
    pub fn build(
        trie: &TokenTrie,
        classes: &[u8; 256],
        dead: &[bool; 256],
        ghosts: &[Ghost],
        vocab_len: usize,
    ) -> Self {
        let graph = PrefixGraph::intern(trie, classes, dead, ghosts);
        let (nodes, new_id) = graph.layout();
        Self::with_groups(nodes, &new_id, &graph, trie, ghosts, vocab_len)
    }

    /// The token classes: the nodes where some token (real or ghost) ends become groups,
    /// numbered in layout order, their tokens gathered by a counting sort. `new_id` maps
    /// a node of `graph` to its place in `flat`.
    fn with_groups(
        mut flat: Vec<ClassNode>,
        new_id: &[u32],
        graph: &PrefixGraph,
        trie: &TokenTrie,
        ghosts: &[Ghost],
        vocab_len: usize,
    ) -> Self {
        let mut count = vec![0u32; flat.len()];
        for &(id, bnode) in &graph.real_at {
            count[new_id[id as usize] as usize] += trie.tokens_at(bnode).len() as u32;
        }
        for &(id, k) in &graph.ghost_at {
            count[new_id[id as usize] as usize] += ghosts[k].token_ids.len() as u32;
        }
        let mut group_off = vec![0u32];
        for (i, &c) in count.iter().enumerate() {
            if c > 0 {
                flat[i].group = (group_off.len() - 1) as u32;
                group_off.push(group_off.last().unwrap() + c);
            }
        }
        let mut cursor: Vec<u32> = group_off[..group_off.len() - 1].to_vec();
        let mut group_tokens = vec![0u32; *group_off.last().unwrap() as usize];
        let mut place = |node: u32, toks: &[u32]| -> u32 {
            let g = flat[new_id[node as usize] as usize].group;
            let at = cursor[g as usize] as usize;
            group_tokens[at..at + toks.len()].copy_from_slice(toks);
            cursor[g as usize] += toks.len() as u32;
            g
        };
        let mut tok_group = vec![NONE; vocab_len];
        for &(id, bnode) in &graph.real_at {
            let g = place(id, trie.tokens_at(bnode));
            for &t in trie.tokens_at(bnode) {
                tok_group[t as usize] = g;
            }
        }
        let mut tok_ghost = vec![NONE; vocab_len];
        let mut ghost_tokens = Vec::new();
        for &(id, k) in &graph.ghost_at {
            let g = place(id, &ghosts[k].token_ids);
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

/// The class strings, hash-consed into a graph of (parent, class) nodes; node 0 is the
/// root. Node ids are in creation order, not yet laid out.
struct PrefixGraph {
    parent: Vec<u32>,
    class: Vec<u8>,
    /// `(node, byte-trie node)` where some real tokens' class string ends.
    real_at: Vec<(u32, usize)>,
    /// `(node, ghost index)` where a ghost's class string ends.
    ghost_at: Vec<(u32, usize)>,
}

impl PrefixGraph {
    /// Walk the byte trie, skipping the subtree of every dead byte, then spell each ghost.
    fn intern(trie: &TokenTrie, classes: &[u8; 256], dead: &[bool; 256], ghosts: &[Ghost]) -> Self {
        let mut child = ChildTable::new(trie.nodes.len() / 4);
        let mut g = PrefixGraph {
            parent: vec![NONE],
            class: vec![0],
            real_at: Vec::new(),
            ghost_at: Vec::new(),
        };
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
            let id = g.child(&mut child, stack[d - 1], classes[n.byte as usize]);
            stack[d] = id;
            if n.tok_hi > n.tok_lo {
                g.real_at.push((id, p));
            }
            p += 1;
        }
        for (k, ghost) in ghosts.iter().enumerate() {
            let mut id = 0;
            for &b in &ghost.code {
                id = g.child(&mut child, id, classes[b as usize]);
            }
            g.ghost_at.push((id, k));
        }
        g
    }

    /// The child of `p` by class `c`, created on first use.
    #[inline(always)]
    fn child(&mut self, table: &mut ChildTable, p: u32, c: u8) -> u32 {
        table.get_or_insert(p, c, || {
            self.parent.push(p);
            self.class.push(c);
            (self.parent.len() - 1) as u32
        })
    }

    /// Depth-first layout: the flat nodes (groups not yet set), and each node's position.
    /// Children lists come from a counting sort on the parent; any child order gives a
    /// valid layout, as the walk only needs subtrees to be contiguous.
    fn layout(&self) -> (Vec<ClassNode>, Vec<u32>) {
        let parent = &self.parent;
        let n = parent.len();
        let mut first = vec![0u32; n + 1];
        for &p in &parent[1..] {
            first[p as usize + 1] += 1;
        }
        for i in 0..n {
            first[i + 1] += first[i];
        }
        let mut kids = vec![0u32; n.saturating_sub(1)];
        let mut fill = first.clone();
        for (c, &p) in parent.iter().enumerate().skip(1) {
            kids[fill[p as usize] as usize] = c as u32;
            fill[p as usize] += 1;
        }
        let mut order = Vec::with_capacity(n); // old ids in depth-first order
        let mut depth_of = vec![0u16; n];
        let mut dfs = vec![0u32];
        while let Some(v) = dfs.pop() {
            order.push(v);
            for &c in &kids[first[v as usize] as usize..first[v as usize + 1] as usize] {
                depth_of[c as usize] = depth_of[v as usize] + 1;
                dfs.push(c);
            }
        }
        let mut new_id = vec![0u32; n];
        for (i, &v) in order.iter().enumerate() {
            new_id[v as usize] = i as u32;
        }
        // Subtree sizes: every node adds its size to its parent, children first.
        let mut size = vec![1u32; n];
        for &v in order.iter().skip(1).rev() {
            size[parent[v as usize] as usize] += size[v as usize];
        }
        let flat = order
            .iter()
            .map(|&v| ClassNode {
                class: self.class[v as usize],
                depth: depth_of[v as usize],
                subtree: size[v as usize],
                group: NONE,
            })
            .collect();
        (flat, new_id)
    }
}

/// Open-addressing map (parent, class) -> child. The build does one lookup per byte-trie
/// node, so this is the class trie's hot loop; the table grows with the class trie (often
/// a few thousand nodes) rather than the byte trie, so it stays in cache.
struct ChildTable {
    keys: Vec<u64>,
    vals: Vec<u32>,
    mask: usize,
    len: usize,
}

const EMPTY: u64 = u64::MAX;

impl ChildTable {
    /// `guess`: expected number of nodes; the table still grows past it.
    fn new(guess: usize) -> Self {
        let cap = (guess * 2).next_power_of_two().max(1 << 12);
        ChildTable {
            keys: vec![EMPTY; cap],
            vals: vec![0; cap],
            mask: cap - 1,
            len: 0,
        }
    }

    #[inline]
    fn slot(&self, key: u64) -> usize {
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as usize & self.mask
    }

    fn grow(&mut self) {
        let old_keys = std::mem::take(&mut self.keys);
        let old_vals = std::mem::take(&mut self.vals);
        let cap = old_keys.len() * 2;
        self.keys = vec![EMPTY; cap];
        self.vals = vec![0; cap];
        self.mask = cap - 1;
        for (k, v) in old_keys.into_iter().zip(old_vals) {
            if k != EMPTY {
                let mut i = self.slot(k);
                while self.keys[i] != EMPTY {
                    i = (i + 1) & self.mask;
                }
                self.keys[i] = k;
                self.vals[i] = v;
            }
        }
    }

    #[inline(always)]
    fn get_or_insert(&mut self, parent: u32, class: u8, make: impl FnOnce() -> u32) -> u32 {
        if self.len * 2 >= self.keys.len() {
            self.grow();
        }
        let key = ((parent as u64) << 8) | class as u64;
        let mut i = self.slot(key);
        loop {
            let k = self.keys[i];
            if k == key {
                return self.vals[i];
            }
            if k == EMPTY {
                let v = make();
                self.len += 1;
                self.keys[i] = key;
                self.vals[i] = v;
                return v;
            }
            i = (i + 1) & self.mask;
        }
    }
}
