//! `unevaluatedProperties` (draft 2019-09 and later) where the keys evaluated beside
//! it are known without an instance.
//!
//! The keyword applies to the members no adjacent keyword evaluated: none of the
//! `properties` names, `patternProperties` patterns or `additionalProperties` of the
//! schema itself or of the subschemas applied in place with it and holding. Through
//! `allOf` and `$ref` every subschema must hold for the whole to hold, so the evaluated
//! keys are the union of what those subschemas declare, followed transitively, and the
//! keyword is `additionalProperties` over that union: an object part whose declared
//! keys and patterns admit any value and whose other keys take the keyword's schema,
//! met with the rest of the schema. `not` evaluates nothing. An in-place
//! `additionalProperties` or `unevaluatedProperties` evaluates every key, leaving the
//! keyword nothing. Under `anyOf`, `oneOf`, `if` or `dependentSchemas` the evaluated
//! keys depend on which subschemas hold for the instance: refused, naming the keyword
//! that stopped it. Before draft 2019-09 the keyword does not exist and validators
//! ignore it, as the reader does.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::refs::lookup;
use super::{child, fail_at, Reader};
use crate::context::Ctx;
use crate::error::SchemaError;
use crate::shapes::shape::{KeyRule, Lang, ObjCons, Shape, ShapeRef};

/// In-place keywords whose evaluated keys depend on the instance (`dependencies` is
/// draft-07's `dependentSchemas`, which the reader also reads under later drafts).
const DYNAMIC: [&str; 7] = [
    "anyOf",
    "oneOf",
    "if",
    "dependentSchemas",
    "dependencies",
    "$dynamicRef",
    "$recursiveRef",
];

/// The keys the subschemas applied in place evaluate.
#[derive(Default)]
struct Evaluated {
    /// In the order met (which is schema order), each once.
    names: Vec<String>,
    named: HashSet<String>,
    /// Each pattern with the pointer of its `patternProperties`.
    patterns: Vec<(String, String)>,
    all: bool,
}

impl Reader<'_> {
    /// The shape `unevaluatedProperties` in `m` (at `ptr`) adds to the schema, or None
    /// where it adds nothing (absent, before draft 2019-09, or every key evaluated).
    pub(super) fn unevaluated(
        &mut self,
        ctx: &mut Ctx,
        m: &Map<String, Value>,
        ptr: &str,
    ) -> Result<Option<ShapeRef>, SchemaError> {
        let Some(u) = m.get("unevaluatedProperties").filter(|_| !self.legacy()) else {
            return Ok(None);
        };
        let at = child(ptr, "unevaluatedProperties");
        let mut ev = Evaluated::default();
        let mut seen = HashSet::new();
        self.evaluated(m, ptr, &at, true, &mut ev, &mut seen)?;
        if ev.all {
            return Ok(None);
        }
        let mut patterns = Vec::new();
        for (p, pp) in &ev.patterns {
            let rx = ctx
                .pattern(p)
                .map_err(|why| SchemaError::unsupported("patternProperties", pp, why))?;
            let label = p.clone();
            patterns.push((Lang { rx, label }, ctx.any()));
        }
        let additional = self.read_member(ctx, u, &at)?;
        let mut c = ObjCons::any();
        for name in ev.names {
            c.props.push((name, ctx.any()));
        }
        c.listed = c.props.len();
        c.rules.push(KeyRule {
            patterns,
            additional,
        });
        let s = Shape {
            objects: vec![c],
            ..Shape::any()
        };
        ctx.shape(s).map_err(|f| fail_at(&at, f)).map(Some)
    }

    /// Adds to `ev` the keys `m` (at `ptr`; `top`: the schema of the keyword, not one
    /// applied in place with it) and its in-place subschemas evaluate; `seen`: the
    /// reference targets followed. `at` names the keyword for refusals.
    fn evaluated(
        &self,
        m: &Map<String, Value>,
        ptr: &str,
        at: &str,
        top: bool,
        ev: &mut Evaluated,
        seen: &mut HashSet<String>,
    ) -> Result<(), SchemaError> {
        if let Some(k) = DYNAMIC.iter().find(|k| m.contains_key(**k)) {
            return Err(SchemaError::unsupported(
                "unevaluatedProperties",
                at,
                format!(
                    "the keys evaluated under `{k}` at {ptr} depend on which subschemas \
                     hold; only `properties`, `patternProperties`, `additionalProperties`, \
                     `allOf` and `$ref` are followed"
                ),
            ));
        }
        if m.contains_key("additionalProperties")
            || (!top && m.contains_key("unevaluatedProperties"))
        {
            ev.all = true;
            return Ok(());
        }
        if let Some(Value::Object(props)) = m.get("properties") {
            for k in props.keys() {
                if ev.named.insert(k.clone()) {
                    ev.names.push(k.clone());
                }
            }
        }
        if let Some(Value::Object(pp)) = m.get("patternProperties") {
            let pp_at = child(ptr, "patternProperties");
            for p in pp.keys() {
                if !ev.patterns.iter().any(|(q, _)| q == p) {
                    ev.patterns.push((p.clone(), pp_at.clone()));
                }
            }
        }
        if let Some(Value::Array(subs)) = m.get("allOf") {
            for (i, sub) in subs.iter().enumerate() {
                if let Value::Object(s) = sub {
                    let p = child(&child(ptr, "allOf"), &i.to_string());
                    self.evaluated(s, &p, at, false, ev, seen)?;
                }
            }
        }
        if let Some(Value::String(r)) = m.get("$ref") {
            let target = self.resources.target(r, &child(ptr, "$ref"));
            let value = target.as_deref().and_then(|t| lookup(self.root, t));
            let (Some(target), Some(value)) = (target, value) else {
                return Ok(()); // reading the `$ref` itself refuses it, naming why
            };
            if seen.insert(target.clone()) {
                if let Value::Object(s) = value {
                    self.evaluated(s, &target, at, false, ev, seen)?;
                }
            }
        }
        Ok(())
    }
}
