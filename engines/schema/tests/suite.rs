//! The official JSON-Schema-Test-Suite, compact dialect: every instance of every
//! accepted schema must agree with its label, except valid instances the documented
//! restrictions leave out (leap seconds outside UTC, reserved hostname labels: see
//! `dialect.rs`); valid instances nesting deeper than the dialect's
//! `any_depth` may be rejected (outside the dialect). A schema whose regex text is
//! refused but whose tree is served (a counted automaton) is checked through the tree.
//! Skipped when the corpus is absent. The example `suite` runs the same in three
//! dialects with per-file numbers.

mod common;

use std::path::Path;

use serde_json::Value;
use tokensdfa_schema::{compile, Dialect, Draft};

/// The suite beside the project (`../shared/corpora/json-schema-test-suite`), or
/// `$JSON_SCHEMA_TEST_SUITE` (its `tests` directory).
fn suite_dir() -> std::path::PathBuf {
    match std::env::var_os("JSON_SCHEMA_TEST_SUITE") {
        Some(dir) => dir.into(),
        None => Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/corpora/json-schema-test-suite/tests"),
    }
}

/// Disagreements in one file: (group, test) descriptions.
fn run(path: &Path, d: &Dialect) -> (u32, Vec<String>) {
    let groups: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let (mut accepted, mut bad) = (0, Vec::new());
    for g in &groups {
        let schema = g["schema"].to_string();
        // the regex text where there is one, else the tree (counted automata)
        let m: Box<dyn Fn(&str) -> bool> = match compile(&schema, d) {
            Ok(re) => match common::matcher(&re) {
                Ok(m) => Box::new(move |t| m.is_match(t)),
                Err(_) => continue,
            },
            Err(_) => match common::Tree::new(&schema, d) {
                Ok(tree) => Box::new(move |t| tree.accepts(t)),
                Err(_) => continue,
            },
        };
        accepted += 1;
        for case in g["tests"].as_array().unwrap() {
            let valid = case["valid"].as_bool().unwrap();
            let Some(texts) = common::texts(&case["data"], d) else {
                continue;
            };
            let own = m(texts[0].as_str());
            let any = own || texts.iter().any(|t| m(t.as_str()));
            let deep = valid && common::depth(&case["data"]) > d.any_depth;
            if (valid && !any && !deep) || (!valid && any) {
                bad.push(format!(
                    "{} {}: {} / {}",
                    if valid {
                        "rejects valid"
                    } else {
                        "accepts invalid"
                    },
                    path.display(),
                    g["description"],
                    case["description"]
                ));
            }
        }
    }
    (accepted, bad)
}

#[test]
fn accepted_schemas_agree_with_the_suite() {
    let root = suite_dir();
    if !root.exists() {
        eprintln!("skipped: no JSON-Schema-Test-Suite at {}", root.display());
        return;
    }
    let mut accepted = 0;
    let mut bad = Vec::new();
    for (dir, draft) in [
        ("draft2020-12", Draft::Draft2020),
        ("draft7", Draft::Draft7),
    ] {
        let base = root.join(dir);
        // the optional files whose behaviour the compiler takes on: formats, ECMA-262
        // patterns, and (2019-09 on) draft-07's `dependencies` as a compatibility keyword
        let optional = ["ecmascript-regex.json", "non-bmp-regex.json"]
            .into_iter()
            .chain((draft == Draft::Draft2020).then_some("dependencies-compatibility.json"))
            .map(|name| base.join("optional").join(name))
            .filter(|f| f.exists());
        for f in common::json_files(&base)
            .into_iter()
            .chain(common::json_files(&base.join("optional/format")))
            .chain(optional)
        {
            let d = common::suite_dialect(draft, &f);
            let (a, b) = run(&f, &d);
            accepted += a;
            bad.extend(b);
        }
    }
    // the documented restrictions leave valid instances out, never invalid ones in
    bad.retain(|b| !(b.starts_with("rejects valid") && common::restricted(b)));
    assert!(accepted > 400, "only {accepted} schemas accepted");
    assert!(
        bad.is_empty(),
        "{} disagreements:\n{}",
        bad.len(),
        bad.join("\n")
    );
}
