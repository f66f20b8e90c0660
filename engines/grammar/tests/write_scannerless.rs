//! The scannerless Lark writer and the KBNF writer on every corpus grammar.
//!
//! `to_lark_scannerless`, read back with the Lark reader, keeps the language on sampled
//! sentences and their mutations, and every terminal of the text read back is one
//! character (what makes Lark's Earley parser an exact judge). `to_kbnf` has no reader
//! here: its text is checked for shape (a start rule, every statement ended by `;`).

mod write_support;

use regex_syntax::hir::{Class, HirKind};
use tokensdfa_grammar::{read, to_kbnf, to_lark_scannerless, Grammar, Notation};
use write_support::{corpus, probes, Lang};

/// The terminals of `g` whose regex is not one character (a one-character literal or a
/// class), by name.
fn multi_character_terminals(g: &Grammar) -> Vec<String> {
    g.terminals
        .iter()
        .filter(|t| {
            let h = tokensdfa_core::dfa::parse(&t.regex).expect("terminal parses");
            !match h.kind() {
                HirKind::Literal(l) => {
                    std::str::from_utf8(&l.0).is_ok_and(|s| s.chars().count() == 1)
                }
                HirKind::Class(Class::Unicode(_)) => true,
                HirKind::Class(Class::Bytes(c)) => c.iter().all(|r| r.end() < 0x80),
                _ => false,
            }
        })
        .map(|t| format!("{} /{}/", t.name, t.regex))
        .collect()
}

fn compare(name: &str, a: &Lang, b: &Lang) -> Vec<String> {
    let probes = probes(a, b, 13, 40);
    let accepted = probes.iter().filter(|p| a.accepts(p)).count();
    println!(
        "{name}: {} probes, {accepted} in the language",
        probes.len()
    );
    let mut bad = Vec::new();
    if accepted < 5 {
        bad.push(format!("{name}: only {accepted} probes in the language"));
    }
    for p in probes {
        let (x, y) = (a.accepts(&p), b.accepts(&p));
        if x != y {
            bad.push(format!(
                "{name}: {:?}: original {x}, re-read {y}",
                String::from_utf8_lossy(&p)
            ));
        }
    }
    bad
}

#[test]
fn scannerless_lark_keeps_the_language_with_one_character_terminals() {
    let mut bad = Vec::new();
    for (path, notation) in corpus() {
        let Ok(g) = read(&std::fs::read_to_string(&path).unwrap(), notation) else {
            continue;
        };
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let text = match to_lark_scannerless(&g) {
            Ok(t) => t,
            Err(e) => {
                println!("scannerless {name}: not written: {e}");
                continue;
            }
        };
        assert!(
            !text.lines().any(|l| l.starts_with('%')),
            "{name}: a directive\n{text}"
        );
        let g2 = read(&text, Notation::Lark).unwrap_or_else(|e| panic!("{name}: {e}\n{text}"));
        assert!(g2.ignore.is_empty(), "{name}: ignore terminals left");
        let multi = multi_character_terminals(&g2);
        assert!(multi.is_empty(), "{name}: {}", multi.join(", "));
        bad.extend(compare(
            &format!("scannerless {name}"),
            &Lang::new(&g),
            &Lang::new(&g2),
        ));
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn scannerless_lark_writes_the_empty_string_and_counts_without_empty_terminals() {
    let src = "start: A B C\nA: /(ab|)c{2,3}/\nB: /x?/\nC: /[0-9]{2,}/\n%ignore \" \"\n";
    let g = read(src, Notation::Lark).unwrap();
    let text = to_lark_scannerless(&g).unwrap();
    assert!(!text.contains("\"\""), "{text}");
    assert!(text.contains("~ 2..3"), "{text}");
    let g2 = read(&text, Notation::Lark).unwrap();
    let (a, b) = (Lang::new(&g), Lang::new(&g2));
    for s in ["cc", "abccc x 12", " ccx123 ", "abc12", "cc1", "c c12"] {
        assert_eq!(a.accepts(s.as_bytes()), b.accepts(s.as_bytes()), "{s:?}");
    }
    assert!(b.accepts(b" abccc x 0123 "));
}

#[test]
fn look_around_is_refused() {
    let g = read("start: A\nA: /^a$/\n", Notation::Lark);
    if let Ok(g) = g {
        assert!(to_lark_scannerless(&g).is_err());
        assert!(to_kbnf(&g).is_err());
    }
}

#[test]
fn kbnf_text_has_a_start_rule_and_ends_every_rule() {
    for (path, notation) in corpus() {
        let Ok(g) = read(&std::fs::read_to_string(&path).unwrap(), notation) else {
            continue;
        };
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let text = match to_kbnf(&g) {
            Ok(t) => t,
            Err(e) => {
                println!("kbnf {name}: not written: {e}");
                continue;
            }
        };
        assert!(text.starts_with("start ::= "), "{name}\n{text}");
        for line in text.lines() {
            assert!(
                line.contains(" ::= ") && line.ends_with(';'),
                "{name}: {line}"
            );
        }
    }
}

#[test]
fn kbnf_regexes_escape_for_the_string_reading() {
    let g = read("root ::= [\\\\\"] \"a.b\" [^\\x00-\\x7f]\n", Notation::Gbnf).unwrap();
    let text = to_kbnf(&g).unwrap();
    assert!(text.contains(r#"#"[\"\\\\]""#), "{text}");
    assert!(text.contains(r##"#"a\\.b""##), "{text}");
    assert!(text.contains(r"[\\x{80}-\\x{10FFFF}]"), "{text}");
}
