"""The report package: a run stored with the store's own API, written as a page with its
CSVs and plots; every section present, every CSV's header matching its rows, hostile
text from specs, messages, run metadata, diff and jump-forward JSON escaped everywhere,
links only to files of the run directory, and the console summary's lines."""

from __future__ import annotations

import base64
import csv
import hashlib
import json
import re
import sqlite3
from pathlib import Path

import pytest

from harness import report
from harness.figures import summarize
from harness.report import csvs, verdict, verdict_section
from harness.report.columns import Column, headers, write_csv
from harness.report.html import SCRIPT, anchor_id, escape, local_href, markup, records, table
from harness.results.metrics import CellMetrics, CellResult, PrepareMetrics
from harness.results.status import Status
from harness.store import Cell, Store

RUN = "r1"
EVIL = '<script>alert("x")</script>'
VOCAB = "v1"
SECTIONS = (
    "Verdict",
    "Distributions",
    "Compile time against vocabulary size",
    "tokensdfa speedup",
    "Per engine",
    "MaskBench comparison",
    "Jump-forward",
    "Differential test",
    "Per spec",
    "Failed cells",
    "Vocabulary preparation",
    "Sessions",
    "Run details",
)


def metrics(compile_ms: float, states: int, *, engine_memory: int | None = None) -> CellMetrics:
    fills = [200 + 10 * i for i in range(20)]
    return CellMetrics(
        compile_ns=int(compile_ms * 1e6),
        ttfm_ns=int(compile_ms * 1e6) + 5_000,
        fill_ns=fills,
        advance_ns=[100] * 20,
        fill=summarize(fills),
        advance=summarize([100] * 20),
        paths=2,
        refused_paths=0,
        truncated=False,
        rss_growth_bytes=4096,
        engine_memory_bytes=engine_memory,
        peak_rss_bytes=10_000_000,
        vocab_size=1000,
        num_states=states,
    )


def ok(compile_ms: float, states: int = 10, **kw: int | None) -> CellResult:
    return CellResult(Status.OK, None, metrics(compile_ms, states, **kw))


def build(path: Path) -> Store:
    """A run with three sessions (complete, failed, killed), ok and failed cells, a
    scaling study, a MaskBench spec, and hostile text in names, messages and metadata."""
    store = Store(path)
    meta = {
        "options": {
            "engines": ["naive", "tokensdfa", "outlines-core"],
            "vocabs": [VOCAB],
            "sets": ["handwritten", EVIL],
            "limit_specs": EVIL,
            "memory_limit": 1 << 30,
        },
        "machine": {"cpu": EVIL, "cpus": 4, "memory_bytes": 1 << 33, "platform": "linux",
                    "load_average": [0.5, 0.25, 0.125], "python": "3.11"},
        "versions": {"tokensdfa": EVIL},
        "commit": EVIL,
    }  # fmt: skip
    store.create_run(RUN, meta)
    first = store.start_session(RUN, "bench", 1, 1)
    specs = ("s/a", "s/b", f"s/{EVIL}", "maskbench/Github_easy---x")
    for i, spec in enumerate(specs):
        for j, engine in enumerate(("naive", "tokensdfa", "outlines-core")):
            memory = 2048 if engine == "tokensdfa" else None
            result = ok(1.0 + i + j, 10 * (i + 1), engine_memory=memory)
            store.add_cell(RUN, (engine, spec, VOCAB, "main"), result, first)
    store.finish_session(RUN, "bench", first, "complete")
    second = store.start_session(RUN, "bench", 2, 2)
    failed = CellResult(Status.CRASH, f"=cmd {EVIL}")
    store.add_cell(RUN, ("naive", "s/c", VOCAB, "main"), failed, second)
    store.add_cell(RUN, ("tokensdfa", "s/c", VOCAB, "main"), ok(2.0, engine_memory=2048), second)
    for size in (8, 16):
        cut = CellResult(Status.OK, None, metrics(0.5, 5))
        cut.metrics.vocab_size = size
        store.add_cell(RUN, ("tokensdfa", "s/a", f"{VOCAB}[:{size}]", "scaling"), cut, second)
    store.add_preparation(
        RUN, "naive", VOCAB, "ok", EVIL, PrepareMetrics(prepare_ns=2_000_000, startup_s=1.5)
    )
    store.finish_session(RUN, "bench", second, "failed", f"disk full {EVIL}")
    store.start_session(RUN, "bench", 1, 2**22 + 7)  # never finished, no lock: killed
    return store


DIFF_JSON = {
    "options": {"vocab": EVIL, "corpus": "handwritten", "run": RUN},
    "complete": True,
    "summary": [{"engine": EVIL, "states": 10, "policy_states": 0, "policies": "",
                 "bug_states": 1, "findings": 1}],
    "findings": [
        {"id": "f1", "engine": EVIL, "version": "1.0", "signature": "mask-extra",
         "occurrences": 2, "specs": [EVIL, "s/b"], "minimal_tokens": 3, "minimal_prefix": EVIL,
         "repro": "f1.py", "reproduces": True, "explanation": EVIL},
        {"id": "f2", "engine": "e", "version": "2", "signature": "s", "occurrences": 1,
         "specs": ["s/a"], "minimal_tokens": None, "minimal_prefix": None,
         "repro": "../../etc/passwd", "reproduces": False, "explanation": "x"},
    ],
    "instances": [],
    "instance_failures": [{"engine": "e", "kind": EVIL}],
    "instance_repros": [
        {"engine": "e", "kind": "k", "spec": "s", "repro": None, "explanation": EVIL},
        {"engine": "e", "kind": "k", "spec": "s", "repro": "javascript:alert(1)",
         "text": EVIL, "explanation": "y", "reproduces": True, "repro_output": ""},
    ],
    "cells": [{"spec": EVIL, "vocab": VOCAB, "status": "timeout"}],
}  # fmt: skip

JUMPFORWARD_JSON = {
    "summary": [{"set": EVIL, "engine": "tokensdfa", "forced_text_pct": 12.345, "notes": None}],
    "maskbench": [],
    "forced_text_disagreements": [
        {"spec_id": EVIL, "vocab": VOCAB, "prefix": EVIL, "step": 3,
         "forced": {"a": EVIL, "b": "x"}, "verdicts": {"a": "agree", "b": "overreach"}},
    ],
    "states_compared": 7,
    "skipped": [EVIL],
}  # fmt: skip


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> tuple[Store, Path]:
    """The run, stored, then written as a report from a read-only store."""
    tmp_path = tmp_path_factory.mktemp("report")
    build(tmp_path / "results.sqlite").close()
    out = tmp_path / RUN
    out.mkdir()
    (out / "diff.json").write_text(json.dumps(DIFF_JSON))
    (out / "jumpforward.json").write_text(json.dumps(JUMPFORWARD_JSON))
    readonly = Store(tmp_path / "results.sqlite", readonly=True)
    report.write(readonly, RUN, out)
    return readonly, out


def _headings(page: str) -> list[str]:
    return re.findall(r"<h2[^>]*>(.*?)</h2>", page)


def _assert_safe(page: str) -> None:
    """The page's one script is the shell's own (allowed by its hash alone), no data
    became markup, and every link is a file of the run directory."""
    ours = f'<script type="text/javascript">{SCRIPT}</script>'
    assert page.count(ours) == 1 and page.lower().count("<script") == 1
    assert (
        f"script-src 'sha256-{base64.b64encode(hashlib.sha256(SCRIPT.encode()).digest()).decode()}'"
        in page
    )
    assert "&lt;script&gt;" in page
    for target in re.findall(r'(?:href|src)="([^"]*)"', page):
        path, _, fragment = target.partition("#")
        assert local_href(path, fragment or None) is not None, target


def test_every_section_in_order(written: tuple[Store, Path]) -> None:
    _, out = written
    page = (out / "index.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and page.endswith("</body></html>")
    assert _headings(page) == list(SECTIONS)
    for name in ("summary.csv", "cells.csv", "preparations.csv", "scaling.csv",
                 "speedup.csv", "maskbench.csv", "compile_cdf.png", "mask_cdf.png",
                 "compile_vs_states.png", "memory_vs_states.png", "vocab_scaling.png",
                 "speedup.png"):  # fmt: skip
        assert (out / name).is_file(), name
        assert f'"{name}"' in page, name
    assert "From this run, vocabulary v1" in page
    assert 'href="jumpforward.html"' in page and 'href="diff.html"' in page


@pytest.mark.parametrize(
    ("name", "columns"),
    [
        ("summary.csv", csvs.SUMMARY),
        ("cells.csv", csvs.CELLS),
        ("preparations.csv", csvs.PREPARATIONS),
        ("scaling.csv", csvs.SCALING),
        ("speedup.csv", csvs.SPEEDUP),
        ("maskbench.csv", csvs.MASKBENCH),
    ],
)
def test_csv_headers_match_rows(
    written: tuple[Store, Path], name: str, columns: list[Column]
) -> None:
    _, out = written
    rows = list(csv.reader((out / name).open(encoding="utf-8")))
    assert rows[0] == headers(columns)
    assert len(rows) > 1
    assert all(len(r) == len(columns) for r in rows)


def test_csv_values(written: tuple[Store, Path]) -> None:
    _, out = written
    cells = list(csv.DictReader((out / "cells.csv").open(encoding="utf-8")))
    assert len(cells) == 12 + 2 + 2
    crash = next(c for c in cells if c["status"] == "crash")
    assert crash["message"] == f"'=cmd {EVIL}"  # no formula
    assert crash["compile_ms"] == ""
    first = cells[0]
    assert (first["engine"], first["spec"], first["compile_ms"]) == ("naive", "s/a", "1.0")
    assert first["mask_p50_us"] == "0.29" and first["steps"] == "20"
    summary = {r["engine"]: r for r in csv.DictReader((out / "summary.csv").open())}
    assert summary["naive"]["crash"] == "1" and summary["naive"]["ok"] == "4"
    assert summary["tokensdfa"]["memory_kind"] == "engine"
    assert summary["naive"]["memory_kind"] == "rss"
    scaling = list(csv.DictReader((out / "scaling.csv").open()))
    assert [(r["engine"], r["vocab_size"]) for r in scaling] == [
        ("naive", "1000"),
        ("outlines-core", "1000"),
        ("tokensdfa", "8"),
        ("tokensdfa", "16"),
        ("tokensdfa", "1000"),
    ]


def test_hostile_text_is_escaped_everywhere(written: tuple[Store, Path]) -> None:
    _, out = written
    page = (out / "index.html").read_text()
    _assert_safe(page)
    assert "disk full &lt;script&gt;" in page
    assert 'href="findings/f1.py"' in page
    assert "passwd" in page and 'href="findings/../../etc/passwd"' not in page
    _assert_safe(report.diff_page(DIFF_JSON, EVIL))
    _assert_safe(report.jumpforward_page(JUMPFORWARD_JSON))


def test_sessions_come_from_the_store(written: tuple[Store, Path]) -> None:
    _, out = written
    page = (out / "index.html").read_text()
    section = page.split("<h2>Sessions</h2>")[1].split("<h2>")[0]
    header = re.findall(r"<th(?: [^>]*)?>(.*?)</th>", section)
    assert header == ["started", "status", "jobs", "cells", "wall", "reason"]
    statuses = re.findall(r'<tr><td class="l">[^<]*</td><td class="l">(\w+)</td>', section)
    assert statuses == ["complete", "failed", "killed"]
    assert '"killed" session' in section
    assert "measured 1/2 at a time; a session was killed." in page


def test_summary_text(written: tuple[Store, Path]) -> None:
    store, _ = written
    lines = report.summary_text(store, RUN).splitlines()
    assert re.fullmatch(
        r"run r1: 16 cells \(14 main, 2 scaling, 0 batch\), wall \d+s over 3 session\(s\) "
        r"\(one killed\), 1/2 cell\(s\) at once",
        lines[0],
    )
    assert lines[1] == f"session 2: failed: disk full {EVIL}"
    assert lines[2] == "session 3: killed"
    assert lines[3].split() == [
        "engine", "vocab", "ok", "unsup", "failed", "compile", "p50", "compile", "p99",
        "TTFM", "p50", "mask", "p50", "mask", "p99", "mask", "max", "memory", "p50",
    ]  # fmt: skip
    rows = {line.split()[0]: line for line in lines[5:8]}
    assert rows.keys() == {"naive", "tokensdfa", "outlines-core"}
    assert "1 (1 crash)" in rows["naive"] and rows["naive"].endswith("rss")
    assert rows["tokensdfa"].endswith("2.0 KiB")
    assert lines[-1].startswith("compile/TTFM/mask percentiles")


def test_diff_page(written: tuple[Store, Path]) -> None:
    page = report.diff_page(DIFF_JSON, RUN)
    assert _headings(page) == [
        "Per engine",
        "Findings",
        "JSON schemas on instances (MaskBench's invalidation errors)",
        "Cells not compared",
    ]
    assert '<a href="findings/f1.py">findings/f1.py</a>' in page
    assert "javascript" in page and 'href="javascript' not in page
    # records of different keys line up under one header
    repros = page.split("<h3>Repros")[1].split("<h3>")[0]
    assert re.findall(r"<th(?: [^>]*)?>(.*?)</th>", repros) == [
        "engine", "kind", "spec", "repro", "explanation", "text", "reproduces", "repro_output",
    ]  # fmt: skip


def test_jumpforward_page_and_section(tmp_path: Path) -> None:
    page = report.jumpforward_page(JUMPFORWARD_JSON)
    assert '<td class="l">12.3</td>' in page and "7 states compared, 1 differing" in page
    assert "overreach" in page
    assert "Not measured" in "".join(report.jumpforward_section(tmp_path))
    (tmp_path / "jumpforward.json").write_text(json.dumps(JUMPFORWARD_JSON))
    section = "".join(report.jumpforward_section(tmp_path))
    assert "<td>12.3</td>" in section and "<td></td>" in section
    assert "7 states compared across engines, 1 with differing" in section


def test_column_table_and_helpers(tmp_path: Path) -> None:
    columns = [Column("n", lambda x: x), Column("twice", lambda x: 2 * x)]
    assert write_csv(tmp_path / "t.csv", columns, [1, 2]) == "t.csv"
    assert (tmp_path / "t.csv").read_text().splitlines() == ["n,twice", "1,2", "2,4"]
    assert table(["a", "b"], [[1, 2]] * 3, limit=2).endswith(
        '<p class="note">1 more rows in the CSV.</p>'
    )
    assert records([]) == "<p>(none)</p>"
    for bad in ("/etc/passwd", "../x", "a/../b", "javascript:x", ".hidden", "", "a b"):
        assert local_href(bad) is None, bad
    assert local_href("findings/x-1.py") == "findings/x-1.py"


def test_an_empty_run(tmp_path: Path) -> None:
    store = Store(tmp_path / "results.sqlite")
    store.create_run("empty", {})
    page = report.write(store, "empty", tmp_path / "empty").read_text()
    assert _headings(page) == [
        s for s in SECTIONS if s not in ("Vocabulary preparation", "Per spec")
    ]
    assert "No cell measured in this run yet." in page
    assert "No session recorded" in page and "This run has no scaling cells" in page
    assert report.summary_text(store, "empty").splitlines()[1] == "(no cells)"


def test_maskbench_from_the_latest_run_that_has_it(tmp_path: Path) -> None:
    store = Store(tmp_path / "results.sqlite")
    store.create_run("mb", {"options": {"sets": ["maskbench"]}})
    store.add_cell("mb", ("llguidance", "maskbench/Github_easy---a", "llama3", "main"), ok(1.0))
    store.create_run("later", {})
    store.add_cell("later", ("naive", "s/a", VOCAB, "main"), ok(1.0))
    page = report.write(store, "later", tmp_path / "later").read_text()
    assert "From run mb, vocabulary llama3" in page
    rows = list(csv.DictReader((tmp_path / "later" / "maskbench.csv").open()))
    assert [(r["engine"], r["ok"], r["published_mask_p50_us"]) for r in rows] == [
        ("llguidance", "1", "46")
    ]


def test_a_database_from_before_sessions(tmp_path: Path) -> None:
    path = tmp_path / "results.sqlite"
    with sqlite3.connect(path) as db:
        db.executescript(
            "CREATE TABLE runs (run TEXT PRIMARY KEY, created TEXT, meta TEXT);"
            "CREATE TABLE cells (run TEXT, engine TEXT, spec_id TEXT, vocab TEXT, study TEXT,"
            " status TEXT, message TEXT, metrics TEXT, finished TEXT);"
            "CREATE TABLE preparations (run TEXT, engine TEXT, vocab TEXT, status TEXT,"
            " message TEXT, metrics TEXT, finished TEXT);"
            "INSERT INTO runs VALUES ('old', '2025-01-01', '{}');"
            "INSERT INTO cells VALUES ('old', 'e', 's', 'v', 'main', 'ok', NULL,"
            " '{\"compile_ns\": 1000}', '2025-01-01');"
        )
    store = Store(path, readonly=True)
    assert "over 0 session(s)" in report.summary_text(store, "old")


# --- the verdict, one spec across engines, the shell's helpers ---------------------------


def _verdict(page: str) -> str:
    return page.split('<h2 id="verdict">Verdict</h2>')[1].split("<h2")[0]


def test_verdict_comes_first_with_figures_its_csv_holds(written: tuple[Store, Path]) -> None:
    _, out = written
    page = (out / "index.html").read_text()
    verdict = _verdict(page)
    groups = re.findall(r"<h3>(.*?) <span", verdict)
    assert groups == ["All sets · v1", "maskbench · v1", "s · v1"]
    s = verdict.split("<h3>s · v1")[1]
    assert (
        "<li><b>naive</b> has the fastest time to first mask: 2.00 ms median over 3 specs, "
        "1.50x faster than tokensdfa (3.00 ms).</li>"
    ) in s
    assert "<b>naive</b> and <b>tokensdfa</b> tie for the fastest mask at p99: 390 ns" in s
    assert "<b>tokensdfa</b> alone reports memory: 2.0 KiB median (its own figure)." in s
    assert "<b>naive</b> failed on 1 of 4 specs (1 crash)." in s
    assert "Memory not ranked for naive, outlines-core" in s
    assert "Figures compare the 3 of 4 specs every ranked engine ran ok." in s
    rows = list(csv.DictReader((out / "verdict.csv").open(encoding="utf-8")))
    ttfm = next(r for r in rows if (r["corpus"], r["measure"]) == ("s", "time to first mask"))
    assert (ttfm["engine"], ttfm["value"], ttfm["pooled"]) == ("naive", "2.005", "3")
    assert (ttfm["runner_up"], ttfm["runner_up_value"], ttfm["ratio"]) == (
        "tokensdfa",
        "3.005",
        "1.499",
    )


def test_verdict_names_the_bugs_of_the_diff_run_escaped(written: tuple[Store, Path]) -> None:
    _, out = written
    every = _verdict((out / "index.html").read_text()).split("<h3>maskbench")[0]
    assert (
        '<a href="diff.html">The differential test</a> found bugs in '
        f"<b>{escape(EVIL)}</b> (1 bug: mask-extra) and <b>e</b> (1 bug: s)."
    ) in every


def _cell(engine: str, spec: str, status: str, ttfm_ms: float = 1.0) -> Cell:
    result = ok(ttfm_ms) if status == "ok" else CellResult(Status(status), "x")
    return Cell(RUN, engine, spec, VOCAB, "main", status, None, result.metrics, "")


def test_an_engine_ok_on_fewer_than_half_the_specs_is_left_out() -> None:
    specs = [f"set/{i}" for i in range(4)]
    cells = [_cell("fast", specs[0], "ok", 0.1)]
    cells += [_cell("fast", spec, "timeout") for spec in specs[1:]]
    cells += [_cell("mid", spec, "ok", 2.0) for spec in specs]
    cells += [_cell("slow", spec, "ok", 5.0) for spec in specs]
    cells += [_cell(EVIL, spec, "unsupported") for spec in specs[:3]] + [
        _cell(EVIL, specs[3], "ok")
    ]
    group = verdict.judge("set", VOCAB, cells, ["fast", "mid", "slow", EVIL])
    assert group.ranked == ["mid", "slow"] and group.compared == specs
    ttfm = group.claims[0]
    assert (ttfm.best.engine, ttfm.runner_up and ttfm.runner_up.engine) == ("mid", "slow")
    html = verdict_section.group_html(group)
    assert "<b>fast</b> is left out: ok on 1 of 4 specs (3 timeout)." in html
    assert f"<b>{escape(EVIL)}</b> is left out: ok on 1 of 4 specs (3 unsupported)." in html
    assert "<script" not in html


def test_bugs_are_bugs_of_the_group_not_policies() -> None:
    def bug(engine: str, signature: str, spec: str, vocab: str = VOCAB) -> dict:
        return {"engine": engine, "signature": signature,
                "witnesses": [{"spec": spec, "vocab": vocab}]}  # fmt: skip

    def failure(engine: str, kind: str, policy: str | None = None) -> dict:
        return {"engine": engine, "kind": kind, "spec_id": "a/x", "vocab": VOCAB, "policy": policy}

    diff = {
        "cells": [{"spec": "a/x", "vocab": VOCAB}, {"spec": "b/y", "vocab": VOCAB}],
        "bugs": [
            bug("e1", "final-state-exit", "a/x"),
            bug("e1", "final-state-exit", "a/z"),
            bug("e2", "eos-bit-mismatch", "b/y"),
            bug("e3", "s", "a/x", vocab="other"),
        ],
        "instance_failures": [
            failure("naive", "false-acceptance"),
            failure("e2", "invalid-output", policy="json-escapes"),
            failure("e2", "disputed"),
        ],
    }
    found = verdict.bugs_in(diff, "a", VOCAB)
    assert found == [
        verdict.EngineBugs("e1", ["final-state-exit", "final-state-exit"], {}),
        verdict.EngineBugs("naive", [], {"false-acceptance": 1}),
    ]
    assert verdict.bugs_in(diff, "c", VOCAB) is None  # the diff never ran there
    group = verdict.Group("a", VOCAB, 1, [], [], [], bugs=found)
    sentence = verdict_section.bugs_sentence(group)
    assert sentence is not None and "<b>e1</b> (2 bugs: final-state-exit ×2)" in sentence
    assert (
        "schema-to-regex converter" in sentence
        and "1 instance failure: false-acceptance" in sentence
    )
    assert len(verdict.bugs_in(diff, verdict.ALL_SETS, VOCAB) or []) == 3


def test_instance_bug_kinds_are_the_differs() -> None:
    from harness.diff.findings.collector import INSTANCE_BUGS

    assert verdict.INSTANCE_BUGS == INSTANCE_BUGS


def test_specs_page_shows_each_spec_across_engines(written: tuple[Store, Path]) -> None:
    _, out = written
    index = (out / "index.html").read_text()
    assert '<a href="specs.html#spec-s-a">s/a</a>' in index
    specs = (out / "specs.html").read_text()
    _assert_safe(specs)
    section = specs.split('<h2 id="spec-s-c">s/c</h2>')[1].split("<h2")[0]
    assert re.findall(r'<tr><td class="l">(\w+)</td>', section) == ["naive", "tokensdfa"]
    assert "crash" in section and "&#x27;=cmd" not in section and "=cmd" in section


def test_tables_sort_collapse_and_anchor() -> None:
    long = table(["n"], [[i] for i in range(20)])
    assert long.startswith("<details><summary>20 rows (click to show)</summary><table><thead>")
    assert "<details>" not in table(["n"], [[1]])
    taken: set[str] = set()
    assert [anchor_id(t, taken) for t in ("a/b", "a:b", EVIL)] == [
        "spec-a-b", "spec-a-b-2", "spec-script-alert-x-script",
    ]  # fmt: skip
    assert local_href("specs.html", "spec-a") == "specs.html#spec-a"
    assert local_href("specs.html", 'x"><script>') is None
    assert markup("<b>{x}</b>", x=EVIL) == f"<b>{escape(EVIL)}</b>"
