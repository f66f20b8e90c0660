"""Make a published asv dashboard self-contained: the JavaScript and CSS libraries asv's
pages load from CDNs are copied from Debian packages into `HTML_DIR/offline/`, and the
pages' `<script src>` / `<link href>` tags are pointed at those copies, so the dashboard
renders on a machine without internet. asv itself is left as it is: this runs after
`asv publish`, on what it wrote.

asv 0.6.6's `index.html` loads (`LIBRARIES`, with the package each copy comes from):

| library | asv asks for | copied from (Debian package) |
|---|---|---|
| jQuery | 3.3.1 | `libjs-jquery` (3.6) |
| flot + time, selection, categories | 0.8.3 | `libghc-js-flot-data` (0.8.3, plain JS) |
| stupidtable | 1.0.1 | `libjs-jquery-stupidtable` (1.1) |
| blueimp-md5 | 2.19.0 | `node-blueimp-md5` (2.19) |
| Bootstrap JS and CSS | 3.1.1 | `libjs-bootstrap` (3.4, its glyphicon fonts too) |
| flot-orderbars | 1.0.0 | no package: `ORDER_BARS`, a flot plugin of ours for the same option |

(`libjs-jquery-flot` is flot 4, whose plugin interface asv's bundled axis-labels plugin
predates.) The Subresource Integrity attributes go with the CDN URLs (the copies are other
builds). A page that loads any other external script or stylesheet is refused
(`OfflineError`), so an asv upgrade that adds one fails here instead of at a reader's
browser; a missing package file is named with the package to install.

`python -m harness.report.dashboard_offline [HTML_DIR]` (default `reports/asv/html`) does
it; running it again changes nothing.
"""

from __future__ import annotations

import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

OFFLINE_DIR = "offline"
DEFAULT_HTML = Path("reports/asv/html")


class OfflineError(Exception):
    """The dashboard cannot be made self-contained (the message says why and what to do)."""


@dataclass(frozen=True)
class Library:
    """One file an asv page loads from a CDN: the URL's pattern, where a Debian package
    puts the file (first that exists), the package, and its path under `offline/`."""

    url: str
    sources: tuple[str, ...]
    package: str
    target: str


_JS = "/usr/share/javascript"
_FLOT = "/usr/share/haskell-js-flot"


def _flot(name: str) -> Library:
    return Library(
        rf"/flot/0\.8\.\d+/{re.escape(name)}$",
        (f"{_FLOT}/{name}",),
        "libghc-js-flot-data",
        f"flot/{name}",
    )


LIBRARIES: tuple[Library, ...] = (
    Library(
        r"^https://code\.jquery\.com/jquery-3\.[\d.]+(\.min)?\.js$",
        (f"{_JS}/jquery/jquery.min.js",),
        "libjs-jquery",
        "jquery/jquery.min.js",
    ),
    _flot("jquery.flot.min.js"),
    _flot("jquery.flot.time.min.js"),
    _flot("jquery.flot.selection.min.js"),
    _flot("jquery.flot.categories.min.js"),
    Library(
        r"/stupidtable/1\.[\d.]+/stupidtable(\.min)?\.js$",
        (f"{_JS}/jquery-stupidtable/stupidtable.min.js",),
        "libjs-jquery-stupidtable",
        "stupidtable/stupidtable.min.js",
    ),
    Library(
        r"/blueimp-md5/2\.[\d.]+/js/md5(\.min)?\.js$",
        (f"{_JS}/blueimp-md5/md5.min.js", "/usr/share/nodejs/blueimp-md5/js/md5.js"),
        "node-blueimp-md5",
        "blueimp-md5/md5.min.js",
    ),
    Library(
        r"/bootstrap@3\.[\d.]+/dist/js/bootstrap(\.min)?\.js$",
        (f"{_JS}/bootstrap/js/bootstrap.min.js",),
        "libjs-bootstrap",
        "bootstrap/js/bootstrap.min.js",
    ),
    Library(
        r"/bootstrap@3\.[\d.]+/dist/css/bootstrap(\.min)?\.css$",
        (f"{_JS}/bootstrap/css/bootstrap.min.css",),
        "libjs-bootstrap",
        "bootstrap/css/bootstrap.min.css",
    ),
    Library(r"/flot-orderbars@1\.[\d.]+/js/jquery\.flot\.orderBars\.js$", (), "", "order-bars.js"),
)
# Bootstrap's CSS finds its icon font at ../fonts/ (fonts-glyphicons-halflings, which
# libjs-bootstrap depends on, through its symlinks).
BOOTSTRAP_FONTS = Path(f"{_JS}/bootstrap/fonts")

# flot 0.8 plugin for the `bars.order` series option asv sets on bar charts (a benchmark
# drawn against a parameter): bars of the ordered series stand side by side, the k-th of
# n shifted by (k - (n - 1) / 2) bar widths, after the categories plugin has turned the
# x values into positions.
ORDER_BARS = """/* tokensieve: side-by-side bars for flot 0.8 (series option bars.order). */
(function ($) {
  "use strict";
  function ordered(plot) {
    var all = plot.getData(), found = [];
    for (var i = 0; i < all.length; i++) {
      var bars = all[i].bars;
      if (bars && bars.show && typeof bars.order === "number") { found.push(all[i]); }
    }
    found.sort(function (a, b) { return a.bars.order - b.bars.order; });
    return found;
  }
  function shift(plot, series, datapoints) {
    var bars = series.bars;
    if (!bars || !bars.show || typeof bars.order !== "number" || bars.horizontal) { return; }
    var group = ordered(plot), rank = group.indexOf(series);
    if (group.length < 2 || rank < 0) { return; }
    var offset = (rank - (group.length - 1) / 2) * bars.barWidth;
    var points = datapoints.points, step = datapoints.pointsize;
    for (var i = 0; i < points.length; i += step) {
      if (points[i] !== null) { points[i] += offset; }
    }
  }
  $.plot.plugins.push({
    init: function (plot) { plot.hooks.processDatapoints.push(shift); },
    options: {series: {bars: {order: null}}},
    name: "orderBars",
    version: "tokensieve"
  });
})(jQuery);
"""

_TAG = re.compile(r"<(script|link)\b[^>]*>", re.IGNORECASE)
_URL_ATTR = re.compile(r'\b(src|href)="(https?://[^"]*)"', re.IGNORECASE)
_LOADED = re.compile(r'\brel="[^"]*\b(stylesheet|icon|preload|modulepreload)\b', re.IGNORECASE)
_CDN_ATTRS = re.compile(r'\s+(integrity|crossorigin|referrerpolicy)="[^"]*"', re.IGNORECASE)


def _library(url: str) -> Library:
    for library in LIBRARIES:
        if re.search(library.url, url):
            return library
    raise OfflineError(
        f"asv's page loads {url}, which has no offline copy: add it to "
        "harness.report.dashboard_offline.LIBRARIES"
    )


def _copy(library: Library, offline: Path) -> None:
    """Put `library`'s file at `offline/target` (and Bootstrap's fonts beside its CSS)."""
    target = offline / library.target
    target.parent.mkdir(parents=True, exist_ok=True)
    if not library.sources:
        target.write_text(ORDER_BARS, encoding="utf-8")
        return
    source = next((Path(s) for s in library.sources if Path(s).is_file()), None)
    if source is None:
        raise OfflineError(
            f"{library.sources[0]} is missing: apt-get install {library.package} "
            "(make dashboard installs it)"
        )
    shutil.copyfile(source, target)
    if library.target.endswith(".css") and BOOTSTRAP_FONTS.is_dir():
        fonts = target.parent.parent / "fonts"
        fonts.mkdir(exist_ok=True)
        for font in BOOTSTRAP_FONTS.iterdir():
            if font.is_file():  # follows the symlinks into fonts-glyphicons-halflings
                shutil.copyfile(font, fonts / font.name)


def localize(page: str, offline: Path, prefix: str) -> tuple[str, list[Library]]:
    """`page` with every external `<script src>` and `<link href>` pointed at its copy
    under `prefix` (the offline folder relative to the page), the copies made into
    `offline`; returns the new page and the libraries it uses. OfflineError for an
    external URL with no copy."""
    used: list[Library] = []

    def fix(tag: re.Match[str]) -> str:
        text = tag.group(0)
        found = _URL_ATTR.search(text)
        if found is None:
            return text
        if tag.group(1).lower() == "link" and not _LOADED.search(text):
            return text  # a link to a page (rel="alternate"...), not a load
        library = _library(found.group(2))
        _copy(library, offline)
        used.append(library)
        local = f'{found.group(1)}="{prefix}{library.target}"'
        return _CDN_ATTRS.sub("", text[: found.start()] + local + text[found.end() :])

    return _TAG.sub(fix, page), used


def make_offline(html_dir: Path) -> list[Path]:
    """Make every HTML page of a published asv dashboard (`html_dir`, top level) load
    its libraries from `html_dir/offline/`; returns the pages changed. OfflineError when
    `html_dir` has no `index.html`, a library has no copy or a package file is missing."""
    if not (html_dir / "index.html").is_file():
        raise OfflineError(f"{html_dir}/index.html not found: run `asv publish` first")
    offline = html_dir / OFFLINE_DIR
    changed = []
    for path in sorted(html_dir.glob("*.html")):
        page = path.read_text(encoding="utf-8")
        new, _ = localize(page, offline, f"{OFFLINE_DIR}/")
        if new != page:
            path.write_text(new, encoding="utf-8")
            changed.append(path)
    return changed


def main(argv: list[str] | None = None) -> int:
    """`python -m harness.report.dashboard_offline [HTML_DIR]`: 0 when done, 1 with one
    line saying why not."""
    args = sys.argv[1:] if argv is None else argv
    html_dir = Path(args[0]) if args else DEFAULT_HTML
    try:
        changed = make_offline(html_dir)
    except (OfflineError, OSError) as exc:
        print(f"dashboard_offline: {exc}", file=sys.stderr)
        return 1
    pages = ", ".join(p.name for p in changed) or "no page needed it"
    print(f"dashboard offline: libraries in {html_dir / OFFLINE_DIR} ({pages})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
