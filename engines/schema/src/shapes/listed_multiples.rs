//! Numbers with `multipleOf` between two bounds that hold few multiples, listed.
//!
//! A multiple is an automaton of remainders ([`crate::languages::numbers::multiple_dfa`]), one
//! state per remainder: `multipleOf: 8721` (the least common multiple of 6.75, 19, 9.5
//! and 2.125) needs thousands, and is refused past the modulus limit. Between two
//! bounds there may be only a handful of such multiples, and a finite set of numbers
//! is exact however large its modulus: each value that meets every constraint (every
//! `multipleOf`, no excluded multiple, no hole, integer or not as required) is listed,
//! and the number texts are those of the listed values. Values are compared as
//! integers at one common scale (`i128`), so the check is exact; schemas whose values
//! do not fit are left to the automata.

use crate::languages::decimal::Decimal;
use crate::shapes::shape::NumCons;

/// The most multiples between the bounds that are listed.
const MAX_LISTED: i128 = 4096;

/// The most digits of a value at the common scale: far inside `i128`, with room for
/// the products of the walk.
const MAX_DIGITS: usize = 30;

/// The values `c` admits, when it has a `multipleOf`, both bounds, and at most
/// [`MAX_LISTED`] common multiples of its moduli between them; `None` otherwise.
pub fn listed_multiples(c: &NumCons) -> Option<Vec<Decimal>> {
    if c.multiples.is_empty() {
        return None;
    }
    let ((lo, lo_open), (hi, hi_open)) = (c.lo.as_ref()?, c.hi.as_ref()?);
    let all = [lo, hi]
        .into_iter()
        .chain(&c.multiples)
        .chain(&c.not_multiples)
        .chain(&c.holes);
    let q = all.map(|d| d.split().1.len()).max()?;
    let at = |d: &Decimal| scaled(d, q);
    let (lo, hi) = (at(lo)?, at(hi)?);
    let multiples = c.multiples.iter().map(at).collect::<Option<Vec<_>>>()?;
    let not_multiples = c.not_multiples.iter().map(at).collect::<Option<Vec<_>>>()?;
    let holes = c.holes.iter().map(at).collect::<Option<Vec<_>>>()?;
    // every value is a multiple of their least common multiple: the walk's step
    let mut step: i128 = 1;
    for &m in &multiples {
        if m <= 0 {
            return None;
        }
        step = (step / gcd(step, m)).checked_mul(m)?;
    }
    let first = lo.div_euclid(step) * step;
    let first = if first < lo { first + step } else { first };
    let last = hi.div_euclid(step) * step;
    if last < first {
        return Some(Vec::new());
    }
    if (last - first) / step >= MAX_LISTED {
        return None;
    }
    let unit = 10i128.checked_pow(q as u32)?;
    let mut out = Vec::new();
    let mut v = first;
    while v <= last {
        let admitted = !(*lo_open && v == lo || *hi_open && v == hi)
            && multiples.iter().all(|m| v % m == 0)
            && not_multiples.iter().all(|m| v % m != 0)
            && !holes.contains(&v)
            && !(c.integer && v % unit != 0)
            && !(c.non_integer && v % unit == 0);
        if admitted {
            out.push(unscaled(v, q));
        }
        v += step;
    }
    Some(out)
}

fn gcd(a: i128, b: i128) -> i128 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// `d * 10^q` as an integer (`q` at least `d`'s fraction digits), if it fits.
fn scaled(d: &Decimal, q: usize) -> Option<i128> {
    let (int, frac) = d.split();
    let digits = format!("{int}{frac:0<q$}");
    if digits.len() > MAX_DIGITS {
        return None;
    }
    let v: i128 = digits.parse().ok()?;
    Some(if d.is_negative() { -v } else { v })
}

/// The decimal `v / 10^q`.
fn unscaled(v: i128, q: usize) -> Decimal {
    let digits = format!("{:0>width$}", v.unsigned_abs(), width = q + 1);
    let (int, frac) = digits.split_at(digits.len() - q);
    let sign = if v < 0 { "-" } else { "" };
    Decimal::parse(&format!("{sign}{int}.{frac}0")).expect("a decimal spelling")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Hundredths as a decimal.
    fn cents(v: i64) -> Decimal {
        Decimal::parse(&format!(
            "{}{}.{:02}",
            if v < 0 { "-" } else { "" },
            v.abs() / 100,
            v.abs() % 100
        ))
        .unwrap()
    }

    proptest! {
        /// Against every hundredth between the bounds: moduli, excluded moduli and
        /// holes in hundredths, both bounds open or closed, integers or not.
        #[test]
        fn listing_matches_every_hundredth(
            lo in -3000i64..3000,
            width in 0i64..3000,
            (lo_open, hi_open) in (any::<bool>(), any::<bool>()),
            multiples in prop::collection::vec(1i64..400, 1..3),
            not_multiples in prop::collection::vec(1i64..400, 0..3),
            holes in prop::collection::vec(-3000i64..6000, 0..3),
            kind in 0u8..3,
        ) {
            let hi = lo + width;
            let c = NumCons {
                lo: Some((cents(lo), lo_open)),
                hi: Some((cents(hi), hi_open)),
                multiples: multiples.iter().map(|&m| cents(m)).collect(),
                not_multiples: not_multiples.iter().map(|&m| cents(m)).collect(),
                holes: holes.iter().map(|&h| cents(h)).collect(),
                integer: kind == 1,
                non_integer: kind == 2,
            };
            let want: Vec<Decimal> = (lo..=hi)
                .filter(|&v| !(lo_open && v == lo || hi_open && v == hi))
                .filter(|&v| multiples.iter().all(|m| v % m == 0))
                .filter(|&v| not_multiples.iter().all(|m| v % m != 0))
                .filter(|v| !holes.contains(v))
                .filter(|&v| kind != 1 || v % 100 == 0)
                .filter(|&v| kind != 2 || v % 100 != 0)
                .map(cents)
                .collect();
            prop_assert_eq!(listed_multiples(&c), Some(want));
        }
    }

    fn d(s: &str) -> Decimal {
        Decimal::parse(s).unwrap()
    }

    fn listed(c: &NumCons) -> Option<Vec<String>> {
        listed_multiples(c).map(|v| v.iter().map(Decimal::plain).collect())
    }

    #[test]
    fn multiples_between_bounds_are_listed_with_every_constraint() {
        // num4's language: multiples of 8721 strictly between -100000 and -10000, but
        // not of 2, 5, 7, 11 or 37, and not -78489
        let c = NumCons {
            lo: Some((d("-100000"), true)),
            hi: Some((d("-10000"), true)),
            multiples: vec![d("6.75"), d("19"), d("9.5"), d("2.125")],
            not_multiples: ["2", "6.5", "5", "7", "11", "37"].map(d).to_vec(),
            holes: vec![d("-78489")],
            ..NumCons::default()
        };
        let want: Vec<String> = (2..=11)
            .map(|k| -8721 * k)
            .filter(|v: &i64| [2, 5, 7, 11, 37].iter().all(|m| v % m != 0))
            .filter(|v| v % 13 != 0 && *v != -78489)
            .map(|v| v.to_string())
            .collect();
        assert_eq!(listed(&c), Some(want.clone()));
        assert!(!want.is_empty() && want.len() < 10, "{want:?}");
    }

    #[test]
    fn fractions_bounds_and_flags_are_exact() {
        let c = |lo: &str, lo_open, hi: &str, hi_open| NumCons {
            lo: Some((d(lo), lo_open)),
            hi: Some((d(hi), hi_open)),
            multiples: vec![d("0.25")],
            ..NumCons::default()
        };
        assert_eq!(
            listed(&c("-0.5", false, "0.5", true)),
            Some(["-0.5", "-0.25", "0", "0.25"].map(String::from).to_vec())
        );
        assert_eq!(
            listed(&c("0.3", false, "0.7", false)),
            Some(vec!["0.5".to_string()])
        );
        let integers = NumCons {
            integer: true,
            ..c("-1", true, "1.75", false)
        };
        assert_eq!(
            listed(&integers),
            Some(["0", "1"].map(String::from).to_vec())
        );
        let fractions = NumCons {
            non_integer: true,
            ..c("0", false, "1", false)
        };
        assert_eq!(
            listed(&fractions),
            Some(["0.25", "0.5", "0.75"].map(String::from).to_vec())
        );
        assert_eq!(listed(&c("0.3", false, "0.4", false)), Some(vec![]));
        // too many multiples, or an open side: left to the automata
        assert_eq!(listed(&c("0", false, "100000", false)), None);
        let open = NumCons {
            hi: None,
            ..c("0", false, "1", false)
        };
        assert_eq!(listed(&open), None);
        let no_modulus = NumCons {
            multiples: vec![],
            ..c("0", false, "1", false)
        };
        assert_eq!(listed(&no_modulus), None);
    }
}
