//! Python `re` patterns (Lark's regexes) in the core's regex syntax.
//!
//! A scanner over the pattern that copies what both dialects read alike and rewrites the
//! rest: every literal character is written as an escape (`\x{..}`) or itself, so `{`,
//! `}`, `]`, `#`, `&`, `~` and `-` mean the same as in Python; classes are re-emitted
//! item by item (Python has no nested classes nor `&&`/`--` set operations); `{,n}` becomes
//! `{0,n}`, a `{` that opens no valid count is a literal; octal escapes become code
//! points; `\Z` becomes `\z`; `\s`/`\S` get Python's set (`str.isspace`, which adds
//! U+1C..U+1F to Unicode's White_Space); `(?#...)` comments are dropped; verbose mode
//! (the `x` flag, `(?x)`) is applied here, whitespace and `#` comments removed outside
//! classes. Refused as unsupported: look-around, back-references (`\1`, `(?P=n)`), atomic
//! groups, possessive quantifiers, conditionals, `\N{...}`, and the `a`/`L` flags.
//!
//! Not translated (the dialects agree closely but not exactly): `\w` and `\d` are
//! Unicode in both (Python's `\w` is `str.isalnum` plus `_`, the core's is Unicode's
//! word class); case-insensitive matching folds simply in both; `$` is end of text here
//! (Python's also matches before a final newline). A lazy quantifier means the same
//! language as the greedy one: a terminal is a language, not a leftmost match.

/// Why a pattern was not translated: unsupported (`true`) or malformed (`false`).
pub(super) type Refusal = (bool, String);

pub(super) fn translate(pattern: &str, verbose: bool) -> Result<String, Refusal> {
    let mut t = Translator {
        chars: pattern.chars().collect(),
        pos: 0,
        out: String::new(),
    };
    t.run(verbose)?;
    Ok(t.out)
}

fn unsupported(what: &str) -> Refusal {
    (true, what.to_string())
}

fn malformed(what: String) -> Refusal {
    (false, what)
}

fn lit(c: char) -> String {
    if c.is_ascii_alphanumeric() || c == '_' {
        c.to_string()
    } else {
        format!("\\x{{{:X}}}", c as u32)
    }
}

struct Translator {
    chars: Vec<char>,
    pos: usize,
    out: String,
}

/// One item of a class: a character or a class escape.
enum Item {
    Char(char),
    Set(String),
}

impl Translator {
    fn peek(&self, k: usize) -> Option<char> {
        self.chars.get(self.pos + k).copied()
    }

    fn next(&mut self) -> Option<char> {
        let c = self.peek(0)?;
        self.pos += 1;
        Some(c)
    }

    fn run(&mut self, verbose: bool) -> Result<(), Refusal> {
        let mut stack: Vec<bool> = vec![verbose];
        while let Some(c) = self.next() {
            let vb = *stack.last().unwrap_or(&false);
            match c {
                ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c' if vb => {}
                '#' if vb => {
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.pos += 1;
                    }
                }
                '\\' => self.escape()?,
                '[' => self.class()?,
                '(' => self.group(&mut stack, vb)?,
                ')' => {
                    if stack.len() < 2 {
                        return Err(malformed("unbalanced `)`".into()));
                    }
                    stack.pop();
                    self.out.push(')');
                }
                '{' => self.brace()?,
                '*' | '+' | '?' => {
                    self.out.push(c);
                    self.quantifier_suffix()?;
                }
                '.' | '^' | '$' | '|' => self.out.push(c),
                c => self.out.push_str(&lit(c)),
            }
        }
        Ok(())
    }

    fn quantifier_suffix(&mut self) -> Result<(), Refusal> {
        match self.peek(0) {
            Some('?') => {
                self.pos += 1;
                self.out.push('?');
            }
            Some('+') => return Err(unsupported("possessive quantifier")),
            _ => {}
        }
        Ok(())
    }

    /// `{m}`, `{m,}`, `{,n}`, `{m,n}` are counts; any other `{` is a literal.
    fn brace(&mut self) -> Result<(), Refusal> {
        let rest: String = self.chars[self.pos..].iter().take(24).collect();
        let close = rest.find('}');
        let body = close.map(|i| &rest[..i]);
        let valid = body.is_some_and(|b| {
            let (lo, hi) = b.split_once(',').unwrap_or((b, b));
            let digits = |s: &str| s.chars().all(|c| c.is_ascii_digit());
            digits(lo) && digits(hi) && !(lo.is_empty() && (hi.is_empty() || !b.contains(',')))
        });
        match (valid, body) {
            (true, Some(b)) => {
                let n = b.chars().count();
                self.pos += n + 1;
                let b = if b.starts_with(',') {
                    format!("0{b}")
                } else {
                    b.to_string()
                };
                self.out.push('{');
                self.out.push_str(&b);
                self.out.push('}');
                self.quantifier_suffix()
            }
            _ => {
                self.out.push_str(&lit('{'));
                Ok(())
            }
        }
    }

    fn group(&mut self, stack: &mut Vec<bool>, vb: bool) -> Result<(), Refusal> {
        if self.peek(0) != Some('?') {
            stack.push(vb);
            self.out.push('(');
            return Ok(());
        }
        self.pos += 1;
        match self.peek(0) {
            Some(':') => {
                self.pos += 1;
                stack.push(vb);
                self.out.push_str("(?:");
            }
            Some('P') if self.peek(1) == Some('<') => {
                let start = self.pos;
                while self.peek(0).is_some_and(|c| c != '>') {
                    self.pos += 1;
                }
                self.pos += 1;
                let name: String = self.chars[start..self.pos.min(self.chars.len())]
                    .iter()
                    .collect();
                stack.push(vb);
                self.out.push_str("(?");
                self.out.push_str(&name);
            }
            Some('P') => return Err(unsupported("back-reference `(?P=name)`")),
            Some('=' | '!') => return Err(unsupported("look-ahead `(?=`/`(?!`")),
            Some('<') => return Err(unsupported("look-behind `(?<=`/`(?<!`")),
            Some('>') => return Err(unsupported("atomic group `(?>`")),
            Some('(') => return Err(unsupported("conditional group `(?(`")),
            Some('#') => {
                while self.peek(0).is_some_and(|c| c != ')') {
                    self.pos += 1;
                }
                self.pos += 1;
            }
            _ => self.flags(stack, vb)?,
        }
        Ok(())
    }

    /// `(?flags)` or `(?flags-flags:`.
    fn flags(&mut self, stack: &mut Vec<bool>, vb: bool) -> Result<(), Refusal> {
        let mut on = String::new();
        let mut off = false;
        let mut verbose = vb;
        loop {
            match self.next() {
                Some(c @ ('i' | 'm' | 's')) => {
                    if off {
                        on.push('-');
                        off = false;
                    }
                    on.push(c);
                }
                Some('x') => verbose = !off,
                Some('u') => {}
                Some('-') => off = true,
                Some(c @ ('a' | 'L')) => return Err(unsupported(&format!("the `{c}` flag"))),
                Some(')') => {
                    // A global flag group: applies to the rest of the pattern.
                    if let Some(top) = stack.last_mut() {
                        *top = verbose;
                    }
                    if !on.is_empty() {
                        self.out.push_str(&format!("(?{on})"));
                    }
                    return Ok(());
                }
                Some(':') => {
                    stack.push(verbose);
                    self.out.push_str(&format!("(?{on}:"));
                    return Ok(());
                }
                _ => return Err(malformed("malformed `(?` group".into())),
            }
        }
    }

    fn escape(&mut self) -> Result<(), Refusal> {
        let e = self
            .next()
            .ok_or_else(|| malformed("ends in a lone backslash".into()))?;
        match e {
            'A' => self.out.push_str("\\A"),
            'Z' => self.out.push_str("\\z"),
            'b' | 'B' => {
                self.out.push('\\');
                self.out.push(e);
            }
            '1'..='9' if !self.octal_ahead() => {
                return Err(unsupported("back-reference `\\N`"));
            }
            _ => match self.escape_item(e, false)? {
                Item::Char(c) => self.out.push_str(&lit(c)),
                Item::Set(s) => self.out.push_str(&s),
            },
        }
        Ok(())
    }

    /// After `\1`..`\7`: whether two more octal digits follow (an octal escape).
    fn octal_ahead(&self) -> bool {
        self.peek(0).is_some_and(|c| ('0'..='7').contains(&c))
            && self.peek(1).is_some_and(|c| ('0'..='7').contains(&c))
            && self
                .chars
                .get(self.pos - 1)
                .is_some_and(|c| ('0'..='7').contains(c))
    }

    /// The escape `\e` (the backslash read) as a character or a class.
    fn escape_item(&mut self, e: char, in_class: bool) -> Result<Item, Refusal> {
        let simple = match e {
            'n' => Some('\n'),
            't' => Some('\t'),
            'r' => Some('\r'),
            'f' => Some('\x0c'),
            'v' => Some('\x0b'),
            'a' => Some('\x07'),
            'b' if in_class => Some('\x08'),
            _ => None,
        };
        if let Some(c) = simple {
            return Ok(Item::Char(c));
        }
        let set = match e {
            'd' | 'D' | 'w' | 'W' => Some(format!("\\{e}")),
            's' => Some(
                if in_class {
                    "\\s\\x{1C}-\\x{1F}"
                } else {
                    "[\\s\\x{1C}-\\x{1F}]"
                }
                .into(),
            ),
            'S' => Some("[^\\s\\x{1C}-\\x{1F}]".into()),
            _ => None,
        };
        if let Some(s) = set {
            return Ok(Item::Set(s));
        }
        let width = match e {
            'x' => 2,
            'u' => 4,
            'U' => 8,
            '0'..='7' => return self.octal(e).map(Item::Char),
            'N' => return Err(unsupported("named character `\\N{...}`")),
            c if c.is_ascii_alphanumeric() => {
                return Err(malformed(format!("bad escape `\\{c}`")));
            }
            c => return Ok(Item::Char(c)),
        };
        let mut v: u32 = 0;
        for _ in 0..width {
            let d = self.next().and_then(|d| d.to_digit(16));
            v = v * 16
                + d.ok_or_else(|| malformed(format!("`\\{e}` expects {width} hex digits")))?;
        }
        char::from_u32(v)
            .map(Item::Char)
            .ok_or_else(|| malformed(format!("U+{v:X} is not a scalar value")))
    }

    fn octal(&mut self, first: char) -> Result<char, Refusal> {
        let mut v = first.to_digit(8).unwrap_or(0);
        for _ in 0..2 {
            match self.peek(0).and_then(|c| c.to_digit(8)) {
                Some(d) => {
                    v = v * 8 + d;
                    self.pos += 1;
                }
                None => break,
            }
        }
        if v > 0o377 {
            return Err(malformed(format!("octal escape {v:o} is past \\377")));
        }
        char::from_u32(v).ok_or_else(|| malformed("bad octal escape".into()))
    }

    fn class(&mut self) -> Result<(), Refusal> {
        let mut out = String::from("[");
        if self.peek(0) == Some('^') {
            self.pos += 1;
            out.push('^');
        }
        let mut first = true;
        let mut items = 0usize;
        loop {
            let c = self
                .next()
                .ok_or_else(|| malformed("unterminated class `[`".into()))?;
            if c == ']' && !first {
                break;
            }
            first = false;
            let item = if c == '\\' {
                let e = self
                    .next()
                    .ok_or_else(|| malformed("unterminated class `[`".into()))?;
                self.escape_item(e, true)?
            } else {
                Item::Char(c)
            };
            items += 1;
            match item {
                Item::Set(s) => out.push_str(&s),
                Item::Char(a) => {
                    out.push_str(&lit(a));
                    if self.peek(0) == Some('-') && self.peek(1).is_some_and(|c| c != ']') {
                        self.pos += 1;
                        let b = self.class_char()?;
                        if b < a {
                            return Err(malformed(format!("bad character range {a}-{b}")));
                        }
                        out.push('-');
                        out.push_str(&lit(b));
                    }
                }
            }
        }
        if items == 0 {
            return Err(malformed("empty class".into()));
        }
        out.push(']');
        self.out.push_str(&out);
        Ok(())
    }

    fn class_char(&mut self) -> Result<char, Refusal> {
        let c = self
            .next()
            .ok_or_else(|| malformed("unterminated class `[`".into()))?;
        if c != '\\' {
            return Ok(c);
        }
        let e = self
            .next()
            .ok_or_else(|| malformed("unterminated class `[`".into()))?;
        match self.escape_item(e, true)? {
            Item::Char(c) => Ok(c),
            Item::Set(_) => Err(malformed(format!("bad character range ending in `\\{e}`"))),
        }
    }
}
