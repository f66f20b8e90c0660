//! Every corpus grammar is read, or refused in one line naming the construct.

use std::path::PathBuf;

use tokensdfa_grammar::{read, Error, Notation};

fn corpus(dir: &str, ext: &str) -> Vec<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/corpora/grammars")
        .join(dir);
    let mut v: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == ext))
        .collect();
    v.sort();
    v
}

/// Files refused on purpose, with a word their message must hold.
const REFUSED: &[(&str, &str)] = &[("syncode-python.lark", "%declare")];

#[test]
fn every_corpus_grammar_reads_or_is_refused_by_name() {
    let mut table = Vec::new();
    for (dir, ext, notation) in [
        ("gbnf", "gbnf", Notation::Gbnf),
        ("ebnf", "ebnf", Notation::Ebnf),
        ("lark", "lark", Notation::Lark),
    ] {
        for path in corpus(dir, ext) {
            let text = std::fs::read_to_string(&path).unwrap();
            let file = path.file_name().unwrap().to_string_lossy().to_string();
            let result = read(&text, notation);
            let line = match &result {
                Ok(g) => format!(
                    "ok: {} rules, {} terminals, {} ignored",
                    g.rules.len(),
                    g.terminals.len(),
                    g.ignore.len()
                ),
                Err(e) => format!("refused: {e}"),
            };
            println!("{dir}/{file}: {line}");
            match (REFUSED.iter().find(|(f, _)| *f == file), &result) {
                (None, Ok(_)) => {}
                (
                    Some((_, word)),
                    Err(e @ (Error::Unsupported { .. } | Error::Syntax { .. } | Error::Invalid(_))),
                ) => {
                    assert!(e.to_string().contains(word), "{file}: {e}");
                    assert!(!e.to_string().contains('\n'), "{file}: message on one line");
                }
                _ => table.push(format!("{file}: {line}")),
            }
        }
    }
    assert!(
        table.is_empty(),
        "unexpected outcomes:\n{}",
        table.join("\n")
    );
}
