//! Reading: a schema document into a [`Shape`], the first stage of a compilation.
//!
//! - this module: [`Reader`], which walks the document, follows references and combines
//!   applicators (below);
//! - [`keywords`]: a schema object's own keywords (`type`, the per-type assertions,
//!   `enum`, `const`), each type's assertions one alternative of that type;
//! - [`dependencies`]: `dependentRequired`, `dependentSchemas`, and drafts 3 to 7's
//!   `dependencies`;
//! - `uris`: base URIs, resources and anchors, where a `$ref` points;
//! - `refs`: expanding a reference's target within the recursion bound, with a cache;
//! - `one_of`: `oneOf` where recursion is cut inside its branches;
//! - `unevaluated`: `unevaluatedProperties` where the evaluated keys are known statically.
//!
//! The reader combines shapes with the algebra of [`crate::shapes`] (`allOf` by
//! [`intersect`], `oneOf` by [`crate::shapes::exclusive`], `not` by [`negate`]); the
//! document's draft ([`Draft`]) decides which keywords exist and how `$ref` treats its
//! siblings.
//!
//! A schema object is the conjunction of its parts, taken in a fixed order that is also
//! the order of declared keys (see [`crate::dialect`]): its own
//! keywords ([`keywords`]), `$ref`, `allOf` branches, `anyOf`, `oneOf`, `not`,
//! `if`/`then`/`else`. Draft-04 to draft-07 documents
//! (named by `$schema`) ignore the siblings of `$ref`, as those drafts say.
//!
//! References are URI references resolved against the base where they stand (the ids
//! of the enclosing schemas, `uris`) to a resource of this document, then a JSON
//! pointer within it (`#/...`, percent-decoded, `~0`/`~1` unescaped) or an anchor
//! (`$anchor`, or a draft-07 `$id: "#name"`). Another document is refused (nothing is
//! fetched). A target is
//! expanded where it is used, at most [`Dialect::max_recursion`] times inside itself
//! (`refs`; in the grammar mode, [`Ctx::ref_rules`], a recursion is instead a rule of
//! the grammar, the target's values, with no bound); at the bound it admits nothing (instances that deep are outside the
//! dialect), and under `not` or an `if` the bound is an error, since the negation of
//! nothing would admit too much. Under `oneOf` a cut is kept only where excluding the
//! other branches stays exact up to the bound (`one_of`).
//!
//! [`Dialect::max_recursion`]: crate::dialect::Dialect::max_recursion
//! [`Draft`]: crate::dialect::Draft

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::context::{Ctx, Fail};
use crate::dialect::Draft;
use crate::error::SchemaError;
use crate::shapes::merge::intersect;
use crate::shapes::negate::negate;
use crate::shapes::shape::{Shape, ShapeRef};

pub mod dependencies;
pub mod keywords;
mod one_of;
mod refs;
mod unevaluated;
mod uris;

use refs::{Cache, Cuts};
use uris::Resources;

/// Keywords with assertion semantics the compiler does not implement.
const REFUSED: [&str; 6] = [
    "$dynamicRef",
    "$recursiveRef",
    "disallow",
    "extends",
    "divisibleBy",
    "$data",
];

/// How deeply subschemas may nest once references are expanded. The JSON parser
/// bounds how deeply the document itself nests, but a chain of references can nest
/// without bound (`$defs/d0` holding `$defs/d1` as a property, and so on); every pass
/// over the schema recurses once per level, so past this the compilation fails as a
/// limit instead of exhausting the thread's stack (which crashed at 2,000 levels on an
/// 8 MiB stack). MaskBench's deepest reading is well below it.
pub const MAX_NESTING: usize = 512;

/// `$schema` fragments of the drafts whose `$ref` ignores its siblings.
const LEGACY: [&str; 4] = ["draft-03", "draft-04", "draft-06", "draft-07"];

pub struct Reader<'a> {
    root: &'a Value,
    /// The document's draft.
    draft: Draft,
    resources: Resources,
    /// The targets being expanded, each with the member level it was reached at.
    stack: Vec<(String, usize)>,
    /// Expansions, with what recursion bounds did to them.
    cache: Cache,
    /// The same while over-approximating, where a cut admits everything.
    over_cache: Cache,
    /// Over-approximating: a cut admits everything and `oneOf` is read as `anyOf`
    /// (both only widen), to show a `oneOf`'s cut branches disjoint.
    over: bool,
    /// Widened readings so far ([`one_of`]).
    widenings: usize,
    /// Times a `oneOf` with a cut branch was reached ([`one_of`]).
    encounters: usize,
    /// Widened readings of `oneOf` branches, by the pointer of the `oneOf`'s schema and
    /// the expansions around it, each with whether a cut in it was shallow ([`one_of`]).
    widened: one_of::Widened,
    /// Whether (and how) the current expansion reached the recursion bound.
    cut: Cuts,
    /// How many properties or items deep the value being read lies.
    members: usize,
    /// The outermost stack position a cycle closed at, during the current expansion.
    cycle_floor: usize,
    negations: usize,
    /// How many subschemas deep the one being read lies ([`MAX_NESTING`]).
    nesting: usize,
    /// In the grammar mode ([`Ctx::ref_rules`]): the rule number of each target a
    /// recursion reached, and each such rule's right-hand side (the target's shape read
    /// where it was entered first).
    ref_rules: HashMap<String, u32>,
    rule_bodies: std::collections::BTreeMap<u32, ShapeRef>,
    /// A recursion was met where no rule can stand (under `not`, an `if`, or while
    /// over-approximating a `oneOf`).
    rule_refused: bool,
}

/// The JSON pointer of `key` below `ptr`.
pub fn child(ptr: &str, key: &str) -> String {
    format!("{ptr}/{}", key.replace('~', "~0").replace('/', "~1"))
}

pub fn fail_at(ptr: &str, f: Fail) -> SchemaError {
    match f {
        Fail::Unsupported {
            keyword,
            reason,
            at,
        } => SchemaError::unsupported(&keyword, at.as_deref().unwrap_or(ptr), reason),
        Fail::Limit(what) => SchemaError::limit(ptr, what),
    }
}

/// The union of `branches` (at least one), as `anyOf` at `ptr` admits.
fn union(ctx: &mut Ctx, branches: &[ShapeRef], ptr: &str) -> Result<ShapeRef, SchemaError> {
    let u = Shape::union_all(branches.iter().map(|b| &**b));
    ctx.shape(u).map_err(|f| fail_at(ptr, f))
}

impl<'a> Reader<'a> {
    /// A reader of `root`, a document of draft `draft`.
    pub fn new(root: &'a Value, draft: Draft) -> Reader<'a> {
        Reader {
            root,
            draft,
            resources: Resources::collect(root, draft),
            stack: Vec::new(),
            cache: HashMap::new(),
            over_cache: HashMap::new(),
            over: false,
            widenings: 0,
            encounters: 0,
            widened: HashMap::new(),
            cut: Cuts::default(),
            members: 0,
            cycle_floor: usize::MAX,
            negations: 0,
            nesting: 0,
            ref_rules: HashMap::new(),
            rule_bodies: std::collections::BTreeMap::new(),
            rule_refused: false,
        }
    }

    /// The rules recursive `$ref`s made in the grammar mode ([`Ctx::ref_rules`]), each
    /// with its target's shape, by number.
    pub fn rule_bodies(&self) -> &std::collections::BTreeMap<u32, ShapeRef> {
        &self.rule_bodies
    }

    /// Whether the grammar mode met a recursive `$ref`: made it a rule, or refused one
    /// where none can stand (a reading that did and failed is worth another with
    /// recursion expanded).
    pub fn met_rules(&self) -> bool {
        !self.ref_rules.is_empty() || self.rule_refused
    }

    /// Whether the document's draft is draft-07 or earlier (the `$schema`'s, else the
    /// dialect's), whose rules differ from 2019-09's: `$ref` ignores its siblings, and
    /// keywords of 2019-09 on do not exist.
    pub fn legacy(&self) -> bool {
        self.draft <= Draft::Draft7
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
            Value::Object(_) if self.nesting >= MAX_NESTING => Err(SchemaError::limit(
                ptr,
                format!(
                    "subschemas nested more than {MAX_NESTING} deep once references are expanded"
                ),
            )),
            Value::Object(m) => {
                self.nesting += 1;
                let r = self.read_object(ctx, m, ptr);
                self.nesting -= 1;
                r
            }
            _ => Err(SchemaError::invalid(
                ptr,
                "a schema must be an object or a boolean",
            )),
        }
    }

    /// Reads the schema of an object's member or an array's item.
    pub fn read_member(
        &mut self,
        ctx: &mut Ctx,
        v: &Value,
        ptr: &str,
    ) -> Result<ShapeRef, SchemaError> {
        self.members += 1;
        let r = self.read(ctx, v, ptr);
        self.members -= 1;
        r
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
        let whole = match m.get("$ref") {
            Some(r) => {
                let target = self.reference(ctx, r, &child(ptr, "$ref"))?;
                if self.legacy() {
                    return Ok(target);
                }
                let rest = self.read_siblings(ctx, m, ptr)?;
                intersect(ctx, &rest, &target).map_err(|f| fail_at(ptr, f))?
            }
            None => self.read_siblings(ctx, m, ptr)?,
        };
        match self.unevaluated(ctx, m, ptr)? {
            Some(u) => intersect(ctx, &whole, &u).map_err(|f| fail_at(ptr, f)),
            None => Ok(whole),
        }
    }

    /// The conjunction of an object's keywords; `self.cut` is reset while reading them,
    /// so that [`one_of`](Reader::one_of) sees whether its siblings were cut.
    fn read_siblings(
        &mut self,
        ctx: &mut Ctx,
        m: &Map<String, Value>,
        ptr: &str,
    ) -> Result<ShapeRef, SchemaError> {
        let outer = std::mem::take(&mut self.cut);
        let r = self.conjoin(ctx, m, ptr);
        self.cut |= outer;
        r
    }

    fn conjoin(
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
            let u = union(ctx, &branches, ptr)?;
            acc = intersect(ctx, &acc, &u).map_err(|f| fail_at(ptr, f))?;
        }
        if let Some(v) = m.get("oneOf") {
            acc = self.one_of(ctx, acc, v, ptr)?;
        }
        if let Some(v) = m.get("not") {
            let n = self.complement(ctx, v, &child(ptr, "not"))?;
            acc = intersect(ctx, &acc, &n).map_err(|f| fail_at(ptr, f))?;
        }
        let has_branch = m.contains_key("then") || m.contains_key("else");
        let conditionals = ctx.draft >= Draft::Draft7;
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
            .filter(|m| !(self.legacy() && m.contains_key("$ref")));
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

    /// The branches of `anyOf` or `oneOf`.
    fn branches(
        &mut self,
        ctx: &mut Ctx,
        v: &Value,
        ptr: &str,
        key: &str,
    ) -> Result<Vec<ShapeRef>, SchemaError> {
        let at = child(ptr, key);
        let list = self.list(v, ptr, key)?;
        list.iter()
            .enumerate()
            .map(|(i, sub)| self.read(ctx, sub, &child(&at, &i.to_string())))
            .collect()
    }
}
