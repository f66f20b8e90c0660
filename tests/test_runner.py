"""The runner's failure statuses, resume and reports, with deliberately failing engines.

The fake engines below are the naive reference with one fault each, chosen by spec name
(outlines-bench's nine regexes, on a small synthetic vocabulary). Workers build them
from TOKENSIEVE_EXTRA_ENGINES, so the production registry never sees them.
"""

from __future__ import annotations

import ctypes
import io
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil
import pytest

from harness import cli, report
from harness.bench.controller import Runner
from harness.bench.options import Options
from harness.bench.plan import scaling_selection
from harness.corpora import spread
from harness.engines.naive import NaiveEngine
from harness.engines.rust_index import IndexCompiled
from harness.errors import SpecError, UnsupportedSpec
from harness.figures import parse_bytes, percentile, summarize
from harness.report import compare
from harness.results import Status
from harness.results.metrics import CellMetrics, CellResult
from harness.spec import Spec
from harness.store import Cell, RunKind, Store
from harness.vocab import Vocabulary

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
VOCAB = "synthetic-1000-0"
SET = "outlines-bench"
EXTRA = (
    "faulty=test_runner:FaultyEngine,badprep=test_runner:BadPrepEngine,"
    "missing=test_runner:MissingEngine,slow=test_runner:SlowEngine,"
    "absent=test_runner:AbsentEngine"
)


# --- fake engines (run inside workers) ---------------------------------------------------


def _allocate_forever() -> None:
    """Touch fresh memory as fast as it goes; stops at 2.5 GiB (then hangs) so a runner
    that fails to kill it costs a timeout, not the machine."""
    chunks = []
    for _ in range(40):
        chunks.append(b"\x01" * (64 << 20))  # written, so resident
        time.sleep(0.005)
    time.sleep(3600)


class CrashingCount(IndexCompiled):
    def num_states(self) -> int | None:
        os.abort()


class FaultyEngine(NaiveEngine):
    name = "faulty"

    def compile(self, prepared: Any, spec: Spec) -> Any:
        what = spec.id.split("/", 1)[1]
        if what == "date":
            print("faulty: reading address 0 next", file=sys.stderr, flush=True)
            ctypes.string_at(0)
        elif what == "time":
            print("faulty: aborting next", file=sys.stderr, flush=True)
            os.abort()
        elif what == "ip":
            time.sleep(3600)
        elif what == "url":
            _allocate_forever()
        elif what == "email":
            raise SpecError(self.name, spec.id, "deliberately invalid")
        elif what == "ssn":
            raise UnsupportedSpec(self.name, spec.id, "deliberately unsupported")
        elif what == "simple_phone":  # dies counting states, after its timings are sent
            index = super().compile(prepared, spec).index
            return CrashingCount(index, prepared.vocab.eos_id, self.name, spec.id)
        return super().compile(prepared, spec)


class BadPrepEngine(NaiveEngine):
    name = "badprep"

    def prepare(self, vocab: Vocabulary) -> Any:
        os.abort()


class MissingEngine(NaiveEngine):
    """An engine whose package is there but fails to import (a broken install)."""

    name = "missing"

    def version(self) -> str:
        raise ImportError("No module named 'missing_package'")


class AbsentEngine(NaiveEngine):
    """An engine whose package is not installed at all, with the extra that installs it."""

    name = "absent"
    extra = "absent-extra"
    module = "tokensieve_no_such_package"


class SlowEngine(NaiveEngine):
    name = "slow"

    def compile(self, prepared: Any, spec: Spec) -> Any:
        time.sleep(0.3)
        return super().compile(prepared, spec)


@pytest.fixture
def extra_engines(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    path = os.pathsep.join(filter(None, [str(TESTS), str(ROOT), os.environ.get("PYTHONPATH")]))
    monkeypatch.setenv("TOKENSIEVE_EXTRA_ENGINES", EXTRA)
    monkeypatch.setenv("PYTHONPATH", path)
    return {**os.environ}


# --- failure statuses ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def faulty_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Store, str, float]:
    """One run of the failing engines, two workers at a time; shared by several tests."""
    mp = pytest.MonkeyPatch()
    mp.setenv("TOKENSIEVE_EXTRA_ENGINES", EXTRA)
    mp.setenv("PYTHONPATH", os.pathsep.join([str(TESTS), str(ROOT)]))
    store = Store(tmp_path_factory.mktemp("reports") / "results.sqlite")
    options = Options(
        engines=("faulty", "badprep", "missing", "absent"),
        vocabs=(VOCAB,),
        sets=(SET,),
        timeout=4.0,
        memory_limit=parse_bytes("700M"),
        jobs=2,
    )
    started = time.monotonic()
    try:
        Runner(store, "faulty", options, stream=io.StringIO()).run()
    finally:
        mp.undo()
    return store, "faulty", time.monotonic() - started


def _statuses(store: Store, run: str, engine: str) -> dict[str, Cell]:
    return {c.spec_id.split("/", 1)[1]: c for c in store.cells(run) if c.engine == engine}


def test_each_fault_costs_only_its_cell(faulty_run: tuple[Store, str, float]) -> None:
    store, run, _ = faulty_run
    cells = _statuses(store, run, "faulty")
    assert {k: c.status for k, c in cells.items()} == {
        "email": "error",
        "complex_phone": "ok",
        "simple_phone": "ok",
        "date": "crash",
        "time": "crash",
        "ip": "timeout",
        "url": "oom",
        "ssn": "unsupported",
        "complex_span_constrained_relation_extraction": "ok",
    }
    assert "SIGSEGV" in (cells["date"].message or "")
    assert "reading address 0 next" in (cells["date"].message or "")  # stderr tail
    assert "SIGABRT" in (cells["time"].message or "")
    assert "ran over 4 s" in (cells["ip"].message or "")
    assert "passed the limit of 700.0 MiB" in (cells["url"].message or "")
    assert "deliberately invalid" in (cells["email"].message or "")
    assert cells["ssn"].message == "deliberately unsupported"
    ok = cells["complex_phone"].metrics
    assert ok.compile_ns and ok.ttfm_ns and ok.ttfm_ns >= ok.compile_ns
    assert ok.fill["n"] == len(ok.fill_ns) > 0
    assert ok.num_states and ok.engine_memory_bytes
    counted = cells["simple_phone"].metrics
    assert counted.compile_ns and counted.num_states is None
    assert str(counted.states_error).startswith("crash: killed by signal SIGABRT")


def test_a_worker_restarts_after_each_fatal_cell(faulty_run: tuple[Store, str, float]) -> None:
    store, run, _ = faulty_run
    preps = [p for p in store.preparations(run) if p.engine == "faulty"]
    # the first worker, then one after each of crash (counting states), crash, crash,
    # timeout and oom
    assert [p.status for p in preps] == ["ok"] * 6
    assert len({p.metrics.pid for p in preps}) == 6


def test_preparation_failures_cover_the_whole_group(faulty_run: tuple[Store, str, float]) -> None:
    store, run, _ = faulty_run
    badprep = _statuses(store, run, "badprep")
    assert len(badprep) == 9
    assert {c.status for c in badprep.values()} == {"crash"}
    assert all("vocabulary preparation failed" in (c.message or "") for c in badprep.values())
    missing = _statuses(store, run, "missing")
    assert {c.status for c in missing.values()} == {"error"}
    assert all("missing_package" in (c.message or "") for c in missing.values())


def test_an_engine_not_installed_is_unsupported_with_its_install_line(
    faulty_run: tuple[Store, str, float], extra_engines: dict[str, str]
) -> None:
    """Its cells end `unsupported` with the one command that installs it, decided before
    any worker starts; `tokensieve engines` lists it the same way."""
    store, run, _ = faulty_run
    absent = _statuses(store, run, "absent")
    assert len(absent) == 9 and {c.status for c in absent.values()} == {"unsupported"}
    line = "tokensieve_no_such_package is not installed; install it with: pip install "
    assert all(line + "'tokensieve[absent-extra]'" in (c.message or "") for c in absent.values())
    assert not [p for p in store.preparations(run) if p.engine == "absent"]
    listed = subprocess.run(
        [sys.executable, "-m", "harness.cli", "engines"],
        capture_output=True, text=True, env=extra_engines, cwd=ROOT, timeout=300,
    )  # fmt: skip
    (row,) = [x for x in listed.stdout.splitlines() if x.startswith("absent ")]
    assert "unavailable: " + line + "'tokensieve[absent-extra]'" in row


def test_the_run_stays_within_its_limits(faulty_run: tuple[Store, str, float]) -> None:
    _, _, seconds = faulty_run
    assert seconds < 40  # one 4 s timeout, a few worker restarts, two at a time


def test_report_writes_every_table_and_plot(
    faulty_run: tuple[Store, str, float], tmp_path: Path
) -> None:
    store, run, _ = faulty_run
    index = report.write(store, run, tmp_path / run)
    page = index.read_text()
    for name in (
        "summary.csv",
        "cells.csv",
        "preparations.csv",
        "compile_cdf.png",
        "mask_cdf.png",
        "compile_vs_states.png",
        "memory_vs_states.png",
    ):
        assert (tmp_path / run / name).is_file(), name
        assert f'"{name}"' in page
    assert "SIGSEGV" in page and "http" not in page.split("<body>")[1].split("Generated")[0]
    text = report.summary_text(store, run)
    assert "faulty" in text and "2 crash" in text


# --- resume ----------------------------------------------------------------------------------


def _bench(reports: Path, env: dict[str, str], *extra: str) -> subprocess.Popen[bytes]:
    argv = [
        sys.executable,
        "-m",
        "harness.cli",
        "bench",
        "--engines",
        "slow",
        "--vocab",
        VOCAB,
        "--corpus",
        SET,
        "--run",
        "r",
        "--reports-dir",
        str(reports),
        "--no-report",
        *extra,
    ]
    return subprocess.Popen(
        argv,
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        preexec_fn=_interruptible,
    )


def _interruptible() -> None:
    """Ctrl-C at its default in the controller, as in a terminal: a shell that starts
    the test suite in the background (`make test &`) leaves SIGINT ignored, children
    inherit that, and Python then keeps it ignored."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _wait_cells(db: Path, n: int, proc: subprocess.Popen[bytes], limit: float = 30.0) -> int:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        if db.exists():
            with sqlite3.connect(db) as con:
                try:
                    count = con.execute("SELECT count(*) FROM cells").fetchone()[0]
                except sqlite3.OperationalError:
                    count = 0
            if count >= n:
                return int(count)
        time.sleep(0.05)
    raise AssertionError(f"fewer than {n} cells after {limit} s")


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def test_a_killed_run_resumes_without_measuring_a_cell_twice(
    tmp_path: Path, extra_engines: dict[str, str]
) -> None:
    db = tmp_path / "results.sqlite"
    first = _bench(tmp_path, extra_engines)
    after_kill = _wait_cells(db, 2, first)
    first.kill()  # SIGKILL: no cleanup at all
    first.wait()
    with Store(db) as store:
        pids = [p.metrics.pid for p in store.preparations("r")]
        after_kill = len(store.cells("r"))
    deadline = time.monotonic() + 5
    while not all(map(_gone, pids)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert all(map(_gone, pids)), "a worker outlived its killed controller"

    second = _bench(tmp_path, extra_engines, "--resume")
    _wait_cells(db, after_kill + 2, second)
    second.send_signal(signal.SIGINT)  # Ctrl-C: stops cleanly, keeps what finished
    _, err = second.communicate(timeout=30)
    assert second.returncode == 130, err
    assert b"--resume --run r" in err

    third = _bench(tmp_path, extra_engines, "--resume", "--engines", "slow")
    out, err = third.communicate(timeout=60)
    assert third.returncode == 0, err
    with Store(db) as store:
        cells = store.cells("r")
        sessions = store.sessions("r")
    keys = [c.key for c in cells]
    assert len(keys) == len(set(keys)) == 9  # the primary key would refuse a second insert
    assert {c.status for c in cells} == {"ok"}
    assert [s.status for s in sessions] == ["killed", "interrupted", "complete"]
    assert [s.killed for s in sessions] == [True, False, False]
    # counted from the cells, so the killed session keeps what it stored
    assert [s.measured for s in sessions] == [
        after_kill,
        sum(s.measured for s in sessions[1:2]),
        9 - after_kill - sessions[1].measured,
    ]
    assert b"slow" in out


def test_resume_refuses_changed_cell_options(tmp_path: Path, extra_engines: dict[str, str]) -> None:
    with Store(tmp_path / "results.sqlite") as store:
        store.create_run("r", {"options": Options(engines=("slow",), vocabs=(VOCAB,)).to_json()})
    err = io.StringIO()
    code = _cli(
        ["bench", "--resume", "--run", "r", "--engines", "naive", "--reports-dir", str(tmp_path)],
        err,
    )
    assert code == 2 and "--engines differs" in err.getvalue()


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["bench", "--resume"], "--resume: no run recorded in "),
        (["bench", "--resume", "--run", "nope"], "unknown run (in "),
        (["bench", "--resume", "--regex", "a"], "drop --spec/--regex"),
        (["diff", "--resume"], "--resume: no diff run recorded in "),
        (["diff", "--resume", "--run", "nope"], "no diff run 'nope' to resume in "),
        (["bench", "--run", "taken", "--vocab", VOCAB], "run 'taken' already exists in "),
        (["diff", "--run", "taken", "--vocab", VOCAB], "diff run 'taken' already exists in "),
    ],
)
def test_resume_and_run_name_errors_are_one_line(
    argv: list[str], expected: str, tmp_path: Path
) -> None:
    with Store(tmp_path / "results.sqlite") as store:
        if "taken" in argv:
            store.create_run("taken", {})
            store.create_run("taken", {}, RunKind.DIFF)
    err = io.StringIO()
    assert _cli([*argv, "--reports-dir", str(tmp_path)], err) == 2
    lines = err.getvalue().strip().splitlines()
    assert len(lines) == 1 and expected in lines[0], lines


# --- one-line errors for bad input ---------------------------------------------------------


def _cli(argv: list[str], err: io.StringIO) -> int:
    saved = sys.stderr
    sys.stderr = err
    try:
        return cli.main(argv)
    finally:
        sys.stderr = saved


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["bench", "--engines", "nope"], "unknown engine 'nope'"),
        (["bench", "--vocab", "nope"], "unknown vocabulary 'nope'"),
        (["bench", "--corpus", "nope"], "unknown corpus set 'nope'"),
        (["bench", "--memory-limit", "lots"], "--memory-limit: not a memory size: 'lots'"),
        (["report", "nope"], "unknown run"),
        (["compare", "a", "b"], "unknown run"),
    ],
)
def test_bad_input_is_one_line_naming_it(argv: list[str], expected: str, tmp_path: Path) -> None:
    Store(tmp_path / "results.sqlite").close()
    err = io.StringIO()
    assert _cli([*argv, "--reports-dir", str(tmp_path)], err) == 2
    message = err.getvalue().strip()
    assert expected in message and "\n" not in message


def test_report_without_a_database_says_so(tmp_path: Path) -> None:
    err = io.StringIO()
    assert _cli(["report", "x", "--reports-dir", str(tmp_path / "none")], err) == 2
    assert "no results database" in err.getvalue()
    assert not (tmp_path / "none").exists()


# --- pieces --------------------------------------------------------------------------------


def test_percentiles_are_nearest_rank() -> None:
    values = list(range(1, 101))
    assert percentile(values, 0.5) == 50 and percentile(values, 0.99) == 99
    assert percentile([7], 0.99) == 7
    s = summarize([3, 1, 2, 10])
    assert (s["p50"], s["p90"], s["max"], s["mean"]) == (2, 10, 10, 4)
    assert summarize([]) == {"n": 0}


def test_store_refuses_a_cell_twice(tmp_path: Path) -> None:
    with Store(tmp_path / "db.sqlite") as store:
        store.create_run("r", {})
        store.add_cell("r", ("e", "s/a", "v", "main"), CellResult(Status.OK))
        with pytest.raises(sqlite3.IntegrityError):
            store.add_cell("r", ("e", "s/a", "v", "main"), CellResult(Status.CRASH))
        with pytest.raises(ValueError, match="weird"):
            CellResult(Status("weird"))


def test_spread_covers_the_whole_set() -> None:
    specs = [Spec.regex(f"s/{i}", "a") for i in range(10)]
    assert [s.id for s in spread(specs, 3)] == ["s/0", "s/3", "s/6"]
    assert spread(specs, None) == specs and spread(specs, 50) == specs


def test_scaling_selection_alternates_kinds() -> None:
    specs = [
        Spec.regex("a/1", "x"),
        Spec.regex("b/1", "x"),
        Spec.schema("c/1", {}),
        Spec.regex("a/2", "x"),
    ]
    assert [s.id for s in scaling_selection(specs, 3)] == ["a/1", "c/1", "b/1"]


def _cell(engine: str, compile_ns: int, p50: float, p90: float, status: str = "ok") -> Cell:
    metrics = CellMetrics(
        compile_ns=compile_ns,
        ttfm_ns=compile_ns,
        fill={"n": 10, "p50": p50, "p90": p90},
        advance={"n": 0},
    )
    return Cell("r", engine, "s/x", "v", "main", status, None, metrics, "")


def test_compare_flags_only_changes_beyond_noise() -> None:
    a = [_cell("fast", 10_000_000, 1000, 1100), _cell("noisy", 10_000_000, 1000, 3000)]
    b = [_cell("fast", 30_000_000, 400, 450), _cell("noisy", 10_500_000, 2000, 2500)]
    found, status_changes = compare.changes(a, b, 1.25, 100e3)
    flagged = {(c.engine, c.metric): round(c.ratio, 2) for c in found if not c.noisy}
    # "noisy" doubled its mask p50, but its own p90/p50 spread is 3x: not beyond noise
    assert flagged == {("fast", "compile"): 3.0, ("fast", "ttfm"): 3.0, ("fast", "mask p50"): 0.4}
    assert status_changes == []
    _, status_changes = compare.changes(a, [_cell("fast", 1, 1, 1, status="timeout")], 1.25, 0)
    assert [(x.status, y.status) for x, y in status_changes] == [("ok", "timeout")]
