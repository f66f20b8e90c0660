//! A compiled schema straight into the lazy index's regex tree ([`crate::regex_ast::Ast`]),
//! without printing it as regex text and parsing that again.
//!
//! The printed regex of a real schema repeats its shared pieces (every unconstrained
//! value, every string's escapes) thousands of times: MaskBench's largest is 3 MB of
//! text, whose printing and parsing are most of TokensDFA's time to first mask. The
//! compiler's regex is a DAG ([`Rx`] nodes are shared), and so is the tree built here:
//! each node becomes one tree node, however often it is used. The language is the printed
//! regex's: literals are their UTF-8 bytes, sets their scalar ranges (surrogates are no
//! scalars, as in `regex-syntax`'s Unicode classes), and the structure is the same.

use std::collections::HashMap;

use super::rx::{Kind, Node, Rx};
use crate::regex_ast::Ast;

/// UTF-16 surrogates: code points that are no Unicode scalar value.
const SURROGATES: (u32, u32) = (0xD800, 0xDFFF);

/// The tree of `x`, one tree node per distinct [`Rx`] node.
pub fn to_ast(x: &Rx) -> Ast {
    let mut b = Builder {
        ast: Ast::default(),
        done: HashMap::new(),
    };
    let root = b.node(x);
    b.ast.root = root;
    b.ast
}

struct Builder {
    ast: Ast,
    done: HashMap<*const Node, u32>,
}

impl Builder {
    fn node(&mut self, x: &Rx) -> u32 {
        let key = Rx::as_ptr(x);
        if let Some(&id) = self.done.get(&key) {
            return id;
        }
        let id = match &x.kind {
            Kind::Never => self.ast.fail_node(),
            Kind::Empty => self.ast.empty_node(),
            Kind::Lit(s) => self.ast.bytes_node(s.as_bytes()),
            Kind::Set(set) => self.ast.class_node(scalars(set.ranges())),
            Kind::Concat(v) | Kind::Alt(v) => {
                let kids: Vec<u32> = v.iter().map(|k| self.node(k)).collect();
                self.ast.list_node(&kids, matches!(x.kind, Kind::Alt(_)))
            }
            Kind::Repeat(sub, lo, hi) => {
                let sub = self.node(sub);
                self.ast.repeat_node(sub, *lo, *hi)
            }
        };
        self.done.insert(key, id);
        id
    }
}

/// `ranges` without the surrogates.
fn scalars(ranges: &[(u32, u32)]) -> Vec<(u32, u32)> {
    let (s0, s1) = SURROGATES;
    let mut out = Vec::with_capacity(ranges.len() + 1);
    for &(a, b) in ranges {
        if b < s0 || a > s1 {
            out.push((a, b));
            continue;
        }
        if a < s0 {
            out.push((a, s0 - 1));
        }
        if b > s1 {
            out.push((s1 + 1, b));
        }
    }
    out
}
