"""Leftmost-first matching of a regex, as a model for the `leftmost-first` signature.

The reference allows a token when *some* reading of the regex continues; a DFA built
for leftmost-first search (regex-automata's default, which outlines-core uses) instead
abandons every lower-priority branch once a higher-priority one has matched, and reports
a match one byte late. Both show up as tokens an engine drops: `(a|ab)` never allows
`ab`; after `3333333`, `[2-9]\\d{9}|3\\d{6}` refuses `3`. This module runs that
semantics (a Pike VM whose threads are kept in priority order and cut at the first
match), so the signature is a test that can fail: the engine's mask must be exactly the
model's.

Only the regex's shape is interpreted here (`harness.language.regex_tree`); what a single
character class means is asked of the reference's byte DFA (`tokensdfa.ByteDfa` of that
class alone, under the flags in force), so Unicode classes need no second
implementation. Patterns with `\\b`, `\\B`, multi-line anchors, verbose or swap-greed
flags get no model (`build` returns None) and so never this signature.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.diff.judge.view import ByteDfa, StateView
from harness.language import reference, regex_tree
from harness.language.regex_tree import Node

MAX_PROGRAM = 4000  # instructions; a larger unrolled regex gets no model
MAX_PATTERN = 20000  # characters; a larger regex is not even parsed
MAX_TOKENS_CHECKED = 4000
_ASSERTIONS = {"^": "start", "\\A": "start", "$": "end", "\\z": "end"}
_UNSUPPORTED_LEAVES = ("\\b", "\\B", "\\Z")
_UNSUPPORTED_FLAGS = set("xUmR")

Thread = tuple[int, int]  # (pc, byte-DFA state inside the current character; -1 if none)


@dataclass
class _Program:
    ops: list[tuple[Any, ...]]
    dfas: list[ByteDfa]


class _Compiler:
    def __init__(self) -> None:
        self.ops: list[tuple[Any, ...]] = []
        self.dfas: list[ByteDfa] = []
        self._dfa_ids: dict[str, int] = {}

    def emit(self, op: tuple[Any, ...]) -> int:
        if len(self.ops) >= MAX_PROGRAM:
            raise ValueError("regex too large for the model")
        self.ops.append(op)
        return len(self.ops) - 1

    def atom(self, text: str, flags: tuple[str, ...]) -> int:
        pattern = text
        for f in reversed(flags):
            pattern = f"(?{f}:{pattern})"
        found = self._dfa_ids.get(pattern)
        if found is None:
            self.dfas.append(reference.tokensdfa().ByteDfa(pattern))
            found = self._dfa_ids[pattern] = len(self.dfas) - 1
        return found

    def node(self, n: Node, nxt: int, flags: tuple[str, ...]) -> int:
        """The entry pc of `n` followed by `nxt` (compiled back to front)."""
        if n.kind == "leaf":
            return self.leaf(n.head, nxt, flags)
        if n.kind == "cat":
            entry = nxt
            scoped = self.flag_scopes(n.children, flags)
            for child, child_flags in reversed(scoped):
                entry = self.node(child, entry, child_flags)
            return entry
        if n.kind == "alt":
            entries = [self.node(b, nxt, flags) for b in n.children]
            entry = entries[-1]
            for e in reversed(entries[:-1]):
                entry = self.emit(("split", e, entry))
            return entry
        if n.kind == "group":
            inner = flags
            head = n.head
            if head.startswith("(?") and head.endswith(":") and not head.startswith("(?P<"):
                inner = (*flags, self.check_flags(head[2:-1]))
            return self.node(n.children[0], nxt, inner)
        return self.repeat(n, nxt, flags)

    def flag_scopes(
        self, items: tuple[Node, ...], flags: tuple[str, ...]
    ) -> list[tuple[Node, tuple[str, ...]]]:
        out = []
        for item in items:
            if item.kind == "leaf" and item.head.startswith("(?") and item.head.endswith(")"):
                flags = (*flags, self.check_flags(item.head[2:-1]))
                continue
            out.append((item, flags))
        return out

    @staticmethod
    def check_flags(text: str) -> str:
        if _UNSUPPORTED_FLAGS & set(text):
            raise ValueError(f"flags {text!r} are not modelled")
        return text

    def leaf(self, text: str, nxt: int, flags: tuple[str, ...]) -> int:
        if text in _ASSERTIONS:
            return self.emit((_ASSERTIONS[text], nxt))
        if text in _UNSUPPORTED_LEAVES or text.startswith("(?"):
            raise ValueError(f"{text!r} is not modelled")
        return self.emit(("char", self.atom(text, flags), nxt))

    def repeat(self, n: Node, nxt: int, flags: tuple[str, ...]) -> int:
        op, child = n.head, n.children[0]
        lazy = op.endswith("?") and op != "?"
        base = op[:-1] if lazy else op
        if base in ("*", "+"):
            loop = self.emit(("split", -1, -1))
            body = self.node(child, loop, flags)
            self.ops[loop] = ("split", nxt, body) if lazy else ("split", body, nxt)
            if base == "+" or min_length(child) > 0:
                return loop if base == "*" else body
            # x* for an x that can match nothing is (x+)? with one copy of x, as
            # regex-automata compiles it (a single loop would put the empty iteration's
            # match after the other branches: rust-lang/regex#779)
            return self.emit(("split", nxt, body) if lazy else ("split", body, nxt))
        if base == "?":
            body = self.node(child, nxt, flags)
            return self.emit(("split", nxt, body) if lazy else ("split", body, nxt))
        lo_text, comma, hi_text = base[1:-1].replace(" ", "").partition(",")
        lo = int(lo_text)
        entry = nxt
        if comma and not hi_text:
            entry = self.repeat(Node("repeat", "*?" if lazy else "*", (child,)), nxt, flags)
        else:
            for _ in range((int(hi_text) if comma else lo) - lo):
                body = self.node(child, entry, flags)
                entry = self.emit(("split", nxt, body) if lazy else ("split", body, nxt))
        for _ in range(lo):
            entry = self.node(child, entry, flags)
        return entry


def min_length(n: Node) -> int:
    """The fewest characters `n` can match (0: it can match the empty string)."""
    if n.kind == "leaf":
        return 0 if n.head in _ASSERTIONS or n.head.startswith("(?") else 1
    if n.kind == "cat":
        return sum(min_length(c) for c in n.children)
    if n.kind == "alt":
        return min(min_length(c) for c in n.children)
    if n.kind == "group":
        return min_length(n.children[0])
    base = n.head[:-1] if len(n.head) > 1 and n.head.endswith("?") else n.head
    if base in ("*", "?"):
        return 0
    if base == "+":
        return min_length(n.children[0])
    return int(base[1:-1].split(",")[0].strip() or 0) * min_length(n.children[0])


class LeftmostFirst:
    """One regex's leftmost-first semantics over bytes."""

    def __init__(self, program: _Program, entry: int) -> None:
        self.ops = program.ops
        self.dfas = program.dfas
        self.entry = entry
        self._after: dict[bytes, tuple[list[Thread], bool] | None] = {}

    @staticmethod
    def build(regex: str) -> LeftmostFirst | None:
        """The model of `regex`, or None where this module does not model the pattern."""
        if len(regex) > MAX_PATTERN:
            return None
        try:
            tree = regex_tree.parse(regex)
            compiler = _Compiler()
            match = compiler.emit(("match",))
            entry = compiler.node(tree, match, ())
        except (ValueError, RecursionError):
            return None
        return LeftmostFirst(_Program(compiler.ops, compiler.dfas), entry)

    def _closure(self, pcs: list[int], at_start: bool) -> list[Thread]:
        out: list[Thread] = []
        seen: set[int] = set()
        stack = list(reversed(pcs))
        while stack:
            pc = stack.pop()
            if pc in seen:
                continue
            seen.add(pc)
            op = self.ops[pc]
            if op[0] == "split":
                stack.extend((op[2], op[1]))
            elif op[0] == "start":
                if at_start:
                    stack.append(op[1])
            elif op[0] == "char":
                out.append((pc, self.dfas[op[1]].initial_state))
            else:  # "match" or "end": wait here
                out.append((pc, -1))
        return out

    def step(self, threads: list[Thread], byte: int) -> tuple[list[Thread], bool]:
        """The threads after `byte`, and whether a match stood before it (which cuts
        every lower-priority thread)."""
        out: list[Thread] = []
        seen: set[Thread] = set()
        for pc, state in threads:
            op = self.ops[pc]
            if op[0] == "match":
                return out, True
            if op[0] != "char":
                continue  # an end assertion before more input: this thread dies
            dfa = self.dfas[op[1]]
            nxt = dfa.walk(state, bytes([byte]))
            if nxt is None:
                continue
            found = self._closure([op[2]], False) if dfa.is_accepting(nxt) else [(pc, nxt)]
            for thread in found:
                if thread not in seen:
                    seen.add(thread)
                    out.append(thread)
        return out, False

    def at_end(self, threads: list[Thread]) -> bool:
        """Whether the text read so far is a leftmost-first full match."""
        for pc, _ in threads:
            op = self.ops[pc]
            if op[0] == "match":
                return True
            if op[0] == "end" and any(
                self.ops[p][0] == "match" for p, _ in self._closure([op[1]], False)
            ):
                return True
        return False

    def after(self, data: bytes) -> tuple[list[Thread], bool] | None:
        """(threads after `data`, whether a match stood before its last byte), or None
        when leftmost-first matching has abandoned every thread."""
        if data in self._after:
            return self._after[data]
        threads = self._closure([self.entry], True)
        matched = False
        for byte in data:
            threads, matched = self.step(threads, byte)
            if not threads:
                self._after[data] = None
                return None
        found = (threads, matched)
        if len(self._after) < 64:
            self._after[data] = found
        return found

    def allows(self, prefix: bytes, token: bytes) -> bool:
        """Whether a leftmost-first DFA that reports matches one byte late keeps `token`
        after `prefix`: its threads survive the token, and unless the text with it is a
        full match, no match stands just before the token's last byte."""
        start = self.after(prefix)
        if start is None or not token:
            return False
        threads, matched = start
        for byte in token:
            threads, matched = self.step(threads, byte)
            if not threads:
                return False
        return not matched or self.at_end(threads)

    def explains(self, view: StateView) -> str | None:
        """The `leftmost-first` signature: the engine's mask and accepting status are
        this model's (dropped tokens, and a sample of the kept ones, checked)."""
        start = self.after(view.prefix)
        if start is None or view.accepting_actual != self.at_end(start[0]):
            return None
        tokens = view.tokens
        dropped = sorted(view.reference_only)[:MAX_TOKENS_CHECKED]
        if any(self.allows(view.prefix, tokens[t]) for t in dropped):
            return None
        kept = sorted(view.actual)[:MAX_TOKENS_CHECKED]
        if not all(self.allows(view.prefix, tokens[t]) for t in kept):
            return None
        return (
            f"mask and accepting status are leftmost-first matching's: the "
            f"{len(view.reference_only)} dropped tokens continue only a lower-priority "
            "branch after a higher one matched"
        )
