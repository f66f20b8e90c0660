"""One diff cell (a spec on a vocabulary) run on a vocabulary's worker process: the code
that `harness.cluster` calls, here or on a Dask worker.

The cell is one request per part, each under the run's `--timeout`: first the
reference's own checks (a failure there, the reference unable to build the spec, fails
the cell), then each engine alone, and for a schema each native JSON engine compared in
its own dialect (`harness.diff.walk.dialects`) in a part of its own, so an engine that hangs,
crashes or blows its memory loses only its own results (recorded in the outcome's
`skipped`). The item and the reply are the typed protocol of `harness.diff.run.protocol`;
each part's request and answer cross to the worker process as JSON.
"""

from __future__ import annotations

import time

from harness import engines
from harness.cluster import ask, host
from harness.diff.run.protocol import CellFailure, CellItem, CellOutcome, CellReply, CellRequest
from harness.diff.walk.dialects import compared_in_dialect
from harness.process import Reply, Worker

SERVICE = "harness.diff.run.service:DiffService"


def run_cell(worker: Worker, item: CellItem) -> CellReply:
    """The cell's parts asked of `worker` one by one, each within `item.timeout`: the
    reference's own checks first (its failure fails the cell), then each engine, and
    for a schema each engine compared in its JSON dialect; a failed engine part is
    recorded in the outcome's `skipped` and noted."""
    started = time.perf_counter()
    request = item.request
    versions: dict[str, str] = {}
    notes: list[str] = []

    def part(asked: CellRequest) -> Reply:
        was_alive = worker.alive
        reply: Reply = ask(worker, asked.to_json(), item.timeout)
        if not was_alive and worker.alive:
            versions.update(worker.ready or {})
        return reply

    first = part(request.part((), check_exact=True, reference_instances=True))
    outcome: CellOutcome | None = None
    failure: CellFailure | None = None
    if not first.ok:
        failure = CellFailure(first.status, first.message)
    else:
        outcome = CellOutcome.from_json(first.value)
        schema = request.spec.kind == "json_schema"
        for name in item.engines:
            lanes = [False]
            if schema and compared_in_dialect(engines.get(name)):
                lanes.append(True)
            for dialect in lanes:
                asked = request.part(
                    (name,), check_exact=False, reference_instances=False, dialect_lane=dialect
                )
                reply = part(asked)
                if reply.ok:
                    outcome.merge(CellOutcome.from_json(reply.value))
                else:
                    lane = "masks in its JSON dialect: " if dialect else ""
                    why = f"{lane}{reply.status.value}: {reply.message}"
                    outcome.diff.skipped[name] = why
                    notes.append(f"{request.spec.id} {name}: {why}")
    seconds = round(time.perf_counter() - started, 2)
    return CellReply(outcome, failure, notes, versions, host(), seconds)
