//! Character-level automata: the intersections and complements regexes lack.
//!
//! A regex has no "and" and no "not", yet a string may have to match a `pattern` *and* a
//! length bound, a key must avoid the declared names *and* every `patternProperties`
//! pattern, `not: {pattern: ...}` must be complemented. Such languages go through a
//! [`Dfa`] over decoded characters: [`Dfa::from_rx`] (Thompson NFA, then subset
//! construction over the coarsest partition of the edge sets), [`Dfa::intersect`]
//! (product), [`Dfa::complement`] (completion with a sink, then flipped acceptance),
//! [`Dfa::minimize`] (Moore refinement), and back to a regex by state elimination
//! ([`crate::languages::eliminate`]).
//!
//! Invariants: state 0 is the start; the edges of a state carry pairwise disjoint
//! [`CharSet`]s; a missing edge is a transition to rejection. Builds are bounded
//! ([`MAX_STATES`]) and report a limit rather than run away.

use rustc_hash::FxHashMap as HashMap;

use crate::languages::charset::{partition, partition_keyed, CharSet};
use crate::languages::rx::{Kind, Rx};

/// The most states an NFA or a DFA may reach here.
pub const MAX_STATES: usize = 20_000;

/// A build passed [`MAX_STATES`].
#[derive(Debug)]
pub struct TooLarge;

#[derive(Clone, Debug)]
pub struct Dfa {
    pub edges: Vec<Vec<(CharSet, usize)>>,
    pub accept: Vec<bool>,
}

enum NState {
    Char(CharSet, usize),
    Split(Vec<usize>),
    Match,
}

struct Nfa {
    states: Vec<NState>,
}

impl Nfa {
    fn push(&mut self, s: NState) -> Result<usize, TooLarge> {
        if self.states.len() >= MAX_STATES * 4 {
            return Err(TooLarge);
        }
        self.states.push(s);
        Ok(self.states.len() - 1)
    }

    /// Compiles `x` so that it continues to `next`; returns its entry state.
    fn build(&mut self, x: &Rx, next: usize) -> Result<usize, TooLarge> {
        match &x.kind {
            Kind::Never | Kind::Rule(_) => self.push(NState::Split(Vec::new())),
            Kind::Empty => Ok(next),
            Kind::Lit(s) => {
                let mut at = next;
                for c in s.chars().rev() {
                    at = self.push(NState::Char(CharSet::single(c), at))?;
                }
                Ok(at)
            }
            Kind::Set(s) => self.push(NState::Char(s.clone(), next)),
            Kind::Concat(v) => v.iter().rev().try_fold(next, |at, p| self.build(p, at)),
            Kind::Alt(v) => {
                let entries = v
                    .iter()
                    .map(|p| self.build(p, next))
                    .collect::<Result<_, _>>()?;
                self.push(NState::Split(entries))
            }
            Kind::Repeat(p, lo, hi) => self.build_repeat(p, *lo, *hi, next),
            Kind::Graph(g) => match &g.text {
                Some(text) => self.build(text, next),
                // a counted automaton exists because its product was too large to build
                None => Err(TooLarge),
            },
        }
    }

    fn build_repeat(
        &mut self,
        p: &Rx,
        lo: u32,
        hi: Option<u32>,
        next: usize,
    ) -> Result<usize, TooLarge> {
        let mut at = match hi {
            None => {
                let split = self.push(NState::Split(vec![next]))?;
                let body = self.build(p, split)?;
                if let NState::Split(v) = &mut self.states[split] {
                    v.insert(0, body);
                }
                split
            }
            Some(h) => {
                let mut at = next;
                for _ in lo..h {
                    let body = self.build(p, at)?;
                    at = self.push(NState::Split(vec![body, next]))?;
                }
                at
            }
        };
        for _ in 0..lo {
            at = self.build(p, at)?;
        }
        Ok(at)
    }

    /// The non-split states reachable from `seeds` through splits, sorted. `marks` is
    /// scratch kept between calls (a state is seen when its mark is `marks.1`), so a
    /// closure costs the states it visits, not the whole NFA.
    fn closure(&self, seeds: &[usize], marks: &mut (Vec<u32>, u32)) -> Vec<usize> {
        marks.0.resize(self.states.len(), 0);
        marks.1 += 1;
        let mut stack: Vec<usize> = seeds.to_vec();
        let mut out = Vec::new();
        while let Some(s) = stack.pop() {
            if std::mem::replace(&mut marks.0[s], marks.1) == marks.1 {
                continue;
            }
            match &self.states[s] {
                NState::Split(v) => stack.extend(v.iter().copied()),
                _ => out.push(s),
            }
        }
        out.sort_unstable();
        out
    }
}

impl Dfa {
    /// The DFA of a character-level regex.
    pub fn from_rx(x: &Rx) -> Result<Dfa, TooLarge> {
        let mut nfa = Nfa { states: Vec::new() };
        let fin = nfa.push(NState::Match)?;
        let start = nfa.build(x, fin)?;
        let mut ids: HashMap<Vec<usize>, usize> = HashMap::default();
        let mut marks = (Vec::new(), 0);
        let first = nfa.closure(&[start], &mut marks);
        ids.insert(first.clone(), 0);
        let mut queue = vec![first];
        let mut dfa = Dfa {
            edges: vec![Vec::new()],
            accept: vec![false],
        };
        let mut i = 0;
        while i < queue.len() {
            let cur = queue[i].clone();
            dfa.accept[i] = cur.iter().any(|&s| matches!(nfa.states[s], NState::Match));
            let moves: Vec<(&CharSet, usize)> = cur
                .iter()
                .filter_map(|&s| match &nfa.states[s] {
                    NState::Char(set, t) => Some((set, *t)),
                    _ => None,
                })
                .collect();
            let sets: Vec<&CharSet> = moves.iter().map(|m| m.0).collect();
            for (holders, block) in partition_keyed(&sets) {
                let seeds: Vec<usize> = holders.iter().map(|&m| moves[m].1).collect();
                let target = nfa.closure(&seeds, &mut marks);
                let next = ids.len();
                let id = *ids.entry(target.clone()).or_insert_with(|| {
                    queue.push(target);
                    next
                });
                if id == next {
                    if ids.len() > MAX_STATES {
                        return Err(TooLarge);
                    }
                    dfa.edges.push(Vec::new());
                    dfa.accept.push(false);
                }
                dfa.edges[i].push((block, id));
            }
            i += 1;
        }
        Ok(dfa.merged_edges())
    }

    pub fn len(&self) -> usize {
        self.accept.len()
    }

    /// Joins the edges of each state that share a target.
    fn merged_edges(mut self) -> Dfa {
        for edges in &mut self.edges {
            let mut by_target: Vec<(CharSet, usize)> = Vec::new();
            for (set, t) in edges.drain(..) {
                match by_target.iter_mut().find(|e| e.1 == t) {
                    Some(e) => e.0 = e.0.union(&set),
                    None => by_target.push((set, t)),
                }
            }
            *edges = by_target;
        }
        self
    }

    /// The product automaton: strings both accept.
    pub fn intersect(&self, other: &Dfa) -> Result<Dfa, TooLarge> {
        self.intersect_within(other, MAX_STATES)
    }

    /// [`Dfa::intersect`], refused as soon as the product passes `max` states: a caller
    /// that only wants a small product stops building a large one early.
    pub fn intersect_within(&self, other: &Dfa, max: usize) -> Result<Dfa, TooLarge> {
        let mut ids: HashMap<(usize, usize), usize> = HashMap::from_iter([((0, 0), 0)]);
        let mut queue = vec![(0usize, 0usize)];
        let mut out = Dfa {
            edges: Vec::new(),
            accept: Vec::new(),
        };
        let mut i = 0;
        while i < queue.len() {
            let (a, b) = queue[i];
            out.accept.push(self.accept[a] && other.accept[b]);
            let mut edges = Vec::new();
            for (sa, ta) in &self.edges[a] {
                for (sb, tb) in &other.edges[b] {
                    let s = sa.intersect(sb);
                    if s.is_empty() {
                        continue;
                    }
                    let next = ids.len();
                    let id = *ids.entry((*ta, *tb)).or_insert_with(|| {
                        queue.push((*ta, *tb));
                        next
                    });
                    edges.push((s, id));
                }
            }
            if ids.len() > max {
                return Err(TooLarge);
            }
            out.edges.push(edges);
            i += 1;
        }
        Ok(out.merged_edges())
    }

    /// Strings this DFA rejects.
    pub fn complement(&self) -> Dfa {
        let sink = self.len();
        let mut out = self.clone();
        out.edges.push(vec![(CharSet::full(), sink)]);
        out.accept.push(false);
        for s in 0..sink {
            let used = out.edges[s]
                .iter()
                .fold(CharSet::empty(), |u, e| u.union(&e.0));
            let rest = used.complement();
            if !rest.is_empty() {
                out.edges[s].push((rest, sink));
            }
        }
        out.accept.iter_mut().for_each(|a| *a = !*a);
        out.merged_edges()
    }

    /// The states from which an accepting state is reachable.
    pub fn live(&self) -> Vec<bool> {
        let mut live = self.accept.clone();
        loop {
            let mut changed = false;
            for s in 0..self.len() {
                if !live[s] && self.edges[s].iter().any(|e| live[e.1]) {
                    live[s] = true;
                    changed = true;
                }
            }
            if !changed {
                return live;
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        !self.live()[0]
    }

    /// Whether the DFA accepts `s`.
    pub fn accepts(&self, s: &str) -> bool {
        let mut at = 0;
        for c in s.chars() {
            match self.edges[at].iter().find(|e| e.0.contains(c as u32)) {
                Some(e) => at = e.1,
                None => return false,
            }
        }
        self.accept[at]
    }

    /// The shortest and longest accepted lengths (`None`: unbounded), or `None` if
    /// nothing is accepted.
    pub fn length_range(&self) -> Option<(usize, Option<usize>)> {
        let live = self.live();
        if !live[0] {
            return None;
        }
        let mut dist = vec![usize::MAX; self.len()];
        dist[0] = 0;
        let mut queue = std::collections::VecDeque::from([0usize]);
        let mut shortest = None;
        while let Some(s) = queue.pop_front() {
            if self.accept[s] && shortest.is_none() {
                shortest = Some(dist[s]);
            }
            for &(_, t) in &self.edges[s] {
                if live[t] && dist[t] == usize::MAX {
                    dist[t] = dist[s] + 1;
                    queue.push_back(t);
                }
            }
        }
        let mut longest = vec![None; self.len()];
        let mut on_path = vec![false; self.len()];
        let max = self.longest(0, &live, &mut longest, &mut on_path);
        Some((shortest.unwrap_or(0), max))
    }

    /// The longest accepted suffix from `s` (`None` if a cycle makes it unbounded).
    fn longest(
        &self,
        s: usize,
        live: &[bool],
        memo: &mut [Option<Option<usize>>],
        on_path: &mut [bool],
    ) -> Option<usize> {
        if let Some(m) = memo[s] {
            return m;
        }
        if on_path[s] {
            return None;
        }
        on_path[s] = true;
        let mut best = Some(0);
        for &(_, t) in &self.edges[s] {
            if !live[t] {
                continue;
            }
            best = match (best, self.longest(t, live, memo, on_path)) {
                (Some(b), Some(l)) => Some(b.max(l + 1)),
                _ => None,
            };
        }
        on_path[s] = false;
        memo[s] = Some(best);
        best
    }

    /// The minimal DFA without dead states (Moore's refinement on the trimmed DFA).
    pub fn minimize(&self) -> Dfa {
        let live = self.live();
        let mut class: Vec<usize> = (0..self.len())
            .map(|s| if live[s] { self.accept[s] as usize } else { 2 })
            .collect();
        let atoms = self.atom_edges(&live);
        let mut count = 0;
        loop {
            let mut sigs: HashMap<(usize, Vec<(u32, usize)>), usize> = HashMap::default();
            let next: Vec<usize> = (0..self.len())
                .map(|s| {
                    let sig = atoms[s].iter().map(|&(a, t)| (a, class[t])).collect();
                    let n = sigs.len();
                    *sigs.entry((class[s], sig)).or_insert(n)
                })
                .collect();
            let n = sigs.len();
            class = next;
            if n == count {
                break;
            }
            count = n;
        }
        self.quotient(&class, &live)
    }

    /// Each state's live edges over the *atoms* (the coarsest partition of every edge
    /// set, [`partition`]), sorted by atom: two states step alike iff, atom by atom,
    /// their targets are in one class, so a refinement round compares integers. (It
    /// compared unions of character sets, a round per unit of a length bound: half a
    /// second for a 254-character e-mail address.)
    fn atom_edges(&self, live: &[bool]) -> Vec<Vec<(u32, usize)>> {
        let mut distinct: Vec<&CharSet> = self.edges.iter().flatten().map(|e| &e.0).collect();
        distinct.sort();
        distinct.dedup();
        let atoms = partition(&distinct);
        let firsts: Vec<u32> = atoms.iter().map(|a| a.ranges()[0].0).collect();
        let mut of_set: HashMap<&CharSet, Vec<u32>> = HashMap::default();
        for set in distinct {
            let inside = (0..atoms.len() as u32).filter(|&a| set.contains(firsts[a as usize]));
            of_set.insert(set, inside.collect());
        }
        (0..self.len())
            .map(|s| {
                let mut v: Vec<(u32, usize)> = Vec::new();
                for (set, t) in self.edges[s].iter().filter(|e| live[e.1]) {
                    v.extend(of_set[set].iter().map(|&a| (a, *t)));
                }
                v.sort_unstable();
                v
            })
            .collect()
    }

    fn quotient(&self, class: &[usize], live: &[bool]) -> Dfa {
        let mut renum: HashMap<usize, usize> = HashMap::from_iter([(class[0], 0)]);
        let mut order = vec![0usize];
        let mut i = 0;
        let mut out = Dfa {
            edges: Vec::new(),
            accept: Vec::new(),
        };
        while i < order.len() {
            let s = order[i];
            out.accept.push(self.accept[s] && live[s]);
            let mut edges = Vec::new();
            for (set, t) in self.edges[s].iter().filter(|e| live[e.1]) {
                let n = renum.len();
                let id = *renum.entry(class[*t]).or_insert_with(|| {
                    order.push(*t);
                    n
                });
                edges.push((set.clone(), id));
            }
            out.edges.push(edges);
            i += 1;
        }
        out.merged_edges()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::languages::rx;

    /// After `a` the letters are two edges (`[a-m]`, `[n-z]`), after `b` one (`[a-z]`),
    /// to the same place: minimizing compares them atom by atom and joins them.
    #[test]
    fn minimizing_joins_states_whose_edges_split_the_alphabet_differently() {
        let set = |a: char, b: char| CharSet::range(a as u32, b as u32);
        let d = Dfa {
            edges: vec![
                vec![(set('a', 'a'), 1), (set('b', 'b'), 2)],
                vec![(set('a', 'm'), 3), (set('n', 'z'), 3)],
                vec![(set('a', 'z'), 3)],
                vec![],
            ],
            accept: vec![false, false, false, true],
        };
        let m = d.minimize();
        assert_eq!(m.len(), 3, "start, one letter read, done");
        for s in ["az", "an", "bq"] {
            assert!(m.accepts(s), "{s}");
        }
        assert!(!m.accepts("cq") && !m.accepts("a") && !m.accepts("a1"));
    }

    fn chars(s: &str) -> Rx {
        rx::set(CharSet::from_ranges(
            s.chars().map(|c| (c as u32, c as u32)).collect(),
        ))
    }

    #[test]
    fn product_and_complement_are_boolean_algebra() {
        let ab = Dfa::from_rx(&rx::star(chars("ab"))).unwrap();
        let len2 = Dfa::from_rx(&rx::repeat(rx::set(CharSet::full()), 2, Some(2))).unwrap();
        let both = ab.intersect(&len2).unwrap();
        assert!(both.accepts("ab") && !both.accepts("abb") && !both.accepts("ac"));
        let not_ab = ab.complement();
        assert!(not_ab.accepts("ac") && !not_ab.accepts("abab") && not_ab.accepts("é"));
        assert!(ab.intersect(&not_ab).unwrap().is_empty());
    }

    #[test]
    fn minimization_keeps_the_language() {
        let x = rx::alt([
            rx::lit("abc"),
            rx::lit("abd"),
            rx::concat([rx::lit("ab"), chars("cd")]),
        ]);
        let d = Dfa::from_rx(&x).unwrap();
        let m = d.minimize();
        assert_eq!(m.len(), 4);
        for s in ["abc", "abd", "ab", "abe", ""] {
            assert_eq!(d.accepts(s), m.accepts(s), "{s}");
        }
    }
}
