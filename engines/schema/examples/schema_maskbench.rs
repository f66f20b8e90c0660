//! Coverage on MaskBench: how many schemas compile, why the others are refused, and
//! how long it takes. Every regex returned is also parsed with regex-syntax.
//!
//! Usage: `cargo run --release -p tokensdfa-schema --example schema_maskbench [DIR]` (default
//! `../shared/corpora/maskbench` beside the project; each file is a JSON object with a `schema` field).
//! `MAX_REGEX_MIB=64` sets the regex-size limit the harness uses (default: the dialect's 4);
//! `DETAIL=not` prints each refusal whose reason contains `not`, with the file.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use tokensdfa_schema::{compile, Dialect, SchemaError};

const DEFAULT_DIR: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/corpora/maskbench"
);

fn reason(e: &SchemaError) -> String {
    match e {
        SchemaError::Unsupported { keyword, .. } => format!("unsupported {keyword}"),
        SchemaError::InvalidSchema { message, .. } => {
            format!("invalid: {}", message.chars().take(40).collect::<String>())
        }
        SchemaError::LimitExceeded { what, .. } => {
            format!(
                "limit: {}",
                what.split(|c: char| c.is_ascii_digit())
                    .next()
                    .unwrap_or("")
            )
        }
    }
}

#[derive(Default)]
struct Stats {
    ok: u32,
    refused: u32,
    no_schema: u32,
    bad_regex: u32,
    reasons: HashMap<String, u32>,
    total: Duration,
    slowest: (Duration, String),
    bytes: usize,
}

impl Stats {
    fn record(&mut self, file: &str, dt: Duration, r: Result<String, SchemaError>) {
        self.total += dt;
        if dt.as_secs_f64() > 1.0 {
            eprintln!("slow: {:.1}s {file}", dt.as_secs_f64());
        }
        if dt > self.slowest.0 {
            self.slowest = (dt, file.to_string());
        }
        match r {
            Ok(re) => {
                self.bytes += re.len();
                if regex_syntax::ParserBuilder::new()
                    .nest_limit(1000)
                    .build()
                    .parse(&re)
                    .is_ok()
                {
                    self.ok += 1;
                } else {
                    self.bad_regex += 1;
                }
            }
            Err(e) => {
                self.refused += 1;
                let why = reason(&e);
                if let Some(d) = std::env::var_os("DETAIL") {
                    if why.contains(d.to_str().unwrap_or("")) {
                        println!("detail: {file}: {e}");
                    }
                }
                *self.reasons.entry(why).or_default() += 1;
            }
        }
    }

    fn print(&self) {
        let n = self.ok + self.refused + self.bad_regex;
        println!("schemas: {n} (files without a schema: {})", self.no_schema);
        let pct = 100.0 * self.ok as f64 / n.max(1) as f64;
        println!(
            "compiled: {} ({pct:.1}%), refused: {}, regex-syntax rejects: {}",
            self.ok, self.refused, self.bad_regex
        );
        let (t, s) = (self.total.as_secs_f64(), self.slowest.0.as_secs_f64());
        println!(
            "compile time: total {t:.2}s, slowest {s:.2}s ({})",
            self.slowest.1
        );
        println!(
            "regex bytes: {} in all, {} on average",
            self.bytes,
            self.bytes / self.ok.max(1) as usize
        );
        let mut top: Vec<_> = self.reasons.iter().collect();
        top.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        println!("top refusal reasons:");
        for (r, c) in top.iter().take(20) {
            println!("  {c:>5}  {r}");
        }
    }
}

fn main() {
    let dir = std::env::args().nth(1).unwrap_or(DEFAULT_DIR.into());
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("a directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    files.sort();
    let mut dialect = Dialect::default();
    if let Some(mib) = std::env::var("MAX_REGEX_MIB")
        .ok()
        .and_then(|m| m.parse::<usize>().ok())
    {
        dialect.max_regex_len = mib << 20;
    }
    let mut stats = Stats::default();
    for f in &files {
        let Ok(text) = std::fs::read_to_string(f) else {
            continue;
        };
        let Ok(doc) = serde_json::from_str::<serde_json::Value>(&text) else {
            continue;
        };
        let Some(schema) = doc.get("schema") else {
            stats.no_schema += 1;
            continue;
        };
        let schema = schema.to_string();
        if std::env::var_os("TRACE").is_some() {
            eprintln!("{}", f.display());
        }
        let t = Instant::now();
        let r = compile(&schema, &dialect);
        stats.record(&f.display().to_string(), t.elapsed(), r);
    }
    stats.print();
}
