//! Objects whose member count depends on which optional members are present:
//! `minProperties` above the required members, or `maxProperties` below what the
//! optional and undeclared members could add.
//!
//! The members are written in schema order (declared ones, then undeclared ones), so
//! such an object is a walk through its members, and the count is the number of steps:
//! a counted automaton over members ([`tokensdfa_core::counted`], one member a unit). State
//! `(i, s)`: the declared members before `i` are decided, and `s` says whether one was
//! written (the next one then takes a comma). From `(i, s)` a step writes declared
//! member `j >= i` when every member from `i` to `j` is optional, and an undeclared
//! member when every member from `i` on is; the undeclared state writes more of them.
//! The object may end where every member left is optional. Before the graph it was
//! refused.

use crate::context::{Fail, Step};
use crate::emitting::emit::{counted_steps, Emitter};
use crate::languages::rx::{self, Rx};

/// The most declared members of such an object: the steps between them are quadratic.
const MAX_COUNTED_MEMBERS: usize = 256;

impl Emitter<'_> {
    /// The object of `members` (text, required) in order, then `extra` undeclared
    /// members (any number), with `lo..=hi` members in all: the container.
    pub fn counted_members(
        &self,
        members: &[(Rx, bool)],
        extra: Option<&Rx>,
        lo: u64,
        hi: Option<u64>,
    ) -> Step<Rx> {
        let n = members.len();
        if n > MAX_COUNTED_MEMBERS {
            return Err(Fail::Limit(format!(
                "a member count beside {n} declared members"
            )));
        }
        // optional_from[i]: every member from i on is optional
        let mut optional_from = vec![true; n + 1];
        for i in (0..n).rev() {
            optional_from[i] = optional_from[i + 1] && !members[i].1;
        }
        // states: (i, s) is 2 * i + s, the undeclared state 2 * (n + 1)
        let undeclared = 2 * (n + 1);
        let mut targets = vec![Vec::new(); undeclared + 1];
        let mut labels = vec![Vec::new(); undeclared + 1];
        let comma = |x: &Rx, s: usize| match s {
            0 => x.clone(),
            _ => rx::concat([self.tok.comma.clone(), x.clone()]),
        };
        for (i, &rest_optional) in optional_from.iter().enumerate() {
            for s in 0..2 {
                let q = 2 * i + s;
                for (j, (m, required)) in members.iter().enumerate().skip(i) {
                    targets[q].push(2 * (j + 1) as u32 + 1);
                    labels[q].push(comma(m, s));
                    if *required {
                        break;
                    }
                }
                if let Some(x) = extra.filter(|_| rest_optional) {
                    targets[q].push(undeclared as u32);
                    labels[q].push(comma(x, s));
                }
            }
        }
        if let Some(x) = extra {
            targets[undeclared].push(undeclared as u32);
            labels[undeclared].push(comma(x, 1));
        }
        let mut accept: Vec<bool> = (0..undeclared).map(|q| optional_from[q / 2]).collect();
        accept.push(true);
        accept[0] = false; // the empty object is the container's own alternative
        let body = counted_steps(
            targets,
            labels,
            accept,
            (lo.max(1), hi),
            "a member count",
            None,
        )?;
        let empty = lo == 0 && optional_from[0];
        let body = (!rx::is_never(&body)).then_some(body);
        Ok(self.tok.container("{", body, empty, "}"))
    }
}
