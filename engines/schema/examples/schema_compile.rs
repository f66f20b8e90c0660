//! Compiles one schema (a file path, or `-` for stdin) and prints the regex or the
//! refusal. Usage: `cargo run --release -p tokensdfa-schema --example schema_compile -- schema.json`.

use std::io::Read;

use tokensdfa_schema::{compile, Dialect};

fn main() {
    let arg = std::env::args().nth(1).unwrap_or_else(|| "-".into());
    let mut text = String::new();
    if arg == "-" {
        std::io::stdin().read_to_string(&mut text).expect("stdin");
    } else {
        text = std::fs::read_to_string(&arg).expect("readable schema file");
    }
    match compile(&text, &Dialect::default()) {
        Ok(re) => println!("{re}"),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}
