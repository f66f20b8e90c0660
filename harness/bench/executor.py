"""Running cell groups on workers: the thread side of a bench run.

Each of the run's `jobs` threads takes one group (engine x vocabulary) at a time and runs
it on a worker process (`harness.process.Worker` serving `harness.bench.service`): the
worker prepares the vocabulary once, then measures the group's cells one by one. A cell
that times out, blows its memory limit or crashes its worker costs only that cell; the
group's other cells go to a fresh worker, which prepares again.

Threads never touch the store: they put events on a queue that the controller's main
thread writes down (`Prepared`, `Measured`). On Ctrl-C the controller sets `cancel`,
which kills every worker at once; a cell cut short that way is never reported, so
`--resume` measures it again.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from harness import engines
from harness.bench.batch import STUDY as BATCH_STUDY
from harness.bench.options import Options
from harness.bench.plan import SCALING_STEPS, CellPlan, Group
from harness.process import Reply, Worker
from harness.results import Status
from harness.results.metrics import CellMetrics, CellResult, PrepareMetrics
from harness.spec import Spec

SERVICE = "harness.bench.service:BenchService"
# Counting states can mean building a whole transition table (50 s on one pathological
# regex): past this, the worker is replaced and the cell keeps its timings, not a count.
STATES_TIMEOUT_S = 10.0
# A worker's vocabulary preparation may import torch and load a tokenizer: give it more
# than a cell.
MIN_PREPARE_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class Prepared:
    """A worker finished (or failed) preparing its group's vocabulary."""

    group: Group
    status: Status
    message: str | None
    metrics: PrepareMetrics


@dataclass(frozen=True)
class Measured:
    """One cell's result."""

    cell: CellPlan
    result: CellResult


@dataclass(frozen=True)
class CellInputs:
    """What the threads read, never write: specs by id, token paths and notes per
    (spec, vocabulary), and the conversion time of each schema a regex engine gets."""

    specs: Mapping[str, Spec]
    paths: Mapping[tuple[str, str], tuple[list[list[int]], str | None]]
    convert_ns: Mapping[tuple[str, str], int]  # (engine, spec id) -> ns
    # the specs a batch cell mixes (`harness.bench.plan.batch_mix`), with their paths
    batch_specs: tuple[str, ...] = ()


class Executor:
    def __init__(
        self,
        options: Options,
        inputs: CellInputs,
        events: queue.Queue[Prepared | Measured],
        cancel: threading.Event,
    ) -> None:
        self.options = options
        self.inputs = inputs
        self.events = events
        self.cancel = cancel
        self.prepare_timeout = max(MIN_PREPARE_TIMEOUT_S, 2 * options.timeout)
        self.states_timeout = min(options.timeout, STATES_TIMEOUT_S)
        self.running: set[str] = set()  # labels of groups in flight, for the progress line

    def loop(self, next_group: Callable[[], Group | None]) -> None:
        """One thread's work: groups until none is left or the run is cancelled."""
        while not self.cancel.is_set():
            group = next_group()
            if group is None:
                return
            self.running.add(group.label)
            try:
                self.run_group(group)
            finally:
                self.running.discard(group.label)

    def run_group(self, group: Group) -> None:
        while group.pending and not self.cancel.is_set():
            worker = Worker(
                SERVICE,
                {
                    "engine": group.engine,
                    "vocab": group.vocab,
                    "walk_budget_s": self.options.timeout / 2,
                },
                memory_limit=self.options.memory_limit,
                cancel=self.cancel,
                env=engines.environment([group.engine]),
            )
            try:
                if self._prepare(worker, group):
                    while group.pending and worker.alive and not self.cancel.is_set():
                        self._cell(worker, group, group.pending[0])
            finally:
                worker.stop()

    def _prepare(self, worker: Worker, group: Group) -> bool:
        started = time.monotonic()
        reply = worker.start(self.prepare_timeout)
        if self.cancel.is_set():
            return False
        metrics = PrepareMetrics.from_json(reply.value or {}) if reply.ok else PrepareMetrics()
        metrics.startup_s = time.monotonic() - started
        metrics.pid = worker.pid
        metrics.peak_rss_bytes = reply.peak_rss or None
        self.events.put(Prepared(group, reply.status, reply.message, metrics))
        if reply.ok:
            return True
        # Preparation failed: every pending cell of the group gets its outcome.
        message = f"vocabulary preparation failed: {reply.message}"
        while group.pending:
            spec_id = group.pending.popleft()
            self.events.put(Measured(_plan(group, spec_id), CellResult(reply.status, message)))
        return False

    def _request(self, group: Group, spec_id: str) -> tuple[dict[str, Any], str | None]:
        """The worker's request for one cell, and the note on its token paths."""
        if group.study == BATCH_STUDY:
            mix = self.inputs.batch_specs
            request = {
                "op": "batch",
                "spec_id": spec_id,
                "specs": [self.inputs.specs[s].to_json() for s in mix],
                "paths": {s: self.inputs.paths[(s, group.vocab)][0] for s in mix},
                "steps": self.options.batch_steps,
            }
            return request, None
        ids, note = self.inputs.paths[(spec_id, group.vocab)]
        steps = SCALING_STEPS if group.study == "scaling" else self.options.max_steps
        request = {
            "op": "cell",
            "spec": self.inputs.specs[spec_id].to_json(),
            "paths": ids,
            "max_steps": steps,
        }
        return request, note

    def _cell(self, worker: Worker, group: Group, spec_id: str) -> None:
        request, note = self._request(group, spec_id)
        started = time.monotonic()
        reply = worker.ask(request, self.options.timeout)
        if self.cancel.is_set():
            return  # cut short: not reported, so --resume measures it again
        group.pending.popleft()
        result, peak = _result(reply), reply.peak_rss
        if reply.ok and reply.value.get("states_follow"):
            states = worker.ask({"op": "states"}, self.states_timeout)
            if self.cancel.is_set():
                group.pending.appendleft(spec_id)
                return
            _add_states(result.metrics, states)
            peak = max(peak, states.peak_rss)
        metrics = result.metrics
        metrics.peak_rss_bytes = peak or None
        ready = worker.ready or {}
        metrics.host = ready.get("host")
        metrics.calibration = dict(ready.get("calibration") or {})
        metrics.cell_s = round(time.monotonic() - started, 4)
        if note:
            metrics.path_note = note
        convert = self.inputs.convert_ns.get((group.engine, spec_id))
        if result.status is Status.OK and convert is not None:
            metrics.convert_ns = convert
            if metrics.ttfm_ns is not None:
                metrics.ttfm_ns += convert
        self.events.put(Measured(_plan(group, spec_id), result))


def _plan(group: Group, spec_id: str) -> CellPlan:
    return CellPlan(group.engine, spec_id, group.vocab, group.study)


def _result(reply: Reply) -> CellResult:
    """The cell's result: the service's, or how its worker ended."""
    if reply.ok:
        return CellResult.from_json(reply.value["result"])
    return CellResult(reply.status, reply.message, CellMetrics())


def _add_states(metrics: CellMetrics, reply: Reply) -> None:
    if not reply.ok:
        metrics.states_error = f"{reply.status.value}: {reply.message}"
        return
    value: dict[str, Any] = reply.value
    metrics.num_states = value.get("num_states")
    metrics.states_ns = value.get("states_ns")
    metrics.states_error = value.get("states_error")
