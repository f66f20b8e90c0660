//! From a [`Shape`] to the regex of its JSON texts in the dialect.
//!
//! Contract: [`Emitter::value`] returns a text-level regex matching exactly the texts
//! of the dialect (see [`crate::dialect`]) whose value the shape admits, or refuses.
//! Shapes are emitted once per `Rc` (memoized by pointer). Tokens are separated as
//! the dialect's whitespace says; an empty container is `[` ws `]`, never with two
//! whitespace runs. Arrays are positional (prefix items, then the rest, within the
//! length bounds); objects are in schema order (see [`crate::emitting::objects`]).

use std::collections::HashMap;
use std::sync::Arc;

use crate::context::{Ctx, Fail, Step};
use crate::dialect::{Escapes, Whitespace};
use crate::emitting::spell::canonical;
use crate::languages::charset::CharSet;
use crate::languages::rx::{self, Rx};
use crate::shapes::merge::intersect;
use crate::shapes::scalars::{admits, num_rx, str_lang};
use crate::shapes::shape::{ArrCons, Shape, ShapeRef, StrCons};
use tokensdfa_core::counted::{finite, upper, Counted};

/// A counted automaton over members or items (one a step) with `lo..=hi` steps,
/// [`rx::Graph`], carrying `text` where its regex was written; a limit named `what`
/// when a bound or its reach table is too large.
pub fn counted_steps(
    targets: Vec<Vec<u32>>,
    labels: Vec<Vec<Rx>>,
    accept: Vec<bool>,
    (lo, hi): (u64, Option<u64>),
    what: &str,
    text: Option<Rx>,
) -> Step<Rx> {
    let lo = finite(lo).ok_or_else(|| Fail::Limit(format!("a count of {lo}")))?;
    let hi = upper(hi).ok_or_else(|| Fail::Limit(format!("a count of {hi:?}")))?;
    let counted =
        Counted::new(targets, accept, lo, hi, 1 << 16).map_err(|_| Fail::Limit(what.into()))?;
    Ok(rx::graph(rx::Graph {
        counted: Arc::new(counted),
        labels,
        text,
    }))
}

/// The most `contains` of one array: [`Emitter::counted_hits`] has a state per set of
/// them, and each set's items are a meet of schemas.
const MAX_CONTAINS: usize = 6;

/// The most placements of a required item or key [`Emitter::some_of`] writes out.
const MAX_SPLITS: u64 = 32;

/// The separators of the dialect.
#[derive(Clone)]
pub struct Tokens {
    /// Whitespace allowed just inside brackets and braces.
    pub ws: Rx,
    pub comma: Rx,
    pub colon: Rx,
}

impl Tokens {
    pub fn new(w: Whitespace) -> Tokens {
        match w {
            Whitespace::None => Tokens {
                ws: rx::empty(),
                comma: rx::lit(","),
                colon: rx::lit(":"),
            },
            Whitespace::OptionalSpace => Tokens {
                ws: rx::empty(),
                comma: rx::concat([rx::lit(","), rx::opt(rx::lit(" "))]),
                colon: rx::concat([rx::lit(":"), rx::opt(rx::lit(" "))]),
            },
            Whitespace::Any { max_run } => {
                let ws = rx::repeat(
                    rx::set(CharSet::from_ranges(vec![(9, 10), (13, 13), (32, 32)])),
                    0,
                    max_run,
                );
                Tokens {
                    comma: rx::concat([ws.clone(), rx::lit(","), ws.clone()]),
                    colon: rx::concat([ws.clone(), rx::lit(":"), ws.clone()]),
                    ws,
                }
            }
        }
    }

    /// `open body close`, with `body` a nonempty content (or none) and `empty` whether
    /// the container may be empty.
    pub fn container(&self, open: &str, body: Option<Rx>, empty: bool, close: &str) -> Rx {
        let full = body.map(|b| {
            rx::concat([
                rx::lit(open),
                self.ws.clone(),
                b,
                self.ws.clone(),
                rx::lit(close),
            ])
        });
        let bare = empty.then(|| rx::concat([rx::lit(open), self.ws.clone(), rx::lit(close)]));
        rx::alt(bare.into_iter().chain(full))
    }
}

pub struct Emitter<'c> {
    pub ctx: &'c mut Ctx,
    /// The separators in force: `spaced`, or none at all inside a compact container.
    pub tok: Tokens,
    pub(super) spaced: Tokens,
    memo: HashMap<*const Shape, (ShapeRef, Rx)>,
    pub(super) any: HashMap<u32, Rx>,
    /// States of the `uniqueItems` automata built so far ([`crate::emitting::unique`]).
    pub unique_states: usize,
    /// Whether the separators in force are a compact container's.
    pub(super) compact: bool,
    /// In the grammar mode, which unconstrained-value rules were used: spaced, compact.
    pub any_rules: [bool; 2],
}

impl<'c> Emitter<'c> {
    pub fn new(ctx: &'c mut Ctx) -> Emitter<'c> {
        let tok = Tokens::new(ctx.dialect.whitespace);
        Emitter {
            ctx,
            spaced: tok.clone(),
            tok,
            memo: HashMap::new(),
            any: HashMap::new(),
            unique_states: 0,
            compact: false,
            any_rules: [false; 2],
        }
    }

    /// The texts of the values `s` admits.
    pub fn value(&mut self, s: &ShapeRef) -> Step<Rx> {
        if s.is_any() {
            return Ok(self.any_value(self.ctx.dialect.any_depth));
        }
        let key = ShapeRef::as_ptr(s);
        if let Some((_, x)) = self.memo.get(&key) {
            return Ok(x.clone());
        }
        let mut parts = Vec::new();
        if s.null {
            parts.push(rx::lit("null"));
        }
        if s.bools[1] {
            parts.push(rx::lit("true"));
        }
        if s.bools[0] {
            parts.push(rx::lit("false"));
        }
        for c in &s.numbers {
            parts.push(num_rx(self.ctx, c)?);
        }
        for c in &s.strings {
            parts.push(self.string(c)?);
        }
        for c in &s.arrays {
            parts.push(self.separated(c.compact, |e| e.array(c))?);
        }
        for c in &s.objects {
            parts.push(self.separated(c.compact, |e| e.object(c))?);
        }
        parts.extend(s.rules.iter().map(|&n| rx::rule(n)));
        let x = rx::alt(parts);
        self.memo.insert(key, (s.clone(), x.clone()));
        Ok(x)
    }

    /// `f` with the dialect's separators, or with no whitespace at all for a `compact`
    /// container (a listed array or object, [`crate::shapes::shape::ArrCons::compact`]).
    fn separated(&mut self, compact: bool, f: impl FnOnce(&mut Self) -> Step<Rx>) -> Step<Rx> {
        let tok = if compact {
            Tokens::new(Whitespace::None)
        } else {
            self.spaced.clone()
        };
        let outer = std::mem::replace(&mut self.tok, tok);
        let outer_compact = std::mem::replace(&mut self.compact, compact);
        let x = f(self);
        self.tok = outer;
        self.compact = outer_compact;
        x
    }

    /// A string literal whose decoded value is in the character-level language `x`.
    pub fn quoted(&mut self, x: &Rx) -> Rx {
        if rx::is_never(x) {
            return rx::never();
        }
        rx::concat([rx::lit("\""), self.ctx.speller.spell(x), rx::lit("\"")])
    }

    /// A string literal in `x` that the schema constrains (a string value with a
    /// pattern, format, length or excluded values, or an undeclared key a key language
    /// limits: `patternProperties`, `propertyNames`, a key a complement asks for). Under
    /// [`Escapes::FreeStringsOnly`] it takes no escape: xgrammar 0.2.8 refuses
    /// `{"\u0061b":1}` under `patternProperties: {"^[a-z]+$": ...}` and under a
    /// `propertyNames` pattern, and takes it where the keys are free. (A listed string
    /// value has its own spelling there, [`Emitter::string`], and so does a key a
    /// `propertyNames` lists, `Emitter::region_key`.)
    pub fn quoted_constrained(&mut self, x: &Rx) -> Rx {
        if self.ctx.dialect.escapes != Escapes::FreeStringsOnly || rx::is_never(x) {
            return self.quoted(x);
        }
        rx::concat([rx::lit("\""), self.ctx.raw_speller.spell(x), rx::lit("\"")])
    }

    /// The texts of the strings `c` admits: free strings as [`Emitter::quoted`],
    /// constrained ones as [`Emitter::quoted_constrained`], but listed values (`enum`,
    /// `const`) under [`Escapes::FreeStringsOnly`] as [`Emitter::listed_strings`].
    pub fn string(&mut self, c: &StrCons) -> Step<Rx> {
        if let Some(values) = &c.values {
            if self.ctx.dialect.escapes == Escapes::FreeStringsOnly {
                return self.listed_strings(c, values);
            }
        }
        let as_tree = self.ctx.tree;
        let x = str_lang(self.ctx, c, as_tree)?;
        Ok(if c.is_any() {
            self.quoted(&x)
        } else {
            self.quoted_constrained(&x)
        })
    }

    /// The listed strings (`enum`, `const`) of `c` that its other constraints admit,
    /// under [`Escapes::FreeStringsOnly`]: each in its one spelling, [`canonical`] with
    /// U+007F escaped. xgrammar 0.2.8 writes a listed value as a JSON literal: `"`, `\`
    /// and `\b \f \n \r \t` in short form, other control characters and U+007F as
    /// `\u00xx` (lower-case hex), every other character raw (`/` and `é` too); it takes
    /// no other spelling (`\u0022`, `\u000a`, `\u007F`, `\/`, `\u00e9`, a raw U+007F).
    fn listed_strings(&mut self, c: &StrCons, values: &[String]) -> Step<Rx> {
        let mut alts = Vec::new();
        for v in values {
            if admits(self.ctx, c, v)? {
                alts.push(rx::lit(&format!("\"{}\"", canonical(v, true))));
            }
        }
        Ok(rx::alt(alts))
    }

    /// One or more `x` separated by commas.
    pub(super) fn list(&self, x: &Rx) -> Rx {
        rx::concat([
            x.clone(),
            rx::star(rx::concat([self.tok.comma.clone(), x.clone()])),
        ])
    }

    /// Arrays with at least one item meeting each `contains` schema, every item meeting
    /// `items`: for one or two, [`Emitter::some_of`] or [`Emitter::some_of_each`] with
    /// the items meeting both as the hits; for up to [`MAX_CONTAINS`],
    /// [`Emitter::counted_hits`] over the items meeting each set of them (a `oneOf` of
    /// arrays meets each branch with the others' complements, one `contains` each). No
    /// prefix, no uniqueness, `minContains: 1` without `maxContains`; the rest is
    /// refused.
    fn containing(&mut self, a: &ArrCons) -> Step<Rx> {
        let simple = a.contains.len() <= MAX_CONTAINS
            && a.contains.iter().all(|c| c.min == 1 && c.max.is_none())
            && a.prefix.is_empty()
            && a.unique.is_none();
        if !simple {
            return Err(Fail::unsupported(
                "contains",
                format!("only up to {MAX_CONTAINS} `contains` over plain `items` are implemented"),
            ));
        }
        let item = self.value(&a.items)?;
        let k = a.contains.len();
        let mut hits = Vec::new();
        for set in 1..1usize << k {
            let mut meet = a.items.clone();
            for (_, c) in a
                .contains
                .iter()
                .enumerate()
                .filter(|(i, _)| set >> i & 1 == 1)
            {
                meet = intersect(self.ctx, &meet, &c.shape)?;
            }
            hits.push((set, self.value(&meet)?));
        }
        let body = match hits.as_slice() {
            [(_, hit)] => self.some_of(&item, hit, a.min, a.max)?,
            [(_, p), (_, q), (_, both)] => self.some_of_each(&item, p, q, both, a.min, a.max)?,
            _ => self.counted_hits(&item, &hits, k, a.min, a.max)?,
        };
        if rx::is_never(&body) {
            return Ok(rx::never());
        }
        Ok(self.tok.container("[", Some(body), false, "]"))
    }

    /// `lo..=hi` comma-separated `x`, at least one of them a `w` (`w` within `x`):
    /// `(x,){b} w (,x){a}` over the splits `b + 1 + a` of the count. Each `b` below
    /// the last one written fixes how many may follow; the last stands for all larger
    /// `b`, so an unbounded count takes `max(lo, 1)` splits, a bounded one `hi`; past
    /// [`MAX_SPLITS`] the count is a counted automaton ([`Emitter::counted_hits`]).
    pub fn some_of(&self, x: &Rx, w: &Rx, lo: u64, hi: Option<u64>) -> Step<Rx> {
        if hi == Some(0) || hi.is_some_and(|h| h < lo) {
            return Ok(rx::never());
        }
        let last = hi.map_or(lo.saturating_sub(1), |h| h - 1);
        if last >= MAX_SPLITS {
            return self.counted_hits(x, &[(1, w.clone())], 1, lo, hi);
        }
        let x_comma = rx::concat([x.clone(), self.tok.comma.clone()]);
        let mut splits = Vec::new();
        for b in 0..=last {
            let open = hi.is_none() && b == last;
            let before = rx::repeat(x_comma.clone(), b as u32, (!open).then_some(b as u32));
            let after = hi.map(|h| h - b - 1);
            let after = self.more(x, lo.saturating_sub(b + 1), after)?;
            splits.push(rx::concat([before, w.clone(), after]));
        }
        Ok(rx::alt(splits))
    }

    /// `lo..=hi` comma-separated `x` with at least one `a` and at least one `b` (both
    /// within `x`; `both` the `x` that are both): one member that is both
    /// ([`Emitter::some_of`]), or an `a` before a `b`, or a `b` before an `a`:
    /// `(x,)* a (,x)* ,b (,x)*`. Those two need an unbounded count whose minimum is at
    /// most 2; other counts make a counted automaton ([`Emitter::counted_hits`]).
    pub fn some_of_each(
        &self,
        x: &Rx,
        a: &Rx,
        b: &Rx,
        both: &Rx,
        lo: u64,
        hi: Option<u64>,
    ) -> Step<Rx> {
        if rx::is_never(a) || rx::is_never(b) {
            return Ok(rx::never());
        }
        if hi.is_some() || lo > 2 {
            let hits = [(1, a.clone()), (2, b.clone()), (3, both.clone())];
            return self.counted_hits(x, &hits, 2, lo, hi);
        }
        let mut alts = Vec::new();
        if !rx::is_never(both) {
            alts.push(self.some_of(x, both, lo, hi)?);
        }
        let any = rx::repeat(rx::concat([x.clone(), self.tok.comma.clone()]), 0, None);
        for (p, q) in [(a, b), (b, a)] {
            let (mid, tail) = (self.more(x, 0, None)?, self.more(x, 0, None)?);
            let comma = self.tok.comma.clone();
            alts.push(rx::concat([
                any.clone(),
                p.clone(),
                mid,
                comma,
                q.clone(),
                tail,
            ]));
        }
        Ok(rx::alt(alts))
    }

    /// `lo..=hi` comma-separated `x`, among which each of `k` witnesses has a hit.
    /// `hits` are `(set, h)`: `h` the members that are hits of every witness in the bit
    /// set `set` (all within `x`). A counted automaton over the members
    /// ([`rx::Graph`], one member a unit): state 0 before the first member (read without
    /// a comma), state `1 + m` after members whose hits make the set `m`, accepting
    /// with every witness hit. Where the splits of [`Emitter::some_of`] and
    /// [`Emitter::some_of_each`] would multiply past use, this stays `2^k + 1` states;
    /// the lazy index's tree serves it, the regex text refuses it.
    pub fn counted_hits(
        &self,
        x: &Rx,
        hits: &[(usize, Rx)],
        k: usize,
        lo: u64,
        hi: Option<u64>,
    ) -> Step<Rx> {
        let full = (1usize << k) - 1;
        let mut targets = vec![Vec::new(); full + 2];
        let mut labels = vec![Vec::new(); full + 2];
        let mut edge = |from: usize, to: usize, label: Rx| {
            if !rx::is_never(&label) {
                targets[from].push(to as u32);
                labels[from].push(label);
            }
        };
        let after_comma = |r: &Rx| rx::concat([self.tok.comma.clone(), r.clone()]);
        edge(0, 1, x.clone());
        for (set, h) in hits {
            edge(0, 1 + set, h.clone());
        }
        for m in 0..=full {
            edge(1 + m, 1 + m, after_comma(x));
            for (set, h) in hits {
                edge(1 + m, 1 + (m | set), after_comma(h));
            }
        }
        let mut accept = vec![false; full + 2];
        accept[1 + full] = true;
        let what = "a count of members with witnesses";
        counted_steps(targets, labels, accept, (lo, hi), what, None)
    }

    /// `(, x){lo,hi}`.
    pub fn more(&self, x: &Rx, lo: u64, hi: Option<u64>) -> Step<Rx> {
        let n = |v: u64| finite(v).ok_or_else(|| Fail::Limit(format!("an item count of {v}")));
        let hi = hi.map(n).transpose()?;
        Ok(rx::repeat(
            rx::concat([self.tok.comma.clone(), x.clone()]),
            n(lo)?,
            hi,
        ))
    }

    fn array(&mut self, a: &ArrCons) -> Step<Rx> {
        if !a.contains.is_empty() {
            return self.containing(a);
        }
        let k = a.prefix.len() as u64;
        let mut max = a.max;
        if a.items.is_never() {
            max = Some(max.map_or(k, |m| m.min(k)));
        }
        if a.unique.is_some() && max.is_none_or(|m| m > 1) {
            return self.unique_array(a);
        }
        if max.is_some_and(|m| m < a.min) {
            return Ok(rx::never());
        }
        let item = if max.is_some_and(|m| m <= k) {
            rx::never()
        } else {
            self.value(&a.items)?
        };
        // `tail` matches the items from position `i` on, each after a comma.
        let from_k = |i: u64| (a.min.saturating_sub(i), max.map(|m| m.saturating_sub(i)));
        let mut tail = if k == 0 {
            rx::empty()
        } else {
            self.more(&item, from_k(k).0, from_k(k).1)?
        };
        for i in (1..k).rev() {
            if max.is_some_and(|m| i >= m) {
                tail = rx::empty();
                continue;
            }
            let e = self.value(&a.prefix[i as usize])?;
            let step = rx::concat([self.tok.comma.clone(), e, tail]);
            tail = if i < a.min { step } else { rx::opt(step) };
        }
        let body = if max == Some(0) {
            None
        } else if k == 0 {
            let (lo, hi) = from_k(1);
            let rest = self.more(&item, lo, hi)?;
            Some(rx::concat([item, rest]))
        } else {
            Some(rx::concat([self.value(&a.prefix[0])?, tail]))
        };
        let body = body.filter(|b| !rx::is_never(b));
        if body.is_none() && a.min > 0 {
            return Ok(rx::never());
        }
        Ok(self.tok.container("[", body, a.min == 0, "]"))
    }
}
