//! Lark's parsed statements into the IR.
//!
//! 1. Names: every rule and terminal defined once (a second definition, or an import
//!    over a definition, is [`Error::Invalid`]); `%import common.X` defines `X` from
//!    `common`'s table.
//! 2. Terminals: each used terminal's expansion becomes one regex, referenced terminals
//!    inlined (memoized; a cycle, or a rule inside a terminal, is [`Error::Invalid`]).
//!    Pieces are joined as Lark joins them: `(?:a)(?:b)`, `(?:a|b)`, `(?:a){m,n}`.
//! 3. Rules: each expansion becomes a builder [`Expr`]; a literal, regex or range in a
//!    rule is an anonymous terminal; a template use `t{a, b}` instantiates `t` once per
//!    distinct argument list (at most [`MAX_INSTANCES`]).
//! 4. `%ignore` expansions become terminals listed in [`Grammar::ignore`].

use rustc_hash::FxHashMap;

use super::parser::{Def, Parsed};
use super::{common, pyre, LExpr};
use crate::error::Error;
use crate::ir::Grammar;
use crate::read::builder::{regex_char, Builder, Expr};
use crate::read::{MAX_DEPTH, MAX_REPEAT};

/// Most template instances one grammar may create.
pub(super) const MAX_INSTANCES: usize = 10_000;

enum TermDef {
    Body(LExpr),
    Common(String),
}

struct Lower {
    rules: FxHashMap<String, (Vec<String>, LExpr, usize)>,
    terms: FxHashMap<String, TermDef>,
    regexes: FxHashMap<String, String>,
    /// Terminals being inlined (cycle detection).
    active: Vec<String>,
    builder: Builder,
    /// Template instances waiting to be lowered: (rule id, body).
    pending: Vec<(u32, Expr)>,
    instances: usize,
}

pub(super) fn lower(parsed: Parsed) -> Result<Grammar, Error> {
    let mut lw = Lower {
        rules: FxHashMap::default(),
        terms: FxHashMap::default(),
        regexes: FxHashMap::default(),
        active: Vec::new(),
        builder: Builder::new(),
        pending: Vec::new(),
        instances: 0,
    };
    let mut lines: FxHashMap<String, usize> = FxHashMap::default();
    let mut once = |name: &str, line: usize| match lines.insert(name.to_string(), line) {
        Some(first) => Err(Error::Invalid(format!(
            "`{name}` defined twice (lines {first} and {line})"
        ))),
        None => Ok(()),
    };
    for Def {
        name,
        params,
        body,
        line,
    } in parsed.rules
    {
        once(&name, line)?;
        lw.rules.insert(name, (params, body, line));
    }
    for Def {
        name, body, line, ..
    } in parsed.terms
    {
        once(&name, line)?;
        lw.terms.insert(name, TermDef::Body(body));
    }
    for (module, name, alias, line) in parsed.imports {
        if module != "common" {
            return Err(Error::Unsupported {
                line,
                message: format!("`%import` from module `{module}`"),
            });
        }
        let regex = common::regex(&name).ok_or_else(|| {
            Error::Invalid(format!("line {line}: `common` has no terminal `{name}`"))
        })?;
        once(&alias, line)?;
        lw.terms.insert(alias, TermDef::Common(regex));
    }
    lw.rules_and_start(parsed.ignores)
}

impl Lower {
    fn rules_and_start(mut self, ignores: Vec<(LExpr, usize)>) -> Result<Grammar, Error> {
        let mut names: Vec<&String> = self
            .rules
            .iter()
            .filter(|(_, v)| v.0.is_empty())
            .map(|(k, _)| k)
            .collect();
        names.sort_by_key(|n| self.rules[*n].2);
        let names: Vec<String> = names.into_iter().cloned().collect();
        for n in &names {
            self.builder.declare(n);
        }
        for n in &names {
            let body = self.rules[n].1.clone();
            let expr = self.rule_expr(&body, &FxHashMap::default(), 0)?;
            let id = self.builder.declare(n);
            self.builder.define(id, &expr)?;
            while let Some((id, expr)) = self.pending.pop() {
                self.builder.define(id, &expr)?;
            }
        }
        let mut ignore = Vec::new();
        for (e, line) in &ignores {
            let (regex, name) = match e {
                LExpr::Name(n, _) => (self.term_regex(n, *line)?, n.clone()),
                _ => (self.term_expr(e, "%ignore", 0)?, format!("%ignore@{line}")),
            };
            let id = self.builder.terminal(&regex, &name)?;
            if !ignore.contains(&id) {
                ignore.push(id);
            }
        }
        let start = self
            .builder
            .lookup("start")
            .ok_or_else(|| Error::Invalid("no rule named start (the start rule of lark)".into()))?;
        Ok(self.builder.finish(start, ignore))
    }

    /// The regex of the terminal `name`, its references inlined.
    fn term_regex(&mut self, name: &str, line: usize) -> Result<String, Error> {
        if let Some(r) = self.regexes.get(name) {
            return Ok(r.clone());
        }
        if self.active.iter().any(|a| a == name) {
            return Err(Error::Invalid(format!(
                "terminal {name} is defined through itself (line {line})"
            )));
        }
        if self.active.len() > MAX_DEPTH {
            return Err(Error::Limit(format!(
                "terminals nested deeper than {MAX_DEPTH} at {name}"
            )));
        }
        let body = match self.terms.get(name) {
            None => {
                return Err(Error::Invalid(format!(
                    "line {line}: undefined terminal `{name}`"
                )))
            }
            Some(TermDef::Common(r)) => r.clone(),
            Some(TermDef::Body(b)) => {
                let b = b.clone();
                self.active.push(name.to_string());
                let r = self.term_expr(&b, name, 0);
                self.active.pop();
                r?
            }
        };
        self.regexes.insert(name.to_string(), body.clone());
        Ok(body)
    }

    /// A terminal expansion as one regex (`term`: the terminal it defines, for messages).
    fn term_expr(&mut self, e: &LExpr, term: &str, depth: usize) -> Result<String, Error> {
        if depth > MAX_DEPTH {
            return Err(Error::Limit(format!(
                "terminal {term} nested deeper than {MAX_DEPTH}"
            )));
        }
        Ok(match e {
            LExpr::Seq(items) => {
                let parts = items
                    .iter()
                    .map(|i| self.term_expr(i, term, depth + 1))
                    .collect::<Result<Vec<_>, _>>()?;
                parts.iter().map(|p| format!("(?:{p})")).collect()
            }
            LExpr::Alt(alts) => {
                let parts = alts
                    .iter()
                    .map(|a| self.term_expr(a, term, depth + 1))
                    .collect::<Result<Vec<_>, _>>()?;
                format!("(?:{})", parts.join("|"))
            }
            LExpr::Repeat(inner, min, max, line) => {
                let top = max.unwrap_or(*min).max(*min);
                if top > MAX_REPEAT {
                    return Err(Error::Limit(format!(
                        "line {line}: repetition count {top} is over the limit of {MAX_REPEAT}"
                    )));
                }
                if max.is_some_and(|m| m < *min) {
                    return Err(Error::Invalid(format!(
                        "line {line}: bad range {min}..{} in {term}",
                        max.unwrap_or(0)
                    )));
                }
                let r = self.term_expr(inner, term, depth + 1)?;
                match (*min, *max) {
                    (0, None) => format!("(?:{r})*"),
                    (1, None) => format!("(?:{r})+"),
                    (0, Some(1)) => format!("(?:{r})?"),
                    (m, None) => format!("(?:{r}){{{m},}}"),
                    (m, Some(n)) if m == n => format!("(?:{r}){{{m}}}"),
                    (m, Some(n)) => format!("(?:{r}){{{m},{n}}}"),
                }
            }
            LExpr::Str { value, ci, .. } => string_regex(value, *ci),
            LExpr::Regex {
                pattern,
                flags,
                raw,
                line,
            } => regex_regex(pattern, flags, raw, term, *line)?,
            LExpr::Range(lo, hi, line) => range_regex(lo, hi, *line)?,
            LExpr::Name(n, line) if is_term(n) => self.term_regex(n, *line)?,
            LExpr::Name(n, line) | LExpr::Template(n, _, line) => {
                return Err(Error::Invalid(format!(
                    "line {line}: rule `{n}` used inside terminal {term}"
                )))
            }
        })
    }

    /// A rule expansion as a builder expression; `subst` maps template parameters.
    fn rule_expr(
        &mut self,
        e: &LExpr,
        subst: &FxHashMap<String, Expr>,
        depth: usize,
    ) -> Result<Expr, Error> {
        if depth > MAX_DEPTH {
            return Err(Error::Limit(format!(
                "expansions nested deeper than {MAX_DEPTH}"
            )));
        }
        Ok(match e {
            LExpr::Seq(items) => Expr::Seq(
                items
                    .iter()
                    .map(|i| self.rule_expr(i, subst, depth + 1))
                    .collect::<Result<_, _>>()?,
            ),
            LExpr::Alt(alts) => Expr::Alt(
                alts.iter()
                    .map(|a| self.rule_expr(a, subst, depth + 1))
                    .collect::<Result<_, _>>()?,
            ),
            LExpr::Repeat(inner, min, max, line) => Expr::Repeat {
                inner: Box::new(self.rule_expr(inner, subst, depth + 1)?),
                min: *min,
                max: *max,
                line: *line,
            },
            LExpr::Str { value, .. } if value.is_empty() => Expr::Seq(vec![]),
            LExpr::Str { value, ci, raw } => Expr::Term {
                regex: string_regex(value, *ci),
                name: raw.clone(),
            },
            LExpr::Regex {
                pattern,
                flags,
                raw,
                line,
            } => Expr::Term {
                regex: regex_regex(pattern, flags, raw, raw, *line)?,
                name: raw.clone(),
            },
            LExpr::Range(lo, hi, line) => Expr::Term {
                regex: range_regex(lo, hi, *line)?,
                name: format!("{lo:?}..{hi:?}"),
            },
            LExpr::Name(n, line) if is_term(n) => Expr::Term {
                regex: self.term_regex(n, *line)?,
                name: n.clone(),
            },
            LExpr::Name(n, line) => self.rule_ref(n, *line, subst)?,
            LExpr::Template(n, args, line) => self.instantiate(n, args, *line, subst, depth)?,
        })
    }

    fn rule_ref(
        &mut self,
        n: &str,
        line: usize,
        subst: &FxHashMap<String, Expr>,
    ) -> Result<Expr, Error> {
        if let Some(e) = subst.get(n) {
            return Ok(e.clone());
        }
        match self.rules.get(n) {
            Some((params, _, _)) if !params.is_empty() => Err(Error::Invalid(format!(
                "line {line}: template `{n}` used without arguments"
            ))),
            _ => Ok(Expr::Ref {
                name: n.to_string(),
                line,
            }),
        }
    }

    /// `name{args}`: the instance's rule, created on first use.
    fn instantiate(
        &mut self,
        n: &str,
        args: &[LExpr],
        line: usize,
        subst: &FxHashMap<String, Expr>,
        depth: usize,
    ) -> Result<Expr, Error> {
        let Some((params, body, _)) = self.rules.get(n).cloned() else {
            return Err(Error::Invalid(format!(
                "line {line}: undefined template `{n}`"
            )));
        };
        if params.len() != args.len() {
            return Err(Error::Invalid(format!(
                "line {line}: template `{n}` takes {} arguments, given {}",
                params.len(),
                args.len()
            )));
        }
        let args = args
            .iter()
            .map(|a| self.rule_expr(a, subst, depth + 1))
            .collect::<Result<Vec<_>, _>>()?;
        let key = format!("{n}{{{args:?}}}");
        if let Some(id) = self.builder.lookup(&key) {
            return Ok({
                let _ = id;
                Expr::Ref { name: key, line }
            });
        }
        self.instances += 1;
        if self.instances > MAX_INSTANCES {
            return Err(Error::Limit(format!(
                "more than {MAX_INSTANCES} template instances"
            )));
        }
        let id = self.builder.declare(&key);
        let inner: FxHashMap<String, Expr> = params.into_iter().zip(args).collect();
        let expr = self.rule_expr(&body, &inner, depth + 1)?;
        self.pending.push((id, expr));
        Ok(Expr::Ref { name: key, line })
    }
}

fn is_term(name: &str) -> bool {
    name.trim_start_matches('_')
        .starts_with(|c: char| c.is_ascii_uppercase())
}

fn string_regex(value: &str, ci: bool) -> String {
    let e = regex_syntax::escape(value);
    if ci {
        format!("(?i:{e})")
    } else {
        e
    }
}

fn regex_regex(
    pattern: &str,
    flags: &str,
    raw: &str,
    term: &str,
    line: usize,
) -> Result<String, Error> {
    if flags.contains('l') {
        return Err(Error::Unsupported {
            line,
            message: format!("the `l` flag in {raw} ({term})"),
        });
    }
    let body = pyre::translate(pattern, flags.contains('x')).map_err(|(unsup, m)| {
        if unsup {
            Error::Unsupported {
                line,
                message: format!("{m} in terminal {term} ({raw})"),
            }
        } else {
            Error::Syntax {
                line,
                message: format!("regex {raw}: {m}"),
            }
        }
    })?;
    let on: String = flags.chars().filter(|c| "ims".contains(*c)).collect();
    Ok(if on.is_empty() {
        body
    } else {
        format!("(?{on}:{body})")
    })
}

fn range_regex(lo: &str, hi: &str, line: usize) -> Result<String, Error> {
    let one = |s: &str| {
        let mut it = s.chars();
        match (it.next(), it.next()) {
            (Some(c), None) => Ok(c),
            _ => Err(Error::Syntax {
                line,
                message: format!("range endpoint {s:?} is not one character"),
            }),
        }
    };
    let (a, b) = (one(lo)?, one(hi)?);
    if b < a {
        return Err(Error::Syntax {
            line,
            message: format!("reversed range {lo:?}..{hi:?}"),
        });
    }
    Ok(format!("[{}-{}]", regex_char(a), regex_char(b)))
}
