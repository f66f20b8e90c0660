//! The readers on small texts: what each notation means, and how each refuses.

mod write_support;

use tokensdfa_grammar::{read, Error, Notation};
use write_support::Lang;

fn lang(text: &str, n: Notation) -> Lang {
    Lang::new(&read(text, n).unwrap_or_else(|e| panic!("{e}\n{text}")))
}

fn yes(l: &Lang, s: &str) {
    assert!(l.accepts(s.as_bytes()), "should accept {s:?}");
}

fn no(l: &Lang, s: &str) {
    assert!(!l.accepts(s.as_bytes()), "should refuse {s:?}");
}

#[test]
fn gbnf_meanings() {
    let l = lang(
        "root ::= \"a\"{2,3} [^x\\n] . item*\nitem ::= [0-9] | \"\\u00e9\"\n",
        Notation::Gbnf,
    );
    yes(&l, "aab\n");
    yes(&l, "aaab\n1é2");
    no(&l, "ab\n");
    no(&l, "aaaab\n");
    no(&l, "aax\n");
    let l = lang("root ::= \"(\" root \")\" | \"\"", Notation::Ebnf);
    yes(&l, "");
    yes(&l, "(())");
    no(&l, "(()");
}

#[test]
fn gbnf_refusals() {
    let e = |t: &str| read(t, Notation::Gbnf).unwrap_err();
    assert!(matches!(e("x ::= \"a\""), Error::Invalid(m) if m.contains("root")));
    assert!(
        matches!(e("root ::= foo"), Error::Invalid(m) if m.contains("foo") && m.contains("line 1"))
    );
    assert!(
        matches!(e("root ::= \"a\"\nroot ::= \"b\""), Error::Invalid(m) if m.contains("twice"))
    );
    assert!(
        matches!(e("root ::= \"abc"), Error::Syntax { line: 1, message } if message.contains("unterminated string"))
    );
    assert!(matches!(e("root ::= [a-"), Error::Syntax { .. }));
    assert!(
        matches!(e("root ::= \"\\q\""), Error::Syntax { message, .. } if message.contains("\\q"))
    );
    assert!(matches!(e("root ::= \"a\"{20000}"), Error::Limit(_)));
    assert!(matches!(e("root ::= <[12]>"), Error::Unsupported { .. }));
    let deep = format!(
        "root ::= {}\"a\"{}",
        "(".repeat(100_000),
        ")".repeat(100_000)
    );
    assert!(matches!(e(&deep), Error::Limit(_)));
    let ok = format!("root ::= {}\"a\"{}", "(".repeat(190), ")*".repeat(190));
    assert!(read(&ok, Notation::Gbnf).is_ok());
    let ok = format!("start: {}\"a\"{}\n", "(".repeat(190), ")+".repeat(190));
    assert!(read(&ok, Notation::Lark).is_ok());
    let stars = format!("root ::= \"a\"{}", "*".repeat(100_000));
    assert!(matches!(e(&stars), Error::Limit(_)));
}

#[test]
fn lark_meanings() {
    let text = r#"
start: greet NAME ("," NAME)* [END] -> hello
greet: "hello"i | /h[iI]+/
NAME: LETTER+ DIGIT~2..3
END: "!" | "."
%import common.LETTER
%import common (DIGIT)
%ignore " "
"#;
    let l = lang(text, Notation::Lark);
    yes(&l, "HeLLo ab12");
    yes(&l, "hiI ab12 , c123 !");
    no(&l, "hello ab1");
    no(&l, "hello ab12,");
    let l = lang("start: x{\"a\"} x{\"b\"}\nx{p}: p p\n", Notation::Lark);
    yes(&l, "aabb");
    no(&l, "ab");
    let l = lang("start: S\nS: /a\\d\\s\\{x}/\n", Notation::Lark);
    yes(&l, "a7 {x}");
    yes(&l, "a7\u{1f}{x}");
    let l = lang(
        "start: \"a\"..\"c\"+ ESCAPED_STRING\n%import common.ESCAPED_STRING\n",
        Notation::Lark,
    );
    yes(&l, "ab\"x\\\"y\"");
    no(&l, "ab\"x\"y\"");
}

#[test]
fn lark_refusals() {
    let e = |t: &str| read(t, Notation::Lark).unwrap_err();
    assert!(matches!(e("x: \"a\"\n"), Error::Invalid(m) if m.contains("start")));
    assert!(matches!(e("start: A\nA: B\nB: A\n"), Error::Invalid(m) if m.contains("itself")));
    assert!(
        matches!(e("start: A\nA: /(?<=a)b/\n"), Error::Unsupported { message, .. } if message.contains("A"))
    );
    assert!(matches!(
        e("start: A\nA: /(a)\\1/\n"),
        Error::Unsupported { .. }
    ));
    assert!(matches!(
        e("start: a\n%declare X\n"),
        Error::Unsupported { line: 2, .. }
    ));
    assert!(
        matches!(e("start: X\n%import foo.X\n"), Error::Unsupported { message, .. } if message.contains("foo"))
    );
    assert!(
        matches!(e("start: %json {\"type\": \"object\"}\n"), Error::Unsupported { message, .. } if message.contains("json"))
    );
    assert!(matches!(e("start: <|end|>\n"), Error::Unsupported { .. }));
    assert!(
        matches!(e("start[lazy]: \"a\"\n"), Error::Unsupported { message, .. } if message.contains("lazy"))
    );
    assert!(read(
        "%llguidance {\"no_forcing\": true}\nstart[capture]: \"a\"\n",
        Notation::Lark
    )
    .is_ok());
    assert!(
        matches!(e("start: \"abc\n"), Error::Syntax { line: 1, message } if message.contains("unterminated string"))
    );
    let deep = format!(
        "start: {}\"a\"{}\n",
        "(".repeat(100_000),
        ")".repeat(100_000)
    );
    assert!(matches!(e(&deep), Error::Limit(_)));
    assert!(matches!(
        read(&"a".repeat(5 << 20), Notation::Lark),
        Err(Error::Limit(_))
    ));
}
