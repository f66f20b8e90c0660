//! Every corpus grammar, written to Lark and to GBNF and read back, keeps its language on
//! sampled sentences and their mutations (checked with the test recognizer).

mod write_support;

use tokensdfa_grammar::{read, to_gbnf, to_lark, Notation};
use write_support::{corpus, probes, Lang};

fn check(name: &str, a: &Lang, b: &Lang, seed: u64) -> Vec<String> {
    let mut bad = Vec::new();
    let probes = probes(a, b, seed, 40);
    let accepted = probes.iter().filter(|p| a.accepts(p)).count();
    println!(
        "{name}: {} probes, {accepted} in the language",
        probes.len()
    );
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
fn lark_round_trip_keeps_the_language() {
    let mut bad = Vec::new();
    for (path, notation) in corpus() {
        let Ok(g) = read(&std::fs::read_to_string(&path).unwrap(), notation) else {
            continue;
        };
        let text = to_lark(&g).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let g2 = read(&text, Notation::Lark).unwrap_or_else(|e| panic!("{name}: {e}\n{text}"));
        bad.extend(check(
            &format!("lark {name}"),
            &Lang::new(&g),
            &Lang::new(&g2),
            7,
        ));
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn gbnf_round_trip_keeps_the_language() {
    let mut bad = Vec::new();
    for (path, notation) in corpus() {
        let Ok(g) = read(&std::fs::read_to_string(&path).unwrap(), notation) else {
            continue;
        };
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let text = match to_gbnf(&g) {
            Ok(t) => t,
            Err(e) => {
                println!("gbnf {name}: not written: {e}");
                continue;
            }
        };
        let g2 = read(&text, Notation::Gbnf).unwrap_or_else(|e| panic!("{name}: {e}\n{text}"));
        bad.extend(check(
            &format!("gbnf {name}"),
            &Lang::new(&g),
            &Lang::new(&g2),
            11,
        ));
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
