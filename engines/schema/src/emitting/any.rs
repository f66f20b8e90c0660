//! The unconstrained value: a regex nesting at most [`crate::Dialect::any_depth`]
//! containers, or, in the grammar mode ([`crate::emitting::rules`]), a nonterminal whose
//! right-hand side holds itself one level down.

use crate::dialect::{Numbers, Whitespace};
use crate::emitting::emit::{Emitter, Tokens};
use crate::emitting::rules::{ANY_COMPACT, ANY_SPACED};
use crate::languages::charset::CharSet;
use crate::languages::numbers::{real_range, signed_exponent_form};
use crate::languages::rx::{self, Rx};

impl Emitter<'_> {
    /// Any value nesting at most `depth` containers.
    pub fn any_value(&mut self, depth: u32) -> Rx {
        if self.ctx.rules {
            let n = if self.compact {
                ANY_COMPACT
            } else {
                ANY_SPACED
            };
            self.any_rules[(n - ANY_SPACED) as usize] = true;
            return rx::rule(n);
        }
        if let Some(x) = self.any.get(&depth) {
            return x.clone();
        }
        let inner = (depth > 0).then(|| self.any_value(depth - 1));
        let x = self.any_of(inner);
        self.any.insert(depth, x.clone());
        x
    }

    /// The right-hand side of the grammar mode's unconstrained-value rule `n`
    /// ([`ANY_SPACED`] or [`ANY_COMPACT`]): its values one level down are the rule itself.
    pub fn any_rule_body(&mut self, n: u32) -> Rx {
        let tok = if n == ANY_COMPACT {
            Tokens::new(Whitespace::None)
        } else {
            self.spaced.clone()
        };
        let outer = std::mem::replace(&mut self.tok, tok);
        let x = self.any_of(Some(rx::rule(n)));
        self.tok = outer;
        x
    }

    /// Any scalar, and with `inner` any array or object whose items and member values are
    /// `inner`.
    fn any_of(&mut self, inner: Option<Rx>) -> Rx {
        let number = match self.ctx.dialect.numbers {
            Numbers::ExponentWhereExact | Numbers::ExponentWhenUnbounded => {
                signed_exponent_form(None, true)
            }
            Numbers::Decimal => real_range(None, None),
        };
        let string = self.quoted(&rx::star(rx::set(CharSet::full())));
        let mut parts = vec![
            rx::lit("null"),
            rx::lit("true"),
            rx::lit("false"),
            number,
            string.clone(),
        ];
        if let Some(inner) = inner {
            let items = self.list(&inner);
            parts.push(self.tok.container("[", Some(items), true, "]"));
            let member = rx::concat([string, self.tok.colon.clone(), inner]);
            let members = self.list(&member);
            parts.push(self.tok.container("{", Some(members), true, "}"));
        }
        rx::alt(parts)
    }
}
