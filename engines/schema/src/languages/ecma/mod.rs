//! ECMA-262 patterns (`pattern`, `patternProperties`) as character-level regexes.
//!
//! JSON Schema patterns are ECMA-262 regexes, unanchored: a string is valid when the
//! pattern matches *somewhere* in it. [`translate`] turns one into the regex of the
//! whole strings it accepts: anchors wherever they stand are read by `anchors`, and a
//! match not held at the start or end by one is padded there with "any string";
//! look-aheads at the start of an anchored pattern by `lookahead`.
//!
//! The pattern is parsed with regex-syntax's AST parser (its syntax is close to
//! ECMA-262's), then translated node by node with ECMA meanings, not regex-syntax's:
//! `\d` and `\w` are ASCII, `\s` is ECMA's white space and line terminators, `.`
//! excludes `\n`, `\r`, U+2028 and U+2029. Wherever the two syntaxes read the same text
//! differently, or ECMA has a feature a regular language cannot express, the pattern
//! is refused rather than guessed: look-around (but look-aheads at the start of an
//! anchored pattern, `^(?!X)R`, which are intersections and complements of regular
//! languages), back-references, word boundaries, inline flags, nested classes and class
//! set operations, `[]`/`[^]`, regex-syntax-only escapes (`\A`, `\z`, `\U`, `\pL`,
//! `(?P<`).

use regex_syntax::ast::{self, Ast};

use crate::languages::charset::CharSet;
use crate::languages::rx::{self, Rx};

mod anchors;
mod lookahead;

use anchors::{Paths, MAX_ANCHORED_COPIES};

/// The result of a refused pattern: the reason.
pub type Refusal = String;

/// The strings in which `pattern` finds a match, as a character-level regex.
pub fn translate(pattern: &str) -> Result<Rx, Refusal> {
    match lookahead::leading_lookaheads(pattern) {
        Some((looks, rest)) => lookahead::with_lookaheads(pattern, &looks, rest),
        None => translate_plain(pattern),
    }
}

/// [`translate`] for a pattern without look-around.
pub(super) fn translate_plain(pattern: &str) -> Result<Rx, Refusal> {
    if pattern.contains("(?P") {
        return Err(format!(
            "pattern {pattern:?} uses `(?P`, which ECMA-262 does not have"
        ));
    }
    let ast = ast::parse::ParserBuilder::new()
        .nest_limit(200)
        .build()
        .parse(pattern)
        .map_err(|e| format!("pattern {pattern:?} is not translatable: {}", e.kind()))?;
    let t = Translator { pattern };
    Ok(t.node(&ast)?.unanchored(&any_string()))
}

/// Any string of characters.
pub fn any_string() -> Rx {
    rx::star(rx::set(CharSet::full()))
}

struct Translator<'a> {
    pattern: &'a str,
}

impl Translator<'_> {
    fn refuse(&self, what: &str) -> Refusal {
        format!(
            "pattern {:?} uses {what}, which has no exact regular translation here",
            self.pattern
        )
    }

    /// The strings `ast` matches, by the anchors their paths pass.
    fn node(&self, ast: &Ast) -> Result<Paths, Refusal> {
        let plain = |x: Rx| Ok(Paths::plain(x));
        match ast {
            Ast::Empty(_) => plain(rx::empty()),
            Ast::Flags(_) => Err(self.refuse("inline flags")),
            Ast::Literal(l) => plain(rx::set(CharSet::single(self.literal(l)?))),
            Ast::Dot(_) => plain(rx::set(line_terminators().complement())),
            Ast::Assertion(a) => match a.kind {
                ast::AssertionKind::StartLine => Ok(Paths::start()),
                ast::AssertionKind::EndLine => Ok(Paths::end()),
                _ => Err(self.refuse(&format!("the assertion at offset {}", a.span.start.offset))),
            },
            Ast::ClassUnicode(c) => plain(rx::set(self.unicode_class(c)?)),
            Ast::ClassPerl(c) => plain(rx::set(perl_class(c))),
            Ast::ClassBracketed(c) => plain(rx::set(self.bracketed(c)?)),
            Ast::Repetition(r) => {
                let (lo, hi) = match &r.op.kind {
                    ast::RepetitionKind::ZeroOrOne => (0, Some(1)),
                    ast::RepetitionKind::ZeroOrMore => (0, None),
                    ast::RepetitionKind::OneOrMore => (1, None),
                    ast::RepetitionKind::Range(ast::RepetitionRange::Exactly(n)) => (*n, Some(*n)),
                    ast::RepetitionKind::Range(ast::RepetitionRange::AtLeast(n)) => (*n, None),
                    ast::RepetitionKind::Range(ast::RepetitionRange::Bounded(m, n)) => {
                        (*m, Some(*n))
                    }
                };
                self.node(&r.ast)?.repeat(lo, hi).ok_or_else(|| {
                    self.refuse(&format!(
                        "an anchor inside a repetition counted past {MAX_ANCHORED_COPIES}, at offset {}",
                        r.span.start.offset
                    ))
                })
            }
            Ast::Group(g) => self.group(g),
            Ast::Alternation(a) => {
                let parts = a
                    .asts
                    .iter()
                    .map(|x| self.node(x))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(Paths::alt(&parts))
            }
            Ast::Concat(c) => c.asts.iter().try_fold(Paths::plain(rx::empty()), |acc, x| {
                Ok(Paths::concat(&acc, &self.node(x)?))
            }),
        }
    }

    fn group(&self, g: &ast::Group) -> Result<Paths, Refusal> {
        match &g.kind {
            ast::GroupKind::NonCapturing(f) if !f.items.is_empty() => {
                Err(self.refuse("inline flags"))
            }
            _ => self.node(&g.ast),
        }
    }

    fn literal(&self, l: &ast::Literal) -> Result<char, Refusal> {
        use ast::{HexLiteralKind as H, LiteralKind as K, SpecialLiteralKind as S};
        match &l.kind {
            K::Verbatim | K::Meta | K::Superfluous => Ok(l.c),
            K::HexFixed(H::X) | K::HexFixed(H::UnicodeShort) | K::HexBrace(H::UnicodeShort) => {
                Ok(l.c)
            }
            K::Special(S::FormFeed | S::Tab | S::LineFeed | S::CarriageReturn | S::VerticalTab) => {
                Ok(l.c)
            }
            _ => Err(self.refuse(&format!("the escape at offset {}", l.span.start.offset))),
        }
    }

    fn unicode_class(&self, c: &ast::ClassUnicode) -> Result<CharSet, Refusal> {
        if matches!(c.kind, ast::ClassUnicodeKind::OneLetter(_)) {
            return Err(self.refuse("a one-letter `\\p` class"));
        }
        let text = &self.pattern[c.span.start.offset..c.span.end.offset];
        let hir = regex_syntax::ParserBuilder::new()
            .build()
            .parse(text)
            .map_err(|_| self.refuse(&format!("the Unicode class {text}")))?;
        match hir.kind() {
            regex_syntax::hir::HirKind::Class(regex_syntax::hir::Class::Unicode(u)) => {
                Ok(CharSet::from_ranges(
                    u.ranges()
                        .iter()
                        .map(|r| (r.start() as u32, r.end() as u32))
                        .collect(),
                ))
            }
            regex_syntax::hir::HirKind::Literal(l) => match std::str::from_utf8(&l.0)
                .ok()
                .and_then(|s| s.chars().next())
            {
                Some(ch) => Ok(CharSet::single(ch)),
                None => Err(self.refuse(&format!("the Unicode class {text}"))),
            },
            _ => Err(self.refuse(&format!("the Unicode class {text}"))),
        }
    }

    fn bracketed(&self, c: &ast::ClassBracketed) -> Result<CharSet, Refusal> {
        let text = &self.pattern[c.span.start.offset..];
        if text.starts_with("[]") || text.starts_with("[^]") {
            return Err(self.refuse("`[]` or `[^]`"));
        }
        let set = match &c.kind {
            ast::ClassSet::Item(item) => self.set_item(item)?,
            ast::ClassSet::BinaryOp(_) => return Err(self.refuse("a class set operation")),
        };
        Ok(if c.negated { set.complement() } else { set })
    }

    fn set_item(&self, item: &ast::ClassSetItem) -> Result<CharSet, Refusal> {
        use ast::ClassSetItem as I;
        match item {
            I::Empty(_) => Ok(CharSet::empty()),
            I::Literal(l) => Ok(CharSet::single(self.literal(l)?)),
            I::Range(r) => {
                let (a, b) = (self.literal(&r.start)?, self.literal(&r.end)?);
                Ok(CharSet::range(a as u32, b as u32))
            }
            I::Unicode(u) => self.unicode_class(u),
            I::Perl(p) => Ok(perl_class(p)),
            I::Union(u) => u
                .items
                .iter()
                .try_fold(CharSet::empty(), |acc, i| Ok(acc.union(&self.set_item(i)?))),
            I::Ascii(_) | I::Bracketed(_) => Err(self.refuse("a nested class")),
        }
    }
}

fn chars(list: &[(char, char)]) -> CharSet {
    CharSet::from_ranges(list.iter().map(|&(a, b)| (a as u32, b as u32)).collect())
}

fn line_terminators() -> CharSet {
    chars(&[('\n', '\n'), ('\r', '\r'), ('\u{2028}', '\u{2029}')])
}

/// ECMA-262 `\s`: WhiteSpace and LineTerminator.
pub fn ecma_space() -> CharSet {
    chars(&[
        ('\t', '\r'),
        (' ', ' '),
        ('\u{a0}', '\u{a0}'),
        ('\u{1680}', '\u{1680}'),
        ('\u{2000}', '\u{200a}'),
        ('\u{2028}', '\u{2029}'),
        ('\u{202f}', '\u{202f}'),
        ('\u{205f}', '\u{205f}'),
        ('\u{3000}', '\u{3000}'),
        ('\u{feff}', '\u{feff}'),
    ])
}

fn perl_class(c: &ast::ClassPerl) -> CharSet {
    let set = match c.kind {
        ast::ClassPerlKind::Digit => chars(&[('0', '9')]),
        ast::ClassPerlKind::Word => chars(&[('0', '9'), ('A', 'Z'), ('_', '_'), ('a', 'z')]),
        ast::ClassPerlKind::Space => ecma_space(),
    };
    if c.negated {
        set.complement()
    } else {
        set
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::languages::automaton::Dfa;

    fn lang(p: &str) -> Dfa {
        Dfa::from_rx(&translate(p).unwrap()).unwrap()
    }

    /// Asserts that `p`'s language holds each string marked true and none marked false.
    fn accepts_exactly(p: &str, cases: &[(&str, bool)]) {
        let d = lang(p);
        for &(s, ok) in cases {
            assert_eq!(d.accepts(s), ok, "{p:?} on {s:?}");
        }
    }

    #[test]
    fn unanchored_means_contains() {
        accepts_exactly(
            "ab+",
            &[("ab", true), ("xxabbby", true), ("a", false), ("ba", false)],
        );
        accepts_exactly(
            "^a|b$",
            &[("ax", true), ("xb", true), ("xa", false), ("bx", false)],
        );
    }

    /// Anchors inside groups that make up a whole alternative, as MaskBench's patterns
    /// write them (`^([^,]|$)`, `(^[^0]*$)|0`, `^(x+\.x+$|%V%)`).
    #[test]
    fn anchors_inside_whole_groups() {
        accepts_exactly(
            "^([^,]|$)",
            &[
                ("", true),
                ("a", true),
                ("ab,", true),
                (",", false),
                (",a", false),
            ],
        );
        accepts_exactly(
            "(^[^0]*$)|0",
            &[("", true), ("abc", true), ("a0b", true), ("a1", true)],
        );
        accepts_exactly(
            "(^a$)|(?:b$)",
            &[("a", true), ("xa", false), ("ab", true), ("ba", false)],
        );
        accepts_exactly(
            r"^([0-9]+\.[0-9]+$|%V%)",
            &[
                ("1.2", true),
                ("1.2x", false),
                ("%V%x", true),
                ("x%V%", false),
            ],
        );
        let d = lang("^^a$$");
        assert!(d.accepts("a") && !d.accepts("aa"));
    }

    /// Anchors anywhere: inside repetitions (MaskBench's Kubernetes path type, whose
    /// last segment may end without a slash), between items, where they leave nothing.
    #[test]
    fn anchors_anywhere() {
        accepts_exactly(
            r"^(\/?((\.{2})|([a-z0-9\-]*))($|\/))*$",
            &[
                ("", true),
                ("/a/b", true),
                ("/a/b/", true),
                ("a/../b", true),
                ("/a.b", false),
                ("/A", false),
                ("/a/.", false),
            ],
        );
        accepts_exactly(
            "(^|,)x(,|$)",
            &[
                ("x", true),
                ("a,x", true),
                ("x,b", true),
                ("ax", false),
                ("xa", false),
            ],
        );
        accepts_exactly(
            "^(a|$)+",
            &[("", true), ("a", true), ("aab", true), ("b", false)],
        );
        accepts_exactly(
            "(a$|b){2,3}",
            &[
                ("ba", true),
                ("bba", true),
                ("bab", false),
                ("xbb", true),
                ("aa", false),
                ("ab", false),
            ],
        );
        // anchors that leave no string, or only some
        assert!(lang("a^b").is_empty());
        assert!(lang("(a$)b").is_empty());
        let d = lang("^(a|b$)c");
        assert!(d.accepts("ac") && d.accepts("acx") && !d.accepts("bc"));
        accepts_exactly(
            "(?:^|x)(?:y|$)",
            &[
                ("", true),
                ("y", true),
                ("ay", false),
                ("xy", true),
                ("ax", true),
                ("axa", false),
            ],
        );
        // a star whose first iteration passes `^` and whose last passes `$`
        accepts_exactly(
            "^(?:^a|b$)*$",
            &[
                ("", true),
                ("a", true),
                ("b", true),
                ("ab", true),
                ("ba", false),
                ("aab", false),
            ],
        );
        assert!(translate("(a$){300}").is_err());
        assert!(translate("(a){300}").is_ok());
    }

    /// Look-aheads at the start of an anchored pattern, as MaskBench's patterns write
    /// them: a reserved prefix, a banned character anywhere, a key list that leaves only
    /// the empty string, a length bound beside a shape.
    #[test]
    fn leading_lookaheads_intersect_and_complement() {
        accepts_exactly(
            r"^(?!org\.bukkit\.)([a-z]+\.)*[a-z]+$",
            &[
                ("org.x", true),
                ("org.bukkit.x", false),
                ("a.b", true),
                ("a.", false),
            ],
        );
        accepts_exactly(
            r"^(?!.*\/)^(.*[^.]+.*)$",
            &[("a.b", true), ("a/b", false), ("..", false), ("", false)],
        );
        let d = lang("^(?!ab|cd)$");
        assert!(d.accepts("") && !d.accepts("ab") && !d.accepts("x"));
        accepts_exactly(
            "^(?!^lucene|builtin).*",
            &[("lucenex", false), ("builtin", false), ("xbuiltin", true)],
        );
        accepts_exactly(
            "^(?=.{2,3}$)(?![0-9])[a-z0-9]+$",
            &[("ab", true), ("a9c", true), ("1ab", false), ("abcd", false)],
        );
        for p in ["^(?!a)b|c", "a(?=b)", "^(?!a)b(?=c)", "^(?!(a)"] {
            assert!(translate(p).is_err(), "{p}");
        }
        // a refusal from inside a look-ahead names the pattern as written first
        let why = translate("^(?!(?!a))b").unwrap_err();
        assert!(why.starts_with(r#"pattern "^(?!(?!a))b": "#), "{why}");
    }

    #[test]
    fn ecma_class_meanings() {
        let d = lang(r"^\d\w\s.$");
        assert!(d.accepts("1a\u{a0}x"));
        assert!(!d.accepts("١a x"), "\\d is ASCII only");
        assert!(!d.accepts("1é x"), "\\w is ASCII only");
        assert!(!d.accepts("1a \n"), ". excludes line terminators");
        assert!(lang(r"^\p{Lu}+$").accepts("ÀB"));
    }

    #[test]
    fn untranslatable_patterns_are_refused() {
        for p in [
            r"(?=a)", r"(a)\1", r"\bx", "(?i)a", "[[a]]", "[a&&b]", "[]a]", r"\Ax", r"\pL",
            "(?P<n>a)", r"a\z", "(?i:^a)",
        ] {
            assert!(translate(p).is_err(), "{p}");
        }
        assert!(translate("(?<n>a)").is_ok());
    }
}
