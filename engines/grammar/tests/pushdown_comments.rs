//! TokensDFA's pushdown mode on comments, against the reference in lockstep: a
//! scannerless comment that may end at any byte reuses its sets, and a mask walk takes
//! whole the tokens a comment surely survives, read off its terminal's automaton or
//! searched on the set's own loop (`tokensdfa_core`'s survival skips), while every mask
//! stays the reference's.

mod pushdown_support;
mod reference_support;

use pushdown_support::{lockstep, sets_along, walk_both, BUDGET};
use reference_support::{grammar, with_ignore};
use tokensdfa_core::{LazyOptions, TokenAutomaton, Vocabulary};
use tokensdfa_grammar::{pushdown_index, GrammarOptions, NaiveGrammarIndex};

/// A scannerless reading where a terminal may end at any byte: a line comment, which
/// ends wherever code may follow it, beside names and keywords written without a space
/// between them. The parses begun at each split point are named by what they give
/// back, so a comment's sets recur: the reference's masks along comments of every
/// length, from a bounded number of sets.
#[test]
fn comments_that_may_end_at_any_byte_reuse_their_sets() {
    let g = grammar(
        "unit",
        &[
            ("unit", "decls"),
            ("decls", "decls decl |"),
            ("decl", "'int' NAME ';' | NAME '=' NAME ';'"),
        ],
        &[
            ("NAME", "[a-z]+"),
            ("WS", "[ \n]+"),
            ("COMMENT", "//[^\n]*"),
        ],
    );
    let g = with_ignore(g, &["WS", "COMMENT"]);
    let mut tokens: Vec<Vec<u8>> = ["<eos>", "int", "x", "=", ";", " ", "\n", "//", "intx"]
        .iter()
        .map(|t| t.as_bytes().to_vec())
        .collect();
    tokens.extend((1..=20).map(|n| vec![b'a'; n]));
    // intx; //a..a a..a=x; //a..a \n
    let paths = (9..29u32).map(|a| vec![8, 4, 7, a, a, 3, 2, 4, 7, a, 6]);
    let sets = sets_along(&g, &tokens, 3, paths);
    assert!(sets < 100, "{sets} sets for comments of 20 lengths");
}

/// Survival skips: inside a block comment every string survives, inside a line comment
/// every string without a newline, so a mask walk takes those tokens whole (whole
/// subtrees of them, multi-byte characters and their pieces included, but no token with
/// a stray byte); the masks stay the reference's, tokens that end the comment and go on
/// as code included.
#[test]
fn comments_take_the_tokens_they_survive_whole() {
    let g = grammar(
        "unit",
        &[
            ("unit", "decls"),
            ("decls", "decls decl |"),
            ("decl", "'int' NAME ';'"),
        ],
        &[
            ("NAME", "[a-z]+"),
            ("WS", "[ \n]+"),
            ("LINE", "//[^\n]*"),
            ("BLOCK", r"/\*([^*]|\*+[^*/])*\*+/"),
        ],
    );
    let g = with_ignore(g, &["WS", "LINE", "BLOCK"]);
    let tokens: Vec<&[u8]> = vec![
        b"<eos>",
        b"//",
        b"/*",
        b"*/",
        b"int",
        b"x",
        b";",
        b" ",
        b"\n",
        b"a\n",
        b"ab",
        b"*/int",
        b"x*/",
        "é".as_bytes(),
        b"\xC3",
        "日本".as_bytes(),
        b"\xE6\x97",
        b"\x80",
        b"\xFF",
        b"**",
        b"/",
        b"x\ny",
        b"\n//",
    ];
    let v = Vocabulary::new(&tokens, 0, &[]).unwrap();
    assert!(lockstep(&g, &v, 3) > 1000);
    let naive = NaiveGrammarIndex::new(&g, &v, GrammarOptions::default()).unwrap();
    let push = pushdown_index(&g, &v, LazyOptions::default(), BUDGET).unwrap();
    // int x; /*abé**x*/ int x; //日本\nint x;
    let path = [
        4, 7, 5, 6, 7, 2, 10, 13, 19, 12, 7, 4, 7, 5, 6, 7, 1, 15, 8, 4, 7, 5, 6,
    ];
    let (n, p) = walk_both(&naive, &push, &path);
    assert!(push.is_accepting(p) && naive.is_accepting(n));
    assert!(push.stats().survived_subtrees > 0);
}

/// Survival skips where no terminal survives more than a character: a comment written
/// character by character (GBNF's way), whose set loops on every byte but `*`, is
/// searched on the automaton itself; the masks stay the reference's.
#[test]
fn comments_of_one_character_terminals_take_what_their_loop_survives_whole() {
    let g = grammar(
        "unit",
        &[
            ("unit", "decls"),
            ("decls", "decls decl |"),
            ("decl", "'int\\s' NAME ';' | comment"),
            ("comment", "'/*' body '*/'"),
            ("body", "body ch |"),
            ("ch", "NSTAR | '*' NSLASH"),
        ],
        &[("NAME", "[a-z]+"), ("NSTAR", "[^*]"), ("NSLASH", "[^/]")],
    );
    let tokens: Vec<&[u8]> = vec![
        b"<eos>",
        b"/*",
        b"*/",
        b"int ",
        b"x",
        b";",
        b"ab",
        b"a b",
        "é".as_bytes(),
        b"\xC3",
        "日本".as_bytes(),
        b"\x80",
        b"**",
        b"/",
        b"*",
        b"x*/int ",
    ];
    let v = Vocabulary::new(&tokens, 0, &[]).unwrap();
    let compared = lockstep(&g, &v, 4);
    assert!(compared > 1000, "{compared}");
    let naive = NaiveGrammarIndex::new(&g, &v, GrammarOptions::default()).unwrap();
    let push = pushdown_index(&g, &v, LazyOptions::default(), BUDGET).unwrap();
    // /*a b日本é**x*/int x;
    let path = [1, 7, 10, 8, 12, 4, 2, 3, 4, 5];
    let (n, p) = walk_both(&naive, &push, &path);
    assert!(push.is_accepting(p) && naive.is_accepting(n));
    // inside the comment only the loop vouches (no terminal survives two bytes)
    let fresh = pushdown_index(&g, &v, LazyOptions::default(), BUDGET).unwrap();
    let inside = [1, 7].iter().fold(fresh.initial_state(), |s, &t| {
        fresh.next_state(s, t).unwrap()
    });
    let before = fresh.stats().survived_subtrees;
    assert_eq!(
        fresh.allowed(inside),
        naive.allowed(walk_both(&naive, &push, &[1, 7]).0).unwrap()
    );
    assert!(fresh.stats().survived_subtrees > before);
}
