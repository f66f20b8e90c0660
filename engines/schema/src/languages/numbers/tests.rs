//! Numeric regexes against exact arithmetic, on random bounds and values.

use super::*;
use crate::testing::{full_match, tree_matcher as matcher};
use proptest::prelude::*;

fn dec(n: i64, frac_digits: u32) -> Decimal {
    let s = if frac_digits == 0 {
        n.to_string()
    } else {
        format!("{n}e-{frac_digits}")
    };
    Decimal::parse(&s).unwrap()
}

/// Every plain spelling of a value: trailing zeros, and `-0` for zero.
fn spellings(v: &Decimal) -> Vec<String> {
    let p = v.plain();
    let mut out = vec![
        p.clone(),
        if p.contains('.') {
            format!("{p}00")
        } else {
            format!("{p}.0")
        },
    ];
    if v.is_zero() {
        out.push("-0".into());
        out.push("-0.000".into());
    }
    out
}

proptest! {
    #[test]
    fn integer_range_matches_iff_between(lo in -300i64..300, span in 0i64..400, n in -800i64..800, open_lo in any::<bool>(), open_hi in any::<bool>()) {
        let (l, h) = (Decimal::from_u64(0).add(&dec(lo, 0)), dec(lo + span, 0));
        let m = matcher(&integer_range((!open_lo).then_some(&l), (!open_hi).then_some(&h)));
        let inside = (open_lo || n >= lo) && (open_hi || n <= lo + span);
        for s in spellings(&dec(n, 0)) {
            prop_assert_eq!(m(&s), inside, "{}", s);
        }
        let half = format!("{}.5", n);
        prop_assert!(!m(&half));
    }

    #[test]
    fn real_range_matches_iff_between(lo in -2000i64..2000, span in 0i64..3000, n in -6000i64..6000, scale in 0u32..4, el in any::<bool>(), eh in any::<bool>(), open in 0u8..3) {
        let (l, h, v) = (dec(lo, 2), dec(lo + span, 2), dec(n, scale));
        let lb = (open != 1).then(|| (l.clone(), el));
        let hb = (open != 2).then(|| (h.clone(), eh));
        let m = matcher(&real_range(lb.as_ref(), hb.as_ref()));
        let above = lb.as_ref().is_none_or(|(b, e)| if *e { v > *b } else { v >= *b });
        let below = hb.as_ref().is_none_or(|(b, e)| if *e { v < *b } else { v <= *b });
        for s in spellings(&v) {
            prop_assert_eq!(m(&s), above && below, "{} in {:?}..{:?}", s, lb, hb);
        }
    }

    #[test]
    fn multiples_match_iff_divisible(p in prop::sample::select(vec![1u64, 2, 3, 4, 5, 6, 8, 10, 12, 15, 25]), q in 0u32..3, n in -3000i64..3000, scale in 0u32..4) {
        let step = dec(p as i64, q);
        let v = dec(n, scale);
        let x = restrict(&real_range(None, None), &[multiple_dfa(&step).unwrap()]).unwrap();
        let m = matcher(&x);
        for s in spellings(&v) {
            prop_assert_eq!(m(&s), v.is_multiple_of(&step), "{} multiple of {}", s, step.plain());
        }
    }
}

#[test]
fn exponent_forms_follow_the_sign() {
    let pos = matcher(&signed_exponent_form(Some(true), true));
    for (t, ok) in [
        ("1e5", true),
        ("0", true),
        ("-0.0e3", true),
        ("-1e-5", false),
        ("0.0001E+2", true),
    ] {
        assert_eq!(pos(t), ok, "{t}");
    }
    let strict = matcher(&signed_exponent_form(Some(true), false));
    assert!(!strict("0e7") && !strict("-0") && strict("0.01e1"));
}

#[test]
fn non_integers_have_a_nonzero_fraction_digit() {
    let x = restrict(&real_range(None, None), &[non_integer_dfa()]).unwrap();
    let m = matcher(&x);
    assert!(m("1.5") && m("-0.001") && !m("2") && !m("2.000") && !m("-0.0"));
}

#[test]
fn draft_04_integers_have_no_fraction() {
    use crate::{compile, Dialect};
    let full = full_match;
    let old =
        r#"{"$schema":"http://json-schema.org/draft-04/schema#","type":"integer","maximum":20}"#;
    let new = r#"{"type":"integer","maximum":20}"#;
    let (old, new) = (
        compile(old, &Dialect::default()).unwrap(),
        compile(new, &Dialect::default()).unwrap(),
    );
    for t in ["0", "-0", "20", "-7"] {
        assert!(full(&old, t) && full(&new, t), "{t}");
    }
    assert!(!full(&old, "12.0") && full(&new, "12.0"));
    assert!(!full(&old, "21") && !full(&new, "21.0"));
}
