//! Random sentences of a grammar: the instances the grammar corpus derives for grammars
//! that have no real texts, and the strings the tests check the reference on.
//!
//! A sentence is derived top-down from the start rule of the ignore-expanded, trimmed
//! grammar (so `%ignore` text is drawn too, where Lark's dynamic lexer reads it).
//! Alternatives are drawn uniformly until the derivation is `max_depth` rules deep; past
//! it, each rule takes an alternative of least *height* (the depth of its shallowest
//! derivation), so every draw ends. A terminal's text is a random walk over its minimized
//! byte DFA that stops at an accepting state with probability 1/3 per step, or, once it
//! has `max_terminal` bytes, heads for the nearest accepting state: every state of a
//! live-pruned DFA has one, and a walk that ends accepting has spelled valid UTF-8,
//! since the DFA is built from a Unicode regex.
//!
//! Draws are deterministic in `seed` (a splitmix64 generator, written here: the crate
//! takes no dependency for it).

use tokensdfa_core::dfa::DEAD;
use tokensdfa_core::ByteDfa;

use crate::error::Error;
use crate::ir::{Grammar, Symbol};

/// Bounds of one draw.
#[derive(Debug, Clone, Copy)]
pub struct SampleOptions {
    /// Rules deep before every rule takes a shallowest alternative.
    pub max_depth: usize,
    /// Bytes of one terminal before its walk heads for acceptance.
    pub max_terminal: usize,
    /// Bytes of a whole sentence: a longer draw is dropped (`None`).
    pub max_len: usize,
}

impl Default for SampleOptions {
    fn default() -> Self {
        SampleOptions {
            max_depth: 12,
            max_terminal: 12,
            max_len: 4096,
        }
    }
}

/// A draw's view of a grammar: trimmed, ignore-expanded, with terminal DFAs, heights and
/// each DFA state's distance to acceptance.
pub struct Sampler {
    grammar: Grammar,
    dfas: Vec<ByteDfa>,
    /// Per terminal, per DFA state: bytes to the nearest accepting state.
    to_accept: Vec<Vec<u32>>,
    /// Per rule, per alternative: the height of its shallowest derivation.
    heights: Vec<Vec<u32>>,
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

impl Sampler {
    pub fn new(grammar: &Grammar) -> Result<Sampler, Error> {
        let grammar = grammar.expand_ignore().trimmed()?;
        let dfas = grammar
            .terminals
            .iter()
            .map(|t| Ok(ByteDfa::from_regex(t.regex_text()?)?.minimized()))
            .collect::<Result<Vec<_>, Error>>()?;
        let to_accept = dfas.iter().map(distances).collect();
        let heights = heights(&grammar);
        Ok(Sampler {
            grammar,
            dfas,
            to_accept,
            heights,
        })
    }

    /// One sentence drawn with `seed`, or None when it is longer than `max_len`.
    pub fn sample(&self, seed: u64, options: SampleOptions) -> Option<Vec<u8>> {
        let mut rng = Rng(seed);
        let mut out = Vec::new();
        // (symbol, depth) still to derive, last first
        let mut stack = vec![(Symbol::Rule(self.grammar.start), 0usize)];
        while let Some((symbol, depth)) = stack.pop() {
            match symbol {
                Symbol::Terminal(t) => self.terminal(t as usize, &mut rng, options, &mut out),
                Symbol::Rule(r) => {
                    let alt = self.choose(r as usize, depth >= options.max_depth, &mut rng);
                    let body = &self.grammar.rules[r as usize].alternatives[alt];
                    stack.extend(body.iter().rev().map(|&s| (s, depth + 1)));
                }
            }
            if out.len() > options.max_len {
                return None;
            }
        }
        Some(out)
    }

    fn choose(&self, rule: usize, shallow: bool, rng: &mut Rng) -> usize {
        let heights = &self.heights[rule];
        if !shallow {
            return rng.below(heights.len());
        }
        let least = heights.iter().copied().min().unwrap_or(0);
        let lowest: Vec<usize> = (0..heights.len())
            .filter(|&a| heights[a] == least)
            .collect();
        lowest[rng.below(lowest.len())]
    }

    fn terminal(&self, t: usize, rng: &mut Rng, options: SampleOptions, out: &mut Vec<u8>) {
        let dfa = &self.dfas[t];
        let to_accept = &self.to_accept[t];
        let mut state = 0u32;
        let mut spelled = 0usize;
        loop {
            let accepting = dfa.is_accepting(state);
            if accepting && (spelled >= options.max_terminal || rng.below(3) == 0) {
                return;
            }
            let live: Vec<(u8, u32)> = (0..=255u8)
                .map(|b| (b, dfa.next(state, b)))
                .filter(|&(_, n)| n != DEAD)
                .collect();
            if live.is_empty() {
                return; // accepting with no way on (a live-pruned DFA has no other end)
            }
            let pick = if spelled >= options.max_terminal {
                // the steps that bring acceptance nearest
                let best = live.iter().map(|&(_, n)| to_accept[n as usize]).min();
                let nearest: Vec<_> = live
                    .iter()
                    .filter(|&&(_, n)| Some(to_accept[n as usize]) == best)
                    .collect();
                *nearest[rng.below(nearest.len())]
            } else {
                live[rng.below(live.len())]
            };
            out.push(pick.0);
            state = pick.1;
            spelled += 1;
        }
    }
}

/// Per state of `dfa`, the fewest bytes to an accepting state (u32::MAX for none), by
/// breadth-first search backwards from the accepting states.
fn distances(dfa: &ByteDfa) -> Vec<u32> {
    let n = dfa.num_states();
    let mut back: Vec<Vec<u32>> = vec![Vec::new(); n];
    for s in 0..n as u32 {
        for b in 0..=255u8 {
            let next = dfa.next(s, b);
            if next != DEAD && (next as usize) < n {
                back[next as usize].push(s);
            }
        }
    }
    let mut dist = vec![u32::MAX; n];
    let mut queue: std::collections::VecDeque<u32> = (0..n as u32)
        .filter(|&s| dfa.is_accepting(s))
        .inspect(|&s| dist[s as usize] = 0)
        .collect();
    while let Some(s) = queue.pop_front() {
        for &p in &back[s as usize] {
            if dist[p as usize] == u32::MAX {
                dist[p as usize] = dist[s as usize] + 1;
                queue.push_back(p);
            }
        }
    }
    dist
}

/// Per rule and alternative, the height of its shallowest derivation (terminals have
/// height 0), by iterating to the fixed point; a trimmed grammar gives every rule one.
fn heights(g: &Grammar) -> Vec<Vec<u32>> {
    let mut rule_height = vec![u32::MAX; g.rules.len()];
    loop {
        let mut changed = false;
        for (r, rule) in g.rules.iter().enumerate() {
            for alt in &rule.alternatives {
                let h = alternative_height(alt, &rule_height);
                if h < rule_height[r] {
                    rule_height[r] = h;
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    g.rules
        .iter()
        .map(|rule| {
            rule.alternatives
                .iter()
                .map(|alt| alternative_height(alt, &rule_height))
                .collect()
        })
        .collect()
}

fn alternative_height(alt: &[Symbol], rule_height: &[u32]) -> u32 {
    alt.iter()
        .map(|s| match s {
            Symbol::Terminal(_) => 0,
            Symbol::Rule(r) => rule_height[*r as usize],
        })
        .max()
        .map_or(1, |h| h.saturating_add(1))
}
