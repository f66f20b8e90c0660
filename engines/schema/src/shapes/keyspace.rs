//! An object's undeclared keys, split by the patterns that match them.
//!
//! Contract: [`key_regions`] cuts the keys an [`ObjCons`] does not declare (within the
//! key languages it is given) into regions by which patterns of its key rules match
//! them, and gives each region the value every key there must have: per rule, the meet
//! of its matching patterns' schemas, or its additional schema where none matches.
//! Regions are character automata, split pattern by pattern with empty ones dropped, so
//! patterns that exclude each other make one region each; past [`MAX_REGIONS`] the
//! object is refused. The complement of an object ([`crate::shapes::negate`]) and its
//! emission ([`crate::emitting::objects`]) both walk these regions; [`lang_of`] writes a
//! region back as a key language, one node per structure.

use crate::context::{Ctx, Fail, Step};
use crate::languages::automaton::{Dfa, TooLarge};
use crate::languages::eliminate::to_rx;
use crate::languages::rx;
use crate::shapes::merge::intersect;
use crate::shapes::shape::{KeyRule, Lang, ObjCons, ShapeRef};

/// The most key regions `patternProperties` may split an object's keys into.
pub const MAX_REGIONS: usize = 64;

/// The refusal of a key language whose automaton grew too large.
pub fn too_large(_: TooLarge) -> Fail {
    Fail::Limit("a property-name language needs too many automaton states".into())
}

/// The undeclared keys of `o` (not declared, in every language of `names`), split by
/// which patterns of the key `rules` match them: each nonempty region's keys, with the
/// value every key there must have (per rule, the meet of its matching patterns'
/// schemas, or its additional schema where none matches; the rules' values met).
/// Regions are split pattern by pattern and empty ones dropped, so patterns that
/// exclude each other make one region each; past [`MAX_REGIONS`] it is refused.
pub fn key_regions(
    ctx: &mut Ctx,
    o: &ObjCons,
    names: &[Lang],
    rules: &[KeyRule],
) -> Step<Vec<(Dfa, ShapeRef)>> {
    let mut base = undeclared(o)?;
    for n in names {
        let d = ctx.dfa(&n.rx)?;
        base = base.intersect(&d).map_err(too_large)?.minimize();
    }
    // each region: its keys, and per rule the meet of the patterns that matched
    let mut regions: Vec<(Dfa, Vec<Option<ShapeRef>>)> = Vec::new();
    if !base.is_empty() {
        regions.push((base, vec![None; rules.len()]));
    }
    for (r, rule) in rules.iter().enumerate() {
        for (lang, shape) in &rule.patterns {
            let p = ctx.dfa(&lang.rx)?;
            let mut next = Vec::with_capacity(regions.len() * 2);
            for (keys, values) in regions {
                let inside = keys.intersect(&p).map_err(too_large)?.minimize();
                let outside = keys
                    .intersect(&p.complement())
                    .map_err(too_large)?
                    .minimize();
                if !inside.is_empty() {
                    let mut v = values.clone();
                    v[r] = Some(match &v[r] {
                        Some(x) => intersect(ctx, x, shape)?,
                        None => shape.clone(),
                    });
                    next.push((inside, v));
                }
                if !outside.is_empty() {
                    next.push((outside, values));
                }
            }
            if next.len() > MAX_REGIONS {
                return Err(Fail::unsupported(
                    "patternProperties",
                    format!("the patterns split the keys into more than {MAX_REGIONS} regions"),
                ));
            }
            regions = next;
        }
    }
    let mut out = Vec::with_capacity(regions.len());
    for (keys, values) in regions {
        let mut value = ctx.any();
        for (v, rule) in values.iter().zip(rules) {
            value = intersect(ctx, &value, v.as_ref().unwrap_or(&rule.additional))?;
        }
        out.push((keys, value));
    }
    Ok(out)
}

/// The keys `o` does not declare.
pub fn undeclared(o: &ObjCons) -> Step<Dfa> {
    let declared = rx::alt(o.props.iter().map(|(k, _)| rx::lit(k)).collect::<Vec<_>>());
    Ok(Dfa::from_rx(&declared).map_err(too_large)?.complement())
}

/// The language of the strings `dfa` accepts, labelled; refused where its regex would
/// take too long to eliminate ([`to_rx`]).
pub fn lang_of(ctx: &mut Ctx, dfa: &Dfa, label: String) -> Step<Lang> {
    let rx = to_rx(dfa).ok_or_else(|| too_large(TooLarge))?;
    Ok(Lang {
        rx: ctx.interned(rx),
        label,
    })
}

#[cfg(test)]
mod tests {
    /// Key languages written from equal automata are one node (so comparing objects
    /// that carry them is a pointer check), and different ones stay apart.
    #[test]
    fn key_languages_of_equal_automata_are_one_node() {
        use super::{lang_of, Dfa};
        use crate::context::Ctx;
        use crate::dialect::{Dialect, Draft};
        use crate::languages::rx;
        let mut ctx = Ctx::new(&Dialect::default(), Draft::Draft2020);
        let dfa = |words: &[&str]| {
            let x = rx::alt(words.iter().map(|w| rx::lit(w)).collect::<Vec<_>>());
            Dfa::from_rx(&x).unwrap().complement().minimize()
        };
        let a = lang_of(&mut ctx, &dfa(&["ios", "android"]), "a".into()).unwrap();
        let b = lang_of(&mut ctx, &dfa(&["android", "ios"]), "b".into()).unwrap();
        let c = lang_of(&mut ctx, &dfa(&["ios"]), "c".into()).unwrap();
        assert!(std::rc::Rc::ptr_eq(&a.rx, &b.rx));
        assert!(!std::rc::Rc::ptr_eq(&a.rx, &c.rx));
        assert_ne!(a.rx, c.rx);
    }
}
