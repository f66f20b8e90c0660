//! No input makes a reader panic or overflow its stack: random text, random bytes read
//! lossily, and soups of each notation's tokens.

use proptest::prelude::*;
use tokensdfa_grammar::{read, to_gbnf, to_lark, Notation};

const NOTATIONS: [Notation; 3] = [Notation::Gbnf, Notation::Ebnf, Notation::Lark];

fn all(text: &str) {
    for n in NOTATIONS {
        if let Ok(g) = read(text, n) {
            let _ = to_lark(&g);
            let _ = to_gbnf(&g);
        }
    }
}

const PIECES: &[&str] = &[
    "root",
    "start",
    "::=",
    ":",
    "|",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    "*",
    "+",
    "?",
    "~",
    "..",
    ".",
    ",",
    "->",
    "\"a\"",
    "\"\\x41\"",
    "\"\\u00e9\"",
    "\"",
    "[a-z]",
    "[^\\n]",
    "/[a-z]+/i",
    "/(?=a)/",
    "/a{2,}/",
    "/\\d\\w/",
    "A",
    "B",
    "x",
    "y",
    "%ignore",
    "%import common.WS",
    "%import common (INT)",
    "%declare",
    "%llguidance {}",
    "\n",
    " ",
    "#c\n",
    "//c\n",
    "3",
    "2",
    "\\",
    "<",
    "!",
    "_x",
    "?y",
    "!z",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    #[test]
    fn random_text(s in "\\PC{0,200}") {
        all(&s);
    }

    #[test]
    fn random_bytes(b in proptest::collection::vec(any::<u8>(), 0..200)) {
        all(&String::from_utf8_lossy(&b));
    }

    #[test]
    fn token_soup(ix in proptest::collection::vec(0..PIECES.len(), 0..60)) {
        let s: String = ix.iter().map(|&i| PIECES[i]).collect::<Vec<_>>().join(" ");
        all(&s);
        let s: String = ix.iter().map(|&i| PIECES[i]).collect();
        all(&s);
    }
}
