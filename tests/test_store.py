"""The results store under stress: two controllers at once, a killed controller, a full
disk, read-only media, a damaged file; and the run lifecycle every kind of run shares
(`RunSession`: claimed, created or resumed, sessions and how they ended, SIGTERM), run
kinds instead of table names, typed run metadata."""

from __future__ import annotations

import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from harness.errors import BadInput, EnvironmentFailure
from harness.results import Status
from harness.results.metrics import CellResult
from harness.store import RunKind, RunMeta, RunSession, Store, pick_name

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
VOCAB = "synthetic-1000-0"


def bench(reports: Path, *extra: str, engines: str = "slow") -> subprocess.Popen[str]:
    env = {
        **os.environ,
        "TOKENSIEVE_EXTRA_ENGINES": "slow=test_runner:SlowEngine",
        "PYTHONPATH": os.pathsep.join([str(TESTS), str(ROOT)]),
    }
    argv = [
        sys.executable,
        "-m",
        "harness.cli",
        "bench",
        "--engines",
        engines,
        "--vocab",
        VOCAB,
        "--corpus",
        "outlines-bench",
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
        text=True,
        start_new_session=True,
    )


def wait_cells(db: Path, n: int, proc: subprocess.Popen[str], limit: float = 60) -> int:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        if db.exists():
            try:
                with sqlite3.connect(db) as con:
                    count = con.execute("SELECT count(*) FROM cells").fetchone()[0]
            except sqlite3.OperationalError:
                count = 0
            if count >= n:
                return int(count)
        time.sleep(0.05)
    raise AssertionError(f"fewer than {n} cells after {limit} s")


def test_a_second_controller_is_refused_while_the_first_works(tmp_path: Path) -> None:
    first = bench(tmp_path)
    wait_cells(tmp_path / "results.sqlite", 1, first)
    second = bench(tmp_path, "--resume")
    _, err = second.communicate(timeout=60)
    assert second.returncode == 2
    assert err.strip().splitlines() == [
        f"tokensieve bench: error: run r is being measured by process {first.pid}"
    ]
    _, err = first.communicate(timeout=120)
    assert first.returncode == 0, err
    with Store(tmp_path / "results.sqlite", readonly=True) as store:
        assert [s.status for s in store.sessions("r")] == ["complete"]
        assert len(store.cells("r")) == 9


def test_a_killed_session_counts_what_it_stored(tmp_path: Path) -> None:
    db = tmp_path / "results.sqlite"
    first = bench(tmp_path)
    stored = wait_cells(db, 2, first)
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()
    with Store(db, readonly=True) as store:
        (session,) = store.sessions("r")
        stored = len(store.cells("r"))
    assert session.status == "running" and session.killed and session.measured == stored
    again = bench(tmp_path, "--resume")
    _, err = again.communicate(timeout=120)
    assert again.returncode == 0, err
    with Store(db, readonly=True) as store:
        sessions = store.sessions("r")
    assert [s.measured for s in sessions] == [stored, 9 - stored]
    assert sessions[0].status == "killed" and sessions[1].status == "complete"


@contextmanager
def mounted_tmpfs(where: Path, size: str) -> Iterator[Path]:
    where.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True
    )
    if done.returncode:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {done.stderr.strip()!r}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def fill_disk(tmp_path: Path) -> tuple[str, int]:
    """A bench run into a tmpfs that fills up part way (its size found by trying a few):
    (its last stderr line, cells it stored). The database is copied to tmp_path/copy."""
    for size in ("160k", "192k", "224k", "256k"):
        where = tmp_path / f"small-{size}"
        with mounted_tmpfs(where, size) as small:
            run = bench(small, engines="naive")
            _, err = run.communicate(timeout=300)
            if run.returncode == 0:
                continue
            assert run.returncode == 1 and "Traceback" not in err, err
            shutil.rmtree(tmp_path / "copy", ignore_errors=True)
            shutil.copytree(small, tmp_path / "copy")
        with Store(tmp_path / "copy" / "results.sqlite", readonly=True) as store:
            kept = len(store.cells("r"))
        if kept:
            return err.strip().splitlines()[-1], kept
    raise AssertionError("no size filled the disk part way")


def test_a_full_disk_is_one_line_keeps_cells_and_resumes(tmp_path: Path) -> None:
    line, kept = fill_disk(tmp_path)
    assert line.startswith("tokensieve bench: error: disk full writing ")
    assert "results.sqlite" in line and 0 < kept < 9
    with Store(tmp_path / "copy" / "results.sqlite") as store:
        assert len(store.cells("r")) == kept
        (session,) = store.sessions("r")
        assert session.status in ("failed", "running")
        if session.status == "failed":
            assert "disk full" in str(session.reason)
    resumed = bench(tmp_path / "copy", "--resume", engines="naive")
    _, err = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, err
    with Store(tmp_path / "copy" / "results.sqlite", readonly=True) as store:
        assert len(store.cells("r")) == 9
        assert [s.status for s in store.sessions("r")][-1] == "complete"


def make_store(path: Path) -> None:
    with Store(path) as store:
        store.create_run("r", {"options": {}})
        number = store.start_session("r", "bench", 1, os.getpid())
        store.add_cell("r", ("e", "s/a", "v", "main"), CellResult(Status.OK), number)
        store.finish_session("r", "bench", number, "complete")


@contextmanager
def read_only_copy(tmp_path: Path) -> Iterator[Path]:
    """A reports directory holding a database, bind-mounted read-only (root), or made
    read-only by permissions (anyone else)."""
    source = tmp_path / "src"
    source.mkdir()
    make_store(source / "results.sqlite")
    target = tmp_path / "ro"
    target.mkdir()
    if os.geteuid() == 0:
        done = subprocess.run(["mount", "--bind", str(source), str(target)], capture_output=True)
        if done.returncode:
            pytest.skip(f"cannot bind-mount here: {done.stderr.strip()!r}")
        subprocess.run(["mount", "-o", "remount,ro,bind", str(target)], check=True)
        try:
            yield target
        finally:
            subprocess.run(["umount", "-l", str(target)], check=False)
    else:
        shutil.copytree(source, target, dirs_exist_ok=True)
        for p in target.iterdir():
            p.chmod(0o444)
        target.chmod(0o555)
        try:
            yield target
        finally:
            target.chmod(0o755)


def test_report_and_compare_read_a_read_only_database(tmp_path: Path) -> None:
    with read_only_copy(tmp_path) as ro:
        with pytest.raises(OSError):
            (ro / "probe").write_text("")
        with Store(ro / "results.sqlite", readonly=True) as store:
            assert [c.spec_id for c in store.cells("r")] == ["s/a"]
            assert [s.measured for s in store.sessions("r")] == [1]
        out = tmp_path / "out"
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        report = subprocess.run(
            [
                sys.executable,
                "-m",
                "harness.cli",
                "report",
                "r",
                "--reports-dir",
                str(ro),
                "--out",
                str(out),
            ],
            capture_output=True,
            text=True,
            env=env,
            cwd=ROOT,
        )
        assert report.returncode == 0, report.stderr
        assert (out / "index.html").is_file()
        compare = subprocess.run(
            [sys.executable, "-m", "harness.cli", "compare", "r", "r", "--reports-dir", str(ro)],
            capture_output=True,
            text=True,
            env=env,
            cwd=ROOT,
        )
        assert compare.returncode == 0, compare.stderr
        with pytest.raises(EnvironmentFailure, match="cannot write"):
            Store(ro / "results.sqlite")


def test_a_damaged_database_is_named_with_what_to_do(tmp_path: Path) -> None:
    path = tmp_path / "results.sqlite"
    make_store(path)
    data = bytearray(path.read_bytes())
    data[:16] = b"garbage garbage!"
    path.write_bytes(bytes(data))
    for readonly in (True, False):
        with pytest.raises(BadInput, match="move it aside"):
            Store(path, readonly=readonly)


# --- the run lifecycle, shared by every kind of run ------------------------------------------


def claimed(store: Store, kind: RunKind, resume: bool, lines: list[str]) -> RunSession:
    owner = RunSession(store, kind, "r", lines.append)
    if owner.claim(resume) is None:
        owner.create(RunMeta.new({"engines": ["e"]}, ["s/a", "s/b"]))
    return owner


def test_run_kinds_name_the_runs_never_a_table(tmp_path: Path) -> None:
    with Store(tmp_path / "results.sqlite") as store:
        store.create_run("r", RunMeta.new({}, ["s/a"]), RunKind.DIFF)
        assert store.find_run("r", RunKind.DIFF) is not None
        assert store.find_run("r") is None  # a bench run of that name is another run
        assert [r.name for r in store.runs(RunKind.DIFF)] == ["r"] and store.runs() == []
        assert store.runs(RunKind.JUMPFORWARD) == []
        for table in ("diff_runs", "runs; DROP TABLE cells", "cells"):
            with pytest.raises(ValueError):
                store.find_run("r", table)  # type: ignore[arg-type]
        with pytest.raises(ValueError):
            store.runs("sessions")  # type: ignore[arg-type]
        assert store.find_run("r", "diff") is not None  # a kind's value is the kind


def test_a_session_records_how_it_ended(tmp_path: Path) -> None:
    lines: list[str] = []
    with Store(tmp_path / "results.sqlite") as store:
        with claimed(store, RunKind.DIFF, False, lines) as owner, owner.session() as number:
            store.add_diff_cell("r", "s/a", "v", "ok", {"row": {}}, number)
        with claimed(store, RunKind.DIFF, True, lines) as owner:
            with pytest.raises(KeyboardInterrupt), owner.session() as number:
                store.add_diff_cell("r", "s/b", "v", "ok", {"row": {}}, number)
                raise KeyboardInterrupt
        with claimed(store, RunKind.DIFF, True, lines) as owner:
            with pytest.raises(EnvironmentFailure), owner.session():
                raise EnvironmentFailure("disk full writing\n the database")
        sessions = store.sessions("r", RunKind.DIFF)
    assert [(s.status, s.reason, s.measured) for s in sessions] == [
        ("complete", None, 1),
        ("interrupted", None, 1),
        ("failed", "disk full writing the database", 0),
    ]
    assert not any(s.killed for s in sessions)
    assert lines == [
        "\ninterrupted: 1 cells recorded this session; continue with: "
        "tokensieve diff --resume --run r"
    ]


def test_a_claim_refuses_a_taken_name_a_missing_run_and_a_held_lock(tmp_path: Path) -> None:
    lines: list[str] = []
    with Store(tmp_path / "results.sqlite") as store:
        with pytest.raises(BadInput, match=r"^no jumpforward run 'r' to resume in .*results"):
            claimed(store, RunKind.JUMPFORWARD, True, lines)
        first = claimed(store, RunKind.JUMPFORWARD, False, lines)
        with pytest.raises(BadInput, match=f"^run r is being measured by process {os.getpid()}"):
            claimed(store, RunKind.JUMPFORWARD, True, lines)
        assert claimed(store, RunKind.BENCH, False, lines).release() is None  # another kind
        first.release()
        with pytest.raises(BadInput, match=r"jumpforward run 'r' already exists in .* --resume"):
            claimed(store, RunKind.JUMPFORWARD, False, lines)
        # the failed claim let go of the lock: the run can be resumed at once
        again = claimed(store, RunKind.JUMPFORWARD, True, lines)
        assert again.meta.spec_ids == ["s/a", "s/b"]
        again.release()
        with pytest.raises(BadInput, match=r"; recorded runs: r$"):
            RunSession(store, RunKind.JUMPFORWARD, "other", lines.append).claim(True)


def test_sigterm_interrupts_a_session_and_its_handler_is_restored(tmp_path: Path) -> None:
    lines: list[str] = []
    before = signal.getsignal(signal.SIGTERM)
    with Store(tmp_path / "results.sqlite") as store:
        with claimed(store, RunKind.BENCH, False, lines) as owner:
            with pytest.raises(KeyboardInterrupt), owner.session(jobs=3):
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(5)  # the handler raises long before this ends
        (session,) = store.sessions("r")
    assert signal.getsignal(signal.SIGTERM) is before
    assert (session.status, session.jobs) == ("interrupted", 3)
    assert lines[-1].endswith("continue with: tokensieve bench --resume --run r")


def test_run_meta_is_typed_and_keeps_what_it_does_not_know(tmp_path: Path) -> None:
    meta = RunMeta.new({"engines": ["e"]}, ["s/a"], scaling_spec_ids=[], corpus_problems=[])
    assert meta.commit and meta.machine["host"] and meta.versions == {}
    assert RunMeta.from_json(meta.to_json()) == meta
    assert set(meta.to_json()) == {
        "options",
        "spec_ids",
        "scaling_spec_ids",
        "machine",
        "commit",
        "versions",
        "corpus_problems",
        "user_entries",
    }
    assert "scaling_spec_ids" not in RunMeta.new({}, []).to_json()  # bench's own keys
    lines: list[str] = []
    with Store(tmp_path / "results.sqlite") as store:
        store.create_run("r", {**meta.to_json(), "from_a_later_version": 7})
        with RunSession(store, RunKind.BENCH, "r", lines.append) as owner:
            stored = owner.claim(resume=True)
            assert stored is not None and stored.extra == {"from_a_later_version": 7}
            owner.record_versions({"e": "1.2"})
        kept = store.run("r").meta
    assert kept["versions"] == {"e": "1.2"} and kept["from_a_later_version"] == 7


def test_a_command_names_its_run(tmp_path: Path) -> None:
    with Store(tmp_path / "results.sqlite") as store:
        assert pick_name(store, RunKind.DIFF, "given", resume=True) == "given"
        with pytest.raises(BadInput, match=r"^--resume: no diff run recorded in "):
            pick_name(store, RunKind.DIFF, None, resume=True)
        with pytest.raises(BadInput, match=re.escape("run name '../x' is not allowed")):
            pick_name(store, RunKind.DIFF, "../x", resume=False)
        assert pick_name(store, RunKind.JUMPFORWARD, None, resume=False).startswith(
            "jumpforward-20"
        )
        assert pick_name(store, RunKind.BENCH, None, resume=False).startswith("20")
        for name in ("a", "b"):
            store.create_run(name, {}, RunKind.DIFF)
            time.sleep(1.1)  # `created` is to the second
        assert pick_name(store, RunKind.DIFF, None, resume=True) == "b"


# Each kind through the real command line: SIGTERM mid-run, then --resume.
KINDS = {
    RunKind.BENCH: ["bench", "--corpus", "outlines-bench", "--no-report"],
    RunKind.DIFF: [
        "diff",
        "--corpus",
        "outlines-bench",
        "--walks",
        "1",
        "--cover",
        "20",
        "--instances",
        "0",
        "--samples",
        "0",
        "--no-minimize",
    ],
    RunKind.JUMPFORWARD: ["jumpforward", "--corpus", "outlines-bench", "--paths", "1"],
}
CELLS = {
    RunKind.BENCH: "cells",
    RunKind.DIFF: "diff_cells",
    RunKind.JUMPFORWARD: "jumpforward_cells",
}


def command(kind: RunKind, reports: Path, *extra: str) -> subprocess.Popen[str]:
    env = {
        **os.environ,
        "TOKENSIEVE_EXTRA_ENGINES": "slow=test_runner:SlowEngine",
        "PYTHONPATH": os.pathsep.join([str(TESTS), str(ROOT)]),
    }
    engines = "tokensdfa,slow" if kind is RunKind.JUMPFORWARD else "slow"
    argv = [sys.executable, "-m", "harness.cli", *KINDS[kind], "--engines", engines]
    argv += ["--vocab", VOCAB, "--run", "r", "--reports-dir", str(reports), *extra]
    return subprocess.Popen(
        argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def stored(db: Path, table: str) -> int:
    try:
        with sqlite3.connect(db) as con:
            return int(con.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
    except sqlite3.OperationalError:
        return 0


@pytest.mark.parametrize("kind", list(RunKind))
def test_every_kind_ends_interrupted_on_sigterm_and_resumes(kind: RunKind, tmp_path: Path) -> None:
    db = tmp_path / "results.sqlite"
    first = command(kind, tmp_path)
    deadline = time.monotonic() + 120
    while stored(db, CELLS[kind]) < 1:
        assert first.poll() is None and time.monotonic() < deadline, first.communicate()
        time.sleep(0.05)
    first.send_signal(signal.SIGTERM)  # the controller only, as a service manager would
    out, err = first.communicate(timeout=60)
    assert first.returncode == 130, err
    assert f"continue with: tokensieve {kind} --resume --run r" in out + err
    assert "Traceback" not in err
    with Store(db, readonly=True) as store:
        (session,) = store.sessions("r", kind)
        kept = stored(db, CELLS[kind])
    assert session.status == "interrupted" and session.measured == kept and 1 <= kept < 9
    again = command(kind, tmp_path, "--resume")
    _, err = again.communicate(timeout=300)
    assert again.returncode == 0, err
    with Store(db, readonly=True) as store:
        sessions = store.sessions("r", kind)
        meta = RunMeta.from_json(store.run("r", kind).meta)
    assert [s.status for s in sessions] == ["interrupted", "complete"]
    assert [s.measured for s in sessions] == [kept, 9 - kept]  # each cell stored once
    assert stored(db, CELLS[kind]) == 9 and len(meta.spec_ids) == 9 and meta.machine
