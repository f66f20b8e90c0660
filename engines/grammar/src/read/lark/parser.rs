//! Lark's statements from its tokens: definitions, `%ignore`, `%import`, directives.
//!
//! A definition is `[?!]name[{params}][.priority][[attrs]]: expansions` for a rule, or
//! `NAME[.priority]: expansions` for a terminal; it ends at a newline unless the next
//! line opens with `|` (Lark's `_NL_OR`); inside `(...)` and `[...]` newlines are
//! whitespace (Lark refuses them there; reading them is a superset). Aliases
//! (`-> name`), modifiers and priorities do not change the language and are dropped.
//! llguidance's rule attributes `[capture]`, `[temperature=..]` are dropped; `[lazy]`,
//! `[max_tokens=..]`, `[stop=..]` and others change what is generated and are refused.

use super::lexer::{Tok, Token};
use super::LExpr;
use crate::error::Error;
use crate::read::MAX_DEPTH;

/// A rule or terminal definition.
pub(super) struct Def {
    pub name: String,
    pub params: Vec<String>,
    pub body: LExpr,
    pub line: usize,
}

/// `%import common.X -> Y`: `(module, name, alias, line)`.
pub(super) type Import = (String, String, String, usize);

#[derive(Default)]
pub(super) struct Parsed {
    pub rules: Vec<Def>,
    pub terms: Vec<Def>,
    pub ignores: Vec<(LExpr, usize)>,
    pub imports: Vec<Import>,
}

pub(super) fn parse(tokens: Vec<Token>) -> Result<Parsed, Error> {
    let mut p = Parser {
        toks: tokens,
        pos: 0,
        nest: 0,
        out: Parsed::default(),
    };
    p.statements()?;
    Ok(p.out)
}

struct Parser {
    toks: Vec<Token>,
    pos: usize,
    nest: usize,
    out: Parsed,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.tok)
    }

    fn line(&self) -> usize {
        self.toks
            .get(self.pos)
            .or(self.toks.last())
            .map_or(1, |t| t.line)
    }

    fn next(&mut self) -> Option<Tok> {
        let t = self.toks.get(self.pos).map(|t| t.tok.clone());
        self.pos += 1;
        t
    }

    fn syntax(&self, message: &str) -> Error {
        Error::Syntax {
            line: self.line(),
            message: message.to_string(),
        }
    }

    fn expect(&mut self, tok: &Tok, what: &str) -> Result<(), Error> {
        if self.peek() == Some(tok) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.syntax(&format!("expected {what}")))
        }
    }

    fn end_statement(&mut self) -> Result<(), Error> {
        match self.next() {
            None | Some(Tok::Newline) => Ok(()),
            Some(t) => {
                self.pos -= 1;
                Err(self.syntax(&format!("unexpected {t:?} at the end of a statement")))
            }
        }
    }

    fn statements(&mut self) -> Result<(), Error> {
        while let Some(tok) = self.peek().cloned() {
            let line = self.line();
            match tok {
                Tok::Newline => self.pos += 1,
                Tok::Directive(d) => {
                    self.pos += 1;
                    self.directive(&d, line)?;
                }
                Tok::Bang | Tok::Question | Tok::Rule(_) => self.rule_def()?,
                Tok::Term(name) => {
                    self.pos += 1;
                    self.term_def(name, line)?;
                }
                _ => return Err(self.syntax("expected a rule or terminal definition")),
            }
        }
        Ok(())
    }

    fn rule_def(&mut self) -> Result<(), Error> {
        while matches!(self.peek(), Some(Tok::Bang | Tok::Question)) {
            self.pos += 1;
        }
        let line = self.line();
        let Some(Tok::Rule(name)) = self.next() else {
            return Err(Error::Syntax {
                line,
                message: "expected a rule name after `?`/`!`".into(),
            });
        };
        let mut params = Vec::new();
        if self.peek() == Some(&Tok::LBrace) {
            self.pos += 1;
            loop {
                match self.next() {
                    Some(Tok::Rule(p)) => params.push(p),
                    _ => return Err(self.syntax("expected a lowercase template parameter")),
                }
                match self.next() {
                    Some(Tok::Comma) => {}
                    Some(Tok::RBrace) => break,
                    _ => return Err(self.syntax("expected `,` or `}` in template parameters")),
                }
            }
        }
        self.priority()?;
        if self.peek() == Some(&Tok::LBracket) {
            self.attributes(&name)?;
        }
        self.expect(&Tok::Colon, &format!("`:` after rule name `{name}`"))?;
        let body = self.expansions(0)?;
        self.end_statement()?;
        self.out.rules.push(Def {
            name,
            params,
            body,
            line,
        });
        Ok(())
    }

    fn term_def(&mut self, name: String, line: usize) -> Result<(), Error> {
        if self.peek() == Some(&Tok::LBrace) {
            return Err(Error::Unsupported {
                line,
                message: format!("terminal template `{name}{{...}}`"),
            });
        }
        self.priority()?;
        self.expect(&Tok::Colon, &format!("`:` after terminal name `{name}`"))?;
        let body = self.expansions(0)?;
        self.end_statement()?;
        self.out.terms.push(Def {
            name,
            params: Vec::new(),
            body,
            line,
        });
        Ok(())
    }

    fn priority(&mut self) -> Result<(), Error> {
        if self.peek() == Some(&Tok::Dot) {
            self.pos += 1;
            match self.next() {
                Some(Tok::Number(_)) => {}
                _ => return Err(self.syntax("expected a number after `.` (priority)")),
            }
        }
        Ok(())
    }

    /// llguidance's `name[attr, attr=value]`.
    fn attributes(&mut self, rule: &str) -> Result<(), Error> {
        let line = self.line();
        self.pos += 1;
        loop {
            match self.next() {
                Some(Tok::RBracket) => return Ok(()),
                Some(Tok::Rule(a)) if a == "capture" || a == "temperature" => {}
                Some(Tok::Rule(a)) => {
                    return Err(Error::Unsupported {
                        line,
                        message: format!("rule attribute `{a}` on `{rule}` (llguidance)"),
                    })
                }
                None | Some(Tok::Newline) => {
                    return Err(Error::Syntax {
                        line,
                        message: "unclosed `[` after a rule name".into(),
                    })
                }
                Some(_) => {}
            }
        }
    }

    fn directive(&mut self, d: &str, line: usize) -> Result<(), Error> {
        match d {
            "ignore" => {
                let e = self.expansions(0)?;
                self.end_statement()?;
                self.out.ignores.push((e, line));
                Ok(())
            }
            "import" => self.import(line),
            "llguidance" => self.end_statement(),
            "declare" | "override" | "extend" => Err(Error::Unsupported {
                line,
                message: format!("`%{d}`"),
            }),
            _ => Err(Error::Syntax {
                line,
                message: format!("unknown directive `%{d}`"),
            }),
        }
    }

    fn name_tok(&mut self) -> Option<String> {
        match self.peek().cloned() {
            Some(Tok::Rule(n) | Tok::Term(n)) => {
                self.pos += 1;
                Some(n)
            }
            _ => None,
        }
    }

    fn import(&mut self, line: usize) -> Result<(), Error> {
        if self.peek() == Some(&Tok::Dot) || self.peek() == Some(&Tok::DotDot) {
            return Err(Error::Unsupported {
                line,
                message: "relative `%import .module`".into(),
            });
        }
        let mut path = vec![self
            .name_tok()
            .ok_or_else(|| self.syntax("`%import` expects a name"))?];
        while self.peek() == Some(&Tok::Dot) {
            self.pos += 1;
            path.push(
                self.name_tok()
                    .ok_or_else(|| self.syntax("expected a name after `.`"))?,
            );
        }
        if self.peek() == Some(&Tok::LParen) {
            self.pos += 1;
            let module = path.join(".");
            loop {
                let n = self
                    .name_tok()
                    .ok_or_else(|| self.syntax("expected a name in `(...)`"))?;
                self.out.imports.push((module.clone(), n.clone(), n, line));
                match self.next() {
                    Some(Tok::Comma) => {}
                    Some(Tok::RParen) => break,
                    _ => return Err(self.syntax("expected `,` or `)` in `%import`")),
                }
            }
        } else {
            let name = path.pop().unwrap_or_default();
            if path.is_empty() {
                return Err(Error::Syntax {
                    line,
                    message: format!("`%import {name}` names no module"),
                });
            }
            let mut alias = name.clone();
            if self.peek() == Some(&Tok::Arrow) {
                self.pos += 1;
                alias = self
                    .name_tok()
                    .ok_or_else(|| self.syntax("expected a name after `->`"))?;
            }
            self.out.imports.push((path.join("."), name, alias, line));
        }
        self.end_statement()
    }

    /// Skip newlines where they do not end the statement: inside brackets, or before `|`.
    fn skip_soft_newlines(&mut self) {
        let mut k = self.pos;
        while self.toks.get(k).is_some_and(|t| t.tok == Tok::Newline) {
            k += 1;
        }
        if k > self.pos && (self.nest > 0 || self.toks.get(k).is_some_and(|t| t.tok == Tok::Pipe)) {
            self.pos = k;
        }
    }

    fn expansions(&mut self, depth: usize) -> Result<LExpr, Error> {
        if depth > MAX_DEPTH {
            return Err(Error::Limit(format!(
                "line {}: groups nested deeper than {MAX_DEPTH}",
                self.line()
            )));
        }
        let mut alts = vec![self.alias(depth)?];
        loop {
            self.skip_soft_newlines();
            if self.peek() != Some(&Tok::Pipe) {
                break;
            }
            self.pos += 1;
            alts.push(self.alias(depth)?);
        }
        Ok(if alts.len() == 1 {
            alts.pop().unwrap_or(LExpr::Seq(vec![]))
        } else {
            LExpr::Alt(alts)
        })
    }

    fn alias(&mut self, depth: usize) -> Result<LExpr, Error> {
        let mut items = Vec::new();
        loop {
            self.skip_soft_newlines();
            match self.peek() {
                None
                | Some(
                    Tok::Newline
                    | Tok::Pipe
                    | Tok::RParen
                    | Tok::RBracket
                    | Tok::RBrace
                    | Tok::Comma,
                ) => break,
                Some(Tok::Arrow) => {
                    self.pos += 1;
                    if !matches!(self.next(), Some(Tok::Rule(_))) {
                        return Err(self.syntax("`->` expects a lowercase alias name"));
                    }
                    break;
                }
                _ => items.push(self.expr(depth)?),
            }
        }
        Ok(if items.len() == 1 {
            items.pop().unwrap_or(LExpr::Seq(vec![]))
        } else {
            LExpr::Seq(items)
        })
    }

    fn expr(&mut self, depth: usize) -> Result<LExpr, Error> {
        let line = self.line();
        let atom = self.atom(depth)?;
        let (min, max) = match self.peek() {
            Some(Tok::Star) => (0, None),
            Some(Tok::Plus) => (1, None),
            Some(Tok::Question) => (0, Some(1)),
            Some(Tok::Tilde) => {
                self.pos += 1;
                let lo = self.count()?;
                let hi = if self.peek() == Some(&Tok::DotDot) {
                    self.pos += 1;
                    self.count()?
                } else {
                    lo
                };
                return Ok(LExpr::Repeat(Box::new(atom), lo, Some(hi), line));
            }
            _ => return Ok(atom),
        };
        self.pos += 1;
        if matches!(
            self.peek(),
            Some(Tok::Star | Tok::Plus | Tok::Question | Tok::Tilde)
        ) {
            return Err(self.syntax("misplaced operator (two in a row)"));
        }
        Ok(LExpr::Repeat(Box::new(atom), min, max, line))
    }

    fn count(&mut self) -> Result<u32, Error> {
        match self.next() {
            Some(Tok::Number(n)) if n >= 0 => Ok(u32::try_from(n).unwrap_or(u32::MAX)),
            _ => Err(self.syntax("`~` expects a count (`~ n` or `~ n..m`)")),
        }
    }

    fn atom(&mut self, depth: usize) -> Result<LExpr, Error> {
        let line = self.line();
        match self.next() {
            Some(Tok::LParen) => self.bracketed(depth, Tok::RParen, "`)`"),
            Some(Tok::LBracket) => {
                let inner = self.bracketed(depth, Tok::RBracket, "`]`")?;
                Ok(LExpr::Repeat(Box::new(inner), 0, Some(1), line))
            }
            Some(Tok::Str { value, ci, raw }) => {
                if self.peek() == Some(&Tok::DotDot) {
                    self.pos += 1;
                    let Some(Tok::Str { value: hi, .. }) = self.next() else {
                        return Err(self.syntax("`..` expects a string after it"));
                    };
                    return Ok(LExpr::Range(value, hi, line));
                }
                Ok(LExpr::Str { value, ci, raw })
            }
            Some(Tok::Regex {
                pattern,
                flags,
                raw,
            }) => Ok(LExpr::Regex {
                pattern,
                flags,
                raw,
                line,
            }),
            Some(Tok::Term(name)) => Ok(LExpr::Name(name, line)),
            Some(Tok::Rule(name)) => {
                if self.peek() != Some(&Tok::LBrace) {
                    return Ok(LExpr::Name(name, line));
                }
                self.pos += 1;
                let mut args = Vec::new();
                loop {
                    args.push(self.expr(depth + 1)?);
                    match self.next() {
                        Some(Tok::Comma) => {}
                        Some(Tok::RBrace) => break,
                        _ => return Err(self.syntax("expected `,` or `}` in template arguments")),
                    }
                }
                Ok(LExpr::Template(name, args, line))
            }
            Some(t) => {
                self.pos -= 1;
                Err(self.syntax(&format!("unexpected {t:?} in an expansion")))
            }
            None => Err(self.syntax("unexpected end of input in an expansion")),
        }
    }

    fn bracketed(&mut self, depth: usize, close: Tok, what: &str) -> Result<LExpr, Error> {
        let line = self.line();
        self.nest += 1;
        let inner = self.expansions(depth + 1)?;
        self.skip_soft_newlines();
        self.nest -= 1;
        if self.next() != Some(close) {
            return Err(Error::Syntax {
                line,
                message: format!("unclosed bracket: expected {what}"),
            });
        }
        Ok(inner)
    }
}
