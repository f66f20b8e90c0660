"""Units of work on one vocabulary's worker process, run here or on a Dask cluster.

`diff` and `jumpforward` (and `check`, through them) run cells the same way: a `Worker`
serving one service for one vocabulary, asked cell after cell, where an engine that
hangs, crashes or blows its memory costs only its cell. A `Batch` is such a group: the
service, its setup, and the items (each a picklable cell request: a JSON value or a
typed request with its JSON form) that a `cell` function (`module:function`, called as
`cell(worker, item)`) turns into a picklable result. `run` hands each result to the
caller's `handle` as it comes:

- `local`: in this process, cell by cell, so the caller stores each one at once;
- `dask`: one Dask task per batch, submitted to the scheduler at `address`; results come
  back per batch as each task finishes (`as_completed`). A task runs the batch in the
  same isolated worker process, on the Dask worker's machine; a Dask worker that dies
  mid-task loses only that batch, which Dask runs again elsewhere (`RETRIES`); a batch
  lost on every try is logged and its cells are left for `--resume`. A batch is handed
  back only once it has finished, so nothing is handled twice.

Diff and jump-forward cells measure no time, so their tasks need no resource: every
thread of every Dask worker may run one. (Bench holds `bench=1` per task:
`harness.bench.dask_executor`, which shares `connect` and `scheduler_address`.)
Engines named `NAME@VERSION` are installed where the batch runs (`engines.environment`).
"""

from __future__ import annotations

import importlib
import os
import re
import socket
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from harness import engines
from harness.errors import BadInput, EnvironmentFailure
from harness.process import Worker

RETRIES = 2
SCHEDULER_ENV = "DASK_SCHEDULER_ADDRESS"
# The longest a worker may take to build its service (import engines, load a tokenizer).
PREPARE_TIMEOUT_S = 300.0


@dataclass(frozen=True)
class Batch:
    """Items for one worker process: `service` built from `setup`, with the engines
    `engines` (releases installed as needed) and a memory limit in bytes; `cell` is the
    `module:function` that runs one item."""

    service: str
    setup: dict[str, Any]
    engines: tuple[str, ...]
    memory_limit: int | None
    cell: str
    items: list[Any] = field(default_factory=list)


def host() -> str:
    return socket.gethostname()


def run_batch(batch: Batch, handle: Callable[[Any, Any], None] | None = None) -> list[Any]:
    """Run every item of `batch` on one worker process (restarted after a failure: the
    cell function does that through `ask`); each (item, result) goes to `handle` as it
    finishes. Returns the results in order."""
    module, _, name = batch.cell.partition(":")
    cell = getattr(importlib.import_module(module), name)
    worker = Worker(
        batch.service,
        batch.setup,
        memory_limit=batch.memory_limit,
        env=engines.environment(list(batch.engines)),
    )
    results = []
    try:
        for item in batch.items:
            result = cell(worker, item)
            results.append(result)
            if handle is not None:
                handle(item, result)
    finally:
        worker.stop()
    return results


def ask(worker: Any, request: Any, timeout: float) -> Any:
    """`worker.ask`, starting it first if it is not running (after a failure too)."""
    if not worker.alive:
        ready = worker.start(PREPARE_TIMEOUT_S)
        if not ready.ok:
            return ready
    return worker.ask(request, timeout)


# What Dask's `Client` takes: `[tcp|tls|ws|wss|ucx://]HOST:PORT` (an IPv6 host in
# brackets), or `inproc://NAME`.
_ADDRESS = re.compile(
    r"(?:(?:tcp|tls|ws|wss|ucx)://)?(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+):(?P<port>\d{1,5})"
    r"|inproc://\S+"
)


def scheduler_address(address: str | None) -> str:
    """The scheduler's address: `address`, else $DASK_SCHEDULER_ADDRESS; BadInput naming
    where it came from unless it has the form Dask's client takes (checked before any
    work, since `distributed` only refuses it when the run connects)."""
    found = address or os.environ.get(SCHEDULER_ENV)
    if not found:
        raise BadInput(f"--executor dask needs --scheduler tcp://HOST:PORT (or {SCHEDULER_ENV})")
    match = _ADDRESS.fullmatch(found)
    port = match and match.group("port")
    if match is None or (port is not None and not 0 < int(port) < 65536):
        source = "--scheduler" if address else f"${SCHEDULER_ENV}"
        raise BadInput(
            f"{source}: {found!r} is not a Dask scheduler address (tcp://HOST:PORT, "
            "HOST:PORT, tls://HOST:PORT, inproc://NAME)"
        )
    return found


def connect(address: str, resource: str | None = None) -> Any:
    """A Dask client of the scheduler at `address` (whose workers must offer `resource`=1,
    when one is named)."""
    try:
        from distributed import Client
    except ImportError as exc:
        raise EnvironmentFailure(f"--executor dask needs the distributed package: {exc}") from exc
    try:
        client = Client(address, timeout="20s")
    except OSError as exc:
        raise EnvironmentFailure(f"cannot reach the Dask scheduler at {address}: {exc}") from None
    workers = client.scheduler_info().get("workers", {})
    if resource is not None and not any(
        w.get("resources", {}).get(resource, 0) >= 1 for w in workers.values()
    ):
        client.close()
        raise BadInput(
            f"no Dask worker at {address} offers the resource {resource}=1 (start workers "
            f'with: dask worker {address} --nthreads 1 --resources "{resource}=1")'
        )
    return client


def run(
    batches: Iterable[Batch],
    handle: Callable[[Any, Any], None],
    log: Callable[[str], None],
    executor: str = "local",
    scheduler: str | None = None,
) -> None:
    """Run every batch (see the module doc); `handle(item, result)` is called in this
    thread for each finished item."""
    if executor == "local":
        for batch in batches:
            run_batch(batch, handle)
        return
    from distributed import as_completed

    client = connect(scheduler_address(scheduler))
    try:
        submitted = {client.submit(run_batch, b, pure=False, retries=RETRIES): b for b in batches}
        for future in as_completed(list(submitted)):
            batch = submitted[future]
            try:
                results = future.result()
            except Exception as exc:  # the task failed on every worker it was given
                log(
                    f"dask: a batch of {len(batch.items)} cells was lost "
                    f"({type(exc).__name__}: {exc}); --resume runs them"
                )
                continue
            for item, result in zip(batch.items, results, strict=True):
                handle(item, result)
    finally:
        client.close()
