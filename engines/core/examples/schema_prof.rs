//! Times the schema compiler in the harness's dialect (one optional space, required
//! escapes) over every schema file in a directory, `reps` times: a fixed load to profile
//! (`perf record --call-graph dwarf`). Usage: `cargo run --release --example schema_prof
//! -p tokensdfa-core -- DIR [reps]`.

use tokensdfa_core::schema::{compile, Dialect, Escapes, Whitespace};
fn main() {
    let dir = std::env::args().nth(1).unwrap();
    let reps: usize = std::env::args()
        .nth(2)
        .map(|s| s.parse().unwrap())
        .unwrap_or(20);
    let d = Dialect {
        whitespace: Whitespace::OptionalSpace,
        escapes: Escapes::Required,
        ..Dialect::default()
    };
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let texts: Vec<String> = files
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    let t = std::time::Instant::now();
    let mut n = 0;
    for _ in 0..reps {
        for s in &texts {
            if compile(s, &d).is_ok() {
                n += 1;
            }
        }
    }
    eprintln!("{n} ok, {:?}", t.elapsed());
}
