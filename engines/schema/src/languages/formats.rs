//! `format` grammars, as character-level regexes.
//!
//! Each known format is written once as an anchored ECMA-262 pattern assembled from its
//! RFC grammar and translated like any `pattern` (see [`crate::languages::ecma`]); digits are ASCII
//! only. The formats and their sources:
//! - `date`, `time`, `date-time`: RFC 3339 `full-date`, `full-time`, `date-time`, with
//!   real month lengths and leap years, `T`/`Z` in either case. A leap second is in the
//!   language only in UTC notation, `23:59:60` with offset `Z` or `±00:00` (see
//!   [`crate::dialect`]): the exact set for every offset needs a 1440-state automaton.
//! - `duration`: RFC 3339 appendix A; `uuid`: RFC 4122 (any version, either case);
//! - `ipv4`: dotted quad without leading zeros; `ipv6`: RFC 4291 text forms, embedded
//!   IPv4 included, no zone;
//! - `email`: RFC 5321 `Mailbox` (dot-atoms or quoted local part; a domain, or an IPv4,
//!   IPv6 or general address literal), without the length limits of section 4.5.3;
//! - `uri`, `uri-reference`: RFC 3986; `iri`, `iri-reference`: RFC 3987;
//!   `uri-template`: RFC 6570 level 4; `json-pointer`: RFC 6901;
//!   `relative-json-pointer`: draft-bhutton-relative-json-pointer-00.
//!
//! - `hostname`: RFC 1123 section 2.1 (labels of letters, digits and inner hyphens, at
//!   most 63 characters each, at most 253 in all), without the labels RFC 5890 reserves
//!   (`--` in the 3rd and 4th characters: an A-label such as `xn--9n2bp8q` is valid only
//!   if it decodes as Punycode under IDNA2008's contextual rules, a finite language far
//!   too large to build). Leaving them out is a documented restriction of the dialect
//!   (see [`crate::dialect`]), like UTC-only leap seconds.
//!
//! `idn-hostname` (every label an IDNA2008 U- or A-label), `idn-email`, and `regex`
//! (balanced groups, not regular) are refused.
//! Any other format name is an annotation, as JSON Schema and Python's `jsonschema`
//! treat unknown formats.

use crate::dialect::Draft;
use crate::languages::ecma;
use crate::languages::rx::Rx;

#[derive(Clone)]
pub enum Format {
    /// The format's strings: a grammar, and the most characters they may have (a bound
    /// left to the string's length counter, as `maxLength` is: hostname's 253 characters
    /// over labels of at most 63 would be a product of thousands of states).
    Known(Rx, Option<u64>),
    Refused(&'static str),
    Unknown,
}

const DEC_OCTET: &str = r"(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9][0-9]|[0-9])";
const HEX: &str = "[0-9a-fA-F]";
const UNRESERVED: &str = r"A-Za-z0-9\-._~";
const SUB_DELIMS: &str = r"!$&'()*+,;=";

/// Whether draft `draft` defines format `name`; elsewhere it is an unknown format,
/// which validators of that draft ignore. Draft-03's formats are taken as draft-04's,
/// except its `date` (its `time` has no offset, so is not ours). `regex` (draft-03's,
/// then draft-07's) and `idn-email` count in every draft, as `jsonschema` checks them in
/// every draft: both are refused, never ignored.
pub fn defined_in(name: &str, draft: Draft) -> bool {
    let since = match name {
        "regex" | "idn-email" => Draft::Draft3,
        "date-time" | "email" | "hostname" | "ipv4" | "ipv6" | "uri" => Draft::Draft4,
        "date" if draft == Draft::Draft3 => Draft::Draft3,
        "uri-reference" | "uri-template" | "json-pointer" => Draft::Draft6,
        "date" | "time" | "iri" | "iri-reference" | "idn-hostname" => Draft::Draft7,
        "relative-json-pointer" => Draft::Draft7,
        "duration" | "uuid" => Draft::Draft2019,
        _ => return true, // unknown to every draft: `format` says Unknown
    };
    draft >= since || (draft == Draft::Draft3 && since == Draft::Draft4)
}

/// The most characters of a hostname (RFC 1123 section 2.1: 255 octets on the wire,
/// which hold two more than the text).
const HOSTNAME_MAX: u64 = 253;

pub fn format(name: &str) -> Format {
    let pattern = match name {
        "date" => format!("^{}$", date()),
        "time" => format!("^{}$", time()),
        "date-time" => format!("^{}[Tt]{}$", date(), time()),
        "duration" => duration(),
        "uuid" => format!("^{HEX}{{8}}-{HEX}{{4}}-{HEX}{{4}}-{HEX}{{4}}-{HEX}{{12}}$"),
        "ipv4" => format!("^{}$", ipv4()),
        "ipv6" => format!("^{}$", ipv6()),
        "email" => format!("^{}$", email()),
        "uri" => format!("^{}$", uri(false)),
        "iri" => format!("^{}$", uri(true)),
        "uri-reference" => format!("^({}|{})$", uri(false), relative_ref(false)),
        "iri-reference" => format!("^({}|{})$", uri(true), relative_ref(true)),
        "uri-template" => uri_template(),
        "json-pointer" => format!("^{}$", json_pointer()),
        "relative-json-pointer" => format!("^(0|[1-9][0-9]*)(#|{})$", json_pointer()),
        "hostname" => format!(r"^{0}(\.{0})*$", hostname_label()),
        "idn-hostname" => {
            return Format::Refused(
                "U- and A-labels must be valid under IDNA2008 (code point tables, Punycode, \
                 contextual rules): a finite language far too large to build",
            )
        }
        "idn-email" => return Format::Refused("internationalized addresses need IDNA validation"),
        "regex" => return Format::Refused("a regex's groups must balance, which is not regular"),
        _ => return Format::Unknown,
    };
    let max = (name == "hostname").then_some(HOSTNAME_MAX);
    Format::Known(
        ecma::translate(&pattern).expect("format grammars translate"),
        max,
    )
}

/// One RFC 1123 label that is not reserved by RFC 5890: a letter or digit, then at most
/// 62 letters, digits and hyphens ending in a letter or digit, with no `--` in the 3rd
/// and 4th characters. A label of at most 4 characters cannot have it; a longer one has
/// a letter or digit in the 3rd or the 4th.
fn hostname_label() -> String {
    let (a, x) = ("[A-Za-z0-9]", r"[A-Za-z0-9\-]");
    format!("({a}|{a}{a}|{a}{x}{a}|{a}{x}{x}{a}|{a}{x}({a}{x}|-{a}){x}{{0,58}}{a})")
}

fn date() -> String {
    let long = "(0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])";
    let short = "(0[469]|11)-(0[1-9]|[12][0-9]|30)";
    let feb = "02-(0[1-9]|1[0-9]|2[0-8])";
    let leap = "([0-9]{2}(0[48]|[2468][048]|[13579][26])|([02468][048]|[13579][26])00)-02-29";
    format!("([0-9]{{4}}-({long}|{short}|{feb})|{leap})")
}

fn time() -> String {
    let hms = "([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]";
    let frac = r"(\.[0-9]+)?";
    let offset = "([Zz]|[+-]([01][0-9]|2[0-3]):[0-5][0-9])";
    let leap = "23:59:60";
    let utc = "([Zz]|[+-]00:00)";
    format!("({hms}{frac}{offset}|{leap}{frac}{utc})")
}

fn duration() -> String {
    let n = "[0-9]+";
    let second = format!("{n}S");
    let minute = format!("{n}M({second})?");
    let hour = format!("{n}H({minute})?");
    let time = format!("T({hour}|{minute}|{second})");
    let day = format!("{n}D");
    let month = format!("{n}M({day})?");
    let year = format!("{n}Y({month})?");
    format!("^P((({day}|{month}|{year})({time})?)|{time}|{n}W)$")
}

fn ipv4() -> String {
    format!(r"{DEC_OCTET}(\.{DEC_OCTET}){{3}}")
}

fn ipv6() -> String {
    let h16 = format!("{HEX}{{1,4}}");
    let ls32 = format!("({h16}:{h16}|{})", ipv4());
    let head = |n: usize| {
        if n == 0 {
            String::new()
        } else {
            format!("(({h16}:){{0,{}}}{h16})?", n - 1)
        }
    };
    let mut forms = vec![
        format!("({h16}:){{6}}{ls32}"),
        format!("::({h16}:){{5}}{ls32}"),
    ];
    for (before, after) in [(1, 4), (2, 3), (3, 2), (4, 1), (5, 0)] {
        let tail = if after > 0 {
            format!("({h16}:){{{after}}}")
        } else {
            String::new()
        };
        forms.push(format!("{}::{tail}{ls32}", head(before)));
    }
    forms.push(format!("{}::{h16}", head(6)));
    forms.push(format!("{}::", head(7)));
    format!("({})", forms.join("|"))
}

fn email() -> String {
    let atext = r"[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~]+";
    let local = format!(r#"({atext}(\.{atext})*|"([ !#-\[\]-~]|\\[ -~])*")"#);
    let label = "[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?";
    let domain = format!(r"{label}(\.{label})*");
    let general = r"[A-Za-z0-9-]*[A-Za-z0-9]:[!-Z^-~]+";
    let literal = format!(r"\[({}|IPv6:{}|{general})\]", ipv4(), ipv6());
    format!("{local}@({domain}|{literal})")
}

/// The character classes of RFC 3986, or of RFC 3987 with `iri`.
struct UriChars {
    unreserved: String,
    private: &'static str,
}

impl UriChars {
    fn new(iri: bool) -> UriChars {
        let ucs = r"\u00A0-\uD7FF\uF900-\uFDCF\uFDF0-\uFFEF\u{10000}-\u{1FFFD}\u{20000}-\u{2FFFD}\u{30000}-\u{3FFFD}\u{40000}-\u{4FFFD}\u{50000}-\u{5FFFD}\u{60000}-\u{6FFFD}\u{70000}-\u{7FFFD}\u{80000}-\u{8FFFD}\u{90000}-\u{9FFFD}\u{A0000}-\u{AFFFD}\u{B0000}-\u{BFFFD}\u{C0000}-\u{CFFFD}\u{D0000}-\u{DFFFD}\u{E1000}-\u{EFFFD}";
        let private = r"\uE000-\uF8FF\u{F0000}-\u{FFFFD}\u{100000}-\u{10FFFD}";
        if iri {
            UriChars {
                unreserved: format!("{UNRESERVED}{ucs}"),
                private,
            }
        } else {
            UriChars {
                unreserved: UNRESERVED.to_string(),
                private: "",
            }
        }
    }

    /// One character of `extra` classes, or a percent-encoded octet.
    fn one_of(&self, extra: &str) -> String {
        format!("([{}{SUB_DELIMS}{extra}]|%{HEX}{HEX})", self.unreserved)
    }

    fn authority(&self) -> String {
        let userinfo = format!("{}*@", self.one_of(":"));
        let future = format!(r"[vV]{HEX}+\.[{UNRESERVED}{SUB_DELIMS}:]+");
        let host = format!(r"(\[({}|{future})\]|{}*)", ipv6(), self.one_of(""));
        format!("({userinfo})?{host}(:[0-9]*)?")
    }

    fn tail(&self) -> String {
        let query = format!("{}*", self.one_of(&format!(":@/?{}", self.private)));
        let fragment = format!("{}*", self.one_of(":@/?"));
        format!(r"(\?{query})?(#{fragment})?")
    }
}

fn uri(iri: bool) -> String {
    let c = UriChars::new(iri);
    let pchar = c.one_of(":@");
    let hier = format!(
        "(//{}(/{pchar}*)*|/({pchar}+(/{pchar}*)*)?|{pchar}+(/{pchar}*)*)?",
        c.authority()
    );
    format!("[A-Za-z][A-Za-z0-9+\\-.]*:{hier}{}", c.tail())
}

fn relative_ref(iri: bool) -> String {
    let c = UriChars::new(iri);
    let pchar = c.one_of(":@");
    let nc = c.one_of("@");
    let part = format!(
        "(//{}(/{pchar}*)*|/({pchar}+(/{pchar}*)*)?|{nc}+(/{pchar}*)*)?",
        c.authority()
    );
    format!("{part}{}", c.tail())
}

fn uri_template() -> String {
    let pct = format!("%{HEX}{HEX}");
    let ucs = UriChars::new(true);
    let literal = format!(
        r"([!#$&'()*+,\-./0-9:;=?@A-Z\[\]_a-z~{}{}]|{pct})",
        &ucs.unreserved[UNRESERVED.len()..],
        ucs.private
    );
    let varchar = format!("([A-Za-z0-9_]|{pct})");
    let varname = format!(r"{varchar}(\.?{varchar})*");
    let varspec = format!("{varname}(:[1-9][0-9]{{0,3}}|\\*)?");
    let expression = format!(r"\{{[+#./;?&=,!@|]?{varspec}(,{varspec})*\}}");
    format!("^({literal}|{expression})*$")
}

fn json_pointer() -> String {
    "(/([^~/]|~[01])*)*".to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::languages::automaton::Dfa;

    fn check(name: &str, good: &[&str], bad: &[&str]) {
        let Format::Known(x, _) = format(name) else {
            panic!("{name} is known")
        };
        let d = Dfa::from_rx(&x).unwrap();
        for s in good {
            assert!(d.accepts(s), "{name} should accept {s:?}");
        }
        for s in bad {
            assert!(!d.accepts(s), "{name} should refuse {s:?}");
        }
    }

    #[test]
    fn dates_know_month_lengths_and_leap_years() {
        check(
            "date",
            &["2020-02-29", "2000-02-29", "1999-12-31"],
            &[
                "1900-02-29",
                "2021-02-29",
                "2020-04-31",
                "2020-1-01",
                "2020-01-0١",
            ],
        );
        check(
            "date-time",
            &["1963-06-19t08:30:06.283185z", "1998-12-31T23:59:60Z"],
            &["1998-12-31T22:59:60Z", "1990-12-31T15:59:59-24:00"],
        );
    }

    #[test]
    fn network_formats() {
        check(
            "ipv4",
            &["192.168.0.1", "0.0.0.0"],
            &["256.0.0.0", "01.0.0.0", "1.2.3"],
        );
        check(
            "ipv6",
            &[
                "::1",
                "::",
                "1::",
                "fe80::1:2",
                "::ffff:1.2.3.4",
                "1:2:3:4:5:6:7:8",
            ],
            &["1:2:3:4:5:6:7:8:9", "1::2::3", ":::1", "fe80::1%eth0"],
        );
        check(
            "email",
            &[
                "joe.bloggs@example.com",
                "\"joe bloggs\"@example.com",
                "a@[IPv6:::1]",
            ],
            &["te..st@example.com", ".a@b.c", "a@b=c"],
        );
        check(
            "uri",
            &[
                "http://foo.bar/?baz=qux#quux",
                "urn:isbn:0451450523",
                "http://[::1]:80/",
            ],
            &["//foo.bar", "http://exa mple.com", "\\\\WINDOWS"],
        );
        check(
            "uri-template",
            &["{+var}", "a%41b", ""],
            &["{}", "{v:0}", "foo}bar"],
        );
        check(
            "duration",
            &["P4DT12H30M5S", "P2W", "PT36H"],
            &["PT1D", "P", "P1Y2W", "PT1H2S"],
        );
    }
}
