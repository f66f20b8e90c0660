"""How data enters the artifacts tokensieve writes: Python scripts, Markdown, HTML, CSV.

Everything a run writes quotes text that is not ours: regexes and schemas from a corpus
(MaskBench files arrive from `--corpus-dir`), instances, engines' error messages, run
names. None of it may ever become code or markup. The rules, one function each:

- Python source: data only as a literal built by `repr()` (`literal`), in a code
  position; never inside a docstring. Where a human-readable note helps, `comment` makes
  one `# ` line with every character that is not printable (all line breaks: `\\n`,
  `\\r`, `\\x0b`, `\\x0c`, `\\x1c-\\x1e`, `\\x85`, U+2028, U+2029; NUL; lone surrogates)
  written as an escape, so no payload can end the comment.
- Markdown: `markdown_text` escapes `<`, `>` and `&` (so nothing is rendered as HTML) and
  the characters that start Markdown syntax at a line start, on a single line.
- HTML: `html.escape` of every string (`html_text`), quotes included.
- JSON files: `write_json` writes ASCII escapes, since text may hold lone surrogates,
  which UTF-8 cannot encode.
- CSV: `csv_cell` prefixes a `'` to a text cell a spreadsheet would run as a formula.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any


def escape_unprintable(text: str) -> str:
    """`text` with every non-printable character (line breaks, NUL, lone surrogates,
    format characters) replaced by its Python escape, so the result is one line of
    printable characters that encodes as UTF-8."""
    out = []
    for c in text:
        if c.isprintable():
            out.append(c)
        else:
            out.append(repr(c)[1:-1])
    return "".join(out)


def comment(text: str) -> str:
    """A Python comment line (`# ...`) safe for any `text`."""
    return "# " + escape_unprintable(text)


def literal(value: Any) -> str:
    """A Python literal for `value` (str, bytes, numbers, and lists, tuples and dicts of
    them); `repr` quotes and escapes every character that could end the literal."""
    return repr(value)


def markdown_text(text: str) -> str:
    """`text` as one line of Markdown that renders as the same plain text."""
    flat = escape_unprintable(text)
    escaped = html.escape(flat, quote=False)
    # Backslash-escape what could start structure or a link in Markdown.
    for c in "\\`*_[]#|":
        escaped = escaped.replace(c, "\\" + c)
    return escaped


def html_text(value: Any) -> str:
    """`value` as text inside an HTML element or a quoted attribute."""
    return html.escape("" if value is None else str(value), quote=True)


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\n")


def csv_cell(value: Any) -> Any:
    """A CSV cell: None as empty; a text that a spreadsheet would read as a formula gets a
    leading `'`. Numbers stay numbers (a negative number is not a formula)."""
    if value is None:
        return ""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def write_json(path: Path, value: Any) -> None:
    """`value` as indented JSON at `path`, every non-ASCII character escaped (text may hold
    lone surrogates, which UTF-8 cannot encode); what it cannot serialize, as `str`."""
    path.write_text(json.dumps(value, indent=1, default=str), encoding="ascii")
