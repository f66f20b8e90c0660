"""Batch cells: one decoding step of a server for B sequences at once, measured in the
worker process that runs the cell.

A batch cell is (engine, batch size B, threads T, vocabulary); its spec id names the
shape (`batch/B64-T2`, `batch_id`), and the specs it draws on are the run's (its main
study's). In the worker:
- every spec is compiled once; those the engine refuses or fails on are left out (and
  counted), those with no token path too;
- sequence i walks token path (i // n) mod (its spec's paths) of spec i mod n, n being
  the specs kept: a mixed batch, as a server's is, held as the engine holds one
  (`Engine.sequences`: TokensDFA's `tokensdfa.Batch`, else a matcher per sequence);
- each step is timed whole (`Sequences.step` on T threads: the engine's batch API
  where it has one, else the loop a server runs): every sequence takes its next token,
  then the masks of all B are written, the CPU work a server does between two forward
  passes. A sequence whose path is over, or whose token its engine refused, is reset
  before the next step, untimed: a new request taking the finished one's place, which
  takes no token in its first step (nor does any sequence in the first step of all);
- `batch_steps` steps, or fewer once `walk_budget_s` has passed (the cell is then
  `truncated`); the garbage collector is paused during the steps;
- memory per sequence: the worker's resident-set growth over making the B matchers and
  taking the first step, divided by B (the compiled specs are made before and shared).

The figures are the step times (p50, p99, max). No other cell runs beside a batch cell
(`harness.bench.controller` runs them one at a time, after every other cell), so the
engine's thread pool has the machine to itself.
"""

from __future__ import annotations

import gc
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from harness.engines.base import Compiled, Engine
from harness.errors import EngineError, TokensieveError
from harness.figures import clock, summarize
from harness.process.memory import rss
from harness.results.metrics import CellMetrics, CellResult
from harness.results.status import Status
from harness.spec import Spec
from harness.vocab import Vocabulary

STUDY = "batch"
_SHAPE = re.compile(r"batch/B(\d+)-T(\d+)")


def batch_id(size: int, threads: int) -> str:
    """The spec id of a batch cell of `size` sequences on `threads` threads."""
    return f"batch/B{size}-T{threads}"


def batch_shape(spec_id: str) -> tuple[int, int]:
    """(size, threads) of a batch cell's spec id."""
    found = _SHAPE.fullmatch(spec_id)
    if found is None:
        raise ValueError(f"not a batch cell id: {spec_id!r}")
    return int(found.group(1)), int(found.group(2))


class _Paths:
    """B sequences of `engine`'s, each on its own token path, restarted when the path is
    over. `at[i]`: the tokens sequence i has taken; `fresh[i]`: it has had no mask since
    it started, so it takes no token in the next step."""

    def __init__(
        self,
        engine: Engine,
        compiled: Sequence[Compiled],
        paths: Sequence[Sequence[Sequence[int]]],
        size: int,
    ):
        n = len(compiled)
        self.paths = [paths[i % n][(i // n) % len(paths[i % n])] for i in range(size)]
        self.sequences = engine.sequences([compiled[i % n] for i in range(size)])
        self.at = [0] * size
        self.fresh = [True] * size

    def restart_finished(self) -> None:
        over = [i for i, at in enumerate(self.at) if at >= len(self.paths[i])]
        if over:
            self.sequences.reset(over)
            for i in over:
                self.at[i] = 0
                self.fresh[i] = True

    def tokens(self) -> list[int]:
        """The token each sequence takes in the next step (-1: none)."""
        return [
            -1 if fresh else path[at]
            for path, at, fresh in zip(self.paths, self.at, self.fresh, strict=True)
        ]

    def moved(self, tokens: Sequence[int], took: Sequence[bool]) -> int:
        """Step each sequence on; one whose token was refused ends its path. Returns how
        many were refused."""
        refused = 0
        for i, (token, ok) in enumerate(zip(tokens, took, strict=True)):
            self.fresh[i] = False
            if token < 0:
                continue
            if ok:
                self.at[i] += 1
            else:
                refused += 1
                self.at[i] = len(self.paths[i])
        return refused


def _compiled_specs(
    engine: Engine,
    prepared: Any,
    specs: Sequence[Spec],
    paths: Mapping[str, Sequence[Sequence[int]]],
) -> tuple[list[Compiled], list[Sequence[Sequence[int]]], int]:
    """The specs this engine compiles that have a token path, their paths, and how many
    of the specs were left out."""
    compiled: list[Compiled] = []
    kept: list[Sequence[Sequence[int]]] = []
    for spec in specs:
        usable = [p for p in paths.get(spec.id, ()) if p]
        if not usable:
            continue
        try:
            compiled.append(engine.compile(prepared, spec))
        except TokensieveError:
            continue
        kept.append(usable)
    return compiled, kept, len(specs) - len(compiled)


def measure_batch(
    engine: Engine,
    prepared: Any,
    voc: Vocabulary,
    specs: Sequence[Spec],
    paths: Mapping[str, Sequence[Sequence[int]]],
    spec_id: str,
    steps: int,
    walk_budget_s: float,
) -> CellResult:
    """The result of batch cell `spec_id` (see the module doc)."""
    size, threads = batch_shape(spec_id)
    compiled, kept, left_out = _compiled_specs(engine, prepared, specs, paths)
    if not compiled:
        return CellResult(
            Status.UNSUPPORTED,
            f"no spec of the run compiles with a token path ({left_out} left out)",
        )
    deadline = clock() + int(walk_budget_s * 1e9)
    before = rss()
    batch = _Paths(engine, compiled, kept, size)
    out = np.zeros((size, voc.mask_words), dtype=np.int32)
    times: list[int] = []
    refused = 0
    grown = 0
    gc.disable()
    try:
        while len(times) < steps and (not times or clock() < deadline):
            batch.restart_finished()
            tokens = batch.tokens()
            started = clock()
            took = batch.sequences.step(tokens, out, threads)
            times.append(clock() - started)
            refused += batch.moved(tokens, took)
            if len(times) == 1:
                grown = rss() - before
    except EngineError as exc:
        return CellResult(Status.ERROR, str(exc))
    finally:
        gc.enable()
    metrics = CellMetrics(
        batch_size=size,
        threads=threads,
        step_ns=times,
        step=summarize(times),
        batch_specs=len(compiled),
        batch_left_out=left_out,
        batch_refused=refused,
        sequence_bytes=max(0, grown) // size,
        truncated=len(times) < steps or None,
        vocab_size=voc.size,
    )
    return CellResult(Status.OK, None, metrics)
