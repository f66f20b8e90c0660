//! `$ref`: expanding a reference's target ([`super::uris`] finds it) within the
//! recursion bound.
//!
//! In the grammar mode ([`Ctx::ref_rules`]) a target reached again inside its own
//! expansion is not expanded: it is a rule of the grammar being written
//! ([`Shape::rule`]), whose right-hand side is the target's shape as the outer expansion
//! reads it, so the recursion has no bound. Otherwise:
//!
//! A target is expanded where it is used, at most [`Dialect::max_recursion`] times
//! inside itself. At the bound the expansion is cut: it admits nothing, or everything
//! while over-approximating ([`Reader::over`]). Under `not` or an `if` a cut is an
//! error. A cut fewer than `max_recursion` member levels (properties, items) below
//! the start of its cycle is *shallow*: its cycle carries no structure, so the values
//! it drops or adds are not all deeper than the bound. Expansions that touched no
//! cycle reaching outside themselves are cached per target and per reading, with
//! their cuts.
//!
//! [`Dialect::max_recursion`]: crate::dialect::Dialect::max_recursion

use std::collections::HashMap;
use std::ops::BitOrAssign;

use serde_json::Value;

use super::Reader;
use crate::context::Ctx;
use crate::emitting::rules::FIRST_REF_RULE;
use crate::error::SchemaError;
use crate::shapes::shape::{Shape, ShapeRef};

/// What recursion bounds did to an expansion.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
pub struct Cuts {
    /// Some reference was cut at the bound.
    pub any: bool,
    /// Some cut was shallow.
    pub shallow: bool,
}

impl BitOrAssign for Cuts {
    fn bitor_assign(&mut self, o: Cuts) {
        self.any |= o.any;
        self.shallow |= o.shallow;
    }
}

/// Expanded targets, with their cuts.
pub type Cache = HashMap<String, (ShapeRef, Cuts)>;

impl Reader<'_> {
    fn cache(&mut self) -> &mut Cache {
        if self.over {
            &mut self.over_cache
        } else {
            &mut self.cache
        }
    }

    /// The shape `$ref` `r` (at `ptr`) names.
    pub(super) fn reference(
        &mut self,
        ctx: &mut Ctx,
        r: &Value,
        ptr: &str,
    ) -> Result<ShapeRef, SchemaError> {
        let r = r
            .as_str()
            .ok_or_else(|| SchemaError::invalid(ptr, "$ref must be a string"))?;
        let target = self.resources.target(r, ptr).ok_or_else(|| {
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
                "a recursive $ref under `not` or `if` would need unbounded depth",
            )
        };
        let bound = ctx.dialect.max_recursion as usize;
        if let Some(first) = self.stack.iter().position(|t| t.0 == target) {
            self.cycle_floor = self.cycle_floor.min(first);
            if ctx.ref_rules {
                return self.ref_rule(ctx, target, ptr);
            }
            let times = self.stack.iter().filter(|t| t.0 == target).count();
            if times > bound {
                if self.negations > 0 {
                    return Err(cut_error());
                }
                self.cut.any = true;
                self.cut.shallow |= self.members < self.stack[first].1 + bound;
                return Ok(if self.over { ctx.any() } else { ctx.never() });
            }
        } else if let Some((hit, cut)) = self.cache().get(&target).cloned() {
            if cut.any && self.negations > 0 {
                return Err(cut_error());
            }
            self.cut |= cut;
            return Ok(hit);
        }
        let pos = self.stack.len();
        self.stack.push((target.clone(), self.members));
        let saved = (
            std::mem::replace(&mut self.cycle_floor, usize::MAX),
            std::mem::take(&mut self.cut),
        );
        let r = self.read(ctx, value, &target);
        self.stack.pop();
        let (floor, cut) = (self.cycle_floor, self.cut);
        self.cycle_floor = saved.0.min(floor);
        self.cut = saved.1;
        self.cut |= cut;
        let shape = r?;
        if let Some(&n) = self.ref_rules.get(&target) {
            self.rule_bodies.entry(n).or_insert_with(|| shape.clone());
        }
        if floor >= pos {
            self.cache().insert(target, (shape.clone(), cut));
        }
        Ok(shape)
    }
}

impl Reader<'_> {
    /// The grammar rule standing for `target`'s values (numbered on first use, from
    /// [`FIRST_REF_RULE`]). Under `not` or an `if`, or while over-approximating a
    /// `oneOf`, a rule would meet the algebra, which does not take one: refused, so the
    /// schema is read again with recursion expanded.
    fn ref_rule(
        &mut self,
        ctx: &mut Ctx,
        target: String,
        ptr: &str,
    ) -> Result<ShapeRef, SchemaError> {
        if self.negations > 0 || self.over {
            self.rule_refused = true;
            let f = ctx.refuse_rules("a complement (`not`, `if`, `oneOf`)");
            return Err(super::fail_at(ptr, f));
        }
        let next = FIRST_REF_RULE + self.ref_rules.len() as u32;
        let n = *self.ref_rules.entry(target).or_insert(next);
        ctx.shape(Shape::rule(n))
            .map_err(|f| super::fail_at(ptr, f))
    }
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
