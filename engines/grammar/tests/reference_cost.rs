//! The reference's cost per state, measured (ignored by default: run with `--ignored
//! --nocapture`). A JSON grammar is walked along a JSON text, tokenized greedily, and
//! every state's mask filled: items created, trie nodes visited and live, milliseconds.
//! The vocabulary is `REFERENCE_VOCAB_HEX` (one token's bytes in hex per line, e.g. a
//! BPE vocabulary dumped from its tokenizer.json; `REFERENCE_VOCAB_LIMIT` keeps the first
//! N tokens), else a synthetic one of 50,000 tokens.

mod reference_support;

use std::collections::HashMap;
use std::time::Instant;

use reference_support::grammar;
use tokensdfa_core::Vocabulary;
use tokensdfa_grammar::{Grammar, GrammarOptions, NaiveGrammarIndex};

pub fn json_grammar() -> Grammar {
    grammar(
        "element",
        &[
            ("element", "WS value WS"),
            (
                "value",
                "object | array | STRING | NUMBER | 'true' | 'false' | 'null'",
            ),
            ("object", "'{' WS '}' | '{' members '}'"),
            ("members", "member | members ',' member"),
            ("member", "WS STRING WS ':' element"),
            ("array", "'[' WS ']' | '[' elements ']'"),
            ("elements", "element | elements ',' element"),
        ],
        &[
            (
                "STRING",
                r#""([^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*""#,
            ),
            ("NUMBER", r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?"),
            ("WS", r"[ \t\n\r]*"),
        ],
    )
}

fn load_vocab() -> Vec<Vec<u8>> {
    if let Ok(path) = std::env::var("REFERENCE_VOCAB_HEX") {
        let limit: usize = std::env::var("REFERENCE_VOCAB_LIMIT")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(usize::MAX);
        let text = std::fs::read_to_string(path).unwrap();
        return text
            .lines()
            .take(limit)
            .map(|l| {
                (0..l.len() / 2)
                    .map(|i| u8::from_str_radix(&l[2 * i..2 * i + 2], 16).unwrap())
                    .collect()
            })
            .collect();
    }
    // synthetic: every 1- and 2-byte printable string, then pseudo-random words
    let printable: Vec<u8> = (b' '..=b'~').collect();
    let mut toks: Vec<Vec<u8>> = vec![b"<eos>".to_vec()];
    toks.extend(printable.iter().map(|&c| vec![c]));
    for &a in &printable {
        toks.extend(printable.iter().map(|&b| vec![a, b]));
    }
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    while toks.len() < 50_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let len = 3 + (x % 6) as usize;
        let word = (0..len)
            .map(|i| printable[((x >> (i * 7)) % printable.len() as u64) as usize])
            .collect();
        toks.push(word);
    }
    toks
}

fn greedy(text: &[u8], ids: &HashMap<&[u8], u32>) -> Vec<u32> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < text.len() {
        let k = (1..=16.min(text.len() - i))
            .rev()
            .find(|&k| ids.contains_key(&text[i..i + k]))
            .expect("every byte is a token");
        out.push(ids[&text[i..i + k]]);
        i += k;
    }
    out
}

#[test]
#[ignore]
fn cost_per_state_on_a_json_walk() {
    let toks = load_vocab();
    let refs: Vec<&[u8]> = toks.iter().map(|t| t.as_slice()).collect();
    let v = Vocabulary::new(&refs, 0, &[]).unwrap();
    let t0 = Instant::now();
    let ix = NaiveGrammarIndex::new(&json_grammar(), &v, GrammarOptions::default()).unwrap();
    let base = ix.memory_bytes();
    println!(
        "vocab {} tokens, build {:.1} ms, {base} bytes",
        v.len(),
        t0.elapsed().as_secs_f64() * 1e3
    );
    let mut ids: HashMap<&[u8], u32> = HashMap::new();
    for (i, t) in refs.iter().enumerate().skip(1) {
        ids.entry(t).or_insert(i as u32);
    }
    let text = br#"{"name": "hello world", "items": [1, 2.5e3, {"a": null, "b": [true, false]}], "ok": "caf\u00e9 ok"}"#;
    let path = greedy(text, &ids);
    let mut mask = vec![0u32; v.mask_words()];
    let mut state = ix.initial_state();
    let (mut items, mut visited, mut secs, mut worst) = (0usize, 0usize, 0f64, 0f64);
    for (step, &t) in path.iter().enumerate() {
        ix.fill_mask(state, &mut mask).unwrap();
        let s = ix.fill_stats(state).unwrap();
        assert!(
            tokensdfa_core::get_bit(&mask, t),
            "token {t} refused at step {step}"
        );
        items += s.items;
        visited += s.nodes_visited;
        secs += s.seconds;
        worst = worst.max(s.seconds);
        if step < 3 || step % 10 == 0 {
            println!(
                "step {step}: {} items, {} nodes ({} live), {:.2} ms",
                s.items,
                s.nodes_visited,
                s.nodes_live,
                s.seconds * 1e3
            );
        }
        state = ix.next_state(state, t).unwrap().unwrap();
    }
    assert!(ix.is_accepting(state));
    let n = path.len() as f64;
    println!(
        "{} states: mean {:.0} items, {:.0} nodes, {:.2} ms per fill (worst {:.2} ms); \
         memory {} bytes ({:.0} per state after the first)",
        path.len(),
        items as f64 / n,
        visited as f64 / n,
        secs / n * 1e3,
        worst * 1e3,
        ix.memory_bytes(),
        (ix.memory_bytes() - base) as f64 / (ix.num_states() - 1) as f64
    );
}
