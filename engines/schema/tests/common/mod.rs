//! Helpers shared by the tests and examples: dialect serialization of instances and
//! anchored full-match checks.
//!
//! [`texts`] writes a JSON value as the dialect's texts: numbers in plain decimal (no
//! exponent), strings escaped as `serde_json` does (only what must be escaped), the
//! dialect's separators, and, for objects, every order of their keys (up to
//! [`MAX_ORDERS`] texts in all), the instance's own order first.

#![allow(dead_code)]

use regex_automata::meta::Regex;
use serde_json::Value;
use tokensdfa_schema::{compile, Dialect, Draft, Formats, SchemaError, Whitespace};

/// The most key orders [`texts`] writes for one value.
pub const MAX_ORDERS: usize = 200;

/// A full-match matcher for a compiled regex.
pub fn matcher(re: &str) -> Result<Regex, String> {
    Regex::builder()
        .configure(
            Regex::config()
                .nfa_size_limit(Some(1 << 26))
                .which_captures(regex_automata::nfa::thompson::WhichCaptures::None)
                .hybrid_cache_capacity(1 << 24),
        )
        .syntax(regex_automata::util::syntax::Config::new().nest_limit(1000))
        .build(&format!("^(?:{re})$"))
        .map_err(|e| e.to_string())
}

/// Plain decimal spelling of a JSON number text (`1e2` -> `100`, `1.5e-1` -> `0.15`).
pub fn plain(text: &str) -> Option<String> {
    let (neg, rest) = match text.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, text),
    };
    let (mant, exp) = match rest.find(['e', 'E']) {
        Some(i) => (&rest[..i], rest[i + 1..].parse::<i64>().ok()?),
        None => (rest, 0),
    };
    if exp.abs() > 5000 {
        return None;
    }
    let (int, frac) = mant.split_once('.').unwrap_or((mant, ""));
    let digits: String = format!("{int}{frac}");
    let point = int.len() as i64 + exp;
    let (mut i, mut f) = if point <= 0 {
        ("0".to_string(), "0".repeat((-point) as usize) + &digits)
    } else if point as usize >= digits.len() {
        (
            digits.clone() + &"0".repeat(point as usize - digits.len()),
            String::new(),
        )
    } else {
        (
            digits[..point as usize].to_string(),
            digits[point as usize..].to_string(),
        )
    };
    i = i.trim_start_matches('0').to_string();
    if i.is_empty() {
        i = "0".into();
    }
    f = f.trim_end_matches('0').to_string();
    let body = if f.is_empty() { i } else { format!("{i}.{f}") };
    Some(if neg && body != "0" {
        format!("-{body}")
    } else {
        body
    })
}

struct Seps {
    open: &'static str,
    close: &'static str,
    comma: &'static str,
    colon: &'static str,
}

fn seps(d: &Dialect) -> Seps {
    match d.whitespace {
        Whitespace::None => Seps {
            open: "",
            close: "",
            comma: ",",
            colon: ":",
        },
        Whitespace::OptionalSpace => Seps {
            open: "",
            close: "",
            comma: ", ",
            colon: ": ",
        },
        Whitespace::Any { .. } => Seps {
            open: "\n\t",
            close: "\n",
            comma: " ,\t",
            colon: " : ",
        },
    }
}

/// The dialect's texts of `v`, or `None` if a number cannot be written plainly.
pub fn texts(v: &Value, d: &Dialect) -> Option<Vec<String>> {
    let s = seps(d);
    let mut out = write(v, &s)?;
    out.truncate(MAX_ORDERS);
    Some(out)
}

fn write(v: &Value, s: &Seps) -> Option<Vec<String>> {
    Some(match v {
        Value::Number(n) => vec![plain(&n.to_string())?],
        Value::Array(a) if !a.is_empty() => {
            let parts = a.iter().map(|x| write(x, s)).collect::<Option<Vec<_>>>()?;
            product(&parts, s.comma)
                .into_iter()
                .map(|b| format!("[{}{b}{}]", s.open, s.close))
                .collect()
        }
        Value::Object(o) if !o.is_empty() => {
            let members = o
                .iter()
                .map(|(k, x)| {
                    let key = serde_json::to_string(&Value::String(k.clone())).unwrap();
                    write(x, s).map(|vs| {
                        vs.into_iter()
                            .map(|t| format!("{key}{}{t}", s.colon))
                            .collect::<Vec<_>>()
                    })
                })
                .collect::<Option<Vec<_>>>()?;
            let mut out = Vec::new();
            for order in permutations(members.len()) {
                let parts: Vec<Vec<String>> = order.iter().map(|&i| members[i].clone()).collect();
                out.extend(
                    product(&parts, s.comma)
                        .into_iter()
                        .map(|b| format!("{{{}{b}{}}}", s.open, s.close)),
                );
                if out.len() >= MAX_ORDERS {
                    break;
                }
            }
            out
        }
        Value::Array(_) => vec![if s.open.is_empty() {
            "[]".into()
        } else {
            "[ ]".into()
        }],
        Value::Object(_) => vec![if s.open.is_empty() {
            "{}".into()
        } else {
            "{ }".into()
        }],
        other => vec![serde_json::to_string(other).unwrap()],
    })
}

/// Every choice of one text per part, joined by `sep` (at most [`MAX_ORDERS`]).
fn product(parts: &[Vec<String>], sep: &str) -> Vec<String> {
    let mut acc = vec![String::new()];
    for (i, p) in parts.iter().enumerate() {
        let mut next = Vec::new();
        for a in &acc {
            for t in p {
                if next.len() < MAX_ORDERS {
                    next.push(if i == 0 {
                        t.clone()
                    } else {
                        format!("{a}{sep}{t}")
                    });
                }
            }
        }
        acc = next;
    }
    acc
}

/// Orders of `n` items, the identity first (at most [`MAX_ORDERS`]).
fn permutations(n: usize) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    let mut cur: Vec<usize> = (0..n).collect();
    permute(&mut cur, 0, &mut out);
    out
}

fn permute(cur: &mut Vec<usize>, k: usize, out: &mut Vec<Vec<usize>>) {
    if out.len() >= MAX_ORDERS {
        return;
    }
    if k == cur.len() {
        out.push(cur.clone());
        return;
    }
    for i in k..cur.len() {
        cur.swap(k, i);
        permute(cur, k + 1, out);
        cur.swap(k, i);
    }
}

/// The compact dialect the suite's file at `path` is run in: `format` asserts, except in
/// draft 2020-12's own `format.json`, which expects it to annotate; unconstrained values
/// nest three levels (the suite's deepest valid instances).
pub fn suite_dialect(draft: Draft, path: &std::path::Path) -> Dialect {
    let annotate = draft == Draft::Draft2020 && path.ends_with("draft2020-12/format.json");
    Dialect {
        draft,
        formats: if annotate {
            Formats::Annotate
        } else {
            Formats::Assert
        },
        any_depth: 3,
        ..Dialect::default()
    }
}

/// The `.json` files directly in `dir`, sorted (none if it cannot be read).
pub fn json_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .map(|r| {
            r.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "json"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Whether a suite test, named by its group's and its own description, tests what the
/// dialect's documented restrictions leave out (see `dialect.rs`): leap seconds outside
/// UTC, and hostname labels with `--` in the 3rd and 4th characters (IDNA's A-labels).
/// Only a *valid* instance rejected there is excused.
pub fn restricted(descriptions: &str) -> bool {
    descriptions.contains("leap second") || descriptions.contains("A-label")
}

/// How deeply a value nests arrays and objects.
pub fn depth(v: &Value) -> u32 {
    match v {
        Value::Array(a) => 1 + a.iter().map(depth).max().unwrap_or(0),
        Value::Object(o) => 1 + o.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// Asserts that `schema`, compiled in dialect `d`, fully matches each of `good` and none
/// of `bad`.
pub fn check_in(d: &Dialect, schema: &str, good: &[&str], bad: &[&str]) {
    let re = compile(schema, d).unwrap_or_else(|e| panic!("{schema}: {e}"));
    let m = matcher(&re).unwrap();
    for t in good {
        assert!(m.is_match(*t), "{schema} should accept {t}\n{re}");
    }
    for t in bad {
        assert!(!m.is_match(*t), "{schema} should reject {t}\n{re}");
    }
}

/// [`check_in`] in the default dialect.
pub fn check(schema: &str, good: &[&str], bad: &[&str]) {
    check_in(&Dialect::default(), schema, good, bad);
}

/// The error compiling `schema` in the default dialect gives (it must be refused).
pub fn refused(schema: &str) -> SchemaError {
    compile(schema, &Dialect::default()).expect_err(schema)
}

/// A schema's tree (`compile_ast`, the lazy index's road, which serves languages the
/// regex text cannot hold) as a lazy index over one token per byte.
pub struct Tree(tokensdfa_core::LazyIndex);

impl Tree {
    pub fn new(schema: &str, d: &Dialect) -> Result<Tree, SchemaError> {
        use tokensdfa_core::{LazyIndex, LazyOptions, Vocabulary};
        let ast = tokensdfa_schema::compile_ast(schema, d)?;
        let bytes: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).chain([vec![]]).collect();
        let all: Vec<&[u8]> = bytes.iter().map(|b| b.as_slice()).collect();
        let v = Vocabulary::new(&all, 256, &[]).expect("a byte vocabulary");
        let lazy = LazyIndex::from_ast(ast, &v, LazyOptions::default())
            .map_err(|e| SchemaError::limit("", e.to_string()))?;
        Ok(Tree(lazy))
    }

    /// Whether `text` walks, byte by byte, to an accepting state.
    pub fn accepts(&self, text: &str) -> bool {
        use tokensdfa_core::TokenAutomaton;
        let mut s = Some(self.0.initial_state());
        for &b in text.as_bytes() {
            s = s.and_then(|s| self.0.next_state(s, u32::from(b)));
        }
        s.is_some_and(|s| self.0.is_accepting(s))
    }
}

/// Asserts that `schema`'s [`Tree`] in the default dialect accepts each of `good` and
/// none of `bad`.
pub fn check_tree(schema: &str, good: &[&str], bad: &[&str]) {
    let tree = Tree::new(schema, &Dialect::default()).unwrap_or_else(|e| panic!("{schema}: {e}"));
    for t in good {
        assert!(tree.accepts(t), "{schema} should accept {t}");
    }
    for t in bad {
        assert!(!tree.accepts(t), "{schema} should reject {t}");
    }
}

/// The message of the error compiling `schema` to regex text in the default dialect.
pub fn compile_err(schema: &str) -> String {
    refused(schema).to_string()
}

/// Cases per property: `PROPTEST_CASES` (`make fuzz` raises it), else 200.
pub fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200)
}
