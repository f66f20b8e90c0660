//! Literal muting and coalescence (the `canonical_literals` mode).
//!
//! Literal runs make DFAs expensive at the token level: every literal byte gets a byte
//! class of its own, which splits the token classes and multiplies states. Here each
//! literal run of two bytes or more is replaced by a sequence of *ghost symbols*, one per
//! token of the literal's minimal tokenization (fewest tokens; among equals, the one whose
//! earlier tokens are longest). A ghost stands for one byte string of the vocabulary and
//! is later mapped back to every token id with those bytes.
//!
//! Ghost symbols never collide with real input: they are spelled only with bytes the
//! original regex can never match (its dead bytes, e.g. 0xF5..0xFF for any UTF-8 regex),
//! and real tokens containing such bytes are dropped before the walk. A ghost is a marker
//! byte followed by a fixed number of digit bytes, so the codes form a prefix-free set and
//! the 10th or 100th ghost cannot alias the 1st. A regex that leaves fewer than two dead
//! bytes is not muted.

use regex_syntax::hir::{Hir, HirKind};
use rustc_hash::FxHashMap;

use crate::walk::trie::TokenTrie;

pub struct Ghost {
    /// The ghost's spelling in the muted regex.
    pub code: Vec<u8>,
    /// The real tokens it stands for (all ids with the same bytes).
    pub token_ids: Vec<u32>,
}

pub struct Muted {
    pub hir: Hir,
    pub ghosts: Vec<Ghost>,
    /// Bytes used to spell ghosts (all dead in the original regex).
    pub ghost_bytes: [bool; 256],
    pub muted_literals: usize,
}

/// Mute the literal runs of `hir`; `None` when nothing can be muted.
pub fn mute(hir: &Hir, trie: &TokenTrie, dead: &[bool; 256]) -> Option<Muted> {
    let dead_list: Vec<u8> = (0..=255u8).filter(|&b| dead[b as usize]).collect();
    if dead_list.len() < 2 {
        return None;
    }
    // First pass: the minimal tokenization of every literal run (as trie nodes).
    let mut plans: FxHashMap<Vec<u8>, Vec<usize>> = FxHashMap::default();
    collect_literals(hir, &mut |lit| {
        if lit.len() >= 2 && !plans.contains_key(lit) {
            if let Some(plan) = minimal_tokenization(lit, trie) {
                plans.insert(lit.to_vec(), plan);
            }
        }
    });
    if plans.is_empty() {
        return None;
    }
    // One ghost per distinct token byte string, numbered in order of first use.
    let mut literals: Vec<&Vec<u8>> = plans.keys().collect();
    literals.sort();
    let mut ghost_of_node: FxHashMap<usize, usize> = FxHashMap::default();
    let mut nodes_in_order = Vec::new();
    for lit in &literals {
        for &node in &plans[*lit] {
            ghost_of_node.entry(node).or_insert_with(|| {
                nodes_in_order.push(node);
                nodes_in_order.len() - 1
            });
        }
    }
    let marker = dead_list[0];
    let digits = &dead_list[1..];
    let base = digits.len();
    let mut width = 1;
    while base.pow(width as u32) < nodes_in_order.len() {
        width += 1;
    }
    let ghosts: Vec<Ghost> = nodes_in_order
        .iter()
        .enumerate()
        .map(|(k, &node)| {
            let mut code = vec![marker];
            for pos in (0..width).rev() {
                code.push(digits[(k / base.pow(pos as u32)) % base]);
            }
            Ghost {
                code,
                token_ids: trie.tokens_at(node).to_vec(),
            }
        })
        .collect();
    let spelled: FxHashMap<&Vec<u8>, Vec<u8>> = literals
        .iter()
        .map(|lit| {
            let code: Vec<u8> = plans[*lit]
                .iter()
                .flat_map(|node| ghosts[ghost_of_node[node]].code.iter().copied())
                .collect();
            (*lit, code)
        })
        .collect();
    let mut muted_literals = 0;
    let hir = rewrite(hir, &mut |lit| {
        let code = spelled.get(&lit.to_vec())?;
        muted_literals += 1;
        Some(code.clone())
    });
    let mut ghost_bytes = [false; 256];
    ghost_bytes[marker as usize] = true;
    for &d in digits {
        ghost_bytes[d as usize] = true;
    }
    Some(Muted {
        hir,
        ghosts,
        ghost_bytes,
        muted_literals,
    })
}

fn collect_literals(hir: &Hir, f: &mut impl FnMut(&[u8])) {
    match hir.kind() {
        HirKind::Literal(lit) => f(&lit.0),
        HirKind::Repetition(rep) => collect_literals(&rep.sub, f),
        HirKind::Capture(cap) => collect_literals(&cap.sub, f),
        HirKind::Concat(subs) | HirKind::Alternation(subs) => {
            for s in subs {
                collect_literals(s, f);
            }
        }
        HirKind::Empty | HirKind::Class(_) | HirKind::Look(_) => {}
    }
}

fn rewrite(hir: &Hir, f: &mut impl FnMut(&[u8]) -> Option<Vec<u8>>) -> Hir {
    match hir.kind() {
        HirKind::Literal(lit) => match f(&lit.0) {
            Some(code) => Hir::literal(code),
            None => hir.clone(),
        },
        HirKind::Repetition(rep) => {
            let mut rep = rep.clone();
            rep.sub = Box::new(rewrite(&rep.sub, f));
            Hir::repetition(rep)
        }
        HirKind::Capture(cap) => {
            let mut cap = cap.clone();
            cap.sub = Box::new(rewrite(&cap.sub, f));
            Hir::capture(cap)
        }
        HirKind::Concat(subs) => Hir::concat(subs.iter().map(|s| rewrite(s, f)).collect()),
        HirKind::Alternation(subs) => {
            Hir::alternation(subs.iter().map(|s| rewrite(s, f)).collect())
        }
        HirKind::Empty | HirKind::Class(_) | HirKind::Look(_) => hir.clone(),
    }
}

/// Fewest tokens covering `lit`, as the trie nodes of their byte strings.
fn minimal_tokenization(lit: &[u8], trie: &TokenTrie) -> Option<Vec<usize>> {
    let n = lit.len();
    // best[i] = (tokens to cover lit[i..], first token's node), filled right to left so
    // that ties keep the longest first token.
    let mut best: Vec<Option<(usize, usize, usize)>> = vec![None; n + 1];
    best[n] = Some((0, 0, n));
    for i in (0..n).rev() {
        let mut node = 0usize;
        for (j, &b) in lit.iter().enumerate().skip(i) {
            match child(trie, node, b) {
                Some(c) => node = c,
                None => break,
            }
            if trie.tokens_at(node).is_empty() {
                continue;
            }
            if let Some((cost, _, _)) = best[j + 1] {
                let better = match best[i] {
                    None => true,
                    Some((old, _, _)) => cost < old,
                };
                if better {
                    best[i] = Some((cost + 1, node, j + 1));
                }
            }
        }
    }
    let mut plan = Vec::new();
    let mut i = 0;
    while i < n {
        let (_, node, next) = best[i]?;
        plan.push(node);
        i = next;
    }
    Some(plan)
}

/// The child of trie node `node` along `byte`, scanning its children in order.
fn child(trie: &TokenTrie, node: usize, byte: u8) -> Option<usize> {
    let end = node + trie.nodes[node].subtree as usize;
    let mut p = node + 1;
    while p < end {
        let c = &trie.nodes[p];
        if c.byte == byte {
            return Some(p);
        }
        if c.byte > byte {
            return None;
        }
        p += c.subtree as usize;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::syntax::parse;
    use crate::vocab::Vocabulary;

    fn trie(tokens: &[&str]) -> TokenTrie {
        let t: Vec<&[u8]> = tokens.iter().map(|s| s.as_bytes()).collect();
        let v = Vocabulary::new(&t, 0, &[]).unwrap();
        TokenTrie::build(v.text_ids().collect(), |id| v.token(id))
    }

    fn bytes_of(trie: &TokenTrie, plan: &[usize]) -> Vec<String> {
        plan.iter()
            .map(|&n| {
                let id = trie.tokens_at(n)[0] as usize;
                [
                    "</s>", "f", "i", "l", "e", "n", "a", "m", "file", "name", "fil", "ename",
                ][id]
                    .to_string()
            })
            .collect()
    }

    #[test]
    fn coalescence_picks_the_fewest_tokens() {
        let toks = [
            "</s>", "f", "i", "l", "e", "n", "a", "m", "file", "name", "fil", "ename",
        ];
        let t = trie(&toks);
        let plan = minimal_tokenization(b"filename", &t).unwrap();
        assert_eq!(bytes_of(&t, &plan), vec!["file", "name"]);
    }

    #[test]
    fn untokenizable_literal_is_left_alone() {
        let t = trie(&["</s>", "a"]);
        assert!(minimal_tokenization(b"ab", &t).is_none());
    }

    #[test]
    fn ghost_codes_are_fixed_width_and_distinct() {
        // 30 literals of distinct single tokens force two-digit codes with base 12.
        let mut toks = vec!["</s>".to_string()];
        let mut alts = Vec::new();
        for i in 0..30 {
            let w = format!("w{i:02}x");
            toks.push(w.clone());
            alts.push(w);
        }
        let refs: Vec<&str> = toks.iter().map(|s| s.as_str()).collect();
        let t = trie(&refs);
        let hir = parse(&alts.join("|")).unwrap();
        let mut dead = [false; 256];
        for b in 0xF3..=0xFFu8 {
            dead[b as usize] = true;
        }
        let m = mute(&hir, &t, &dead).unwrap();
        assert_eq!(m.ghosts.len(), 30);
        let mut codes: Vec<&Vec<u8>> = m.ghosts.iter().map(|g| &g.code).collect();
        assert!(codes.iter().all(|c| c.len() == 3 && c[0] == 0xF3));
        codes.sort();
        codes.dedup();
        assert_eq!(codes.len(), 30);
        assert_eq!(m.muted_literals, 30);
    }
}
