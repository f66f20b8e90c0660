"""The size check `make lint` runs (`python -m tests.code_size`): it names every module
over 500 lines (Python and Rust) and every Python function over 80, and passes on this
repository."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import code_size
import pytest

REPO = Path(__file__).resolve().parents[1]


def _function(name: str, lines: int) -> str:
    """A function of exactly `lines` lines, `def` line included."""
    return f"def {name}() -> None:\n" + "    pass\n" * (lines - 1)


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_offenders_are_named_and_fail(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write(tmp_path, "harness/fine.py", _function("at_limit", 80) + "\n" + "x = 1\n" * 419)
    _write(tmp_path, "harness/long.py", "import os\n\n\n" + _function("too_long", 81))
    _write(tmp_path, "tests/big.py", "x = 1\n" * 501)
    nested = "class A:\n    def method(self) -> None:\n" + "        pass\n" * 81
    _write(tmp_path, "benchmarks/nested.py", nested)
    _write(tmp_path, "engines/core/src/big.rs", "// line\n" * 501)
    _write(tmp_path, "engines/core/src/fine.rs", "// line\n" * 500)
    _write(tmp_path, "engines/target/debug/build/generated.rs", "// line\n" * 900)
    _write(tmp_path, "docs/elsewhere.py", "x = 1\n" * 900)  # outside the checked trees

    assert code_size.main([str(tmp_path)]) == 1
    assert capsys.readouterr().out.splitlines() == [
        "benchmarks/nested.py:2: function method is 82 lines (limit 80)",
        "engines/core/src/big.rs:1: module is 501 lines (limit 500)",
        "harness/long.py:4: function too_long is 81 lines (limit 80)",
        "tests/big.py:1: module is 501 lines (limit 500)",
    ]


def test_a_tree_within_the_limits_passes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write(tmp_path, "harness/fine.py", _function("at_limit", 80) + "x = 1\n" * 420)
    _write(tmp_path, "engines/core/src/fine.rs", "// line\n" * 500)
    assert code_size.main([str(tmp_path)]) == 0
    assert capsys.readouterr().out == ""


def test_this_repository_is_within_the_limits() -> None:
    """As `make lint` runs it: a module, from the repository root."""
    done = subprocess.run(
        [sys.executable, "-m", "tests.code_size"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
