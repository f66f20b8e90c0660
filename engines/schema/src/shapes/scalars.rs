//! The languages of scalar constraints: strings (character level) and numbers (text).
//!
//! Contracts:
//! - [`str_lang`] is the regex of the *decoded* strings one [`StrCons`] admits; the
//!   caller spells it ([`crate::emitting::spell`]). Length bounds count characters. Patterns,
//!   formats, negated languages and excluded values are intersected as automata; the
//!   plain length case stays a counted repetition.
//! - [`key_language`] is the decoded strings a shape admits, for `propertyNames`.
//! - [`num_rx`] is the regex of the number texts one [`NumCons`] admits, in the
//!   dialect's number syntax ([`crate::dialect::Numbers`]).

use crate::context::{Ctx, Fail, Step};
use crate::dialect::{NegativeZero, Numbers};
use crate::languages::automaton::{Dfa, TooLarge};
use crate::languages::charset::CharSet;
use crate::languages::eliminate::{dfa_graph, to_rx, MAX_ELIMINATED};
use crate::languages::numbers::{
    integer_bounds, integer_range, multiple_dfa, non_integer_dfa, real_range, restrict,
    signed_exponent_form, Bound,
};
use crate::languages::rx::{self, Rx};
use crate::shapes::listed_multiples::listed_multiples;
use crate::shapes::shape::{NumCons, Shape, StrCons};
use tokensdfa_core::counted::{finite, UNBOUNDED};

/// The same, for a string value the lazy index's tree takes ([`str_lang`]'s `as_tree`):
/// an automaton serves it as well as a regex, and eliminating a product of a thousand
/// states (`^[a-z]+$` of at most 1,000 characters) took 165 ms of the schema's time to
/// first mask, against 0.03 ms kept as an automaton.
pub const TREE_ELIMINATED: usize = 64;

fn too_large(_: TooLarge) -> Fail {
    Fail::Limit("a string language needs too many automaton states".into())
}

fn to_u32(n: u64, what: &str) -> Step<u32> {
    finite(n).ok_or_else(|| Fail::Limit(format!("{what} {n} is too large")))
}

/// Whether the decoded string `v` satisfies every constraint of `c` but `values`.
pub fn admits(ctx: &mut Ctx, c: &StrCons, v: &str) -> Step<bool> {
    let n = v.chars().count() as u64;
    if n < c.min || c.max.is_some_and(|m| n > m) || c.holes.iter().any(|h| h == v) {
        return Ok(false);
    }
    for l in &c.langs {
        if !ctx.matches(&l.rx, v)? {
            return Ok(false);
        }
    }
    for l in &c.not_langs {
        if ctx.matches(&l.rx, v)? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The decoded strings `c` admits. `as_tree`: the language goes to the lazy index's
/// tree (a string value under [`Ctx::tree`]), so an automaton past [`TREE_ELIMINATED`]
/// states is kept as one; else (text, key languages) past [`MAX_ELIMINATED`].
pub fn str_lang(ctx: &mut Ctx, c: &StrCons, as_tree: bool) -> Step<Rx> {
    let limit = if as_tree {
        TREE_ELIMINATED
    } else {
        MAX_ELIMINATED
    };
    str_lang_within(ctx, c, limit)
}

/// [`str_lang`] with automata of more than `limit` states kept as automata.
fn str_lang_within(ctx: &mut Ctx, c: &StrCons, limit: usize) -> Step<Rx> {
    if let Some(values) = &c.values {
        let mut keep = Vec::new();
        for v in values {
            if admits(ctx, c, v)? {
                keep.push(rx::lit(v));
            }
        }
        return Ok(rx::alt(keep));
    }
    let max = c.max.map(|m| to_u32(m, "maxLength")).transpose()?;
    let length = rx::repeat(rx::set(CharSet::full()), to_u32(c.min, "minLength")?, max);
    let unbounded = c.min == 0 && c.max.is_none();
    match (
        c.langs.as_slice(),
        c.not_langs.is_empty() && c.holes.is_empty(),
    ) {
        ([], true) => return Ok(length),
        ([one], true) if unbounded => return Ok(one.rx.clone()),
        _ => {}
    }
    let mut parts: Vec<Dfa> = Vec::new();
    for l in &c.langs {
        let d = ctx.dfa(&l.rx)?;
        parts.push(Dfa::clone(&d));
    }
    for l in &c.not_langs {
        parts.push(ctx.dfa(&l.rx)?.complement());
    }
    if !c.holes.is_empty() {
        let holes = rx::alt(c.holes.iter().map(|h| rx::lit(h)).collect::<Vec<_>>());
        parts.push(Dfa::from_rx(&holes).map_err(too_large)?.complement());
    }
    let base = parts
        .iter()
        .skip(1)
        .try_fold(parts[0].clone(), |a, p| a.intersect(p))
        .map_err(too_large)?
        .minimize();
    let within = match base.length_range() {
        Some((lo, hi)) => {
            lo as u64 >= c.min && c.max.is_none_or(|m| hi.is_some_and(|h| h as u64 <= m))
        }
        None => true,
    };
    if within {
        return eliminated_or_counted(ctx, c, &base, &base, (0, UNBOUNDED), limit);
    }
    if base.complement().is_empty() {
        return Ok(length); // the patterns admit every string: the length alone counts
    }
    let bounds = (to_u32(c.min, "minLength")?, max.unwrap_or(UNBOUNDED));
    let long_bound = max.is_some_and(|m| m as usize >= limit);
    if long_bound && base.length_range().is_some_and(|r| r.1.is_none()) {
        // an infinite language within a bound of `limit` characters or more: the product
        // has a state per length up to the bound, more than `limit`
        return counted_within(ctx, c, &base, bounds, limit);
    }
    // a product past the elimination limit is a counted automaton at once, and is not
    // built past it: minimizing it takes a round per unit of the bound (half a second for
    // an e-mail address of at most 254 characters), and it hardly comes down to an
    // eliminable size (none on MaskBench: as text 5,080 in the default dialect, 5,246 in
    // the harness's); building it to 20,000 states took 6 ms of a hostname's 7
    match Dfa::from_rx(&length).and_then(|l| base.intersect_within(&l, limit)) {
        Ok(d) => eliminated_or_counted(ctx, c, &d.minimize(), &base, bounds, limit),
        Err(_) => counted_within(ctx, c, &base, bounds, limit),
    }
}

/// The regex of `d` by state elimination when it is small enough, else `base`'s strings
/// of `bounds` lengths, as a counted automaton (the same language: `d` is `base` within
/// `bounds`). Small enough: at most `limit` states, and a regex no longer than the
/// dialect's text limit (a length-bounded product eliminates to a regex that may
/// double with every state, and such a regex could never be printed anyway).
fn eliminated_or_counted(
    ctx: &mut Ctx,
    c: &StrCons,
    d: &Dfa,
    base: &Dfa,
    bounds: (u32, u32),
    limit: usize,
) -> Step<Rx> {
    if d.len() <= limit {
        if let Some(x) = to_rx(d).filter(|x| x.printed_len() <= ctx.dialect.max_regex_len) {
            return Ok(x);
        }
    }
    counted_within(ctx, c, base, bounds, limit)
}

/// [`counted`]; where the counter cannot count `base` within `bounds` (lengths too
/// irregular) under the tree's `limit`, `c` by the text's route, whose product may still
/// eliminate to a regex, so the tree refuses nothing the text takes.
fn counted_within(
    ctx: &mut Ctx,
    c: &StrCons,
    base: &Dfa,
    bounds: (u32, u32),
    limit: usize,
) -> Step<Rx> {
    match counted(base, bounds) {
        Err(_) if limit < MAX_ELIMINATED => str_lang_within(ctx, c, MAX_ELIMINATED),
        done => done,
    }
}

/// `d`'s strings of `lo..=hi` characters as a counted automaton ([`rx::Graph`]): the
/// product with the length counter, which an e-mail address of at most 1,024
/// characters makes tens of thousands of states, is left to the lazy index's NFA.
fn counted(d: &Dfa, (lo, hi): (u32, u32)) -> Step<Rx> {
    dfa_graph(d, (lo, hi), None).ok_or_else(|| {
        Fail::Limit(format!(
            "a string language of {} automaton states and lengths {lo}..{hi} has lengths \
             too irregular to count",
            d.len()
        ))
    })
}

/// The decoded strings a shape admits (its other types are ignored).
pub fn key_language(ctx: &mut Ctx, s: &Shape) -> Step<Rx> {
    if !s.rules.is_empty() {
        return Err(ctx.refuse_rules("`propertyNames`"));
    }
    let mut parts = Vec::new();
    for c in &s.strings {
        parts.push(str_lang(ctx, c, false)?);
    }
    Ok(rx::alt(parts))
}

/// Whether a string constraint admits no string at all.
pub fn str_is_empty(ctx: &mut Ctx, c: &StrCons) -> Step<bool> {
    let x = str_lang(ctx, c, false)?;
    if rx::is_never(&x) {
        return Ok(true);
    }
    if x.has_graph() {
        return Ok(false); // a counted automaton is never built with an infeasible start
    }
    Ok(Dfa::from_rx(&x).map_err(too_large)?.is_empty())
}

/// Number texts with a sign constraint only, exponents allowed.
fn exponent_form(lo: Option<&Bound>, hi: Option<&Bound>) -> Option<Rx> {
    let at_zero = |b: Option<&Bound>| b.is_none_or(|(d, _)| d.is_zero());
    if !at_zero(lo) || !at_zero(hi) {
        return None;
    }
    match (lo, hi) {
        (None, None) => Some(signed_exponent_form(None, true)),
        (Some((_, e)), None) => Some(signed_exponent_form(Some(true), !e)),
        (None, Some((_, e))) => Some(signed_exponent_form(Some(false), !e)),
        _ => None,
    }
}

/// The texts `c` admits that are not a negative zero its dialect forbids, as an
/// automaton; None where the dialect forbids none.
fn negative_zero_refused(rule: NegativeZero, c: &NumCons) -> Option<Dfa> {
    let bounded = c.lo.is_some() || c.hi.is_some();
    let zeros = rx::concat([rx::lit("-"), rx::lit("0")]);
    let fraction = rx::opt(rx::concat([
        rx::lit("."),
        rx::repeat(rx::lit("0"), 1, None),
    ]));
    let exponent = rx::opt(rx::concat([
        rx::set(CharSet::from_ranges(vec![
            ('E' as u32, 'E' as u32),
            ('e' as u32, 'e' as u32),
        ])),
        rx::opt(rx::set(CharSet::from_ranges(vec![
            ('+' as u32, '+' as u32),
            ('-' as u32, '-' as u32),
        ]))),
        rx::repeat(rx::set(CharSet::range('0' as u32, '9' as u32)), 1, None),
    ]));
    let refused = match rule {
        NegativeZero::UnboundedOnly if bounded => rx::concat([zeros, fraction, exponent]),
        NegativeZero::WithFractionWhenBounded if bounded || c.integer => {
            rx::concat([zeros, exponent])
        }
        _ => return None,
    };
    Some(
        Dfa::from_rx(&refused)
            .expect("a small automaton")
            .complement(),
    )
}

/// The number texts `c` admits.
pub fn num_rx(ctx: &mut Ctx, c: &NumCons) -> Step<Rx> {
    let excluded = !c.not_multiples.is_empty() || !c.holes.is_empty();
    let exp = !c.integer
        && c.multiples.is_empty()
        && match ctx.dialect.numbers {
            Numbers::Decimal => false,
            Numbers::ExponentWhereExact => true,
            Numbers::ExponentWhenUnbounded => c.lo.is_none() && c.hi.is_none(),
        };
    if excluded && exp {
        // the exclusions below are automata of decimal spellings only
        return Err(Fail::unsupported(
            "not",
            "excluding values or multiples from numbers written with exponents is not implemented",
        ));
    }
    let mut base = if c.integer {
        let (l, h) = integer_bounds(c.lo.as_ref(), c.hi.as_ref());
        let whole = integer_range(l.as_ref(), h.as_ref());
        if ctx.integers_without_fraction {
            let plain = rx::concat([
                rx::opt(rx::lit("-")),
                rx::repeat(rx::set(CharSet::range('0' as u32, '9' as u32)), 1, None),
            ]);
            let plain = Dfa::from_rx(&plain).expect("a two-state automaton");
            restrict(&whole, &[plain]).map_err(|_| {
                Fail::Limit("an integer range needs too many automaton states".into())
            })?
        } else {
            whole
        }
    } else if let Some(x) = exp
        .then(|| exponent_form(c.lo.as_ref(), c.hi.as_ref()))
        .flatten()
    {
        x
    } else {
        real_range(c.lo.as_ref(), c.hi.as_ref())
    };
    if let Some(zero) = negative_zero_refused(ctx.dialect.negative_zero, c) {
        base = restrict(&base, &[zero]).map_err(|_| {
            Fail::Limit("a range without negative zero needs too many automaton states".into())
        })?;
    }
    if c.multiples.is_empty() && !c.non_integer && !excluded {
        return Ok(base);
    }
    constrained(c, &base).or_else(|fail| {
        // a modulus past the automata's limit may still leave few values in range
        let Some(values) = listed_multiples(c) else {
            return Err(fail);
        };
        let points = values
            .iter()
            .map(|v| real_range(Some(&(v.clone(), false)), Some(&(v.clone(), false))));
        let too_many = |_| Fail::Limit("the multiples within these bounds are too many".into());
        let points = Dfa::from_rx(&rx::alt(points.collect::<Vec<_>>())).map_err(too_many)?;
        restrict(&base, &[points]).map_err(too_many)
    })
}

/// `base` (the number texts within `c`'s bounds) restricted by automata to the
/// multiples, excluded multiples, holes and integer-ness `c` asks.
fn constrained(c: &NumCons, base: &Rx) -> Step<Rx> {
    let mut dfas = c
        .multiples
        .iter()
        .map(|m| multiple_dfa(m).map_err(|why| Fail::unsupported("multipleOf", why)))
        .collect::<Step<Vec<_>>>()?;
    for m in &c.not_multiples {
        let multiples = multiple_dfa(m).map_err(|why| Fail::unsupported("not", why))?;
        dfas.push(multiples.complement());
    }
    if !c.holes.is_empty() {
        // every decimal spelling of each excluded value (`2`, `2.0`, `2.00`...)
        let points = c
            .holes
            .iter()
            .map(|h| real_range(Some(&(h.clone(), false)), Some(&(h.clone(), false))))
            .collect::<Vec<_>>();
        dfas.push(
            Dfa::from_rx(&rx::alt(points))
                .map_err(too_large)?
                .complement(),
        );
    }
    if c.non_integer {
        dfas.push(non_integer_dfa());
    }
    restrict(base, &dfas).map_err(|_| {
        Fail::Limit("multipleOf with these bounds needs too many automaton states".into())
    })
}
