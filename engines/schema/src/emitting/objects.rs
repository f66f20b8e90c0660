//! Objects in schema order: declared members, then the undeclared ones.
//!
//! Contract: [`Emitter::object`] matches exactly the dialect's texts of the objects an
//! [`ObjCons`] admits: the declared keys in declared order, each present (required) or
//! possibly absent (optional), then any number of undeclared keys. An undeclared key
//! is any string but the declared ones, within `propertyNames`; its value is the
//! additional schema, or the meet of the `patternProperties` schemas whose patterns
//! match it (key languages split by which patterns match, in at most [`MAX_REGIONS`]).
//! `minProperties`/`maxProperties` are exact when they hold for every such object,
//! when every declared key is required (the count then bounds the undeclared keys),
//! or for `minProperties: 1` with no key required (the object is not empty); other
//! counts are refused. Key rules of merged schemas all apply (their patterns split
//! the keys together). A key that must be
//! present among the undeclared ones ([`ObjCons::some`], from a complement) makes the
//! undeclared members `(x,)* w (,x)*`, `w` the members that qualify; two such keys
//! are one member that is both or one of each in either order; counts as
//! [`Emitter::witnessed`] allows.
//!
//! [`MAX_REGIONS`]: crate::shapes::keyspace::MAX_REGIONS

use crate::context::{Fail, Step};
use crate::dialect::{Escapes, Keys};
use crate::emitting::emit::Emitter;
use crate::emitting::keys::not_in;
use crate::emitting::spell::canonical;
use crate::languages::automaton::TooLarge;
use crate::languages::eliminate::to_rx;
use crate::languages::rx::{self, Rx};
use crate::shapes::keyspace::{key_regions, too_large};
use crate::shapes::merge::intersect;
use crate::shapes::shape::{ObjCons, Witness};

/// Optional members chained together before the runs are ([`Emitter::all_optional`]).
const CHAIN_RUN: usize = 16;
/// The most keys that must be present among the undeclared ones: a counted automaton
/// of `2^k + 1` states, whose hits are the members of each of `2^k - 1` sets of them.
const MAX_WITNESSES: usize = 5;

impl Emitter<'_> {
    /// The texts of the objects `o` admits.
    pub fn object(&mut self, o: &ObjCons) -> Step<Rx> {
        let mut members = Vec::new();
        for (k, v) in &o.props {
            let required = o.required.contains(k);
            let mut admitted = !v.is_never();
            for n in &o.names {
                admitted &= self.ctx.matches(&n.rx, k)?;
            }
            let val = if admitted {
                self.value(v)?
            } else {
                rx::never()
            };
            if rx::is_never(&val) {
                if required {
                    return Ok(rx::never());
                }
                continue;
            }
            let key = match self.ctx.dialect.keys {
                Keys::AsStrings => self.quoted(&rx::lit(k)),
                Keys::Canonical => rx::lit(&format!("\"{}\"", canonical(k, false))),
                Keys::CanonicalDelEscaped => rx::lit(&format!("\"{}\"", canonical(k, true))),
            };
            members.push((rx::concat([key, self.tok.colon.clone(), val]), required));
        }
        let extra = self.extras(o, &[])?;
        let required = members.iter().filter(|m| m.1).count() as u64;
        if o.max.is_some_and(|m| m < required) {
            return Ok(rx::never());
        }
        let all_required = required == members.len() as u64;
        // `minProperties: 1` with nothing required asks only for a nonempty body
        let nonempty = o.min == 1 && required == 0;
        let (lo, hi) = match &extra {
            Some(_) if all_required => {
                (o.min.saturating_sub(required), o.max.map(|m| m - required))
            }
            _ => {
                let possible = extra.is_none().then_some(members.len() as u64);
                let min_ok = o.min <= required || nonempty;
                let max_ok = o.max.is_none_or(|m| possible.is_some_and(|p| m >= p));
                if (!min_ok || !max_ok) && o.some.is_empty() {
                    return self.counted_members(&members, extra.as_ref(), o.min, o.max);
                }
                if !min_ok || !max_ok {
                    let key = if min_ok {
                        "maxProperties"
                    } else {
                        "minProperties"
                    };
                    return Err(Fail::unsupported(
                        key,
                        "the count depends on which optional properties are present",
                    ));
                }
                (0, None)
            }
        };
        if !o.some.is_empty() {
            let Some(x) = &extra else {
                return Ok(rx::never());
            };
            let undeclared = self.witnessed(o, x, lo, hi)?;
            if rx::is_never(&undeclared) {
                return Ok(rx::never());
            }
            let body = self.with_witness(&members, undeclared);
            return Ok(self.tok.container("{", Some(body), false, "}"));
        }
        let (body, empty) = self.sequence(&members, extra.as_ref().map(|x| (x, lo, hi)))?;
        Ok(self.tok.container("{", body, empty && !nonempty, "}"))
    }

    /// The undeclared members (`lo..=hi` of `x`) when the object's witnesses
    /// ([`ObjCons::some`]) must be among them: one witness by [`Emitter::some_of`], two
    /// by [`Emitter::some_of_each`], up to [`MAX_WITNESSES`] by
    /// [`Emitter::counted_hits`] over the hits of every set of them; more are refused.
    fn witnessed(&mut self, o: &ObjCons, x: &Rx, lo: u64, hi: Option<u64>) -> Step<Rx> {
        match o.some.as_slice() {
            [w] => match self.extras(o, std::slice::from_ref(w))? {
                Some(w) => self.some_of(x, &w, lo, hi),
                None => Ok(rx::never()),
            },
            [a, b] => {
                let both = self.extras(o, &o.some)?.unwrap_or_else(rx::never);
                let one_a = self.extras(o, std::slice::from_ref(a))?;
                let one_b = self.extras(o, std::slice::from_ref(b))?;
                match (one_a, one_b) {
                    (Some(p), Some(q)) => self.some_of_each(x, &p, &q, &both, lo, hi),
                    _ => Ok(rx::never()),
                }
            }
            all if all.len() <= MAX_WITNESSES => {
                let mut hits = Vec::new();
                for set in 1..1usize << all.len() {
                    let of_set: Vec<Witness> = (0..all.len())
                        .filter(|i| set >> i & 1 == 1)
                        .map(|i| all[i].clone())
                        .collect();
                    if let Some(h) = self.extras(o, &of_set)? {
                        hits.push((set, h));
                    }
                }
                self.counted_hits(x, &hits, all.len(), lo, hi)
            }
            _ => Err(Fail::unsupported(
                "not",
                format!(
                    "more than {MAX_WITNESSES} keys that must be present among the undeclared ones"
                ),
            )),
        }
    }

    /// Members in order, then the undeclared ones with their witnesses (`undeclared`),
    /// with `d,` required where the declared members cannot all be absent.
    fn with_witness(&self, members: &[(Rx, bool)], undeclared: Rx) -> Rx {
        let (declared, may_be_empty) = self.declared(members);
        match declared {
            None => undeclared,
            Some(d) => {
                let lead = rx::concat([d, self.tok.comma.clone()]);
                let lead = if may_be_empty { rx::opt(lead) } else { lead };
                rx::concat([lead, undeclared])
            }
        }
    }

    /// Members in order, then the undeclared ones (`lo..=hi` of them): the nonempty
    /// body, and whether the empty body is allowed. Undeclared members are written
    /// twice at most; declared ones once where one is required, four times at most
    /// where none is ([`Emitter::all_optional`]).
    fn sequence(
        &self,
        members: &[(Rx, bool)],
        extra: Option<(&Rx, u64, Option<u64>)>,
    ) -> Step<(Option<Rx>, bool)> {
        let (declared, may_be_empty) = self.declared(members);
        let Some((x, lo, hi)) = extra else {
            return Ok((declared, may_be_empty));
        };
        let body = match declared {
            None if hi == Some(0) => None,
            None => Some(rx::concat([
                x.clone(),
                self.more(x, lo.saturating_sub(1), hi.map(|h| h - 1))?,
            ])),
            Some(d) if may_be_empty => Some(rx::concat([
                rx::alt([d, x.clone()]),
                self.more(x, 0, None)?,
            ])),
            Some(d) => Some(rx::concat([d, self.more(x, lo, hi)?])),
        };
        let empty = if members.is_empty() {
            lo == 0
        } else {
            may_be_empty
        };
        Ok((body, empty))
    }

    /// The declared members alone: the nonempty body, and whether it may be empty.
    fn declared(&self, members: &[(Rx, bool)]) -> (Option<Rx>, bool) {
        let Some(r) = members.iter().position(|m| m.1) else {
            return (self.all_optional(members), true);
        };
        let mut tail = rx::empty();
        for (m, required) in members[r + 1..].iter().rev() {
            let step = rx::concat([self.tok.comma.clone(), m.clone()]);
            tail = rx::concat([if *required { step } else { rx::opt(step) }, tail]);
        }
        // Members before the first required one are each followed by a comma.
        let mut parts: Vec<Rx> = members[..r]
            .iter()
            .map(|(m, _)| rx::opt(rx::concat([m.clone(), self.tok.comma.clone()])))
            .collect();
        parts.push(members[r].0.clone());
        parts.push(tail);
        (Some(rx::concat(parts)), false)
    }

    /// Optional members only: any nonempty selection in order, comma-joined. Chained
    /// ([`Emitter::chain`]) within runs of [`CHAIN_RUN`] members, the runs chained in
    /// turn, so each member is written four times at most and the groups nest one per
    /// member of a run plus one per run.
    fn all_optional(&self, members: &[(Rx, bool)]) -> Option<Rx> {
        let runs: Vec<Rx> = members
            .chunks(CHAIN_RUN)
            .filter_map(|run| self.chain(run.iter().map(|(m, _)| m.clone())))
            .collect();
        self.chain(runs)
    }

    /// Any nonempty selection of `parts` in order, comma-joined:
    /// `E(k) = E(k-1) (,p_k)? | p_k`, each part written twice. (Starting the body at
    /// each part instead writes part `k` once per earlier part: quadratic.)
    fn chain(&self, parts: impl IntoIterator<Item = Rx>) -> Option<Rx> {
        let mut acc: Option<Rx> = None;
        for p in parts {
            acc = Some(match acc {
                None => p,
                Some(e) => {
                    let more = rx::opt(rx::concat([self.tok.comma.clone(), p.clone()]));
                    rx::alt([rx::concat([e, more]), p])
                }
            });
        }
        acc
    }

    /// The member regex of an undeclared key, if any is allowed; with `witnesses`, of an
    /// undeclared key that also lies in each witness's language with a value in each
    /// one's shape.
    fn extras(&mut self, o: &ObjCons, witnesses: &[Witness]) -> Step<Option<Rx>> {
        let plain = match o.rules.as_slice() {
            [] => Some(self.ctx.any()),
            [r] if r.patterns.is_empty() => Some(r.additional.clone()),
            _ => None,
        };
        if let Some(additional) = plain.filter(|_| o.names.is_empty() && witnesses.is_empty()) {
            // every key but the declared ones, straight from their trie
            if additional.is_never() {
                return Ok(None);
            }
            let v = self.value(&additional)?;
            if rx::is_never(&v) {
                return Ok(None);
            }
            let keys: Vec<&str> = o.props.iter().map(|(k, _)| k.as_str()).collect();
            let names = not_in(&keys);
            // the dialect's undeclared-key spelling holds beside declared keys only
            let speller = self.ctx.key_speller.as_mut().filter(|_| !keys.is_empty());
            let key = match speller {
                Some(speller) => rx::concat([rx::lit("\""), speller.spell(&names), rx::lit("\"")]),
                None => self.quoted(&names),
            };
            return Ok(Some(rx::concat([key, self.tok.colon.clone(), v])));
        }
        let mut names = o.names.clone();
        names.extend(witnesses.iter().map(|(l, _)| l.clone()));
        let mut alts = Vec::new();
        for (keys, mut value) in key_regions(self.ctx, o, &names, &o.rules)? {
            for (_, w) in witnesses {
                value = intersect(self.ctx, &value, w)?;
            }
            if value.is_never() {
                continue;
            }
            let v = self.value(&value)?;
            if rx::is_never(&v) {
                continue;
            }
            let key = to_rx(&keys).ok_or_else(|| too_large(TooLarge))?;
            if key.printed_len() > self.ctx.dialect.max_regex_len {
                // a key region's automaton eliminates to a regex that can double with
                // every state ("a name holding one of 30 words" writes 484 MB), and the
                // lazy index compiles the regex, not the automaton: refused, as text
                return Err(too_large(TooLarge));
            }
            let key = self.region_key(o, &key)?;
            alts.push(rx::concat([key, self.tok.colon.clone(), v]));
        }
        Ok((!alts.is_empty()).then(|| rx::alt(alts)))
    }

    /// The quoted keys of a key region `keys`: constrained strings
    /// ([`Emitter::quoted_constrained`]), but under [`Escapes::FreeStringsOnly`] keys a
    /// `propertyNames` lists ([`ObjCons::listed_names`]) with no `patternProperties`
    /// beside it each in its one spelling, as listed strings: xgrammar 0.2.8 writes them
    /// as JSON literals (`"k\"\n\u007f"`). (With patterns it reads no `propertyNames`.)
    fn region_key(&mut self, o: &ObjCons, keys: &Rx) -> Step<Rx> {
        let spelled = self.ctx.dialect.escapes == Escapes::FreeStringsOnly
            && o.rules.iter().all(|r| r.patterns.is_empty());
        let Some(names) = o.listed_names.as_ref().filter(|_| spelled) else {
            return Ok(self.quoted_constrained(keys));
        };
        let mut alts = Vec::new();
        for k in names {
            if self.ctx.matches(keys, k)? {
                alts.push(rx::lit(&format!("\"{}\"", canonical(k, true))));
            }
        }
        Ok(rx::alt(alts))
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::full_match;

    #[test]
    fn long_keys_stay_within_parser_nesting() {
        use crate::dialect::{Dialect, Escapes, Whitespace};
        let long = "k".repeat(300);
        let schema = format!(
            r#"{{"type":"object","properties":{{"{long}":{{"type":"string"}},"a":{{}}}}}}"#
        );
        let dialect = Dialect {
            whitespace: Whitespace::OptionalSpace,
            escapes: Escapes::Required,
            ..Dialect::default()
        };
        let re = crate::compile(&schema, &dialect).unwrap();
        tokensdfa_core::dfa::parse(&re).expect("the indexes' parser (nest limit 250) reads it");
        assert!(full_match(&re, &format!(r#"{{"{long}":"x","b":1}}"#)));
        assert!(!full_match(&re, &format!(r#"{{"{long}":"x","{long}":1}}"#)));
    }

    #[test]
    fn listed_keys_come_before_keys_only_required_across_merged_parts() {
        use crate::dialect::Dialect;
        // 2020-12: `required` beside `$ref` merges with the referenced `properties`
        let schema = r##"{"$ref":"#/$defs/l","required":["b","c"],
            "$defs":{"l":{"properties":{"a":{},"b":{}}}}}"##;
        let re = crate::compile(schema, &Dialect::default()).unwrap();
        assert!(full_match(&re, r#"{"a":1,"b":2,"c":3}"#), "{re}");
        assert!(full_match(&re, r#"{"b":2,"c":3}"#), "{re}");
        assert!(!full_match(&re, r#"{"b":2,"a":1,"c":3}"#), "{re}");
        assert!(!full_match(&re, r#"{"c":3,"b":2}"#), "{re}");
    }
}
