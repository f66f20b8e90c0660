//! Numeric constraints as exact regexes over plain decimal texts.
//!
//! A number text without exponent, `-?I(.F)?`, has the value `±I.F`, so comparing it
//! with a bound is comparing digit strings: the integer part `I` by length and then
//! digit by digit ([`nat_range`]), and, where `I` ties with the bound's, the fraction
//! `F` digit by digit against the bound's fraction padded with zeros. A range is split
//! by sign: negative values are `-` and a magnitude range, zero has the spellings
//! `-?0(\.0+)?`, positive values a magnitude range. Integers are the texts whose
//! fraction is all zeros.
//!
//! `multipleOf` and "not an integer" are automata ([`multiple_dfa`]) intersected with the
//! range's regex and turned back into a regex (see [`crate::languages::eliminate`]).

use crate::languages::automaton::{Dfa, TooLarge};
use crate::languages::charset::CharSet;
use crate::languages::decimal::Decimal;
use crate::languages::digits::{decimal_digits, nat_range, Digits};
use crate::languages::eliminate::to_rx_or_graph;
use crate::languages::rx::{self, Rx};

/// One side of a range: the bound and whether it is exclusive.
pub type Bound = (Decimal, bool);

/// Reads of `multipleOf` whose automaton would exceed this many states are refused.
const MAX_MODULUS_STATES: u64 = 2_000;

fn d_any() -> Rx {
    Digits::Decimal.class(0, 9)
}

fn digit(d: u8) -> Rx {
    Digits::Decimal.class(d, d)
}

/// A language of fraction digit strings: whether it holds the empty string (no
/// fraction), and the regex of its nonempty members.
type Frac = (bool, Rx);

fn possibly_empty(f: &Frac) -> Rx {
    rx::alt([if f.0 { rx::empty() } else { rx::never() }, f.1.clone()])
}

fn frac_text(f: &Frac) -> Rx {
    possibly_empty(&(f.0, rx::concat([rx::lit("."), f.1.clone()])))
}

/// Fractions `X` with `0.X >= 0.f` (`>` if `excl`); `f` has no trailing zero.
fn frac_ge(f: &[u8], excl: bool) -> Frac {
    match f.split_first() {
        None if excl => (
            false,
            rx::concat([
                rx::star(d_any()),
                Digits::Decimal.class(1, 9),
                rx::star(d_any()),
            ]),
        ),
        None => (true, rx::repeat(d_any(), 1, None)),
        Some((&d, rest)) => {
            let above = if d < 9 {
                rx::concat([Digits::Decimal.class(d + 1, 9), rx::star(d_any())])
            } else {
                rx::never()
            };
            (
                false,
                rx::alt([
                    above,
                    rx::concat([digit(d), possibly_empty(&frac_ge(rest, excl))]),
                ]),
            )
        }
    }
}

/// Fractions `X` with `0.X <= 0.f` (`<` if `excl`).
fn frac_le(f: &[u8], excl: bool) -> Frac {
    match f.split_first() {
        None if excl => (false, rx::never()),
        None => (true, rx::repeat(digit(0), 1, None)),
        Some((&d, rest)) => {
            let below = if d > 0 {
                rx::concat([Digits::Decimal.class(0, d - 1), rx::star(d_any())])
            } else {
                rx::never()
            };
            (
                true,
                rx::alt([
                    below,
                    rx::concat([digit(d), possibly_empty(&frac_le(rest, excl))]),
                ]),
            )
        }
    }
}

/// Fractions between two bounds, both tight so far at position `i`.
fn frac_between(lo: &[u8], el: bool, hi: &[u8], eh: bool) -> Frac {
    if lo.is_empty() && !el {
        return frac_le(hi, eh);
    }
    if hi.is_empty() {
        // 0.X <= 0 leaves zeros only, and those sit on the lower bound.
        return if lo.is_empty() && !el && !eh {
            (true, rx::repeat(digit(0), 1, None))
        } else {
            (false, rx::never())
        };
    }
    let (a, b) = (lo.first().copied().unwrap_or(0), hi[0]);
    let lo_rest = if lo.is_empty() { lo } else { &lo[1..] };
    // Stopping here gives the value of the common prefix, below `hi`, above `lo` only if
    // `lo` has nothing left.
    let eps = lo.is_empty() && !el;
    if a == b {
        let inner = frac_between(lo_rest, el, &hi[1..], eh);
        return (eps, rx::concat([digit(a), possibly_empty(&inner)]));
    }
    let low = if lo.is_empty() {
        frac_ge(&[], el)
    } else {
        frac_ge(lo_rest, el)
    };
    let mut parts = vec![rx::concat([digit(a), possibly_empty(&low)])];
    if a + 1 < b {
        parts.push(rx::concat([
            Digits::Decimal.class(a + 1, b - 1),
            rx::star(d_any()),
        ]));
    }
    parts.push(rx::concat([
        digit(b),
        possibly_empty(&frac_le(&hi[1..], eh)),
    ]));
    (eps, rx::alt(parts))
}

fn canonical_nat(s: &str) -> Vec<u8> {
    decimal_digits(s)
}

fn succ(n: &str) -> Vec<u8> {
    canonical_nat(
        &Decimal::parse(n)
            .unwrap()
            .add(&Decimal::from_u64(1))
            .plain(),
    )
}

/// Nonnegative magnitudes `m` with `lo <= m <= hi` (bounds nonnegative, flags per side).
fn magnitude(lo: &Bound, hi: Option<&Bound>) -> Rx {
    let (il, fl) = lo.0.split();
    let (fl, el) = (decimal_digits(&fl), lo.1);
    let any_frac = frac_text(&(true, rx::repeat(d_any(), 1, None)));
    let Some((h, eh)) = hi else {
        return rx::alt([
            rx::concat([rx::lit(&il), frac_text(&frac_ge(&fl, el))]),
            rx::concat([nat_range(&succ(&il), None), any_frac]),
        ]);
    };
    let (ih, fh) = h.split();
    let fh = decimal_digits(&fh);
    if il == ih {
        return rx::concat([rx::lit(&il), frac_text(&frac_between(&fl, el, &fh, *eh))]);
    }
    let mut parts = vec![rx::concat([rx::lit(&il), frac_text(&frac_ge(&fl, el))])];
    let (mid_lo, mid_hi) = (
        Decimal::parse(&il).unwrap().add(&Decimal::from_u64(1)),
        Decimal::parse(&ih).unwrap(),
    );
    if mid_lo < mid_hi {
        let top = canonical_nat(&mid_hi.sub(&Decimal::from_u64(1)).plain());
        parts.push(rx::concat([
            nat_range(&canonical_nat(&mid_lo.plain()), Some(&top)),
            any_frac,
        ]));
    }
    parts.push(rx::concat([rx::lit(&ih), frac_text(&frac_le(&fh, *eh))]));
    rx::alt(parts)
}

fn contains_zero(lo: Option<&Bound>, hi: Option<&Bound>) -> bool {
    let zero = Decimal::zero();
    lo.is_none_or(|(l, e)| if *e { *l < zero } else { *l <= zero })
        && hi.is_none_or(|(h, e)| if *e { *h > zero } else { *h >= zero })
}

/// Texts of the values in the range, fractions allowed.
pub fn real_range(lo: Option<&Bound>, hi: Option<&Bound>) -> Rx {
    if lo.is_none() && hi.is_none() {
        // every plain decimal, written as short as it can be: unconstrained numbers
        // repeat throughout schemas' regexes
        return rx::concat([
            signed_natural(),
            rx::opt(rx::concat([rx::lit("."), rx::repeat(d_any(), 1, None)])),
        ]);
    }
    let zero = Decimal::zero();
    let mut parts = Vec::new();
    if lo.is_none_or(|(l, _)| *l < zero) {
        let m_lo = match hi {
            Some((h, e)) if *h < zero => (h.negate(), *e),
            _ => (zero.clone(), true),
        };
        let m_hi = lo.map(|(l, e)| (l.negate(), *e));
        parts.push(rx::concat([rx::lit("-"), magnitude(&m_lo, m_hi.as_ref())]));
    }
    if contains_zero(lo, hi) {
        parts.push(zero_texts());
    }
    if hi.is_none_or(|(h, _)| *h > zero) {
        let m_lo = match lo {
            Some((l, e)) if *l > zero => (l.clone(), *e),
            _ => (zero.clone(), true),
        };
        parts.push(magnitude(&m_lo, hi));
    }
    rx::alt(parts)
}

fn zero_texts() -> Rx {
    rx::concat([
        rx::opt(rx::lit("-")),
        rx::lit("0"),
        rx::opt(rx::concat([rx::lit("."), rx::repeat(digit(0), 1, None)])),
    ])
}

/// Integer bounds, inclusive: the least integer in range and the greatest.
pub fn integer_bounds(
    lo: Option<&Bound>,
    hi: Option<&Bound>,
) -> (Option<Decimal>, Option<Decimal>) {
    let one = Decimal::from_u64(1);
    let l = lo.map(|(l, e)| {
        if *e && l.is_integer() {
            l.add(&one)
        } else {
            l.ceil()
        }
    });
    let h = hi.map(|(h, e)| {
        if *e && h.is_integer() {
            h.sub(&one)
        } else {
            h.floor()
        }
    });
    (l, h)
}

/// Texts of the integers in the inclusive range (`1`, `1.0`, `-0`).
/// `-?(0|[1-9][0-9]*)`: every integer without a fraction.
fn signed_natural() -> Rx {
    rx::concat([
        rx::opt(rx::lit("-")),
        rx::alt([rx::lit("0"), nat_range(&[1], None)]),
    ])
}

pub fn integer_range(lo: Option<&Decimal>, hi: Option<&Decimal>) -> Rx {
    if let (Some(l), Some(h)) = (lo, hi) {
        if l > h {
            return rx::never();
        }
    }
    let zeros = rx::opt(rx::concat([rx::lit("."), rx::repeat(digit(0), 1, None)]));
    if lo.is_none() && hi.is_none() {
        return rx::concat([signed_natural(), zeros]);
    }
    let zero = Decimal::zero();
    let nat = |d: &Decimal| canonical_nat(&d.abs().plain());
    let mut parts = Vec::new();
    if lo.is_none_or(|l| *l < zero) {
        let m_lo = match hi {
            Some(h) if *h < zero => nat(h),
            _ => vec![1],
        };
        let m_hi = lo.map(nat);
        parts.push(rx::concat([
            rx::lit("-"),
            nat_range(&m_lo, m_hi.as_deref()),
        ]));
    }
    if lo.is_none_or(|l| *l <= zero) && hi.is_none_or(|h| *h >= zero) {
        parts.push(rx::concat([rx::opt(rx::lit("-")), rx::lit("0")]));
    }
    if hi.is_none_or(|h| *h > zero) {
        let m_lo = match lo {
            Some(l) if *l > zero => nat(l),
            _ => vec![1],
        };
        parts.push(nat_range(&m_lo, hi.map(nat).as_deref()));
    }
    rx::concat([rx::alt(parts), zeros])
}

/// Number texts (exponents allowed) whose sign satisfies bounds at zero: `Some(true)`
/// positive, `Some(false)` negative, inclusive of zero when `zero`.
pub fn signed_exponent_form(sign: Option<bool>, zero: bool) -> Rx {
    let int = rx::alt([
        rx::lit("0"),
        rx::concat([Digits::Decimal.class(1, 9), rx::star(d_any())]),
    ]);
    let frac = rx::opt(rx::concat([rx::lit("."), rx::repeat(d_any(), 1, None)]));
    let exp = rx::opt(rx::concat([
        rx::set(CharSet::from_ranges(vec![(69, 69), (101, 101)])),
        rx::opt(rx::set(CharSet::from_ranges(vec![(43, 43), (45, 45)]))),
        rx::repeat(d_any(), 1, None),
    ]));
    let nonzero = rx::alt([
        rx::concat([Digits::Decimal.class(1, 9), rx::star(d_any()), frac.clone()]),
        rx::concat([
            rx::lit("0."),
            rx::star(digit(0)),
            Digits::Decimal.class(1, 9),
            rx::star(d_any()),
        ]),
    ]);
    let zero_m = rx::concat([
        rx::lit("0"),
        rx::opt(rx::concat([rx::lit("."), rx::repeat(digit(0), 1, None)])),
    ]);
    let all = rx::concat([int, frac]);
    let body = match (sign, zero) {
        (None, _) => rx::concat([rx::opt(rx::lit("-")), all]),
        (Some(true), true) => rx::alt([all, rx::concat([rx::lit("-"), zero_m])]),
        (Some(true), false) => nonzero,
        (Some(false), true) => rx::alt([rx::concat([rx::lit("-"), all]), zero_m]),
        (Some(false), false) => rx::concat([rx::lit("-"), nonzero]),
    };
    rx::concat([body, exp])
}

/// The automaton of decimal texts whose value is a multiple of `m > 0` (any text over
/// `-`, digits and `.`; intersect it with a well-formed language).
///
/// With `m = p / 10^q`, a value is a multiple iff the integer read from its digits up to
/// the `q`-th fraction digit is divisible by `p` and every later fraction digit is zero.
/// States: the start; `I(r)` in the integer part with remainder `r`; `F(j, r)` after `j`
/// fraction digits (`F(0, r)` just after the point).
pub fn multiple_dfa(m: &Decimal) -> Result<Dfa, String> {
    let (p, q) = m.as_fraction();
    let states = p
        .to_u64()
        .filter(|&p| p.saturating_mul(q + 2) <= MAX_MODULUS_STATES);
    let p = states
        .ok_or_else(|| format!("multipleOf {} needs too many automaton states", m.plain()))?
        as usize;
    let q = q as usize;
    let int = |r: usize| 1 + r;
    let frac = |j: usize, r: usize| 1 + p + j * p + r;
    let n = 1 + p + (q + 1) * p;
    let mut dfa = Dfa {
        edges: vec![Vec::new(); n],
        accept: vec![false; n],
    };
    let digit = |d: usize| CharSet::single(char::from(b'0' + d as u8));
    let pow10 = |e: usize| (0..e).fold(1 % p, |a, _| a * 10 % p);
    dfa.edges[0].push((CharSet::single('-'), 0));
    for d in 0..10 {
        dfa.edges[0].push((digit(d), int(d % p)));
    }
    for r in 0..p {
        dfa.accept[int(r)] = r * pow10(q) % p == 0;
        for d in 0..10 {
            dfa.edges[int(r)].push((digit(d), int((r * 10 + d) % p)));
        }
        dfa.edges[int(r)].push((CharSet::single('.'), frac(0, r)));
        for j in 0..=q {
            dfa.accept[frac(j, r)] = r * pow10(q - j) % p == 0;
            if j < q {
                for d in 0..10 {
                    dfa.edges[frac(j, r)].push((digit(d), frac(j + 1, (r * 10 + d) % p)));
                }
            } else {
                dfa.edges[frac(j, r)].push((digit(0), frac(j, r)));
            }
        }
    }
    Ok(dfa)
}

/// `x` restricted by automata (all must accept), as a regex.
pub fn restrict(x: &Rx, by: &[Dfa]) -> Result<Rx, TooLarge> {
    let mut d = Dfa::from_rx(x)?.minimize();
    for b in by {
        d = d.intersect(b)?.minimize();
    }
    to_rx_or_graph(&d).ok_or(TooLarge)
}

/// Texts with a nonzero fraction digit: the non-integers.
pub fn non_integer_dfa() -> Dfa {
    let x = rx::concat([
        rx::opt(rx::lit("-")),
        rx::repeat(d_any(), 1, None),
        rx::lit("."),
        rx::star(d_any()),
        Digits::Decimal.class(1, 9),
        rx::star(d_any()),
    ]);
    Dfa::from_rx(&x).expect("a small regex")
}

#[cfg(test)]
mod tests;
