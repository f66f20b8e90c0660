//! Arrays with `uniqueItems` whose items are drawn from a finite set of values.
//!
//! Uniqueness of several items is not regular in general (two strings of any length
//! must differ), but over `k` enumerated values it is: an array is a walk that
//! remembers which values it has used. A counted automaton over items
//! ([`tokensdfa_core::counted`], one item a step): state 0 before the first item, state
//! `1 + j * 2^k + m` after items whose values make the set `m`, where `j` is how many
//! items were read, clipped to the prefix length (the next item's schema is
//! `prefixItems[j]`, or `items` from the end of the prefix on). Every state but the
//! first accepts; the count bounds are `minItems..=maxItems`.
//!
//! Values are told apart as JSON Schema compares instances: `1` and `1.0` are one
//! value (numbers are compared as normalized [`Decimal`]s), and each value's edge
//! label is every text of it the dialect writes (all its escapes and spellings), so a
//! value cannot be repeated under another spelling. Only `null`, booleans, enumerated
//! strings and single numbers are enumerated; arrays and objects among the items are
//! refused as before. The lazy index's tree serves the automaton; the regex text
//! prints its regex where a small walk's was written ([`written_walk`]: three of eight
//! labels, say), so regex engines and the naive reference take those too, and refuses
//! the rest, as it does every graph without a written regex.

use crate::context::{Fail, Step};
use std::collections::HashMap;

use crate::emitting::emit::{counted_steps, Emitter};
use crate::languages::decimal::Decimal;
use crate::languages::eliminate::written;
use crate::languages::rx::{self, Rx};
use crate::shapes::scalars::num_rx;
use crate::shapes::shape::{ArrCons, NumCons, ShapeRef, StrCons};

/// The most distinct values the items of a unique array may take: the automaton has
/// a state for each set of them (times the prefix positions), and an edge from each
/// state for each value not yet used. Measured on llama3 (compile and first mask of
/// `{"items": {"enum": [k strings]}, "uniqueItems": true}`): 8 values 0.1 ms, 12
/// values 1.4 ms, 14 values 7 ms; the states double with each value.
const MAX_UNIQUE_VALUES: usize = 14;

/// The most states of all such automata in one schema, prefix positions included:
/// each is compiled on its own wherever it stands (forty distinct arrays of 14 values
/// took 2.9 s to a first mask and 1 GB), so their sum is bounded; one shared by
/// `$ref` counts once.
const MAX_UNIQUE_STATES: usize = 1 << 16;

/// The most states of a walk whose regex is written ([`written_walk`]): state
/// elimination picks each state to remove by a scan of those left, so its time grows
/// with the square of the states.
const MAX_WRITTEN_STATES: usize = 1024;

/// A value, as uniqueness compares values.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Atom {
    Null,
    Bool(bool),
    Number(Decimal),
    Str(String),
}

/// The values a shape admits, each with its texts; `None` when the shape admits
/// values that are not enumerated (an unbounded string, a number range, an array,
/// an object).
type Values = Option<Vec<(Atom, Rx)>>;

impl Emitter<'_> {
    /// The array of `a` (its `unique` set, more than one item allowed): the counted
    /// automaton over its items' values, or the refusal naming `uniqueItems`.
    pub fn unique_array(&mut self, a: &ArrCons) -> Step<Rx> {
        let site = a.unique.as_ref().expect("an array with uniqueItems");
        let not_regular = || {
            Fail::unsupported_at(
                "uniqueItems",
                site,
                "uniqueness of several items is not regular in general",
            )
        };
        let p = a.prefix.len();
        let mut at = Vec::with_capacity(p + 1);
        for i in 0..=p {
            at.push(self.enumerate(a.item(i))?.ok_or_else(not_regular)?);
        }
        let mut domain: Vec<Atom> = Vec::new();
        for (atom, _) in at.iter().flatten() {
            if !domain.contains(atom) {
                domain.push(atom.clone());
            }
        }
        let k = domain.len();
        if k > MAX_UNIQUE_VALUES {
            return Err(Fail::Limit(format!(
                "uniqueItems at {} over {k} distinct values needs a state per set of \
                 them (at most {MAX_UNIQUE_VALUES} values)",
                site.0
            )));
        }
        self.unique_states = self
            .unique_states
            .saturating_add((p + 1).saturating_mul(1 << k));
        if self.unique_states > MAX_UNIQUE_STATES {
            return Err(Fail::Limit(format!(
                "uniqueItems at {}: the schema's uniqueItems automata need more than \
                 {MAX_UNIQUE_STATES} states in all",
                site.0
            )));
        }
        if a.min > k as u64 {
            return Ok(rx::never());
        }
        let (targets, labels) = self.walk(&at, &domain, p);
        let n = targets.len();
        let mut accept = vec![true; n];
        accept[0] = false;
        let max = a.max.map_or(k as u64, |m| m.min(k as u64));
        // the tree compiles the automaton and never reads a text: only printing writes it
        let text = if self.ctx.tree {
            None
        } else {
            written_walk(&targets, &labels, k, (a.min, max))
        };
        let body = counted_steps(
            targets,
            labels,
            accept,
            (a.min, Some(max)),
            "uniqueItems",
            text,
        )?;
        Ok(self.tok.container("[", Some(body), a.min == 0, "]"))
    }

    /// The edges of the walk over `at[j]` (the values of the item at position `j`, the
    /// last standing for every item past the prefix of `p`), by state: state 0 the
    /// start, state `1 + j * 2^k + m` after items whose values make the set `m` of
    /// `domain`, `j` of them read (clipped to `p`). An item after the first takes a
    /// comma.
    fn walk(
        &self,
        at: &[Vec<(Atom, Rx)>],
        domain: &[Atom],
        p: usize,
    ) -> (Vec<Vec<u32>>, Vec<Vec<Rx>>) {
        let k = domain.len();
        let bit = |atom: &Atom| 1usize << domain.iter().position(|d| d == atom).unwrap_or(0);
        // each value's bit and its label after a comma, once per position, not per state
        let after: Vec<Vec<(usize, Rx)>> = at
            .iter()
            .map(|values| {
                let comma = |x: &Rx| rx::concat([self.tok.comma.clone(), x.clone()]);
                values.iter().map(|(a, x)| (bit(a), comma(x))).collect()
            })
            .collect();
        let id = |j: usize, m: usize| 1 + (j << k) + m;
        let n = 1 + ((p + 1) << k);
        let mut targets = vec![Vec::new(); n];
        let mut labels = vec![Vec::new(); n];
        for (atom, x) in &at[0] {
            targets[0].push(id(1.min(p), bit(atom)) as u32);
            labels[0].push(x.clone());
        }
        for (j, values) in after.iter().enumerate() {
            for m in 0..(1usize << k) {
                for (b, x) in values.iter().filter(|(b, _)| m & b == 0) {
                    targets[id(j, m)].push(id((j + 1).min(p), m | b) as u32);
                    labels[id(j, m)].push(x.clone());
                }
            }
        }
        (targets, labels)
    }

    /// Each value `s` admits, with its texts ([`Values`]).
    fn enumerate(&mut self, s: &ShapeRef) -> Step<Values> {
        if !s.rules.is_empty() {
            return Err(self.ctx.refuse_rules("`uniqueItems`"));
        }
        if s.is_any() || !s.arrays.is_empty() || !s.objects.is_empty() {
            return Ok(None);
        }
        let mut out: Vec<(Atom, Rx)> = Vec::new();
        let mut add = |atom: Atom, x: Rx| {
            if rx::is_never(&x) {
                return;
            }
            match out.iter_mut().find(|(a, _)| *a == atom) {
                Some((_, y)) => *y = rx::alt([y.clone(), x]),
                None => out.push((atom, x)),
            }
        };
        if s.null {
            add(Atom::Null, rx::lit("null"));
        }
        for (b, text) in [(false, "false"), (true, "true")] {
            if s.bools[b as usize] {
                add(Atom::Bool(b), rx::lit(text));
            }
        }
        for c in &s.numbers {
            let Some(d) = point(c) else {
                return Ok(None);
            };
            add(Atom::Number(d), num_rx(self.ctx, c)?);
        }
        for c in &s.strings {
            let Some(values) = &c.values else {
                return Ok(None);
            };
            for v in values {
                let one = StrCons {
                    values: Some(vec![v.clone()]),
                    ..c.clone()
                };
                add(Atom::Str(v.clone()), self.string(&one)?);
            }
        }
        Ok(Some(out))
    }
}

/// The regex of the walk (`targets` and `labels` over the states of
/// [`Emitter::unique_array`]), for the regex text and the engines that take one, where
/// at most [`MAX_WRITTEN_STATES`] states are reached and their elimination stays within
/// bounds. The walk is acyclic (each item adds a value), so a state's item count is
/// the number of values in its set: the count bounds say which states accept and which
/// go on.
fn written_walk(
    targets: &[Vec<u32>],
    labels: &[Vec<Rx>],
    k: usize,
    (min, max): (u64, u64),
) -> Option<Rx> {
    let count = |s: usize| match s {
        0 => 0,
        s => u64::from(((s - 1) & ((1 << k) - 1)).count_ones()),
    };
    // the states reached, numbered in the order they are met
    let mut ids = HashMap::from([(0usize, 0usize)]);
    let mut order = vec![0usize];
    let mut edges: Vec<Vec<(Rx, usize)>> = Vec::new();
    while let Some(&s) = order.get(edges.len()) {
        let mut out = Vec::new();
        if count(s) < max {
            for (&t, x) in targets[s].iter().zip(&labels[s]) {
                let next = ids.len();
                let id = *ids.entry(t as usize).or_insert(next);
                if id == next {
                    order.push(t as usize);
                }
                out.push((x.clone(), id));
            }
        }
        edges.push(out);
        if order.len() > MAX_WRITTEN_STATES {
            return None;
        }
    }
    let accept: Vec<bool> = order
        .iter()
        .map(|&s| s != 0 && (min.max(1)..=max).contains(&count(s)))
        .collect();
    written(edges, &accept)
}

/// The one number `c` admits, when its bounds are one inclusive point.
fn point(c: &NumCons) -> Option<Decimal> {
    match (&c.lo, &c.hi) {
        (Some((lo, false)), Some((hi, false))) if lo == hi => Some(lo.clone()),
        _ => None,
    }
}
