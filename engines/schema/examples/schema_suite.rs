//! Runs the official JSON-Schema-Test-Suite (draft2020-12 and draft7, with the optional
//! format tests) against the compiler, in three dialects.
//!
//! For every test group whose schema compiles, every instance is written in the
//! dialect (see `tests/common`) and full-matched (by the regex text, or where only the
//! lazy index's tree serves the schema, by the tree); the result is compared with the
//! label. A valid instance whose own key order is rejected but another order is
//! accepted counts as "order" (the dialect fixes key order), not as a disagreement; an
//! invalid instance disagrees if any of its orders is accepted. A valid instance that
//! nests deeper than the dialect's `any_depth` and is rejected counts as "deep" (such
//! texts are outside the dialect where the schema leaves values unconstrained). A
//! valid instance rejected where a documented restriction applies (leap seconds outside
//! UTC, reserved hostname labels) counts as "restricted".
//!
//! Usage: `cargo run --release -p tokensdfa-schema --example schema_suite [SUITE_DIR] [-v]`.

#[path = "../tests/common/mod.rs"]
mod common;

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;
use tokensdfa_schema::{compile, Dialect, Draft, Escapes, SchemaError, Whitespace};

const DEFAULT_DIR: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/corpora/json-schema-test-suite/tests"
);

#[derive(Default, Clone, Copy)]
struct Tally {
    accepted: u32,
    /// Of the accepted, served by the tree only (the regex text refused).
    tree: u32,
    refused: u32,
    agree: u32,
    disagree: u32,
    order: u32,
    /// Valid instances rejected that nest deeper than the dialect's `any_depth`.
    deep: u32,
    /// Valid instances rejected that a documented restriction leaves out
    /// ([`common::restricted`]).
    restricted: u32,
}

impl Tally {
    fn add(&mut self, o: &Tally) {
        self.accepted += o.accepted;
        self.tree += o.tree;
        self.refused += o.refused;
        self.agree += o.agree;
        self.disagree += o.disagree;
        self.order += o.order;
        self.deep += o.deep;
        self.restricted += o.restricted;
    }
}

/// The dialects of one file; the draft-2020-12 `format.json` expects `format` to be an
/// annotation, the optional format tests expect it to assert.
fn dialects(draft: Draft, path: &Path) -> Vec<(&'static str, Dialect)> {
    let base = common::suite_dialect(draft, path);
    vec![
        ("compact", base.clone()),
        (
            "space",
            Dialect {
                whitespace: Whitespace::OptionalSpace,
                escapes: Escapes::Required,
                ..base.clone()
            },
        ),
        (
            "anyws",
            Dialect {
                whitespace: Whitespace::Any { max_run: Some(3) },
                ..base
            },
        ),
    ]
}

enum Outcome {
    Agree,
    Disagree,
    Order,
}

fn judge(m: &dyn Fn(&str) -> bool, texts: &[String], valid: bool) -> Outcome {
    let own = m(texts[0].as_str());
    let any = own || texts[1..].iter().any(|t| m(t.as_str()));
    match (valid, own, any) {
        (true, true, _) | (false, false, false) => Outcome::Agree,
        (true, false, true) => Outcome::Order,
        _ => Outcome::Disagree,
    }
}

fn run_file(
    path: &Path,
    draft: Draft,
    verbose: bool,
    reasons: &mut BTreeMap<String, u32>,
) -> Tally {
    let groups: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut t = Tally::default();
    for g in &groups {
        let schema = g["schema"].to_string();
        for (name, d) in dialects(draft, path) {
            // the regex text where there is one, else the tree (counted automata)
            let m: Box<dyn Fn(&str) -> bool> = match compile(&schema, &d) {
                Ok(re) => match common::matcher(&re) {
                    Ok(m) => Box::new(move |t| m.is_match(t)),
                    Err(e) => {
                        t.refused += 1;
                        *reasons
                            .entry(format!("regex engine: {}", e.lines().next().unwrap_or("")))
                            .or_default() += 1;
                        continue;
                    }
                },
                Err(e) => match common::Tree::new(&schema, &d) {
                    Ok(tree) => {
                        t.tree += 1;
                        Box::new(move |x| tree.accepts(x))
                    }
                    Err(_) => {
                        t.refused += 1;
                        if name == "compact" {
                            *reasons.entry(reason(&e)).or_default() += 1;
                        }
                        continue;
                    }
                },
            };
            t.accepted += 1;
            for case in g["tests"].as_array().unwrap() {
                let valid = case["valid"].as_bool().unwrap();
                let Some(texts) = common::texts(&case["data"], &d) else {
                    continue;
                };
                match judge(&m, &texts, valid) {
                    Outcome::Agree => t.agree += 1,
                    Outcome::Order => t.order += 1,
                    Outcome::Disagree if valid && common::depth(&case["data"]) > d.any_depth => {
                        t.deep += 1
                    }
                    Outcome::Disagree
                        if valid
                            && common::restricted(&format!(
                                "{} / {}",
                                g["description"], case["description"]
                            )) =>
                    {
                        t.restricted += 1
                    }
                    Outcome::Disagree => {
                        t.disagree += 1;
                        if verbose {
                            println!(
                                "  DISAGREE [{name}] {}: {} | {} | {} (valid={valid})",
                                path.display(),
                                g["description"],
                                case["description"],
                                texts[0]
                            );
                            println!("    schema {schema}");
                        }
                    }
                }
            }
        }
    }
    t
}

fn reason(e: &SchemaError) -> String {
    match e {
        SchemaError::Unsupported { keyword, .. } => format!("unsupported {keyword}"),
        SchemaError::InvalidSchema { message, .. } => {
            format!("invalid: {}", message.chars().take(50).collect::<String>())
        }
        SchemaError::LimitExceeded { what, .. } => {
            format!("limit: {}", what.chars().take(50).collect::<String>())
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let verbose = args.iter().any(|a| a == "-v");
    let root = args
        .iter()
        .find(|a| !a.starts_with('-'))
        .cloned()
        .unwrap_or(DEFAULT_DIR.into());
    let start = std::time::Instant::now();
    let mut grand = Tally::default();
    for (dir, draft) in [
        ("draft2020-12", Draft::Draft2020),
        ("draft7", Draft::Draft7),
    ] {
        let mut total = Tally::default();
        let mut reasons = BTreeMap::new();
        println!("== {dir} (schemas counted once per dialect: compact, space, anyws)");
        println!(
            "{:<40} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6}",
            "file", "acc", "ref", "agree", "DIS", "order", "deep", "restr"
        );
        let base = Path::new(&root).join(dir);
        for f in common::json_files(&base)
            .into_iter()
            .chain(common::json_files(&base.join("optional/format")))
        {
            let t = run_file(&f, draft, verbose, &mut reasons);
            let name = f.strip_prefix(&base).unwrap().display().to_string();
            println!(
                "{name:<40} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6}",
                t.accepted, t.refused, t.agree, t.disagree, t.order, t.deep, t.restricted
            );
            total.add(&t);
        }
        println!(
            "{:<40} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6}",
            "TOTAL",
            total.accepted,
            total.refused,
            total.agree,
            total.disagree,
            total.order,
            total.deep,
            total.restricted
        );
        let mut top: Vec<_> = reasons.into_iter().collect();
        top.sort_by_key(|b| std::cmp::Reverse(b.1));
        println!(
            "top refusals (compact dialect): {:?}",
            &top[..top.len().min(12)]
        );
        grand.add(&total);
    }
    println!(
        "GRAND TOTAL accepted {} (by the tree only {}) refused {} agree {} disagree {} order {} deep {} restricted {} in {:.1}s",
        grand.accepted,
        grand.tree,
        grand.refused,
        grand.agree,
        grand.disagree,
        grand.order,
        grand.deep,
        grand.restricted,
        start.elapsed().as_secs_f64()
    );
}
