"""Open the pages tokensieve writes as a person would: headless Chromium driven by Selenium
(Debian's `chromium` and `chromium-driver`, PyPI's `selenium`), recording what the page
logged and fetched, and saving screenshots.

`Browser` starts one headless Chromium (never downloading a browser or a driver: both
are found on PATH) with its console and network logs on; `Browser.open` loads a URL and
returns a `PageCheck`: the console's SEVERE entries, the requests that failed (a network
error, or an HTTP status of 400 or more) and every URL requested, so a caller can assert
a page is whole and fetched nothing outside where it should. `serve` serves a directory
on the loopback address (the asv dashboard reads its JSON with XMLHttpRequest, which
browsers refuse over `file://`; `asv preview` serves it the same way).

`python -m harness.report.browser RUN_DIR [--dashboard HTML_DIR]` checks a bench run's
pages (`index.html`, `specs.html`, `diff.html` when there) and optionally a published
asv dashboard, prints one line per page, saves screenshots into
`RUN_DIR/screenshots/` and exits 1 when a page logged an error or a request failed.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import http.server
import json
import shutil
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CHROMIUM = ("chromium", "chromium-browser")
CHROMEDRIVER = "chromedriver"
WINDOW = (1280, 1000)


def missing() -> str | None:
    """What is missing to run a browser here ("selenium", "chromium", "chromedriver",
    comma-separated), or None when all three are present."""
    absent = []
    try:
        import selenium  # noqa: F401
    except ImportError:
        absent.append("selenium")
    if _chromium() is None:
        absent.append("chromium")
    if shutil.which(CHROMEDRIVER) is None:
        absent.append("chromedriver")
    return ", ".join(absent) or None


def _chromium() -> str | None:
    for name in CHROMIUM:
        found = shutil.which(name)
        if found:
            return found
    return None


@dataclass
class PageCheck:
    """What opening one URL showed: the URL the browser ended on, why the page never got
    ready (empty when it did), console errors, failed requests (URL and why) and every
    URL requested."""

    url: str
    final_url: str = ""
    not_ready: str = ""
    console_errors: list[str] = field(default_factory=list)
    failed_requests: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not self.not_ready and not self.console_errors and not self.failed_requests

    def outside(self, prefix: str) -> list[str]:
        """The requested URLs that do not start with `prefix` (data: URLs excepted)."""
        return [u for u in self.requests if not u.startswith((prefix, "data:"))]

    def summary(self) -> str:
        """One line: the URL, request count, and each error or failure."""
        problems = [p for p in (self.not_ready,) if p] + self.console_errors
        problems += self.failed_requests
        state = "ok" if not problems else "; ".join(problems)
        return f"{self.url}: {len(self.requests)} requests, {state}"


class Browser:
    """One headless Chromium session (a context manager); raises RuntimeError naming
    what is missing when `missing()` is not None."""

    def __init__(self, window: tuple[int, int] = WINDOW) -> None:
        absent = missing()
        if absent is not None:
            raise RuntimeError(f"cannot start a browser: missing {absent}")
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        options = webdriver.ChromeOptions()
        options.binary_location = str(_chromium())
        for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                    "--disable-gpu", "--no-first-run", "--disable-extensions",
                    "--disable-background-networking", "--disable-component-update",
                    f"--window-size={window[0]},{window[1]}"):  # fmt: skip
            options.add_argument(arg)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
        service = Service(executable_path=shutil.which(CHROMEDRIVER))
        self.driver: Any = webdriver.Chrome(options=options, service=service)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.driver.quit()

    def open(
        self, url: str, ready: Callable[[Any], Any] | None = None, wait: float = 20
    ) -> PageCheck:
        """Load `url`, wait (at most `wait` seconds) until `ready(driver)` is truthy when
        given, and return what the page logged and fetched since the last `open`; a page
        never ready says so in `PageCheck.not_ready`."""
        from selenium.common.exceptions import TimeoutException
        from selenium.webdriver.support.ui import WebDriverWait

        self.driver.get_log("browser")  # drop what an earlier page left
        self.driver.get_log("performance")
        self.driver.get(url)
        not_ready = ""
        if ready is not None:
            try:
                WebDriverWait(self.driver, wait).until(ready)
            except TimeoutException:
                not_ready = f"not ready after {wait:g} s ({getattr(ready, '__name__', ready)})"
        check = self.check(url)
        check.not_ready = not_ready
        return check

    def check(self, url: str) -> PageCheck:
        """The console errors and requests logged since the last call (see `open`)."""
        check = PageCheck(url, final_url=self.driver.current_url)
        check.console_errors = [
            str(e.get("message"))
            for e in self.driver.get_log("browser")
            if e.get("level") == "SEVERE"
        ]
        urls: dict[str, str] = {}
        for entry in self.driver.get_log("performance"):
            message = json.loads(entry["message"])["message"]
            method, params = message.get("method"), message.get("params", {})
            if method == "Network.requestWillBeSent":
                urls[params["requestId"]] = params["request"]["url"]
                check.requests.append(params["request"]["url"])
            elif method == "Network.loadingFailed":
                where = urls.get(params.get("requestId"), "?")
                check.failed_requests.append(f"{where}: {params.get('errorText')}")
            elif method == "Network.responseReceived":
                response = params.get("response", {})
                if int(response.get("status") or 0) >= 400:
                    check.failed_requests.append(
                        f"{response.get('url')}: HTTP {response['status']}"
                    )
        return check

    def screenshot(self, path: Path, css: str | None = None) -> Path:
        """Save the viewport (or the element matching `css`) as the PNG `path`."""
        from selenium.webdriver.common.by import By

        path.parent.mkdir(parents=True, exist_ok=True)
        if css is None:
            self.driver.save_screenshot(str(path))
        else:
            self.driver.find_element(By.CSS_SELECTOR, css).screenshot(str(path))
        return path


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextlib.contextmanager
def serve(directory: Path) -> Iterator[str]:
    """Serve `directory` on 127.0.0.1 (a free port) while the block runs; yields its
    base URL ending in `/`."""
    handler = functools.partial(_QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def dashboard_graph_ready(driver: Any) -> bool:
    """Whether asv's graph view has drawn a plot with data: flot's plot object on
    `#main-graph` holds a series with a point, and its canvas has a nonzero size."""
    return bool(
        driver.execute_script(
            "var plot = window.jQuery && jQuery('#main-graph').data('plot');"
            "if (!plot) { return false; }"
            "var canvas = plot.getCanvas();"
            "return canvas.width > 0 && canvas.height > 0 && plot.getData().some("
            "  function (s) { return s.data.some(function (p) { return p[1] !== null; }); });"
        )
    )


def dashboard_grid_ready(driver: Any) -> bool:
    """Whether asv's benchmark grid has listed at least one benchmark."""
    script = "return document.querySelectorAll('#summarygrid-display .benchmark-container').length;"
    return bool(driver.execute_script(script))


def check_run(browser: Browser, run_dir: Path) -> list[PageCheck]:
    """Open the bench run's pages from `run_dir` over `file://`, saving a screenshot of
    each (and of the verdict) into `run_dir/screenshots/`."""
    shots = run_dir / "screenshots"
    checks = []
    for page in ("index.html", "specs.html", "diff.html"):
        path = run_dir / page
        if not path.is_file():
            continue
        checks.append(browser.open(path.resolve().as_uri()))
        browser.screenshot(shots / page.replace(".html", ".png"))
        if page == "index.html":
            browser.screenshot(shots / "verdict.png", css=".verdict")
    return checks


def check_dashboard(browser: Browser, html_dir: Path, shots: Path) -> list[PageCheck]:
    """Open a published asv dashboard served from `html_dir`: its grid, then the graph
    of its first benchmark (by name) that has results; screenshots `dashboard.png` and
    `dashboard-graph.png` into `shots`."""
    index = json.loads((html_dir / "index.json").read_text(encoding="utf-8"))
    drawn = [
        b
        for b in sorted(index["benchmarks"])
        if (html_dir / "graphs" / "summary" / f"{b}.json").is_file()
    ]
    if not drawn:
        raise RuntimeError(f"{html_dir}: no benchmark has results to draw")
    first = drawn[0]
    with serve(html_dir) as base:
        grid = browser.open(base + "index.html", ready=dashboard_grid_ready)
        browser.screenshot(shots / "dashboard.png")
        graph = browser.open(f"{base}index.html#{first}", ready=dashboard_graph_ready)
        browser.screenshot(shots / "dashboard-graph.png")
    return [grid, graph]


def main(argv: list[str] | None = None) -> int:
    """The command line (see the module)."""
    parser = argparse.ArgumentParser(prog="python -m harness.report.browser")
    parser.add_argument("run_dir", type=Path, help="a bench run's folder (reports/RUN)")
    parser.add_argument("--dashboard", type=Path, help="a published asv html folder")
    args = parser.parse_args(argv)
    absent = missing()
    if absent is not None:
        print(f"browser check: missing {absent} (apt-get install chromium chromium-driver; "
              "pip install selenium)", file=sys.stderr)  # fmt: skip
        return 2
    with Browser() as browser:
        checks = check_run(browser, args.run_dir)
        if args.dashboard is not None:
            checks += check_dashboard(browser, args.dashboard, args.run_dir / "screenshots")
    for check in checks:
        print(check.summary())
    print(f"screenshots: {args.run_dir / 'screenshots'}")
    return 0 if all(c.clean for c in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
