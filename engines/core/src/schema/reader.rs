//! Reading a schema document into a [`Shape`]: references and applicators.
//!
//! A schema object is the conjunction of its parts, taken in a fixed order that is also
//! the order of declared keys ([`super::dialect::PropertyOrder::SchemaOrder`]): its own
//! keywords ([`super::keywords`]), `$ref`, `allOf` branches, `anyOf`, `oneOf`, `not`,
//! `if`/`then`/`else`. Draft-04 to draft-07 documents
//! (named by `$schema`) ignore the siblings of `$ref`, as those drafts say.
//!
//! References are JSON pointers (`#/...`, percent-decoded, `~0`/`~1` unescaped),
//! anchors (`$anchor`, or a draft-07 `$id: "#name"`), or the root's own `$id`. Anything
//! else (another document, a base changed by a nested `$id`) is refused. A target is
//! expanded where it is used, at most [`Dialect::max_recursion`] times inside itself; at
//! the bound it admits nothing (instances that deep are outside the dialect), and under
//! `not` the bound is an error, since the negation of nothing would admit too much.
//! Expansions that touched no cycle reaching outside themselves are cached per target.
//!
//! [`Dialect::max_recursion`]: super::dialect::Dialect::max_recursion

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::context::{Ctx, Fail};
use super::error::SchemaError;
use super::exclusive::one_of;
use super::keywords;
use super::merge::intersect;
use super::negate::negate;
use super::shape::{Shape, ShapeRef};

/// Keywords with assertion semantics the compiler does not implement.
const REFUSED: [&str; 6] = [
    "$dynamicRef",
    "$recursiveRef",
    "disallow",
    "extends",
    "divisibleBy",
    "$data",
];

/// `$schema` fragments of the drafts whose `$ref` ignores its siblings.
const LEGACY: [&str; 4] = ["draft-03", "draft-04", "draft-06", "draft-07"];

pub struct Reader<'a> {
    root: &'a Value,
    legacy: bool,
    root_id: Option<String>,
    anchors: HashMap<String, String>,
    stack: Vec<String>,
    /// Expansions, with whether a recursion bound cut them.
    cache: HashMap<String, (ShapeRef, bool)>,
    /// Whether the current expansion reached the recursion bound.
    cut: bool,
    /// The outermost stack position a cycle closed at, during the current expansion.
    cycle_floor: usize,
    negations: usize,
    /// Inside a subschema whose nested `$id` changed the base URI.
    rebased: bool,
}

/// The JSON pointer of `key` below `ptr`.
pub fn child(ptr: &str, key: &str) -> String {
    format!("{ptr}/{}", key.replace('~', "~0").replace('/', "~1"))
}

pub fn fail_at(ptr: &str, f: Fail) -> SchemaError {
    match f {
        Fail::Unsupported { keyword, reason } => SchemaError::unsupported(&keyword, ptr, reason),
        Fail::Limit(what) => SchemaError::limit(ptr, what),
    }
}

impl<'a> Reader<'a> {
    /// A reader of `root`; `legacy` says whether a document without `$schema` follows
    /// draft-07 rules.
    pub fn new(root: &'a Value, legacy: bool) -> Reader<'a> {
        let legacy = match root.get("$schema").and_then(Value::as_str) {
            Some(schema) => LEGACY.iter().any(|d| schema.contains(d)),
            None => legacy,
        };
        let root_id = root
            .get("$id")
            .or_else(|| root.get("id"))
            .and_then(Value::as_str)
            .map(|s| s.trim_end_matches('#').to_string());
        let mut anchors = HashMap::new();
        collect_anchors(root, "", &mut anchors);
        Reader {
            root,
            legacy,
            root_id,
            anchors,
            stack: Vec::new(),
            cache: HashMap::new(),
            cut: false,
            cycle_floor: usize::MAX,
            negations: 0,
            rebased: false,
        }
    }

    /// Whether draft-07 rules apply (the document's `$schema`, else the dialect's draft).
    pub fn legacy(&self) -> bool {
        self.legacy
    }

    /// Refuses a root whose `$schema` names a meta-schema other than the drafts
    /// (a custom meta-schema may switch vocabularies off).
    pub fn check_meta_schema(&self) -> Result<(), SchemaError> {
        let Some(schema) = self.root.get("$schema") else {
            return Ok(());
        };
        let s = schema
            .as_str()
            .ok_or_else(|| SchemaError::invalid("/$schema", "must be a string"))?;
        let known =
            s.starts_with("http://json-schema.org/") || s.starts_with("https://json-schema.org/");
        if known
            && (LEGACY.iter().any(|d| s.contains(d))
                || s.contains("/draft/2019-09/")
                || s.contains("/draft/2020-12/"))
        {
            return Ok(());
        }
        Err(SchemaError::unsupported(
            "$schema",
            "/$schema",
            format!("unknown meta-schema {s:?}"),
        ))
    }

    pub fn read(&mut self, ctx: &mut Ctx, v: &Value, ptr: &str) -> Result<ShapeRef, SchemaError> {
        match v {
            Value::Bool(true) => Ok(ctx.any()),
            Value::Bool(false) => Ok(ctx.never()),
            Value::Object(m) => {
                let nested_id = !ptr.is_empty()
                    && m.get("$id")
                        .and_then(Value::as_str)
                        .is_some_and(|id| !id.starts_with('#'));
                let rebased = self.rebased || nested_id;
                let saved = std::mem::replace(&mut self.rebased, rebased);
                let r = self.read_object(ctx, m, ptr);
                self.rebased = saved;
                r
            }
            _ => Err(SchemaError::invalid(
                ptr,
                "a schema must be an object or a boolean",
            )),
        }
    }

    /// Reads a subschema under `not`-like negation.
    pub fn read_negated(
        &mut self,
        ctx: &mut Ctx,
        v: &Value,
        ptr: &str,
    ) -> Result<ShapeRef, SchemaError> {
        self.negations += 1;
        let r = self.read(ctx, v, ptr);
        self.negations -= 1;
        r
    }

    fn read_object(
        &mut self,
        ctx: &mut Ctx,
        m: &Map<String, Value>,
        ptr: &str,
    ) -> Result<ShapeRef, SchemaError> {
        if let Some(k) = REFUSED.iter().find(|k| m.contains_key(**k)) {
            return Err(SchemaError::unsupported(
                k,
                ptr,
                "its semantics are not implemented",
            ));
        }
        if let Some(r) = m.get("$ref") {
            let target = self.reference(ctx, r, &child(ptr, "$ref"))?;
            if self.legacy {
                return Ok(target);
            }
            let rest = self.read_siblings(ctx, m, ptr)?;
            return intersect(ctx, &rest, &target).map_err(|f| fail_at(ptr, f));
        }
        self.read_siblings(ctx, m, ptr)
    }

    fn read_siblings(
        &mut self,
        ctx: &mut Ctx,
        m: &Map<String, Value>,
        ptr: &str,
    ) -> Result<ShapeRef, SchemaError> {
        let mut acc = keywords::own(self, ctx, m, ptr)?;
        if let Some(v) = m.get("allOf") {
            for (i, sub) in self.list(v, ptr, "allOf")?.iter().enumerate() {
                let s = self.read(ctx, sub, &child(&child(ptr, "allOf"), &i.to_string()))?;
                acc = intersect(ctx, &acc, &s).map_err(|f| fail_at(ptr, f))?;
            }
        }
        if let Some(v) = m.get("anyOf") {
            let branches = self.branches(ctx, v, ptr, "anyOf")?;
            let u = branches
                .iter()
                .skip(1)
                .fold(Shape::clone(&branches[0]), |u, b| u.union(b));
            let u = ctx.shape(u).map_err(|f| fail_at(ptr, f))?;
            acc = intersect(ctx, &acc, &u).map_err(|f| fail_at(ptr, f))?;
        }
        if let Some(v) = m.get("oneOf") {
            // the values of `acc` in exactly one branch are those in exactly one branch
            // met with `acc`: meeting first lets siblings (a `required` tag, a `type`)
            // make branches disjoint that are not on their own
            let mut branches = self.branches(ctx, v, ptr, "oneOf")?;
            for b in branches.iter_mut() {
                *b = intersect(ctx, &acc, b).map_err(|f| fail_at(ptr, f))?;
            }
            acc = one_of(ctx, &branches).map_err(|f| fail_at(&child(ptr, "oneOf"), f))?;
        }
        if let Some(v) = m.get("not") {
            let n = self.complement(ctx, v, &child(ptr, "not"))?;
            acc = intersect(ctx, &acc, &n).map_err(|f| fail_at(ptr, f))?;
        }
        let has_branch = m.contains_key("then") || m.contains_key("else");
        let conditionals = !matches!(ctx.legacy_draft, 3 | 4 | 6);
        if let Some(c) = m.get("if").filter(|_| has_branch && conditionals) {
            let s = self.conditional(ctx, m, c, ptr)?;
            acc = intersect(ctx, &acc, &s).map_err(|f| fail_at(ptr, f))?;
        }
        Ok(acc)
    }

    /// The values `v` (at `ptr`, the operand of `not`) rejects. An operand with a `not`
    /// of its own beside other keywords `A` is `A and not Y`, whose complement is
    /// `not A or Y` (De Morgan): `Y` is read outside the negation, so a double negation
    /// costs no complement at all (where `A` admits everything, as annotations do).
    /// Not where a legacy `$ref` makes its siblings, this `not` among them, ignored.
    fn complement(&mut self, ctx: &mut Ctx, v: &Value, ptr: &str) -> Result<ShapeRef, SchemaError> {
        let operand = v
            .as_object()
            .filter(|m| !(self.legacy && m.contains_key("$ref")));
        if let Some((m, y)) = operand.and_then(|m| Some((m, m.get("not")?))) {
            let mut rest = m.clone();
            rest.remove("not");
            let a = self.read_negated(ctx, &Value::Object(rest), ptr)?;
            let y = self.read(ctx, y, &child(ptr, "not"))?;
            if a.is_any() {
                return Ok(y);
            }
            let not_a = negate(ctx, &a).map_err(|f| fail_at(ptr, f))?;
            return ctx.shape(not_a.union(&y)).map_err(|f| fail_at(ptr, f));
        }
        let s = self.read_negated(ctx, v, ptr)?;
        negate(ctx, &s).map_err(|f| fail_at(ptr, f))
    }

    /// `(if and then) or (not if and else)`.
    fn conditional(
        &mut self,
        ctx: &mut Ctx,
        m: &Map<String, Value>,
        cond: &Value,
        ptr: &str,
    ) -> Result<ShapeRef, SchemaError> {
        let p = child(ptr, "if");
        let c = self.read_negated(ctx, cond, &p)?;
        let not_c = negate(ctx, &c).map_err(|f| fail_at(&p, f))?;
        let then = match m.get("then") {
            Some(t) => self.read(ctx, t, &child(ptr, "then"))?,
            None => ctx.any(),
        };
        let other = match m.get("else") {
            Some(e) => self.read(ctx, e, &child(ptr, "else"))?,
            None => ctx.any(),
        };
        let yes = intersect(ctx, &c, &then).map_err(|f| fail_at(ptr, f))?;
        let no = intersect(ctx, &not_c, &other).map_err(|f| fail_at(ptr, f))?;
        ctx.shape(yes.union(&no)).map_err(|f| fail_at(ptr, f))
    }

    pub fn list<'v>(
        &self,
        v: &'v Value,
        ptr: &str,
        key: &str,
    ) -> Result<&'v Vec<Value>, SchemaError> {
        match v {
            Value::Array(a) if !a.is_empty() => Ok(a),
            _ => Err(SchemaError::invalid(
                &child(ptr, key),
                "must be a non-empty array of schemas",
            )),
        }
    }

    /// The branches of `anyOf` or `oneOf`. [`one_of`] excludes values that other
    /// branches admit, which acts like a negation, so a recursion cut inside a `oneOf`
    /// branch is an error.
    fn branches(
        &mut self,
        ctx: &mut Ctx,
        v: &Value,
        ptr: &str,
        key: &str,
    ) -> Result<Vec<ShapeRef>, SchemaError> {
        let at = child(ptr, key);
        let list = self.list(v, ptr, key)?;
        let negatable = (key == "oneOf") as usize;
        self.negations += negatable;
        let r = list
            .iter()
            .enumerate()
            .map(|(i, sub)| self.read(ctx, sub, &child(&at, &i.to_string())))
            .collect();
        self.negations -= negatable;
        r
    }

    fn reference(&mut self, ctx: &mut Ctx, r: &Value, ptr: &str) -> Result<ShapeRef, SchemaError> {
        let r = r
            .as_str()
            .ok_or_else(|| SchemaError::invalid(ptr, "$ref must be a string"))?;
        if self.rebased {
            return Err(SchemaError::unsupported("$ref", ptr, "a nested $id changes the base URI; only references within the root document are followed"));
        }
        let target = self.target_pointer(r).ok_or_else(|| {
            SchemaError::unsupported(
                "$ref",
                ptr,
                format!("{r:?} is not a reference within this document"),
            )
        })?;
        let value = lookup(self.root, &target)
            .ok_or_else(|| SchemaError::invalid(ptr, format!("$ref {r:?} points to nothing")))?;
        let cut_error = || {
            SchemaError::limit(
                ptr,
                "a recursive $ref under `not`, `if` or `oneOf` would need unbounded depth",
            )
        };
        if let Some(first) = self.stack.iter().position(|t| *t == target) {
            self.cycle_floor = self.cycle_floor.min(first);
            let depth = self.stack.iter().filter(|t| **t == target).count();
            if depth > ctx.dialect.max_recursion as usize {
                if self.negations > 0 {
                    return Err(cut_error());
                }
                self.cut = true;
                return Ok(ctx.never());
            }
        } else if let Some((hit, cut)) = self.cache.get(&target) {
            if *cut && self.negations > 0 {
                return Err(cut_error());
            }
            self.cut |= *cut;
            return Ok(hit.clone());
        }
        let pos = self.stack.len();
        self.stack.push(target.clone());
        let saved = (
            std::mem::replace(&mut self.cycle_floor, usize::MAX),
            std::mem::replace(&mut self.cut, false),
        );
        let r = self.read(ctx, value, &target);
        self.stack.pop();
        let (floor, cut) = (self.cycle_floor, self.cut);
        self.cycle_floor = saved.0.min(floor);
        self.cut = saved.1 || cut;
        let shape = r?;
        if floor >= pos {
            self.cache.insert(target, (shape.clone(), cut));
        }
        Ok(shape)
    }

    /// The JSON pointer a reference names, if it is within this document.
    fn target_pointer(&self, r: &str) -> Option<String> {
        let frag = match r.split_once('#') {
            Some(("", f)) => f,
            Some((base, f)) if Some(base) == self.root_id.as_deref() => f,
            None if Some(r.trim_end_matches('#')) == self.root_id.as_deref() => "",
            _ => return None,
        };
        let frag = percent_decode(frag)?;
        if frag.is_empty() || frag.starts_with('/') {
            Some(frag)
        } else {
            self.anchors.get(&frag).cloned()
        }
    }
}

fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The value at a JSON pointer.
pub fn lookup<'v>(root: &'v Value, pointer: &str) -> Option<&'v Value> {
    if pointer.is_empty() {
        return Some(root);
    }
    let mut at = root;
    for token in pointer.strip_prefix('/')?.split('/') {
        let token = token.replace("~1", "/").replace("~0", "~");
        at = match at {
            Value::Object(m) => m.get(&token)?,
            Value::Array(a) => a.get(token.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(at)
}

fn collect_anchors(v: &Value, ptr: &str, out: &mut HashMap<String, String>) {
    match v {
        Value::Object(m) => {
            if let Some(a) = m.get("$anchor").and_then(Value::as_str) {
                out.entry(a.to_string()).or_insert_with(|| ptr.to_string());
            }
            for key in ["$id", "id"] {
                if let Some(a) = m
                    .get(key)
                    .and_then(Value::as_str)
                    .and_then(|s| s.strip_prefix('#'))
                {
                    out.entry(a.to_string()).or_insert_with(|| ptr.to_string());
                }
            }
            for (k, sub) in m {
                if !matches!(k.as_str(), "enum" | "const" | "default" | "examples") {
                    collect_anchors(sub, &child(ptr, k), out);
                }
            }
        }
        Value::Array(a) => a
            .iter()
            .enumerate()
            .for_each(|(i, sub)| collect_anchors(sub, &child(ptr, &i.to_string()), out)),
        _ => {}
    }
}
