//! Exact decimal numbers, as written in a schema (bounds, `multipleOf`, `enum`).
//!
//! A JSON number is a decimal, so it is kept as one: a sign, a string of significant
//! digits with no leading or trailing zero, and a power of ten (`value = digits x
//! 10^scale`). Zero has no digits and no sign. Nothing is rounded, so `1e400`, `0.1`
//! and 20-digit integers compare and print exactly, and the regexes built from them are
//! exact too.

use std::cmp::Ordering;

/// Powers of ten beyond this are refused: their plain spelling would be huge.
pub const MAX_SCALE: i64 = 4096;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Decimal {
    neg: bool,
    digits: Vec<u8>,
    scale: i64,
}

impl Decimal {
    pub fn zero() -> Decimal {
        Decimal {
            neg: false,
            digits: Vec::new(),
            scale: 0,
        }
    }

    /// Parses JSON number syntax (`-?int(.frac)?([eE][+-]?exp)?`); `None` if it is not
    /// one, or its exponent passes [`MAX_SCALE`].
    pub fn parse(text: &str) -> Option<Decimal> {
        let (neg, rest) = match text.strip_prefix('-') {
            Some(r) => (true, r),
            None => (false, text),
        };
        let (mantissa, exp) = match rest.find(['e', 'E']) {
            Some(i) => (&rest[..i], rest[i + 1..].parse::<i64>().ok()?),
            None => (rest, 0),
        };
        let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        if int.is_empty() || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
            return None;
        }
        let digits: Vec<u8> = int.bytes().chain(frac.bytes()).map(|b| b - b'0').collect();
        let d = Decimal::from_parts(neg, digits, exp - frac.len() as i64);
        (d.scale.abs() <= MAX_SCALE && d.digits.len() as i64 <= MAX_SCALE).then_some(d)
    }

    pub fn from_u64(n: u64) -> Decimal {
        Decimal::parse(&n.to_string()).expect("a natural parses")
    }

    fn from_parts(neg: bool, mut digits: Vec<u8>, mut scale: i64) -> Decimal {
        let lead = digits.iter().take_while(|&&d| d == 0).count();
        digits.drain(..lead);
        while digits.last() == Some(&0) {
            digits.pop();
            scale += 1;
        }
        if digits.is_empty() {
            return Decimal::zero();
        }
        Decimal { neg, digits, scale }
    }

    pub fn is_zero(&self) -> bool {
        self.digits.is_empty()
    }

    pub fn is_negative(&self) -> bool {
        self.neg
    }

    pub fn is_integer(&self) -> bool {
        self.scale >= 0
    }

    pub fn abs(&self) -> Decimal {
        Decimal {
            neg: false,
            ..self.clone()
        }
    }

    pub fn negate(&self) -> Decimal {
        if self.is_zero() {
            return self.clone();
        }
        Decimal {
            neg: !self.neg,
            ..self.clone()
        }
    }

    /// The magnitude's integer digits (canonical, `"0"` below one) and fraction digits
    /// (no trailing zero, empty for an integer).
    pub fn split(&self) -> (String, String) {
        let n = self.digits.len() as i64;
        let text: String = self.digits.iter().map(|d| (b'0' + d) as char).collect();
        if self.scale >= 0 {
            if self.is_zero() {
                return ("0".into(), String::new());
            }
            return (text + &"0".repeat(self.scale as usize), String::new());
        }
        let point = n + self.scale;
        if point <= 0 {
            ("0".into(), "0".repeat((-point) as usize) + &text)
        } else {
            (
                text[..point as usize].to_string(),
                text[point as usize..].to_string(),
            )
        }
    }

    /// The least integer not below `self`.
    pub fn ceil(&self) -> Decimal {
        self.round_toward(false)
    }

    /// The greatest integer not above `self`.
    pub fn floor(&self) -> Decimal {
        self.round_toward(true)
    }

    fn round_toward(&self, down: bool) -> Decimal {
        if self.is_integer() {
            return self.clone();
        }
        let (int, _) = self.split();
        let trunc = Decimal::parse(&int).expect("digits parse");
        let trunc = if self.neg { trunc.negate() } else { trunc };
        // Truncation moved toward zero; step away from it when that was the wrong way.
        if self.neg == down {
            let one = Decimal::from_u64(1);
            if down {
                trunc.sub(&one)
            } else {
                trunc.add(&one)
            }
        } else {
            trunc
        }
    }

    /// `(p, q)` with `self = p / 10^q`, `p` an integer (`q >= 0`).
    pub fn as_fraction(&self) -> (Decimal, u64) {
        if self.scale >= 0 {
            return (self.clone(), 0);
        }
        let p = Decimal {
            neg: self.neg,
            digits: self.digits.clone(),
            scale: 0,
        };
        (p, (-self.scale) as u64)
    }

    /// `self` as a `u64`, if it is a natural that fits.
    pub fn to_u64(&self) -> Option<u64> {
        if self.neg || !self.is_integer() {
            return None;
        }
        self.split().0.parse().ok()
    }

    pub fn add(&self, other: &Decimal) -> Decimal {
        let scale = self.scale.min(other.scale);
        let a = self.aligned(scale);
        let b = other.aligned(scale);
        let (neg, digits) = match (self.neg, other.neg) {
            (x, y) if x == y => (x, add_digits(&a, &b)),
            _ => match cmp_digits(&a, &b) {
                Ordering::Less => (other.neg, sub_digits(&b, &a)),
                _ => (self.neg, sub_digits(&a, &b)),
            },
        };
        Decimal::from_parts(neg, digits, scale)
    }

    pub fn sub(&self, other: &Decimal) -> Decimal {
        self.add(&other.negate())
    }

    /// Digits of the magnitude scaled to `10^scale` units (`scale <= self.scale`).
    fn aligned(&self, scale: i64) -> Vec<u8> {
        let mut d = self.digits.clone();
        d.extend(std::iter::repeat_n(0, (self.scale - scale) as usize));
        d
    }

    /// Whether `self` is an integer multiple of `m` (`m > 0`).
    #[cfg(test)]
    pub fn is_multiple_of(&self, m: &Decimal) -> bool {
        if self.is_zero() {
            return true;
        }
        let scale = self.scale.min(m.scale);
        let (a, b) = (self.aligned(scale), m.aligned(scale));
        rem_digits(&a, &b).iter().all(|&d| d == 0)
    }

    /// Plain decimal spelling, no exponent (`-1.25`, `300`, `0`).
    pub fn plain(&self) -> String {
        let (int, frac) = self.split();
        let sign = if self.neg { "-" } else { "" };
        if frac.is_empty() {
            format!("{sign}{int}")
        } else {
            format!("{sign}{int}.{frac}")
        }
    }
}

impl Ord for Decimal {
    fn cmp(&self, other: &Decimal) -> Ordering {
        let mag = |d: &Decimal| -> Ordering {
            let (x, y) = if d.neg { (other, self) } else { (self, other) };
            let (xl, yl) = (
                x.digits.len() as i64 + x.scale,
                y.digits.len() as i64 + y.scale,
            );
            xl.cmp(&yl).then_with(|| x.digits.cmp(&y.digits))
        };
        match (self.is_zero(), other.is_zero()) {
            (true, true) => Ordering::Equal,
            (true, false) => {
                if other.neg {
                    Ordering::Greater
                } else {
                    Ordering::Less
                }
            }
            (false, true) => {
                if self.neg {
                    Ordering::Less
                } else {
                    Ordering::Greater
                }
            }
            _ if self.neg != other.neg => {
                if self.neg {
                    Ordering::Less
                } else {
                    Ordering::Greater
                }
            }
            _ => mag(self),
        }
    }
}

impl PartialOrd for Decimal {
    fn partial_cmp(&self, other: &Decimal) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

fn trim(v: &[u8]) -> &[u8] {
    let lead = v.iter().take_while(|&&d| d == 0).count();
    &v[lead..]
}

fn cmp_digits(a: &[u8], b: &[u8]) -> Ordering {
    let (a, b) = (trim(a), trim(b));
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

fn add_digits(a: &[u8], b: &[u8]) -> Vec<u8> {
    let n = a.len().max(b.len()) + 1;
    let mut out = vec![0u8; n];
    let mut carry = 0;
    for i in 0..n {
        let x = if i < a.len() { a[a.len() - 1 - i] } else { 0 };
        let y = if i < b.len() { b[b.len() - 1 - i] } else { 0 };
        let s = x + y + carry;
        out[n - 1 - i] = s % 10;
        carry = s / 10;
    }
    out
}

/// `a - b` for `a >= b`.
fn sub_digits(a: &[u8], b: &[u8]) -> Vec<u8> {
    let mut out = a.to_vec();
    let mut borrow = 0i16;
    for i in 0..a.len() {
        let y = if i < b.len() {
            b[b.len() - 1 - i] as i16
        } else {
            0
        };
        let mut x = a[a.len() - 1 - i] as i16 - y - borrow;
        borrow = (x < 0) as i16;
        if x < 0 {
            x += 10;
        }
        out[a.len() - 1 - i] = x as u8;
    }
    out
}

/// `a mod b` by long division (`b > 0`).
#[cfg(test)]
fn rem_digits(a: &[u8], b: &[u8]) -> Vec<u8> {
    let mut r: Vec<u8> = Vec::new();
    for &d in a {
        r.push(d);
        while cmp_digits(&r, b) != Ordering::Less {
            r = sub_digits(&r, b);
        }
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> Decimal {
        Decimal::parse(s).unwrap()
    }

    #[test]
    fn parsing_normalizes_every_spelling() {
        assert_eq!(d("1.50"), d("15e-1"));
        assert_eq!(d("-0.0"), Decimal::zero());
        assert_eq!(d("1e3").split(), ("1000".into(), String::new()));
        assert_eq!(d("0.0125").split(), ("0".into(), "0125".into()));
        assert_eq!(d("-12.5").plain(), "-12.5");
        assert!(Decimal::parse("1e99999").is_none() && Decimal::parse("01x").is_none());
    }

    #[test]
    fn order_and_rounding_are_exact() {
        let mut v: Vec<Decimal> = ["3", "-2.5", "0", "1e-5", "-1e2", "2.999", "1e20"]
            .iter()
            .map(|s| d(s))
            .collect();
        v.sort();
        let s: Vec<String> = v.iter().map(Decimal::plain).collect();
        assert_eq!(
            s,
            [
                "-100",
                "-2.5",
                "0",
                "0.00001",
                "2.999",
                "3",
                "100000000000000000000"
            ]
        );
        assert_eq!(d("-2.5").ceil(), d("-2"));
        assert_eq!(d("-2.5").floor(), d("-3"));
        assert_eq!(d("2.5").floor(), d("2"));
        assert_eq!(d("0.1").ceil(), d("1"));
    }

    #[test]
    fn arithmetic_and_multiples() {
        assert_eq!(d("1.5").add(&d("-2.25")), d("-0.75"));
        assert_eq!(d("10").sub(&d("0.01")), d("9.99"));
        assert!(d("7.5").is_multiple_of(&d("2.5")));
        assert!(!d("7.5").is_multiple_of(&d("2")));
        assert!(d("0.0075").is_multiple_of(&d("0.0001")));
        assert!(!d("1e30").is_multiple_of(&d("7e29")));
    }
}
