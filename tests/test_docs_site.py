"""The documentation site (`mkdocs.yml`, `docs/`), as `make docs` builds it and a person
reads it: offline, over `file://`.

- The site builds with `mkdocs build --strict` (a broken link or anchor, a page missing
  from the nav, any warning fails), and a broken link does fail such a build.
- No built page loads an asset (script, stylesheet, image, font, frame) from outside the
  site: no CDN, no web fonts.
- Its home page and one guide, opened in headless Chromium like the report pages of
  `tests/test_browser.py`, log no console error, lose no request, fetch nothing outside
  the site's folder, and show their title and the navigation; search finds a page
  without a server.
- `README.md` stays the front door: at most about 200 lines, every relative link it
  holds resolving to a file, every page it links to in the site's nav.

Needs PyPI's `mkdocs` and `mkdocs-material` (pinned in requirements.txt), and for the
browser part Debian's `chromium` and `chromium-driver` and PyPI's `selenium`; without
them the tests are skipped under one line.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.report import browser

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "mkdocs.yml"
DOCS = ROOT / "docs"
README = ROOT / "README.md"
README_MAX_LINES = 200
GUIDE = "guides/diff.html"
GUIDE_TITLE = "Differential testing"
SEARCH_QUERY = "counted automata"

# Tags and attributes through which a page loads something (a link to another site in
# prose, `<a href>`, loads nothing and is fine).
ASSET = re.compile(
    r"<(?P<tag>script|link|img|iframe|source|video|audio|embed|object|track|input)\b"
    r"[^>]*?\b(?P<attr>src|href|data|poster|srcset)\s*=\s*[\"']?(?P<url>[^\"'\s>]+)",
    re.IGNORECASE,
)
CSS_URL = re.compile(r"(?:url\(\s*[\"']?|@import\s+[\"'])(?P<url>[^\"')\s]+)", re.IGNORECASE)
EXTERNAL = re.compile(r"^(?:[a-z][a-z0-9+.-]*:)?//", re.IGNORECASE)  # http:, https:, //host


def _missing_mkdocs() -> str | None:
    absent = [name for name in ("mkdocs", "material") if importlib.util.find_spec(name) is None]
    return ", ".join(absent) or None


def _skip_without_mkdocs() -> None:
    missing = _missing_mkdocs()
    if missing is not None:
        pytest.skip(
            f"docs site test: {missing} not installed (pip install mkdocs mkdocs-material, "
            "pinned in requirements.txt)"
        )


def build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    """`mkdocs build --strict` of `config` into `site`, output captured."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    argv = [sys.executable, "-m", "mkdocs", "build", "--strict", "--clean",
            "--config-file", str(config), "--site-dir", str(site)]  # fmt: skip
    return subprocess.run(
        argv, cwd=config.parent, env=env, capture_output=True, text=True, timeout=600
    )


def warnings(done: subprocess.CompletedProcess[str]) -> list[str]:
    """The lines of a build's output that warn or fail."""
    lines = (done.stdout + done.stderr).splitlines()
    return [line for line in lines if re.search(r"\b(WARNING|ERROR)\b", line)]


def external_assets(html: str) -> list[str]:
    """Every asset `html` loads from outside its own site: `<script src>`, `<link href>`,
    `<img src>`, ..., and CSS `url(...)` / `@import` inside the page."""
    found = [m["url"] for m in ASSET.finditer(html) if EXTERNAL.match(m["url"])]
    srcsets = re.findall(r"\bsrcset\s*=\s*[\"']([^\"']*)", html, re.IGNORECASE)
    found += [u for s in srcsets for u in s.replace(",", " ").split() if EXTERNAL.match(u)]
    found += [m["url"] for m in CSS_URL.finditer(html) if EXTERNAL.match(m["url"])]
    return found


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The site, built once for the module; the build must pass with no warning."""
    _skip_without_mkdocs()
    out = tmp_path_factory.mktemp("docs-site") / "site"
    done = build(CONFIG, out)
    output = (done.stdout + done.stderr)[-6000:]
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{output}"
    assert warnings(done) == [], f"mkdocs build warned:\n{output}"
    yield out


def nav_pages(nav: Any) -> list[str]:
    """Every page path (relative to docs/) named in an mkdocs `nav` value."""
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, list):
        return [p for item in nav for p in nav_pages(item)]
    if isinstance(nav, dict):
        return [p for value in nav.values() for p in nav_pages(value)]
    return []


def configured_nav() -> list[str]:
    import yaml  # mkdocs' own dependency

    class Loader(yaml.SafeLoader):
        pass

    # mkdocs.yml may use mkdocs' !ENV and !relative tags; the nav needs none of them.
    Loader.add_multi_constructor("!", lambda loader, suffix, node: None)
    return nav_pages(yaml.load(CONFIG.read_text(encoding="utf-8"), Loader=Loader)["nav"])


# --- the build -------------------------------------------------------------------------


def test_site_builds_strict_with_every_page(site: Path) -> None:
    pages = configured_nav()
    assert "index.md" in pages and any(p.startswith("guides/") for p in pages)
    for page in pages:
        built = site / Path(page).with_suffix(".html")
        assert built.is_file(), f"{page} was not built to {built}"
    on_disk = sorted(str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md"))
    assert sorted(pages) == on_disk, "every page under docs/ must be in the nav, once"
    assert (site / "verdict.png").is_file()


def test_no_page_loads_anything_from_outside_the_site(site: Path) -> None:
    offenders = {}
    for path in sorted(site.rglob("*.html")):
        found = external_assets(path.read_text(encoding="utf-8"))
        if found:
            offenders[str(path.relative_to(site))] = found
    for path in sorted(site.rglob("*.css")):
        found = [m["url"] for m in CSS_URL.finditer(path.read_text(encoding="utf-8"))
                 if EXTERNAL.match(m["url"])]  # fmt: skip
        if found:
            offenders[str(path.relative_to(site))] = found
    assert offenders == {}, f"assets from outside the site: {offenders}"


def test_external_asset_check_catches_a_cdn() -> None:
    page = (
        '<link rel="stylesheet" href="https://fonts.googleapis.com/css?family=Roboto">'
        '<script src="//cdn.example/x.js"></script><img src="assets/a.png">'
        '<a href="https://example.org/">a link is fine</a>'
        "<style>@import 'https://cdn.example/y.css'; b { background: url(img/b.png) }</style>"
    )
    assert external_assets(page) == [
        "https://fonts.googleapis.com/css?family=Roboto",
        "//cdn.example/x.js",
        "https://cdn.example/y.css",
    ]


def test_strict_build_fails_on_a_broken_link(tmp_path: Path) -> None:
    """The check above can fail: the same site with one link to a missing page does not
    build under --strict, and says which link."""
    _skip_without_mkdocs()
    copy = tmp_path / "project"
    shutil.copytree(DOCS, copy / "docs")
    shutil.copy(CONFIG, copy / "mkdocs.yml")
    page = copy / "docs" / "index.md"
    page.write_text(
        page.read_text(encoding="utf-8") + "\nSee [a page](no-such-page.md).\n",
        encoding="utf-8",
    )
    done = build(copy / "mkdocs.yml", tmp_path / "site")
    assert done.returncode != 0
    assert any("no-such-page.md" in line for line in warnings(done)), warnings(done)


# --- in a browser ------------------------------------------------------------------------


def _skip_without_browser() -> None:
    missing = browser.missing()
    if missing is not None:
        pytest.skip(
            f"docs browser test: {missing} not installed (apt-get install chromium "
            "chromium-driver; pip install selenium)"
        )


def _assert_whole(check: browser.PageCheck, prefix: str) -> None:
    """The page logged no error, lost no request and fetched only under `prefix`."""
    assert check.not_ready == "", check.summary()
    assert check.console_errors == [], check.summary()
    assert check.failed_requests == [], check.summary()
    assert check.requests, f"{check.url}: nothing loaded"
    assert check.outside(prefix) == [], f"{check.url} fetched outside {prefix}"


def _nav_ready(driver: Any) -> bool:
    return bool(driver.execute_script("return document.querySelectorAll('nav.md-nav a').length;"))


def _check_page(chromium: browser.Browser, site: Path, page: str, title: str) -> None:
    """`page` opens whole, titled `title`, with the site's navigation listing the guides."""
    check = chromium.open((site / page).as_uri(), ready=_nav_ready)
    _assert_whole(check, site.as_uri() + "/")
    driver = chromium.driver
    assert driver.title.startswith(title), driver.title
    assert driver.title.endswith("tokensieve"), driver.title
    heading = driver.find_element("css selector", "article h1").text
    assert heading, f"{page}: no heading"
    nav = driver.find_element("css selector", "nav.md-nav--primary")
    links = [a.get_attribute("textContent").strip()
             for a in nav.find_elements("css selector", "a")]  # fmt: skip
    for expected in ("Benchmarking", "Differential testing", "Results", "Architecture"):
        assert expected in links, (page, links)


def _search_results(driver: Any) -> int:
    return int(driver.execute_script(
        "return document.querySelectorAll('.md-search-result__item').length;"
    ))  # fmt: skip


def _check_search(chromium: browser.Browser, site: Path) -> None:
    """Search, whose index and worker are local files, finds a page over file://."""
    from selenium.webdriver.support.ui import WebDriverWait

    _assert_whole(chromium.open((site / "index.html").as_uri(), ready=_nav_ready),
                  site.as_uri() + "/")  # fmt: skip
    box = chromium.driver.find_element("css selector", "input.md-search__input")
    box.click()
    box.send_keys(SEARCH_QUERY)
    WebDriverWait(chromium.driver, 20).until(_search_results)
    first = chromium.driver.find_element("css selector", ".md-search-result__item")
    assert "counted" in first.text.lower(), first.text
    after = chromium.check("search")
    assert after.console_errors == [] and after.failed_requests == [], after.summary()
    assert after.outside(site.as_uri() + "/") == [], after.requests


def test_pages_open_whole_in_chromium(site: Path) -> None:
    """The home page and one guide, over file://, as `make docs` leaves them."""
    _skip_without_browser()
    with browser.Browser() as chromium:
        _check_page(chromium, site, "index.html", "tokensieve")
        _check_page(chromium, site, GUIDE, GUIDE_TITLE)
        _check_search(chromium, site)


# --- the README --------------------------------------------------------------------------


def test_readme_is_the_front_door() -> None:
    text = README.read_text(encoding="utf-8")
    lines = text.splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines"
    targets = re.findall(r"\]\(([^)\s]+)\)", text)
    local = [t.split("#", 1)[0] for t in targets if not EXTERNAL.match(t) and ":" not in t]
    assert any(t.startswith("docs/") for t in local), "README links to no page of the site"
    for target in filter(None, local):
        assert (ROOT / target).exists(), f"README.md links to missing {target}"
    pages = set(configured_nav()) if _missing_mkdocs() is None else None
    for target in local:
        if target.startswith("docs/") and target.endswith(".md") and pages is not None:
            assert target.removeprefix("docs/") in pages, f"{target} is not in the site's nav"
