//! Smaller grammars, one step each, for the differ's minimizer: it keeps a step while
//! the bug it shrinks still shows, so a repro names only the rules the bug needs.
//!
//! [`Grammar::reductions`] lists, largest cut first:
//! - the grammar without one `%ignore` terminal;
//! - the grammar without one alternative of a rule that has several (which drops every
//!   rule and terminal only that alternative reached);
//! - the grammar with one symbol of an alternative left out (an optional part made
//!   absent, a repetition's tail cut), where the alternative has several.
//!
//! Each is trimmed (no unproductive or unreachable symbols), and an alternative `A -> A`
//! a step leaves is dropped (the language is the same; dropping `"b"` from
//! `a ::= ("b" a)?` would leave a rule that is optionally itself, written `a: [a]` in
//! Lark, which xgrammar 0.2.8 reads as `a ::= a{0,1}` and crashes on: a bug of its own,
//! which the corpus holds as `edge-optional-self`, not one to meet while shrinking
//! another). A step whose language is empty, or that is the grammar itself after
//! trimming, is left out. A step never adds
//! a rule, a terminal or an alternative, so repeating "take the first step that keeps
//! the bug" ends.

use crate::ir::{Grammar, Symbol};

impl Grammar {
    /// The one-step reductions of this grammar (see the module doc), each trimmed.
    pub fn reductions(&self) -> Vec<Grammar> {
        let base = self.trimmed().unwrap_or_else(|_| self.clone());
        let mut out: Vec<Grammar> = Vec::new();
        let mut keep = |mut g: Grammar| {
            without_unit_rules(&mut g);
            without_self_units(&mut g);
            if let Ok(t) = g.trimmed() {
                if t != base && !out.contains(&t) {
                    out.push(t);
                }
            }
        };
        for k in 0..base.ignore.len() {
            let mut g = base.clone();
            g.ignore.remove(k);
            keep(g);
        }
        for (r, rule) in base.rules.iter().enumerate() {
            if rule.alternatives.len() < 2 {
                continue;
            }
            for a in 0..rule.alternatives.len() {
                let mut g = base.clone();
                g.rules[r].alternatives.remove(a);
                keep(g);
            }
        }
        for (r, rule) in base.rules.iter().enumerate() {
            for (a, alt) in rule.alternatives.iter().enumerate() {
                if alt.len() < 2 {
                    continue;
                }
                for s in 0..alt.len() {
                    let mut g = base.clone();
                    g.rules[r].alternatives[a].remove(s);
                    keep(g);
                }
            }
        }
        out
    }

    /// The number of rules, alternatives, symbols and ignore terminals: what a reduction
    /// makes smaller.
    pub fn size(&self) -> usize {
        let symbols: usize = self
            .rules
            .iter()
            .map(|r| r.alternatives.iter().map(|a| a.len() + 1).sum::<usize>() + 1)
            .sum();
        symbols + self.ignore.len()
    }
}

/// Replaces every use of a rule whose one alternative is one other symbol by that
/// symbol (`value ::= string` read through), so that the chains of single rules a cut
/// leaves do not fill the repro; the start moves down a chain of rules. Trimming then
/// drops the rules no longer used.
fn without_unit_rules(g: &mut Grammar) {
    for _ in 0..g.rules.len() {
        let unit = (0..g.rules.len()).find_map(|r| match g.rules[r].alternatives.as_slice() {
            [alt] if alt.len() == 1 && alt[0] != Symbol::Rule(r as u32) => {
                let me = Symbol::Rule(r as u32);
                let referenced = g.rules.iter().flat_map(|x| x.alternatives.iter().flatten());
                let start_moves = r as u32 == g.start && matches!(alt[0], Symbol::Rule(_));
                (start_moves || referenced.into_iter().any(|s| *s == me)).then_some((r, alt[0]))
            }
            _ => None,
        });
        let Some((r, to)) = unit else { return };
        let from = Symbol::Rule(r as u32);
        for rule in &mut g.rules {
            for alt in &mut rule.alternatives {
                for s in alt.iter_mut().filter(|s| **s == from) {
                    *s = to;
                }
            }
        }
        match to {
            Symbol::Rule(q) if g.start == r as u32 => g.start = q,
            // the start rule stays, deriving its one terminal (now referenced nowhere)
            Symbol::Terminal(_) if g.start == r as u32 => continue,
            _ => {}
        }
        // `r` is unused now; one alternative of itself keeps it from being picked again
        g.rules[r].alternatives = vec![vec![from]];
    }
}

/// Drops every alternative `A -> A` (a rule deriving itself alone).
fn without_self_units(g: &mut Grammar) {
    for (r, rule) in g.rules.iter_mut().enumerate() {
        let me = [Symbol::Rule(r as u32)];
        rule.alternatives.retain(|alt| alt.as_slice() != me);
    }
}

#[cfg(test)]
mod tests {
    use crate::ir::{Notation, Symbol};
    use crate::read::read;

    #[test]
    fn every_reduction_is_smaller_and_trimmed() {
        let g = read(
            "root ::= item (\",\" item)* | \"[]\"\nitem ::= [a-z]+ | num\nnum ::= [0-9]+\n",
            Notation::Gbnf,
        )
        .unwrap();
        let steps = g.reductions();
        assert!(!steps.is_empty());
        let size = g.trimmed().unwrap().size();
        for s in &steps {
            assert!(s.size() < size, "{s:?}");
            assert_eq!(s.trimmed().unwrap(), *s);
        }
        // dropping `num`'s alternative in `item` removes the rule `num`
        assert!(steps
            .iter()
            .any(|s| s.rules.iter().all(|r| r.name != "num")));
    }

    #[test]
    fn no_step_leaves_a_rule_deriving_itself_alone() {
        let g = read("root ::= a \"x\"\na ::= (\"b\" a)?\n", Notation::Gbnf).unwrap();
        for s in g.reductions() {
            for (r, rule) in s.rules.iter().enumerate() {
                assert!(
                    !rule.alternatives.contains(&vec![Symbol::Rule(r as u32)]),
                    "{s:?}"
                );
            }
        }
    }

    #[test]
    fn chains_of_single_rules_are_read_through() {
        let g = read("root ::= a\na ::= b\nb ::= \"x\" | \"y\"\n", Notation::Gbnf).unwrap();
        let steps = g.reductions();
        assert!(steps.iter().all(|s| s.rules.len() == 1), "{steps:?}");
        assert_eq!(steps.len(), 2);
    }

    #[test]
    fn a_grammar_of_one_string_has_no_reduction() {
        let g = read("root ::= \"a\"\n", Notation::Gbnf).unwrap();
        assert!(g.reductions().is_empty());
    }

    #[test]
    fn ignore_terminals_are_dropped_one_at_a_time() {
        let g = read(
            "start: WORD+\nWORD: /[a-z]+/\n%import common.WS\n%ignore WS\n",
            Notation::Lark,
        )
        .unwrap();
        assert!(g.reductions().iter().any(|s| s.ignore.is_empty()));
        // the Lark writer keeps the import, so an engine reads its own `common.WS` again
        assert!(crate::to_lark(&g).unwrap().contains("%import common.WS\n"));
    }
}
