//! LazyIndex against the naive reference: the same mask, acceptance and fate of every
//! token on every state reachable from the start, with slices on and off, from one thread
//! or several at once.

use std::collections::{HashSet, VecDeque};
use std::sync::Arc;

use proptest::prelude::*;
use tokensdfa_core::{LazyIndex, LazyOptions, Mode, NaiveIndex, TokenAutomaton, Vocabulary};

mod common;
use common::{cases, known_vocab, regex_strategy, vocab, vocab_strategy, KNOWN};

/// Slices that small vocabularies of `a`, `b`, `c`, `1`, `é` actually fill.
const SMALL_SLICES: [&str; 4] = ["[ab]{1,2}", "[a-c]{3,}", "[^b]+", "é|1"];
/// Tiers of one class by length, the shape whose verdicts come from run bounds.
const TIER_SLICES: [&str; 4] = ["[a-cé]", "[a-cé]{2}", "[a-cé]{3,4}", "[a-cé]{5,9}"];

fn vocab_with_slices(tokens: &[Vec<u8>], slices: &[&str]) -> Vocabulary {
    let mut all: Vec<&[u8]> = vec![b"</s>"];
    all.extend(tokens.iter().map(|t| t.as_slice()));
    let s: Vec<String> = slices.iter().map(|s| s.to_string()).collect();
    Vocabulary::with_slices(&all, 0, &[], &s).unwrap()
}

fn options(slices: bool) -> LazyOptions {
    LazyOptions {
        slices,
        ..LazyOptions::default()
    }
}

/// Walk the naive index and `lazy` in lockstep over every reachable pair of states.
fn assert_same(pattern: &str, v: &Vocabulary, lazy: &LazyIndex) {
    let naive = NaiveIndex::new(pattern, v).unwrap();
    let start = (naive.initial_state(), lazy.initial_state());
    let mut seen = HashSet::from([start]);
    let mut queue = VecDeque::from([start]);
    while let Some((n, l)) = queue.pop_front() {
        let allowed = naive.allowed(n);
        assert_eq!(allowed, lazy.allowed(l), "{pattern:?}: masks differ");
        let mut mask = vec![0u32; v.mask_words()];
        lazy.fill_mask(l, &mut mask);
        assert_eq!(
            tokensdfa_core::ones(&mask),
            allowed,
            "{pattern:?}: fill_mask"
        );
        assert_eq!(naive.is_accepting(n), lazy.is_accepting(l), "{pattern:?}");
        for t in 0..v.len() as u32 {
            let (nn, ln) = (naive.next_state(n, t), lazy.next_state(l, t));
            assert_eq!(nn.is_some(), ln.is_some(), "{pattern:?}: token {t}");
            if let (Some(nn), Some(ln)) = (nn, ln) {
                if seen.insert((nn, ln)) {
                    queue.push_back((nn, ln));
                }
            }
        }
    }
}

fn check(pattern: &str, v: &Vocabulary) {
    for slices in [true, false] {
        let lazy = LazyIndex::with_options(pattern, v, Mode::Exact, options(slices)).unwrap();
        assert_same(pattern, v, &lazy);
    }
}

#[test]
fn lazy_matches_naive_on_known_regexes_with_json_slices() {
    let v = vocab(&known_vocab());
    for p in KNOWN {
        check(p, &v);
    }
}

#[test]
fn lazy_matches_naive_on_known_regexes_with_small_slices() {
    let v = vocab_with_slices(&known_vocab(), &SMALL_SLICES);
    for p in KNOWN {
        check(p, &v);
    }
}

#[test]
fn lazy_matches_naive_on_known_regexes_with_tier_slices() {
    let v = vocab_with_slices(&known_vocab(), &TIER_SLICES);
    for p in KNOWN {
        check(p, &v);
    }
    for p in [
        "[a-cé]{0,3}x",
        "([a-c]|é)*",
        "(a|b|c|é){2,6}",
        "[^x]{1,5}|a{7}",
        ".*",
        "[a-cé]{3}[ab]{2}",
    ] {
        check(p, &v);
    }
}

#[test]
fn run_bounds_decide_tier_slices_without_a_product() {
    let v = vocab_with_slices(&known_vocab(), &TIER_SLICES);
    for p in ["[a-cé]{0,3}x", "[a-cé]*b|[a-c]"] {
        let lazy = LazyIndex::new(p, &v, Mode::Exact).unwrap();
        assert_same(p, &v, &lazy);
        let s = lazy.stats();
        assert!(s.run_verdicts >= 3, "{p}: {s:?}");
    }
}

/// Syntax at the edges of the fast parser's subset: it either gives up (the full parser
/// reads it) or reads it the same way.
#[test]
fn odd_syntax_reads_as_regex_syntax_reads_it() {
    let v = vocab(&known_vocab());
    for p in [
        r"\x{1F600}|a",
        r"[\]a]+",
        r"[^]a]b",
        "a{0}b",
        "(?:)a",
        r"\pL{2}",
        r"\p{Greek}|é",
        r"[a-]+",
        r"\\\{",
        r"\ a",
        "#&~-",
        "a{2}?b",
        "(a)(?:b)|c",
        r"[\d\-]{1,3}",
        r"(?i)ab",
        "a|",
        "(|a)b",
        r"\u{e9}",
        r"[\x{1C}-\x{1F}]",
        "((((a))))",
        "é{2,}",
        r"\d+\.\d*",
    ] {
        check(p, &v);
    }
}

#[test]
fn json_string_states_take_the_slice_shortcut() {
    let v = vocab(&known_vocab());
    let p = r#""([^"\\\x00-\x1F\x7F-\x9F]|\\["\\])*""#;
    let lazy = LazyIndex::new(p, &v, Mode::Exact).unwrap();
    let quote = (0..v.len() as u32).find(|&t| v.token(t) == b"\"").unwrap();
    let inside = lazy.next_state(0, quote).unwrap();
    lazy.allowed(inside);
    assert!(lazy.stats().slice_hits >= 1, "{:?}", lazy.stats());
    assert_same(p, &v, &lazy);
}

#[test]
fn construction_builds_nothing_but_the_start() {
    let v = vocab(&known_vocab());
    let lazy = LazyIndex::new(r"[a-z]{1,500}", &v, Mode::Exact).unwrap();
    let s = lazy.stats();
    assert_eq!((s.states, s.dfa_states, s.masks_computed), (1, 1, 0));
    assert!(s.lazy_dfa);
}

#[test]
fn canonical_literals_is_refused_with_a_reason() {
    let v = vocab(&known_vocab());
    let err = LazyIndex::new("abc", &v, Mode::CanonicalLiterals)
        .err()
        .unwrap();
    assert!(err.to_string().contains("only mode \"exact\""), "{err}");
}

#[test]
fn a_tiny_cache_evicts_and_recomputes_the_same_masks() {
    let v = vocab(&known_vocab());
    let p = r"(ab|c)*\d";
    let lazy = LazyIndex::with_options(
        p,
        &v,
        Mode::Exact,
        LazyOptions {
            slices: true,
            cache_limit: v.mask_words() * 4 * 2,
            ..LazyOptions::default()
        },
    )
    .unwrap();
    assert_same(p, &v, &lazy);
    assert_same(p, &v, &lazy);
    let s = lazy.stats();
    assert!(s.evictions > 0 && s.cached_masks <= 2, "{s:?}");
}

/// Random token walks from several threads at once on one shared index.
#[test]
fn concurrent_walks_see_the_naive_masks() {
    let v = Arc::new(vocab(&known_vocab()));
    for p in [
        r"(https?://)?[a-z\.]+",
        r#"\{"a": "[^"]*"\}"#,
        r"\d{4}-\d{2}|(ab|cd)+e?",
    ] {
        let naive = Arc::new(NaiveIndex::new(p, &v).unwrap());
        let lazy = Arc::new(LazyIndex::new(p, &v, Mode::Exact).unwrap());
        let handles: Vec<_> = (0..4u64)
            .map(|seed| {
                let (v, naive, lazy) = (v.clone(), naive.clone(), lazy.clone());
                std::thread::spawn(move || random_walks(&v, &naive, &lazy, seed))
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
    }
}

fn random_walks(v: &Vocabulary, naive: &NaiveIndex, lazy: &LazyIndex, seed: u64) {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut mask = vec![0u32; v.mask_words()];
    for _ in 0..50 {
        let (mut n, mut l) = (naive.initial_state(), lazy.initial_state());
        for _ in 0..20 {
            lazy.fill_mask(l, &mut mask);
            let allowed = naive.allowed(n);
            assert_eq!(tokensdfa_core::ones(&mask), allowed);
            let text: Vec<u32> = allowed.into_iter().filter(|&t| t != v.eos_id()).collect();
            if text.is_empty() {
                break;
            }
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let t = text[(x % text.len() as u64) as usize];
            n = naive.next_state(n, t).unwrap();
            l = lazy.next_state(l, t).unwrap();
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn lazy_equals_naive(pattern in regex_strategy(), t in vocab_strategy()) {
        check(&pattern, &vocab(&t));
    }

    #[test]
    fn slices_on_and_off_agree_with_naive(pattern in regex_strategy(), t in vocab_strategy()) {
        check(&pattern, &vocab_with_slices(&t, &SMALL_SLICES));
    }

    #[test]
    fn tier_slices_agree_with_naive(pattern in regex_strategy(), t in vocab_strategy()) {
        check(&pattern, &vocab_with_slices(&t, &TIER_SLICES));
    }
}

/// A schema compiled straight into the lazy index's tree (`schema::compile_ast`) is the
/// index of its printed regex: same masks, acceptance and moves as the naive index on
/// that regex, on every reachable state (shared subtrees, recursion, Unicode sets that
/// must leave out the surrogates, escapes in several dialects).
#[test]
fn schema_trees_match_naive_on_their_printed_regex() {
    use tokensdfa_core::schema::{compile, compile_ast, Dialect, Escapes, Keys};
    let tokens: Vec<Vec<u8>> = [
        "{", "}", "[", "]", "\"", ":", ",", "a", "b", "1", "-", "0", ".", "\\", "u", "n", "e", "é",
        "\u{7f}", "\"a\":", "null", "true", "00", "7f", "d8", "\\u", " ", "\u{fffd}",
    ]
    .iter()
    .map(|t| t.as_bytes().to_vec())
    .chain([vec![0xED, 0xA0, 0x80]]) // a UTF-8-encoded surrogate: no string holds it
    .collect();
    let v = vocab(&tokens);
    let minimal = Dialect {
        escapes: Escapes::Minimal,
        keys: Keys::Canonical,
        ..Dialect::default()
    };
    let shallow = Dialect {
        any_depth: 1,
        ..Dialect::default()
    };
    // the text of a long length-bounded product nests deep
    let deep = Dialect {
        max_nesting: 10_000,
        ..Dialect::default()
    };
    let cases = [
        (
            Dialect::default(),
            r#"{"type":"object","properties":{"a":{"type":"integer","minimum":-3},"b":{"type":"string","maxLength":2}},"required":["a"]}"#,
        ),
        (shallow, "{}"),
        (
            Dialect::default(),
            r#"{"type":"string","pattern":"^[é1]+$"}"#,
        ),
        (
            Dialect::default(),
            r##"{"$defs":{"n":{"type":"array","items":{"$ref":"#/$defs/n"},"maxItems":2}},"$ref":"#/$defs/n"}"##,
        ),
        (
            minimal,
            r#"{"type":"object","properties":{"a":{"enum":["a\u007f",1,null]}}}"#,
        ),
        // a set that starts inside the surrogates: only its scalars are characters
        (
            Dialect::default(),
            r#"{"type":"string","pattern":"^[^\\u0000-\\uD7FF]$"}"#,
        ),
        // a pattern within a length bound: a product of 41 states, a regex in the text and
        // an automaton in the tree (past its 64 states when the bound is 70)
        (
            Dialect::default(),
            r#"{"type":"string","pattern":"^[ab1]+$","maxLength":40}"#,
        ),
        (
            deep.clone(),
            r#"{"type":"string","pattern":"^[ab1]+$","maxLength":70}"#,
        ),
        (
            deep.clone(),
            r#"{"type":"array","items":{"type":"string","pattern":"^[ab]*1[ab1]*$","minLength":3,"maxLength":70}}"#,
        ),
        // uniqueItems over enumerated values: an automaton over the sets of values in the
        // tree, its written regex in the text; values compare as JSON values (1 and 1.0)
        (
            Dialect::default(),
            r#"{"type":"array","items":{"enum":["a","b",1,null,true]},"uniqueItems":true,"maxItems":4}"#,
        ),
        (
            Dialect::default(),
            r#"{"type":"object","properties":{"a":{"type":"array","prefixItems":[{"enum":[1,"b"]}],"items":{"enum":[1.0,"a","b"]},"uniqueItems":true,"minItems":2}}}"#,
        ),
    ];
    for (dialect, schema) in cases {
        let printed = compile(schema, &dialect).unwrap();
        let tree = compile_ast(schema, &dialect).unwrap();
        let lazy = LazyIndex::from_ast(tree, &v, LazyOptions::default()).unwrap();
        assert_same(&printed, &v, &lazy);
    }
}

/// A tree has its own limits, not the printed text's length or nesting: a
/// schema that shares one definition in many places is refused as text under a tight
/// `max_regex_len` (and `max_nesting`), and compiled as a tree whose language is the
/// regex printed without those limits; a tree that passes its own limits (distinct
/// nodes, and the text it stands for) is refused naming them.
#[test]
fn schema_trees_have_their_own_limits_not_the_texts() {
    use tokensdfa_core::schema::{compile, compile_ast, Dialect};
    let v = vocab(
        &[
            "{", "}", "\"", ":", ",", "a", "b", "x", "1", "0", "null", "\"a\":", "\"b\":",
        ]
        .iter()
        .map(|t| t.as_bytes().to_vec())
        .collect::<Vec<_>>(),
    );
    let schema = r##"{"$defs":{"p":{"type":"object","properties":{"a":{"type":"integer"},"b":{"enum":["x",null]}}},
        "q":{"type":"object","properties":{"a":{"$ref":"#/$defs/p"},"b":{"$ref":"#/$defs/p"}}},
        "r":{"type":"object","properties":{"a":{"$ref":"#/$defs/q"},"b":{"$ref":"#/$defs/q"}}}},
        "$ref":"#/$defs/r"}"##;
    let roomy = Dialect::default();
    let printed = compile(schema, &roomy).unwrap();
    let tight = Dialect {
        max_regex_len: printed.len() / 3,
        max_nesting: 2,
        ..Dialect::default()
    };
    let refused = compile(schema, &tight).unwrap_err().to_string();
    assert!(refused.contains("bytes long"), "{refused}");
    let tree = compile_ast(schema, &tight).unwrap();
    assert!(tree.nodes.len() * 3 < printed.len(), "{}", tree.nodes.len());
    let lazy = LazyIndex::from_ast(tree, &v, LazyOptions::default()).unwrap();
    assert_same(&printed, &v, &lazy);
    let few = Dialect {
        max_tree_nodes: 8,
        ..tight
    };
    let refused = compile_ast(schema, &few).err().unwrap().to_string();
    assert!(refused.contains("tree would have"), "{refused}");
    let short = Dialect {
        max_tree_text_len: printed.len() - 1,
        ..tight
    };
    let refused = compile_ast(schema, &short).err().unwrap().to_string();
    assert!(refused.contains("stands for"), "{refused}");
}

/// Letters and letter pairs, words, their quoted and colon-ended forms, digits and JSON
/// punctuation: enough slice tokens that a state with a large live region of letters
/// gives up the product search and prunes.
fn wordy_vocab(words: &[&str]) -> Vocabulary {
    let mut tokens: Vec<Vec<u8>> = Vec::new();
    let letters: Vec<char> = ('a'..='z').collect();
    for &a in &letters {
        tokens.push(a.to_string().into_bytes());
        for &b in &letters[..8] {
            tokens.push(format!("{a}{b}").into_bytes());
        }
    }
    for w in words {
        tokens.push(w.as_bytes().to_vec());
        tokens.push(format!("{w}\"").into_bytes());
        tokens.push(format!("\"{w}\":").into_bytes());
        tokens.push(format!("{w}zz").into_bytes());
    }
    for t in [
        "{", "}", "\"", ":", ",", "0", "1", "9", "x", "é", "\\", "\\u", "00", "\"\"", " ",
    ] {
        tokens.push(t.as_bytes().to_vec());
    }
    tokens.sort();
    tokens.dedup();
    vocab(&tokens)
}

const WORDS: [&str; 24] = [
    "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa",
    "lambda", "mu", "nu", "xi", "omicron", "pi", "rho", "sigma", "tau", "upsilon", "phi", "chi",
    "psi", "omega",
];

/// A key position beside any other key (every string of letters stays alive, but only a
/// search through every declared key's prefixes proves it) is pruned: started from every
/// slice token, kept whole below the states whose run bounds vouch for them, and equal
/// to the naive index's mask.
#[test]
fn pruned_masks_keep_what_run_bounds_vouch_for() {
    use tokensdfa_core::schema::{compile, compile_ast, Dialect};
    let v = wordy_vocab(&WORDS);
    let props: Vec<String> = WORDS
        .iter()
        .map(|w| format!("\"{w}\":{{\"type\":\"integer\"}}"))
        .collect();
    let schema = format!(
        "{{\"type\":\"object\",\"properties\":{{{}}}}}",
        props.join(",")
    );
    let dialect = Dialect::default();
    let printed = compile(&schema, &dialect).unwrap();
    let lazy =
        LazyIndex::from_ast(compile_ast(&schema, &dialect).unwrap(), &v, options(true)).unwrap();
    assert_same(&printed, &v, &lazy);
    let s = lazy.stats();
    assert!(s.pruned_masks >= 1 && s.kept_subtrees >= 1, "{s:?}");
}

/// A pruned state where most runs of string characters die past a few (the `(ab|ba)+`
/// branch leaves their length unbounded): every subtree that dies is cleared from the
/// mask.
#[test]
fn pruned_masks_clear_what_dies() {
    let v = wordy_vocab(&WORDS);
    // No one state reads every character at the start (`m` is apart): run bounds are
    // (0, unbounded) there and a product search has to go deep to find a death.
    let c = r#"[^"\\\x00-\x1F\x7F-\x9F"#;
    let pattern = format!(
        "({}|{c}m]{c}]{{0,2}}[0-9]|m[0-9]|(ab|ba)+)x",
        WORDS.join("|")
    );
    let lazy = LazyIndex::with_options(&pattern, &v, Mode::Exact, options(true)).unwrap();
    assert_same(&pattern, &v, &lazy);
    assert!(lazy.stats().pruned_masks >= 1, "{:?}", lazy.stats());
}

/// A tree whose start state alone needs more NFA states compiled on demand than
/// `START_STATE_LIMIT` (2^22) is refused with `LimitExceeded` naming the start, instead
/// of compiling until memory runs out: 8,388,608 optional bytes, every one of which the
/// start state's closure passes through (so every copy is compiled while it is built).
#[test]
fn a_start_state_past_its_limit_is_refused() {
    use tokensdfa_core::{Ast, Error};
    let mut ast = Ast::default();
    let a = ast.bytes_node(b"a");
    let optional = ast.repeat_node(a, 0, Some(1));
    let inner = ast.repeat_node(optional, 2048, Some(2048));
    ast.root = ast.repeat_node(inner, 4096, Some(4096));
    let v = vocab(&[b"a".to_vec(), b"aa".to_vec()]);
    let err = LazyIndex::from_ast(ast, &v, LazyOptions::default())
        .err()
        .expect("refused");
    assert!(
        matches!(&err, Error::LimitExceeded(m) if m.contains("at its start")),
        "{err:?}"
    );
}

/// `(ab|é)*` as a counted automaton: 0 -a-> 1 -b-> 0, 0 -é-> 0, and a dead state 2
/// (1 -a-> 2, 2 -a-> 2) the counts must never enter.
fn units_graph(lo: u32, hi: u32) -> tokensdfa_core::Ast {
    use tokensdfa_core::{Ast, Counted};
    let targets = vec![vec![1, 0], vec![0, 2], vec![2]];
    let counted = Counted::new(targets, vec![true, false, false], lo, hi, 64).unwrap();
    let mut ast = Ast::default();
    let (a, b, e) = (
        ast.bytes_node(b"a"),
        ast.bytes_node(b"b"),
        ast.class_node(vec![(0xE9, 0xE9)]),
    );
    let labels = vec![vec![a, e], vec![b, a], vec![a]];
    ast.root = ast.graph_node(Arc::new(counted), labels);
    ast
}

/// The unit sequences of `(ab|é)*` from `from` characters, as regex alternatives: with
/// `hi` finite every one of `lo..=hi` characters; without, the shortest ones reaching
/// `lo`, each followed by any more units.
fn unit_strings(lo: u32, hi: u32) -> String {
    let mut out = Vec::new();
    let mut todo = vec![(String::new(), 0u32)];
    while let Some((s, n)) = todo.pop() {
        if n >= lo && hi == tokensdfa_core::UNBOUNDED {
            out.push(format!("{s}(?:ab|é)*"));
            continue;
        }
        if n >= lo {
            out.push(s.clone());
        }
        for (u, len) in [("ab", 2), ("é", 1)] {
            if hi == tokensdfa_core::UNBOUNDED || n + len <= hi {
                todo.push((format!("{s}{u}"), n + len));
            }
        }
    }
    format!("(?:{})", out.join("|"))
}

/// The lazy index forms a counted automaton's `(state, count)` pairs itself: the same
/// masks as the naive index on the language written out, bounds and all, where lengths
/// the units cannot make (3 from state 1 with `ab` pairs) and the dead state must be
/// left out for every kept state to stay live.
#[test]
fn a_counted_automaton_matches_its_language_written_out() {
    let tokens: Vec<Vec<u8>> = ["a", "b", "ab", "ba", "é", "aé", "éa", "ééé", "abab"]
        .iter()
        .map(|t| t.as_bytes().to_vec())
        .chain([vec![0xC3], vec![0xA9], vec![b'b', 0xC3]])
        .collect();
    let v = vocab(&tokens);
    let unbounded = tokensdfa_core::UNBOUNDED;
    for (lo, hi) in [
        (0, 0),
        (0, 5),
        (3, 3),
        (3, 7),
        (4, 4),
        (0, unbounded),
        (5, unbounded),
    ] {
        let pattern = unit_strings(lo, hi);
        for slices in [true, false] {
            let lazy = LazyIndex::from_ast(units_graph(lo, hi), &v, options(slices)).unwrap();
            assert_same(&pattern, &v, &lazy);
        }
    }
}

/// A random counted automaton over `a`, `b`, `é`: `(targets, labels, accept)` per state,
/// each label an index into [`UNITS`].
type RandomGraph = Vec<(Vec<(u32, usize)>, bool)>;

const UNITS: [&str; 3] = ["a", "b", "é"];

fn graph_strategy() -> impl Strategy<Value = (RandomGraph, u32, u32)> {
    let state = |n: u32| {
        (
            prop::collection::vec((0..n, 0..3usize), 0..4),
            any::<bool>(),
        )
    };
    (1..5u32)
        .prop_flat_map(move |n| prop::collection::vec(state(n), n as usize))
        .prop_flat_map(|g| (Just(g), 0..4u32, 0..3u32))
        .prop_map(|(g, lo, extra)| (g, lo, lo + extra + 1))
}

/// The strings of `units` (each one character) the graph accepts with `lo..=hi` units,
/// by walking every path: a finite language, written out as a regex.
fn written_out(g: &RandomGraph, lo: u32, hi: u32) -> String {
    let mut out = std::collections::BTreeSet::new();
    let mut todo = vec![(0u32, String::new(), 0u32)];
    while let Some((q, s, k)) = todo.pop() {
        let (edges, accept) = &g[q as usize];
        if *accept && k >= lo {
            out.insert(s.clone());
        }
        if k < hi {
            for &(t, u) in edges {
                todo.push((t, format!("{s}{}", UNITS[u]), k + 1));
            }
        }
    }
    if out.is_empty() {
        return "[^\\s\\S]".into();
    }
    let alts: Vec<String> = out.into_iter().collect();
    format!("(?:{})", alts.join("|"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    /// Random counted automata (nondeterministic, with dead states and lengths some
    /// states cannot make) against the naive index on their language written out.
    #[test]
    fn random_counted_automata_match_their_languages((g, lo, hi) in graph_strategy()) {
        use tokensdfa_core::{Ast, Counted};
        let targets = g.iter().map(|(e, _)| e.iter().map(|x| x.0).collect()).collect();
        let accept = g.iter().map(|s| s.1).collect();
        let counted = Counted::new(targets, accept, lo, hi, 1 << 10).unwrap();
        let mut ast = Ast::default();
        let units: Vec<u32> = UNITS.iter().map(|u| ast.bytes_node(u.as_bytes())).collect();
        let labels = g.iter().map(|(e, _)| e.iter().map(|x| units[x.1]).collect()).collect();
        ast.root = ast.graph_node(Arc::new(counted), labels);
        let tokens: Vec<Vec<u8>> = ["a", "b", "ab", "é", "bé", "aaa"]
            .iter()
            .map(|t| t.as_bytes().to_vec())
            .chain([vec![0xC3]])
            .collect();
        let v = vocab(&tokens);
        let pattern = written_out(&g, lo, hi);
        let lazy = LazyIndex::from_ast(ast, &v, options(true)).unwrap();
        assert_same(&pattern, &v, &lazy);
    }
}

/// A walk that compiles past the walk limit breaks the index, which says so
/// (`exceeded`), rather than growing without bound: `a{100000}` compiles a state or
/// two per copy as the walk reaches it, so a limit of 2,000 passes within 2,000 `a`s
/// while the start alone stays far below it.
#[test]
fn a_walk_past_the_walk_limit_breaks_the_index() {
    use tokensdfa_core::Ast;
    let build = || {
        let mut ast = Ast::default();
        let a = ast.bytes_node(b"a");
        ast.root = ast.repeat_node(a, 100_000, Some(100_000));
        ast
    };
    let v = vocab(&[b"a".to_vec()]);
    let opts = LazyOptions {
        walk_limit: 2_000,
        ..LazyOptions::default()
    };
    let lazy = LazyIndex::from_ast(build(), &v, opts).unwrap();
    let mut s = lazy.initial_state();
    let mut steps = 0;
    while !lazy.exceeded() && steps < 5_000 {
        match lazy.next_state(s, 1) {
            Some(n) => s = n,
            None => break,
        }
        steps += 1;
    }
    assert!(lazy.exceeded(), "no limit hit in {steps} steps");
    assert!(steps < 5_000);
    // the same walk without the low limit stays whole
    let whole = LazyIndex::from_ast(build(), &v, LazyOptions::default()).unwrap();
    let mut s = whole.initial_state();
    for _ in 0..steps + 10 {
        s = whole.next_state(s, 1).expect("a stays allowed");
    }
    assert!(!whole.exceeded());
}
