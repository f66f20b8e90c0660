//! Ranges of digit strings as regexes: the arithmetic core of numeric bounds and of
//! `\uXXXX` escapes.
//!
//! [`fixed_range`] matches the digit strings of one width whose value lies in
//! `[lo, hi]`, in any base; a digit is printed by a [`Digits`] alphabet (decimal, or
//! hexadecimal in either case). The construction walks both bounds from the left: while
//! they agree the digit is forced; where they first differ the string takes the low
//! digit and stays above the rest of `lo`, a digit strictly between (then anything), or
//! the high digit and stays below the rest of `hi`. Its size is linear in the width.
//! [`nat_range`] builds on it for decimal naturals without leading zeros, one width at
//! a time, with an open upper end as "more digits than `lo`".

use crate::languages::charset::CharSet;
use crate::languages::rx::{self, Rx};

/// How digit values are spelled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Digits {
    Decimal,
    /// Hexadecimal, each letter digit in lower or upper case (JSON's `\uXXXX`).
    HexAnyCase,
}

impl Digits {
    pub fn base(self) -> u8 {
        match self {
            Digits::Decimal => 10,
            Digits::HexAnyCase => 16,
        }
    }

    /// The characters spelling the digit values `lo..=hi`.
    pub fn class(self, lo: u8, hi: u8) -> Rx {
        let mut ranges = Vec::new();
        let dec_hi = hi.min(9);
        if lo <= dec_hi {
            ranges.push(((b'0' + lo) as u32, (b'0' + dec_hi) as u32));
        }
        if hi >= 10 {
            let (a, b) = (lo.max(10) - 10, hi - 10);
            ranges.push(((b'a' + a) as u32, (b'a' + b) as u32));
            ranges.push(((b'A' + a) as u32, (b'A' + b) as u32));
        }
        rx::set(CharSet::from_ranges(ranges))
    }

    fn any(self) -> Rx {
        self.class(0, self.base() - 1)
    }
}

/// Digit strings of exactly `lo.len()` digits (`lo` and `hi` have equal length, given
/// as digit values, most significant first) with `lo <= value <= hi`.
pub fn fixed_range(lo: &[u8], hi: &[u8], d: Digits) -> Rx {
    debug_assert_eq!(lo.len(), hi.len());
    bounded(Some(lo), Some(hi), d, lo.len())
}

fn rest(x: Option<&[u8]>) -> Option<&[u8]> {
    x.map(|v| &v[1..])
}

fn bounded(lo: Option<&[u8]>, hi: Option<&[u8]>, d: Digits, width: usize) -> Rx {
    if width == 0 {
        return rx::empty();
    }
    let max = d.base() - 1;
    let lo = lo.filter(|l| l.iter().any(|&x| x != 0));
    let hi = hi.filter(|h| h.iter().any(|&x| x != max));
    let (a, b) = (lo.map_or(0, |l| l[0]), hi.map_or(max, |h| h[0]));
    if a > b {
        return rx::never();
    }
    if a == b {
        return rx::concat([d.class(a, a), bounded(rest(lo), rest(hi), d, width - 1)]);
    }
    // a bound whose remaining digits are all 0 (low) or all max (high) takes its first
    // digit's whole block: fold it into the middle class (`0[0-9]|1[0-9]` is `[01][0-9]`)
    let lo = lo.filter(|l| l[1..].iter().any(|&x| x != 0));
    let hi = hi.filter(|h| h[1..].iter().any(|&x| x != max));
    let mut parts = Vec::new();
    let (mut mid_lo, mut mid_hi) = (a, b);
    if lo.is_some() {
        parts.push(rx::concat([
            d.class(a, a),
            bounded(rest(lo), None, d, width - 1),
        ]));
        mid_lo = a + 1;
    }
    if hi.is_some() {
        mid_hi = b - 1;
    }
    if mid_lo <= mid_hi {
        let tail = rx::repeat(d.any(), (width - 1) as u32, Some((width - 1) as u32));
        parts.push(rx::concat([d.class(mid_lo, mid_hi), tail]));
    }
    if hi.is_some() {
        parts.push(rx::concat([
            d.class(b, b),
            bounded(None, rest(hi), d, width - 1),
        ]));
    }
    rx::alt(parts)
}

/// Decimal digit values of a natural number's canonical spelling.
pub fn decimal_digits(s: &str) -> Vec<u8> {
    s.bytes().map(|b| b - b'0').collect()
}

/// Decimal naturals spelled without leading zeros (`0` alone for zero) with value in
/// `[lo, hi]` (`hi` = `None`: no upper bound). Bounds are canonical digit strings.
pub fn nat_range(lo: &[u8], hi: Option<&[u8]>) -> Rx {
    if let Some(h) = hi {
        if (h.len(), h) < (lo.len(), lo) {
            return rx::never();
        }
    }
    if hi.is_none() && lo.first() == Some(&1) && lo[1..].iter().all(|&d| d == 0) {
        // from a power of ten up: every spelling of that width or more, one piece
        return rx::concat([
            Digits::Decimal.class(1, 9),
            rx::repeat(Digits::Decimal.any(), lo.len() as u32 - 1, None),
        ]);
    }
    let mut parts = Vec::new();
    let top = hi.map_or(lo.len(), |h| h.len());
    for w in lo.len()..=top {
        let low: Vec<u8> = if w == lo.len() {
            lo.to_vec()
        } else {
            first_of_width(w)
        };
        let high: Vec<u8> = match hi {
            Some(h) if w == h.len() => h.to_vec(),
            _ => vec![9; w],
        };
        parts.push(fixed_range(&low, &high, Digits::Decimal));
    }
    if hi.is_none() {
        let any = Digits::Decimal.any();
        let n = lo.len() as u32;
        parts.push(rx::concat([
            Digits::Decimal.class(1, 9),
            rx::repeat(any, n, None),
        ]));
    }
    rx::alt(parts)
}

/// The smallest natural of `w` digits without a leading zero (`0` for width one).
fn first_of_width(w: usize) -> Vec<u8> {
    let mut v = vec![0; w];
    if w > 1 {
        v[0] = 1;
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::languages::rx::print;
    use crate::testing::matcher;
    use proptest::prelude::*;

    #[test]
    fn hex_ranges_take_either_case() {
        let m = matcher(&print(&fixed_range(
            &[13, 8, 0, 0],
            &[13, 11, 15, 15],
            Digits::HexAnyCase,
        )));
        for (t, ok) in [
            ("d800", true),
            ("DBFF", true),
            ("dBfF", true),
            ("dc00", false),
            ("d7ff", false),
        ] {
            assert_eq!(m(t), ok, "{t}");
        }
    }

    proptest! {
        #[test]
        fn nat_range_matches_exactly_the_naturals_between(lo in 0u64..3000, span in 0u64..3000, n in 0u64..7000, open in any::<bool>()) {
            let hi = lo + span;
            let (l, h) = (decimal_digits(&lo.to_string()), decimal_digits(&hi.to_string()));
            let m = matcher(&print(&nat_range(&l, if open { None } else { Some(&h) })));
            let inside = n >= lo && (open || n <= hi);
            prop_assert_eq!(m(&n.to_string()), inside);
            let padded = format!("0{}", n);
            prop_assert!(!m(&padded));
        }
    }
}
