//! State shared by one compilation: the dialect, caches, and the ways a step can fail.
//!
//! The caches are keyed by `Rc` pointer and keep the keys alive beside their values, so
//! a pointer cannot be reused by another node while it is a key. Work counters bound
//! the shapes a compilation may build ([`MAX_SHAPES`]) and the alternatives one merge
//! may make ([`MAX_ALTERNATIVES`]); past them the compilation fails as a limit.

use std::collections::HashMap;
use std::rc::Rc;

use serde_json::Value;

use crate::dialect::{Dialect, Draft, Escapes, Keys};
use crate::emitting::spell::{must_escape, Speller};
use crate::error::SchemaError;
use crate::languages::automaton::Dfa;
use crate::languages::ecma::{self, Refusal};
use crate::languages::formats::{self, Format};
use crate::languages::rx::alternatives::hashed;
use crate::languages::rx::Rx;
use crate::shapes::intern::Shapes;
use crate::shapes::shape::{Shape, ShapeRef, Site};

/// The most alternatives one type of one merged shape may have.
pub const MAX_ALTERNATIVES: usize = 512;
/// The most meets one merge of two alternative lists may try. Most meets are empty or
/// leave an alternative as it is (a `oneOf` branch against the complements of the
/// others), so the merged list stays within [`MAX_ALTERNATIVES`] far more often than
/// the product of the lists' lengths does: on MaskBench a product of 8,192 rather than
/// 512 serves 8 more schemas (the slowest, Github_easy o37787, compiles in 7 s); a
/// larger merged list rather than the product is what grows past use (allowing 2,048
/// served 2 more and spent 42 s refusing another).
pub const MAX_MEETS: usize = 8_192;
/// The most shapes one compilation may build.
pub const MAX_SHAPES: usize = 1_000_000;

/// Why a step failed, before the reader names the place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fail {
    /// `at`: where the keyword stands, where the step knows better than its caller
    /// (emission runs after reading, where the caller's pointer is the root).
    Unsupported {
        keyword: String,
        reason: String,
        at: Option<String>,
    },
    Limit(String),
}

impl Fail {
    pub fn unsupported(keyword: &str, reason: impl Into<String>) -> Fail {
        Fail::Unsupported {
            keyword: keyword.to_string(),
            reason: reason.into(),
            at: None,
        }
    }

    /// [`Fail::unsupported`] naming where the keyword stands.
    pub fn unsupported_at(keyword: &str, at: &Site, reason: impl Into<String>) -> Fail {
        Fail::Unsupported {
            keyword: keyword.to_string(),
            reason: reason.into(),
            at: Some(at.0.clone()),
        }
    }
}

pub type Step<T> = Result<T, Fail>;

pub struct Ctx {
    pub dialect: Dialect,
    pub speller: Speller,
    /// For strings with constraints under [`crate::Escapes::FreeStringsOnly`].
    pub raw_speller: Speller,
    /// For undeclared keys, when [`crate::Dialect::undeclared_keys`] says.
    pub key_speller: Option<Speller>,
    dfas: HashMap<*const crate::languages::rx::Node, (Rx, Rc<Dfa>)>,
    /// Each pattern and format translated once: a schema repeats them (one MaskBench
    /// schema asserts `date-time` 24 times), and one language for all its uses lets
    /// [`Ctx::dfa`] build its automaton once too.
    patterns: HashMap<String, Result<Rx, Refusal>>,
    formats: HashMap<String, Format>,
    pub meets: HashMap<(*const Shape, *const Shape), (ShapeRef, ShapeRef, ShapeRef)>,
    /// Complements by the shape they complement (kept alive with them, so the pointer
    /// stays its own): one complement per shape gives the meets with it one pointer
    /// too, so [`Ctx::meets`] finds them again.
    pub complements: HashMap<*const Shape, (ShapeRef, ShapeRef)>,
    /// Key languages written from automata, by structure ([`Ctx::interned`]).
    key_langs: HashMap<u64, Vec<Rx>>,
    pub shapes_built: usize,
    /// Every shape built, one per structure ([`Ctx::shape`]).
    shapes: Shapes,
    /// Integers are written without a fraction (`1.0` is not one): the dialect says so,
    /// or the document is draft-04 or earlier, which counts only such numbers as
    /// integers (later drafts count any number whose value is whole).
    pub integers_without_fraction: bool,
    /// The document's draft (the `$schema`'s, else the dialect's): which keywords exist
    /// and what they mean, and which formats are asserted (one the draft does not define
    /// is unknown there, an annotation, as its validators treat it:
    /// [`crate::languages::formats::defined_in`]).
    pub draft: Draft,
    /// The language goes to the lazy index as a tree ([`crate::compile_ast`]), which
    /// serves an automaton as it is: a string value's pattern and length bound then stay
    /// an automaton past [`crate::shapes::scalars::TREE_ELIMINATED`] states instead of being
    /// eliminated to a regex, which is what printing needs and what costs time.
    pub tree: bool,
    /// The grammar mode ([`crate::compile_grammar`]): an unconstrained value is the
    /// nonterminal of [`crate::emitting::rules::ANY_SPACED`] (or `ANY_COMPACT`), which
    /// nests without bound, instead of a regex nesting at most
    /// [`crate::Dialect::any_depth`] levels.
    pub rules: bool,
    /// In the grammar mode, a recursive `$ref` is a rule of the grammar ([`Shape::rules`])
    /// rather than expanded [`crate::Dialect::max_recursion`] times.
    pub ref_rules: bool,
    any: ShapeRef,
    never: ShapeRef,
}

impl Ctx {
    /// The state of compiling a document of draft `draft` in `dialect`.
    pub fn new(dialect: &Dialect, draft: Draft) -> Ctx {
        Ctx {
            dialect: dialect.clone(),
            speller: Speller::new(dialect.escapes),
            raw_speller: Speller::new(crate::Escapes::Raw),
            key_speller: dialect.undeclared_keys.map(Speller::new),
            dfas: HashMap::new(),
            patterns: HashMap::new(),
            formats: HashMap::new(),
            meets: HashMap::new(),
            complements: HashMap::new(),
            key_langs: HashMap::new(),
            shapes_built: 0,
            shapes: Shapes::default(),
            integers_without_fraction: dialect.integers_without_fraction || draft <= Draft::Draft4,
            tree: false,
            rules: false,
            ref_rules: false,
            draft,
            any: Rc::new(Shape::any()),
            never: Rc::new(Shape::never()),
        }
    }

    pub fn any(&self) -> ShapeRef {
        self.any.clone()
    }

    /// The algebra's refusal of `what` over a shape holding a grammar rule (a recursive
    /// `$ref` in the grammar mode; [`crate::compile_language`] then reads the schema
    /// again with recursion expanded).
    pub fn refuse_rules(&self, what: &str) -> Fail {
        Fail::unsupported(
            "$ref",
            format!("{what} over a recursive `$ref` kept as a rule of the grammar"),
        )
    }

    pub fn never(&self) -> ShapeRef {
        self.never.clone()
    }

    /// Wraps a new shape, counting it against [`MAX_SHAPES`] (a bound on the work, so
    /// every shape asked for counts, whether or not an equal one was built before), as
    /// the one shape of its structure ([`crate::shapes::intern`]).
    pub fn shape(&mut self, s: Shape) -> Step<ShapeRef> {
        if s.is_never() {
            return Ok(self.never());
        }
        if s.is_any() {
            return Ok(self.any());
        }
        self.shapes_built += 1;
        if self.shapes_built > MAX_SHAPES {
            return Err(Fail::Limit(format!(
                "more than {MAX_SHAPES} subschemas after expanding references and merges"
            )));
        }
        Ok(self.shapes.intern(s))
    }

    /// `x`, or the language written earlier with the same structure: key languages
    /// are written anew from automata each time an object is complemented, and
    /// objects are compared (merges drop duplicate alternatives) and their languages
    /// compiled ([`Ctx::dfa`]) by them. One node per structure makes both a pointer
    /// check; without it, comparing equal objects walked their key languages' trees
    /// (43% of a Tabris fonts schema's 4 s).
    pub fn interned(&mut self, x: Rx) -> Rx {
        let same = self.key_langs.entry(hashed(&x)).or_default();
        if let Some(y) = same.iter().find(|y| **y == x) {
            return y.clone();
        }
        same.push(x.clone());
        x
    }

    /// The automaton of a character-level language, built once.
    pub fn dfa(&mut self, x: &Rx) -> Step<Rc<Dfa>> {
        let key = Rx::as_ptr(x);
        if let Some((_, d)) = self.dfas.get(&key) {
            return Ok(d.clone());
        }
        let d = Rc::new(
            Dfa::from_rx(x)
                .map_err(|_| {
                    Fail::Limit("a string language needs too many automaton states".into())
                })?
                .minimize(),
        );
        self.dfas.insert(key, (x.clone(), d.clone()));
        Ok(d)
    }

    /// The language of an ECMA-262 `pattern` ([`ecma::translate`]), translated once.
    pub fn pattern(&mut self, pattern: &str) -> Result<Rx, Refusal> {
        if let Some(found) = self.patterns.get(pattern) {
            return found.clone();
        }
        let translated = ecma::translate(pattern);
        self.patterns
            .insert(pattern.to_string(), translated.clone());
        translated
    }

    /// The format `name` ([`formats::format`]), built once.
    pub fn format(&mut self, name: &str) -> Format {
        self.formats
            .entry(name.to_string())
            .or_insert_with(|| formats::format(name))
            .clone()
    }

    /// Refuses (`Unsupported`, naming `keyword` at `ptr`) listed values (`enum`,
    /// `const`) holding a string the dialect cannot write: under [`Escapes::Raw`], one
    /// with `"`, `\` or a control character, as a string or (keys written as strings) as
    /// a key of an object value. Every other mode writes every string, so a listed
    /// value is never silently left out of the language.
    pub fn writable(&self, values: &[Value], keyword: &str, ptr: &str) -> Result<(), SchemaError> {
        if self.dialect.escapes != Escapes::Raw {
            return Ok(());
        }
        let keys = self.dialect.keys == Keys::AsStrings;
        match values.iter().find_map(|v| unwritable(v, keys)) {
            Some(s) => Err(SchemaError::unsupported(
                keyword,
                ptr,
                format!("the listed string {s:?} needs an escape, and the dialect writes none"),
            )),
            None => Ok(()),
        }
    }

    /// Whether the decoded string `s` is in the language `x`.
    pub fn matches(&mut self, x: &Rx, s: &str) -> Step<bool> {
        Ok(self.dfa(x)?.accepts(s))
    }
}

/// A string in `v` that needs an escape (`keys`: its objects' keys too).
fn unwritable(v: &Value, keys: bool) -> Option<&str> {
    let needs = |s: &str| s.chars().any(|c| must_escape().contains(c as u32));
    match v {
        Value::String(s) => needs(s).then_some(s.as_str()),
        Value::Array(a) => a.iter().find_map(|x| unwritable(x, keys)),
        Value::Object(o) => o.iter().find_map(|(k, x)| {
            if keys && needs(k) {
                Some(k.as_str())
            } else {
                unwritable(x, keys)
            }
        }),
        _ => None,
    }
}
