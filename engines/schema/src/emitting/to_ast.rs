//! A compiled schema straight into the lazy index's regex tree ([`tokensdfa_core::Ast`]),
//! without printing it as regex text and parsing that again.
//!
//! The printed regex of a real schema repeats its shared pieces (every unconstrained
//! value, every string's escapes) thousands of times: MaskBench's largest is 3 MB of
//! text, whose printing and parsing are most of TokensDFA's time to first mask. The
//! compiler's regex is a DAG ([`Rx`] nodes are shared), and so is the tree built here:
//! each node becomes one tree node, however often it is used. The language is the printed
//! regex's: literals are their UTF-8 bytes, sets their ranges as `regex-syntax` gives a
//! Unicode class (no endpoint is a surrogate), and the structure is the same.

use rustc_hash::FxHashMap;

use crate::context::Fail;
use crate::dialect::Dialect;
use crate::languages::rx::{Kind, Node, Rx};
use tokensdfa_core::Ast;

/// UTF-16 surrogates: code points that are no Unicode scalar value.
const SURROGATES: (u32, u32) = (0xD800, 0xDFFF);

/// [`to_ast`] within the dialect's tree limits: the text it stands for
/// ([`Dialect::max_tree_text_len`]) and its nodes ([`Dialect::max_tree_nodes`]).
pub fn bounded_ast(x: &Rx, dialect: &Dialect) -> Result<Ast, Fail> {
    within_tree_text(x, dialect)?;
    let ast = to_ast(x);
    if ast.nodes.len() > dialect.max_tree_nodes {
        return Err(Fail::Limit(format!(
            "the regex tree would have {} nodes",
            ast.nodes.len()
        )));
    }
    Ok(ast)
}

/// `x` stands for at most [`Dialect::max_tree_text_len`] bytes of text.
pub fn within_tree_text(x: &Rx, dialect: &Dialect) -> Result<(), Fail> {
    if x.printed_len() > dialect.max_tree_text_len {
        return Err(Fail::Limit(format!(
            "the regex tree stands for {} bytes of text",
            x.printed_len()
        )));
    }
    Ok(())
}

/// The tree of `x`, one tree node per distinct [`Rx`] node.
pub fn to_ast(x: &Rx) -> Ast {
    let mut b = TreeBuilder::default();
    let root = b.node(x);
    b.ast.root = root;
    b.ast
}

/// One tree for many [`Rx`] roots (a grammar's terminals): each distinct node becomes
/// one tree node, however many roots reach it.
#[derive(Default)]
pub struct TreeBuilder {
    pub ast: Ast,
    done: FxHashMap<*const Node, u32>,
}

impl TreeBuilder {
    /// The tree node of `x`, built once.
    pub fn node(&mut self, x: &Rx) -> u32 {
        let key = Rx::as_ptr(x);
        if let Some(&id) = self.done.get(&key) {
            return id;
        }
        let id = match &x.kind {
            // `compile_ast` refuses a tree holding a rule before it comes here
            Kind::Never | Kind::Rule(_) => self.ast.fail_node(),
            Kind::Empty => self.ast.empty_node(),
            Kind::Lit(s) => self.ast.bytes_node(s.as_bytes()),
            Kind::Set(set) => match set.ranges() {
                // one character: a literal, as the printed regex reads
                &[(a, b)] if a == b => match char::from_u32(a) {
                    Some(c) => self.ast.bytes_node(c.encode_utf8(&mut [0; 4]).as_bytes()),
                    None => self.ast.fail_node(),
                },
                ranges => self.ast.class_node(scalars(ranges)),
            },
            Kind::Concat(v) | Kind::Alt(v) => {
                let kids: Vec<u32> = v.iter().map(|k| self.node(k)).collect();
                self.ast.list_node(&kids, matches!(x.kind, Kind::Alt(_)))
            }
            Kind::Repeat(sub, lo, hi) => {
                let sub = self.node(sub);
                self.ast.repeat_node(sub, *lo, *hi)
            }
            Kind::Graph(g) => {
                let labels = g
                    .labels
                    .iter()
                    .map(|v| v.iter().map(|l| self.node(l)).collect())
                    .collect();
                self.ast.graph_node(g.counted.clone(), labels)
            }
        };
        self.done.insert(key, id);
        id
    }
}

/// `ranges` as `regex-syntax` writes a Unicode class: ranges of `char`s, so two ranges
/// either side of the surrogates join into one across them, and an endpoint inside them
/// moves to the nearest scalar (the lazy index compares classes by their ranges, the
/// vocabulary's slices among them, so the form matters, not only the set).
fn scalars(ranges: &[(u32, u32)]) -> Vec<(u32, u32)> {
    let (s0, s1) = SURROGATES;
    let mut out: Vec<(u32, u32)> = Vec::with_capacity(ranges.len());
    for &(a, b) in ranges {
        let a = if (s0..=s1).contains(&a) { s1 + 1 } else { a };
        let b = if (s0..=s1).contains(&b) { s0 - 1 } else { b };
        if a > b {
            continue;
        }
        match out.last_mut() {
            Some(last) if last.1 == s0 - 1 && a == s1 + 1 => last.1 = b,
            _ => out.push((a, b)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::{compile, compile_ast, Dialect, Escapes, Whitespace};

    /// The tree's classes are the ones the printed regex parses to, range for range: the
    /// lazy index decides the vocabulary's slices by comparing ranges, and a class split
    /// at the surrogates missed every string slice (10x the trie nodes on first visits).
    #[test]
    fn classes_take_the_parsed_regexs_form() {
        let schema = r#"{"type":"object","properties":{"d":{"type":"string","maxLength":36}}}"#;
        let d = Dialect {
            whitespace: Whitespace::OptionalSpace,
            escapes: Escapes::Required,
            ..Dialect::default()
        };
        let parsed = tokensdfa_core::fast_parse(&compile(schema, &d).unwrap())
            .ok()
            .unwrap();
        let tree = compile_ast(schema, &d).unwrap();
        let ranges = |a: &tokensdfa_core::Ast| {
            let mut v: Vec<_> = a.classes.iter().map(|c| c.ranges.clone()).collect();
            v.sort();
            v
        };
        assert_eq!(ranges(&tree), ranges(&parsed));
    }
}
