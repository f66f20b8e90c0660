//! Several `contains` against a direct check: random sets of `contains` (each an
//! enumeration over a small pool), an `items` enumeration and item bounds, and random
//! arrays over the pool, judged by the tree and, where one is written, the regex text,
//! each against "every item allowed, each `contains` met by some item, the count
//! within bounds".

mod common;

use proptest::prelude::*;
use proptest::sample::subsequence;
use tokensdfa_schema::{compile, Dialect};

const POOL: [&str; 5] = ["1", "2", "3", "\"a\"", "null"];

fn enumeration(ids: &[usize]) -> String {
    let values: Vec<&str> = ids.iter().map(|&i| POOL[i]).collect();
    format!(r#"{{"enum":[{}]}}"#, values.join(","))
}

fn all() -> Vec<usize> {
    (0..POOL.len()).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(common::cases()))]

    #[test]
    fn several_contains_match_a_direct_check(
        items in subsequence(all(), 1..=5),
        contains in prop::collection::vec(subsequence(all(), 1..=3), 1..=5),
        min in 0u64..3,
        span in prop::option::of(0u64..5),
        arrays in prop::collection::vec(prop::collection::vec(0..POOL.len(), 0..7), 24),
    ) {
        let max = span.map(|s| min + s);
        let parts: Vec<String> = contains
            .iter()
            .map(|c| format!(r#"{{"contains":{}}}"#, enumeration(c)))
            .collect();
        let bound = max.map_or(String::new(), |m| format!(r#","maxItems":{m}"#));
        let schema = format!(
            r#"{{"type":"array","items":{},"allOf":[{}],"minItems":{min}{bound}}}"#,
            enumeration(&items),
            parts.join(","),
        );
        let d = Dialect::default();
        let tree = common::Tree::new(&schema, &d)
            .map_err(|e| TestCaseError::fail(format!("{schema}: {e}")))?;
        let text = compile(&schema, &d)
            .ok()
            .map(|re| common::matcher(&re).expect("a printed regex parses"));
        // valid arrays are rare among random ones: one item from each `contains`
        let picked: Vec<usize> = contains.iter().map(|c| c[0]).collect();
        for array in arrays.iter().chain([&picked]) {
            let n = array.len() as u64;
            let ok = n >= min
                && max.is_none_or(|m| n <= m)
                && array.iter().all(|i| items.contains(i))
                && contains.iter().all(|c| array.iter().any(|i| c.contains(i)));
            let texts: Vec<&str> = array.iter().map(|&i| POOL[i]).collect();
            let instance = format!("[{}]", texts.join(","));
            prop_assert_eq!(tree.accepts(&instance), ok, "{} on {}", schema, instance);
            if let Some(m) = &text {
                prop_assert_eq!(m.is_match(&instance), ok, "text of {} on {}", schema, instance);
            }
        }
    }
}
