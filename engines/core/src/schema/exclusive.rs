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

use super::context::{Ctx, Fail, Step};
use super::merge::intersect;
use super::negate::negate;
use super::scalars::str_is_empty;
use super::shape::{Shape, ShapeRef};

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
        None => Ok(present
            .iter()
            .fold(Shape::never(), |u, &i| u.union(&parts[i]))),
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
pub(super) fn first_overlap(ctx: &mut Ctx, refs: &[ShapeRef]) -> Step<Option<(usize, usize)>> {
    for (i, a) in refs.iter().enumerate() {
        for (j, b) in refs.iter().enumerate().skip(i + 1) {
            if !disjoint(ctx, a, b)? {
                return Ok(Some((i, j)));
            }
        }
    }
    Ok(None)
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
pub(super) fn within_complements(
    ctx: &mut Ctx,
    narrow: &[ShapeRef],
    wide: &[ShapeRef],
) -> Step<Shape> {
    let complements = wide
        .iter()
        .map(|r| negate(ctx, r))
        .collect::<Step<Vec<_>>>()?;
    let mut out = Shape::never();
    for (i, part) in narrow.iter().enumerate() {
        let mut only = part.clone();
        for (j, not_j) in complements.iter().enumerate() {
            if j != i {
                only = intersect(ctx, &only, not_j)?;
            }
        }
        out = out.union(&only);
    }
    Ok(out)
}

/// The values valid against exactly one branch. `branches` have met the keywords
/// beside `oneOf` (which can make them disjoint); `raw` are the same branches before
/// that meet. Where a met branch has no complement (its siblings brought in a
/// `uniqueItems`, say), the raw branch's complement serves as well: within the
/// siblings' values, a value is outside the met branch exactly when it is outside the
/// raw one.
pub fn one_of(ctx: &mut Ctx, branches: &[ShapeRef], raw: &[ShapeRef]) -> Step<ShapeRef> {
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
