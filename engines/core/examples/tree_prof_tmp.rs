use tokensdfa_core::schema::{compile_ast, Dialect, Escapes, Whitespace};
fn main() {
    let f = std::env::args().nth(1).unwrap();
    let reps: usize = std::env::args()
        .nth(2)
        .map(|s| s.parse().unwrap())
        .unwrap_or(1);
    let d = Dialect {
        whitespace: Whitespace::OptionalSpace,
        escapes: Escapes::Required,
        ..Dialect::default()
    };
    let mut text = std::fs::read_to_string(&f).unwrap();
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) {
        if let Some(s) = v.get("schema") {
            if s.is_object() {
                text = s.to_string();
            }
        }
    }
    for _ in 0..reps {
        let t = std::time::Instant::now();
        let r = compile_ast(&text, &d);
        eprintln!("ok={} {:?}", r.is_ok(), t.elapsed());
    }
}
