//! Look-aheads at the start of an anchored ECMA-262 pattern (`^(?=X)(?!Y)R`), for
//! [`super::translate`]: the strings of `^R` that start with a match of each `X`
//! and of no `Y`, an intersection of regular languages and complements, built as
//! automata and written back as a regex. Look-around anywhere else is refused.

use regex_syntax::ast::{self, Ast};

use crate::languages::automaton::Dfa;
use crate::languages::ecma::{translate_plain, Refusal};
use crate::languages::eliminate::to_rx;
use crate::languages::eliminate::MAX_ELIMINATED;
use crate::languages::rx::Rx;

/// `^(?=X)(?!Y)…R`: look-aheads at the start of an anchored pattern, each `(negated,
/// X)`, and the rest `R`; None when the pattern does not start so. (regex-syntax parses
/// no look-around, so they are cut out of the text: a group's end is found by counting
/// parentheses outside classes and escapes.)
pub(super) fn leading_lookaheads(pattern: &str) -> Option<(Vec<(bool, &str)>, &str)> {
    let mut rest = pattern.strip_prefix('^')?;
    let mut looks = Vec::new();
    loop {
        rest = rest.trim_start_matches('^');
        let negated = match rest.get(..3) {
            Some("(?=") => false,
            Some("(?!") => true,
            _ => break,
        };
        let close = group_end(rest)?;
        looks.push((negated, &rest[3..close]));
        rest = &rest[close + 1..];
    }
    (!looks.is_empty()).then_some((looks, rest))
}

/// The byte offset of the `)` closing the group `text` starts with.
fn group_end(text: &str) -> Option<usize> {
    let b = text.as_bytes();
    let (mut depth, mut in_class, mut i) = (0usize, false, 0);
    while i < b.len() {
        match b[i] {
            b'\\' => i += 1,
            b'[' if !in_class => in_class = true,
            b']' if in_class => in_class = false,
            b'(' if !in_class => depth += 1,
            b')' if !in_class => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// `^(?=X)(?!Y)R`: the strings of `^R` that start with a match of `X` and not of `Y`,
/// built as automata and written back as a regex (refused past their state limits).
pub(super) fn with_lookaheads(
    pattern: &str,
    looks: &[(bool, &str)],
    rest: &str,
) -> Result<Rx, Refusal> {
    let refuse = |what: &str| {
        format!("pattern {pattern:?} uses {what}, which has no exact regular translation here")
    };
    let body = format!("^{rest}");
    if body.contains("(?=") || body.contains("(?!") || top_level_alternation(&body) {
        return Err(refuse("a look-ahead not at the start of all of it"));
    }
    let automaton = |p: &str| -> Result<Dfa, Refusal> {
        // the refusal names the pattern written, then the part that failed
        let x = translate_plain(p).map_err(|why| format!("pattern {pattern:?}: {why}"))?;
        Dfa::from_rx(&x).map_err(|_| refuse("look-aheads needing too many automaton states"))
    };
    let mut d = automaton(&body)?;
    for &(negated, x) in looks {
        let starts = automaton(&format!("^(?:{x})"))?;
        let starts = if negated { starts.complement() } else { starts };
        d = d
            .intersect(&starts)
            .map_err(|_| refuse("look-aheads needing too many automaton states"))?;
    }
    let d = d.minimize();
    if d.len() > MAX_ELIMINATED {
        return Err(refuse("look-aheads needing too many automaton states"));
    }
    to_rx(&d).ok_or_else(|| refuse("look-aheads needing too many automaton states"))
}

/// Whether `pattern` parses as an alternation at its top level (`^a|b`: a look-ahead
/// before it would apply to the first alternative only).
fn top_level_alternation(pattern: &str) -> bool {
    matches!(
        ast::parse::Parser::new().parse(pattern),
        Ok(Ast::Alternation(_))
    )
}
