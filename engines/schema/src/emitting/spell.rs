//! How decoded string characters are written inside a JSON string literal.
//!
//! String constraints (patterns, formats, lengths, enum values, property names) are
//! languages of *decoded* characters. A JSON text spells each character raw or as an
//! escape, so [`Speller::spell`] maps such a character-level regex to the regex of all
//! its JSON spellings, one character at a time:
//!
//! - raw: any scalar but `"`, `\` and U+0000-U+001F (U+007F-U+009F included);
//! - with [`Escapes::All`]: also `\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t` for the
//!   characters they denote, and `\uXXXX` (hex digits in either case) for every
//!   character of the BMP, and a high-low surrogate pair `\uD8xx\uDCxx` for every
//!   character above it;
//! - with [`Escapes::Required`]: only the characters that cannot be raw are escaped, in
//!   any of the forms above;
//! - with [`Escapes::Minimal`] (llguidance's strings): U+007F cannot be raw either, and
//!   only those characters are escaped: `"` and `\` only as `\"` and `\\`, the others as
//!   their short form if they have one or as `\u00XX`;
//! - with [`Escapes::Raw`] none, and with [`Escapes::FreeStringsOnly`] all for strings
//!   the schema leaves free, none for constrained ones. (A listed value, `enum` or
//!   `const`, is not spelled here under those two: `FreeStringsOnly` writes it in its
//!   one [`canonical`] spelling, and `Raw` refuses one that needs an escape.)
//!
//! A lone surrogate escape (`\uD800` not followed by a low one, or a low one alone)
//! denotes no Unicode scalar and is outside every language here: each spelling decodes
//! to exactly one character, so character counts (`minLength`) and patterns stay exact.

use std::collections::HashMap;

use crate::dialect::Escapes;
use crate::languages::charset::CharSet;
use crate::languages::digits::{fixed_range, Digits};
use crate::languages::rx::{self, Kind, Rx};

/// Characters that never appear raw in a JSON string.
pub fn must_escape() -> CharSet {
    CharSet::from_ranges(vec![
        (0, 0x1F),
        ('"' as u32, '"' as u32),
        ('\\' as u32, '\\' as u32),
    ])
}

/// Characters that never appear raw in a string of the `escapes` dialect.
fn never_raw(escapes: Escapes) -> CharSet {
    match escapes {
        Escapes::Minimal | Escapes::MinimalUnicode => {
            must_escape().union(&CharSet::single('\u{7f}'))
        }
        Escapes::All | Escapes::Required | Escapes::Raw | Escapes::FreeStringsOnly => must_escape(),
    }
}

const SHORT: [(char, char); 8] = [
    ('"', '"'),
    ('\\', '\\'),
    ('/', '/'),
    ('\u{8}', 'b'),
    ('\u{c}', 'f'),
    ('\n', 'n'),
    ('\r', 'r'),
    ('\t', 't'),
];

pub struct Speller {
    escapes: Escapes,
    sets: HashMap<CharSet, Rx>,
    nodes: HashMap<*const rx::Node, (Rx, Rx)>,
}

impl Speller {
    pub fn new(escapes: Escapes) -> Speller {
        Speller {
            escapes,
            sets: HashMap::new(),
            nodes: HashMap::new(),
        }
    }

    /// The JSON spellings of the strings a character-level regex matches (without the
    /// quotes).
    pub fn spell(&mut self, x: &Rx) -> Rx {
        let key = Rx::as_ptr(x);
        if let Some((_, out)) = self.nodes.get(&key) {
            return out.clone();
        }
        let out = match &x.kind {
            Kind::Never | Kind::Empty | Kind::Rule(_) => x.clone(),
            Kind::Lit(s) => self.spell_literal(s),
            Kind::Set(s) => self.spell_set(s),
            Kind::Concat(v) => rx::concat(v.iter().map(|p| self.spell(p)).collect::<Vec<_>>()),
            Kind::Alt(v) => rx::alt(v.iter().map(|p| self.spell(p)).collect::<Vec<_>>()),
            Kind::Repeat(p, lo, hi) => rx::repeat(self.spell(p), *lo, *hi),
            // one character per edge stays one character, spelled
            Kind::Graph(g) => rx::graph(rx::Graph {
                counted: g.counted.clone(),
                labels: g
                    .labels
                    .iter()
                    .map(|v| v.iter().map(|p| self.spell(p)).collect())
                    .collect(),
                text: g.text.as_ref().map(|t| self.spell(t)),
            }),
        };
        // The input is kept alive beside its image so the pointer key stays unique.
        self.nodes.insert(key, (x.clone(), out.clone()));
        out
    }

    pub fn spell_literal(&mut self, s: &str) -> Rx {
        let special = never_raw(self.escapes);
        let mut parts = Vec::new();
        let mut run = String::new();
        for c in s.chars() {
            let plain = !special.contains(c as u32)
                && !matches!(
                    self.escapes,
                    Escapes::All | Escapes::FreeStringsOnly | Escapes::MinimalUnicode
                );
            if plain {
                run.push(c);
            } else {
                parts.push(rx::lit(&std::mem::take(&mut run)));
                parts.push(self.spell_set(&CharSet::single(c)));
            }
        }
        parts.push(rx::lit(&run));
        rx::concat(parts)
    }

    pub fn spell_set(&mut self, s: &CharSet) -> Rx {
        if let Some(x) = self.sets.get(s) {
            return x.clone();
        }
        let special = never_raw(self.escapes);
        let escaped = match self.escapes {
            Escapes::All | Escapes::FreeStringsOnly | Escapes::MinimalUnicode => s.clone(),
            Escapes::Required | Escapes::Minimal => s.intersect(&special),
            Escapes::Raw => CharSet::empty(),
        };
        let raw = rx::set(s.minus(&special));
        let out = rx::alt([raw, escapes_of(&escaped, self.escapes)]);
        self.sets.insert(s.clone(), out.clone());
        out
    }
}

/// The one spelling of `s` a canonical [`crate::Dialect::keys`] writes (without quotes),
/// and, with `escape_del`, a listed value under [`Escapes::FreeStringsOnly`];
/// `escape_del`: U+007F as `\u007f`, else raw.
pub fn canonical(s: &str, escape_del: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match SHORT.iter().find(|(d, l)| *d == c && *l != '/') {
            Some(&(_, l)) => {
                out.push('\\');
                out.push(l);
            }
            None if (c as u32) < 0x20 || (escape_del && c == '\u{7f}') => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            None => out.push(c),
        }
    }
    out
}

/// `\`-escapes for every member of `s`: short forms, `\uXXXX`, surrogate pairs (with
/// [`Escapes::Minimal`], no `\uXXXX` for `"` and `\`).
fn escapes_of(s: &CharSet, escapes: Escapes) -> Rx {
    if s.is_empty() {
        return rx::never();
    }
    let unicode = match escapes {
        Escapes::Minimal => s.minus(&CharSet::from_ranges(vec![
            ('"' as u32, '"' as u32),
            ('\\' as u32, '\\' as u32),
        ])),
        _ => s.clone(),
    };
    let short: Vec<u32> = SHORT
        .iter()
        .filter(|(c, _)| s.contains(*c as u32))
        .filter(|(c, _)| escapes != Escapes::MinimalUnicode || *c != '/')
        .map(|&(_, l)| l as u32)
        .collect();
    let short = rx::set(CharSet::from_ranges(
        short.iter().map(|&c| (c, c)).collect(),
    ));
    let mut units = Vec::new();
    for &(a, b) in unicode.ranges() {
        if a <= 0xFFFF {
            units.push(hex4(a, b.min(0xFFFF)));
        }
        if b >= 0x10000 {
            units.extend(pairs(a.max(0x10000), b));
        }
    }
    let u = rx::concat([rx::lit("u"), rx::alt(units)]);
    rx::concat([rx::lit("\\"), rx::alt([short, u])])
}

fn hex_digits(v: u32) -> [u8; 4] {
    [
        (v >> 12) as u8 & 15,
        (v >> 8) as u8 & 15,
        (v >> 4) as u8 & 15,
        v as u8 & 15,
    ]
}

fn hex4(a: u32, b: u32) -> Rx {
    fixed_range(&hex_digits(a), &hex_digits(b), Digits::HexAnyCase)
}

/// `\uHHHH\uLLLL` pairs for the supplementary characters `a..=b`, grouped into blocks
/// of one high-surrogate range times one low-surrogate range.
fn pairs(a: u32, b: u32) -> Vec<Rx> {
    let split = |c: u32| {
        (
            0xD800 + ((c - 0x10000) >> 10),
            0xDC00 + ((c - 0x10000) & 0x3FF),
        )
    };
    let ((ha, la), (hb, lb)) = (split(a), split(b));
    let block = |h1: u32, h2: u32, l1: u32, l2: u32| {
        rx::concat([hex4(h1, h2), rx::lit("\\u"), hex4(l1, l2)])
    };
    if ha == hb {
        return vec![block(ha, ha, la, lb)];
    }
    // Partial first and last high surrogates get blocks of their own; full ones join
    // the middle block.
    let (mid_a, mid_b) = (
        if la == 0xDC00 { ha } else { ha + 1 },
        if lb == 0xDFFF { hb } else { hb - 1 },
    );
    let mut out = Vec::new();
    if mid_a > ha {
        out.push(block(ha, ha, la, 0xDFFF));
    }
    if mid_a <= mid_b {
        out.push(block(mid_a, mid_b, 0xDC00, 0xDFFF));
    }
    if mid_b < hb {
        out.push(block(hb, hb, 0xDC00, lb));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::tree_matcher;

    fn accepts(x: &Rx, text: &str) -> bool {
        tree_matcher(x)(text)
    }

    #[test]
    fn canonical_spelling_escapes_only_what_must_be() {
        let s = "a/é\"\\\n\u{1}\u{7f}";
        assert_eq!(canonical(s, true), r#"a/é\"\\\n\u0001\u007f"#);
        assert_eq!(canonical(s, false), "a/é\\\"\\\\\\n\\u0001\u{7f}");
    }

    #[test]
    fn every_escape_form_of_a_character_is_accepted() {
        let mut sp = Speller::new(Escapes::All);
        let slash = sp.spell_literal("/");
        for t in ["/", r"\/", r"\u002f", r"\u002F"] {
            assert!(accepts(&slash, t), "{t}");
        }
        assert!(!accepts(&slash, r"\u002e"));
        let emoji = sp.spell_literal("😀");
        for t in ["😀", r"\ud83d\ude00", r"\uD83D\uDE00"] {
            assert!(accepts(&emoji, t), "{t}");
        }
        assert!(!accepts(&emoji, r"\ud83d"));
    }

    #[test]
    fn required_escapes_only_where_raw_is_impossible() {
        let mut sp = Speller::new(Escapes::Required);
        let any = star_of(&mut sp, CharSet::full());
        for t in ["a\u{7f}\u{85}é", r#"\"\\\n\u0001"#] {
            assert!(accepts(&any, t), "{t}");
        }
        for t in [r"\/", r"\u0041", "\"", "\n", r"\ud800"] {
            assert!(!accepts(&any, t), "{t}");
        }
    }

    #[test]
    fn lone_surrogates_are_never_spelled() {
        let mut sp = Speller::new(Escapes::All);
        let any = star_of(&mut sp, CharSet::full());
        assert!(accepts(&any, r"\ud83d\ude00x\u00e9"));
        for t in [r"\ud800", r"\udc00", r"\ud800x", r"\ude00\ud83d"] {
            assert!(!accepts(&any, t), "{t}");
        }
    }

    fn star_of(sp: &mut Speller, s: CharSet) -> Rx {
        rx::star(sp.spell_set(&s))
    }
}
