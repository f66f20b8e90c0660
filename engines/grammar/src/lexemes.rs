//! Greedy lexing's reading of a terminal that matches the empty string.
//!
//! A lexeme is never empty (a lexer that took empty matches would never move on), so
//! under greedy lexing ([`crate::Lexing::Greedy`]) a terminal matches non-empty text
//! only. A terminal whose language holds the empty string besides is read as *optional*:
//! each of its occurrences may be left out, and where it is not, it is a non-empty
//! lexeme. This is llguidance's reading, measured on 1.9.1 with `nullable.gbnf`, whose
//! rules its GBNF converter turns into terminals (`OPT: "" | "y"`, `PAIR: OPT OPT | "zz"`):
//! after `y` it allows `x`, `y` and `z` (each of `OPT` and `PAIR` may be absent), and
//! after `yy` only `x` (the maximal munch took `yy` as one `PAIR`, so a third `y` would
//! need a second `OPT` before the `PAIR`). Reading such a terminal as unusable (the
//! empty match dropped, nothing else) leaves `x` out after `y`.
//!
//! [`Grammar::empty_terminals_optional`] writes that reading as a grammar: every
//! occurrence of such a terminal `T` becomes a fresh rule `T? ::= T | ""`; trimming for
//! non-empty matches then drops `T` where it matches only the empty string, leaving the
//! rule empty.

use crate::error::Error;
use crate::ir::{Grammar, Rule, Symbol};

impl Grammar {
    /// The grammar with every occurrence of a terminal matching the empty string made
    /// optional (see the module doc); the grammar itself where no terminal does.
    pub(crate) fn empty_terminals_optional(&self) -> Result<Grammar, Error> {
        let dfas = self.terminal_dfas()?;
        let mut g = self.clone();
        let mut optional: Vec<Option<u32>> = vec![None; self.terminals.len()];
        for (t, dfa) in dfas.iter().enumerate() {
            if dfa.is_accepting(0) {
                optional[t] = Some(g.rules.len() as u32);
                g.rules.push(Rule {
                    name: format!("{}?", self.terminals[t].name),
                    alternatives: vec![vec![Symbol::Terminal(t as u32)], vec![]],
                });
            }
        }
        let first_fresh = self.rules.len();
        for rule in &mut g.rules[..first_fresh] {
            for alt in &mut rule.alternatives {
                for s in alt.iter_mut() {
                    if let Symbol::Terminal(t) = *s {
                        if let Some(r) = optional[t as usize] {
                            *s = Symbol::Rule(r);
                        }
                    }
                }
            }
        }
        Ok(g)
    }
}

#[cfg(test)]
mod tests {
    use crate::ir::{Notation, Symbol};
    use crate::read::read;

    #[test]
    fn a_terminal_matching_empty_becomes_optional() {
        let g = read("start: A \"x\"\nA: \"\" | \"y\"\n", Notation::Lark).unwrap();
        let o = g.empty_terminals_optional().unwrap();
        assert_eq!(o.rules.len(), g.rules.len() + 1);
        let fresh = (o.rules.len() - 1) as u32;
        assert!(o
            .rules
            .iter()
            .flat_map(|r| r.alternatives.iter().flatten())
            .any(|s| *s == Symbol::Rule(fresh)));
    }

    #[test]
    fn other_grammars_are_left_alone() {
        let g = read("root ::= [a-z]+ \"x\"\n", Notation::Gbnf).unwrap();
        assert_eq!(g.empty_terminals_optional().unwrap(), g);
    }
}
