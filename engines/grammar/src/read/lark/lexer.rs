//! Lark's tokens: names, strings, regexes, numbers, punctuation, directives, newlines.
//!
//! Strings and regexes are unescaped the way Lark's `eval_escaping` does it: `\n \t \r
//! \f \xHH \uHHHH \UHHHHHHHH` become the character, `\"` becomes `"`, every other
//! backslash pair is kept as written (a regex's `\d` stays `\d`); a string then reads
//! `\\` as one backslash. A string may not hold a raw newline, nor a regex unless it has
//! the `x` flag (Lark's rules). Comments (`//`, `#`) and `\`-newline continuations are
//! skipped. llguidance's `%llguidance {...}` is read and dropped here; its `%json`,
//! `%regex`, special tokens `<|...|>` / `<[...]>` and the `&` operator are refused.

use crate::error::Error;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Tok {
    /// A lowercase name (a rule), with its leading `_` if any.
    Rule(String),
    /// An uppercase name (a terminal).
    Term(String),
    /// A string literal, unescaped, and its `i` flag; `raw` as written.
    Str {
        value: String,
        ci: bool,
        raw: String,
    },
    /// A regex literal, unescaped, its flags; `raw` as written.
    Regex {
        pattern: String,
        flags: String,
        raw: String,
    },
    Number(i64),
    /// `%name`, without the `%`.
    Directive(String),
    Colon,
    Pipe,
    LParen,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    Comma,
    Dot,
    DotDot,
    Arrow,
    Tilde,
    Star,
    Plus,
    Question,
    Bang,
    Equals,
    Newline,
}

#[derive(Debug, Clone)]
pub(super) struct Token {
    pub tok: Tok,
    pub line: usize,
}

pub(super) fn lex(text: &str) -> Result<Vec<Token>, Error> {
    let mut lx = Lexer {
        chars: text.chars().collect(),
        pos: 0,
        line: 1,
        out: Vec::new(),
    };
    while let Some(c) = lx.peek(0) {
        lx.step(c)?;
    }
    Ok(lx.out)
}

struct Lexer {
    chars: Vec<char>,
    pos: usize,
    line: usize,
    out: Vec<Token>,
}

fn syntax(line: usize, message: String) -> Error {
    Error::Syntax { line, message }
}

impl Lexer {
    fn peek(&self, k: usize) -> Option<char> {
        self.chars.get(self.pos + k).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek(0)?;
        self.pos += 1;
        if c == '\n' {
            self.line += 1;
        }
        Some(c)
    }

    fn push(&mut self, tok: Tok, line: usize) {
        self.out.push(Token { tok, line });
    }

    fn skip_line(&mut self) {
        while self.peek(0).is_some_and(|c| c != '\n') {
            self.bump();
        }
    }

    fn step(&mut self, c: char) -> Result<(), Error> {
        let line = self.line;
        let single = match c {
            ':' => Some(Tok::Colon),
            '|' => Some(Tok::Pipe),
            '(' => Some(Tok::LParen),
            ')' => Some(Tok::RParen),
            '[' => Some(Tok::LBracket),
            ']' => Some(Tok::RBracket),
            '{' => Some(Tok::LBrace),
            '}' => Some(Tok::RBrace),
            ',' => Some(Tok::Comma),
            '~' => Some(Tok::Tilde),
            '*' => Some(Tok::Star),
            '?' => Some(Tok::Question),
            '!' => Some(Tok::Bang),
            '=' => Some(Tok::Equals),
            _ => None,
        };
        if let Some(tok) = single {
            self.bump();
            self.push(tok, line);
            return Ok(());
        }
        match c {
            '\n' => {
                self.bump();
                if self.out.last().is_some_and(|t| t.tok != Tok::Newline) {
                    self.push(Tok::Newline, line);
                }
            }
            ' ' | '\t' | '\r' | '\x0c' => {
                self.bump();
            }
            '#' => self.skip_line(),
            '/' if self.peek(1) == Some('/') => self.skip_line(),
            '/' => self.regex()?,
            '"' => self.string()?,
            '\\' => self.continuation()?,
            '.' if self.peek(1) == Some('.') => {
                self.pos += 2;
                self.push(Tok::DotDot, line);
            }
            '.' => {
                self.bump();
                self.push(Tok::Dot, line);
            }
            '-' if self.peek(1) == Some('>') => {
                self.pos += 2;
                self.push(Tok::Arrow, line);
            }
            '+' | '-' if self.peek(1).is_some_and(|d| d.is_ascii_digit()) => self.number(),
            '+' => {
                self.bump();
                self.push(Tok::Plus, line);
            }
            '0'..='9' => self.number(),
            '%' => self.directive()?,
            '<' => {
                let head: String = self.chars[self.pos..].iter().take(12).collect();
                return Err(Error::Unsupported {
                    line,
                    message: format!("special token `{head}...` (llguidance)"),
                });
            }
            '&' => {
                return Err(Error::Unsupported {
                    line,
                    message: "`&` (llguidance's terminal intersection)".into(),
                })
            }
            c if c == '_' || c.is_ascii_alphabetic() => self.name()?,
            c => {
                return Err(syntax(
                    line,
                    format!("unexpected character `{}`", c.escape_debug()),
                ))
            }
        }
        Ok(())
    }

    fn continuation(&mut self) -> Result<(), Error> {
        let mut k = 1;
        while self.peek(k) == Some(' ') {
            k += 1;
        }
        match self.peek(k) {
            Some('\n') => {
                for _ in 0..=k {
                    self.bump();
                }
                Ok(())
            }
            Some('\r') if self.peek(k + 1) == Some('\n') => {
                for _ in 0..=k + 1 {
                    self.bump();
                }
                Ok(())
            }
            _ => Err(syntax(self.line, "unexpected `\\`".into())),
        }
    }

    fn number(&mut self) {
        let line = self.line;
        let start = self.pos;
        self.bump();
        while self.peek(0).is_some_and(|c| c.is_ascii_digit()) {
            self.bump();
        }
        let s: String = self.chars[start..self.pos].iter().collect();
        let n = s.parse::<i64>().unwrap_or(i64::MAX);
        self.push(Tok::Number(n), line);
    }

    fn name(&mut self) -> Result<(), Error> {
        let line = self.line;
        let start = self.pos;
        while self
            .peek(0)
            .is_some_and(|c| c == '_' || c.is_ascii_alphanumeric())
        {
            self.bump();
        }
        let name: String = self.chars[start..self.pos].iter().collect();
        let body = name.trim_start_matches('_');
        let upper = body.chars().any(|c| c.is_ascii_uppercase());
        let lower = body.chars().any(|c| c.is_ascii_lowercase());
        let first = body.chars().next();
        let tok = match first {
            Some(f) if f.is_ascii_lowercase() && !upper => Tok::Rule(name),
            Some(f) if f.is_ascii_uppercase() && !lower => Tok::Term(name),
            _ => {
                return Err(syntax(
                    line,
                    format!("illegal name `{name}` for a rule or terminal"),
                ))
            }
        };
        self.push(tok, line);
        Ok(())
    }

    fn directive(&mut self) -> Result<(), Error> {
        let line = self.line;
        self.bump();
        let start = self.pos;
        while self
            .peek(0)
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            self.bump();
        }
        let name: String = self.chars[start..self.pos].iter().collect();
        match name.as_str() {
            "json" | "regex" => Err(Error::Unsupported {
                line,
                message: format!("`%{name} {{...}}` (llguidance)"),
            }),
            "llguidance" => self.skip_json(),
            _ => {
                self.push(Tok::Directive(name), line);
                Ok(())
            }
        }
    }

    /// Skip `%llguidance`'s `{...}` (JSON: braces balanced outside strings).
    fn skip_json(&mut self) -> Result<(), Error> {
        let line = self.line;
        while self.peek(0).is_some_and(|c| c == ' ' || c == '\t') {
            self.bump();
        }
        if self.peek(0) != Some('{') {
            return Err(syntax(
                line,
                "`%llguidance` expects a JSON object `{...}`".into(),
            ));
        }
        let mut depth = 0usize;
        let mut in_str = false;
        while let Some(c) = self.bump() {
            match (in_str, c) {
                (true, '\\') => {
                    self.bump();
                }
                (true, '"') | (false, '"') => in_str = !in_str,
                (false, '{') => depth += 1,
                (false, '}') => {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(());
                    }
                }
                _ => {}
            }
        }
        Err(syntax(line, "unterminated `%llguidance {...}`".into()))
    }

    fn string(&mut self) -> Result<(), Error> {
        let line = self.line;
        let start = self.pos;
        self.bump();
        loop {
            match self.peek(0) {
                None | Some('\n') => {
                    let head: String = self.chars[start..self.pos].iter().take(20).collect();
                    return Err(syntax(line, format!("unterminated string starting {head}")));
                }
                Some('\\') if matches!(self.peek(1), Some('"' | '\\')) => {
                    self.pos += 2;
                }
                Some('"') => break,
                _ => {
                    self.bump();
                }
            }
        }
        self.bump();
        let body: String = self.chars[start + 1..self.pos - 1].iter().collect();
        let ci = self.peek(0) == Some('i')
            && !self
                .peek(1)
                .is_some_and(|c| c == '_' || c.is_ascii_alphanumeric());
        if ci {
            self.bump();
        }
        let raw: String = self.chars[start..self.pos].iter().collect();
        let value =
            unescape(&body, true).map_err(|m| syntax(line, format!("string {raw}: {m}")))?;
        self.push(Tok::Str { value, ci, raw }, line);
        Ok(())
    }

    fn regex(&mut self) -> Result<(), Error> {
        let line = self.line;
        let start = self.pos;
        self.bump();
        loop {
            match self.peek(0) {
                None => {
                    let head: String = self.chars[start..].iter().take(20).collect();
                    return Err(syntax(line, format!("unterminated regex starting {head}")));
                }
                Some('\\') if matches!(self.peek(1), Some('/' | '\\')) => {
                    self.pos += 2;
                }
                Some('/') => break,
                _ => {
                    self.bump();
                }
            }
        }
        self.bump();
        let body: String = self.chars[start + 1..self.pos - 1].iter().collect();
        let fstart = self.pos;
        while self.peek(0).is_some_and(|c| "imslux".contains(c)) {
            self.bump();
        }
        let flags: String = self.chars[fstart..self.pos].iter().collect();
        let raw: String = self.chars[start..self.pos].iter().collect();
        if body.contains('\n') && !flags.contains('x') {
            return Err(syntax(
                line,
                "a regex may hold a newline only with the `x` flag".into(),
            ));
        }
        let pattern =
            unescape(&body, false).map_err(|m| syntax(line, format!("regex {raw}: {m}")))?;
        self.push(
            Tok::Regex {
                pattern,
                flags,
                raw,
            },
            line,
        );
        Ok(())
    }
}

/// Lark's `eval_escaping` (and, for a string, its `\\` to `\`).
pub(super) fn unescape(body: &str, string: bool) -> Result<String, String> {
    let mut w = String::new();
    let mut it = body.chars();
    while let Some(c) = it.next() {
        if c != '\\' {
            w.push(c);
            continue;
        }
        let e = it.next().ok_or("ends in a lone backslash")?;
        let digits = match e {
            'n' => Some('\n'),
            't' => Some('\t'),
            'r' => Some('\r'),
            'f' => Some('\x0c'),
            _ => None,
        };
        if let Some(ch) = digits {
            w.push(ch);
            continue;
        }
        let width = match e {
            'x' => 2,
            'u' => 4,
            'U' => 8,
            '"' => {
                w.push('"');
                continue;
            }
            _ => {
                w.push('\\');
                w.push(e);
                continue;
            }
        };
        let mut v: u32 = 0;
        for _ in 0..width {
            let d = it.next().and_then(|d| d.to_digit(16));
            v = v * 16 + d.ok_or_else(|| format!("`\\{e}` expects {width} hex digits"))?;
        }
        w.push(char::from_u32(v).ok_or_else(|| format!("U+{v:X} is not a Unicode scalar value"))?);
    }
    Ok(if string { w.replace("\\\\", "\\") } else { w })
}
