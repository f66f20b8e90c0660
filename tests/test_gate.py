"""The CI gate: threshold parsing and comparison, and the whole gate failing on a
deliberately slowed TokensDFA (eager, lazy and pushdown) while passing on the real one, both with
the repo's thresholds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from harness import engines
from harness import vocab as vocabularies
from harness.engines.base import Compiled, Engine, Matcher
from harness.engines.rust_index import IndexCompiled
from harness.engines.tokensdfa import (
    TokensDFAEngine,
    TokensDFALazyEngine,
    TokensDFAPushdownEngine,
)
from harness.errors import TokensieveError
from harness.gate import DEFAULT_THRESHOLDS, Check, Threshold, load_thresholds, run_gate
from harness.spec import Spec

pytest.importorskip("tokensdfa")
pytest.importorskip("outlines_core")
pytest.importorskip("llguidance")

SPECS = ("outlines-bench/date", "outlines-bench/ip")
# How much more work the slowed TokensDFA does: the real index built this many times per
# compile, and each mask filled this many times.
SLOWDOWN = 40


def test_check_edges() -> None:
    at_least = Threshold("x", "min", 2.0)
    assert Check("x", 2.0, at_least).ok and not Check("x", 1.99, at_least).ok
    at_most = Threshold("y", "max", 2.0)
    assert Check("y", 2.0, at_most).ok and not Check("y", 2.01, at_most).ok
    line = Check("x", 1.5, at_least).line()
    assert line.startswith("FAIL") and "x" in line and "1.50" in line and ">= 2" in line


def test_repo_thresholds_parse() -> None:
    found = load_thresholds(DEFAULT_THRESHOLDS)
    assert set(found) == {
        "compile_speedup_over_naive",
        "compile_speedup_over_outlines_core",
        "fill_over_numpy_copy_p50",
        "fill_over_numpy_copy_p99",
        "lazy_ttfm_over_llguidance",
        "lazy_revisit_fill_over_numpy_copy_p99",
        "pushdown_ttfm_over_llguidance",
        "pushdown_schema_ttfm_over_lazy",
    }


@pytest.mark.parametrize(
    "text",
    ["[a]\nmin = 1\nmax = 2\n", "[a]\nwhy = 'no limit'\n", "a = 3\n", "[a\n", "[a]\nmin = 'x'\n"],
)
def test_bad_thresholds_file_is_one_line_error(tmp_path: Path, text: str) -> None:
    path = tmp_path / "t.toml"
    path.write_text(text)
    with pytest.raises(TokensieveError) as info:
        load_thresholds(path)
    assert str(path) in str(info.value) and "\n" not in str(info.value)


class _SlowMatcher(Matcher):
    def __init__(self, inner: Matcher) -> None:
        self.inner = inner

    def fill_mask(self, out: np.ndarray) -> None:
        for _ in range(SLOWDOWN):
            self.inner.fill_mask(out)

    def advance(self, token_id: int) -> bool:
        return self.inner.advance(token_id)

    def is_accepting(self) -> bool:
        return self.inner.is_accepting()

    def reset(self) -> None:
        self.inner.reset()


class _SlowCompiled(Compiled):
    def __init__(self, inner: IndexCompiled) -> None:
        self.inner = inner

    def matcher(self) -> Matcher:
        return _SlowMatcher(self.inner.matcher())


class SlowedTokensDFA(TokensDFAEngine):
    """TokensDFA doing SLOWDOWN times its real work: what a regression would look like."""

    def build_index(self, regex: str, native_vocab: Any) -> Any:
        for _ in range(SLOWDOWN - 1):
            super().build_index(regex, native_vocab)
        return super().build_index(regex, native_vocab)

    def compile(self, prepared: Any, spec: Spec) -> Compiled:
        return _SlowCompiled(super().compile(prepared, spec))


class SlowedTokensDFALazy(TokensDFALazyEngine):
    """The lazy index doing SLOWDOWN times its real work: each throwaway index also
    computes its first mask (else building it would cost next to nothing)."""

    def build_index(self, regex: str, native_vocab: Any) -> Any:
        out = np.zeros((len(native_vocab) + 31) // 32, dtype=np.int32)
        for _ in range(SLOWDOWN - 1):
            index = super().build_index(regex, native_vocab)
            index.fill_mask(index.initial_state, out)
        return super().build_index(regex, native_vocab)

    def compile(self, prepared: Any, spec: Spec) -> Compiled:
        return _SlowCompiled(super().compile(prepared, spec))


class SlowedTokensDFAPushdown(TokensDFAPushdownEngine):
    """The pushdown mode doing SLOWDOWN times its real work: each throwaway index also
    computes its first mask."""

    def compile(self, prepared: Any, spec: Spec) -> Compiled:
        out = np.zeros(prepared.vocab.mask_words, dtype=np.int32)
        for _ in range(SLOWDOWN - 1):
            super().compile(prepared, spec).matcher().fill_mask(out)
        return super().compile(prepared, spec)


SLOWED = {
    "tokensdfa": SlowedTokensDFA,
    "tokensdfa-lazy": SlowedTokensDFALazy,
    "tokensdfa-pushdown": SlowedTokensDFAPushdown,
}


def _factory(slow: bool):  # type: ignore[no-untyped-def]
    def make(name: str) -> Engine:
        return SLOWED[name]() if slow and name in SLOWED else engines.get(name)

    return make


def test_gate_fails_on_slowed_tokensdfa_and_passes_on_the_real_one() -> None:
    vocab = vocabularies.load("llama3")
    thresholds = load_thresholds(DEFAULT_THRESHOLDS)
    real, _ = run_gate(vocab, SPECS, thresholds, rounds=3, reps=10, engine_factory=_factory(False))
    assert all(c.ok for c in real), [c.line() for c in real]
    slowed, _ = run_gate(vocab, SPECS, thresholds, rounds=2, reps=5, engine_factory=_factory(True))
    failed = {c.name for c in slowed if not c.ok}
    assert failed == set(thresholds), [c.line() for c in slowed]
    for c in slowed:
        line = c.line()
        assert line.startswith("FAIL") and c.name in line and f"{c.ratio:.2f}" in line
        assert f"{c.threshold.limit:g}" in line
