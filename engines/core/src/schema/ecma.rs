//! ECMA-262 patterns (`pattern`, `patternProperties`) as character-level regexes.
//!
//! JSON Schema patterns are ECMA-262 regexes, unanchored: a string is valid when the
//! pattern matches *somewhere* in it. [`translate`] turns one into the regex of the
//! whole strings it accepts: each top-level alternative is stripped of a leading `^`
//! and a trailing `$`, and where they are missing it is padded with "any string".
//!
//! The pattern is parsed with regex-syntax's AST parser (its syntax is close to
//! ECMA-262's), then translated node by node with ECMA meanings, not regex-syntax's:
//! `\d` and `\w` are ASCII, `\s` is ECMA's white space and line terminators, `.`
//! excludes `\n`, `\r`, U+2028 and U+2029. Wherever the two syntaxes read the same text
//! differently, or ECMA has a feature a regular language cannot express, the pattern
//! is refused rather than guessed: look-around (but look-aheads at the start of an
//! anchored pattern, `^(?!X)R`, which are intersections and complements of regular
//! languages), back-references, word boundaries, anchors inside the pattern (but in a
//! group that makes up a whole alternative), inline flags, nested classes and class
//! set operations, `[]`/`[^]`, regex-syntax-only escapes (`\A`, `\z`, `\U`, `\pL`,
//! `(?P<`).

use regex_syntax::ast::{self, Ast};

use super::charset::CharSet;
use super::lookahead;
use super::rx::{self, Rx};

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
    let mut branches = Vec::new();
    for top in alternatives_of(&ast) {
        expand(items_of(top), &mut branches);
    }
    let parts = branches
        .into_iter()
        .map(|b| t.branch(b))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(rx::alt(parts))
}

/// Any string of characters.
pub fn any_string() -> Rx {
    rx::star(rx::set(CharSet::full()))
}

fn alternatives_of(ast: &Ast) -> Vec<&Ast> {
    match ast {
        Ast::Alternation(a) => a.asts.iter().collect(),
        other => vec![other],
    }
}

fn items_of(ast: &Ast) -> Vec<&Ast> {
    match ast {
        Ast::Concat(c) => c.asts.iter().collect(),
        other => vec![other],
    }
}

/// The inside of a group without flags (capturing or not): it means what it holds.
fn plain_group(ast: &Ast) -> Option<&Ast> {
    match ast {
        Ast::Group(g) => match &g.kind {
            ast::GroupKind::NonCapturing(f) if !f.items.is_empty() => None,
            _ => Some(&g.ast),
        },
        _ => None,
    }
}

fn is_anchor(ast: &Ast) -> bool {
    is_assertion(ast, ast::AssertionKind::StartLine)
        || is_assertion(ast, ast::AssertionKind::EndLine)
}

/// Push the alternatives an alternative's `items` stand for, so that the anchors
/// [`Translator::branch`] strips at the ends are found where the pattern has them: a
/// group that is the alternative's only item besides anchors is opened, its own
/// alternatives distributed over those anchors (`(^a$)` is `^a$`; `^(a|b$)` is `^a` or
/// `^b$`, concatenation distributing over alternation). Each step opens one group, so
/// it ends; an anchor left inside is refused by the translation, as before.
fn expand<'a>(items: Vec<&'a Ast>, out: &mut Vec<Vec<&'a Ast>>) {
    let mut others = items.iter().enumerate().filter(|(_, a)| !is_anchor(a));
    if let (Some((at, only)), None) = (others.next(), others.next()) {
        if let Some(inner) = plain_group(only) {
            for alt in alternatives_of(inner) {
                let mut v = items[..at].to_vec();
                v.extend(items_of(alt));
                v.extend_from_slice(&items[at + 1..]);
                expand(v, out);
            }
            return;
        }
    }
    out.push(items);
}

struct Translator<'a> {
    pattern: &'a str,
}

impl Translator<'_> {
    /// The strings holding a match of one alternative: anchors at its ends stripped (any
    /// number: `^^a` is `^a`), and "any string" padded where there is none.
    fn branch(&self, mut items: Vec<&Ast>) -> Result<Rx, Refusal> {
        let start = |a: &&Ast| is_assertion(a, ast::AssertionKind::StartLine);
        let end = |a: &&Ast| is_assertion(a, ast::AssertionKind::EndLine);
        let starts = items.first().is_some_and(start);
        while items.first().is_some_and(start) {
            items.remove(0);
        }
        let ends = items.last().is_some_and(end);
        while items.last().is_some_and(end) {
            items.pop();
        }
        let body = items
            .iter()
            .map(|a| self.node(a))
            .collect::<Result<Vec<_>, _>>()?;
        let pad = |anchored: bool| if anchored { rx::empty() } else { any_string() };
        Ok(rx::concat([pad(starts), rx::concat(body), pad(ends)]))
    }

    fn refuse(&self, what: &str) -> Refusal {
        format!(
            "pattern {:?} uses {what}, which has no exact regular translation here",
            self.pattern
        )
    }

    fn node(&self, ast: &Ast) -> Result<Rx, Refusal> {
        match ast {
            Ast::Empty(_) => Ok(rx::empty()),
            Ast::Flags(_) => Err(self.refuse("inline flags")),
            Ast::Literal(l) => Ok(rx::set(CharSet::single(self.literal(l)?))),
            Ast::Dot(_) => Ok(rx::set(line_terminators().complement())),
            Ast::Assertion(a) => {
                Err(self.refuse(&format!("the assertion at offset {}", a.span.start.offset)))
            }
            Ast::ClassUnicode(c) => Ok(rx::set(self.unicode_class(c)?)),
            Ast::ClassPerl(c) => Ok(rx::set(perl_class(c))),
            Ast::ClassBracketed(c) => Ok(rx::set(self.bracketed(c)?)),
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
                Ok(rx::repeat(self.node(&r.ast)?, lo, hi))
            }
            Ast::Group(g) => self.group(g),
            Ast::Alternation(a) => {
                let parts = a
                    .asts
                    .iter()
                    .map(|x| self.node(x))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(rx::alt(parts))
            }
            Ast::Concat(c) => {
                let parts = c
                    .asts
                    .iter()
                    .map(|x| self.node(x))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(rx::concat(parts))
            }
        }
    }

    fn group(&self, g: &ast::Group) -> Result<Rx, Refusal> {
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

fn is_assertion(ast: &Ast, kind: ast::AssertionKind) -> bool {
    matches!(ast, Ast::Assertion(a) if a.kind == kind)
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
    use crate::schema::automaton::Dfa;

    fn lang(p: &str) -> Dfa {
        Dfa::from_rx(&translate(p).unwrap()).unwrap()
    }

    #[test]
    fn unanchored_means_contains() {
        let d = lang("ab+");
        for (s, ok) in [("ab", true), ("xxabbby", true), ("a", false), ("ba", false)] {
            assert_eq!(d.accepts(s), ok, "{s}");
        }
        let d = lang("^a|b$");
        for (s, ok) in [("ax", true), ("xb", true), ("xa", false), ("bx", false)] {
            assert_eq!(d.accepts(s), ok, "{s}");
        }
    }

    /// Anchors inside groups that make up a whole alternative, as MaskBench's patterns
    /// write them (`^([^,]|$)`, `(^[^0]*$)|0`, `^(x+\.x+$|%V%)`).
    #[test]
    fn anchors_inside_whole_groups_are_distributed() {
        let d = lang("^([^,]|$)");
        for (s, ok) in [
            ("", true),
            ("a", true),
            ("ab,", true),
            (",", false),
            (",a", false),
        ] {
            assert_eq!(d.accepts(s), ok, "{s:?}");
        }
        let d = lang("(^[^0]*$)|0");
        for (s, ok) in [("", true), ("abc", true), ("a0b", true), ("a1", true)] {
            assert_eq!(d.accepts(s), ok, "{s:?}");
        }
        let d = lang("(^a$)|(?:b$)");
        for (s, ok) in [("a", true), ("xa", false), ("ab", true), ("ba", false)] {
            assert_eq!(d.accepts(s), ok, "{s:?}");
        }
        let d = lang(r"^([0-9]+\.[0-9]+$|%V%)");
        for (s, ok) in [
            ("1.2", true),
            ("1.2x", false),
            ("%V%x", true),
            ("x%V%", false),
        ] {
            assert_eq!(d.accepts(s), ok, "{s:?}");
        }
        let d = lang("^^a$$");
        assert!(d.accepts("a") && !d.accepts("aa"));
    }

    /// Look-aheads at the start of an anchored pattern, as MaskBench's patterns write
    /// them: a reserved prefix, a banned character anywhere, a key list that leaves only
    /// the empty string, a length bound beside a shape.
    #[test]
    fn leading_lookaheads_intersect_and_complement() {
        let d = lang(r"^(?!org\.bukkit\.)([a-z]+\.)*[a-z]+$");
        for (s, ok) in [
            ("org.x", true),
            ("org.bukkit.x", false),
            ("a.b", true),
            ("a.", false),
        ] {
            assert_eq!(d.accepts(s), ok, "{s:?}");
        }
        let d = lang(r"^(?!.*\/)^(.*[^.]+.*)$");
        for (s, ok) in [("a.b", true), ("a/b", false), ("..", false), ("", false)] {
            assert_eq!(d.accepts(s), ok, "{s:?}");
        }
        let d = lang("^(?!ab|cd)$");
        assert!(d.accepts("") && !d.accepts("ab") && !d.accepts("x"));
        let d = lang("^(?!^lucene|builtin).*");
        for (s, ok) in [("lucenex", false), ("builtin", false), ("xbuiltin", true)] {
            assert_eq!(d.accepts(s), ok, "{s:?}");
        }
        let d = lang("^(?=.{2,3}$)(?![0-9])[a-z0-9]+$");
        for (s, ok) in [("ab", true), ("a9c", true), ("1ab", false), ("abcd", false)] {
            assert_eq!(d.accepts(s), ok, "{s:?}");
        }
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
            r"(?=a)", r"(a)\1", r"\bx", "a^b", "(?i)a", "[[a]]", "[a&&b]", "[]a]", r"\Ax", r"\pL",
            "(?P<n>a)", r"a\z", "(a$)b", "^(a|b$)c", "(?i:^a)",
        ] {
            assert!(translate(p).is_err(), "{p}");
        }
        assert!(translate("(?<n>a)").is_ok());
    }
}
