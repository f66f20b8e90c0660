//! The JSON dialect a compiled regex speaks: which texts stand for an instance.
//!
//! A schema validates *values*; a regex matches *texts*. A value has many spellings
//! (whitespace, key order, string escapes, `1` or `1.0`), and a regex can only be exact
//! about a stated set of them. [`Dialect`] states it; the compiled regex matches exactly
//! the texts of the dialect whose value is a valid instance.
//!
//! Every choice is a property of the *text*, except where a regex cannot be exact over
//! all texts and so must restrict their shape:
//! - numbers carry no exponent where a constraint could not be exact with one
//!   ([`Numbers`]);
//! - a value the schema leaves unconstrained nests at most [`Dialect::any_depth`]
//!   levels of arrays and objects (any JSON value is not a regular language);
//! - a recursive `$ref` is followed at most [`Dialect::max_recursion`] times inside
//!   itself; deeper instances are outside the dialect;
//! - an object's keys come in schema order: the keys the schema declares (the keys
//!   `properties` lists, across every merged part (`allOf`, a `$ref` with siblings) in
//!   order of first appearance, then the `required` keys none lists; an `enum`/`const`
//!   object's own order), present or not, then the keys it does not declare, in any
//!   order among themselves;
//! - keys are unique within an object (the regex does not check it);
//! - a leap second (`:60`) is written in UTC (`23:59:60` with offset `Z` or `±00:00`);
//! - a `hostname` has no label with `--` in its 3rd and 4th characters (RFC 5890's
//!   reserved labels: an IDNA A-label such as `xn--9n2bp8q` is valid only if it
//!   decodes under IDNA2008, a finite language far too large to build).

/// Whitespace between tokens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Whitespace {
    /// None at all: `{"a":1,"b":[2,3]}`.
    None,
    /// One optional space after each `,` and `:` (outlines-core's `[ ]?`), as Python's
    /// `json.dumps` writes: `{"a": 1, "b": [2, 3]}`.
    OptionalSpace,
    /// Any JSON whitespace (`[ \t\n\r]`) between any two tokens, as llguidance and
    /// xgrammar accept; runs are at most `max_run` characters long if given. Never before
    /// or after the whole value.
    Any { max_run: Option<u32> },
}

/// A JSON Schema draft: the rules a document is read by.
///
/// A document follows the draft its `$schema` names ([`Draft::named_by`]), else the
/// dialect's [`Dialect::draft`]. Drafts are ordered by date, so "draft-07 and before" is
/// `draft <= Draft::Draft7`. What the draft decides:
/// - draft-07 and before: `$ref` ignores its siblings (an id among them too), an id that
///   is a plain-name fragment names an anchor, `dependencies` is the one dependency
///   keyword, and `unevaluatedProperties`, `minContains` and `maxContains` do not exist;
///   draft-04 and before: the id keyword is `id`;
/// - draft-03: `type: "any"` and union types, a `dependencies` entry naming one key, and
///   its own `date` format; draft-04 and before: boolean `exclusiveMinimum` and
///   `exclusiveMaximum`, no `const`, `contains` or `propertyNames`, and integers written
///   without a fraction; before draft-07: no `if`/`then`/`else`;
/// - 2019-09 on: `$anchor` and `$dynamicAnchor` name anchors, and `unevaluatedItems`
///   (not implemented) is refused; before, it is no keyword and is ignored;
/// - which formats exist, and so are asserted ([`Formats::Assert`]); the others are
///   unknown there, annotations.
///
/// The array form of `items` (with `additionalItems`) is read in every draft, since
/// 2020-12 gives it no other meaning.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Draft {
    Draft3,
    Draft4,
    Draft6,
    Draft7,
    /// 2019-09.
    Draft2019,
    /// 2020-12.
    Draft2020,
}

impl Draft {
    /// The draft a `$schema` URI names: the first of `draft-03`, `draft-04`, `draft-06`,
    /// `draft-07`, `/2019-09/` and `/2020-12/` it contains, or `None`. (The reader
    /// refuses a `$schema` that is no draft's meta-schema.)
    pub fn named_by(schema_uri: &str) -> Option<Draft> {
        const NAMES: [(&str, Draft); 6] = [
            ("draft-03", Draft::Draft3),
            ("draft-04", Draft::Draft4),
            ("draft-06", Draft::Draft6),
            ("draft-07", Draft::Draft7),
            ("/2019-09/", Draft::Draft2019),
            ("/2020-12/", Draft::Draft2020),
        ];
        NAMES
            .iter()
            .find(|(name, _)| schema_uri.contains(name))
            .map(|&(_, draft)| draft)
    }
}

/// Which characters of a string may be written as escapes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Escapes {
    /// Every character may be escaped: `\uXXXX` (either case), surrogate pairs above
    /// the BMP, and the short forms `\" \\ \/ \b \f \n \r \t`.
    All,
    /// Only `"`, `\` and U+0000-U+001F are escaped (in any of those forms), and they
    /// must be; every other character is raw. This is what `serde_json` and
    /// `json.dumps(ensure_ascii=False)` write.
    Required,
    /// llguidance's strings (measured on 1.9): U+007F must be escaped too, and only
    /// `"`, `\`, U+0000-U+001F and U+007F are: `"` and `\` only as `\"` and `\\`, the
    /// others as their short form (`\b \f \n \r \t`) or as `\u00XX`.
    Minimal,
    /// No escapes at all: a string cannot hold `"`, `\` or a control character. An
    /// `enum` or `const` that lists such a string (or, with [`Keys::AsStrings`], an
    /// object with such a key) is refused, naming the keyword and its schema's pointer:
    /// the value has no text in the dialect.
    Raw,
    /// Every escape (as `All`) in strings the schema leaves unconstrained, none (as
    /// `Raw`) in strings with a constraint (pattern, format, length, excluded values),
    /// undeclared keys that a key language limits (`patternProperties`, `propertyNames`)
    /// included; a listed string (`enum`, `const`) in one spelling, as
    /// [`Keys::CanonicalDelEscaped`] writes a key (`"`, `\` and control characters
    /// escaped, U+007F as `\u007f`, every other character raw), and so are the keys a
    /// `propertyNames` lists with no `patternProperties` beside it; a listed array or
    /// object as one compact literal, no whitespace inside it (nested ones included)
    /// whatever the [`Whitespace`]: xgrammar.
    FreeStringsOnly,
    /// As `Minimal` for what must be escaped (U+007F included), and every character may
    /// be escaped as `\uXXXX` (pairs above the BMP) or its short form, but never `\/`:
    /// llguidance's general Unicode escapes, which its undeclared keys take.
    MinimalUnicode,
}

/// Whether `format` asserts (its grammar is part of the language) or only annotates.
///
/// Draft 2020-12 makes `format` an annotation unless the format-assertion vocabulary
/// is on; constrained decoding wants it to assert. With `Assert`, the formats without
/// an exact grammar here (`idn-*`, `regex`) are refused; `hostname` leaves out the
/// labels RFC 5890 reserves (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Formats {
    Assert,
    Annotate,
}

/// How numbers are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Numbers {
    /// Plain decimals, `-?(0|[1-9][0-9]*)(\.[0-9]+)?`, never an exponent. Every JSON
    /// number value has such spellings, and every numeric keyword is exact over them
    /// (an integer may be written `3`, `3.0`, `-0`).
    Decimal,
    /// As `Decimal`, and an exponent is also allowed where the regex stays exact with
    /// one: on numbers whose only constraints are their type (not `integer`) and bounds
    /// at zero. Elsewhere (integers, other bounds, `multipleOf`, enumerated values) the
    /// value is written without exponent, as engines generate them.
    ExponentWhereExact,
    /// As `Decimal`, and an exponent is also allowed on numbers with no numeric
    /// constraint at all (not `integer`, no bounds, no `multipleOf`), as llguidance and
    /// xgrammar write them.
    ExponentWhenUnbounded,
}

/// Where zero is written with a minus sign (`-0`, `-0.0`), which JSON allows for every
/// number and engines restrict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NegativeZero {
    /// Wherever zero is valid.
    Allowed,
    /// Only on numbers and integers without bounds (llguidance's ranges never write it).
    UnboundedOnly,
    /// Never bare (`-0`) on integers or on numbers with bounds; a bounded number may
    /// still be `-0.0` (xgrammar).
    WithFractionWhenBounded,
}

/// How declared keys (those `properties` lists) are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keys {
    /// As any other string of the dialect ([`Escapes`]).
    AsStrings,
    /// One spelling, as `json.dumps(ensure_ascii=False)` writes it: raw, but `"` `\\` as
    /// `\\"` `\\\\`, `\\b \\f \\n \\r \\t` in short form, other control characters as
    /// `\\u00xx` (lower-case hex); llguidance.
    Canonical,
    /// As `Canonical`, and U+007F as `\\u007f` too (xgrammar, which writes its listed
    /// strings so too: [`Escapes::FreeStringsOnly`]).
    CanonicalDelEscaped,
}

/// The dialect and the compiler's limits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dialect {
    pub whitespace: Whitespace,
    /// The draft of a document whose `$schema` names none (or that has no `$schema`).
    pub draft: Draft,
    pub formats: Formats,
    pub escapes: Escapes,
    pub numbers: Numbers,
    /// Integers written without a fraction (`3`, `-0`; never `3.0`), as the engines and
    /// draft-04 (which has no integer-valued `3.0`) write them.
    pub integers_without_fraction: bool,
    /// Where zero may be written with a minus sign.
    pub negative_zero: NegativeZero,
    /// How the keys `properties` declares are written.
    pub keys: Keys,
    /// How keys an object that declares some does not declare are written, when not as
    /// other strings (llguidance: [`Escapes::MinimalUnicode`]; an object declaring none
    /// writes its keys as other strings).
    pub undeclared_keys: Option<Escapes>,
    /// How deeply an unconstrained value (`{}`, `true`, values of an object that
    /// declares nothing about them) nests arrays and objects; 0 allows scalars only.
    pub any_depth: u32,
    /// How many times a `$ref` may be entered again inside its own expansion.
    pub max_recursion: u32,
    /// Refuse ([`crate::SchemaError::LimitExceeded`]) a regex longer than this many bytes.
    pub max_regex_len: usize,
    /// Refuse a regex whose groups and repetitions nest deeper than this (regex-syntax
    /// refuses more than 250 by default).
    pub max_nesting: usize,
    /// Refuse a tree ([`crate::compile_ast`], the lazy index's form) with more distinct
    /// nodes than this; a node costs the index a few dozen bytes. The tree holds each
    /// shared piece once, so it is not bound by the text's two limits above.
    pub max_tree_nodes: usize,
    /// Refuse a tree whose printed regex would be longer than this; by default no tree
    /// is refused for it. The lazy index compiles a piece once per continuation it is
    /// reached with, so what it may compile on demand can grow with the text the tree
    /// stands for, not with the tree, but it bounds that itself (its start state, then
    /// its walks; see the core's `LazyOptions::walk_limit`), and the text predicts little: of the 11 MaskBench
    /// trees standing for 10^12 to 10^19 bytes, 6 walk in 19 to 175 MB, one is refused
    /// at its start, and the 4 that broke the walk limit at their first byte did so on
    /// number regexes written out, which the tree now takes as automata
    /// (`languages::eliminate::to_rx_or_graph`). A 1 TiB guard had refused all 11.
    pub max_tree_text_len: usize,
}

impl Default for Dialect {
    /// Compact text in schema order, every escape, plain decimals, unconstrained values
    /// two levels deep, recursion followed three times, regexes up to 4 MB.
    fn default() -> Dialect {
        Dialect {
            whitespace: Whitespace::None,
            draft: Draft::Draft2020,
            formats: Formats::Assert,
            escapes: Escapes::All,
            numbers: Numbers::Decimal,
            integers_without_fraction: false,
            negative_zero: NegativeZero::Allowed,
            keys: Keys::AsStrings,
            undeclared_keys: None,
            any_depth: 2,
            max_recursion: 3,
            max_regex_len: 4 << 20,
            max_nesting: 250,
            max_tree_nodes: 1 << 22,
            max_tree_text_len: usize::MAX,
        }
    }
}
