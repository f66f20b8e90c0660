//! Profile first visits along a token walk: `walkprof VOCAB REGEX TOKENS_JSON [REPEAT]`.
use std::time::Instant;
use tokensdfa_core::{LazyIndex, Mode, TokenAutomaton, Vocabulary};

pub fn read_vocab(path: &str) -> Vocabulary {
    let b = std::fs::read(path).unwrap();
    let u = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap());
    let (n, eos, ns) = (u(0) as usize, u(4), u(8) as usize);
    let specials: Vec<u32> = (0..ns).map(|i| u(12 + 4 * i)).collect();
    let mut at = 12 + 4 * ns;
    let mut toks = Vec::with_capacity(n);
    for _ in 0..n {
        let len = u(at) as usize;
        toks.push(b[at + 4..at + 4 + len].to_vec());
        at += 4 + len;
    }
    let refs: Vec<&[u8]> = toks.iter().map(|t| t.as_slice()).collect();
    Vocabulary::new(&refs, eos, &specials).unwrap()
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let v = read_vocab(&a[1]);
    v.prepared();
    let pattern = std::fs::read_to_string(&a[2]).unwrap();
    let toks: Vec<u32> = std::fs::read_to_string(&a[3])
        .unwrap()
        .trim_matches(|c| c == '[' || c == ']' || c == '\n')
        .split(',')
        .map(|s| s.trim().parse().unwrap())
        .collect();
    let repeat: usize = a.get(4).map_or(1, |s| s.parse().unwrap());
    let mut mask = vec![0u32; v.mask_words()];
    let t0 = Instant::now();
    let mut worst = (0u128, 0usize);
    for _ in 0..repeat {
        let ix = LazyIndex::new(&pattern, &v, Mode::Exact).unwrap();
        let mut s = 0;
        ix.fill_mask(s, &mut mask);
        for (i, &t) in toks.iter().enumerate() {
            s = ix.next_state(s, t).unwrap();
            let t1 = Instant::now();
            ix.fill_mask(s, &mut mask);
            let dt = t1.elapsed().as_nanos();
            if dt > worst.0 {
                worst = (dt, i);
            }
        }
    }
    println!(
        "total {:?} worst step {} {}us",
        t0.elapsed(),
        worst.1,
        worst.0 / 1000
    );
}
