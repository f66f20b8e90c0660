"""One diff cell (a spec on a vocabulary) run on a vocabulary's worker process: the code
that `harness.cluster` calls, here or on a Dask worker.

The cell is one request per part, each under the run's `--timeout`: first the
reference's own checks (a failure there, the reference unable to build the spec, fails
the cell), then each engine alone, and for a schema each native JSON engine compared in
its own dialect (`harness.diff.walk.dialects`) in a part of its own, so an engine that hangs,
crashes or blows its memory loses only its own results (recorded in the outcome's
`skipped`). Everything returned is JSON, so a cell's result crosses machines as it is.
"""

from __future__ import annotations

import time
from typing import Any

from harness import engines
from harness.cluster import ask, host
from harness.diff.run.service import CellOutcome
from harness.diff.walk.dialects import compared_in_dialect
from harness.process import Worker

SERVICE = "harness.diff.run.service:DiffService"


def run_cell(worker: Worker, item: dict[str, Any]) -> dict[str, Any]:
    """`item`: {"request": the service's request, "engines": names, "timeout": seconds}.
    Returns {"outcome": CellOutcome JSON or None, "failure": {status, message} or None,
    "notes": lines to log, "versions": what the worker imported, "host", "seconds"}."""
    started = time.perf_counter()
    request, timeout = item["request"], item["timeout"]
    versions: dict[str, str] = {}
    notes: list[str] = []

    def part(extra: dict[str, Any]) -> Any:
        was_alive = worker.alive
        reply = ask(worker, {**request, **extra}, timeout)
        if not was_alive and worker.alive:
            versions.update(worker.ready or {})
        return reply

    first = part({"engines": [], "check_exact": True, "reference_instances": True})
    out: dict[str, Any] = {"outcome": None, "failure": None, "notes": notes}
    if not first.ok:
        out["failure"] = {"status": first.status.value, "message": first.message}
    else:
        outcome = CellOutcome.from_json(first.value)
        schema = request["spec"]["kind"] == "json_schema"
        for name in item["engines"]:
            parts = [{}]
            if schema and compared_in_dialect(engines.get(name)):
                parts.append({"dialect_lane": True})
            for extra in parts:
                reply = part(
                    {"engines": [name], "check_exact": False, "reference_instances": False} | extra
                )
                if reply.ok:
                    outcome.merge(CellOutcome.from_json(reply.value))
                else:
                    lane = "masks in its JSON dialect: " if extra else ""
                    why = f"{lane}{reply.status.value}: {reply.message}"
                    outcome.diff.skipped[name] = why
                    notes.append(f"{request['spec']['id']} {name}: {why}")
        out["outcome"] = outcome.to_json()
    out.update(versions=versions, host=host(), seconds=round(time.perf_counter() - started, 2))
    return out
