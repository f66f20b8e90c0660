//! Conditional object keywords: `dependentRequired`, `dependentSchemas`, and the
//! `dependencies` of drafts 3 to 7 (an array of keys, a schema, or in draft 3 one key).
//!
//! Contract: [`apply`] intersects a schema's shape with each dependency "if the object
//! has key `t`, it also satisfies `then`". Exactly: non-objects are untouched, and the
//! objects become two alternatives, those without `t` (`t` declared with the never
//! shape: absent, and excluded from the undeclared keys) and those with `t` (required)
//! meeting `then`. A required dependency list is `then` = "these keys are required".
//! Each dependency doubles the object alternatives at most; [`crate::shapes::merge`] drops the
//! plainly empty ones (a trigger the object already requires has no "absent" branch)
//! and stops at its alternatives limit.
//!
//! Which keywords apply follows the draft, as `jsonschema` does: draft-07 rules read
//! `dependencies` only; 2019-09 and 2020-12 rules read `dependentRequired` and
//! `dependentSchemas`, and also `dependencies`, as the JSON-Schema-Test-Suite's
//! optional `dependencies-compatibility` tests for those drafts expect (the harness's
//! instance judge applies it there too).
//!
//! Key order (the dialect's schema order, see [`crate::shapes::shape::ObjCons::listed`]): a
//! present trigger that no `properties` lists is a required key of its branch, placed
//! after the listed keys and the object's own required-only keys, then the keys the
//! dependency requires; `harness/corpora/schema_order.py` orders instances the same way.

use serde_json::{Map, Value};

use crate::context::{Ctx, Step};
use crate::dialect::Draft;
use crate::error::SchemaError;
use crate::reading::{child, fail_at, Reader};
use crate::shapes::merge::intersect;
use crate::shapes::shape::{ObjCons, Shape, ShapeRef};

type Res<T> = Result<T, SchemaError>;

/// `shape` (a schema object's own shape) meeting every dependency `m` declares.
pub fn apply(
    r: &mut Reader,
    ctx: &mut Ctx,
    m: &Map<String, Value>,
    ptr: &str,
    mut shape: ShapeRef,
) -> Res<ShapeRef> {
    let keywords: &[&str] = if r.legacy() {
        &["dependencies"]
    } else {
        &["dependencies", "dependentRequired", "dependentSchemas"]
    };
    for &keyword in keywords {
        let Some(v) = m.get(keyword) else { continue };
        let at = child(ptr, keyword);
        let deps = v
            .as_object()
            .ok_or_else(|| SchemaError::invalid(&at, "must be an object"))?;
        for (trigger, dep) in deps {
            let dp = child(&at, trigger);
            let then = match (keyword, dep) {
                ("dependentRequired" | "dependencies", Value::Array(keys)) => {
                    required(ctx, keys, &dp)?
                }
                ("dependencies", Value::String(_)) if ctx.draft == Draft::Draft3 => {
                    required(ctx, std::slice::from_ref(dep), &dp)?
                }
                ("dependentSchemas" | "dependencies", Value::Object(_) | Value::Bool(_)) => {
                    r.read(ctx, dep, &dp)?
                }
                _ => return Err(SchemaError::invalid(&dp, "must be a schema or a key list")),
            };
            if then.is_any() {
                continue;
            }
            let d = dependency(ctx, trigger, &then).map_err(|f| fail_at(&dp, f))?;
            shape = intersect(ctx, &shape, &d).map_err(|f| fail_at(&dp, f))?;
        }
    }
    Ok(shape)
}

/// The objects that have every key of `keys` (other values unconstrained).
fn required(ctx: &mut Ctx, keys: &[Value], ptr: &str) -> Res<ShapeRef> {
    let mut o = ObjCons::any();
    for k in keys {
        let k = k
            .as_str()
            .ok_or_else(|| SchemaError::invalid(ptr, "must be an array of strings"))?;
        if !o.required.iter().any(|x| x == k) {
            o.props.push((k.to_string(), ctx.any()));
            o.required.push(k.to_string());
        }
    }
    if o.required.is_empty() {
        return Ok(ctx.any());
    }
    let mut s = Shape::any();
    s.objects = vec![o];
    ctx.shape(s).map_err(|f| fail_at(ptr, f))
}

/// Every value but the objects that have `trigger` and fail `then`.
fn dependency(ctx: &mut Ctx, trigger: &str, then: &ShapeRef) -> Step<ShapeRef> {
    let mut absent = ObjCons::any();
    absent.props.push((trigger.to_string(), ctx.never()));
    let mut present = ObjCons::any();
    present.props.push((trigger.to_string(), ctx.any()));
    present.required.push(trigger.to_string());
    let mut with = Shape::never();
    with.objects = vec![present];
    let with = ctx.shape(with)?;
    let met = intersect(ctx, &with, then)?;
    let mut s = Shape::any();
    s.objects = vec![absent];
    s.objects.extend(met.objects.iter().cloned());
    ctx.shape(s)
}

#[cfg(test)]
mod tests {
    use crate::dialect::{Dialect, Draft};
    use crate::testing::matcher;
    use crate::{compile, SchemaError};

    fn lang(schema: &str, draft: Draft) -> impl Fn(&str) -> bool {
        let d = Dialect {
            draft,
            ..Dialect::default()
        };
        matcher(&compile(schema, &d).unwrap())
    }

    #[test]
    fn a_present_trigger_requires_its_dependents() {
        let schema = r#"{"properties":{"a":{},"b":{},"c":{}},
            "dependentRequired":{"a":["b"],"c":["a","b"]}}"#;
        let m = lang(schema, Draft::Draft2020);
        for ok in [
            "{}",
            r#"{"b":1}"#,
            r#"{"a":1,"b":2}"#,
            r#"{"a":1,"b":2,"c":3}"#,
        ] {
            assert!(m(ok), "{ok}");
        }
        for bad in [
            r#"{"a":1}"#,
            r#"{"a":1,"c":3}"#,
            r#"{"b":1,"c":3}"#,
            r#"{"c":3}"#,
        ] {
            assert!(!m(bad), "{bad}");
        }
        assert!(
            m("1") && m(r#""x""#) && m("[1]"),
            "non-objects are untouched"
        );
    }

    #[test]
    fn a_present_trigger_meets_its_schema() {
        let schema = r#"{"properties":{"kind":{"type":"string"},"n":{"type":"integer"}},
            "dependentSchemas":{"n":{"properties":{"kind":{"const":"count"}},"required":["kind"]}}}"#;
        let m = lang(schema, Draft::Draft2020);
        assert!(m(r#"{"kind":"count","n":3}"#));
        assert!(m(r#"{"kind":"other"}"#));
        assert!(!m(r#"{"kind":"other","n":3}"#));
        assert!(!m(r#"{"n":3}"#));
        // an undeclared trigger is excluded from the undeclared keys when absent, and
        // placed after the listed keys when present
        let schema = r#"{"properties":{"a":{}},"dependencies":{"z":["a"]}}"#;
        let m = lang(schema, Draft::Draft7);
        assert!(m(r#"{"a":1,"z":2}"#) && m(r#"{"a":1,"y":2}"#) && m(r#"{"y":2}"#));
        assert!(!m(r#"{"z":2}"#) && !m(r#"{"y":2,"z":3}"#));
    }

    #[test]
    fn boolean_dependencies_forbid_or_allow_the_trigger() {
        let schema = r#"{"dependentSchemas":{"a":true,"b":false}}"#;
        let m = lang(schema, Draft::Draft2020);
        assert!(m(r#"{"a":1}"#) && m(r#"{"c":1}"#));
        assert!(!m(r#"{"b":1}"#) && !m(r#"{"a":1,"b":2}"#));
    }

    #[test]
    fn keywords_follow_the_draft() {
        let split = r#"{"dependentRequired":{"a":["b"]}}"#;
        assert!(
            lang(split, Draft::Draft7)(r#"{"a":1}"#),
            "not a draft-07 keyword"
        );
        assert!(!lang(split, Draft::Draft2020)(r#"{"a":1}"#));
        let old = r#"{"dependencies":{"a":["b"]}}"#;
        assert!(!lang(old, Draft::Draft7)(r#"{"a":1}"#));
        assert!(
            !lang(old, Draft::Draft2020)(r#"{"a":1}"#),
            "the compatibility reading"
        );
        let draft3 = r#"{"$schema":"http://json-schema.org/draft-03/schema#",
            "dependencies":{"a":"b"}}"#;
        assert!(!lang(draft3, Draft::Draft7)(r#"{"a":1}"#));
        assert!(lang(draft3, Draft::Draft7)(r#"{"a":1,"b":2}"#));
        let bad = r#"{"dependencies":{"a":"b"}}"#;
        let e = compile(bad, &Dialect::default()).unwrap_err();
        assert!(matches!(e, SchemaError::InvalidSchema { .. }), "{e:?}");
    }
}
