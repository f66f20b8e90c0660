//! Intersection of shapes: `allOf`, and every place two schemas apply to one value.
//!
//! Types intersect separately; within a type, every alternative of one side meets every
//! alternative of the other (so `allOf` of two `anyOf`s distributes). Two constraints
//! meet field by field: bounds tighten, languages accumulate (emission intersects them
//! with automata), enumerations intersect. Objects meet key by key: the value of a key
//! either side declares must satisfy what *both* sides say of that key (a side that
//! does not declare it says it through its key rules), and the key rules of both sides
//! apply to the keys neither declares. Declared order is the first side's, then the
//! second's new keys. Alternatives that are plainly empty (crossed bounds, a required
//! key that cannot have a value) are dropped on the way.

use std::rc::Rc;

use crate::context::{Ctx, Fail, Step, MAX_ALTERNATIVES, MAX_MEETS};
use crate::languages::numbers::{integer_bounds, Bound};
use crate::shapes::shape::{ArrCons, KeyRule, NumCons, ObjCons, Shape, ShapeRef, StrCons, Witness};

/// The values both shapes admit.
pub fn intersect(ctx: &mut Ctx, a: &ShapeRef, b: &ShapeRef) -> Step<ShapeRef> {
    if Rc::ptr_eq(a, b) || b.is_any() {
        return Ok(a.clone());
    }
    if a.is_any() {
        return Ok(b.clone());
    }
    if a.is_never() || b.is_never() {
        return Ok(ctx.never());
    }
    if !a.rules.is_empty() || !b.rules.is_empty() {
        return Err(ctx.refuse_rules("an intersection (`allOf`, keywords beside `$ref`)"));
    }
    let key = (Rc::as_ptr(a), Rc::as_ptr(b));
    if let Some((_, _, r)) = ctx.meets.get(&key) {
        return Ok(r.clone());
    }
    let s = Shape {
        top: false,
        null: a.null && b.null,
        bools: [a.bools[0] && b.bools[0], a.bools[1] && b.bools[1]],
        numbers: cross(&a.numbers, &b.numbers, |x, y| Ok(meet_num(x, y)))?,
        strings: cross(&a.strings, &b.strings, |x, y| Ok(meet_str(x, y)))?,
        arrays: cross(&a.arrays, &b.arrays, |x, y| meet_arr(ctx, x, y))?,
        objects: cross(&a.objects, &b.objects, |x, y| meet_obj(ctx, x, y))?,
        rules: Vec::new(),
    };
    let r = ctx.shape(s)?;
    ctx.meets.insert(key, (a.clone(), b.clone(), r.clone()));
    Ok(r)
}

fn cross<T: Clone + PartialEq, M: IntoIterator<Item = T>>(
    a: &[T],
    b: &[T],
    mut meet: impl FnMut(&T, &T) -> Step<M>,
) -> Step<Vec<T>> {
    if a.len() * b.len() > MAX_MEETS {
        return Err(Fail::Limit(format!(
            "merging {} by {} alternatives",
            a.len(),
            b.len()
        )));
    }
    let mut out: Vec<T> = Vec::new();
    for x in a {
        // where some meet leaves `x` as it is, `x` lies within that `y`, and the
        // union of its meets is `x` itself: the others are dropped unmade
        let mut row: Vec<T> = Vec::new();
        for y in b {
            let ms: Vec<T> = meet(x, y)?.into_iter().collect();
            if ms.iter().any(|m| m == x) {
                row = vec![x.clone()];
                break;
            }
            row.extend(ms);
        }
        for m in row {
            if !out.contains(&m) {
                out.push(m);
            }
        }
    }
    if out.len() > MAX_ALTERNATIVES {
        return Err(Fail::Limit(format!(
            "merging into {} alternatives",
            out.len()
        )));
    }
    Ok(out)
}

fn concat_unique<T: Clone + PartialEq>(a: &[T], b: &[T]) -> Vec<T> {
    let mut v = a.to_vec();
    v.extend(b.iter().filter(|x| !a.contains(x)).cloned());
    v
}

/// The tighter of two upper bounds (`None`: no bound).
pub fn min_max(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, None) | (None, x) => x,
    }
}

pub fn meet_num(a: &NumCons, b: &NumCons) -> Option<NumCons> {
    let tighter = |x: &Option<Bound>, y: &Option<Bound>, low: bool| -> Option<Bound> {
        match (x, y) {
            (Some((p, e)), Some((q, f))) => Some(if p == q {
                (p.clone(), *e || *f)
            } else if (p > q) == low {
                (p.clone(), *e)
            } else {
                (q.clone(), *f)
            }),
            (Some(v), None) | (None, Some(v)) => Some(v.clone()),
            (None, None) => None,
        }
    };
    let c = NumCons {
        integer: a.integer || b.integer,
        non_integer: a.non_integer || b.non_integer,
        lo: tighter(&a.lo, &b.lo, true),
        hi: tighter(&a.hi, &b.hi, false),
        multiples: concat_unique(&a.multiples, &b.multiples),
        not_multiples: concat_unique(&a.not_multiples, &b.not_multiples),
        holes: concat_unique(&a.holes, &b.holes),
    };
    (!num_is_empty(&c)).then_some(c)
}

/// Plain emptiness: crossed bounds, or no integer between them.
pub fn num_is_empty(c: &NumCons) -> bool {
    if c.integer && c.non_integer {
        return true;
    }
    if let (Some((l, el)), Some((h, eh))) = (&c.lo, &c.hi) {
        if l > h || (l == h && (*el || *eh)) {
            return true;
        }
        if l == h && c.holes.contains(l) {
            return true;
        }
    }
    if c.integer {
        if let (Some(l), Some(h)) = integer_bounds(c.lo.as_ref(), c.hi.as_ref()) {
            return l > h;
        }
    }
    false
}

pub fn meet_str(a: &StrCons, b: &StrCons) -> Option<StrCons> {
    let values = match (&a.values, &b.values) {
        (Some(x), Some(y)) => Some(x.iter().filter(|v| y.contains(v)).cloned().collect()),
        (Some(x), None) | (None, Some(x)) => Some(x.clone()),
        (None, None) => None,
    };
    let mut holes = concat_unique(&a.holes, &b.holes);
    // enumerated values leave no room for holes: drop the holes from the values
    let values = values.map(|v: Vec<String>| {
        let kept = v.into_iter().filter(|x| !holes.contains(x)).collect();
        holes.clear();
        kept
    });
    let c = StrCons {
        min: a.min.max(b.min),
        max: min_max(a.max, b.max),
        langs: concat_unique(&a.langs, &b.langs),
        not_langs: concat_unique(&a.not_langs, &b.not_langs),
        values,
        holes,
    };
    let empty = c.max.is_some_and(|m| m < c.min)
        || c.values
            .as_ref()
            .is_some_and(|v: &Vec<String>| v.is_empty());
    (!empty).then_some(c)
}

fn meet_arr(ctx: &mut Ctx, a: &ArrCons, b: &ArrCons) -> Step<Option<ArrCons>> {
    let n = a.prefix.len().max(b.prefix.len());
    let mut prefix = Vec::with_capacity(n);
    for i in 0..n {
        prefix.push(intersect(ctx, a.item(i), b.item(i))?);
    }
    let c = ArrCons {
        items: intersect(ctx, &a.items, &b.items)?,
        prefix,
        min: a.min.max(b.min),
        max: min_max(a.max, b.max),
        contains: concat_unique(&a.contains, &b.contains),
        unique: a.unique.clone().or_else(|| b.unique.clone()),
        compact: a.compact || b.compact,
    };
    Ok((!arr_is_empty(&c)).then_some(c))
}

pub fn arr_is_empty(c: &ArrCons) -> bool {
    c.max.is_some_and(|m| m < c.min) || (0..c.min as usize).any(|i| c.item(i).is_never())
}

/// The constraint on the value of `key` in an object meeting `o`.
pub fn value_for(ctx: &mut Ctx, o: &ObjCons, key: &str) -> Step<ShapeRef> {
    if let Some(s) = o.declared(key) {
        return Ok(s.clone());
    }
    let mut acc = ctx.any();
    for rule in &o.rules {
        let s = rule_value(ctx, rule, key)?;
        acc = intersect(ctx, &acc, &s)?;
    }
    Ok(acc)
}

/// What one key rule says of `key`'s value.
pub fn rule_value(ctx: &mut Ctx, rule: &KeyRule, key: &str) -> Step<ShapeRef> {
    let mut acc: Option<ShapeRef> = None;
    for (lang, shape) in &rule.patterns {
        if ctx.matches(&lang.rx, key)? {
            acc = Some(match acc {
                Some(x) => intersect(ctx, &x, shape)?,
                None => shape.clone(),
            });
        }
    }
    Ok(acc.unwrap_or_else(|| rule.additional.clone()))
}

fn meet_obj(ctx: &mut Ctx, a: &ObjCons, b: &ObjCons) -> Step<Vec<ObjCons>> {
    // listed keys of both parts first, then keys only required, each in order of first
    // appearance (see `ObjCons::listed`)
    let (a_listed, a_required) = a.props.split_at(a.listed);
    let (b_listed, b_required) = b.props.split_at(b.listed);
    let mut seen = std::collections::HashSet::new();
    let mut names: Vec<String> = Vec::with_capacity(a.props.len() + b.props.len());
    let mut listed = 0;
    for (i, part) in [a_listed, b_listed, a_required, b_required]
        .iter()
        .enumerate()
    {
        for (k, _) in part.iter() {
            if seen.insert(k.as_str()) {
                names.push(k.clone());
            }
        }
        if i == 1 {
            listed = names.len();
        }
    }
    let mut props = Vec::with_capacity(names.len());
    for k in names {
        let (x, y) = (value_for(ctx, a, &k)?, value_for(ctx, b, &k)?);
        props.push((k, intersect(ctx, &x, &y)?));
    }
    let c = ObjCons {
        props,
        listed,
        required: concat_unique(&a.required, &b.required),
        rules: concat_unique(&a.rules, &b.rules)
            .into_iter()
            .filter(|r| !r.is_any())
            .collect(),
        min: a.min.max(b.min),
        max: min_max(a.max, b.max),
        names: concat_unique(&a.names, &b.names),
        some: [a.some.as_slice(), b.some.as_slice()].concat(),
        compact: a.compact || b.compact,
        listed_names: a.listed_names.clone().or_else(|| b.listed_names.clone()),
    };
    // a key one side declares and the other does not may be the other side's witness
    let fresh = |side: &ObjCons, other: &ObjCons| -> Vec<String> {
        let keys = other.props.iter().map(|(k, _)| k);
        keys.filter(|k| side.declared(k).is_none())
            .cloned()
            .collect()
    };
    let mut fresh_for = vec![fresh(a, b); a.some.len()];
    fresh_for.extend(vec![fresh(b, a); b.some.len()]);
    let mut out = Vec::new();
    for x in place_witnesses(ctx, c, &fresh_for)? {
        if !obj_is_empty(ctx, &x)? {
            out.push(x);
        }
    }
    Ok(out)
}

/// The objects of `c` split by where each witness ([`ObjCons::some`]) is: either one of
/// the keys `fresh_for[i]` (declared in `c` but not by the side witness `i` came from,
/// so undeclared where that witness was made), now required with a value in the
/// witness's shape and the witness fulfilled; or, as before, an undeclared key of `c`.
fn place_witnesses(ctx: &mut Ctx, c: ObjCons, fresh_for: &[Vec<String>]) -> Step<Vec<ObjCons>> {
    let mut alts = vec![(c, vec![false; fresh_for.len()])];
    for (i, fresh) in fresh_for.iter().enumerate() {
        let mut next = Vec::new();
        for (alt, done) in alts {
            let (lang, shape) = alt.some[i].clone();
            for k in fresh {
                if !ctx.matches(&lang.rx, k)? {
                    continue;
                }
                let mut x = alt.clone();
                let at = x
                    .props
                    .iter()
                    .position(|(n, _)| n == k)
                    .expect("declared in c");
                x.props[at].1 = intersect(ctx, &x.props[at].1, &shape)?;
                if !x.required.contains(k) {
                    x.required.push(k.clone());
                }
                let mut d = done.clone();
                d[i] = true;
                next.push((x, d));
            }
            next.push((alt, done));
        }
        if next.len() > MAX_ALTERNATIVES {
            return Err(Fail::Limit(format!(
                "placing {} witnesses",
                fresh_for.len()
            )));
        }
        alts = next;
    }
    let mut out = Vec::with_capacity(alts.len());
    for (mut x, done) in alts {
        let mut i = 0;
        x.some.retain(|_| {
            i += 1;
            !done[i - 1]
        });
        x.some = implied_dropped(ctx, &x.some)?;
        out.push(x);
    }
    Ok(out)
}

/// Witnesses (of one object, so over the same undeclared keys) without those another
/// implies: `a` implies `b` when `a`'s keys lie within `b`'s and `b` takes any value
/// or both take the same values. A witness is dropped only for one still kept or not
/// yet decided, so of witnesses that imply each other one stays.
fn implied_dropped(ctx: &mut Ctx, some: &[Witness]) -> Step<Vec<Witness>> {
    let mut dropped = vec![false; some.len()];
    for (j, b) in some.iter().enumerate() {
        let outside_b = ctx.dfa(&b.0.rx)?.complement();
        for (i, a) in some.iter().enumerate() {
            if i == j || dropped[i] || !(b.1.is_any() || a.1 == b.1) {
                continue;
            }
            if ctx
                .dfa(&a.0.rx)?
                .intersect(&outside_b)
                .is_ok_and(|d| d.is_empty())
            {
                dropped[j] = true;
                break;
            }
        }
    }
    let kept = some.iter().zip(&dropped).filter(|(_, d)| !**d);
    Ok(kept.map(|(w, _)| w.clone()).collect())
}

pub fn obj_is_empty(ctx: &mut Ctx, c: &ObjCons) -> Step<bool> {
    if c.max
        .is_some_and(|m| m < c.min || (m as usize) < c.required.len())
    {
        return Ok(true);
    }
    for k in &c.required {
        if value_for(ctx, c, k)?.is_never() {
            return Ok(true);
        }
    }
    Ok(c.some.iter().any(|(_, v)| v.is_never()))
}
