//! `not`: the complement of a shape, where it is a shape again.
//!
//! Contract: [`negate`] returns exactly the values the input rejects, or refuses. Per
//! type, a type the shape admits wholly becomes absent and an absent type becomes
//! whole. Numbers and strings are always complemented: each alternative's complement
//! is the union of its conjuncts' complements (for numbers: fractions for `integer`,
//! the values below or above a bound, the non-multiples of a `multipleOf`, the holes'
//! values; for strings: outside a pattern or format, inside an excluded language, a
//! length outside the bounds, not among the values, a hole), and several
//! alternatives' complements meet. Arrays are complemented alternative by
//! alternative, the complements met, for length bounds, prefix items, `items` without a prefix (some item outside it:
//! `contains` the complement) and one plain `contains`; objects for `properties`,
//! `required`, property counts, key rules and `propertyNames` (missing a required key,
//! a declared key whose value is in the complement of its schema, too few or too many
//! keys, a key outside a name language, or an undeclared key whose value its rule
//! rejects: [`ObjCons::some`]; several alternatives meet). Anything else is refused as
//! `not`.

use std::rc::Rc;

use crate::context::{Ctx, Fail, Step, MAX_ALTERNATIVES};
use crate::shapes::keyspace::{key_regions, lang_of, too_large, undeclared};
use crate::shapes::merge::{intersect, meet_num, meet_str};
use crate::shapes::shape::{
    ArrCons, Contains, KeyRule, NumCons, ObjCons, Shape, ShapeRef, StrCons, Witness,
};

/// The objects with some undeclared key in `lang` whose value is in `value`.
fn witness(w: Witness) -> ObjCons {
    ObjCons {
        some: vec![w],
        ..ObjCons::any()
    }
}

fn refuse(what: &str) -> Fail {
    Fail::unsupported(
        "not",
        format!("the complement of {what} is not implemented"),
    )
}

/// The values `s` rejects.
pub fn negate(ctx: &mut Ctx, s: &ShapeRef) -> Step<ShapeRef> {
    if s.is_any() {
        return Ok(ctx.never());
    }
    if let Some((_, c)) = ctx.complements.get(&Rc::as_ptr(s)) {
        return Ok(c.clone());
    }
    if !s.rules.is_empty() {
        return Err(ctx.refuse_rules("a complement (`not`, `if`, `oneOf`)"));
    }
    let out = Shape {
        top: false,
        null: !s.null,
        bools: [!s.bools[0], !s.bools[1]],
        numbers: numbers(&s.numbers)?,
        strings: strings(&s.strings)?,
        arrays: arrays(ctx, &s.arrays)?,
        objects: objects(ctx, &s.objects)?,
        rules: Vec::new(),
    };
    let c = ctx.shape(out)?;
    ctx.complements
        .insert(Rc::as_ptr(s), (s.clone(), c.clone()));
    Ok(c)
}

fn whole_or_none<T>(
    alts: &[T],
    is_any: fn(&T) -> bool,
    any: fn() -> T,
    what: &str,
) -> Step<Vec<T>> {
    if alts.is_empty() {
        Ok(vec![any()])
    } else if alts.iter().any(is_any) {
        Ok(vec![])
    } else {
        Err(refuse(what))
    }
}

/// The count ranges (`min`, `max`) outside `min..=max`: below it, above it.
fn counts_outside(min: u64, max: Option<u64>) -> Vec<(u64, Option<u64>)> {
    let below = (min > 0).then(|| (0, Some(min - 1)));
    let above = max.map(|m| (m + 1, None));
    below.into_iter().chain(above).collect()
}

/// The numbers no alternative admits.
fn numbers(alts: &[NumCons]) -> Step<Vec<NumCons>> {
    none_of(alts, number_complement, meet_num, "number")
}

/// The values of one type no alternative admits: the complements of the alternatives
/// (`one`), met pairwise (`meet`, which drops the plainly empty); `what` names the
/// type in the limit's message.
fn none_of<T: Clone + PartialEq + Default>(
    alts: &[T],
    one: fn(&T) -> Vec<T>,
    meet: fn(&T, &T) -> Option<T>,
    what: &str,
) -> Step<Vec<T>> {
    let mut acc = vec![T::default()];
    for alt in alts {
        let mut next: Vec<T> = Vec::new();
        for x in &acc {
            for y in one(alt) {
                if let Some(m) = meet(x, &y) {
                    if !next.contains(&m) {
                        next.push(m);
                    }
                }
            }
        }
        if next.len() > MAX_ALTERNATIVES {
            return Err(Fail::Limit(format!(
                "the complement of {} {what} alternatives",
                alts.len()
            )));
        }
        acc = next;
    }
    Ok(acc)
}

/// The numbers one alternative rejects, by De Morgan: those failing any one of its
/// conjuncts (a fraction where it wants an integer, a value past a bound, not a
/// multiple where it wants one, a multiple where it wants none, or one of its holes).
fn number_complement(c: &NumCons) -> Vec<NumCons> {
    let any = NumCons::default;
    let mut out = Vec::new();
    if c.integer {
        out.push(NumCons {
            non_integer: true,
            ..any()
        });
    }
    if c.non_integer {
        out.push(NumCons {
            integer: true,
            ..any()
        });
    }
    if let Some((d, e)) = &c.lo {
        out.push(NumCons {
            hi: Some((d.clone(), !e)),
            ..any()
        });
    }
    if let Some((d, e)) = &c.hi {
        out.push(NumCons {
            lo: Some((d.clone(), !e)),
            ..any()
        });
    }
    for m in &c.multiples {
        out.push(NumCons {
            not_multiples: vec![m.clone()],
            ..any()
        });
    }
    for m in &c.not_multiples {
        out.push(NumCons {
            multiples: vec![m.clone()],
            ..any()
        });
    }
    for h in &c.holes {
        out.push(NumCons {
            lo: Some((h.clone(), false)),
            hi: Some((h.clone(), false)),
            ..any()
        });
    }
    out
}

/// The strings no alternative admits.
fn strings(alts: &[StrCons]) -> Step<Vec<StrCons>> {
    none_of(alts, string_complement, meet_str, "string")
}

/// The strings one alternative rejects, by De Morgan: outside one of its languages,
/// inside one it excludes, of a length outside its bounds, not among its values, or
/// one of its holes.
fn string_complement(c: &StrCons) -> Vec<StrCons> {
    let any = StrCons::default;
    let mut out = Vec::new();
    for l in &c.langs {
        out.push(StrCons {
            not_langs: vec![l.clone()],
            ..any()
        });
    }
    for l in &c.not_langs {
        out.push(StrCons {
            langs: vec![l.clone()],
            ..any()
        });
    }
    for (min, max) in counts_outside(c.min, c.max) {
        out.push(StrCons { min, max, ..any() });
    }
    if let Some(values) = &c.values {
        out.push(StrCons {
            holes: values.clone(),
            ..any()
        });
    }
    if !c.holes.is_empty() {
        out.push(StrCons {
            values: Some(c.holes.clone()),
            ..any()
        });
    }
    out
}

/// Arrays: the complement of a union is the meet of the alternatives' complements.
fn arrays(ctx: &mut Ctx, alts: &[ArrCons]) -> Step<Vec<ArrCons>> {
    if alts.is_empty() || alts.iter().any(ArrCons::is_any) {
        return whole_or_none(alts, ArrCons::is_any, ArrCons::any, "an array constraint");
    }
    let wrap = |arrays| Shape {
        arrays,
        ..Shape::never()
    };
    met(ctx, alts, complement_array, wrap, |s| s.arrays.clone())
}

/// The meet of the alternatives' complements (`one`) for a compound type, met as
/// shapes (`wrap` puts a list of that type's alternatives in one, `take` reads it
/// back), since meeting arrays or objects meets their nested values too.
fn met<T>(
    ctx: &mut Ctx,
    alts: &[T],
    one: fn(&mut Ctx, &T) -> Step<Vec<T>>,
    wrap: impl Fn(Vec<T>) -> Shape,
    take: impl Fn(&Shape) -> Vec<T>,
) -> Step<Vec<T>> {
    let mut acc: Option<ShapeRef> = None;
    for a in alts {
        let s = one(ctx, a)?;
        let s = ctx.shape(wrap(s))?;
        acc = Some(match acc {
            Some(x) => intersect(ctx, &x, &s)?,
            None => s,
        });
    }
    Ok(acc.map(|s| take(&s)).unwrap_or_default())
}

/// Arrays of a length outside the bounds, with a prefix item outside its schema, with
/// an item past the prefix outside `items` (where there is no prefix: `contains` the
/// complement), or with no item meeting a `contains` (every item outside it).
/// Uniqueness, `contains` counts past one and `items` beside a prefix are refused.
fn complement_array(ctx: &mut Ctx, a: &ArrCons) -> Step<Vec<ArrCons>> {
    let k = a.prefix.len() as u64;
    let closed = a.items.is_never();
    let max = if closed {
        Some(a.max.map_or(k, |m| m.min(k)))
    } else {
        a.max
    };
    if a.unique.is_some() || a.contains.iter().any(|c| c.min != 1 || c.max.is_some()) {
        return Err(refuse("uniqueItems or a contains count"));
    }
    if k > 0 && !closed && !a.items.is_any() {
        return Err(refuse("items beside prefixItems"));
    }
    let mut out = Vec::new();
    for (min, max) in counts_outside(a.min, max) {
        out.push(ArrCons {
            min,
            max,
            ..ArrCons::any()
        });
    }
    for (i, p) in a.prefix.iter().enumerate() {
        let not_p = negate(ctx, p)?;
        if !not_p.is_never() {
            let mut prefix = vec![ctx.any(); i];
            prefix.push(not_p);
            out.push(ArrCons {
                prefix,
                min: i as u64 + 1,
                ..ArrCons::any()
            });
        }
    }
    if k == 0 && !a.items.is_any() && !closed {
        let shape = negate(ctx, &a.items)?;
        if !shape.is_never() {
            out.push(ArrCons {
                contains: vec![Contains {
                    shape,
                    min: 1,
                    max: None,
                }],
                ..ArrCons::any()
            });
        }
    }
    for c in &a.contains {
        out.push(ArrCons {
            items: negate(ctx, &c.shape)?,
            ..ArrCons::any()
        });
    }
    Ok(out)
}

/// Objects: the complement of a union is the meet of the alternatives' complements.
fn objects(ctx: &mut Ctx, alts: &[ObjCons]) -> Step<Vec<ObjCons>> {
    if alts.is_empty() || alts.iter().any(ObjCons::is_any) {
        return whole_or_none(alts, ObjCons::is_any, ObjCons::any, "an object constraint");
    }
    let wrap = |objects| Shape {
        objects,
        ..Shape::never()
    };
    met(ctx, alts, complement_object, wrap, |s| s.objects.clone())
}

/// Objects that miss a required key, have a declared key with a value outside its
/// schema, have fewer keys than `minProperties` or more than `maxProperties`, have a
/// key outside a `propertyNames` language, have an undeclared key whose value its
/// key rule rejects (one witness per region of the rule's patterns), or lack a
/// witness it asks for (a key rule: every such key's value outside the witness's).
fn complement_object(ctx: &mut Ctx, o: &ObjCons) -> Step<Vec<ObjCons>> {
    let mut out = Vec::new();
    for (lang, value) in &o.some {
        // no undeclared key in the witness's language has a value in its shape
        let in_lang = ctx.dfa(&lang.rx)?;
        let keys = undeclared(o)?.intersect(&in_lang).map_err(too_large)?;
        if keys.is_empty() {
            return Ok(vec![ObjCons::any()]);
        }
        let rule = KeyRule {
            patterns: vec![(
                lang_of(ctx, &keys.minimize(), lang.label.clone())?,
                negate(ctx, value)?,
            )],
            additional: ctx.any(),
        };
        out.push(ObjCons {
            rules: vec![rule],
            ..ObjCons::any()
        });
    }
    for n in &o.names {
        let outside = ctx.dfa(&n.rx)?.complement();
        if !outside.is_empty() {
            let lang = lang_of(ctx, &outside, format!("not {}", n.label))?;
            out.push(witness((lang, ctx.any())));
        }
    }
    for rule in &o.rules {
        for (keys, value) in key_regions(ctx, o, &[], std::slice::from_ref(rule))? {
            let not_value = negate(ctx, &value)?;
            if !not_value.is_never() {
                let lang = lang_of(ctx, &keys, "an undeclared key".into())?;
                out.push(witness((lang, not_value)));
            }
        }
    }
    for (min, max) in counts_outside(o.min, o.max) {
        out.push(ObjCons {
            min,
            max,
            ..ObjCons::any()
        });
    }
    for k in &o.required {
        out.push(ObjCons {
            props: vec![(k.clone(), ctx.never())],
            ..ObjCons::any()
        });
    }
    for (k, v) in &o.props {
        if v.is_any() {
            continue;
        }
        let not_v = negate(ctx, v)?;
        if !not_v.is_never() {
            let props = vec![(k.clone(), not_v)];
            out.push(ObjCons {
                props,
                required: vec![k.clone()],
                ..ObjCons::any()
            });
        }
    }
    Ok(out)
}
