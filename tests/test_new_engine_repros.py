"""The standalone repro scripts the differ writes for lm-format-enforcer and Formatron:
a mask repro and an instance repro each run in a bare interpreter (no harness) and report
REPRODUCED or FIXED.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from new_engine_helpers import NESTED_SCHEMA, NEW_ENGINES, mask_of, tiny_matcher
from test_engines import _available

from harness.diff.findings import instance_repro, repro
from harness.diff.judge.instances import FALSE_REJECTION
from harness.diff.shrink.minimal import Minimal
from harness.engines.base import Engine
from harness.spec import Spec


def _minimal(
    name: str, engine: Engine, regex: str, tokens: list[bytes], prefix: tuple[int, ...]
) -> Minimal:
    """The engine's own mask after `prefix` as `actual`, and a wrong `expected`, so the
    script must report REPRODUCED (it compares the engine with EXPECTED)."""
    vocab, matcher = tiny_matcher(engine, tokens, Spec.regex("t/r", regex))
    for t in prefix:
        assert matcher.advance(t)
    actual = sorted(mask_of(matcher, vocab))
    return Minimal(
        engine=name,
        version=engine.version(),
        regex=regex,
        rule="unclassified",
        tokens=tuple(vocab.tokens),
        prefix_ids=prefix,
        expected=tuple(sorted(set(actual) ^ {1})),
        actual=tuple(actual),
        accepting_expected=False,
        accepting_actual=matcher.is_accepting(),
        what="mask",
    )


@pytest.mark.parametrize("name", NEW_ENGINES)
def test_mask_repro_runs_standalone(name: str, tmp_path: Path) -> None:
    engine = _available(name)
    tokens = [b"a", b"b", b"ab", "é".encode(), "é".encode()[:1], b"\xff"]
    m = _minimal(name, engine, "(a|é)+b", tokens, prefix=(1, 4))
    assert 2 in m.actual and 0 not in m.actual  # "aé" goes on with "b"
    path = tmp_path / "repro.py"
    path.write_text(repro.script(m, {}, f"{name} test", "a test"))
    reproduced, output = repro.run(path)
    assert reproduced, output
    fixed = tmp_path / "fixed.py"
    fixed.write_text(repro.script(Minimal(**{**m.__dict__, "expected": m.actual}), {}, "t", "t"))
    reproduced, output = repro.run(fixed)
    assert not reproduced and "FIXED" in output, output
    assert "harness" not in path.read_text()
    # the advance half of the script: the advance taken, the state after it as expected
    vocab, matcher = tiny_matcher(engine, tokens, Spec.regex("t/r", "(a|é)+b"))
    for t in (1, 4, 1):
        assert matcher.advance(t)
    after = tuple(sorted(mask_of(matcher, vocab)))
    took = Minimal(**{**m.__dict__, "what": "advance", "expected": (1,), "next_expected": after})
    adv = tmp_path / "advance.py"
    adv.write_text(repro.script(took, {}, "t", "t"))
    done = subprocess.run([sys.executable, "-I", adv.name], cwd=tmp_path, capture_output=True)
    output = done.stdout.decode(errors="replace")
    assert done.returncode == 0 and "advance returned True" in output, output
    assert output.rstrip().endswith("FIXED"), output


@pytest.mark.parametrize("name", NEW_ENGINES)
def test_instance_repro_runs_standalone(name: str, tmp_path: Path) -> None:
    _available(name)
    schema = NESTED_SCHEMA
    good = json.dumps({"s": 'é"x', "n": 2, "a": [True]}, ensure_ascii=False)
    bad = json.dumps({"s": "x", "n": 2, "a": ["no"]})
    for text, expect in ((good, "FIXED"), (bad, "FIXED")):
        kind = FALSE_REJECTION if text == good else "false-acceptance"
        r = instance_repro.InstanceRepro(name, name, kind, schema, text, why="test")
        path = tmp_path / f"{kind}.py"
        path.write_text(instance_repro.script(r, "t", "t"))
        done = subprocess.run(
            [sys.executable, "-I", path.name], cwd=tmp_path, capture_output=True, text=True
        )
        assert expect in done.stdout, done.stdout + done.stderr
        assert "harness" not in path.read_text()
