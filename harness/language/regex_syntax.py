"""The one scanner of regex syntax, and what is built on it: the features a spec records
(`regex_features`), the ASCII reading of `\\d \\w \\s` some engines declare
(`ascii_classes`), and whether Python's `re` can read a pattern (`python_regex`).

`pieces` splits a pattern into escapes, bracket-class openings and closings, and single
characters, knowing at each piece whether it lies inside a bracket class. Bracket classes
nest as in the reference's dialect (Rust `regex-syntax`: `[a[bc]]`); a `]` right after
`[` or `[^` is a literal. Everything that needs to know "is this `^` an anchor" or "is
this `\\d` inside brackets" asks this one scanner.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

FEATURES = ("unicode-classes", "inline-flags", "lookaround", "backreference", "anchors")


@dataclass(frozen=True)
class Piece:
    """One piece of a pattern: `kind` is "escape" (`text` is the backslash and the next
    character), "open" (`[`, with a `^` and a literal `]` right after it), "close" or
    "char"; `in_class` says whether it lies inside a bracket class (for "open" and
    "close": whether the enclosing context is one)."""

    start: int
    text: str
    kind: str
    in_class: bool


def pieces(pattern: str) -> Iterator[Piece]:
    depth = 0
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            yield Piece(i, pattern[i : i + 2], "escape", depth > 0)
            i += 2
        elif c == "[":
            j = i + 1
            if pattern[j : j + 1] == "^":
                j += 1
            if pattern[j : j + 1] == "]":
                j += 1
            yield Piece(i, pattern[i:j], "open", depth > 0)
            depth += 1
            i = j
        elif c == "]" and depth:
            depth -= 1
            yield Piece(i, c, "close", depth > 0)
            i += 1
        else:
            yield Piece(i, c, "char", depth > 0)
            i += 1


_INLINE_FLAGS = re.compile(r"[aiLmsuxRU-]+[:)]")


def regex_features(pattern: str) -> frozenset[str]:
    """The features of `pattern` an engine may not support.

    Word boundaries `\\b`/`\\B` count as anchors: they are zero-width assertions too, and
    DFA-based engines cannot build Unicode ones. Inside a bracket class, `\\b` is a
    backspace and `\\1` an octal escape, so neither counts there.
    """
    found: set[str] = set()
    for piece in pieces(pattern):
        if piece.kind == "escape":
            e = piece.text[1]
            if e in "dDwWsSpP":
                found.add("unicode-classes")
            elif piece.in_class:
                continue
            elif e in "AzZbB":
                found.add("anchors")
            elif e in "123456789":
                found.add("backreference")
            elif e == "k" and pattern[piece.start + 2 : piece.start + 3] in ("<", "{", "'"):
                found.add("backreference")
        elif piece.kind == "char" and not piece.in_class:
            if piece.text in "^$":
                found.add("anchors")
            elif piece.text == "(" and pattern[piece.start + 1 : piece.start + 2] == "?":
                found |= _group_features(pattern[piece.start + 2 :])
    return frozenset(found)


def _group_features(rest: str) -> set[str]:
    if rest.startswith(("=", "!", "<=", "<!")):
        return {"lookaround"}
    if rest.startswith("P="):
        return {"backreference"}
    if _INLINE_FLAGS.match(rest):
        return {"inline-flags"}
    return set()


# Python-`re`-style class escapes in their ASCII reading (what engines declaring
# `unicode_classes=False` implement).
ASCII_CLASSES = {
    "d": "0-9",
    "w": "0-9A-Za-z_",
    "s": "\\t\\n\\x0B\\x0C\\r ",
}


def ascii_classes(pattern: str, table: Mapping[str, str] | None = None) -> str:
    """`pattern` with `\\d \\w \\s` (and negations) rewritten to their ASCII classes:
    `\\d` alone becomes `[0-9]`, inside brackets `[\\d.]` becomes `[0-9.]`; a negated
    escape inside brackets has no bracket-free spelling and is refused (ValueError).
    `table` overrides the body of a class (an engine's declared `class_table`)."""
    bodies = {**ASCII_CLASSES, **(table or {})}
    out: list[str] = []
    for piece in pieces(pattern):
        letter = piece.text[1] if piece.kind == "escape" else ""
        if letter.lower() not in ASCII_CLASSES or not letter:
            out.append(piece.text)
            continue
        body = bodies[letter.lower()]
        negated = letter.isupper()
        if piece.in_class:
            if negated:
                raise ValueError(f"cannot rewrite \\{letter} inside a bracket class")
            out.append(body)
        else:
            out.append(f"[^{body}]" if negated else f"[{body}]")
    return "".join(out)


def uses_class_escapes(pattern: str) -> bool:
    return any(p.kind == "escape" and p.text[1].lower() in ASCII_CLASSES for p in pieces(pattern))


def python_re_gap(pattern: str) -> str | None:
    """Why Python's `re` cannot compile `pattern` although the Rust dialect can, or None.

    Only gaps a recorded feature explains count: `\\p{..}` classes (unicode-classes) and
    the `\\z` anchor (anchors; Python 3.11 spells it `\\Z`).
    """
    escapes = [p.text[1] for p in pieces(pattern) if p.kind == "escape"]
    if "p" in escapes or "P" in escapes:
        return "unicode-classes: Python's re has no \\p{..} property classes"
    if "z" in escapes:
        return "anchors: Python 3.11's re has no \\z"
    return None


def python_regex(pattern: str) -> re.Pattern[str] | None:
    """`pattern` compiled by Python's `re`, or None where a recorded feature explains why
    it cannot be, or where it nests too deeply for `re`'s recursive parser; any other
    failure is a data error and raises ValueError."""
    try:
        return re.compile(pattern)
    except RecursionError:
        return None
    except re.error as exc:
        if python_re_gap(pattern) is None:
            raise ValueError(f"regex does not compile with Python's re: {exc}") from exc
        return None
