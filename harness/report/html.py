"""The HTML of every page tokensieve writes: one page shell with the shared stylesheet and
the one table script, one table helper, and the figure and link blocks the sections are
made of.

Contract: every value that reaches a page goes through `escape` (`harness.embed.html_text`,
quotes included), except `Html` values: markup this module's helpers made from parts they
escaped (`markup` fills a literal template with escaped values), or literal markup written
in this package's source, never data. A link (`link`, `figure`) only ever points at a plain
relative path inside the run directory (`local_href`), optionally with a fragment of
letters, digits, `_` and `-`: no scheme, no absolute path, no `..`; any other path is shown
as text.

Pages are static and offline: inline CSS, one inline script (`SCRIPT`, a literal of this
module, which sorts a table when its header is clicked; it reads cells' `textContent` and
moves rows, never writes markup), nothing fetched. Each page's Content-Security-Policy
allows that script alone (by its SHA-256), inline styles and images of the run directory,
so even markup that escaped escaping could not run. Tables with a header are sortable;
tables longer than `COLLAPSE_ROWS` rows are collapsed in a `<details>` element.
"""

from __future__ import annotations

import base64
import hashlib
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
th.sort { cursor: pointer; } th.sort:hover { background: #e8e8e8; }
th[aria-sort=ascending]::after { content: " \\25B2"; }
th[aria-sort=descending]::after { content: " \\25BC"; }
details { margin: 8px 0 16px; } summary { cursor: pointer; color: #1a4f8b; }
img { max-width: 100%; border: 1px solid #eee; margin: 6px 0; }
.figures { display: flex; flex-wrap: wrap; gap: 0 16px; }
.figures > p { flex: 1 1 560px; max-width: 680px; margin: 4px 0; }
.figures > p.wide { flex-basis: 100%; max-width: none; }
.note { color: #555; font-size: 13px; } code { background: #f4f4f4; padding: 0 3px; }
.status-ok { color: #176d2c; } .status-failed { color: #b00020; }
.verdict { background: #f6f9fc; border: 1px solid #d5e2f0; border-radius: 4px;
           padding: 4px 16px 8px; }
.verdict h3 { margin: 12px 0 4px; font-size: 15px; } .verdict ul { margin: 4px 0; }
:target { background: #fff6d5; }
"""

# The table sorter, the pages' one script: a header click sorts that column's rows,
# numbers by value (units of harness.figures' formats), then text; "-" and empty last.
SCRIPT = """
(function () {
  "use strict";
  var SCALE = {"": 1, ns: 1e-9, "\\u00b5s": 1e-6, us: 1e-6, ms: 1e-3, s: 1, x: 1, "%": 1,
               B: 1, KiB: 1024, MiB: 1048576, GiB: 1073741824, TiB: 1099511627776};
  var LEADING_NUMBER = /^(-?[0-9][0-9,]*(?:\\.[0-9]+)?)[ ]?([^ 0-9(]*)/;
  function sortKey(text) {
    var found = LEADING_NUMBER.exec(text);
    if (found === null || !(found[2] in SCALE)) { return null; }
    return parseFloat(found[1].replace(/,/g, "")) * SCALE[found[2]];
  }
  function order(a, b) {
    if ((a.key === null) !== (b.key === null)) { return a.key === null ? 1 : -1; }
    if (a.key !== null && a.key !== b.key) { return a.key < b.key ? -1 : 1; }
    return a.text < b.text ? -1 : a.text > b.text ? 1 : 0;
  }
  function sortBy(table, column, header) {
    var ascending = header.getAttribute("aria-sort") !== "ascending";
    var heads = table.tHead.rows[0].cells;
    for (var h = 0; h < heads.length; h++) { heads[h].removeAttribute("aria-sort"); }
    header.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    var body = table.tBodies[0];
    var entries = [];
    for (var r = 0; r < body.rows.length; r++) {
      var cell = body.rows[r].cells[column];
      var text = cell ? cell.textContent.trim() : "";
      entries.push({row: body.rows[r], at: r, text: text, blank: text === "" || text === "-",
                    key: sortKey(text)});
    }
    entries.sort(function (a, b) {
      var blanks = (a.blank === b.blank) ? 0 : (a.blank ? 1 : -1);
      if (blanks !== 0) { return blanks; }
      return (ascending ? order(a, b) : order(b, a)) || a.at - b.at;
    });
    for (var e = 0; e < entries.length; e++) { body.appendChild(entries[e].row); }
  }
  var tables = document.querySelectorAll("table");
  for (var t = 0; t < tables.length; t++) {
    var table = tables[t];
    if (!table.tHead || !table.tBodies.length || !table.tHead.textContent.trim()) { continue; }
    var heads = table.tHead.rows[0].cells;
    for (var c = 0; c < heads.length; c++) {
      heads[c].className += " sort";
      heads[c].title = "Sort by this column";
      heads[c].addEventListener("click", sortBy.bind(null, table, c, heads[c]));
    }
  }
})();
"""

_SCRIPT_HASH = base64.b64encode(hashlib.sha256(SCRIPT.encode("utf-8")).digest()).decode()
CSP = (
    f"default-src 'none'; script-src 'sha256-{_SCRIPT_HASH}'; style-src 'unsafe-inline'; "
    "img-src 'self'"
)

# Tables longer than this are collapsed (`<details>`): a click shows them.
COLLAPSE_ROWS = 15

# A run-directory file: segments of letters, digits and `_.+-`, none starting with a dot.
_LOCAL_PATH = re.compile(r"^[A-Za-z0-9_+-][A-Za-z0-9_.+-]*(/[A-Za-z0-9_+-][A-Za-z0-9_.+-]*)*$")
# A fragment (an element's id on a page of the run directory).
_FRAGMENT = re.compile(r"^[A-Za-z0-9_-]+$")


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


def markup(template: str, **values: Any) -> Html:
    """`template` (a literal of this package's source, `str.format` fields) filled with
    `values`, each escaped unless it is `Html`: how a sentence made of data is built."""
    return Html(template.format(**{k: cell_text(v) for k, v in values.items()}))


def local_href(path: Any, fragment: Any = None) -> str | None:
    """`path` escaped for an `href`/`src` if it is a plain relative path inside the run
    directory (e.g. `findings/x.py`), with `#fragment` when given and made of letters,
    digits, `_` and `-`; else None."""
    if not isinstance(path, str) or not _LOCAL_PATH.match(path):
        return None
    if fragment is None:
        return escape(path)
    if not isinstance(fragment, str) or not _FRAGMENT.match(fragment):
        return None
    return escape(f"{path}#{fragment}")


def link(path: Any, text: Any = None, fragment: str | None = None) -> Html:
    """`<a href=path[#fragment]>text</a>` (text defaults to the path); only the escaped
    text when `path` is not a file of the run directory or the fragment is not plain."""
    shown = escape(path if text is None else text)
    href = local_href(path, fragment)
    return Html(shown if href is None else f'<a href="{href}">{shown}</a>')


def anchor_id(text: str, taken: set[str]) -> str:
    """A fragment for `text` (`spec-` and its letters, digits, `_` and `-`, others as
    `-`) not in `taken`, which it joins; the same texts in the same order give the same
    ids."""
    base = "spec-" + re.sub(r"[^A-Za-z0-9_-]+", "-", text).strip("-")
    found, n = base, 1
    while found in taken:
        n += 1
        found = f"{base}-{n}"
    taken.add(found)
    return found


def figure(file: str, caption: str, extra: Html | None = None, wide: bool = False) -> Html:
    """A plot of the run directory with its caption (and `extra`, e.g. a CSV link),
    linked to itself (full size); `wide` gives it a row of its own among `figures`."""
    src = local_href(file)
    text = escape(caption)
    tail = "" if extra is None else f" {extra}"
    klass = ' class="wide"' if wide else ""
    image = f'<img src="{src or ""}" alt="{text}">'
    if src is not None:
        image = f'<a href="{src}">{image}</a>'
    return Html(f'<p{klass}>{image}<br>\n<span class="note">{text}{tail}</span></p>')


def figures(blocks: Sequence[Html]) -> Html:
    """`figure` blocks laid out side by side, wrapping to the page's width."""
    return Html(f'<div class="figures">{"".join(blocks)}</div>')


def table(
    header: Sequence[Any],
    rows: Sequence[Sequence[Any]],
    left: int = 1,
    limit: int | None = None,
    collapse: int | None = COLLAPSE_ROWS,
) -> Html:
    """A table: the first `left` columns left-aligned, the others right; at most `limit`
    rows, with a note saying how many more the CSV holds. The header is a `<thead>` (the
    page's script sorts by a column when its header is clicked, unless every header is
    empty); past `collapse` rows the table sits in a closed `<details>` saying how many
    rows it holds."""
    shown = rows if limit is None else rows[:limit]

    def tag(name: str, i: int, value: Any) -> str:
        klass = ' class="l"' if i < left else ""
        return f"<{name}{klass}>{cell_text(value)}</{name}>"

    head = "".join(tag("th", i, h) for i, h in enumerate(header))
    body = "".join(
        "<tr>" + "".join(tag("td", i, v) for i, v in enumerate(row)) + "</tr>" for row in shown
    )
    out = f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    if collapse is not None and len(shown) > collapse:
        out = f"<details><summary>{len(shown)} rows (click to show)</summary>{out}</details>"
    if limit is not None and len(rows) > limit:
        out += f'<p class="note">{len(rows) - limit} more rows in the CSV.</p>'
    return Html(out)


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
    """The HTML document: its Content-Security-Policy, the shared stylesheet, `title`
    (escaped), the parts (markup made by these helpers), then the table script."""
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        f"<title>{escape(title)}</title><style>{CSS}</style></head><body>"
        + "\n".join(parts)
        + f'<script type="text/javascript">{SCRIPT}</script></body></html>'
    )


def lines(values: Iterable[Any]) -> Html:
    """Lines of text in a `<pre>` block, escaped."""
    return Html(f"<pre>{escape(chr(10).join(map(str, values)))}</pre>")
