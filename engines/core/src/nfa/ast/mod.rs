//! The regex front end of the lazy index: a pattern as a small tree of byte strings,
//! character classes, concatenations, alternations and counted repetitions.
//!
//! Two roads lead to the same tree:
//! - [`fast_parse()`] reads the structure itself (groups, `|`, quantifiers, literal
//!   characters) and hands every atom with a meaning of its own (an escape, a bracketed
//!   class, `.`) to `regex-syntax`, one call per distinct atom text. Anything outside this
//!   plain subset (flags, anchors, named groups, nested class syntax, a quantifier in an
//!   odd place, nesting near the parser's limit) gives up, and the caller takes the other
//!   road: the whole pattern through `regex-syntax`, then [`from_hir`]. Atoms keep
//!   `regex-syntax`'s exact meaning (Unicode classes, `\d`, case of escapes); the subset's
//!   structure has only one reading. On multi-megabyte patterns of repeated atoms it is
//!   an order of magnitude faster than the full parser.
//! - [`from_hir`] converts a parsed `Hir`. Look-around has no node here: the caller
//!   determinizes such patterns another way.
//!
//! Classes are interned per tree ([`Ast::classes`]) as [`ClassAuto`]s, small automata
//! over the UTF-8 bytes of one character of the class, shared process-wide by content.
//!
//! Nesting: `regex-syntax` refuses patterns nested deeper than 250 (groups, repetitions,
//! alternations and concatenations of two or more, bracketed classes). The fast parser
//! computes an upper bound of that depth and gives up past 250, so a pattern it accepts is
//! one the full parser accepts too: both roads admit the same patterns.

use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, OnceLock};

use regex_syntax::hir::{Class, Hir, HirKind};
use rustc_hash::{FxHashMap, FxHasher};

use crate::nfa::classauto::ClassAuto;
use crate::nfa::counted::Counted;

mod fast_parse;
mod properties;

pub use fast_parse::fast_parse;
pub(crate) use properties::mark_cuts;
pub use properties::{classes_of_cuts, mark_class_cuts};

/// The parser's nesting limit (`regex-syntax`'s default).
const NEST_LIMIT: u32 = 250;

/// A node of the tree; byte strings and child lists live in the tree's arenas.
#[derive(Clone, Copy, Debug)]
pub enum Node {
    Empty,
    /// Matches nothing (an empty class, an alternation of nothing).
    Fail,
    Bytes {
        at: u32,
        len: u32,
    },
    Class(u32),
    Concat {
        at: u32,
        len: u32,
    },
    Alt {
        at: u32,
        len: u32,
    },
    /// `max == u32::MAX`: no upper bound.
    Repeat {
        sub: u32,
        min: u32,
        max: u32,
    },
    /// A counted automaton ([`Ast::graphs`]).
    Graph(u32),
}

/// A counted automaton in the tree: each edge reads the language of a node of the
/// tree (one unit, see [`crate::nfa::counted`]).
pub struct Graph {
    pub counted: Arc<Counted>,
    /// Per state, the node each edge reads, beside [`Counted::targets`].
    pub labels: Vec<Vec<u32>>,
}

#[derive(Default)]
pub struct Ast {
    pub nodes: Vec<Node>,
    pub root: u32,
    pub classes: Vec<Arc<ClassAuto>>,
    /// Literal bytes of `Bytes` nodes.
    pub bytes: Vec<u8>,
    /// Children of `Concat` and `Alt` nodes.
    pub kids: Vec<u32>,
    /// The automata of `Graph` nodes.
    pub graphs: Vec<Graph>,
    class_ids: FxHashMap<usize, u32>,
    /// Nodes by a hash of their content ([`Ast::push`]).
    interned: FxHashMap<u64, u32>,
}

/// The pattern uses a look-around assertion.
#[derive(Debug)]
pub struct HasLook;

impl Ast {
    /// Node `n`, or the node already pushed with the same content (same bytes, same
    /// children, same repetition): a pattern's repeated pieces become one node, so the
    /// NFA compiles each (piece, successor) pair once ([`crate::nfa`]) and subset
    /// construction makes one DFA state for what would be one per copy. A `Bytes` or list
    /// node's content must be the end of its arena (it is released when interned). Two
    /// contents with one hash are both kept: the table holds the first.
    fn push(&mut self, n: Node) -> u32 {
        let h = self.content_hash(&n);
        if let Some(&id) = self.interned.get(&h) {
            if self.same_content(&self.nodes[id as usize], &n) {
                match n {
                    Node::Bytes { at, .. } => self.bytes.truncate(at as usize),
                    Node::Concat { at, .. } | Node::Alt { at, .. } => {
                        self.kids.truncate(at as usize)
                    }
                    _ => {}
                }
                return id;
            }
        }
        self.nodes.push(n);
        let id = (self.nodes.len() - 1) as u32;
        self.interned.entry(h).or_insert(id);
        id
    }

    fn content_hash(&self, n: &Node) -> u64 {
        let mut h = FxHasher::default();
        match *n {
            Node::Empty => 0u8.hash(&mut h),
            Node::Fail => 1u8.hash(&mut h),
            Node::Bytes { at, len } => (2u8, self.slice_bytes(at, len)).hash(&mut h),
            Node::Class(c) => (3u8, c).hash(&mut h),
            Node::Concat { at, len } => (4u8, self.slice_kids(at, len)).hash(&mut h),
            Node::Alt { at, len } => (5u8, self.slice_kids(at, len)).hash(&mut h),
            Node::Repeat { sub, min, max } => (6u8, sub, min, max).hash(&mut h),
            Node::Graph(g) => (7u8, g).hash(&mut h),
        }
        h.finish()
    }

    fn same_content(&self, a: &Node, b: &Node) -> bool {
        match (*a, *b) {
            (Node::Empty, Node::Empty) | (Node::Fail, Node::Fail) => true,
            (Node::Bytes { at, len }, Node::Bytes { at: at2, len: len2 }) => {
                self.slice_bytes(at, len) == self.slice_bytes(at2, len2)
            }
            (Node::Class(x), Node::Class(y)) => x == y,
            (Node::Concat { at, len }, Node::Concat { at: at2, len: len2 })
            | (Node::Alt { at, len }, Node::Alt { at: at2, len: len2 }) => {
                self.slice_kids(at, len) == self.slice_kids(at2, len2)
            }
            (
                Node::Repeat { sub, min, max },
                Node::Repeat {
                    sub: s2,
                    min: m2,
                    max: x2,
                },
            ) => (sub, min, max) == (s2, m2, x2),
            (Node::Graph(x), Node::Graph(y)) => x == y,
            _ => false,
        }
    }

    fn push_bytes(&mut self, b: &[u8]) -> u32 {
        let at = self.bytes.len() as u32;
        self.bytes.extend_from_slice(b);
        self.push(Node::Bytes {
            at,
            len: b.len() as u32,
        })
    }

    /// A `Concat` or `Alt` of `kids`.
    fn push_list(&mut self, kids: &[u32], alt: bool) -> u32 {
        let (at, len) = (self.kids.len() as u32, kids.len() as u32);
        self.kids.extend_from_slice(kids);
        self.push(if alt {
            Node::Alt { at, len }
        } else {
            Node::Concat { at, len }
        })
    }

    #[inline]
    pub fn slice_bytes(&self, at: u32, len: u32) -> &[u8] {
        &self.bytes[at as usize..(at + len) as usize]
    }

    #[inline]
    pub fn slice_kids(&self, at: u32, len: u32) -> &[u32] {
        &self.kids[at as usize..(at + len) as usize]
    }

    /// A class node for these Unicode ranges (`bytes`: byte ranges), `Fail` if empty.
    fn class(&mut self, ranges: Vec<(u32, u32)>, bytes: bool) -> u32 {
        if ranges.is_empty() {
            return self.push(Node::Fail);
        }
        let auto = class_auto(ranges, bytes);
        let key = Arc::as_ptr(&auto) as usize;
        let id = match self.class_ids.get(&key) {
            Some(&id) => id,
            None => {
                self.classes.push(auto);
                let id = (self.classes.len() - 1) as u32;
                self.class_ids.insert(key, id);
                id
            }
        };
        self.push(Node::Class(id))
    }

    /// Add `hir` under the tree; its root node.
    fn add_hir(&mut self, hir: &Hir) -> Result<u32, HasLook> {
        Ok(match hir.kind() {
            HirKind::Empty => self.push(Node::Empty),
            HirKind::Literal(l) => self.push_bytes(&l.0),
            HirKind::Class(Class::Unicode(c)) => {
                let r = c
                    .ranges()
                    .iter()
                    .map(|r| (r.start() as u32, r.end() as u32));
                self.class(r.collect(), false)
            }
            HirKind::Class(Class::Bytes(c)) => {
                let r = c
                    .ranges()
                    .iter()
                    .map(|r| (r.start() as u32, r.end() as u32));
                self.class(r.collect(), true)
            }
            HirKind::Look(_) => return Err(HasLook),
            HirKind::Repetition(r) => {
                let sub = self.add_hir(&r.sub)?;
                self.push(Node::Repeat {
                    sub,
                    min: r.min,
                    max: r.max.unwrap_or(u32::MAX),
                })
            }
            HirKind::Capture(c) => self.add_hir(&c.sub)?,
            HirKind::Concat(subs) | HirKind::Alternation(subs) => {
                let ids = subs
                    .iter()
                    .map(|s| self.add_hir(s))
                    .collect::<Result<Vec<_>, _>>()?;
                self.push_list(&ids, matches!(hir.kind(), HirKind::Alternation(_)))
            }
        })
    }
}

/// Building a tree from another front end (the schema compiler's regexes): nodes are
/// numbered as pushed (a node with the content of an earlier one is that one), and a node
/// may be the child of several (the tree is a DAG; the NFA compiles each use once per
/// successor state).
impl Ast {
    pub fn memory_bytes(&self) -> usize {
        self.nodes.capacity() * std::mem::size_of::<Node>()
            + self.bytes.capacity()
            + self.kids.capacity() * 4
            + self.classes.iter().map(|c| c.memory_bytes()).sum::<usize>()
    }

    pub fn empty_node(&mut self) -> u32 {
        self.push(Node::Empty)
    }

    pub fn fail_node(&mut self) -> u32 {
        self.push(Node::Fail)
    }

    pub fn bytes_node(&mut self, b: &[u8]) -> u32 {
        self.push_bytes(b)
    }

    /// A class of Unicode scalar ranges (surrogates must not be among them).
    pub fn class_node(&mut self, ranges: Vec<(u32, u32)>) -> u32 {
        self.class(ranges, false)
    }

    pub fn list_node(&mut self, kids: &[u32], alt: bool) -> u32 {
        self.push_list(kids, alt)
    }

    /// `max`: `None` for no upper bound.
    pub fn repeat_node(&mut self, sub: u32, min: u32, max: Option<u32>) -> u32 {
        self.push(Node::Repeat {
            sub,
            min,
            max: max.unwrap_or(u32::MAX),
        })
    }

    /// A counted automaton whose edges read `labels` (nodes of this tree, each matching
    /// something), beside `counted`'s targets.
    pub fn graph_node(&mut self, counted: Arc<Counted>, labels: Vec<Vec<u32>>) -> u32 {
        self.graphs.push(Graph { counted, labels });
        self.push(Node::Graph((self.graphs.len() - 1) as u32))
    }
}

/// The tree of a parsed pattern.
pub fn from_hir(hir: &Hir) -> Result<Ast, HasLook> {
    let mut ast = Ast::default();
    ast.root = ast.add_hir(hir)?;
    Ok(ast)
}

/// The process-wide class automata, by content; cleared when it grows past a bound.
fn class_auto(ranges: Vec<(u32, u32)>, bytes: bool) -> Arc<ClassAuto> {
    type Cache = Mutex<FxHashMap<(bool, Vec<(u32, u32)>), Arc<ClassAuto>>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let key = (bytes, ranges);
    if let Some(a) = cache.lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
        return a.clone();
    }
    let auto = Arc::new(if bytes {
        ClassAuto::from_byte_ranges(&key.1)
    } else {
        ClassAuto::from_char_ranges(&key.1)
    });
    let mut map = cache.lock().unwrap_or_else(|p| p.into_inner());
    if map.len() >= 4096 {
        map.clear();
    }
    map.entry(key).or_insert(auto).clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(p: &str) -> String {
        let ast = fast_parse(p).unwrap();
        fmt(&ast, ast.root)
    }

    fn fmt(ast: &Ast, id: u32) -> String {
        match &ast.nodes[id as usize] {
            Node::Empty => "e".into(),
            Node::Fail => "F".into(),
            &Node::Bytes { at, len } => {
                String::from_utf8_lossy(ast.slice_bytes(at, len)).into_owned()
            }
            Node::Class(c) => format!("C{c}"),
            &Node::Concat { at, len } => {
                let v: Vec<String> = ast
                    .slice_kids(at, len)
                    .iter()
                    .map(|&i| fmt(ast, i))
                    .collect();
                format!("({})", v.join(" "))
            }
            &Node::Alt { at, len } => {
                let v: Vec<String> = ast
                    .slice_kids(at, len)
                    .iter()
                    .map(|&i| fmt(ast, i))
                    .collect();
                format!("({})", v.join("|"))
            }
            &Node::Repeat { sub, min, max } => format!("{}{{{min},{max}}}", fmt(ast, sub)),
            Node::Graph(g) => format!("G{g}"),
        }
    }

    #[test]
    fn structure_and_literals() {
        assert_eq!(shape("abc"), "abc");
        assert_eq!(shape("ab*c"), "(a b{0,4294967295} c)");
        assert_eq!(shape("(?:ab|c)+?"), "(ab|c){1,4294967295}");
        assert_eq!(shape(r"\{a\}"), "{a}");
        assert_eq!(shape("é{2,3}x"), "(é{2,3} x)");
        assert_eq!(shape("a{3}|"), "(a{3,3}|e)");
        assert_eq!(shape(r"[a-c]\d[a-c]"), "(C0 C1 C0)");
        let empty = from_hir(&crate::util::syntax::parse("[a&&b]").unwrap()).unwrap();
        assert!(matches!(empty.nodes[empty.root as usize], Node::Fail));
    }

    #[test]
    fn identical_pieces_are_one_node() {
        // Both roads: the fast parser, and regex-syntax's tree (a Unicode class forces it).
        for p in [
            r#"("a":[0-9]+(,"b":[0-9]+)?|"b":[0-9]+)x"#,
            r#"(?u)("a":\w+(,"b":\w+)?|"b":\w+)x"#,
        ] {
            let ast = match fast_parse(p) {
                Ok(ast) => ast,
                Err(_) => from_hir(&crate::util::syntax::parse(p).unwrap()).unwrap(),
            };
            let mut seen = std::collections::HashMap::new();
            for (id, _) in ast.nodes.iter().enumerate() {
                let text = fmt(&ast, id as u32);
                assert!(seen.insert(text.clone(), id).is_none(), "{p}: {text} twice");
            }
            // `"b":` and its value, written twice, are one node.
            assert!(seen.keys().any(|t| t.contains(r#""b":"#)), "{p}");
        }
        // Interning releases the arenas of the copies.
        let once = fast_parse("(abc)").unwrap();
        let twice = fast_parse("(abc)(abc)").unwrap();
        assert_eq!(once.bytes.len(), twice.bytes.len());
    }

    #[test]
    fn gives_up_outside_the_plain_subset() {
        for p in [
            "^a", "a$", "(?i)a", "(?P<x>a)", "a**", "*a", "a{2", "a{3,2}", "[[a]]", "[a&&b]x]",
            r"\bx", "(a", "a)", "a{,2}", "[a--b]",
        ] {
            assert!(fast_parse(p).is_err(), "{p}");
        }
    }

    #[test]
    fn nesting_past_the_limit_gives_up() {
        let deep = format!("{}a{}", "(".repeat(300), ")".repeat(300));
        assert!(fast_parse(&deep).is_err());
        let ok = format!("{}a{}", "(".repeat(100), ")".repeat(100));
        assert!(fast_parse(&ok).is_ok());
    }
}
