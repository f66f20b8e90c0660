//! The compiler's intermediate form: a schema's instances, split by JSON type.
//!
//! A [`Shape`] says, for each of the six JSON types, which of its values are valid: a
//! flag for `null`, two for the booleans, and for numbers, strings, arrays and objects a
//! *union of alternatives*, each alternative a conjunction of constraints ([`NumCons`],
//! [`StrCons`], [`ArrCons`], [`ObjCons`]). No alternative means the type is excluded.
//! Type-specific keywords restrict only their type (`minimum` says nothing about
//! strings), so a schema's own keywords make one alternative per type, `anyOf` makes
//! several, and `allOf` intersects type by type, alternative by alternative
//! ([`intersect`](crate::shapes::merge::intersect)). Enumerated values are constraints too: `const: "a"` is a string
//! alternative whose `values` are `["a"]`, `const: [1]` an array alternative with one
//! prefix item and no others, so every keyword composes with every other.
//!
//! Nested schemas (items, property values) are `Rc`-shared [`ShapeRef`]s, so a `$ref`
//! used in many places is one shape; emission memoizes on the pointer.
//!
//! Object keys obey two invariants: a key named in `props` is constrained by its entry
//! alone (pattern properties that match it were folded in when it was declared), and
//! each [`KeyRule`] applies to the keys *not* in `props`: the value of such a key must
//! satisfy every rule, a rule being "the schemas of the patterns that match the key, or
//! the additional schema if none does". A declared key whose shape is never is a key
//! that must be absent.

use std::rc::Rc;

use crate::languages::decimal::Decimal;
use crate::languages::numbers::Bound;
use crate::languages::rx::Rx;

pub type ShapeRef = Rc<Shape>;

/// Where a keyword stands in the schema (a JSON pointer), kept for messages only: two
/// constraints written in different places are the same constraint (merges and
/// deduplication compare constraints), so a site takes no part in equality.
#[derive(Clone, Debug, Default)]
pub struct Site(pub String);

impl PartialEq for Site {
    fn eq(&self, _: &Site) -> bool {
        true
    }
}

impl Eq for Site {}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shape {
    /// Every value; the other fields are then empty and never read (see [`Shape::top`]).
    pub top: bool,
    pub null: bool,
    /// `[false allowed, true allowed]`.
    pub bools: [bool; 2],
    pub numbers: Vec<NumCons>,
    pub strings: Vec<StrCons>,
    pub arrays: Vec<ArrCons>,
    pub objects: Vec<ObjCons>,
    /// The values of these rules of the grammar being written (sorted): a recursive
    /// `$ref` in the grammar mode, rule `n` deriving its target's values. Only
    /// [`Ctx::ref_rules`](crate::context::Ctx::ref_rules) makes one; the algebra
    /// (intersection, complement, `oneOf`) refuses a shape holding one.
    pub rules: Vec<u32>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct NumCons {
    pub integer: bool,
    pub non_integer: bool,
    pub lo: Option<Bound>,
    pub hi: Option<Bound>,
    pub multiples: Vec<Decimal>,
    pub not_multiples: Vec<Decimal>,
    /// Values excluded (`not: {enum: [...]}`).
    pub holes: Vec<Decimal>,
}

/// A regular language of decoded strings, with what it came from (for messages).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lang {
    pub rx: Rx,
    pub label: String,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StrCons {
    /// Length bounds, in characters.
    pub min: u64,
    pub max: Option<u64>,
    /// Languages the string must be in (patterns, formats) and must not be in.
    pub langs: Vec<Lang>,
    pub not_langs: Vec<Lang>,
    /// The only values allowed, when enumerated.
    pub values: Option<Vec<String>>,
    pub holes: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Contains {
    pub shape: ShapeRef,
    pub min: u64,
    pub max: Option<u64>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArrCons {
    pub prefix: Vec<ShapeRef>,
    /// Every item past the prefix.
    pub items: ShapeRef,
    pub min: u64,
    pub max: Option<u64>,
    pub contains: Vec<Contains>,
    /// `uniqueItems: true`, and where it stands.
    pub unique: Option<Site>,
    /// A listed value (`enum`, `const`) the dialect writes compactly, with no
    /// whitespace inside: [`crate::dialect::Escapes::FreeStringsOnly`] (xgrammar).
    pub compact: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyRule {
    pub patterns: Vec<(Lang, ShapeRef)>,
    pub additional: ShapeRef,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjCons {
    /// Declared keys in schema order, each with the whole constraint on its value.
    pub props: Vec<(String, ShapeRef)>,
    /// How many of `props`, from the front, a `properties` keyword (or an enumerated
    /// object) lists; the rest are `required` keys declared nowhere else. Merged objects
    /// put every listed key before every key only required, whichever part names it.
    pub listed: usize,
    pub required: Vec<String>,
    /// Constraints on the keys not declared (all of them apply).
    pub rules: Vec<KeyRule>,
    pub min: u64,
    pub max: Option<u64>,
    /// `propertyNames`: every key must be in each of these languages.
    pub names: Vec<Lang>,
    /// Keys that must be present (complements of key rules and `propertyNames`): for
    /// each entry, some key not in `props`, in the entry's language, whose value is in
    /// the entry's shape (and meets the key rules, as every undeclared key's does).
    pub some: Vec<Witness>,
    /// A listed value written with no whitespace inside, as [`ArrCons::compact`].
    pub compact: bool,
    /// The strings a `propertyNames` lists (`enum`, `const`), where it only lists them:
    /// a superset of the undeclared keys `names` admits, which a dialect may spell as it
    /// spells listed strings ([`crate::dialect::Escapes::FreeStringsOnly`]).
    pub listed_names: Option<Vec<String>>,
}

/// A key that must be among an object's undeclared ones: its language and its value's
/// shape ([`ObjCons::some`]).
pub type Witness = (Lang, ShapeRef);

impl Shape {
    /// Every value, spelled out by type (array items and object values are [`Shape::top`]).
    pub fn any() -> Shape {
        Shape {
            top: false,
            null: true,
            bools: [true, true],
            numbers: vec![NumCons::default()],
            strings: vec![StrCons::default()],
            arrays: vec![ArrCons::any()],
            objects: vec![ObjCons::any()],
            rules: vec![],
        }
    }

    /// Every value, as a marker: an infinite shape cannot be spelled out, so the items
    /// of [`ArrCons::any`] are this. Every reader checks [`Shape::is_any`] first.
    pub fn top() -> Shape {
        Shape {
            top: true,
            ..Shape::never()
        }
    }

    pub fn never() -> Shape {
        Shape {
            top: false,
            null: false,
            bools: [false, false],
            numbers: vec![],
            strings: vec![],
            arrays: vec![],
            objects: vec![],
            rules: vec![],
        }
    }

    /// The values of grammar rule `n` (see [`Shape::rules`]).
    pub fn rule(n: u32) -> Shape {
        Shape {
            rules: vec![n],
            ..Shape::never()
        }
    }

    pub fn is_any(&self) -> bool {
        self.top
            || self.null
                && self.bools == [true, true]
                && matches!(self.numbers.as_slice(), [n] if *n == NumCons::default())
                && matches!(self.strings.as_slice(), [s] if s.is_any())
                && matches!(self.arrays.as_slice(), [a] if a.is_any())
                && matches!(self.objects.as_slice(), [o] if o.is_any())
    }

    /// True when no value is valid (shallow: alternatives are not inspected).
    pub fn is_never(&self) -> bool {
        !self.top
            && !self.null
            && self.bools == [false, false]
            && self.numbers.is_empty()
            && self.strings.is_empty()
            && self.arrays.is_empty()
            && self.objects.is_empty()
            && self.rules.is_empty()
    }

    /// The union of two shapes (`anyOf`).
    pub fn union(&self, other: &Shape) -> Shape {
        Shape::union_all([self, other])
    }

    /// The union of `shapes` (`anyOf`): each type's alternatives are the first shape's,
    /// then those of each next shape that no shape before it has, which is what folding
    /// [`Shape::union`] over them gives. Done in one pass: a fold copies every
    /// alternative gathered so far at each step, quadratic in the branches (80% of
    /// poethepoet's compile went to copying object alternatives).
    pub fn union_all<'a>(shapes: impl IntoIterator<Item = &'a Shape>) -> Shape {
        let mut u = Shape::never();
        for s in shapes {
            if u.is_any() || s.is_any() {
                u = Shape::any();
                continue;
            }
            u.null |= s.null;
            u.bools = [u.bools[0] || s.bools[0], u.bools[1] || s.bools[1]];
            add_new(&mut u.numbers, &s.numbers);
            add_new(&mut u.strings, &s.strings);
            add_new(&mut u.arrays, &s.arrays);
            add_new(&mut u.objects, &s.objects);
            add_new(&mut u.rules, &s.rules);
        }
        u.rules.sort_unstable();
        u
    }
}

impl StrCons {
    pub fn is_any(&self) -> bool {
        *self == StrCons::default()
    }
}

impl ArrCons {
    pub fn any() -> ArrCons {
        ArrCons {
            prefix: vec![],
            items: Rc::new(Shape::top()),
            min: 0,
            max: None,
            contains: vec![],
            unique: None,
            compact: false,
        }
    }

    pub fn is_any(&self) -> bool {
        self.prefix.is_empty()
            && self.items.is_any()
            && self.min == 0
            && self.max.is_none()
            && self.contains.is_empty()
            && self.unique.is_none()
            && !self.compact
    }

    /// The shape of the item at `i`.
    pub fn item(&self, i: usize) -> &ShapeRef {
        self.prefix.get(i).unwrap_or(&self.items)
    }
}

impl ObjCons {
    pub fn any() -> ObjCons {
        ObjCons {
            props: vec![],
            listed: 0,
            required: vec![],
            rules: vec![],
            min: 0,
            max: None,
            names: vec![],
            some: vec![],
            compact: false,
            listed_names: None,
        }
    }

    pub fn is_any(&self) -> bool {
        self.props.is_empty()
            && self.required.is_empty()
            && self.rules.iter().all(KeyRule::is_any)
            && self.min == 0
            && self.max.is_none()
            && self.names.is_empty()
            && self.some.is_empty()
    }

    pub fn declared(&self, key: &str) -> Option<&ShapeRef> {
        self.props.iter().find(|(k, _)| k == key).map(|(_, s)| s)
    }
}

impl KeyRule {
    pub fn is_any(&self) -> bool {
        self.patterns.iter().all(|(_, s)| s.is_any()) && self.additional.is_any()
    }
}

/// Appends the members of `b` that `a` did not hold before (a member `b` repeats is
/// appended each time).
fn add_new<T: Clone + PartialEq>(a: &mut Vec<T>, b: &[T]) {
    let before = a.len();
    for x in b {
        if !a[..before].contains(x) {
            a.push(x.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(lengths: &[u64]) -> Shape {
        Shape {
            strings: lengths
                .iter()
                .map(|&min| StrCons {
                    min,
                    ..StrCons::default()
                })
                .collect(),
            ..Shape::never()
        }
    }

    /// One pass gives what folding two at a time gives: each shape's alternatives that
    /// no earlier shape has, in order, a repeat within one shape kept; and any value
    /// anywhere makes the whole union any value.
    #[test]
    fn union_all_is_the_pairwise_fold() {
        let (a, b, c) = (strings(&[1, 2]), strings(&[2, 3, 3]), strings(&[3, 1, 4]));
        let all = Shape::union_all([&a, &b, &c]);
        assert_eq!(all, a.union(&b).union(&c));
        let mins: Vec<u64> = all.strings.iter().map(|s| s.min).collect();
        assert_eq!(mins, [1, 2, 3, 3, 4]);
        let with_null = Shape {
            null: true,
            ..Shape::never()
        };
        assert!(Shape::union_all([&a, &with_null]).null);
        assert!(Shape::union_all([&a, &Shape::top(), &b]).is_any());
    }
}
