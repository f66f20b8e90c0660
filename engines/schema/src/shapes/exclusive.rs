//! `oneOf`: the values valid against exactly one branch, type by type.
//!
//! Contract: [`one_of`] returns exactly the values that satisfy one branch and no
//! other, or refuses. Each JSON type is decided on its own, since a branch's
//! alternatives of one type say nothing of the others:
//! - `null`, `false`, `true`: admitted when exactly one branch admits it;
//! - numbers, strings, arrays, objects: when two or more branches admit the whole
//!   type, no value of it is admitted; when one does and no other admits any of it,
//!   the whole type is; when the branches' parts are provably pairwise disjoint,
//!   their union is admitted. Otherwise ("whole minus some", or parts that may
//!   overlap) each part meets the complements of the others ([`negate`]), and the
//!   union of those is admitted; where a complement cannot be built, `oneOf` is
//!   refused.
//!
//! Disjointness is shown by intersecting ([`intersect`], which drops alternatives it
//! can see are empty): the meet must have no alternative left, or only string
//! alternatives whose languages are empty automata. The check is sound, not complete.

use rustc_hash::FxHashMap as HashMap;

use crate::context::{Ctx, Fail, Step};
use crate::languages::decimal::Decimal;
use crate::shapes::merge::intersect;
use crate::shapes::negate::negate;
use crate::shapes::scalars::str_is_empty;
use crate::shapes::shape::{NumCons, Shape, ShapeRef, StrCons};

/// The four compound types, as projections of a shape.
const PARTS: [&str; 4] = ["numbers", "strings", "arrays", "objects"];

/// `s` restricted to the compound type `part`.
fn project(s: &Shape, part: &str) -> Shape {
    let any = Shape::any();
    let s = if s.top { &any } else { s };
    let mut out = Shape::never();
    match part {
        "numbers" => out.numbers = s.numbers.clone(),
        "strings" => out.strings = s.strings.clone(),
        "arrays" => out.arrays = s.arrays.clone(),
        _ => out.objects = s.objects.clone(),
    }
    out
}

/// Whether the projection admits its whole type.
fn whole(p: &Shape, part: &str) -> bool {
    let any = project(&Shape::any(), part);
    *p == any
}

/// Whether no value satisfies both shapes, as far as can be shown.
fn disjoint(ctx: &mut Ctx, a: &ShapeRef, b: &ShapeRef) -> Step<bool> {
    let m = match intersect(ctx, a, b) {
        Ok(m) => m,
        Err(Fail::Limit(_)) => return Ok(false),
        Err(e) => return Err(e),
    };
    let scalar = m.null || m.bools.contains(&true);
    if m.is_any() || scalar || !m.numbers.is_empty() || !m.arrays.is_empty() {
        return Ok(false);
    }
    if !m.objects.is_empty() {
        return Ok(false);
    }
    for c in &m.strings {
        if !str_is_empty(ctx, c)? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The values of one compound type in exactly one branch (`raw`: the branches before
/// they met their siblings, see [`one_of`]).
fn one_part(ctx: &mut Ctx, branches: &[ShapeRef], raw: &[ShapeRef], part: &str) -> Step<Shape> {
    let parts: Vec<Shape> = branches.iter().map(|b| project(b, part)).collect();
    let present: Vec<usize> = (0..parts.len()).filter(|&i| !parts[i].is_never()).collect();
    let wholes = present.iter().filter(|&&i| whole(&parts[i], part)).count();
    match (wholes, present.len()) {
        (0, 0) => return Ok(Shape::never()),
        (2.., _) => return Ok(Shape::never()),
        (1, 1) => return Ok(parts[present[0]].clone()),
        _ => {}
    }
    let refs = present
        .iter()
        .map(|&i| ctx.shape(parts[i].clone()))
        .collect::<Step<Vec<_>>>()?;
    let overlap = if wholes == 1 {
        Some(format!("one branch admits all {part} and another some"))
    } else {
        first_overlap(ctx, &refs)?.map(|(i, j)| {
            let (x, y) = (present[i], present[j]);
            format!("the {part} of branches {x} and {y} may overlap")
        })
    };
    match overlap {
        None => Ok(Shape::union_all(present.iter().map(|&i| &parts[i]))),
        Some(why) => match by_complements(ctx, &refs) {
            Err(f) => {
                let raw_refs = present
                    .iter()
                    .map(|&i| ctx.shape(project(&raw[i], part)))
                    .collect::<Step<Vec<_>>>()?;
                if raw_refs == refs {
                    Err(f)
                } else {
                    within_complements(ctx, &refs, &raw_refs).map_err(|_| f)
                }
            }
            met => met,
        }
        .map_err(|f| match f {
            Fail::Unsupported {
                keyword, reason, ..
            } => Fail::unsupported("oneOf", format!("{why}, and for {keyword}: {reason}")),
            limit => limit,
        }),
    }
}

/// The first pair of shapes (whole, or parts of one type) not shown disjoint.
pub fn first_overlap(ctx: &mut Ctx, refs: &[ShapeRef]) -> Step<Option<(usize, usize)>> {
    if let Some(lists) = refs
        .iter()
        .map(|r| listed_values(r))
        .collect::<Option<Vec<_>>>()
    {
        return Ok(first_shared(&lists));
    }
    for (i, a) in refs.iter().enumerate() {
        for (j, b) in refs.iter().enumerate().skip(i + 1) {
            if !disjoint(ctx, a, b)? {
                return Ok(Some((i, j)));
            }
        }
    }
    Ok(None)
}

/// An enumerated value: a string, or a number (normalized, so `1` and `1.0` are one).
#[derive(PartialEq, Eq, Hash)]
enum Listed<'a> {
    Str(&'a str),
    Num(&'a Decimal),
}

/// The values a shape that is nothing but an enumeration lists: strings of an `enum` or
/// `const` with no other string constraint, and single numbers with no other number
/// constraint; None for any other shape. The patterns name every field, so a field
/// added to a constraint cannot be overlooked here, and nothing is cloned.
fn listed_values(s: &Shape) -> Option<Vec<Listed<'_>>> {
    let Shape {
        top: false,
        null: false,
        bools: [false, false],
        numbers,
        strings,
        arrays,
        objects,
        rules,
    } = s
    else {
        return None;
    };
    if !arrays.is_empty() || !objects.is_empty() || !rules.is_empty() || strings.len() > 1 {
        return None;
    }
    let mut out = Vec::new();
    for c in strings {
        let StrCons {
            min: 0,
            max: None,
            langs,
            not_langs,
            values: Some(values),
            holes,
        } = c
        else {
            return None;
        };
        if !langs.is_empty() || !not_langs.is_empty() || !holes.is_empty() {
            return None;
        }
        out.extend(values.iter().map(|v| Listed::Str(v)));
    }
    for n in numbers {
        let NumCons {
            integer: false,
            non_integer: false,
            lo: Some((lo, false)),
            hi: Some((hi, false)),
            multiples,
            not_multiples,
            holes,
        } = n
        else {
            return None;
        };
        if lo != hi || !multiples.is_empty() || !not_multiples.is_empty() || !holes.is_empty() {
            return None;
        }
        out.push(Listed::Num(lo));
    }
    Some(out)
}

/// The first pair (in the order [`first_overlap`] tries pairs) of lists sharing a
/// value. Two enumerations are disjoint exactly when they share no value, so this
/// answers in linear time what a meet per pair answers in quadratic time (a `oneOf` of
/// 3,000 string `const`s took 2.5 s): for each value, the first two lists holding it,
/// and the least such pair.
fn first_shared(lists: &[Vec<Listed<'_>>]) -> Option<(usize, usize)> {
    let mut holders: HashMap<&Listed<'_>, (usize, Option<usize>)> = HashMap::default();
    for (i, list) in lists.iter().enumerate() {
        for v in list {
            let e = holders.entry(v).or_insert((i, None));
            if e.0 != i && e.1.is_none() {
                e.1 = Some(i);
            }
        }
    }
    holders
        .values()
        .filter_map(|&(a, b)| b.map(|b| (a, b)))
        .min()
}

/// The union over `i` of part `i` meeting the complement of every other part: exact
/// for parts that may overlap, where [`negate`] can build those complements.
fn by_complements(ctx: &mut Ctx, refs: &[ShapeRef]) -> Step<Shape> {
    within_complements(ctx, refs, refs)
}

/// The union over `i` of `narrow[i]` meeting the complement of every other `wide[j]`.
/// With each `narrow[i]` inside the `i`th branch and each `wide[j]` around the `j`th,
/// this lies inside the values valid against exactly one branch (the complement of a
/// wider branch is narrower); with both equal to the branches, it is those values.
pub fn within_complements(ctx: &mut Ctx, narrow: &[ShapeRef], wide: &[ShapeRef]) -> Step<Shape> {
    let complements = wide
        .iter()
        .map(|r| negate(ctx, r))
        .collect::<Step<Vec<_>>>()?;
    let mut only = Vec::with_capacity(narrow.len());
    for (i, part) in narrow.iter().enumerate() {
        let mut o = part.clone();
        for (j, not_j) in complements.iter().enumerate() {
            if j != i {
                o = intersect(ctx, &o, not_j)?;
            }
        }
        only.push(o);
    }
    Ok(Shape::union_all(only.iter().map(|o| &**o)))
}

/// The values valid against exactly one branch. `branches` have met the keywords
/// beside `oneOf` (which can make them disjoint); `raw` are the same branches before
/// that meet. Where a met branch has no complement (its siblings brought in a
/// `uniqueItems`, say), the raw branch's complement serves as well: within the
/// siblings' values, a value is outside the met branch exactly when it is outside the
/// raw one.
pub fn one_of(ctx: &mut Ctx, branches: &[ShapeRef], raw: &[ShapeRef]) -> Step<ShapeRef> {
    if branches.iter().chain(raw).any(|b| !b.rules.is_empty()) {
        return Err(ctx.refuse_rules("`oneOf`"));
    }
    let exactly_one =
        |f: &dyn Fn(&Shape) -> bool| branches.iter().filter(|b| b.is_any() || f(b)).count() == 1;
    let mut out = Shape::never();
    out.null = exactly_one(&|b| b.null);
    out.bools = [exactly_one(&|b| b.bools[0]), exactly_one(&|b| b.bools[1])];
    for part in PARTS {
        let p = one_part(ctx, branches, raw, part)?;
        out = out.union(&p);
    }
    ctx.shape(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pair found through the values is the pair the meets would find first: the
    /// least `(i, j)`, `i < j`, whose lists share a value.
    #[test]
    fn first_shared_is_the_first_pair_tried() {
        let words = ["a", "b", "c", "d", "e"];
        let mut seed = 7u64;
        for _ in 0..2_000 {
            let lists: Vec<Vec<Listed>> = (0..5)
                .map(|_| {
                    seed = seed
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    (0..5)
                        .filter(|k| (seed >> (20 + 3 * k)).is_multiple_of(4))
                        .map(|k| Listed::Str(words[k as usize]))
                        .collect()
                })
                .collect();
            let brute = (0..lists.len())
                .flat_map(|i| (i + 1..lists.len()).map(move |j| (i, j)))
                .find(|&(i, j)| lists[i].iter().any(|v| lists[j].contains(v)));
            assert_eq!(first_shared(&lists), brute);
        }
    }
}
