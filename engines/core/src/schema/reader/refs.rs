//! `$ref`: finding a reference's target, and expanding it within the recursion bound.
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
//! [`Dialect::max_recursion`]: super::super::dialect::Dialect::max_recursion

use std::collections::HashMap;
use std::ops::BitOrAssign;

use serde_json::Value;

use super::super::context::Ctx;
use super::super::error::SchemaError;
use super::super::shape::ShapeRef;
use super::{child, Reader};

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
                "a recursive $ref under `not` or `if` would need unbounded depth",
            )
        };
        let bound = ctx.dialect.max_recursion as usize;
        if let Some(first) = self.stack.iter().position(|t| t.0 == target) {
            self.cycle_floor = self.cycle_floor.min(first);
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
        if floor >= pos {
            self.cache().insert(target, (shape.clone(), cut));
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

pub(super) fn collect_anchors(v: &Value, ptr: &str, out: &mut HashMap<String, String>) {
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
