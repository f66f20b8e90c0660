//! A schema object's own keywords: `type`, the per-type assertions, `enum`, `const`.
//!
//! Contract: [`own`] returns the shape of the instances that satisfy every keyword of
//! the object except the applicators the reader handles (`$ref`, `allOf`, `anyOf`,
//! `oneOf`, `not`, `if`). Each type's assertions form one alternative of that type
//! (`type` removes the other types); `enum` and `const` are shapes of their values
//! ([`values_shape`]) intersected with the rest. Keywords whose assertions the compiler
//! does not implement ([`REFUSED`]) are refused; unknown keywords are annotations and
//! are ignored, as the specification says.
//!
//! Object keywords are folded so the invariants of [`ObjCons`] hold: a declared key's
//! value is the `properties` entry met with every `patternProperties` schema whose
//! pattern matches the key; a `required` key not in `properties` is declared after
//! them with the value the key rules give it.

use rustc_hash::FxHashSet as HashSet;

use serde_json::{Map, Value};

use crate::context::Ctx;
use crate::dialect::{Draft, Escapes, Formats};
use crate::error::SchemaError;
use crate::languages::decimal::Decimal;
use crate::languages::formats;
use crate::languages::numbers::Bound;
use crate::reading::{child, fail_at, Reader};
use crate::shapes::merge::{intersect, min_max, rule_value};
use crate::shapes::shape::{
    ArrCons, Contains, KeyRule, Lang, NumCons, ObjCons, Shape, ShapeRef, Site, StrCons,
};

/// Assertions not implemented (from draft 2019-09, which defines them; earlier drafts'
/// validators ignore them). `unevaluatedProperties` is read beside the applicators,
/// which evaluate keys too ([`crate::reading`]).
const REFUSED: [&str; 1] = ["unevaluatedItems"];

type Res<T> = Result<T, SchemaError>;

/// Which types `type` allows: null, boolean, integer, number, string, array, object.
#[derive(Default)]
struct Types([bool; 7]);

const NAMES: [&str; 7] = [
    "null", "boolean", "integer", "number", "string", "array", "object",
];

/// `draft3`: the document is draft-03, whose `type` may also say `any`, or list schemas
/// beside type names (union types, refused).
fn types(v: Option<&Value>, ptr: &str, draft3: bool) -> Res<Types> {
    let at = child(ptr, "type");
    let bad = || SchemaError::invalid(&at, "must be a type name or a list of them");
    let list: Vec<&Value> = match v {
        None => return Ok(Types([true; 7])),
        Some(Value::Array(a)) => a.iter().collect(),
        Some(x) => vec![x],
    };
    let mut t = Types::default();
    for name in list {
        match name.as_str() {
            Some("any") if draft3 => t.0 = [true; 7],
            Some(n) => t.0[NAMES.iter().position(|x| *x == n).ok_or_else(bad)?] = true,
            None if draft3 && (name.is_object() || name.is_boolean()) => {
                return Err(SchemaError::unsupported(
                    "type",
                    &at,
                    "draft-03 union types (a schema in the list) are not implemented",
                ))
            }
            None => return Err(bad()),
        }
    }
    Ok(t)
}

/// The shape of one schema object's own keywords.
pub fn own(r: &mut Reader, ctx: &mut Ctx, m: &Map<String, Value>, ptr: &str) -> Res<ShapeRef> {
    let since_2019 = ctx.draft >= Draft::Draft2019;
    if let Some(k) = REFUSED.iter().find(|k| since_2019 && m.contains_key(**k)) {
        return Err(SchemaError::unsupported(
            k,
            ptr,
            "this assertion is not implemented",
        ));
    }
    let Types(t) = types(m.get("type"), ptr, ctx.draft == Draft::Draft3)?;
    let mut s = Shape::never();
    s.null = t[0];
    s.bools = [t[1], t[1]];
    if t[2] || t[3] {
        let boolean_exclusive = ctx.draft <= Draft::Draft4;
        s.numbers = vec![number(m, ptr, t[2] && !t[3], boolean_exclusive)?];
    }
    if t[4] {
        let assert = ctx.dialect.formats == Formats::Assert;
        let draft = assert.then_some(ctx.draft);
        s.strings = vec![string(ctx, m, ptr, draft)?];
    }
    if t[5] {
        s.arrays = vec![array(r, ctx, m, ptr)?];
    }
    if t[6] {
        s.objects = vec![object(r, ctx, m, ptr)?];
    }
    let mut shape = ctx.shape(s).map_err(|f| fail_at(ptr, f))?;
    let since_draft6 = ctx.draft >= Draft::Draft6;
    if let Some(v) = m.get("const").filter(|_| since_draft6) {
        ctx.writable(std::slice::from_ref(v), "const", ptr)?;
        let c = values_shape(ctx, std::slice::from_ref(v), ptr)?;
        shape = intersect(ctx, &shape, &c).map_err(|f| fail_at(ptr, f))?;
    }
    if let Some(v) = m.get("enum") {
        let list = v
            .as_array()
            .ok_or_else(|| SchemaError::invalid(&child(ptr, "enum"), "must be an array"))?;
        ctx.writable(list, "enum", ptr)?;
        let e = values_shape(ctx, list, ptr)?;
        shape = intersect(ctx, &shape, &e).map_err(|f| fail_at(ptr, f))?;
    }
    crate::reading::dependencies::apply(r, ctx, m, ptr, shape)
}

fn decimal(v: &Value, ptr: &str) -> Res<Decimal> {
    match v {
        Value::Number(n) => Decimal::parse(&n.to_string()).ok_or_else(|| {
            SchemaError::unsupported("number", ptr, format!("{n} has too large an exponent"))
        }),
        _ => Err(SchemaError::invalid(ptr, "must be a number")),
    }
}

/// A non-negative integer keyword (`2.0` counts as `2`).
fn count(m: &Map<String, Value>, key: &str, ptr: &str) -> Res<Option<u64>> {
    let Some(v) = m.get(key) else { return Ok(None) };
    let p = child(ptr, key);
    let d = decimal(v, &p)?;
    if d.is_negative() || !d.is_integer() {
        return Err(SchemaError::invalid(&p, "must be a non-negative integer"));
    }
    d.to_u64()
        .map(Some)
        .ok_or_else(|| SchemaError::unsupported(key, &p, "the count does not fit in 64 bits"))
}

/// The number assertions of `m`. `boolean_exclusive`: the document is draft-03 or -04,
/// where `exclusiveMinimum`/`exclusiveMaximum` are booleans saying whether `minimum`/
/// `maximum` is exclusive (as those drafts' validators read them). Under later drafts
/// they are bounds of their own, and a boolean there is refused rather than guessed at:
/// Python's `jsonschema` reads `true` as the bound 1.
fn number(
    m: &Map<String, Value>,
    ptr: &str,
    integer: bool,
    boolean_exclusive: bool,
) -> Res<NumCons> {
    let mut c = NumCons {
        integer,
        ..NumCons::default()
    };
    for (key, exclusive, low) in [
        ("minimum", false, true),
        ("exclusiveMinimum", true, true),
        ("maximum", false, false),
        ("exclusiveMaximum", true, false),
    ] {
        let Some(v) = m.get(key) else { continue };
        let at = child(ptr, key);
        let exclusive = match v {
            Value::Bool(_) if exclusive && boolean_exclusive => continue,
            Value::Bool(_) if exclusive => {
                return Err(SchemaError::unsupported(
                    key,
                    &at,
                    "a boolean is the draft-04 form, which is read only where `$schema` names \
                     draft-03 or draft-04",
                ))
            }
            _ if boolean_exclusive => {
                let flag = if low {
                    "exclusiveMinimum"
                } else {
                    "exclusiveMaximum"
                };
                exclusive || m.get(flag).and_then(Value::as_bool).unwrap_or(false)
            }
            _ => exclusive,
        };
        let b = (decimal(v, &at)?, exclusive);
        let side = if low { &mut c.lo } else { &mut c.hi };
        *side = Some(tighter(side.take(), b, low));
    }
    if let Some(v) = m.get("multipleOf") {
        let d = decimal(v, &child(ptr, "multipleOf"))?;
        if d.is_negative() || d.is_zero() {
            return Err(SchemaError::invalid(
                &child(ptr, "multipleOf"),
                "must be positive",
            ));
        }
        c.multiples.push(d);
    }
    Ok(c)
}

/// The tighter of two bounds on one side (`low`: lower bounds).
fn tighter(old: Option<Bound>, new: Bound, low: bool) -> Bound {
    match old {
        None => new,
        Some(o) if o.0 == new.0 => (o.0, o.1 || new.1),
        Some(o) if (new.0 > o.0) == low => new,
        Some(o) => o,
    }
}

/// The string assertions of `m`; `formats`, the draft whose formats are asserted, or
/// `None` where formats are annotations.
fn string(
    ctx: &mut Ctx,
    m: &Map<String, Value>,
    ptr: &str,
    formats: Option<Draft>,
) -> Res<StrCons> {
    let mut c = StrCons {
        min: count(m, "minLength", ptr)?.unwrap_or(0),
        max: count(m, "maxLength", ptr)?,
        ..StrCons::default()
    };
    if let Some(p) = m.get("pattern") {
        let at = child(ptr, "pattern");
        let p = p
            .as_str()
            .ok_or_else(|| SchemaError::invalid(&at, "must be a string"))?;
        let rx = ctx
            .pattern(p)
            .map_err(|why| SchemaError::unsupported("pattern", &at, why))?;
        c.langs.push(Lang {
            rx,
            label: p.to_string(),
        });
    }
    let asserted = |f: &&str| formats.is_some_and(|draft| formats::defined_in(f, draft));
    if let Some(f) = m.get("format").and_then(Value::as_str).filter(asserted) {
        match ctx.format(f) {
            formats::Format::Known(rx, max) => {
                c.langs.push(Lang {
                    rx,
                    label: format!("format {f}"),
                });
                c.max = min_max(c.max, max);
            }
            formats::Format::Refused(why) => {
                return Err(SchemaError::unsupported(
                    "format",
                    &child(ptr, "format"),
                    format!("{f}: {why}"),
                ))
            }
            formats::Format::Unknown => {}
        }
    }
    Ok(c)
}

fn array(r: &mut Reader, ctx: &mut Ctx, m: &Map<String, Value>, ptr: &str) -> Res<ArrCons> {
    let mut c = ArrCons::any();
    let prefix_list = match (m.get("prefixItems"), m.get("items")) {
        (Some(p), _) => Some(("prefixItems", p)),
        (None, Some(i @ Value::Array(_))) => Some(("items", i)),
        _ => None,
    };
    if let Some((key, list)) = prefix_list {
        let at = child(ptr, key);
        let list = list
            .as_array()
            .ok_or_else(|| SchemaError::invalid(&at, "must be an array of schemas"))?;
        for (i, sub) in list.iter().enumerate() {
            c.prefix
                .push(r.read_member(ctx, sub, &child(&at, &i.to_string()))?);
        }
        let rest = if key == "items" {
            "additionalItems"
        } else {
            "items"
        };
        if let Some(sub) = m.get(rest) {
            c.items = r.read_member(ctx, sub, &child(ptr, rest))?;
        }
    } else if let Some(sub) = m.get("items") {
        c.items = r.read_member(ctx, sub, &child(ptr, "items"))?;
    }
    c.min = count(m, "minItems", ptr)?.unwrap_or(0);
    c.max = count(m, "maxItems", ptr)?;
    c.unique =
        (m.get("uniqueItems") == Some(&Value::Bool(true))).then(|| Site(child(ptr, "uniqueItems")));
    if let Some(sub) = m.get("contains").filter(|_| ctx.draft >= Draft::Draft6) {
        let at = child(ptr, "contains");
        let counts = |key: &str| count(m, key, ptr);
        let (min, max) = if r.legacy() {
            (1, None) // minContains and maxContains came with 2019-09
        } else {
            (counts("minContains")?.unwrap_or(1), counts("maxContains")?)
        };
        let shape = r.read_member(ctx, sub, &at)?;
        if min > 0 || max.is_some() {
            c.contains.push(Contains { shape, min, max });
        }
    }
    Ok(c)
}

/// The key rule of `patternProperties` and `additionalProperties`.
fn key_rule(r: &mut Reader, ctx: &mut Ctx, m: &Map<String, Value>, ptr: &str) -> Res<KeyRule> {
    let mut patterns = Vec::new();
    if let Some(pp) = m.get("patternProperties") {
        let at = child(ptr, "patternProperties");
        let pp = pp
            .as_object()
            .ok_or_else(|| SchemaError::invalid(&at, "must be an object"))?;
        for (p, sub) in pp {
            let rx = ctx
                .pattern(p)
                .map_err(|why| SchemaError::unsupported("patternProperties", &at, why))?;
            patterns.push((
                Lang {
                    rx,
                    label: p.clone(),
                },
                r.read_member(ctx, sub, &child(&at, p))?,
            ));
        }
    }
    let additional = match m.get("additionalProperties") {
        Some(sub) => r.read_member(ctx, sub, &child(ptr, "additionalProperties"))?,
        None => ctx.any(),
    };
    Ok(KeyRule {
        patterns,
        additional,
    })
}

fn object(r: &mut Reader, ctx: &mut Ctx, m: &Map<String, Value>, ptr: &str) -> Res<ObjCons> {
    let rule = key_rule(r, ctx, m, ptr)?;
    let mut c = ObjCons::any();
    if let Some(props) = m.get("properties") {
        let at = child(ptr, "properties");
        let props = props
            .as_object()
            .ok_or_else(|| SchemaError::invalid(&at, "must be an object"))?;
        for (k, sub) in props {
            let own = r.read_member(ctx, sub, &child(&at, k))?;
            let mut v = own;
            for (lang, s) in &rule.patterns {
                if ctx.matches(&lang.rx, k).map_err(|f| fail_at(&at, f))? {
                    v = intersect(ctx, &v, s).map_err(|f| fail_at(&at, f))?;
                }
            }
            c.props.push((k.clone(), v));
        }
    }
    c.listed = c.props.len();
    if let Some(req) = m.get("required") {
        let at = child(ptr, "required");
        let bad = || SchemaError::invalid(&at, "must be an array of strings");
        for k in req.as_array().ok_or_else(bad)? {
            let k = k.as_str().ok_or_else(bad)?;
            if c.declared(k).is_none() {
                let v = rule_value(ctx, &rule, k).map_err(|f| fail_at(&at, f))?;
                c.props.push((k.to_string(), v));
            }
            if !c.required.iter().any(|x| x == k) {
                c.required.push(k.to_string());
            }
        }
    }
    if !rule.is_any() {
        c.rules.push(rule);
    }
    c.min = count(m, "minProperties", ptr)?.unwrap_or(0);
    c.max = count(m, "maxProperties", ptr)?;
    if let Some(names) = m
        .get("propertyNames")
        .filter(|_| ctx.draft >= Draft::Draft6)
    {
        let at = child(ptr, "propertyNames");
        let s = r.read(ctx, names, &at)?;
        if !s.is_any() {
            let lang =
                crate::shapes::scalars::key_language(ctx, &s).map_err(|f| fail_at(&at, f))?;
            c.names.push(Lang {
                rx: lang,
                label: "propertyNames".into(),
            });
            c.listed_names = listed_strings(&s);
        }
    }
    Ok(c)
}

/// The strings `s` lists, if every string it admits is listed (`enum`, `const`).
fn listed_strings(s: &Shape) -> Option<Vec<String>> {
    let lists: Option<Vec<&Vec<String>>> = s.strings.iter().map(|c| c.values.as_ref()).collect();
    Some(lists?.into_iter().flatten().cloned().collect())
}

/// The shape whose instances are exactly the given values (`enum`, `const`); under
/// [`Escapes::FreeStringsOnly`] its arrays and objects are `compact`, written with no
/// whitespace inside (xgrammar 0.2.8 writes a listed value as one JSON literal).
pub fn values_shape(ctx: &mut Ctx, values: &[Value], ptr: &str) -> Res<ShapeRef> {
    let mut s = Shape::never();
    let mut strings = Vec::new();
    // Numbers already listed, so a long `enum` is deduplicated in linear time.
    let mut numbers = HashSet::default();
    let compact = ctx.dialect.escapes == Escapes::FreeStringsOnly;
    for v in values {
        match v {
            Value::Null => s.null = true,
            Value::Bool(b) => s.bools[*b as usize] = true,
            Value::Number(_) => {
                let d = decimal(v, ptr)?;
                if numbers.insert(d.clone()) {
                    s.numbers.push(NumCons {
                        lo: Some((d.clone(), false)),
                        hi: Some((d, false)),
                        ..NumCons::default()
                    });
                }
            }
            Value::String(x) => strings.push(x.clone()),
            Value::Array(a) => {
                let mut prefix = Vec::new();
                for item in a {
                    prefix.push(values_shape(ctx, std::slice::from_ref(item), ptr)?);
                }
                let n = a.len() as u64;
                s.arrays.push(ArrCons {
                    prefix,
                    items: ctx.never(),
                    min: n,
                    max: Some(n),
                    contains: vec![],
                    unique: None,
                    compact,
                });
            }
            Value::Object(o) => {
                let mut c = ObjCons::any();
                for (k, item) in o {
                    c.props.push((
                        k.clone(),
                        values_shape(ctx, std::slice::from_ref(item), ptr)?,
                    ));
                    c.required.push(k.clone());
                }
                c.listed = c.props.len();
                c.compact = compact;
                c.rules.push(KeyRule {
                    patterns: vec![],
                    additional: ctx.never(),
                });
                s.objects.push(c);
            }
        }
    }
    if !strings.is_empty() {
        strings.dedup();
        s.strings.push(StrCons {
            values: Some(strings),
            ..StrCons::default()
        });
    }
    ctx.shape(s).map_err(|f| fail_at(ptr, f))
}
