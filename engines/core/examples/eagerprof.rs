//! Time eager builds: `eagerprof VOCAB PATTERN [REPEAT]` (VOCAB as walkprof reads it;
//! PATTERN `@FILE` reads the pattern from FILE, for regexes longer than an argument can be).
use std::time::Instant;
use tokensdfa_core::{Index, Mode, TokenAutomaton};

#[path = "walkprof.rs"]
#[allow(dead_code)]
mod walkprof;

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let v = walkprof::read_vocab(&a[1]);
    v.prepared();
    let repeat: usize = a.get(3).map_or(1, |s| s.parse().unwrap());
    let pattern = match a[2].strip_prefix('@') {
        Some(path) => std::fs::read_to_string(path).unwrap(),
        None => a[2].clone(),
    };
    for _ in 0..repeat {
        let t = Instant::now();
        let ix = Index::new(&pattern, &v, Mode::Exact).unwrap();
        println!(
            "{:?} states {} work {}",
            t.elapsed(),
            ix.num_states(),
            ix.stats().work
        );
    }
}
