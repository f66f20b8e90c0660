"""The worker side of a bench cell group: built once per (engine, vocabulary) in a worker
process (`harness.process`), it loads and prepares the vocabulary (timed, reported as the
worker's `ready` value), then answers two requests:

- `{"op": "cell", "spec", "paths", "max_steps"}`: measure one cell
  (`harness.bench.measure`); the answer is the cell's result, and whether a state count
  follows;
- `{"op": "states"}`: count the states of the cell just measured. Asked separately, with
  its own short time limit: some engines build their whole transition table to count;
- `{"op": "batch", "spec_id", "specs", "paths", "steps"}`: measure one batch cell
  (`harness.bench.batch`) over the given specs and their token paths.
"""

from __future__ import annotations

import platform
from typing import Any

from harness import engines, vocab
from harness.bench.batch import measure_batch
from harness.bench.measure import count_states, measure_cell, settle
from harness.engines.base import Compiled
from harness.figures import clock
from harness.process.memory import rss
from harness.results.metrics import PrepareMetrics
from harness.spec import Spec

CALIBRATION_WORDS = 4008  # one llama3-sized mask (128,256 ids)
CALIBRATION_REGEX = "[a-z]+( [a-z0-9]+)*"


def calibrate(rounds: int = 5) -> dict[str, int]:
    """This machine's speed on two fixed tasks, best of `rounds` each (ns): copying one
    llama3-sized bitset, and building the naive index of a fixed regex over a fixed
    synthetic vocabulary (a walk of its token trie). Two rows from different hosts can be
    compared through these, never directly."""
    import numpy as np

    from harness.language import reference

    src = np.ones(CALIBRATION_WORDS, dtype=np.int32)
    dst = np.zeros_like(src)
    copies, walks = [], []
    native = reference.native_vocabulary(vocab.synthetic(2000, 0))
    for _ in range(rounds):
        started = clock()
        np.copyto(dst, src)
        copies.append(clock() - started)
        started = clock()
        reference.tokensdfa().NaiveIndex(CALIBRATION_REGEX, native)
        walks.append(clock() - started)
    return {"bitset_copy_ns": min(copies), "trie_walk_ns": min(walks)}


class BenchService:
    def __init__(self, setup: dict[str, Any]) -> None:
        self.engine = engines.get(setup["engine"])
        version = self.engine.version()
        self.vocab = vocab.load(setup["vocab"])
        self.walk_budget_s = float(setup["walk_budget_s"])
        settle()
        before = rss()
        started = clock()
        self.prepared = self.engine.prepare(self.vocab)
        prepare_ns = clock() - started
        self.ready = PrepareMetrics(
            prepare_ns=prepare_ns,
            rss_before=before,
            rss_growth_bytes=rss() - before,
            vocab_size=self.vocab.size,
            version=version,
            host=platform.node(),
            calibration=calibrate(),
        ).to_json()
        self._compiled: Compiled | None = None

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        if request["op"] == "states":
            compiled, self._compiled = self._compiled, None
            return count_states(compiled) if compiled is not None else {}
        self._compiled = None
        if request["op"] == "batch":
            batch = measure_batch(
                self.engine,
                self.prepared,
                self.vocab,
                [Spec.from_json(s) for s in request["specs"]],
                request["paths"],
                request["spec_id"],
                int(request["steps"]),
                self.walk_budget_s,
            )
            return {"result": batch.to_json(), "states_follow": False}
        result, compiled = measure_cell(
            self.engine,
            self.prepared,
            self.vocab,
            Spec.from_json(request["spec"]),
            request["paths"],
            int(request["max_steps"]),
            self.walk_budget_s,
        )
        self._compiled = compiled
        return {"result": result.to_json(), "states_follow": compiled is not None}
