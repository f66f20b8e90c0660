"""A regex as a syntax tree, for shrinking it: parse, list smaller variants, print back.

The regex minimizer (`harness.diff.shrink.regex_shrink`) needs to cut a 3,000-character pattern
down to the few pieces a bug needs while keeping it a pattern. It does not need to know
what the pieces mean (every candidate is judged by the reference and the engine), only
where they begin and end. So this parser keeps every leaf verbatim (a character, an
escape, a bracket class, `.`, an anchor, a flag group `(?i)`) and knows just four
shapes above them: alternation, concatenation, group and repetition. `text(parse(p))`
is `p` for every pattern it reads; a pattern it cannot read (an unbalanced group, say)
raises ValueError and is not shrunk.

The dialect is the reference's (Rust `regex-syntax`): `\\x{..} \\u{..} \\p{..}` escapes,
nested bracket classes, `(?P<name>..)`, `(?<name>..)`, `(?flags:..)` and `(?flags)`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

# Escapes whose argument runs past the letter: \x41, \x{41}, \u0041, \U{..}, \pL, \p{Greek}
_ARG_LEN = {"x": 2, "u": 4, "U": 8, "p": 1, "P": 1}


@dataclass(frozen=True)
class Node:
    """A tree node. `kind` is "alt" (children: branches), "cat" (children: items),
    "group" (`head` the opening text, one child), "repeat" (`head` the operator text,
    one child) or "leaf" (`head` the verbatim text)."""

    kind: str
    head: str = ""
    children: tuple[Node, ...] = ()


def leaf(text: str) -> Node:
    return Node("leaf", text)


def text(node: Node) -> str:
    """The pattern a tree spells (the inverse of `parse`)."""
    if node.kind == "leaf":
        return node.head
    if node.kind == "alt":
        return "|".join(text(c) for c in node.children)
    if node.kind == "cat":
        return "".join(text(c) for c in node.children)
    if node.kind == "group":
        return f"{node.head}{text(node.children[0])})"
    return f"{text(node.children[0])}{node.head}"


def size(node: Node) -> int:
    return len(text(node))


def weight(node: Node) -> tuple[int, int]:
    """What shrinking lowers: the pattern's length, then the sum of its repetition counts
    (`\\d{4}` to `\\d{2}` keeps the length but needs fewer tokens)."""
    return (size(node), _counts(node))


def _counts(node: Node) -> int:
    own = 0
    if node.kind == "repeat" and node.head.startswith("{"):
        own = sum(int(n) for n in node.head.strip("{}?").replace(" ", "").split(",") if n)
    return own + sum(_counts(c) for c in node.children)


def _escape_end(p: str, i: int) -> int:
    """The index just past the escape starting at p[i] (a backslash)."""
    if i + 1 >= len(p):
        raise ValueError("pattern ends in a backslash")
    letter = p[i + 1]
    j = i + 2
    if letter in _ARG_LEN:
        if p[j : j + 1] == "{":
            close = p.find("}", j)
            if close < 0:
                raise ValueError("unclosed escape brace")
            return close + 1
        return min(len(p), j + _ARG_LEN[letter])
    return j


def _class_end(p: str, i: int) -> int:
    """The index just past the bracket class opening at p[i], nested classes included."""
    depth = 0
    j = i
    while j < len(p):
        c = p[j]
        if c == "\\":
            j = _escape_end(p, j)
            continue
        if c == "[":
            j += 1
            if p[j : j + 1] == "^":
                j += 1
            if p[j : j + 1] == "]":
                j += 1  # a literal `]` right after the opening
            depth += 1
            continue
        if c == "]":
            depth -= 1
            j += 1
            if depth == 0:
                return j
            continue
        j += 1
    raise ValueError("unclosed bracket class")


def _group_head(p: str, i: int) -> tuple[str, bool]:
    """The opening text of the group at p[i] and whether it is a flag setting `(?i)`
    (a leaf) rather than a group."""
    if not p.startswith("(?", i):
        return "(", False
    j = i + 2
    if p.startswith(("P<", "<"), j) and not p.startswith(("<=", "<!"), j):
        close = p.find(">", j)
        if close < 0:
            raise ValueError("unclosed group name")
        return p[i : close + 1], False
    k = j
    while k < len(p) and (p[k].isalpha() or p[k] == "-"):
        k += 1
    if p[k : k + 1] == ":":
        return p[i : k + 1], False
    if p[k : k + 1] == ")":
        return p[i : k + 1], True
    raise ValueError(f"unknown group syntax at {i}")


class _Parser:
    def __init__(self, pattern: str) -> None:
        self.p = pattern
        self.i = 0

    def alt(self) -> Node:
        branches = [self.cat()]
        while self.i < len(self.p) and self.p[self.i] == "|":
            self.i += 1
            branches.append(self.cat())
        return branches[0] if len(branches) == 1 else Node("alt", children=tuple(branches))

    def cat(self) -> Node:
        items: list[Node] = []
        while self.i < len(self.p) and self.p[self.i] not in "|)":
            item = self.atom()
            op = self.quantifier()
            while op:
                item = Node("repeat", op, (item,))
                op = self.quantifier()
            items.append(item)
        return items[0] if len(items) == 1 else Node("cat", children=tuple(items))

    def atom(self) -> Node:
        p, i = self.p, self.i
        c = p[i]
        if c == "\\":
            self.i = _escape_end(p, i)
            return leaf(p[i : self.i])
        if c == "[":
            self.i = _class_end(p, i)
            return leaf(p[i : self.i])
        if c == "(":
            head, is_flags = _group_head(p, i)
            self.i = i + len(head)
            if is_flags:
                return leaf(head)
            child = self.alt()
            if self.i >= len(p) or p[self.i] != ")":
                raise ValueError("unclosed group")
            self.i += 1
            return Node("group", head, (child,))
        if c in "*+?{" and not (c == "{" and not _counted(p, i)):
            raise ValueError(f"repetition operator {c!r} with nothing to repeat")
        self.i = i + 1
        return leaf(c)

    def quantifier(self) -> str:
        p, i = self.p, self.i
        if i >= len(p):
            return ""
        if p[i] in "*+?":
            end = i + 1
        elif p[i] == "{" and _counted(p, i):
            end = p.index("}", i) + 1
        else:
            return ""
        if p[end : end + 1] == "?":
            end += 1  # lazy
        self.i = end
        return p[i:end]


def _counted(p: str, i: int) -> bool:
    """Whether `{` at p[i] opens a counted repetition `{n}`, `{n,}` or `{n,m}`."""
    close = p.find("}", i)
    if close < 0:
        return False
    body = p[i + 1 : close].replace(" ", "")
    lo, _, hi = body.partition(",")
    return lo.isdigit() and (hi == "" or hi.isdigit())


def parse(pattern: str) -> Node:
    """The tree of `pattern`; ValueError when it is not one this parser reads."""
    parser = _Parser(pattern)
    tree = parser.alt()
    if parser.i != len(pattern):
        raise ValueError(f"unbalanced `)` at {parser.i}")
    if text(tree) != pattern:  # never expected: the parser keeps every character
        raise ValueError("pattern does not print back unchanged")
    return tree


# --- smaller variants ------------------------------------------------------------------


def _smaller_counts(op: str) -> list[str]:
    """Smaller counted repetitions for `{n,m}` (e.g. `{3,4}` -> `{1,2}`, `{3}`)."""
    lazy = "?" if op.endswith("?") and op != "?" else ""
    body = op[1:-1] if not lazy else op[1:-2]
    if not op.startswith("{"):
        return []
    lo_text, comma, hi_text = body.replace(" ", "").partition(",")
    lo = int(lo_text)
    hi = int(hi_text) if hi_text else None
    out = []
    if comma and hi is not None and hi != lo:
        out.append(f"{{{lo}}}{lazy}")
    if lo > 1:
        half_hi = "" if hi is None else f",{max(lo // 2, (hi or lo) // 2)}"
        out.append(f"{{{lo // 2}{half_hi if comma else ''}}}{lazy}")
    elif hi is not None and hi > 1:
        out.append(f"{{{lo},{max(1, hi // 2)}}}{lazy}")
    return [o for o in out if o != op]


def _variants_here(node: Node) -> Iterator[Node]:
    """Replacements of `node` itself, roughly largest cut first."""
    if node.kind in ("alt", "cat"):
        items = node.children
        n = len(items)
        if node.kind == "alt":
            yield from items  # one branch alone
        chunk = n // 2
        while chunk >= 1:
            for start in range(0, n, chunk):
                rest = items[:start] + items[start + chunk :]
                if rest:
                    yield rest[0] if len(rest) == 1 else replace(node, children=rest)
            chunk //= 2
    elif node.kind == "group":
        yield node.children[0]
    elif node.kind == "repeat":
        yield node.children[0]
        for op in _smaller_counts(node.head):
            yield replace(node, head=op)


def variants(node: Node) -> Iterator[Node]:
    """Every tree one cut away from `node`: cuts at the root first, then in each child
    (each yielded tree is the whole tree with that one cut)."""
    yield from _variants_here(node)
    for k, child in enumerate(node.children):
        for smaller in variants(child):
            children = (*node.children[:k], smaller, *node.children[k + 1 :])
            yield replace(node, children=children)


def stacked_repeat(node: Node) -> bool:
    """Whether a repetition applies straight to another (`a{2}{3}`, `a*?` read as two):
    valid for the reference, but hard to read and refused by Python's `re`."""
    if node.kind == "repeat" and node.children[0].kind == "repeat":
        return True
    return any(stacked_repeat(c) for c in node.children)
