"""`tokensieve check` for a user's CI: exit codes per --fail-on, every output format, the
JUnit file parsed back, and the Python API."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from harness.check import check
from harness.check import model as check_model
from harness.store import RunKind, RunMeta, Store

ROOT = Path(__file__).resolve().parents[1]
# outlines-core 0.2.14 drops '.' after 'a' (finish-and-continue): a real bug to fail on.
BUGGY = r"a(\.a)*"
FINE = "[0-9]{2}"


def run_check(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    argv = [
        sys.executable,
        "-m",
        "harness.cli",
        "check",
        "--regex",
        BUGGY,
        "--regex",
        FINE,
        "--vocab",
        "synthetic-1000-3",
        "--engines",
        "outlines-core,tokensdfa",
        "--reports-dir",
        str(tmp_path / "r"),
        *extra,
    ]
    return subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, timeout=600)


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> check_model.CheckResult:
    pytest.importorskip("outlines_core")
    where = tmp_path_factory.mktemp("check")
    return check(
        [],
        "synthetic-1000-3",
        engines_=["outlines-core", "tokensdfa"],
        regexes=[BUGGY, FINE],
        reports_dir=where / "r",
    )


def test_the_api_finds_the_bug_and_names_the_fastest_correct_engine(
    result: check_model.CheckResult,
) -> None:
    buggy, fine = result.specs
    outcomes = {e.engine: e.outcome for e in buggy.engines}
    assert outcomes == {"outlines-core": "bug", "tokensdfa": "ok"}
    (finding,) = next(e for e in buggy.engines if e.engine == "outlines-core").findings
    assert finding.signature == "final-state-exit" and finding.reproduces is True
    assert finding.repro and Path(finding.repro).is_file()
    assert "fastest correct: tokensdfa" in buggy.verdict and "wrong: outlines-core" in buggy.verdict
    assert {e.outcome for e in fine.engines} == {"ok"}
    for e in fine.engines:
        assert e.compile_ns and e.ttfm_ns and e.mask_p50_ns is not None and e.states > 0
    assert result.failing(("bug",)) == [("user/regex#1", "outlines-core", "bug")]
    json.dumps(result.to_json())


def test_both_halves_are_runs_with_their_sessions(result: check_model.CheckResult) -> None:
    """The bench half and the diff half share the run name, each a run of its kind with
    typed metadata and one complete session; `report RUN` reads the bench half."""
    with Store(Path(result.reports_dir) / "results.sqlite", readonly=True) as store:
        for kind, cells in ((RunKind.BENCH, 4), (RunKind.DIFF, 2)):
            meta = RunMeta.from_json(store.run(result.run, kind).meta)
            assert meta.spec_ids == ["user/regex#1", "user/regex#2"] and meta.machine["host"]
            assert len(meta.user_entries) == 2  # a resumed half would need no file
            (session,) = store.sessions(result.run, kind)
            assert (session.status, session.measured) == ("complete", cells)
        assert store.run(result.run).meta["versions"]["tokensdfa"]
    assert (Path(result.reports_dir) / result.run / "diff.html").is_file()


@pytest.mark.parametrize(
    ("fail_on", "code"), [("bug", 1), ("error,timeout", 0), ("unsupported", 0), ("ok", 1)]
)
def test_exit_code_follows_fail_on(tmp_path: Path, fail_on: str, code: int) -> None:
    pytest.importorskip("outlines_core")
    done = run_check(tmp_path, "--fail-on", fail_on, "--format", "json")
    assert done.returncode == code, done.stderr
    data = json.loads(done.stdout)
    assert [s["spec_id"] for s in data["specs"]] == ["user/regex#1", "user/regex#2"]


def test_markdown_and_junit(tmp_path: Path) -> None:
    pytest.importorskip("outlines_core")
    junit = tmp_path / "out" / "junit.xml"
    junit.parent.mkdir()  # check never creates a directory the user did not name
    done = run_check(tmp_path, "--format", "markdown", "--junit-xml", str(junit))
    assert done.returncode == 1, done.stderr
    assert "| engine | outcome |" in done.stdout and "Verdict:" in done.stdout
    assert "Traceback" not in done.stderr
    root = ET.parse(junit).getroot()
    assert root.tag == "testsuites"
    (suite,) = root.findall("testsuite")
    cases = suite.findall("testcase")
    assert int(suite.get("tests", 0)) == len(cases) == 4
    failed = [(c.get("classname"), c.get("name")) for c in cases if c.find("failure") is not None]
    assert failed == [("user/regex#1", "outlines-core")] and suite.get("failures") == "1"
    assert all(float(c.get("time", -1)) >= 0 for c in cases)


def test_batch_steps_join_the_check(tmp_path: Path) -> None:
    pytest.importorskip("outlines_core")
    extra = ["--batch", "1,4", "--threads", "1,2", "--batch-steps", "5", "--format", "json"]
    done = run_check(tmp_path, *extra)
    assert done.returncode == 1, done.stderr  # the bug still fails it
    data = json.loads(done.stdout)
    shapes = {(b["engine"], b["threads"], b["size"], b["status"]) for b in data["batches"]}
    assert shapes == {
        (e, t, b, "ok") for e in ("outlines-core", "tokensdfa") for t in (1, 2) for b in (1, 4)
    }
    assert all(b["p99_ns"] > 0 for b in data["batches"])
    assert "at 10 ms per step (p99): " in data["batch_verdict"]
    assert "tokensdfa serves 4 sequences" in data["batch_verdict"]
    # the specs' rows are the bench half's main cells alone
    assert [len(s["engines"]) for s in data["specs"]] == [2, 2]
    again = subprocess.run(
        [
            sys.executable,
            "-m",
            "harness.cli",
            "check",
            "--resume",
            "--batch",
            "1",
            "--reports-dir",
            str(tmp_path / "r"),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert again.returncode == 2 and "drop --batch" in again.stderr


def test_bad_check_inputs_are_one_line(tmp_path: Path) -> None:
    for extra, expected in (
        (["--fail-on", "sometimes"], "unknown outcome 'sometimes'"),
        (["--vocab", "gpt2,tekken"], "check takes one vocabulary"),
        (["no/such/thing"], "neither a spec file or directory nor a corpus spec id"),
    ):
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "harness.cli",
                "check",
                "--regex",
                "a",
                *extra,
                "--reports-dir",
                str(tmp_path),
            ],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=120,
        )
        assert done.returncode == 2 and expected in done.stderr, done.stderr
        assert done.stderr.count("\n") == 1
