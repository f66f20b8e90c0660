//! The lexing modes of the reference, hand cases: llguidance's measured answers (greedy
//! lexer, no ignore before the first lexeme, ignore after the last only where another
//! lexeme may follow) and the scannerless reading beside them, on small grammars. The
//! brute-force comparison with an independent oracle is `reference_lexing.rs`.

mod reference_support;

use reference_support::{grammar, vocab, with_ignore};
use tokensdfa_grammar::{
    Grammar, GrammarOptions, Lexing, NaiveGrammarIndex, Notation, TrailingIgnore,
};

use TrailingIgnore::{Always, Never, WhereALexemeMayFollow as MayFollow};

fn options(lexing: Lexing, leading: bool, trailing: TrailingIgnore) -> GrammarOptions {
    GrammarOptions {
        lexing,
        leading_ignore: leading,
        trailing_ignore: trailing,
        ..GrammarOptions::default()
    }
}

/// llguidance's reading, as measured (greedy lexer, no leading ignore, trailing ignore
/// only where a lexeme may follow).
const LLG: (Lexing, bool, TrailingIgnore) = (Lexing::Greedy, false, MayFollow);

/// Whether each text is a sentence under the mode.
fn accepts(
    g: &Grammar,
    (lexing, leading, trailing): (Lexing, bool, TrailingIgnore),
    texts: &[&str],
) -> Vec<bool> {
    let ix =
        NaiveGrammarIndex::new(g, &vocab(&[b"<eos>"]), options(lexing, leading, trailing)).unwrap();
    texts
        .iter()
        .map(|t| ix.accepts(t.as_bytes()).unwrap())
        .collect()
}

fn check_both(g: &Grammar, texts: &[&str], greedy: &[bool], scannerless: &[bool]) {
    assert_eq!(accepts(g, LLG, texts), greedy, "greedy on {texts:?}");
    let plain = (Lexing::Scannerless, true, Always);
    assert_eq!(
        accepts(g, plain, texts),
        scannerless,
        "scannerless on {texts:?}"
    );
}

#[test]
fn literal_prefix_of_a_longer_literal() {
    // start: "a" "b" | "ab" "c"
    let g = grammar("s", &[("s", "'a' 'b' | 'ab' 'c'")], &[]);
    check_both(&g, &["ab", "abc"], &[false, true], &[true, true]);
    // start: A B | C D; A: "a"; B: "bx"; C: "ab"; D: "y"
    let g = grammar(
        "s",
        &[("s", "A B | C D")],
        &[("A", "a"), ("B", "bx"), ("C", "ab"), ("D", "y")],
    );
    check_both(&g, &["abx", "aby"], &[false, true], &[true, true]);
}

#[test]
fn a_repetition_swallows_what_follows() {
    // start: A B; A: /a+/; B: "a"
    let g = grammar("s", &[("s", "A B")], &[("A", "a+"), ("B", "a")]);
    check_both(&g, &["aa", "aaa"], &[false, false], &[true, true]);
    // start: X Y; X: /[ab]+/; Y: /b+c/
    let g = grammar("s", &[("s", "X Y")], &[("X", "[ab]+"), ("Y", "b+c")]);
    check_both(&g, &["abbc", "abc"], &[false, false], &[true, true]);
    // start: A "b"; A: /a/ | /ab/
    let g = grammar("s", &[("s", "A 'b'")], &[("A", "a|ab")]);
    check_both(&g, &["ab", "abb"], &[false, true], &[true, true]);
}

#[test]
fn ignore_before_between_and_after() {
    // start: "x"+ with %ignore " "
    let g = with_ignore(
        grammar("s", &[("s", "'x' | 'x' s")], &[("WS", " ")]),
        &["WS"],
    );
    let texts = ["x", " x", "x ", "x x", " ", "", "x  ", "x x "];
    check_both(
        &g,
        &texts,
        &[true, false, true, true, false, false, true, true],
        &[true, true, true, true, false, false, true, true],
    );
    // start: "x" "y" with %ignore " ": llguidance refuses "xy " (nothing may follow "y",
    // so neither may ignore text), and accepts "x y"
    let g = with_ignore(grammar("s", &[("s", "'x' 'y'")], &[("WS", " ")]), &["WS"]);
    let texts = [" xy", "xy ", "x y", "x ", "xy"];
    check_both(
        &g,
        &texts,
        &[false, false, true, false, true],
        &[true, true, true, false, true],
    );
    // `Always` and `Never` as before
    assert_eq!(
        accepts(&g, (Lexing::Greedy, false, Always), &texts),
        [false, true, true, false, true]
    );
    assert_eq!(
        accepts(&g, (Lexing::Greedy, false, Never), &texts),
        [false, false, true, false, true]
    );
}

/// `(live, accepting)` after each text, walked one byte-token at a time.
fn walk(g: &Grammar, mode: (Lexing, bool, TrailingIgnore), texts: &[&str]) -> Vec<(bool, bool)> {
    let bytes: Vec<[u8; 1]> = (0..=255u8).map(|b| [b]).collect();
    let mut toks: Vec<&[u8]> = vec![b"<eos>"];
    toks.extend(bytes.iter().map(|b| b.as_slice()));
    let ix = NaiveGrammarIndex::new(g, &vocab(&toks), options(mode.0, mode.1, mode.2)).unwrap();
    texts
        .iter()
        .map(|t| {
            let mut s = ix.initial_state();
            for &b in t.as_bytes() {
                match ix.next_state(s, u32::from(b) + 1).unwrap() {
                    Some(n) => s = n,
                    None => return (false, false),
                }
            }
            let eos = ix.allowed(s).unwrap().contains(&0);
            assert_eq!(eos, ix.is_accepting(s));
            assert_eq!(ix.accepts(t.as_bytes()).unwrap(), eos, "accepts {t:?}");
            (true, eos)
        })
        .collect()
}

const JSON: &str = r#"
?start: value
?value: object | array | string | SIGNED_NUMBER | "true" | "false" | "null"
array: "[" [value ("," value)*] "]"
object: "{" [pair ("," pair)*] "}"
pair: string ":" value
string: ESCAPED_STRING
%import common.ESCAPED_STRING
%import common.SIGNED_NUMBER
%import common.WS
%ignore WS
"#;

#[test]
fn json_whitespace_only_where_a_value_may_go_on() {
    let g = tokensdfa_grammar::read(JSON, Notation::Lark).unwrap();
    let texts = [
        "0",
        "0 ",
        "[0",
        "[0 ",
        "[0 ]",
        "[0 ] ",
        "[ 0 , 1 ]",
        "{\"a\" : [ ] }",
        "{} ",
        " 0",
        "true",
        "true ",
        "\"a\"",
        "\"a\" ",
        "[[] ",
        "[[] ]",
    ];
    // (live, sentence): after a complete top-level value nothing may follow, so neither
    // may whitespace; inside one it may; no leading whitespace (leading_ignore: false)
    let want = [
        (true, true),
        (false, false),
        (true, false),
        (true, false),
        (true, true),
        (false, false),
        (true, true),
        (true, true),
        (false, false),
        (false, false),
        (true, true),
        (false, false),
        (true, true),
        (false, false),
        (true, false),
        (true, true),
    ];
    assert_eq!(walk(&g, LLG, &texts), want);
    // scannerless with the same trailing reading: the same answers here
    let sl = (Lexing::Scannerless, false, MayFollow);
    assert_eq!(walk(&g, sl, &texts), want);
    // Always accepts trailing whitespace after the value
    let always = walk(&g, (Lexing::Greedy, false, Always), &["0 ", "[0 ] "]);
    assert_eq!(always, [(true, true), (true, true)]);
}

#[test]
fn nested_brackets_with_ignore() {
    // start: "[" [value ("," value)*] "]"; value: "0" | start; %ignore " "+
    let g = with_ignore(
        grammar(
            "s",
            &[
                ("s", "'[' items ']' | '[' ']'"),
                ("items", "value | value ',' items"),
                ("value", "'0' | s"),
            ],
            &[("WS", " +")],
        ),
        &["WS"],
    );
    let texts = [
        "[] ",
        "[[] ",
        "[[]] ",
        "[[] ]",
        "[ 0 , [ ] ]",
        "[ 0 , [ ] ] ",
        "[0 ",
        "[0 ,",
        "[",
        "[ ",
    ];
    let want = [
        (false, false),
        (true, false),
        (false, false),
        (true, true),
        (true, true),
        (false, false),
        (true, false),
        (true, false),
        (true, false),
        (true, false),
    ];
    for lexing in [Lexing::Greedy, Lexing::Scannerless] {
        assert_eq!(
            walk(&g, (lexing, false, MayFollow), &texts),
            want,
            "{lexing:?}"
        );
    }
}

#[test]
fn trailing_ignore_reads_the_parser_state_not_one_parse() {
    // start: A | B C, A and B both "x": after "x" one parse is complete, the other
    // expects C; the parser state allows a lexeme (C) there, so ignore text may follow,
    // and the text was a sentence before it: "x " is a sentence (per parse it would not
    // be: the complete parse allows nothing after it)
    let g = with_ignore(
        grammar(
            "s",
            &[("s", "A | B C")],
            &[("A", "x"), ("B", "x"), ("C", "c"), ("WS", " ")],
        ),
        &["WS"],
    );
    for lexing in [Lexing::Greedy, Lexing::Scannerless] {
        let got = accepts(
            &g,
            (lexing, false, MayFollow),
            &["x", "x ", "x c", "x c ", "xc"],
        );
        assert_eq!(got, [true, true, true, false, true], "{lexing:?}");
    }
    // a greedy lexeme both a terminal and an ignore: start: "a" B?, B: "b", %ignore B
    let g = with_ignore(grammar("s", &[("s", "'a' | 'a' B")], &[("B", "b")]), &["B"]);
    let texts = ["a", "ab", "abb", "abbb"];
    // "ab": "a" then "b" (B, or ignore text where B may follow); "abb": "a" "b" then
    // ignore text (B may follow "a" and ignore text, so the state allows a lexeme)
    for trailing in [Always, Never, MayFollow] {
        let got = accepts(&g, (Lexing::Greedy, false, trailing), &texts);
        assert_eq!(got, [true, true, true, true], "{trailing:?}");
    }
}

#[test]
fn ignore_only_texts_need_leading_and_trailing() {
    let g = with_ignore(grammar("s", &[("s", "'x' | ")], &[("WS", " +")]), &["WS"]);
    for lexing in [Lexing::Scannerless, Lexing::Greedy] {
        for leading in [true, false] {
            for trailing in [Always, Never, MayFollow] {
                let got = accepts(&g, (lexing, leading, trailing), &["", " ", "x", " x", "x "]);
                // " ": ignore text after the empty sentence, where "x" may follow
                let ignore_only = leading && trailing != Never;
                let want = [true, ignore_only, true, leading, trailing == Always];
                assert_eq!(
                    got, want,
                    "{lexing:?} leading {leading} trailing {trailing:?}"
                );
            }
        }
    }
    // where nothing may follow the empty sentence, not even ignore text
    let g = with_ignore(grammar("s", &[("s", "")], &[("WS", " +")]), &["WS"]);
    for lexing in [Lexing::Scannerless, Lexing::Greedy] {
        assert_eq!(
            accepts(&g, (lexing, true, MayFollow), &["", " "]),
            [true, false]
        );
        assert_eq!(
            accepts(&g, (lexing, true, Always), &["", " "]),
            [true, true]
        );
    }
}

#[test]
fn greedy_masks_follow_the_lexer() {
    // start: A B; A: /a+/; B: "a": every prefix of a's stays live (the lexer does not
    // look ahead), none is a sentence
    let g = grammar("s", &[("s", "A B")], &[("A", "a+"), ("B", "a")]);
    let toks: &[&[u8]] = &[b"<eos>", b"a", b"aa", b"b"];
    let ix =
        NaiveGrammarIndex::new(&g, &vocab(toks), options(Lexing::Greedy, true, Always)).unwrap();
    assert_eq!(ix.allowed(0).unwrap(), vec![1, 2]);
    let s = ix.next_state(0, 1).unwrap().unwrap();
    assert_eq!(ix.allowed(s).unwrap(), vec![1, 2]);
    assert!(!ix.is_accepting(s));
    // a terminal matching only the empty string is never a lexeme when greedy, and its
    // occurrence is left out (llguidance's reading, src/lexemes.rs)
    let g = grammar("s", &[("s", "'a' E")], &[("E", "(?:)")]);
    for opts in [
        options(Lexing::Greedy, true, Always),
        GrammarOptions::default(),
    ] {
        let ix = NaiveGrammarIndex::new(&g, &vocab(toks), opts).unwrap();
        assert!(ix.accepts(b"a").unwrap());
    }
    // one matching the empty string and more is optional: "y" then "x" or "yx"
    let g = grammar("s", &[("s", "O P 'x'")], &[("O", "y?"), ("P", "y?y?|zz")]);
    let toks: &[&[u8]] = &[b"<eos>", b"x", b"y", b"z"];
    let ix =
        NaiveGrammarIndex::new(&g, &vocab(toks), options(Lexing::Greedy, true, Always)).unwrap();
    let y = ix.next_state(0, 2).unwrap().unwrap();
    assert_eq!(ix.allowed(y).unwrap(), vec![1, 2, 3]);
    // after "yy" the maximal munch took one P: a third y is refused
    let yy = ix.next_state(y, 2).unwrap().unwrap();
    assert_eq!(ix.allowed(yy).unwrap(), vec![1]);
    assert!(ix.accepts(b"yyx").unwrap() && !ix.accepts(b"yyyx").unwrap());
}
