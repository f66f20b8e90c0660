"""Every bad input through the real command line, in a subprocess: exit code 2 (1 for a
failing environment), exactly one line on stderr naming the input, never a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness import engines
from harness.errors import SpecError
from harness.spec import Spec
from harness.vocab import synthetic

ROOT = Path(__file__).resolve().parents[1]


def tokensieve(*argv: str, cwd: Path = ROOT, env: dict[str, str] | None = None):
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


def one_line(done: subprocess.CompletedProcess[str], code: int, *named: str) -> str:
    err = done.stderr.strip()
    assert done.returncode == code, (done.returncode, done.stdout[-2000:], err)
    assert "Traceback" not in err, err
    lines = err.splitlines()
    assert len(lines) == 1, lines
    for text in named:
        assert text in lines[0], (text, lines[0])
    return lines[0]


CASES = [
    (["bench", "--timeout", "nan"], ["--timeout", "'nan'"]),
    (["bench", "--converter", "regex"], ["--converter", "'regex'"]),
    (["check", "x/y", "--converter", ""], ["--converter", "''"]),
    (["bench", "--timeout", "inf"], ["--timeout", "'inf'"]),
    (["bench", "--timeout", "-3"], ["--timeout", "'-3'"]),
    (["bench", "--memory-limit", "inf"], ["--memory-limit", "'inf'"]),
    (["bench", "--memory-limit", "nan"], ["--memory-limit", "'nan'"]),
    (["bench", "--memory-limit", "0.5"], ["--memory-limit", "'0.5'"]),
    (["bench", "--memory-limit", "lots"], ["--memory-limit", "'lots'"]),
    (["bench", "--engines", ","], ["--engines", "empty list"]),
    (["bench", "--engines", "nope"], ["--engines", "'nope'"]),
    (["bench", "--vocab", "gpt2[:0]"], ["--vocab", "gpt2[:0]"]),
    (["bench", "--vocab", "synthetic-0-0"], ["--vocab", "synthetic-0-0"]),
    (["bench", "--vocab", "nope"], ["--vocab", "'nope'"]),
    (["bench", "--corpus", "nope"], ["--corpus", "'nope'"]),
    (["bench", "--limit-specs", "0"], ["--limit-specs"]),
    (["bench", "--jobs", "0"], ["--jobs"]),
    (["bench", "--run", "../../escape"], ["--run", "../../escape"]),
    (["bench", "--run", ".hidden"], ["--run", ".hidden"]),
    (["bench", "--run", "a b"], ["--run", "a b"]),
    (["diff", "--run", "../x"], ["--run", "../x"]),
    (["diff", "--timeout", "inf"], ["--timeout"]),
    (["diff", "--vocab", "tekken,nope"], ["--vocab", "'nope'"]),
    (["jumpforward", "--run", "../x"], ["--run", "../x"]),
    (["jumpforward", "--memory-limit", "0.5"], ["--memory-limit"]),
    (["gate", "--vocab", "nope"], ["--vocab", "'nope'"]),
    (["gate", "--specs", "outlines-bench/nope"], ["--specs", "outlines-bench/nope"]),
    (["gate", "--reports-dir", "x", "--rounds", "0"], ["--rounds"]),
    (["report", "../x"], ["RUN", "../x"]),
    (["compare", "a", "../b"], ["RUN_B", "../b"]),
    (["compare", "a", "b", "--threshold", "nan"], ["--threshold"]),
    (["corpora", "--vocab", "synthetic-1-1"], ["--vocab", "synthetic-1-1"]),
    (["corpora", "show", "outlines-bench/nope"], ["outlines-bench/nope"]),
    (["vocab", "gpt2[:0]"], ["gpt2[:0]"]),
    (["vocab", "nope"], ["'nope'"]),
    (["no-such-command"], ["no-such-command"]),
]


@pytest.mark.parametrize(("argv", "named"), CASES, ids=[" ".join(a) for a, _ in CASES])
def test_bad_value_is_one_line_exit_2(argv: list[str], named: list[str], tmp_path: Path) -> None:
    done = tokensieve(*argv, cwd=tmp_path)
    one_line(done, 2, *named)
    assert not (tmp_path / "escape").exists() and not (tmp_path.parent / "escape").exists()


def test_reports_dir_that_is_not_a_database(tmp_path: Path) -> None:
    (tmp_path / "results.sqlite").write_bytes(b"this is not a database, it is a note\n" * 200)
    for argv in (["report", "r"], ["compare", "a", "b"], ["bench", "--vocab", "gpt2"]):
        line = one_line(tokensieve(*argv, "--reports-dir", str(tmp_path)), 2)
        assert str(tmp_path / "results.sqlite") in line and "move it aside" in line


def test_report_without_a_database(tmp_path: Path) -> None:
    line = one_line(tokensieve("report", "r", "--reports-dir", str(tmp_path / "none")), 2)
    assert "no results database" in line
    assert not (tmp_path / "none").exists()


def write_maskbench(folder: Path) -> None:
    folder.mkdir()
    good = {"schema": {"type": "integer"}, "tests": [{"data": 3, "valid": True}]}
    (folder / "Good_a.json").write_text(json.dumps(good))
    (folder / "Broken_b.json").write_text('{"schema": {"type": "integer"},\n "tests": [')
    (folder / "NoSchema_c.json").write_text('{"tests": []}')


def test_malformed_maskbench_file_is_named_and_skipped(tmp_path: Path) -> None:
    folder = tmp_path / "mb"
    write_maskbench(folder)
    done = tokensieve("corpora", "--corpus-dir", str(folder), "--no-convert")
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if "warning" in line]
    assert len(warnings) == 2 and "Traceback" not in done.stderr
    assert any("Broken_b.json: not valid JSON at line 2" in w for w in warnings)
    assert any("NoSchema_c.json" in w for w in warnings)
    maskbench_row = next(line for line in done.stdout.splitlines() if line.startswith("maskbench"))
    assert " 1 " in f" {maskbench_row} "  # the one good file


def test_malformed_maskbench_file_is_fatal_when_strict(tmp_path: Path) -> None:
    folder = tmp_path / "mb"
    write_maskbench(folder)
    done = tokensieve(
        "bench",
        "--corpus",
        "maskbench",
        "--corpus-dir",
        str(folder),
        "--strict-corpus",
        "--engines",
        "naive",
        "--vocab",
        "synthetic-1000-0",
        "--reports-dir",
        str(tmp_path / "reports"),
    )
    one_line(done, 2, "Broken_b.json", "not valid JSON")


@pytest.mark.parametrize("name", engines.ENGINE_NAMES)
def test_every_adapter_refuses_a_lone_surrogate_as_spec_error(name: str) -> None:
    engine = engines.get(name)
    ok, why = engine.available()
    if not ok:
        pytest.skip(why)
    vocab = synthetic(1000, 0)
    prepared = engine.prepare(vocab)
    for spec in (Spec.regex("t/surrogate", "a\udcff"), Spec.schema("t/s", '{"enum": ["\udcff"]}')):
        with pytest.raises(SpecError, match="t/s"):
            engine.compile(prepared, spec)


def test_cli_never_names_a_traceback_for_an_unwritable_reports_dir(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        blocked = tmp_path / "ro"
        blocked.mkdir()
        blocked.chmod(0o500)
    else:  # root ignores permissions: a file where the directory should be
        blocked = tmp_path / "file"
        blocked.write_text("")
    done = tokensieve("bench", "--vocab", "gpt2", "--reports-dir", str(blocked / "reports"))
    one_line(done, 1, str(blocked))
