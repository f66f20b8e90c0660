//! GBNF (llama.cpp's `grammars/README.md`) and the llama.cpp-style EBNF of
//! transformers-cfg, read by one recursive-descent parser over the text.
//!
//! What it reads: `name ::= alternatives`, a definition running until the next
//! `name ::=` (so definitions may span lines); strings `"..."`; classes `[...]`, `[^...]`
//! with ranges; escapes `\x41 \u00e9 \U0001F600 \t \r \n \\ \" \[ \] \-` (llama.cpp's
//! set); `.`; groups; `|`; postfix `*`, `+`, `?`, `{m}`, `{m,}`, `{m,n}`; `#` comments.
//! Names are `[A-Za-z0-9_-]+` (llama.cpp has no `_`; transformers-cfg and the corpus
//! files use it, so both readers accept it). The start rule is `root`.
//!
//! Choices where llama.cpp's reader (`src/llama-grammar.cpp`) decides otherwise or says
//! nothing:
//! - `.` is any Unicode scalar value, newline included (llama.cpp's `CHAR_ANY` matches
//!   every code point): regex `(?s:.)`;
//! - a rule defined twice is refused with [`Error::Invalid`] (llama.cpp silently keeps
//!   the last definition; refusing keeps the engines from disagreeing on which);
//! - newlines are whitespace anywhere (llama.cpp ends a rule at a newline outside
//!   parentheses); this reads every text llama.cpp reads the same way, and more;
//! - counts above [`super::MAX_REPEAT`] are refused (llama.cpp refuses a minimum over
//!   2000 and reads a maximum over 2000 as unbounded);
//! - escapes naming a surrogate or a value past U+10FFFF, and reversed ranges, are
//!   syntax errors; token references `<...>`, `!<...>` are unsupported.

use super::builder::{regex_char, regex_class, Builder, Expr};
use super::MAX_DEPTH;
use crate::error::Error;
use crate::ir::{Grammar, Notation};

/// Read a GBNF or EBNF text (see the module doc).
pub(super) fn read(text: &str, notation: Notation) -> Result<Grammar, Error> {
    let mut p = Parser {
        chars: text.chars().collect(),
        pos: 0,
        line: 1,
        depth: 0,
    };
    let mut defs: Vec<(String, usize, Expr)> = Vec::new();
    p.skip_space();
    while !p.at_end() {
        let line = p.line;
        let name = p.name().ok_or_else(|| p.syntax("expected a rule name"))?;
        p.skip_space();
        if !p.eat_str("::=") {
            return Err(p.syntax(&format!("expected `::=` after rule name `{name}`")));
        }
        let body = p.alternates()?;
        p.skip_space();
        if !p.at_end() && !p.at_definition() {
            let c = p.peek().unwrap_or(' ');
            return Err(p.syntax(&format!("unexpected `{c}` in rule `{name}`")));
        }
        defs.push((name, line, body));
    }
    let mut b = Builder::new();
    let mut lines = rustc_hash::FxHashMap::default();
    for (name, line, _) in &defs {
        if let Some(first) = lines.insert(name.clone(), *line) {
            return Err(Error::Invalid(format!(
                "rule `{name}` defined twice (lines {first} and {line})"
            )));
        }
        b.declare(name);
    }
    for (name, _, body) in &defs {
        let id = b.declare(name);
        b.define(id, body)?;
    }
    let start = b.lookup("root").ok_or_else(|| {
        Error::Invalid(format!(
            "no rule named root (the start rule of {})",
            notation.as_str()
        ))
    })?;
    Ok(b.finish(start, Vec::new()))
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
    line: usize,
    depth: usize,
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '-' || c == '_'
}

impl Parser {
    fn at_end(&self) -> bool {
        self.pos >= self.chars.len()
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, k: usize) -> Option<char> {
        self.chars.get(self.pos + k).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += 1;
        if c == '\n' {
            self.line += 1;
        }
        Some(c)
    }

    fn syntax(&self, message: &str) -> Error {
        Error::Syntax {
            line: self.line,
            message: message.to_string(),
        }
    }

    fn eat_str(&mut self, s: &str) -> bool {
        let n = s.chars().count();
        if self.chars.len() >= self.pos + n
            && s.chars().zip(&self.chars[self.pos..]).all(|(a, &b)| a == b)
        {
            for _ in 0..n {
                self.bump();
            }
            return true;
        }
        false
    }

    /// Spaces, newlines and `#` comments.
    fn skip_space(&mut self) {
        while let Some(c) = self.peek() {
            if c == '#' {
                while self.peek().is_some_and(|c| c != '\n') {
                    self.bump();
                }
            } else if c.is_whitespace() {
                self.bump();
            } else {
                break;
            }
        }
    }

    fn name(&mut self) -> Option<String> {
        let start = self.pos;
        while self.peek().is_some_and(is_name_char) {
            self.bump();
        }
        (self.pos > start).then(|| self.chars[start..self.pos].iter().collect())
    }

    /// Whether a new definition (`name ::=` on one line) starts here.
    fn at_definition(&self) -> bool {
        let mut k = self.pos;
        while self.chars.get(k).copied().is_some_and(is_name_char) {
            k += 1;
        }
        if k == self.pos {
            return false;
        }
        while self.chars.get(k).is_some_and(|&c| c == ' ' || c == '\t') {
            k += 1;
        }
        self.chars
            .get(k..k + 3)
            .is_some_and(|s| s == [':', ':', '='])
    }

    fn alternates(&mut self) -> Result<Expr, Error> {
        let mut alts = vec![self.sequence()?];
        while self.peek() == Some('|') {
            self.bump();
            alts.push(self.sequence()?);
        }
        Ok(if alts.len() == 1 {
            alts.pop().unwrap_or(Expr::Seq(vec![]))
        } else {
            Expr::Alt(alts)
        })
    }

    fn sequence(&mut self) -> Result<Expr, Error> {
        let mut items = Vec::new();
        loop {
            self.skip_space();
            match self.peek() {
                None | Some('|' | ')') => break,
                Some(c) if is_name_char(c) && self.at_definition() => break,
                _ => {}
            }
            let item = self.primary()?;
            let item = self.postfix(item)?;
            items.push(item);
        }
        Ok(if items.len() == 1 {
            items.pop().unwrap_or(Expr::Seq(vec![]))
        } else {
            Expr::Seq(items)
        })
    }

    fn primary(&mut self) -> Result<Expr, Error> {
        let line = self.line;
        match self.peek() {
            Some('"') => self.string(),
            Some('[') => self.class(),
            Some('.') => {
                self.bump();
                Ok(Expr::Term {
                    regex: "(?s:.)".into(),
                    name: ".".into(),
                })
            }
            Some('(') => {
                self.depth += 1;
                if self.depth > MAX_DEPTH {
                    return Err(Error::Limit(format!(
                        "line {line}: groups nested deeper than {MAX_DEPTH}"
                    )));
                }
                self.bump();
                let inner = self.alternates()?;
                self.skip_space();
                if self.bump() != Some(')') {
                    return Err(Error::Syntax {
                        line,
                        message: "unclosed `(`: expected `)`".into(),
                    });
                }
                self.depth -= 1;
                Ok(inner)
            }
            Some('<' | '!') => Err(Error::Unsupported {
                line,
                message: "token reference `<...>` (llama.cpp's tokens need a vocabulary)".into(),
            }),
            Some(c) if is_name_char(c) => {
                let name = self.name().unwrap_or_default();
                Ok(Expr::Ref { name, line })
            }
            Some(c @ ('*' | '+' | '?' | '{')) => {
                Err(self.syntax(&format!("`{c}` with no item before it")))
            }
            Some(c) => Err(self.syntax(&format!("unexpected `{c}`"))),
            None => Err(self.syntax("unexpected end of input")),
        }
    }

    fn postfix(&mut self, mut item: Expr) -> Result<Expr, Error> {
        for _ in 0..=MAX_DEPTH {
            let line = self.line;
            let (min, max) = match self.peek() {
                Some('*') => (0, None),
                Some('+') => (1, None),
                Some('?') => (0, Some(1)),
                Some('{') => {
                    self.bump();
                    let (min, max) = self.braces()?;
                    item = Expr::Repeat {
                        inner: Box::new(item),
                        min,
                        max,
                        line,
                    };
                    continue;
                }
                _ => return Ok(item),
            };
            self.bump();
            item = Expr::Repeat {
                inner: Box::new(item),
                min,
                max,
                line,
            };
        }
        Err(Error::Limit(format!(
            "line {}: more than {MAX_DEPTH} postfix operators",
            self.line
        )))
    }

    /// After `{`: `m}`, `m,}` or `m,n}`.
    fn braces(&mut self) -> Result<(u32, Option<u32>), Error> {
        self.skip_space();
        let min = self
            .int()?
            .ok_or_else(|| self.syntax("expected a count after `{`"))?;
        self.skip_space();
        if self.peek() == Some('}') {
            self.bump();
            return Ok((min, Some(min)));
        }
        if self.bump() != Some(',') {
            return Err(self.syntax("expected `,` or `}` in `{m,n}`"));
        }
        self.skip_space();
        let max = self.int()?;
        self.skip_space();
        if self.bump() != Some('}') {
            return Err(self.syntax("expected `}` to close `{m,n}`"));
        }
        Ok((min, max))
    }

    fn int(&mut self) -> Result<Option<u32>, Error> {
        let start = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.bump();
        }
        if self.pos == start {
            return Ok(None);
        }
        let digits: String = self.chars[start..self.pos].iter().collect();
        // Counts past u32 are past every limit: report them as the limit does.
        Ok(Some(digits.parse::<u32>().unwrap_or(u32::MAX)))
    }

    /// One character of a string or class: raw or escaped.
    fn char(&mut self) -> Result<char, Error> {
        let c = self
            .bump()
            .ok_or_else(|| self.syntax("unexpected end of input"))?;
        if c != '\\' {
            return Ok(c);
        }
        let e = self
            .bump()
            .ok_or_else(|| self.syntax("unexpected end of input after `\\`"))?;
        let digits = match e {
            'x' => 2,
            'u' => 4,
            'U' => 8,
            't' => return Ok('\t'),
            'r' => return Ok('\r'),
            'n' => return Ok('\n'),
            '\\' | '"' | '[' | ']' | '-' => return Ok(e),
            _ => return Err(self.syntax(&format!("unknown escape `\\{e}`"))),
        };
        let mut v: u32 = 0;
        for _ in 0..digits {
            let d = self.peek().and_then(|c| c.to_digit(16)).ok_or_else(|| {
                self.syntax(&format!("escape `\\{e}` expects {digits} hex digits"))
            })?;
            self.bump();
            v = v * 16 + d;
        }
        char::from_u32(v)
            .ok_or_else(|| self.syntax(&format!("escape U+{v:X} is not a Unicode scalar value")))
    }

    fn string(&mut self) -> Result<Expr, Error> {
        let line = self.line;
        let start = self.pos;
        self.bump();
        let mut s = String::new();
        loop {
            match self.peek() {
                None => {
                    let head: String = self.chars[start..].iter().take(20).collect();
                    return Err(Error::Syntax {
                        line,
                        message: format!("unterminated string starting {head}"),
                    });
                }
                Some('"') => break,
                _ => s.push(self.char()?),
            }
        }
        self.bump();
        if s.is_empty() {
            return Ok(Expr::Seq(vec![]));
        }
        let name: String = self.chars[start..self.pos].iter().collect();
        Ok(Expr::Term {
            regex: regex_syntax::escape(&s),
            name,
        })
    }

    fn class(&mut self) -> Result<Expr, Error> {
        let line = self.line;
        let start = self.pos;
        self.bump();
        let negated = self.peek() == Some('^');
        if negated {
            self.bump();
        }
        let mut ranges = Vec::new();
        loop {
            match self.peek() {
                None => {
                    return Err(Error::Syntax {
                        line,
                        message: "unterminated class `[`".into(),
                    })
                }
                Some(']') => break,
                _ => {}
            }
            let a = self.char()?;
            let mut b = a;
            if self.peek() == Some('-') && self.peek_at(1).is_some_and(|c| c != ']') {
                self.bump();
                b = self.char()?;
                if b < a {
                    return Err(self.syntax(&format!(
                        "reversed range `{}-{}` in class",
                        a.escape_debug(),
                        b.escape_debug()
                    )));
                }
            }
            ranges.push((a, b));
        }
        self.bump();
        let name: String = self.chars[start..self.pos].iter().collect();
        let regex = if ranges.len() == 1 && ranges[0].0 == ranges[0].1 && !negated {
            regex_char(ranges[0].0)
        } else {
            regex_class(&ranges, negated)
        };
        Ok(Expr::Term { regex, name })
    }
}
