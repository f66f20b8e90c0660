"""Running a bench's cell groups on a Dask cluster (`--executor dask`).

The controller still plans the cells and owns the store, the lock, resume and the report;
only the execution of cell groups moves. Each Dask task is one batch: an engine, a
vocabulary and up to `BATCH` specs (so the vocabulary is prepared once per task), run on
the Dask worker's machine through the same isolated worker process as a local run
(`harness.bench.executor.Executor.run_group`), so an engine that crashes, hangs or blows
its memory limit costs only its cell, never the Dask worker. Specs travel with the task
(their text and converted regex, not a path): a Dask worker needs only the installed
project and its vocabulary packages.

Results come back per batch as each task finishes (`as_completed`) and are stored at
once. A Dask worker that dies mid-task loses only its batch's unfinished work: Dask runs
the task again elsewhere (`retries`); if it cannot, those cells stay unmeasured and
`--resume` measures them. Nothing is stored twice, since a batch is stored only once it
has returned.

Timing stays honest: every task holds the resource `bench=1`, so a Dask worker started
with `dask worker --resources bench=1` times one cell at a time; every row records its
host and its worker's calibration (`harness.bench.service.calibrate`).
"""

from __future__ import annotations

import queue
import threading
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

from harness import cluster
from harness.bench.executor import CellInputs, Executor, Measured, Prepared
from harness.bench.options import Options
from harness.bench.plan import Group

BATCH = 8
RESOURCE = "bench"
RETRIES = cluster.RETRIES


@dataclass(frozen=True)
class Batch:
    """One Dask task: a group's slice of cells and just the inputs those cells need."""

    group: Group
    options: Options
    inputs: CellInputs


def run_batch(batch: Batch) -> list[Prepared | Measured]:
    """On a Dask worker: run the batch's cells in an isolated worker process, as a local
    run would, and return every event in order."""
    events: queue.Queue[Prepared | Measured] = queue.Queue()
    Executor(batch.options, batch.inputs, events, threading.Event()).run_group(batch.group)
    out = []
    while not events.empty():
        out.append(events.get())
    return out


def batches(groups: list[Group], options: Options, inputs: CellInputs) -> Iterator[Batch]:
    for group in groups:
        pending = list(group.pending)
        for i in range(0, len(pending), BATCH):
            ids = pending[i : i + BATCH]
            part = replace(group, pending=deque(ids))
            specs = {s: inputs.specs[s] for s in ids}
            paths = {(s, v): p for (s, v), p in inputs.paths.items() if s in specs}
            convert = {(e, s): n for (e, s), n in inputs.convert_ns.items() if s in specs}
            yield Batch(part, options, CellInputs(specs, paths, convert))


def run(
    groups: list[Group],
    options: Options,
    inputs: CellInputs,
    handle: Callable[[Prepared | Measured], None],
    log: Callable[[str], None],
) -> None:
    """Submit every batch, and hand each event to `handle` (in this thread) as its
    batch finishes."""
    from distributed import as_completed

    client = cluster.connect(cluster.scheduler_address(options.scheduler), RESOURCE)
    try:
        futures = [
            client.submit(run_batch, b, resources={RESOURCE: 1}, pure=False, retries=RETRIES)
            for b in batches(groups, options, inputs)
        ]
        for future in as_completed(futures):
            try:
                events = future.result()
            except Exception as exc:  # the task failed on every worker it was given
                log(
                    f"dask: a batch was lost ({type(exc).__name__}: {exc}); "
                    "--resume measures its cells"
                )
                continue
            for event in events:
                handle(event)
    finally:
        client.close()
