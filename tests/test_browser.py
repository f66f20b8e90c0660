"""The pages people read, opened in headless Chromium through Selenium as a person would:
a bench report and a diff page from a tiny real run (synthetic vocabulary, three of
outlines-bench's regexes), and an asv dashboard published from a tiny real `asv run`
and made offline. Each page must log no console error, have no request fail and fetch
nothing outside its own folder (the report over `file://`, the dashboard from a loopback
server as `asv preview` serves it); the verdict must name an engine, a table header
click must sort, and the dashboard must draw a graph. Screenshots go into the run's
`screenshots/` folder.

Needs Debian's `chromium` and `chromium-driver` and PyPI's `selenium` (`make test`
installs them); without them the browser tests are skipped under one line. The offline
step's own tests (asv's real page, made offline from stand-in package files) need none.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harness import cli, report
from harness.cache import cache_root
from harness.report import browser, dashboard_offline
from harness.report.dashboard_offline import make_offline
from harness.store import Store

ROOT = Path(__file__).resolve().parent.parent
RUN = "browser"
VOCAB = "synthetic-1000-0"
ENGINES = ("naive", "tokensdfa", "outlines-core")
# One parameter combination of every benchmark of benchmarks/engines.py (Speedup has no
# engine parameter), so every benchmark the dashboard lists has results.
ASV_FILTERS = (
    r"\('tokensdfa', 'outlines-bench/date', 'llama3'\)$",
    r"\('outlines-bench/date', 'llama3'\)$",
)


# WebDriver's locator strategies (selenium.webdriver.common.by.By, which may be absent)
CSS, XPATH, TAG = "css selector", "xpath", "tag name"


def tiny_run(reports: Path) -> Path:
    """A tiny bench run, a diff run of the same name, then its report rewritten so the
    verdict reads the diff; returns the run's folder."""
    common = ["--vocab", VOCAB, "--corpus", "outlines-bench", "--limit-specs", "3",
              "--reports-dir", str(reports), "--run", RUN]  # fmt: skip
    assert cli.main(["bench", "--engines", ",".join(ENGINES), "--no-report", *common]) == 0
    diff = ["diff", "--engines", "outlines-core,tokensdfa", "--walks", "2", "--cover", "40",
            "--paths", "1", *common]  # fmt: skip
    assert cli.main(diff) == 0
    report.write(Store(reports / "results.sqlite", readonly=True), RUN, reports / RUN)
    return reports / RUN


def _git_head() -> str:
    done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, f"the dashboard needs a git checkout: {done.stderr}"
    return done.stdout.strip()


def tiny_dashboard(base: Path) -> Path:
    """asv run (quick, one combination per benchmark) of the project's suites copied
    beside a temporary asv.conf.json, published, then made offline; asv's HOME (where it
    keeps its machine file) is `base` too. Returns the html folder."""
    (base / "benchmarks").mkdir(parents=True)
    for name in ("__init__.py", "engines.py"):
        (base / "benchmarks" / name).write_bytes((ROOT / "benchmarks" / name).read_bytes())
    conf = {"version": 1, "project": "tokensieve", "repo": str(ROOT), "branches": ["HEAD"],
            "environment_type": "existing", "benchmark_dir": str(base / "benchmarks"),
            "results_dir": str(base / "results"), "html_dir": str(base / "html"),
            "build_command": [], "install_command": [], "uninstall_command": []}  # fmt: skip
    config = str(base / "asv.conf.json")
    Path(config).write_text(json.dumps(conf))
    env = {**os.environ, "HOME": str(base), "TOKENSIEVE_CACHE": str(cache_root())}
    run = ["run", "--environment", f"existing:{sys.executable}", "--machine", "browser-test",
           "--set-commit-hash", _git_head(), "--quick", "--show-stderr",
           *(f"-b{f}" for f in ASV_FILTERS)]  # fmt: skip
    for step in (["machine", "--yes", "--machine", "browser-test"], run, ["publish"]):
        argv = [sys.executable, "-m", "asv", *step, "--config", config]
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, f"asv {step[0]}: {done.stdout[-3000:]}{done.stderr[-3000:]}"
    html = base / "html"
    assert make_offline(html) == [html / "index.html"]
    return html


def _assert_whole(check: browser.PageCheck, prefix: str) -> None:
    """The page got ready, logged no error, lost no request and fetched only under
    `prefix` (its own folder)."""
    assert check.not_ready == "", check.summary()
    assert check.console_errors == [], check.summary()
    assert check.failed_requests == [], check.summary()
    assert check.requests, f"{check.url}: nothing loaded"
    assert check.outside(prefix) == [], f"{check.url} fetched outside {prefix}"


def _check_report(chromium: browser.Browser, run_dir: Path) -> None:
    """The run's pages whole; the verdict first, naming an engine; screenshots saved."""
    checks = browser.check_run(chromium, run_dir)
    assert [Path(c.url).name for c in checks] == ["index.html", "specs.html", "diff.html"]
    for check in checks:
        _assert_whole(check, run_dir.as_uri() + "/")
    chromium.open((run_dir / "index.html").as_uri())
    headings = [h.text for h in chromium.driver.find_elements(TAG, "h2")]
    assert headings[:2] == ["Verdict", "Distributions"], headings
    named = [b.text for b in chromium.driver.find_elements(CSS, ".verdict li b")]
    assert set(named) & set(ENGINES), named
    first = chromium.driver.find_element(CSS, ".verdict li").text
    assert "fastest time to first mask" in first, first
    for shot in ("index.png", "verdict.png", "specs.png", "diff.png"):
        assert (run_dir / "screenshots" / shot).stat().st_size > 1000, shot


def _column(table: Any, index: int) -> list[str]:
    rows = table.find_elements(CSS, "tbody tr")
    return [r.find_elements(TAG, "td")[index].get_attribute("textContent") for r in rows]


def _check_sorting(chromium: browser.Browser, run_dir: Path) -> None:
    """A click on the per-engine table's "compile p50" header sorts by its durations,
    ascending, then descending."""
    chromium.open((run_dir / "index.html").as_uri())
    table = chromium.driver.find_element(XPATH, "//h2[text()='Per engine']/following::table[1]")
    header = [th.get_attribute("textContent") for th in table.find_elements(CSS, "th")]
    th = table.find_elements(CSS, "thead th")[header.index("compile p50")]
    scale = {"ns": 1, "µs": 1e3, "ms": 1e6, "s": 1e9}

    def ns(text: str) -> float:
        value, unit = text.split()
        return float(value) * scale[unit]

    th.click()
    ascending = [ns(t) for t in _column(table, header.index("compile p50"))]
    assert ascending == sorted(ascending) and th.get_attribute("aria-sort") == "ascending"
    th.click()
    descending = [ns(t) for t in _column(table, header.index("compile p50"))]
    assert descending == sorted(ascending, reverse=True)
    assert chromium.check("sorting").console_errors == []


def _check_spec_anchor(chromium: browser.Browser, run_dir: Path) -> None:
    """A spec's link opens specs.html at its anchor: a table of every engine's cell."""
    chromium.open((run_dir / "index.html").as_uri())
    link = chromium.driver.find_element(CSS, "a[href^='specs.html#spec-']")
    spec = link.get_attribute("textContent")
    _assert_whole(chromium.open(link.get_attribute("href")), run_dir.as_uri() + "/")
    target = chromium.driver.find_element(CSS, ":target")
    assert target.text == spec
    rows = target.find_elements(XPATH, "following-sibling::table[1]/tbody/tr")
    assert {r.find_element(TAG, "td").text for r in rows} == set(ENGINES)


def _check_dashboard(chromium: browser.Browser, html: Path, shots: Path) -> None:
    """The offline dashboard's grid and one benchmark's graph whole, from its own
    folder only (no CDN, no redirect to asv's error page), the graph drawn."""
    head = (html / "index.html").read_text(encoding="utf-8").split("<body")[0]
    assert "https://" not in head, "a CDN reference is left in <head>"
    grid, graph = browser.check_dashboard(chromium, html, shots)
    base = grid.url.removesuffix("index.html")
    for check in (grid, graph):
        _assert_whole(check, base)
        assert check.final_url.startswith(base + "index.html"), check.final_url
    for shot in ("dashboard.png", "dashboard-graph.png"):
        assert (shots / shot).stat().st_size > 1000, shot


def test_pages_render_whole_in_chromium(tmp_path: Path) -> None:
    """The bench report, its specs page, the diff page and the offline dashboard, each
    opened in headless Chromium (see the module)."""
    missing = browser.missing()
    if missing is not None:
        pytest.skip(
            f"browser test: {missing} not installed (apt-get install chromium "
            "chromium-driver; pip install selenium)"
        )
    run_dir = tiny_run(tmp_path / "reports")
    html = tiny_dashboard(tmp_path / "asv")
    with browser.Browser() as chromium:
        _check_report(chromium, run_dir)
        _check_sorting(chromium, run_dir)
        _check_spec_anchor(chromium, run_dir)
        _check_dashboard(chromium, html, run_dir / "screenshots")


# --- the asv dashboard made offline ------------------------------------------------------


def _asv_page(tmp_path: Path) -> Path:
    """asv's own index.html, as `asv publish` copies it, in `tmp_path/html`."""
    import asv

    html = tmp_path / "html"
    html.mkdir()
    source = Path(asv.__file__).parent / "www" / "index.html"
    (html / "index.html").write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    return html


def _fake_packages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every library's package file as a small file of its own under `tmp_path/pkg`."""
    libraries = []
    for i, library in enumerate(dashboard_offline.LIBRARIES):
        if library.sources:
            fake = tmp_path / "pkg" / f"{i}-{Path(library.target).name}"
            fake.parent.mkdir(exist_ok=True)
            fake.write_text(f"/* {library.package} */")
            library = dataclasses.replace(library, sources=(str(fake),))
        libraries.append(library)
    monkeypatch.setattr(dashboard_offline, "LIBRARIES", tuple(libraries))


def test_dashboard_offline_points_every_cdn_load_at_a_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    html = _asv_page(tmp_path)
    before = (html / "index.html").read_text()
    cdn = re.findall(r'<(?:script|link)\b[^>]*\b(?:src|href)="https://', before)
    assert len(cdn) == len(dashboard_offline.LIBRARIES)  # a new asv library fails here
    _fake_packages(tmp_path, monkeypatch)
    assert dashboard_offline.make_offline(html) == [html / "index.html"]
    page = (html / "index.html").read_text()
    loads = re.findall(r'<(?:script|link)\b[^>]*\b(?:src|href)="([^"]*)"', page)
    assert not [u for u in loads if u.startswith("http")] and "integrity=" not in page
    copies = [u for u in loads if u.startswith("offline/")]
    assert len(copies) == len(dashboard_offline.LIBRARIES)
    for url in copies:
        assert (html / url).is_file(), url
    assert 'onerror="js_load_failure()"' in page
    assert 'href="https://github.com/airspeed-velocity/asv/"' in page  # a link, not a load
    bars = (html / "offline" / "order-bars.js").read_text()
    assert bars == dashboard_offline.ORDER_BARS
    assert dashboard_offline.make_offline(html) == []  # a second run changes nothing


def test_dashboard_offline_refuses_what_it_cannot_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    html = _asv_page(tmp_path)
    with pytest.raises(dashboard_offline.OfflineError, match="asv publish"):
        dashboard_offline.make_offline(tmp_path)
    missing = [dataclasses.replace(lib, sources=("/nonexistent/x.js",)) if lib.sources else lib
               for lib in dashboard_offline.LIBRARIES]  # fmt: skip
    monkeypatch.setattr(dashboard_offline, "LIBRARIES", tuple(missing))
    with pytest.raises(dashboard_offline.OfflineError, match="apt-get install libjs-jquery"):
        dashboard_offline.make_offline(html)
    _fake_packages(tmp_path, monkeypatch)
    (html / "index.html").write_text('<script src="https://cdn.example/new.js"></script>')
    with pytest.raises(dashboard_offline.OfflineError, match=r"cdn\.example/new\.js"):
        dashboard_offline.make_offline(html)
    assert dashboard_offline.main([str(html)]) == 1
