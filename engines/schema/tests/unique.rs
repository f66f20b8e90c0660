//! `uniqueItems` over enumerated values against a direct check: random enumerations
//! (with `1` and `1.0`, one JSON value, both in the pool), prefixes and item bounds, and
//! random arrays over the pool, judged by the tree and, where one is written, the regex
//! text, each against "every item allowed where it stands, no value twice, the count
//! within bounds".

mod common;

use proptest::prelude::*;
use proptest::sample::subsequence;
use tokensdfa_schema::{compile, Dialect};

/// The pool: an instance's text, the JSON value it stands for, the schema's spelling.
const POOL: [(&str, &str, &str); 7] = [
    ("\"a\"", "a", "\"a\""),
    ("\"b\"", "b", "\"b\""),
    ("1", "1", "1"),
    ("1.0", "1", "1.0"),
    ("2", "2", "2"),
    ("null", "null", "null"),
    ("true", "true", "true"),
];

fn enumeration(ids: &[usize]) -> String {
    let values: Vec<&str> = ids.iter().map(|&i| POOL[i].2).collect();
    format!(r#"{{"enum":[{}]}}"#, values.join(","))
}

fn allowed(ids: &[usize], item: usize) -> bool {
    ids.iter().any(|&i| POOL[i].1 == POOL[item].1)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(common::cases()))]

    #[test]
    fn unique_walks_match_a_direct_check(
        items in subsequence((0..POOL.len()).collect::<Vec<_>>(), 0..=5),
        prefix in prop::collection::vec(subsequence((0..POOL.len()).collect::<Vec<_>>(), 1..=3), 0..=2),
        min in 0u64..4,
        span in prop::option::of(0u64..4),
        arrays in prop::collection::vec(prop::collection::vec(0..POOL.len(), 0..6), 24),
    ) {
        let max = span.map(|s| min + s);
        let prefix_json: Vec<String> = prefix.iter().map(|p| enumeration(p)).collect();
        let bound = max.map_or(String::new(), |m| format!(r#","maxItems":{m}"#));
        let schema = format!(
            r#"{{"type":"array","prefixItems":[{}],"items":{},"uniqueItems":true,"minItems":{min}{bound}}}"#,
            prefix_json.join(","),
            enumeration(&items),
        );
        let d = Dialect::default();
        let tree = common::Tree::new(&schema, &d).map_err(|e| TestCaseError::fail(format!("{schema}: {e}")))?;
        let text = compile(&schema, &d).ok().map(|re| common::matcher(&re).expect("a printed regex parses"));
        // valid arrays are rare among random ones: the enumeration itself, reversed, halved
        let half = items[..items.len() / 2].to_vec();
        let derived = [items.clone(), items.iter().rev().copied().collect(), half];
        for array in arrays.iter().chain(&derived) {
            let n = array.len() as u64;
            let mut seen: Vec<&str> = Vec::new();
            let mut ok = n >= min && max.is_none_or(|m| n <= m);
            for (j, &item) in array.iter().enumerate() {
                let here = prefix.get(j).unwrap_or(&items);
                ok &= allowed(here, item) && !seen.contains(&POOL[item].1);
                seen.push(POOL[item].1);
            }
            let texts: Vec<&str> = array.iter().map(|&i| POOL[i].0).collect();
            let instance = format!("[{}]", texts.join(","));
            prop_assert_eq!(tree.accepts(&instance), ok, "{} on {}", schema, instance);
            if let Some(m) = &text {
                prop_assert_eq!(m.is_match(&instance), ok, "text of {} on {}", schema, instance);
            }
        }
    }
}
