"""One jump-forward unit (a spec on a vocabulary, every engine, then the cross-check of
forced texts) on the vocabulary's worker process: the code `harness.cluster`
calls, here or on a Dask worker. Each engine is asked alone under the run's timeout, so
one that hangs or crashes costs only its own rows; everything returned is JSON."""

from __future__ import annotations

from typing import Any

from harness.cluster import ask
from harness.process import Worker

SERVICE = "harness.jumpforward.service:JumpService"


def run_spec(worker: Worker, item: dict[str, Any]) -> dict[str, Any]:
    """`item`: {"set", "vocab", "spec", "paths", "engines", "timeout"}. Returns {"rows",
    "disagreements", "states", "skipped"}."""
    base = {"spec": item["spec"], "paths": item["paths"]}
    spec_id, vname, timeout = item["spec"]["id"], item["vocab"], item["timeout"]
    out: dict[str, Any] = {"rows": [], "disagreements": [], "states": 0, "skipped": []}
    for engine in item["engines"]:
        request = {**base, "op": "measure", "engine": engine, "set": item["set"]}
        reply = ask(worker, request, timeout)
        if reply.ok:
            out["rows"].extend(reply.value)
        else:
            out["skipped"].append(
                f"{engine} {vname} {spec_id}: {reply.status.value} {reply.message or ''}"
            )
    reply = ask(worker, {**base, "op": "cross_check"}, timeout)
    if reply.ok:
        out["states"] = reply.value["states"]
        out["disagreements"] = reply.value["disagreements"]
    else:
        out["skipped"].append(
            f"cross-check {vname} {spec_id}: {reply.status.value} {reply.message or ''}"
        )
    return out
