"""asv suites: compile time and peak memory, mask latency, index size, and TokensDFA's
speedup over the naive index, parametrized over engine x spec x vocabulary.

The selection is small on purpose (a full `make dashboard` takes minutes on 2 cores):
three specs that every regex engine compiles (a short regex, a Unicode-class regex, a
small JSON schema), one grammar (JSON in GBNF, for the grammar engines and TokensDFA's
pushdown mode) and the two vocabularies the project benchmarks on. A combination an
engine cannot run (a regex for the pushdown mode, a grammar for a regex engine) is
skipped (NotImplementedError in setup), never counted as zero.
"""

from __future__ import annotations

import statistics
import time
from typing import Any, ClassVar

import numpy as np

from harness import corpora, engines
from harness import vocab as vocabularies
from harness.corpora import paths
from harness.errors import TokensieveError
from harness.figures import percentile
from harness.language import converter

ENGINES = [
    "naive",
    "outlines-core",
    "llguidance",
    "xgrammar",
    "tokensdfa",
    "tokensdfa-lazy",
    "tokensdfa-pushdown",
    "lm-format-enforcer",
    "formatron",
]
REGULAR_SPECS = ["outlines-bench/date", "outlines-bench/email", "handwritten/chat-reply"]
SPECS = [*REGULAR_SPECS, "grammars/gbnf-json"]
VOCABS = ["llama3", "tekken"]


def _prepare(engine_name: str, vocab_name: str) -> tuple[Any, Any, Any]:
    engine = engines.get(engine_name)
    ok, why = engine.available()
    if not ok:
        raise NotImplementedError(f"{engine_name} unavailable: {why}")
    vocab = vocabularies.load(vocab_name)
    return engine, engine.prepare(vocab), vocab


def _compile(engine: Any, prepared: Any, spec: Any) -> Any:
    try:
        return engine.compile(prepared, spec)
    except TokensieveError as exc:
        raise NotImplementedError(str(exc)) from exc


class _Base:
    # asv reads these class attributes; they are never mutated
    params: ClassVar = [ENGINES, SPECS, VOCABS]
    param_names: ClassVar = ["engine", "spec", "vocab"]
    number = 1
    repeat = (1, 3, 30.0)
    rounds = 1
    warmup_time = 0.0
    timeout = 300.0

    def setup(self, engine: str, spec: str, vocab: str) -> None:
        self.engine, self.prepared, self.vocab = _prepare(engine, vocab)
        self.spec = converter.with_regex(corpora.get(spec))
        # compiles once here, so an unsupported combination is skipped before timing
        self.compiled = _compile(self.engine, self.prepared, self.spec)


class Compile(_Base):
    def time_compile(self, engine: str, spec: str, vocab: str) -> None:
        self.engine.compile(self.prepared, self.spec)

    def peakmem_compile(self, engine: str, spec: str, vocab: str) -> None:
        # peak resident size of the benchmark process: the prepared vocabulary included
        self.engine.compile(self.prepared, self.spec)


class Mask(_Base):
    def setup(self, engine: str, spec: str, vocab: str) -> None:
        super().setup(engine, spec, vocab)
        found = [p for p in paths.paths_for(self.spec, self.vocab, n=2) if p.exact]
        if not found:
            raise NotImplementedError(f"no token path for {spec} on {vocab}")
        self.path = found[0].ids
        self.out = np.zeros(self.vocab.mask_words, dtype=np.int32)

    def time_mask_step(self, engine: str, spec: str, vocab: str) -> None:
        """One mask at every state of a token path, advancing in between; asv divides
        nothing, so the figure is per path (its length is in the spec's paths cache)."""
        m = self.compiled.matcher()
        for token in self.path:
            m.fill_mask(self.out)
            m.advance(token)
        m.fill_mask(self.out)

    def _step_times(self) -> list[int]:
        m = self.compiled.matcher()
        times = []
        for token in [*self.path, None]:
            t0 = time.perf_counter_ns()
            m.fill_mask(self.out)
            times.append(time.perf_counter_ns() - t0)
            if token is None or not m.advance(token):
                break
        return times

    def track_mask_p50_ns(self, engine: str, spec: str, vocab: str) -> float:
        return float(statistics.median(self._step_times()))

    track_mask_p50_ns.unit = "ns"  # type: ignore[attr-defined]

    def track_mask_p99_ns(self, engine: str, spec: str, vocab: str) -> float:
        return float(percentile(self._step_times(), 0.99))

    track_mask_p99_ns.unit = "ns"  # type: ignore[attr-defined]


class Index(_Base):
    def setup(self, engine: str, spec: str, vocab: str) -> None:
        super().setup(engine, spec, vocab)
        self.size = self.compiled.memory_bytes()
        if self.size is None:  # asv skips a combination only when setup raises
            raise NotImplementedError(f"{engine} reports no index size")

    def track_index_bytes(self, engine: str, spec: str, vocab: str) -> int:
        return int(self.size or 0)

    track_index_bytes.unit = "bytes"  # type: ignore[attr-defined]


class Speedup:
    """naive compile / TokensDFA compile, interleaved in one process (a ratio, so the
    machine's load cancels out); on the specs both read."""

    params: ClassVar = [REGULAR_SPECS, VOCABS]
    param_names: ClassVar = ["spec", "vocab"]
    rounds = 1
    timeout = 300.0

    def setup(self, spec: str, vocab: str) -> None:
        self.naive, self.naive_prepared, _ = _prepare("naive", vocab)
        self.fast, self.fast_prepared, _ = _prepare("tokensdfa", vocab)
        self.spec = converter.with_regex(corpora.get(spec))

    def track_speedup_over_naive(self, spec: str, vocab: str) -> float:
        naive, fast = [], []
        for _ in range(5):
            t0 = time.perf_counter_ns()
            self.naive.compile(self.naive_prepared, self.spec)
            t1 = time.perf_counter_ns()
            self.fast.compile(self.fast_prepared, self.spec)
            t2 = time.perf_counter_ns()
            naive.append(t1 - t0)
            fast.append(t2 - t1)
        return statistics.median(naive) / statistics.median(fast)

    track_speedup_over_naive.unit = "x"  # type: ignore[attr-defined]
