"""Run one unit of work in a forked child, so a crash, hang or memory blow-up of an engine
costs only that unit and the caller keeps everything finished before it.

The child is forked (not spawned) so it inherits prepared vocabularies and engine objects
for free. Its memory is watched from the parent (resident size of the child and its
descendants), not capped with `RLIMIT_AS`: torch, which xgrammar loads, reserves far more
address space than it ever touches.
"""

from __future__ import annotations

import multiprocessing as mp
import time
from collections.abc import Callable
from typing import Any

from harness.errors import TokensieveError
from harness.figures import tree_rss

OK = "ok"
ERROR = "error"
TIMEOUT = "timeout"
OOM = "oom"
CRASH = "crash"
POLL_S = 0.1


def run_isolated(
    work: Callable[[], Any], timeout: float, memory_limit: int | None = None
) -> tuple[str, Any]:
    """(status, value): (OK, result of `work`), (ERROR, one-line message of an exception),
    (TIMEOUT, seconds), (OOM, peak bytes) or (CRASH, exit code)."""
    ctx = mp.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)

    def target() -> None:
        try:
            outcome: tuple[str, Any] = (OK, work())
        except TokensieveError as exc:
            outcome = (ERROR, str(exc))
        except Exception as exc:  # any failure is this unit's, not the run's
            outcome = (ERROR, f"{type(exc).__name__}: {' '.join(str(exc).split())}")
        send.send(outcome)

    child = ctx.Process(target=target, daemon=True)
    child.start()
    send.close()
    deadline = time.monotonic() + timeout
    result: tuple[str, Any] | None = None
    while result is None:
        if recv.poll(POLL_S):
            try:
                result = recv.recv()
            except EOFError:  # the child died before answering
                child.join(5)
                result = (CRASH, child.exitcode)
            break
        if memory_limit is not None and child.pid is not None:
            used = tree_rss(child.pid)
            if used is not None and used > memory_limit:
                child.kill()
                result = (OOM, used)
                break
        if time.monotonic() > deadline:
            child.kill()
            result = (TIMEOUT, timeout)
            break
        if not child.is_alive() and not recv.poll(0):
            child.join(5)
            result = (CRASH, child.exitcode)
    child.join(5)
    recv.close()
    return result
