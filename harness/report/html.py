"""The HTML of every page tokensieve writes: one page shell with the shared stylesheet, one
table helper, and the figure and link blocks the sections are made of.

Contract: every value that reaches a page goes through `escape` (`harness.embed.html_text`,
quotes included), except `Html` values: markup this module's helpers made from parts they
escaped, or literal markup written in this package's source, never data. A link (`link`,
`figure`) only ever points at a plain relative path inside the run directory
(`local_href`): no scheme, no absolute path, no `..`; any other path is shown as text.
Pages are static and offline: inline CSS, no script, nothing fetched.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from harness.embed import html_text

CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px auto; max-width: 1280px;
       color: #222; padding: 0 16px; }
h1 { font-size: 22px; } h2 { font-size: 18px; margin-top: 32px;
     border-bottom: 1px solid #ddd; padding-bottom: 4px; }
table { border-collapse: collapse; margin: 8px 0 16px; font-size: 13px; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: right; vertical-align: top; }
th { background: #f4f4f4; } td.l, th.l { text-align: left; }
tr:nth-child(even) td { background: #fafafa; }
img { max-width: 100%; border: 1px solid #eee; margin: 6px 0; }
.note { color: #555; font-size: 13px; } code { background: #f4f4f4; padding: 0 3px; }
.status-ok { color: #176d2c; } .status-failed { color: #b00020; }
"""

# A run-directory file: segments of letters, digits and `_.+-`, none starting with a dot.
_LOCAL_PATH = re.compile(r"^[A-Za-z0-9_+-][A-Za-z0-9_.+-]*(/[A-Za-z0-9_+-][A-Za-z0-9_.+-]*)*$")


class Html(str):
    """Markup already escaped, put into a page as it is: made by the helpers here, or a
    literal of this package's source; never built from data without `escape`."""

    __slots__ = ()


def escape(value: Any) -> str:
    """`value` (None as empty) as text inside an element or a quoted attribute."""
    return html_text(value)


def cell_text(value: Any) -> str:
    """A table cell's content: `Html` as it is, anything else escaped."""
    return value if isinstance(value, Html) else escape(value)


def local_href(path: Any) -> str | None:
    """`path` escaped for an `href`/`src` if it is a plain relative path inside the run
    directory (e.g. `findings/x.py`), else None."""
    if not isinstance(path, str) or not _LOCAL_PATH.match(path):
        return None
    return escape(path)


def link(path: Any, text: Any = None) -> Html:
    """`<a href=path>text</a>` (text defaults to the path); only the escaped text when
    `path` is not a file of the run directory."""
    shown = escape(path if text is None else text)
    href = local_href(path)
    return Html(shown if href is None else f'<a href="{href}">{shown}</a>')


def figure(file: str, caption: str, extra: Html | None = None) -> Html:
    """A plot of the run directory with its caption (and `extra`, e.g. a CSV link)."""
    src = local_href(file) or ""
    text = escape(caption)
    tail = "" if extra is None else f" {extra}"
    return Html(
        f'<p><img src="{src}" alt="{text}"><br>\n<span class="note">{text}{tail}</span></p>'
    )


def table(
    header: Sequence[Any],
    rows: Sequence[Sequence[Any]],
    left: int = 1,
    limit: int | None = None,
) -> Html:
    """A table: the first `left` columns left-aligned, the others right; at most `limit`
    rows, with a note saying how many more the CSV holds."""
    shown = rows if limit is None else rows[:limit]

    def tag(name: str, i: int, value: Any) -> str:
        klass = ' class="l"' if i < left else ""
        return f"<{name}{klass}>{cell_text(value)}</{name}>"

    head = "".join(tag("th", i, h) for i, h in enumerate(header))
    body = "".join(
        "<tr>" + "".join(tag("td", i, v) for i, v in enumerate(row)) + "</tr>" for row in shown
    )
    more = ""
    if limit is not None and len(rows) > limit:
        more = f'<p class="note">{len(rows) - limit} more rows in the CSV.</p>'
    return Html(f"<table><tr>{head}</tr>{body}</table>{more}")


def plain(value: Any) -> str:
    """A JSON value as the diff pages show it: a list joined with commas, else `str`."""
    return ", ".join(map(str, value)) if isinstance(value, list) else str(value)


def one_decimal(value: Any) -> Any:
    """A JSON value as the jump-forward pages show it: floats with one decimal, None as
    empty, anything else as it is."""
    return f"{value:.1f}" if isinstance(value, float) else value


def records(
    rows: Sequence[Mapping[str, Any]],
    *,
    show: Callable[[Any], Any] = plain,
    link_key: str | None = None,
    left: int | None = None,
) -> Html:
    """A table of JSON records (the rows `diff` and `jumpforward` dump): one column per
    key, in the order keys first appear, a record's missing key as an empty cell; each
    value through `show`, the `link_key` column linked to its run-directory file.
    Left-aligned throughout unless `left` says how many columns; "(none)" when empty."""
    if not rows:
        return Html("<p>(none)</p>")
    header = list(dict.fromkeys(key for row in rows for key in row))

    def value(row: Mapping[str, Any], key: str) -> Any:
        if key not in row:
            return ""
        if key == link_key and row[key]:
            return link(row[key], show(row[key]))
        return show(row[key])

    body = [[value(row, key) for key in header] for row in rows]
    return table(header, body, left=len(header) if left is None else left)


def page(title: str, parts: Iterable[str]) -> str:
    """The HTML document: the shared stylesheet, `title` (escaped) and the parts, which
    are markup made by these helpers."""
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title><style>{CSS}</style></head><body>"
        + "\n".join(parts)
        + "</body></html>"
    )


def lines(values: Iterable[Any]) -> Html:
    """Lines of text in a `<pre>` block, escaped."""
    return Html(f"<pre>{escape(chr(10).join(map(str, values)))}</pre>")
