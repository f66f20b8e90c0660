//! Time LazyIndex construction and the first mask on regexes read from files.
use std::time::Instant;
use tokensdfa_core::{LazyIndex, Mode, TokenAutomaton, Vocabulary};
fn main() {
    let toks: Vec<Vec<u8>> = (0u8..=255).map(|b| vec![b]).collect();
    let refs: Vec<&[u8]> = toks.iter().map(|t| t.as_slice()).collect();
    let v = Vocabulary::new(&refs, 0, &[]).unwrap();
    for path in std::env::args().skip(1) {
        let pattern = std::fs::read_to_string(&path).unwrap();
        for _ in 0..3 {
            let t = Instant::now();
            let ix = LazyIndex::new(&pattern, &v, Mode::Exact).unwrap();
            let build = t.elapsed();
            let mut m = vec![0u32; v.mask_words()];
            ix.fill_mask(0, &mut m);
            let s = ix.stats();
            println!(
                "{path} len {} build {:?} ttfm {:?} nfa {} fast {} parse {:.2}ms compile {:.2}ms",
                pattern.len(),
                build,
                t.elapsed(),
                s.nfa_states,
                s.fast_parse,
                s.parse_s * 1e3,
                s.compile_s * 1e3
            );
        }
    }
}
